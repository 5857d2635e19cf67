"""Limits (intent map ``limits``, ``defaults.limits``; policy ``limits``) enforced by the call path
on every receipt store against a real loopback API: counted when a request is sent (a refused or
replayed call counts nothing), answered ``rate_limited`` with ``retry_after`` and status 429, an
over-limit write sends nothing and keeps its approval, a sum is never exceeded, a concurrent slot is
given back when its call ends. Lifetimes pass on the test's clock, never by sleeping."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import REPO, Built, build
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer

from toolgen.policy.format import PolicyFormatError, from_json, read_policy
from toolgen.policy.limits import Limit
from toolgen.runtime import Actor, MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.clock import ManualClock
from toolgen.runtime.stores import LimitTake, ReceiptStore

PAYMENTS = REPO / "tests" / "fixtures" / "limits" / "payments.yaml"
CLERK = Actor.of("clerk", ["payments:write", "payments:read"])
OTHER = Actor.of("other", ["payments:write", "payments:read"])
NOBODY = Actor.of("nobody", [])

INTENT = """defaults:
  limits: [{per: api, calls: 1000, window: 1h}]
tools:
  refund:
    operation: createRefund
    effect: write
    permission: payments:write
    approval: {when: "args.amount > 50000"}
    record: {arguments: full}
    idempotency: {key: action_id, send_as: "header:Idempotency-Key", honoured_by_api: true}
    limits:
      - {per: actor, calls: 3, window: 1m}
      - {per: tool, sum: amount, max: 100000, window: 1d}
  balance:
    operation: getBalance
    effect: read
    permission: payments:read
    limits: [{per: tool, concurrent: 1}]
