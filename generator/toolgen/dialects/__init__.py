"""Stage `dialects`: a canonical IR tool -> the tool object each provider accepts, and the check that
a whole catalog keeps that provider's rules.

Input: IR `Tool`s (canonical JSON Schema 2020-12 input and output schemas, the policy row). Output:
per dialect, each tool's object and the view's warnings (`Dialect.catalog_entry`), and the
`Violation`s of a whole catalog (`check_catalog`).

One module per provider (`openai`, `anthropic`, `mcp`) owns its view transform, its conformance rules
and its limits, and exports ``DIALECT`` (a `Dialect`); the private modules hold what they share
(`_walk`: schema walkers; `_base`: `DialectSchema` and the keyword notes; `_light`: the structure-keeping
transform; `_check`: `Violation` and the common checks). `registry()` finds every dialect module, so a
new provider is one new module. The rest of toolgen asks the registry, never a list of its own:
`names()` (what ``emit``/``--emit``/``--dialect`` accept), `catalog_files()` (what a dialect writes),
`reshaping()` (whose views reshape arguments), `dialect(name)` (limits, title, files).

`_responses` builds OpenAI's Responses catalog (namespaces, ``defer_loading``, ``tool_search``) and
`_deferred` the catalogs that scale for every dialect and what a model sees of them up front.

Rules cite ``docs/provider-rules.md``: A.x OpenAI function tools and strict mode, B.x Anthropic
tools, D.x MCP 2025-11-25, E the portable intersection.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, Literal

from ._base import (
    Dialect,
    DialectOptions,
    DialectSchema,
    GeminiParameters,
    RegistryListing,
    allows_code_callers,
)
from ._check import Violation
from ._deferred import VIEWS, DeferredViews, check_deferred, deferred_views
from ._limits import Limit, RequestProblem, limit_value, request_problems
from ._memo import shared_views
from ._parts import Part, PartPlan, index_file, part_file, plan_parts
from ._preflight import preflight_problems, schema_bytes
from ._responses import (
    NAMESPACE_ADVISED_FUNCTIONS,
    check_responses_catalog,
    namespace_advice,
    responses_catalog,
    responses_upfront,
)
from ._walk import (
    child_schemas,
    is_array_schema,
    is_object_schema,
    iter_nodes,
    iter_schemas,
    recursive_ref_targets,
    resolve_local_ref,
    types_of,
    unresolved_refs,
)


@cache
def registry() -> Mapping[str, Dialect]:
    """Every dialect, by name, in `Dialect.rank` order: the modules of this package that define
    ``DIALECT``."""
    found: list[Dialect] = []
    for info in pkgutil.iter_modules(__path__):
        if info.name.startswith("_"):
            continue
        dialect = getattr(importlib.import_module(f"{__name__}.{info.name}"), "DIALECT", None)
        if isinstance(dialect, Dialect):
            found.append(dialect)
    return MappingProxyType({d.name: d for d in sorted(found, key=lambda d: (d.rank, d.name))})


def names() -> tuple[str, ...]:
    """Every dialect's name, in `registry` order (``openai``, ``anthropic``, ``mcp``, ``gemini``): what
    the project file's ``emit``, ``--emit``, ``--dialect`` and the linter accept, and the keys of
    ``dialect_rewrites`` in policy.json. Ask this instead of naming dialects."""
    return tuple(registry())


def catalog_files() -> tuple[str, ...]:
    """Every file name a dialect may write into a generated folder (`Dialect.files`), in `registry` order."""
    return tuple(f for d in registry().values() for f in d.files)


def reshaping() -> tuple[Dialect, ...]:
    """The dialects whose views may reshape arguments (`Dialect.reshapes_arguments`), in `registry` order."""
    return tuple(d for d in registry().values() if d.reshapes_arguments)


def configured(options: DialectOptions) -> list[Dialect]:
    """Every dialect in `registry` order, shaped by a project's `options` (`Dialect.configure`)."""
    return [d.configure(options) if d.configure is not None else d for d in registry().values()]


def dialect(name: str) -> Dialect:
    """The dialect called `name`. Raises ValueError for an unknown one."""
    found = registry().get(name)
    if found is None:
        raise ValueError(f"unknown dialect {name!r}")
    return found


def check_catalog(
    name: str, tools: list[dict[str, Any]], *, max_tools: int | Literal["default"] | None = "default"
) -> list[Violation]:
    """Check a catalog of dialect `name` against its provider's rules; an empty list means it conforms.
    `max_tools`: the cap on tools per request (default: the provider's own; None skips the check).
    Raises ValueError for an unknown dialect."""
    found = dialect(name)
    with shared_views():  # the tools share subtrees: each is summarised once
        return found.check(tools, found.max_tools if max_tools == "default" else max_tools)


def catalog_request_problems(
    name: str, tools: list[dict[str, Any]], *, client_prefix: str = ""
) -> list[RequestProblem]:
    """The per-request limits of dialect `name` (its ``LIMITS`` table) that the whole catalog
    `tools` exceeds: what no single request can carry. `client_prefix`: the prefix a client puts
    before every tool name (``mcp__<server>__``), counted toward the name length."""
    found = dialect(name)
    return request_problems(found.name, found.limits, tools, found.tool_name, client_prefix=client_prefix)


__all__ = [
    "NAMESPACE_ADVISED_FUNCTIONS",
    "VIEWS",
    "DeferredViews",
    "Dialect",
    "DialectOptions",
    "DialectSchema",
    "GeminiParameters",
    "Limit",
    "Part",
    "PartPlan",
    "RegistryListing",
    "RequestProblem",
    "Violation",
    "allows_code_callers",
    "catalog_files",
    "catalog_request_problems",
    "check_catalog",
    "check_deferred",
    "check_responses_catalog",
    "child_schemas",
    "configured",
    "deferred_views",
    "dialect",
    "index_file",
    "is_array_schema",
    "is_object_schema",
    "iter_nodes",
    "iter_schemas",
    "limit_value",
    "names",
    "namespace_advice",
    "part_file",
    "plan_parts",
    "preflight_problems",
    "recursive_ref_targets",
    "registry",
    "reshaping",
    "resolve_local_ref",
    "responses_catalog",
    "responses_upfront",
    "schema_bytes",
    "shared_views",
    "types_of",
    "unresolved_refs",
]
