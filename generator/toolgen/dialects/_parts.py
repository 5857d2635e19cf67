"""Catalog parts: a deferred catalog larger than its provider allows in one request, split by toolset.

Anthropic's tool search carries at most 10,000 tools per request, the tool-search tool included
(``docs/provider-rules.md`` F.2). An API with more deferred tools than that cannot be sent as one
catalog, but a conversation rarely needs every toolset: the build writes several catalog files
instead, each a complete request catalog (every eager tool, the deferred tools of some whole
toolsets, the tool-search tool) within the limit, and an index naming the toolsets each one holds
(`plan_parts`). OpenAI's Responses catalog is cut the same way when it has more top-level entries
than one request carries (128, A.1 / F.1: a namespace is one entry; `plan_namespaces`).

Input: the tools' (toolset, loading) pairs (`toolgen.compile.ir.Tool`, in IR order) and the limit.
Output: a `PartPlan`: the parts (toolsets in sorted order, the deferred tools of no toolset first,
cut greedily into consecutive runs, so the split is deterministic and reads as ranges of names) and
the toolsets no part can hold even alone (`PartPlan.over`: the entries every part repeats and that
toolset's exceed the limit). A plan of one part is the unsplit catalog. Everything here counts
names; nothing is converted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..compile.ir import Tool


@dataclass(frozen=True)
class Part:
    """One catalog file: the toolsets it holds (None: the deferred tools of no toolset), their tools'
    names in IR order, and `size`, the entries they add to a request."""

    toolsets: tuple[str | None, ...]
    tools: tuple[str, ...]
    size: int


@dataclass(frozen=True)
class PartPlan:
    """How a catalog is cut. `limit`: entries per request; `fixed`: the entries every part repeats
    (the eager tools and the search tool); `parts`: the parts, in order; `over`: (toolset, entries)
    of each toolset that no part can hold (empty when every part is sendable)."""

    limit: int
    fixed: int
    parts: tuple[Part, ...]
    over: tuple[tuple[str | None, int], ...] = ()

    @property
    def capacity(self) -> int:
        """Entries one part can add to the fixed ones."""
        return self.limit - self.fixed

    @property
    def split(self) -> bool:
        """Whether the catalog is written as several files."""
        return len(self.parts) > 1

    def sent(self, part: Part) -> int:
        """Entries one request with `part` carries."""
        return self.fixed + part.size


def _ordered(name: str | None) -> tuple[bool, str]:
    return (name is not None, name or "")


def cut(
    groups: dict[str | None, list[str]], weight: dict[str | None, int], fixed: int, limit: int
) -> PartPlan:
    """Cut `groups` (toolset -> its tool names) into parts of consecutive toolsets in sorted order
    (None first) whose `weight`s add up to at most ``limit - fixed`` each; one part when all fit."""
    order = sorted(groups, key=_ordered)
    capacity = limit - fixed
    over = tuple((name, weight[name]) for name in order if weight[name] > capacity)
    if sum(weight.values()) <= capacity or not groups:
        return PartPlan(
            limit,
            fixed,
            (Part(tuple(order), tuple(n for g in order for n in groups[g]), sum(weight.values())),),
            over,
        )
    parts: list[Part] = []
    names: list[str | None] = []
    held: list[str] = []
    size = 0
    for name in order:
        if names and size + weight[name] > capacity:
            parts.append(Part(tuple(names), tuple(held), size))
            names, held, size = [], [], 0
        names.append(name)
        held.extend(groups[name])
        size += weight[name]
    parts.append(Part(tuple(names), tuple(held), size))
    return PartPlan(limit, fixed, tuple(parts), over)


def plan_parts(tools: Sequence[Tool], limit: int) -> PartPlan:
    """The parts of the deferred Anthropic catalog of `tools` under `limit` tools per request with
    tool search (module docstring): every part repeats the eager tools and the search tool, and
    holds the deferred tools of whole toolsets (a toolset weighs its deferred tools). No deferred
    tool: one part holding none. Raises ValueError when `limit` < 2 (a request must carry the search
    tool and one tool)."""
    if limit < 2:
        raise ValueError(f"a tool-search limit of {limit} cannot carry the search tool and a tool")
    eager = sum(1 for t in tools if t.policy.loading != "deferred")
    groups: dict[str | None, list[str]] = {}
    for tool in tools:
        if tool.policy.loading == "deferred":
            groups.setdefault(tool.policy.toolset, []).append(tool.name)
    return cut(groups, {name: len(names) for name, names in groups.items()}, eager + 1, limit)


def plan_namespaces(tools: Sequence[Tool], limit: int) -> PartPlan:
    """The parts of the OpenAI Responses catalog of `tools` under `limit` top-level entries per
    request (A.1 / F.1: 128): every part repeats the functions of no toolset, the namespaces holding
    an eager function and ``tool_search``; a namespace whose functions are all deferred weighs one
    entry. Raises ValueError when `limit` < 2."""
    if limit < 2:
        raise ValueError(f"a limit of {limit} entries cannot carry tool_search and a namespace")
    loose = sum(1 for t in tools if t.policy.toolset is None)
    eager_sets = {
        t.policy.toolset for t in tools if t.policy.toolset is not None and t.policy.loading != "deferred"
    }
    groups: dict[str | None, list[str]] = {}
    for tool in tools:
        if tool.policy.toolset is not None and tool.policy.toolset not in eager_sets:
            groups.setdefault(tool.policy.toolset, []).append(tool.name)
    search = 1 if any(t.policy.loading == "deferred" for t in tools) else 0
    return cut(groups, {name: 1 for name in groups}, loose + len(eager_sets) + search, limit)


def part_file(dialect: str, index: int) -> str:
    """The file name of part `index` (1-based) of catalog `dialect` split: ``anthropic.1.json``,
    ``openai.responses.1.json``."""
    return f"{dialect}.{index}.json"


def index_file(dialect: str) -> str:
    """The file name of the index of `dialect`'s split catalog: ``anthropic.parts.json``."""
    return f"{dialect}.parts.json"


__all__ = ["Part", "PartPlan", "cut", "index_file", "part_file", "plan_namespaces", "plan_parts"]
