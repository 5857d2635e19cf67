"""Provider limits known from the IR alone, before any catalog is built: what a build can refuse (or
warn about) in seconds instead of failing after minutes of emitting.

Input: the tools of one API (`toolgen.compile.ir.Tool`, schemas interned and shared) and the dialects
the build emits. Output: `RequestProblem`s for the hard limits no catalog of those dialects could
meet (Anthropic's tool search carries at most 10,000 tools per request, the tool-search tool
included: F.2), and `schema_bytes`, the compact-JSON size of the tools' schemas, which every catalog
file repeats (a lower bound of each file's size, counted without expanding shared subtrees).

Every check here is linear in the tools and in the distinct schema objects they share; nothing is
converted, copied or tokenised.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ..compile.ir import Tool
from ..compile.schema import json_size
from ._limits import Limit, RequestProblem
from .anthropic import ANTHROPIC_MAX_SEARCH_TOOLS

#: F.2: the hard limit of a deferred Anthropic catalog (the tool-search tool counts as one of them)
ANTHROPIC_SEARCH_LIMIT = Limit("max_search_tools", ANTHROPIC_MAX_SEARCH_TOOLS,
                               "F.2: at most 10,000 tools with tool search")

SPLIT_API = ("split the API into several intent maps (each an `include` of a part of the paths or tags, each "
             "an API of toolgen.yaml), `exclude` operations agents do not need, or build without this catalog "
             "(`--emit`, or `emit:` in toolgen.yaml)")


def preflight_problems(tools: Sequence[Tool], dialects: Collection[str]) -> list[RequestProblem]:
    """The hard per-request limits that the catalogs of `dialects` built from `tools` would exceed.

    Today: the Anthropic catalog with deferred tools (``defer_loading``) holds every tool plus the
    tool-search tool, and a request with tool search carries at most 10,000 (F.2)."""
    out: list[RequestProblem] = []
    deferred = sum(1 for t in tools if t.policy.loading == "deferred")
    if "anthropic" in dialects and deferred:
        sent = len(tools) + 1  # the tool-search tool
        if sent > ANTHROPIC_SEARCH_LIMIT.value:
            out.append(RequestProblem(
                "anthropic", ANTHROPIC_SEARCH_LIMIT, sent,
                f"the Anthropic catalog would hold {sent:,} tools ({deferred:,} deferred, and the tool-search "
                f"tool); a request with tool search carries at most {ANTHROPIC_SEARCH_LIMIT.value:,} "
                f"({ANTHROPIC_SEARCH_LIMIT.source})", SPLIT_API))
    return out


def schema_bytes(tools: Sequence[Tool]) -> int:
    """Compact-JSON bytes (UTF-8, escapes not counted) of the tools' input and output schemas as
    expanded, counted over the shared objects once each (`toolgen.compile.schema.Interner`)."""
    memo: dict[int, int] = {}
    return sum(json_size(t.input_schema, memo) + json_size(t.output_schema, memo) for t in tools)


__all__ = ["ANTHROPIC_SEARCH_LIMIT", "preflight_problems", "schema_bytes"]
