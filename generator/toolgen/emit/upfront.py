"""Stage `emit`, the up-front cost: the o200k tokens a model sees of each catalog before it searches.

Input: `DeferredViews` (`toolgen.dialects._deferred`: per view, the entries a model sees up front).
Output: an `UpfrontCost` per view, in `VIEWS` order: the file a client sends or serves, how the view
is derived, the number of top-level entries (a namespace counts once) and the o200k tokens of their
compact JSON (summed per entry, as the catalog totals of REPORT.md are; the parts of a split
Anthropic catalog show the same entries up front, so they are one view, and a split Responses
catalog is shown by its first part). REPORT.md and
``benchmarks/upfront.py`` show them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..dialects import VIEWS, DeferredViews
from ..tokens import count_tokens
from . import compact_json


@dataclass(frozen=True)
class UpfrontCost:
    view: str
    file: str
    note: str
    entries: int
    tokens: int


def upfront_costs(
    views: DeferredViews,
    counted: Mapping[int, int] | None = None,
    tokens: Callable[[dict[str, Any]], int] | None = None,
) -> list[UpfrontCost]:
    """The up-front cost of every view `views` has (see the module docstring). `counted`: tokens
    already counted, by ``id()`` of the entry object (a catalog's tools, measured once per build);
    every other entry is counted here, by `tokens` (default: the o200k tokens of its compact JSON;
    the build passes one that remembers them between builds)."""
    known = counted or {}
    tokens = tokens or _tokens
    out = []
    for view, file, note in VIEWS:
        entries = views.upfront.get(view)
        if entries is None:
            continue
        if not views.deferred:
            note = "every tool (none is deferred)"
        name = file[:-5]
        parts = views.parts.get(name)
        if parts is not None and parts.split:  # every part of a split catalog repeats what is up front
            file = f"{name}.1.json … {name}.{len(parts.parts)}.json"
        out.append(
            UpfrontCost(
                view,
                file,
                note,
                len(entries),
                sum(known[id(e)] if id(e) in known else tokens(e) for e in entries),
            )
        )
    return out


def _tokens(entry: dict[str, Any]) -> int:
    return count_tokens(compact_json(entry))
