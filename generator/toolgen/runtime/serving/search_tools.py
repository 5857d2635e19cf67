"""The ``search_tools`` MCP meta-tool: find tools for a request and return their full definitions.

Input: a loaded `Registry`, the caller (`Actor`) and the meta-tool's arguments
``{"query": str, "limit"?: int | null}`` (null: the default). Output: a `CallResult` whose result is
``{"tools": [<MCP tool definition>, ...], "hits": [{"tool", "toolset", "score", "operation"}, ...]}``,
with a ``note`` saying so when nothing matched (results are never padded) — the contract of the kernel module
`toolgen.search.tool` (name, input and output schemas,
annotations, limits, description), which is the only definition of it.

The entry `toolgen serve` lists (`search_tool_entry`) is ``mcp_search_tool(<the sorted toolsets
holding deferred rows of the package>)``: the same function and the same toolsets the build uses
for ``search.json["search_tool"]`` and the up-front MCP catalog, so the three are equal. The server
derives it from the policy rows rather than reading ``search.json``, so a package without that file
(or a `Registry` built in memory) serves the same entry.

Ranking is `toolgen.runtime.serving.tool_index.ToolIndex` (the ranking of `toolgen search`), filtered by the
caller's scopes; ``hits`` keeps the hits whose tool the caller may use, and each hit brings its
whole operation into ``tools``: a read its tool, a write ``preview_*`` then ``record_*`` (each only
when the caller's scopes allow it), each definition exactly the package's ``mcp.json`` entry.
``limit`` counts hits (operations), not definitions. Tools found this way — deferred ones
(``loading: deferred``) included — are called by name through the same call path as any other tool.
"""

from __future__ import annotations

import contextlib
import secrets
from pathlib import Path
from typing import Any

import jsonschema_rs

from ...search.dense_index import is_dense
from ...search.tool import (
    DEFAULT_LIMIT,
    NOTHING_MATCHED,
    SEARCH_TOOL_INPUT_SCHEMA,
    SEARCH_TOOL_NAME,
    mcp_search_tool,
    search_arguments,
)
from ..audit import AuditEvent
from ..call.arguments import plain_arguments
from ..errors import ToolError, make_error
from ..identity import is_deferred
from ..pipeline.validate import describe_error
from .registry import Actor, CallResult, Registry
from .tool_index import SEARCH_FILE, IndexWarning, ToolIndex, checked_search, load_search

__all__ = [
    "SEARCH_TOOL_NAME",
    "ToolSearch",
    "dense_package",
    "has_deferred",
    "index_warnings",
    "search_tool_entry",
    "searchable_toolsets",
]

_MODE_ORDER = {"read": 0, "preview": 1, "record": 2}


def has_deferred(registry: Registry) -> bool:
    """True when some policy row of `registry` has ``loading: deferred``."""
    return any(is_deferred(spec.row) for spec in registry.specs.values())


def searchable_toolsets(registry: Registry) -> list[str]:
    """The toolsets holding deferred rows of `registry`, sorted (the ``searchable`` toolsets the build
    names in the meta-tool's description)."""
    return sorted(
        {
            spec.row.toolset
            for spec in registry.specs.values()
            if is_deferred(spec.row) and spec.row.toolset is not None
        }
    )


def index_warnings(registry: Registry) -> list[IndexWarning]:
    """Why the ``search.json`` beside the package `registry` was loaded from would not be used by the
    meta-tool's index (`toolgen.runtime.serving.tool_index.checked_search`: unreadable, or not indexing the
    package's tools), for the server to say at start-up; empty for a usable or absent file, or a
    `Registry` built in memory."""
    source = getattr(registry, "source", None)
    if source is None:
        return []
    _, _, warning = checked_search(Path(source) / SEARCH_FILE, registry.policy)
    return [warning] if warning is not None else []


def dense_package(registry: Registry) -> bool:
    """Whether the ``search.json`` beside the package `registry` was loaded from asks for the dense
    option (`toolgen.search.dense_index.is_dense`); False for a `Registry` built in memory."""
    source = getattr(registry, "source", None)
    return source is not None and is_dense(load_search(Path(source) / SEARCH_FILE)[1])


def search_tool_entry(registry: Registry) -> dict[str, Any]:
    """The meta-tool's MCP `Tool` entry for `registry`: ``mcp_search_tool(searchable_toolsets(registry))``,
    equal to the ``search_tool`` the build wrote into the package's ``search.json``."""
    return mcp_search_tool(searchable_toolsets(registry))