"""


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("limited"), PAYMENTS, INTENT)


@pytest.fixture
def reg(
    limited: Built, recorder: RecordingServer, any_receipt_store: ReceiptStore, clock: ManualClock
) -> Iterator[Registry]:
    registry = Registry.from_dir(
        limited.out,
        base_url=recorder.base_url,
        credentials=StaticCredentials({}),
        receipts=any_receipt_store,
        audit=MemoryAuditSink(),
        clock=clock,
    )
    yield registry


def refund(amount: int, key: str) -> dict[str, Any]:
    return {"charge": "ch_1", "amount": amount, "action_id": key}


def sent(recorder: RecordingServer) -> list[int]:
    return [r.json()["amount"] for r in recorder.requests if r.method == "POST"]


# -- the build ---------------------------------------------------------------------------------------


def test_limits_are_written_on_the_rows_that_send_and_read_back(limited: Built) -> None:
    assert limited.row("record_refund")["limits"] == [
        {"per": "actor", "kind": "calls", "max": 3, "sum": None, "window_s": 60},
        {"per": "tool", "kind": "sum", "max": 100000, "sum": "amount", "window_s": 86400},
    ]
    assert limited.row("preview_refund")["limits"] == []  # a preview sends nothing
    assert limited.row("balance")["limits"] == [
        {"per": "tool", "kind": "concurrent", "max": 1, "sum": None, "window_s": None}
    ]
    table = read_policy(limited.out / "policy.json")
    assert from_json(table.to_json()) == table


def test_a_tool_without_limits_of_its_own_takes_the_defaults(tmp_path: Path) -> None:
    body = INTENT.replace("    limits: [{per: tool, concurrent: 1}]\n", "")
    built = build(tmp_path, PAYMENTS, body)
    assert built.row("balance")["limits"] == [
        {"per": "api", "kind": "calls", "max": 1000, "sum": None, "window_s": 3600}
    ]


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ("{per: tool, sum: charge, max: 5, window: 1m}", "limit sum 'charge' is a string"),
        ("{per: tool, sum: rate, max: 5, window: 1m}", "limit sum 'rate' is optional"),
        ("{per: tool, sum: nothing, max: 5, window: 1m}", "no such argument"),
    ],
)
def test_a_sum_over_an_argument_it_cannot_count_is_a_located_error(
    tmp_path: Path, limit: str, message: str
) -> None:
    body = INTENT.replace("      - {per: actor, calls: 3, window: 1m}\n", f"      - {limit}\n")
    out = build(tmp_path, PAYMENTS, body, expect=2).result.output
    assert "limit-sum-invalid" in out and message in out, out
    assert "api.yaml:15:21" in out, out  # the `sum` key of the first limit


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ("{per: tool, calls: 3}", "need a `window`"),
        ("{per: tool, concurrent: 3, window: 1m}", "takes none"),
        ("{per: tool, calls: 3, sum: amount, max: 3, window: 1m}", "a limit is one of"),
        ("{per: tool, calls: 3, window: 1w}", "a window is"),
        ("{per: tool, calls: 3, window: 31d}", "at most 2592000"),
        ("{per: team, calls: 3, window: 1m}", "'actor', 'tool' or 'api'"),
        ("{per: tool, calls: 0, window: 1m}", "greater than or equal to 1"),
    ],
)
def test_a_limit_of_no_one_kind_is_refused_at_its_place(tmp_path: Path, limit: str, message: str) -> None:
    body = INTENT.replace("      - {per: actor, calls: 3, window: 1m}\n", f"      - {limit}\n")
    out = build(tmp_path, PAYMENTS, body, expect=2).result.output
    assert "intent-invalid" in out and message in out and "api.yaml:15:" in out, out


@pytest.mark.parametrize(
    ("member", "value", "message"),
    [
        ("window_s", None, "expected an integer"),
        ("window_s", 0, "below the least value 1"),
        ("max", 0, "below the least value 1"),
        ("kind", "burst", "not one of calls, sum, concurrent"),
        ("sum", "amount", "a sum limit names the argument"),
    ],
)
def test_the_reader_refuses_a_limit_it_cannot_enforce(
    limited: Built, member: str, value: Any, message: str
) -> None:
    table = limited.json("policy.json")
    row = next(r for r in table["tools"] if r["tool"] == "record_refund")
    row["limits"][0][member] = value
    with pytest.raises(PolicyFormatError, match=message) as caught:
        from_json(table)
    assert caught.value.pointer == f"/tools/2/limits/0/{member}"


def test_a_limit_describes_itself() -> None:
    assert Limit("actor", "calls", 10, 60).describe() == "10 calls / 60 s per actor"
    assert Limit("tool", "sum", 500, 86400, "amount").describe() == "sum(amount) <= 500 / 86400 s per tool"
    assert Limit("api", "concurrent", 4).describe() == "4 concurrent per api"


# -- the runtime -------------------------------------------------------------------------------------


def test_calls_past_the_limit_are_refused_with_retry_after_and_nothing_is_sent(
    reg: Registry, recorder: RecordingServer, clock: ManualClock
) -> None:
    for i in range(3):
        assert reg.call("record_refund", refund(10, f"k{i}"), actor=CLERK).ok
    res = reg.call("record_refund", refund(10, "k3"), actor=CLERK)
    assert res.error is not None and res.error.code == "rate_limited", res.to_json()
    assert res.error.retryable and res.error.category == "rate_limited"
    assert res.error.details["status"] == 429 and 59 < res.error.details["retry_after"] <= 60
    assert res.error.details["limit"] == {
        "per": "actor",
        "kind": "calls",
        "max": 3,
        "sum": None,
        "window_s": 60,
    }
    assert sent(recorder) == [10, 10, 10]
    assert reg.call(
        "record_refund", refund(10, "k4"), actor=OTHER
    ).ok  # per actor: another caller's own count
    clock.advance(61)
    assert reg.call(
        "record_refund", refund(10, "k3"), actor=CLERK
    ).ok  # the window passed; the key was let go
    assert sent(recorder) == [10] * 5


def test_refused_and_replayed_calls_count_nothing(reg: Registry, recorder: RecordingServer) -> None:
    assert reg.call("record_refund", refund(10, "same"), actor=CLERK).ok
    for _ in range(5):
        replay = reg.call("record_refund", refund(10, "same"), actor=CLERK)
        assert replay.ok and replay.replayed
        assert reg.call("record_refund", refund(10, "x"), actor=NOBODY).error.code == "permission_denied"  # type: ignore[union-attr]
        assert reg.call("record_refund", refund(60_000, "big"), actor=CLERK).error.code == "approval_required"  # type: ignore[union-attr]
        assert (
            reg.call(  # type: ignore[union-attr]
                "record_refund", {"charge": "c", "amount": "1", "action_id": "v"}, actor=CLERK
            ).error.code
            == "invalid_arguments"
        )
    assert reg.call("record_refund", refund(10, "two"), actor=CLERK).ok
    assert reg.call("record_refund", refund(10, "three"), actor=CLERK).ok
    assert reg.call("record_refund", refund(10, "four"), actor=CLERK).error.code == "rate_limited"  # type: ignore[union-attr]
    assert sent(recorder) == [10, 10, 10]


def test_an_over_limit_write_keeps_its_approval(
    reg: Registry, recorder: RecordingServer, clock: ManualClock
) -> None:
    for i in range(3):
        assert reg.call("record_refund", refund(10, f"fill{i}"), actor=CLERK).ok
    asked = reg.call("record_refund", refund(60_000, "big"), actor=CLERK)
    assert asked.error is not None and asked.error.code == "approval_required"
    over = reg.call("record_refund", refund(60_000, "big"), actor=CLERK, approval=asked.fingerprint)
    assert over.error is not None and over.error.code == "rate_limited", over.to_json()
    assert over.error.details["approval_kept"] is True
    assert sent(recorder) == [10, 10, 10]
    clock.advance(61)
    again = reg.call("record_refund", refund(60_000, "big"), actor=CLERK, approval=asked.fingerprint)
    assert again.ok, again.to_json()  # the same approval: it was given back, not spent
    assert sent(recorder) == [10, 10, 10, 60_000]


def test_a_sum_limit_refuses_the_call_that_would_pass_it(
    reg: Registry, recorder: RecordingServer, clock: ManualClock
) -> None:
    assert reg.call("record_refund", refund(40_000, "a"), actor=CLERK).ok
    assert reg.call("record_refund", refund(40_000, "b"), actor=OTHER).ok
    over = reg.call("record_refund", refund(30_000, "c"), actor=Actor.of("third", ["payments:write"]))
    assert over.error is not None and over.error.code == "rate_limited"
    assert over.error.details["limit"]["kind"] == "sum" and over.error.details["retry_after"] > 86_000
    assert reg.call("record_refund", refund(20_000, "d"), actor=Actor.of("fourth", ["payments:write"])).ok
    assert sum(sent(recorder)) == 100_000


def test_a_single_call_above_the_sum_can_never_fit(tmp_path: Path, recorder: RecordingServer) -> None:
    built = build(tmp_path, PAYMENTS, INTENT.replace("max: 100000", "max: 100"))
    reg = Registry.from_dir(
        built.out,
        base_url=recorder.base_url,
        credentials=StaticCredentials({}),
        receipts=MemoryReceiptStore(),
    )
    res = reg.call("record_refund", refund(101, "a"), actor=CLERK)
    assert res.error is not None and res.error.code == "rate_limited" and not res.error.retryable
    assert res.error.details["retry_after"] is None and "Lower amount" in res.error.next_step
    assert recorder.requests == []


def test_a_concurrent_slot_is_held_while_the_call_runs_and_given_back(
    reg: Registry, recorder: RecordingServer, any_receipt_store: ReceiptStore
) -> None:
    for _ in range(3):  # one at a time: each call's slot is given back when it ends
        assert reg.call("balance", {}, actor=CLERK).ok
    digest = Limit("tool", "concurrent", 1).digest
    held = LimitTake(f"{reg.api}/balance#limit:{digest}", "a call on another worker", 1, 1, 600)
    assert any_receipt_store.take([held]) is None
    busy = reg.call("balance", {}, actor=CLERK)
    assert busy.error is not None and busy.error.code == "rate_limited", busy.to_json()
    any_receipt_store.give([held])
    assert reg.call("balance", {}, actor=CLERK).ok
    assert len(recorder.requests) == 4


def test_each_limit_decision_is_audited_with_its_rule(reg: Registry) -> None:
    for i in range(3):
        reg.call("record_refund", refund(1, f"a{i}"), actor=CLERK)
    res = reg.call("record_refund", refund(1, "a3"), actor=CLERK)
    audit = reg.audit
    assert isinstance(audit, MemoryAuditSink)
    denied = [e for e in audit.for_call(res.call_id) if e.step == "limits"]
    assert denied and denied[0].decision == "limit" and denied[0].rule == "/limits/0"
    assert denied[0].code == "rate_limited" and denied[0].detail["status"] == 429
    assert 59 < denied[0].detail["retry_after"] <= 60


def test_without_limits_every_call_is_sent(limited: Built, recorder: RecordingServer) -> None:
    """The guard of the tests above: the same calls on a table without limits all reach the API."""
    table = limited.json("policy.json")
    for row in table["tools"]:
        row["limits"] = []
    reg = Registry(
        table,
        limited.json("mcp.json"),
        base_url=recorder.base_url,
        credentials=StaticCredentials({}),
        receipts=MemoryReceiptStore(),
    )
    for i in range(6):
        assert reg.call("record_refund", refund(40_000, f"k{i}"), actor=CLERK).ok
    assert len(recorder.requests) == 6


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    calls=st.lists(
        st.tuples(st.integers(0, 60_000), st.sampled_from(["a", "b", "c"]), st.floats(0, 4000)), max_size=25
    )
)
def test_no_window_ever_sends_more_than_the_sum(limited: Built, calls: list[tuple[int, str, float]]) -> None:
    """Amounts by several callers, the clock moving between calls: the amounts sent within any day
    add up to at most the limit, and each refusal was a call that would have passed it."""
    clock = ManualClock()
    with RecordingServer() as recorder:
        reg = Registry.from_dir(
            limited.out,
            base_url=recorder.base_url,
            credentials=StaticCredentials({}),
            receipts=MemoryReceiptStore(clock=clock),
            clock=clock,
        )
        log: list[tuple[float, int]] = []
        for i, (amount, who, pause) in enumerate(calls):
            clock.advance(pause)
            res = reg.call("record_refund", refund(amount, f"k{i}"), actor=Actor.of(who, ["payments:write"]))
            now = clock.time()
            in_window = sum(a for t, a in log if t > now - 86_400)
            if res.ok:
                log.append((now, amount))
                assert in_window + amount <= 100_000
            else:
                assert res.error is not None
                assert res.error.code in ("rate_limited", "approval_required"), res.to_json()
                if res.error.code == "rate_limited" and res.error.details["limit"]["kind"] == "sum":
                    assert in_window + amount > 100_000
        assert sorted(json.loads(r.body)["amount"] for r in recorder.requests) == sorted(a for _, a in log)


UNBOUNDED_SUM = """tools:
  refund:
    operation: createRefund
    effect: write
    permission: payments:write
    approval: never
    record: {arguments: full}
    idempotency: {key: action_id, send_as: "header:Idempotency-Key", honoured_by_api: true}
    limits: [{per: tool, sum: amount, max: 100000, window: 1d}]
