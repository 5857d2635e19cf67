"""Kernel `policy.limits`: a row's ``limits`` and ``approval_when`` members of ``policy.json``.

Input: the intent map's ``limits`` (lowered by `toolgen.compile.lower.gates`) or the JSON of a row.
Output: `Limit` values (written by `Limit.to_json`, read by `read_limits`) and the row's approval
condition (`read_approval_when`), each failure a located `PolicyFormatError`.

A limit bounds the requests a tool sends (docs/runtime.md, "Limits"):

- ``kind: calls``: at most `Limit.max` requests sent in any window of `Limit.window_s` seconds;
- ``kind: sum``: the argument `Limit.sum_arg` of the requests sent in any such window adds up to at
  most `Limit.max`;
- ``kind: concurrent``: at most `Limit.max` requests in flight at once (no window).

`Limit.per` says who shares the count: ``actor`` (each caller of the tool its own), ``tool`` (every
caller of the tool) or ``api`` (every tool of the API that declares the same limit: a limit in the
intent map's ``defaults`` is one budget over the whole API).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from .members import MAX_LIMIT, MAX_LIMIT_WINDOW_S, MEMBERS
from .nodes import Node

__all__ = ["Limit", "LimitKind", "LimitPer", "read_approval_when", "read_limits"]

LimitPer = Literal["actor", "tool", "api"]
LimitKind = Literal["calls", "sum", "concurrent"]

#: the most characters of an approval condition the build writes and the reader takes
MAX_CONDITION_CHARS = 2000


@dataclass(frozen=True)
class Limit:
    """One limit of a row (``limits[]``; module docstring). `window_s` is None for ``concurrent``
    and a whole number of seconds otherwise; `sum_arg` the top-level argument a ``sum`` adds up
    (None otherwise)."""

    per: LimitPer
    kind: LimitKind
    max: int
    window_s: int | None = None
    sum_arg: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "per": self.per,
            "kind": self.kind,
            "max": self.max,
            "sum": self.sum_arg,
            "window_s": self.window_s,
        }

    @property
    def digest(self) -> str:
        """16 hex digits of SHA-256 over the limit's JSON (sorted keys): the same definition on two
        tools names one ``api`` budget; a changed definition starts a new count."""
        text = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def describe(self) -> str:
        """One line for POLICY.md and diffs, e.g. ``10 calls / 60 s per actor``."""
        if self.kind == "concurrent":
            return f"{self.max} concurrent per {self.per}"
        what = "calls" if self.kind == "calls" else f"sum({self.sum_arg}) <= {self.max}"
        count = f"{self.max} calls" if self.kind == "calls" else what
        return f"{count} / {self.window_s} s per {self.per}"


def _read_limit(n: Node) -> Limit:
    n.exactly(MEMBERS["limit"])
    kind = n.get("kind").choice(LimitKind)
    window, summed = n.get("window_s"), n.get("sum")
    if kind == "concurrent":
        if window.value is not None:
            raise window.fail("a concurrent limit has no window (null)")
        window_s = None
    else:
        window_s = window.between(1, MAX_LIMIT_WINDOW_S)
    sum_arg = summed.opt_text()
    if (kind == "sum") != (sum_arg is not None):
        raise summed.fail("a sum limit names the argument it adds up; other limits hold null")
    return Limit(
        per=n.get("per").choice(LimitPer),
        kind=kind,
        max=n.get("max").between(1, MAX_LIMIT),
        window_s=window_s,
        sum_arg=sum_arg,
    )


def read_limits(n: Node) -> tuple[Limit, ...]:
    """The row's ``limits`` (an array of limit objects)."""
    return n.tuple_of(_read_limit)


def read_approval_when(n: Node, mode: str, approval: str) -> str | None:
    """The row's ``approval_when``: null, or the CEL condition of a record row whose approval is
    ``required`` (the approval is asked only when it holds; `toolgen.policy.conditions`). Refused on any other
    row: a condition never turns ``never`` into an approval, and only a record row is approved."""
    text = n.opt_text()
    if text is None:
        return None
    if mode != "record" or approval != "required":
        raise n.fail(f"a {mode} row with approval {approval} holds no approval condition (null)")
    if not text.strip() or len(text) > MAX_CONDITION_CHARS:
        raise n.fail(f"an approval condition is a CEL expression of 1 to {MAX_CONDITION_CHARS} characters")
    return text