class ToolSearch:
    """The meta-tool over one registry. The index is built on first use (include-everything
    GitHub, 1,223 operations: about half a second) and kept; for a package built with the dense
    option (its ``search.json`` pins a model: `dense_package`) it is built here, when the server
    starts, so that a ``search.vectors`` that is missing, damaged or not this ``search.json``'s, or a
    missing model, is found and said (one warning of the ``toolgen.search`` logger naming the file
    and what to do) before any request, and the vectors served are the ones checked then."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._index: ToolIndex | None = None
        self._validator = jsonschema_rs.Draft202012Validator(SEARCH_TOOL_INPUT_SCHEMA)
        self.entry = search_tool_entry(registry)
        if dense_package(registry):
            self._index = ToolIndex.from_registry(registry)

    @property
    def index(self) -> ToolIndex:
        if self._index is None:
            self._index = ToolIndex.from_registry(self.registry)
        return self._index

    def run(self, args: Any, actor: Actor) -> CallResult:
        """Search for `actor`: ``{"tools": [...], "hits": [...]}`` (see the module docstring), which
        conforms to ``SEARCH_TOOL_OUTPUT_SCHEMA``. Never raises on caller input: the arguments are
        made plain JSON first, as on every tool's call path (`toolgen.runtime.call.arguments.plain_arguments`:
        NaN, non-string keys, bytes and lone surrogates refused; ``5.0`` read as ``5``), and arguments
        the input schema then rejects are ``invalid_arguments`` naming the JSON pointer of the bad
        value (``/query``, ``/limit``, a missing ``/query``, an unexpected member's own pointer). A null
        ``limit`` is the default (`toolgen.search.tool.search_arguments`:
        the strict Chat Completions function requires the member and sends null for it)."""
        call_id = secrets.token_hex(8)
        try:  # plain JSON first, as on every tool's call path: no Python value reaches the validator
            args = search_arguments(plain_arguments(args))
        except ToolError as exc:
            return self._refuse(call_id, actor, exc)
        if not self._validator.is_valid(args):
            found = describe_error(next(iter(self._validator.iter_errors(args))))
            pointer = found["pointer"]  # a missing member's pointer, or the first unexpected one
            return self._refuse(
                call_id,
                actor,
                make_error(
                    "invalid_arguments",
                    f"Invalid argument {pointer or '(arguments)'}: {found['message'][:200]}",
                    details={"pointer": pointer},
                ),
            )
        limit = int(args.get("limit", DEFAULT_LIMIT))
        ranked = self.index.search(str(args["query"]), scopes=actor.scopes, limit=limit)
        hits = [hit for hit in ranked if self.registry.permits(hit.tool, actor)]
        by_intent: dict[str, list[str]] = {}
        for name, spec in self.registry.specs.items():
            by_intent.setdefault(spec.intent, []).append(name)
        names: list[str] = []
        for hit in hits:
            group = sorted(
                by_intent.get(self.registry.specs[hit.tool].intent, [hit.tool]),
                key=lambda n: (_MODE_ORDER.get(self.registry.specs[n].row.mode, 0), n),
            )
            names.extend(n for n in group if n not in names and self.registry.permits(n, actor))
        tools = [dict(self.registry.specs[n].catalog) for n in names]
        self._audit(call_id, actor, "search", "allow", None, {"results": len(tools), "hits": len(hits)})
        result: dict[str, Any] = {"tools": tools, "hits": [h.to_json() for h in hits]}
        if not hits:
            result["note"] = NOTHING_MATCHED
        return CallResult(SEARCH_TOOL_NAME, True, result=result, call_id=call_id)

    def _refuse(self, call_id: str, actor: Actor, error: ToolError) -> CallResult:
        self._audit(
            call_id,
            actor,
            "validate",
            "deny",
            "invalid_arguments",
            {"pointer": error.details.get("pointer", "")},
        )
        return CallResult(SEARCH_TOOL_NAME, False, call_id=call_id, error=error)

    def _audit(
        self, call_id: str, actor: Actor, step: str, decision: str, code: str | None, detail: dict[str, Any]
    ) -> None:
        with contextlib.suppress(Exception):  # a failing sink never breaks a search
            self.registry.audit.emit(
                AuditEvent(
                    self.registry.clock.time(),
                    call_id,
                    SEARCH_TOOL_NAME,
                    actor.id,
                    step,
                    decision,
                    None,
                    code,
                    detail,
                )
            )