"""


@pytest.fixture(scope="module")
def unbounded(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """`refund` summing an `amount` whose schema bounds nothing (no minimum, no maximum)."""
    tmp = tmp_path_factory.mktemp("unbounded")
    spec = tmp / "payments.yaml"
    bounded = "amount: {type: integer, minimum: 0, maximum: 100000000}"
    text = PAYMENTS.read_text(encoding="utf-8").replace(bounded, "amount: {type: integer}")
    spec.write_text(text, encoding="utf-8")
    return build(tmp, spec, UNBOUNDED_SUM)


def _spelled(amount: int, spelling: str) -> Any:
    if spelling == "float":
        return float(amount) if abs(amount) < 2**1023 else amount
    if spelling == "exponent":
        return json.loads(f"{amount}e0") if abs(amount) < 10**300 else amount
    if spelling == "text":
        return str(amount)
    return amount


AMOUNTS = st.one_of(
    st.integers(-200_000, 200_000),
    st.integers(2**53 - 2, 2**53 + 2),
    st.integers(2**63 - 2, 2**64),
    st.integers(4, 400).map(lambda k: 10**k),
    st.integers(300, 400).map(lambda k: -(10**k)),
)


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(AMOUNTS, st.sampled_from(["int", "float", "exponent", "text"])), max_size=12))
def test_no_spelling_of_the_summed_argument_passes_the_sum(
    unbounded: Built, calls: list[tuple[int, str]]
) -> None:
    """On an argument the schema leaves unbounded: amounts too large for a double (10**400), their
    negatives, floats, exponents and text are each sent (and counted) canonically or refused before
    anything is sent; what is sent never adds up past the limit, and no call fails internally."""
    with RecordingServer() as recorder:
        reg = Registry.from_dir(
            unbounded.out,
            base_url=recorder.base_url,
            credentials=StaticCredentials({}),
            receipts=MemoryReceiptStore(),
        )
        for i, (amount, spelling) in enumerate(calls):
            res = reg.call("record_refund", refund(_spelled(amount, spelling), f"k{i}"), actor=CLERK)
            refused = res.error.code if res.error is not None else None
            assert res.ok or refused in ("rate_limited", "invalid_arguments"), res.to_json()
        amounts = [json.loads(r.body)["amount"] for r in recorder.requests]
    assert sum(max(0, a) for a in amounts) <= 100_000, amounts


def test_a_composites_steps_count_against_the_limits_their_rows_carry(tmp_path: Path) -> None:
    """A composite's step rows carry the limits their operation's intent (else `defaults.limits`)
    gives it, and the step path enforces them like a tool's: a `per: api` budget counts the requests
    a composite's steps send, and a step over it is not sent."""
    body = (
        "defaults:\n  limits: [{per: api, calls: 3, window: 1m}]\n"
        "tools:\n  balance: {operation: getBalance, effect: read, permission: payments:read}\n"
        "composites:\n  both_balances:\n    pattern: aggregate\n    description: Read the balance twice.\n"
        "    steps:\n      - {id: first, operation: getBalance}\n      - {id: second, operation: getBalance}\n"
    )
    built = build(tmp_path, PAYMENTS, body)
    plan = next(r for r in built.json("policy.json")["tools"] if r["tool"] == "get_both_balances")[
        "composite"
    ]
    assert [s["row"]["limits"][0]["per"] for s in plan["steps"]] == ["api", "api"]
    with RecordingServer() as api:
        reg = Registry.from_dir(
            built.out, base_url=api.base_url, credentials=StaticCredentials({}), receipts=MemoryReceiptStore()
        )
        first = reg.call("get_both_balances", {}, actor=CLERK)
        assert first.ok, first.to_json()
        second = reg.call("get_both_balances", {}, actor=CLERK)  # one step fits the budget, the other not
        assert second.ok and second.result is not None and list(second.result["errors"]) == ["second"]
        assert second.result["errors"]["second"]["code"] == "rate_limited"
        assert reg.call("balance", {}, actor=CLERK).error.code == "rate_limited"  # type: ignore[union-attr]
        assert len(api.requests) == 3


def test_every_place_that_sends_counts_the_limits_first() -> None:
    """The call path sends through `send.attempts` alone; each of its callers takes the limits right
    before (a new caller that forgot would send uncounted)."""
    import ast

    pipeline = REPO / "generator" / "toolgen" / "runtime" / "pipeline"
    callers = 0
    for path in sorted(pipeline.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            lines = {
                n.func.id: n.lineno
                for n in ast.walk(node)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            }
            if "attempts" in lines and node.name != "attempts":
                callers += 1
                assert lines.get("acquire", 10**9) < lines["attempts"], (path, node.name)
    assert callers == 2  # the runner's and a composite step's
