"""Per-request limits of the providers, as data: one table per dialect (each dialect module's
``LIMITS``), every entry with its source, so next year's change is a one-line edit.

Input: a dialect's catalog (the list of tool objects one build emits) and the client's name prefix
(e.g. ``mcp__github__``: Claude Code prefixes MCP tools so, and the whole name must fit). Output:
`RequestProblem`s: what no single request could carry, each with the limit, its source and what to
do about it (split the catalog into toolsets, or shrink it). `toolgen lint` reports them
(``catalog-request-limits``).

Limit names: ``max_tools`` (tools per request), ``max_name_length`` (characters, client prefix
included), ``max_strict_tools``, ``max_optional_params`` and ``max_union_params`` (strict budgets
per request), ``max_depth``, ``max_properties``, ``max_enum_values``, ``max_chars`` (per schema).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

JSON = Any


@dataclass(frozen=True)
class Limit:
    """One limit: its `name`, `value` and `source` (a section of docs/provider-rules.md)."""

    name: str
    value: int
    source: str


@dataclass(frozen=True)
class RequestProblem:
    """A limit the catalog exceeds as a whole (`tools` names up to a few of the tools concerned)."""

    dialect: str
    limit: Limit
    actual: int
    message: str
    fix: str
    tools: tuple[str, ...] = ()


def limit_value(table: Iterable[Limit], name: str) -> int | None:
    """The value of the limit `name` in `table`, or None when the provider states none."""
    for limit in table:
        if limit.name == name:
            return limit.value
    return None


def _find(table: Iterable[Limit], name: str) -> Limit | None:
    return next((limit for limit in table if limit.name == name), None)


SPLIT = (
    "split the catalog into toolsets (several intent maps, or the provider's tool search with deferred "
    "loading) so each request carries fewer tools, or leave rarely used operations out"
)


def request_problems(
    dialect: str,
    table: Iterable[Limit],
    tools: list[dict[str, JSON]],
    tool_name: Callable[[dict[str, JSON]], str],
    *,
    client_prefix: str = "",
    strict_of: Callable[[dict[str, JSON]], bool] | None = None,
    budgets_of: Callable[[dict[str, JSON]], tuple[int, int]] | None = None,
) -> list[RequestProblem]:
    """The per-request limits of `table` that the whole catalog `tools` exceeds.

    `client_prefix` counts toward every name; `strict_of(tool)` says whether a tool is sent strict
    and `budgets_of(tool)` its (optional parameters, union parameters), for the strict budgets."""
    table = tuple(table)
    out: list[RequestProblem] = []
    limit = _find(table, "max_tools")
    if limit is not None and len(tools) > limit.value:
        out.append(
            RequestProblem(
                dialect,
                limit,
                len(tools),
                f"the {dialect} catalog has {len(tools):,} tools; one request carries at most "
                f"{limit.value} ({limit.source})",
                SPLIT,
            )
        )
    limit = _find(table, "max_name_length")
    if limit is not None:
        long = [tool_name(t) for t in tools if len(client_prefix) + len(tool_name(t)) > limit.value]
        if long:
            shown = f" with the client prefix {client_prefix!r}" if client_prefix else ""
            out.append(
                RequestProblem(
                    dialect,
                    limit,
                    len(long),
                    f"{len(long):,} {dialect} tool name(s) exceed {limit.value} characters{shown} ({limit.source})",
                    "shorten the intent names (`name:` or the intent key) or use a shorter server name / prefix",
                    tuple(long[:5]),
                )
            )
    if strict_of is not None:
        strict = [t for t in tools if strict_of(t)]
        limit = _find(table, "max_strict_tools")
        if limit is not None and len(strict) > limit.value:
            out.append(
                RequestProblem(
                    dialect,
                    limit,
                    len(strict),
                    f"{len(strict)} {dialect} tools are strict; one request carries at most "
                    f"{limit.value} ({limit.source})",
                    SPLIT,
                )
            )
        if budgets_of is not None:
            optional = sum(budgets_of(t)[0] for t in strict)
            unions = sum(budgets_of(t)[1] for t in strict)
            for name, actual in (("max_optional_params", optional), ("max_union_params", unions)):
                limit = _find(table, name)
                if limit is not None and actual > limit.value:
                    out.append(
                        RequestProblem(
                            dialect,
                            limit,
                            actual,
                            f"the strict {dialect} tools have {actual} {name[4:].replace('_', ' ')}"
                            f"; one request carries at most {limit.value} ({limit.source})",
                            SPLIT,
                        )
                    )
    return out


__all__ = ["Limit", "RequestProblem", "limit_value", "request_problems"]
