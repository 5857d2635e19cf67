"""Provider limits known from the IR alone, before any catalog is built: what a build can refuse (or
warn about) in seconds instead of failing after minutes of emitting.

Input: the tools of one API (`toolgen.compile.ir.Tool`, schemas interned and shared) and the dialects
the build emits. Output: `RequestProblem`s for the hard limits no catalog of those dialects could
meet (Anthropic's tool search carries at most 10,000 tools per request, the tool-search tool
included: F.2; a larger deferred catalog is written as parts, one or more whole toolsets each
(`toolgen.dialects._parts`), so only a toolset that fits no part is a problem), and `schema_bytes`, the compact-JSON size of the tools' schemas, which every catalog
file repeats (a lower bound of each file's size, counted without expanding shared subtrees).

Every check here is linear in the tools and in the distinct schema objects they share; nothing is
converted, copied or tokenised.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..compile.ir import Tool
from ..compile.schema import json_size
from ._limits import Limit, RequestProblem
from ._parts import plan_parts
from .anthropic import ANTHROPIC_MAX_SEARCH_TOOLS, ANTHROPIC_SEARCH_SOURCE

#: F.2: the hard limit of a deferred Anthropic catalog (the tool-search tool counts as one of them)
ANTHROPIC_SEARCH_LIMIT = Limit("max_search_tools", ANTHROPIC_MAX_SEARCH_TOOLS, ANTHROPIC_SEARCH_SOURCE)

SPLIT_TOOLSET = (
    "split the toolset: give part of its intents (or an `include` group) another toolset, declared "
    "under `toolsets:`, so each part of the catalog holds fewer; or `exclude` operations agents do "
    "not need, or build without this catalog (`--emit`, or `emit:` in toolgen.yaml)"
)
DEFER_MORE = (
    "defer more tools (`loading: deferred` on toolsets or intents): every part of the catalog repeats "
    "the eager ones; or build without this catalog (`--emit`, or `emit:` in toolgen.yaml)"
)


def preflight_problems(
    tools: Sequence[Tool], dialects: Collection[str], *, search_limit: int = ANTHROPIC_MAX_SEARCH_TOOLS
) -> list[RequestProblem]:
    """The hard per-request limits that the catalogs of `dialects` built from `tools` would exceed.

    Today: a request with tool search carries at most `search_limit` tools (F.2: 10,000), the
    tool-search tool included. The Anthropic catalog with deferred tools (``defer_loading``) is cut
    into parts of whole toolsets (`plan_parts`), each with every eager tool; a problem is a toolset
    (`RequestProblem.tools` names it; ``(no toolset)``: the deferred tools of none) that no part can
    hold even alone."""
    out: list[RequestProblem] = []
    if "anthropic" not in dialects or not any(t.policy.loading == "deferred" for t in tools):
        return out
    plan = plan_parts(tools, search_limit)
    limit = Limit(ANTHROPIC_SEARCH_LIMIT.name, search_limit, ANTHROPIC_SEARCH_SOURCE)
    for toolset, count in plan.over:
        label = f"toolset {toolset!r}" if toolset is not None else "the deferred tools of no toolset"
        eager = plan.fixed - 1  # every part repeats the eager tools and the tool-search tool
        sent = plan.fixed + count
        fix = DEFER_MORE if plan.fixed + 1 > search_limit else SPLIT_TOOLSET
        out.append(
            RequestProblem(
                "anthropic",
                limit,
                sent,
                f"{label} has {count:,} deferred tools; with the {eager:,} eager tools and the tool-search tool "
                f"a request would carry {sent:,}, and one with tool search carries at most {search_limit:,} "
                f"({limit.source}): the Anthropic catalog is split into parts by toolset, but no part can hold it",
                fix,
                (toolset if toolset is not None else "(no toolset)",),
            )
        )
    return out


def schema_bytes(tools: Sequence[Tool]) -> int:
    """Compact-JSON bytes (UTF-8, escapes not counted) of the tools' input and output schemas as
    expanded, counted over the shared objects once each (`toolgen.compile.schema.Interner`)."""
    memo: dict[int, int] = {}
    return sum(json_size(t.input_schema, memo) + json_size(t.output_schema, memo) for t in tools)


__all__ = ["ANTHROPIC_SEARCH_LIMIT", "preflight_problems", "schema_bytes"]
