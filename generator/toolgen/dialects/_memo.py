"""Views of shared schema subtrees, computed once per catalog build.

The IR's schemas share equal subtrees (`toolgen.compile.schema.tree.Interner`: Stripe's 157,573 schema
containers are 6,353 distinct objects), and the dialect views are copy on write, so the same subtree
object reaches a view transform once per tool that holds it. A transform whose result is a pure
function of the subtree (and of its own settings) keeps it here, keyed by the subtree's identity:
`memo_table(kind)` is the table of one transform (`kind`: a hashable naming the transform and its
settings) while `shared_views()` is active, None outside it (nothing is remembered: the transforms
then compute as before). Each entry holds the subtree itself first, so its identity cannot be reused
by another object while the scope lasts; the scope ends with the build and frees them all.

Input: nothing but the scope. Output: per-kind dictionaries ``id(subtree) -> (subtree, ...)``.
Sharing a view between tools is safe because views are read-only (`DialectSchema`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

_TABLES: ContextVar[dict[Hashable, dict[int, tuple[Any, ...]]] | None] = ContextVar(
    "toolgen_view_memo", default=None
)


@contextmanager
def shared_views() -> Iterator[None]:
    """Remember the views of shared subtrees until the block ends (one catalog build). Nested: the
    outer scope's tables are kept."""
    if _TABLES.get() is not None:
        yield
        return
    token = _TABLES.set({})
    try:
        yield
    finally:
        _TABLES.reset(token)


def memo_table(kind: Hashable) -> dict[int, tuple[Any, ...]] | None:
    """The table of transform `kind` in the active scope (created empty), or None outside a scope."""
    tables = _TABLES.get()
    if tables is None:
        return None
    table = tables.get(kind)
    if table is None:
        table = tables[kind] = {}
    return table
