"""Lint, shared credentials: the writes that reach the API with one credential shared by every caller.

Input: the policy rows of an intent map's tools. Output: `shared_writes` -> security scheme ->
the record tools whose binding of that scheme has no ``per_caller`` or lets the service's secret
stand in for writes (``service_secret: always``), in row order. Served to several callers
(`toolgen serve --http`), such a write acts for each of them as the service (a confused deputy).
Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...policy_format import PolicyRow

__all__ = ["shared_writes"]


def shared_writes(rows: Iterable[PolicyRow]) -> dict[str, list[str]]:
    """Scheme -> the record tools of `rows` that write with its shared credential (module docstring)."""
    writes: dict[str, list[str]] = {}
    for row in rows:
        if row.mode != "record":
            continue
        for entry in row.auth:
            if entry.per_caller is None or entry.per_caller.service_secret == "always":
                writes.setdefault(entry.scheme, []).append(row.tool)
    return writes
