"""Catalog parts: a deferred catalog larger than its provider allows in one request, split by toolset.

Anthropic's tool search carries at most 10,000 tools per request, the tool-search tool included
(``docs/provider-dialects.md`` F.2). An API with more deferred tools than that cannot be sent as one
catalog, but a conversation rarely needs every toolset: the build writes several catalog files
instead, each a complete request catalog (every eager tool, the deferred tools of some whole
toolsets, the tool-search tool) within the limit, and an index naming the toolsets each one holds.

Input: the tools' (toolset, loading) pairs (`toolgen.compile.ir.Tool`, in IR order) and the limit.
Output: a `PartPlan`: the parts (toolsets in sorted order, the deferred tools of no toolset first,
cut greedily into consecutive runs, so the split is deterministic and reads as ranges of names) and
the toolsets no part can hold even alone (`PartPlan.over`: the eager tools, the tool-search tool
and that toolset's deferred tools exceed the limit). A plan of one part is the unsplit catalog.
Everything here counts names; nothing is converted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..compile.ir import Tool


@dataclass(frozen=True)
class Part:
    """One catalog file: the toolsets whose deferred tools it holds (None: the deferred tools of no
    toolset) and those tools' names, in IR order."""

    toolsets: tuple[str | None, ...]
    tools: tuple[str, ...]


@dataclass(frozen=True)
class PartPlan:
    """How a deferred catalog is cut. `limit`: tools per request (the search tool included);
    `eager`: the eager tools every part repeats; `parts`: the parts, in order; `over`: (toolset,
    deferred tools) of each toolset that no part can hold (empty when the plan is sendable)."""

    limit: int
    eager: int
    parts: tuple[Part, ...]
    over: tuple[tuple[str | None, int], ...] = ()

    @property
    def capacity(self) -> int:
        """Deferred tools one part can hold: the limit less the eager tools and the search tool."""
        return self.limit - self.eager - 1

    @property
    def split(self) -> bool:
        """Whether the catalog is written as several files."""
        return len(self.parts) > 1

    def sent(self, part: Part) -> int:
        """Tools one request with `part` carries: the eager tools, its deferred tools, the search tool."""
        return self.eager + len(part.tools) + 1


def plan_parts(tools: Sequence[Tool], limit: int) -> PartPlan:
    """The parts of the deferred catalog of `tools` under `limit` tools per request (module
    docstring). No deferred tool: one part holding none. Raises ValueError when `limit` < 2 (a
    request must carry the search tool and one tool)."""
    if limit < 2:
        raise ValueError(f"a tool-search limit of {limit} cannot carry the search tool and a tool")
    eager = sum(1 for t in tools if t.policy.loading != "deferred")
    groups: dict[str | None, list[str]] = {}
    for tool in tools:
        if tool.policy.loading == "deferred":
            groups.setdefault(tool.policy.toolset, []).append(tool.name)
    order = sorted(groups, key=lambda name: (name is not None, name or ""))
    capacity = limit - eager - 1
    over = tuple((name, len(groups[name])) for name in order if len(groups[name]) > capacity)
    if sum(len(names) for names in groups.values()) <= capacity or not groups:
        part = Part(tuple(order), tuple(n for name in order for n in groups[name]))
        return PartPlan(limit, eager, (part,), over)
    parts: list[Part] = []
    names: list[str | None] = []
    held: list[str] = []
    for name in order:
        if names and len(held) + len(groups[name]) > capacity:
            parts.append(Part(tuple(names), tuple(held)))
            names, held = [], []
        names.append(name)
        held.extend(groups[name])
    parts.append(Part(tuple(names), tuple(held)))
    return PartPlan(limit, eager, tuple(parts), over)


def part_file(dialect: str, index: int) -> str:
    """The file name of part `index` (1-based) of `dialect`'s split catalog: ``anthropic.1.json``."""
    return f"{dialect}.{index}.json"


def index_file(dialect: str) -> str:
    """The file name of the index of `dialect`'s split catalog: ``anthropic.parts.json``."""
    return f"{dialect}.parts.json"


__all__ = ["Part", "PartPlan", "index_file", "part_file", "plan_parts"]
