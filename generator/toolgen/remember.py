"""How a stage remembers a piece of its output: one protocol and its two plain implementations.

``remember(key, compute)`` is ``compute()``, or the value an earlier ``compute()`` under the same
`key` gave. A key names everything the value depends on (`toolgen.emit.piece_key`), so both answers
are the same value and the stages that take a `Remember` stay pure. Implementations: `computed`
(remembers nothing), `Memo` (a dict, for one process: `toolgen init`'s lowerings of one draft, and
tests), and the build cache's `toolgen.builder.incremental.Pieces` (between builds). Pure: no IO.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

__all__ = ["Memo", "Remember", "computed"]

_T = TypeVar("_T")


class Remember(Protocol):
    """``remember(key, compute) -> compute()`` or an earlier value of it (module docstring)."""

    def __call__(self, key: str, compute: Callable[[], _T], /) -> _T: ...


def computed(key: str, compute: Callable[[], _T], /) -> _T:
    """The `Remember` that remembers nothing: every piece is computed."""
    return compute()


class Memo:
    """A `Remember` over a dict held in memory: each key computed once; `computed` counts how many
    pieces were computed (not found), `values` maps key -> value."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.computed = 0

    def __call__(self, key: str, compute: Callable[[], _T], /) -> _T:
        if key not in self.values:
            self.values[key] = compute()
            self.computed += 1
        found: _T = self.values[key]
        return found
