"""`toolgen diff` and POLICY.md on approval conditions and limits: any change of a condition that is
not provably stricter, and any limit removed or loosened, is a risky change; POLICY.md shows both."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import REPO, build
from tests.support.policy_rows import record_row
from tests.support.profiles import examples

from toolgen.policy.conditions import compile_condition, implies
from toolgen.policy.format import PolicyRow
from toolgen.policy.limits import Limit
from toolgen.review.diff import compare_tool

PAYMENTS = REPO / "tests" / "fixtures" / "limits" / "payments.yaml"
LIMIT = Limit("actor", "calls", 10, 60)


def kinds(old: PolicyRow, new: PolicyRow) -> dict[str, bool]:
    return {c.kind: c.risky for c in compare_tool("api", "record_x", old, new, None, None)}


@pytest.mark.parametrize(
    ("old", "new", "kind", "risky"),
    [
        (None, "args.amount > 50000", "approval-condition-loosened", True),
        ("args.amount > 50000", "args.amount > 60000", "approval-condition-loosened", True),
        (
            "args.amount > 50000",
            "args.amount > 40000",
            "approval-condition-loosened",
            True,
        ),  # true, but unproven
        ("args.amount > 50000 || args.rush", "args.amount > 50000", "approval-condition-loosened", True),
        ("args.amount > 50000", "args.amount > 50000 || args.rush", "approval-condition-tightened", False),
        ("args.amount > 50000 && args.rush", "args.amount > 50000", "approval-condition-tightened", False),
        ("args.amount > 50000", None, "approval-condition-tightened", False),
    ],
)
def test_a_condition_change_is_risky_unless_provably_stricter(
    old: str | None, new: str | None, kind: str, risky: bool
) -> None:
    found = kinds(record_row(approval_when=old), record_row(approval_when=new))
    assert found.get(kind) is risky, found
    assert "policy-changed" not in found


def test_a_respaced_condition_is_no_change() -> None:
    assert (
        kinds(
            record_row(approval_when="args.amount>50000"), record_row(approval_when="( args.amount > 50000 )")
        )
        == {}
    )


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        ((LIMIT,), (), "limits-loosened"),
        ((LIMIT,), (replace(LIMIT, max=11),), "limits-loosened"),
        ((LIMIT,), (replace(LIMIT, window_s=30),), "limits-loosened"),
        ((LIMIT,), (replace(LIMIT, per="tool"),), "limits-loosened"),  # another count: the old one is gone
        ((), (LIMIT,), "limits-tightened"),
        ((LIMIT,), (replace(LIMIT, max=9),), "limits-tightened"),
        ((LIMIT,), (replace(LIMIT, window_s=120),), "limits-tightened"),
    ],
)
def test_limits_removed_or_loosened_are_risky(
    old: tuple[Limit, ...], new: tuple[Limit, ...], kind: str
) -> None:
    found = kinds(record_row(limits=old), record_row(limits=new))
    assert found.get(kind) is (kind == "limits-loosened"), found
    assert "policy-changed" not in found


SCHEMA = {"type": "object", "properties": {name: {"type": "integer"} for name in "abc"}}
ATOMS = st.sampled_from(["args.a > 1", "args.b < 5", "args.c == 3", "args.a % 2 == 0", "args.b / args.c > 1"])


def _expression(draw: Any, depth: int = 2) -> str:
    if depth == 0 or draw(st.booleans()):
        return str(draw(ATOMS))
    op = draw(st.sampled_from(["&&", "||"]))
    return f"({_expression(draw, depth - 1)}) {op} ({_expression(draw, depth - 1)})"


@settings(max_examples=examples(300))
@given(data=st.data(), values=st.fixed_dictionaries({n: st.integers(-3, 6) for n in "abc"}))
def test_a_provably_stricter_condition_asks_whenever_the_old_one_does(
    data: st.DataObject, values: dict[str, int]
) -> None:
    """`implies` is sound on evaluation, errors (a division by zero) included: whenever the old
    condition asks (true, or it fails), a new one it calls stricter asks too."""
    old = _expression(data.draw)
    extra = _expression(data.draw)
    new = data.draw(st.sampled_from([old, f"{old} || {extra}", f"({extra}) || ({old})", extra]))
    if not implies(old, new):
        return
    asks_old, _ = compile_condition(old, SCHEMA).holds(values, "a", [])
    asks_new, _ = compile_condition(new, SCHEMA).holds(values, "a", [])
    assert asks_new or not asks_old, (old, new, values)


def test_policy_md_shows_the_condition_and_the_limits(tmp_path: Path) -> None:
    body = (
        "tools:\n  refund:\n    operation: createRefund\n    effect: write\n    permission: payments:write\n"
        "    approval: {when: \"args.amount > 50000 || args.reason == 'fraudulent'\"}\n"
        "    limits: [{per: actor, calls: 10, window: 1m}, {per: tool, sum: amount, max: 900, window: 1d}]\n"
    )
    text = (build(tmp_path, PAYMENTS, body).out / "POLICY.md").read_text(encoding="utf-8")
    assert "**required** when `args.amount > 50000 \\|\\| args.reason == 'fraudulent'` holds" in text
    assert "## Limits" in text
    assert "| `record_refund` | 10 calls / 60 s per actor; sum(amount) <= 900 / 86400 s per tool |" in text
