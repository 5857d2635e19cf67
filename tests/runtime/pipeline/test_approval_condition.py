"""Conditional approval (intent map ``approval: {when: EXPR}``; policy ``approval_when``): a CEL
condition over the canonical arguments and the caller, checked at build against the tool's
arguments (errors at the intent map's line and column), evaluated by the approval step on the
request that would be sent, failing closed, audited, and enforced against a real loopback API."""

from __future__ import annotations

import json
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import REPO, Built, build
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer

from toolgen.policy.conditions import check, compile_condition
from toolgen.policy.format import PolicyFormatError, from_json, read_policy
from toolgen.runtime import Actor, MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials

PAYMENTS = REPO / "tests" / "fixtures" / "limits" / "payments.yaml"
CLERK = Actor.of("clerk", ["payments:write"])
ADMIN = Actor.of("boss", ["payments:write", "payments:admin"])
THRESHOLD = 50_000


def refund_intent(when: str, *, record: str = "full", extra: str = "") -> str:
    return (
        "tools:\n  refund:\n    operation: createRefund\n    effect: write\n    permission: payments:write\n"
        f"    approval: {{when: {json.dumps(when)}}}\n    record: {{arguments: {record}}}\n"
        '    idempotency: {key: action_id, send_as: "header:Idempotency-Key", honoured_by_api: true}\n'
        + extra
    )


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(
        tmp_path_factory.mktemp("gated"),
        PAYMENTS,
        refund_intent(f'args.amount > {THRESHOLD} && !("payments:admin" in caller.scopes)'),
    )


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The same condition on a record tool that executes the stored preview (the default with approval)."""
    return build(
        tmp_path_factory.mktemp("stored"),
        PAYMENTS,
        refund_intent(f"args.amount > {THRESHOLD}", record="preview"),
    )


def registry(built: Built, server: RecordingServer, audit: MemoryAuditSink | None = None) -> Registry:
    return Registry.from_dir(
        built.out,
        base_url=server.base_url,
        credentials=StaticCredentials({}),
        receipts=MemoryReceiptStore(),
        audit=audit or MemoryAuditSink(),
    )


def refund(amount: Any, key: str) -> dict[str, Any]:
    return {"charge": "ch_1", "amount": amount, "action_id": key}


# -- the build ---------------------------------------------------------------------------------------


def test_the_condition_is_written_on_the_record_row_only_and_reads_back(gated: Built) -> None:
    assert gated.row("record_refund")["approval"] == "required"
    assert (
        gated.row("record_refund")["approval_when"]
        == f'args.amount > {THRESHOLD} && !("payments:admin" in caller.scopes)'
    )
    assert gated.row("preview_refund")["approval_when"] is None
    table = read_policy(gated.out / "policy.json")
    assert from_json(table.to_json()) == table


@pytest.mark.parametrize(
    ("when", "message", "column"),
    [
        ("args.amout > 5", "no member 'amout'", 6),
        ('args.amount > "5"', "compares values of different types", 1),
        ("args.amount +", "syntax error", 13),
        ("args.amount", "not bool", 1),
        ("args.rate * 2 > 1.0", "convert one", 1),
        ("refund(1)", "unknown function", 1),
        ("amount > 1", "unknown name 'amount'", 1),
    ],
)
def test_a_condition_that_does_not_check_is_an_error_at_its_line_and_column(
    tmp_path: Path, when: str, message: str, column: int
) -> None:
    built = build(tmp_path, PAYMENTS, refund_intent(when), expect=2)
    out = built.result.output
    line = next(
        n for n, text in enumerate((tmp_path / "api.yaml").read_text().splitlines(), 1) if "when:" in text
    )
    opening = (tmp_path / "api.yaml").read_text().splitlines()[line - 1].index(
        '"'
    ) + 1  # 0-based quote -> 1-based
    assert "approval-condition-invalid" in out and message in out, out
    assert f"api.yaml:{line}:{opening + column}" in out, out
    assert not (tmp_path / "out" / "policy.json").exists()


def test_a_condition_on_a_hidden_argument_is_an_error(tmp_path: Path) -> None:
    """A hidden argument is no member of ``args``: the model never fills it, so a condition on it
    could never see what the model chose (its fixed value is the map's own)."""
    body = refund_intent('args.reason == "fraudulent"', extra="    args: {reason: {hide: true}}\n")
    out = build(tmp_path, PAYMENTS, body, expect=2).result.output
    assert "approval-condition-invalid" in out and "no member 'reason'" in out, out


def test_a_block_condition_is_located_on_its_own_line(tmp_path: Path) -> None:
    body = (
        "tools:\n  refund:\n    operation: createRefund\n    effect: write\n    permission: payments:write\n"
        "    approval:\n      when: |\n        args.amount > 5 &&\n          args.charge == 3\n"
    )
    out = build(tmp_path, PAYMENTS, body, expect=2).result.output
    assert "approval-condition-invalid" in out and "string == int" in out, out
    assert "api.yaml:12:11" in out, out  # line 12 of the file, where `args.charge` starts


def test_the_checker_types_the_arguments_from_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "amount": {"type": "integer"},
            "rate": {"type": "number"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    }
    assert check("args.amount > 50000.5 && args.rate * 2.0 < 3.0", schema) == []
    assert check('args.tags.exists(t, t == "vip") || "vip" in args.tags', schema) == []
    assert check("has(args.rate) && args.rate > 1.0 ? true : size(caller.scopes) > 2", schema) == []
    assert check("args.tags.exists(t, t > 3)", schema)[0].message.startswith("string > int")
    assert check("args.amount % 2.0 == 0.0", schema)  # int % double: no such overload
    assert (
        check('args["amount"] > 5 && args["rate"] < 1.0', schema) == []
    )  # a reserved word's member by index
    assert "no member 'amout'" in check('args["amout"] > 5', schema)[0].message
    assert check('args["amount"] > "5"', schema)


@pytest.mark.parametrize(
    "bad",
    [
        {"approval_when": "args.amount > 1", "approval": "never"},
        {"approval_when": "", "approval": "required"},
        {"approval_when": 5, "approval": "required"},
    ],
)
def test_the_reader_refuses_a_condition_where_it_cannot_hold(gated: Built, bad: dict[str, Any]) -> None:
    table = gated.json("policy.json")
    row = next(r for r in table["tools"] if r["tool"] == "record_refund")
    row.update(bad)
    with pytest.raises(PolicyFormatError) as caught:
        from_json(table)
    assert caught.value.pointer.endswith("/approval_when") or caught.value.pointer.endswith("/approval")


def test_a_condition_on_a_preview_row_is_refused(gated: Built) -> None:
    table = gated.json("policy.json")
    next(r for r in table["tools"] if r["tool"] == "preview_refund")["approval_when"] = "true"
    with pytest.raises(PolicyFormatError, match="holds no approval condition"):
        from_json(table)


# -- the runtime -------------------------------------------------------------------------------------


def test_below_the_threshold_the_write_is_sent_without_approval(
    gated: Built, recorder: RecordingServer
) -> None:
    audit = MemoryAuditSink()
    reg = registry(gated, recorder, audit)
    res = reg.call("record_refund", refund(THRESHOLD, "k-1"), actor=CLERK)
    assert res.ok, res.to_json()
    assert [r.json()["amount"] for r in recorder.requests] == [THRESHOLD]
    skip = [e for e in audit.for_call(res.call_id) if e.step == "approval"]
    assert [(e.decision, e.rule, e.detail["condition"]) for e in skip] == [
        ("allow", "/approval_when", "false")
    ]


def test_above_the_threshold_the_approval_is_asked_and_nothing_is_sent(
    gated: Built, recorder: RecordingServer
) -> None:
    audit = MemoryAuditSink()
    reg = registry(gated, recorder, audit)
    res = reg.call("record_refund", refund(THRESHOLD + 1, "k-2"), actor=CLERK)
    assert res.error is not None and res.error.code == "approval_required", res.to_json()
    assert recorder.requests == []
    asked = [e for e in audit.for_call(res.call_id) if e.step == "approval" and e.decision == "ask"]
    assert asked and asked[0].rule == "/approval_when" and asked[0].detail == {"condition": "true"}
    assert asked[0].args_digest is not None  # the arguments' digest, never their values
    approved = reg.call("record_refund", refund(THRESHOLD + 1, "k-2"), actor=CLERK, approval=res.fingerprint)
    assert approved.ok, approved.to_json()
    assert [r.json()["amount"] for r in recorder.requests] == [THRESHOLD + 1]


def test_the_caller_takes_part_in_the_condition(gated: Built, recorder: RecordingServer) -> None:
    res = registry(gated, recorder).call("record_refund", refund(THRESHOLD * 10, "k-3"), actor=ADMIN)
    assert res.ok, res.to_json()
    assert len(recorder.requests) == 1


def test_a_condition_that_fails_to_evaluate_asks_for_approval(
    tmp_path: Path, recorder: RecordingServer
) -> None:
    built = build(tmp_path, PAYMENTS, refund_intent("args.rate > 1.5"))  # `rate` is optional
    audit = MemoryAuditSink()
    res = registry(built, recorder, audit).call("record_refund", refund(1, "k-4"), actor=CLERK)
    assert res.error is not None and res.error.code == "approval_required", res.to_json()
    assert recorder.requests == []
    asked = [e for e in audit.for_call(res.call_id) if e.step == "approval"]
    assert asked[0].decision == "ask" and asked[0].detail["condition"].startswith("evaluation failed")


def test_a_condition_the_runtime_cannot_compile_asks_always(gated: Built, recorder: RecordingServer) -> None:
    table = gated.json("policy.json")
    next(r for r in table["tools"] if r["tool"] == "record_refund")["approval_when"] = "args.amount >"
    reg = Registry(
        table,
        gated.json("mcp.json"),
        base_url=recorder.base_url,
        credentials=StaticCredentials({}),
        receipts=MemoryReceiptStore(),
    )
    res = reg.call("record_refund", refund(1, "k-5"), actor=CLERK)
    assert res.error is not None and res.error.code == "approval_required", res.to_json()
    assert recorder.requests == []


def test_a_preview_says_whether_its_record_call_will_ask(stored: Built, recorder: RecordingServer) -> None:
    reg = registry(stored, recorder)
    small = reg.call("preview_refund", {"charge": "ch_1", "amount": 10}, actor=CLERK)
    large = reg.call("preview_refund", {"charge": "ch_1", "amount": THRESHOLD + 1}, actor=CLERK)
    assert small.result is not None and large.result is not None
    assert small.result["approval_required"] is False and large.result["approval_required"] is True
    sent = reg.call(
        "record_refund", {"preview_id": small.result["preview_id"], "action_id": "k-6"}, actor=CLERK
    )
    assert sent.ok, sent.to_json()  # the stored preview's arguments are what the condition reads
    refused = reg.call(
        "record_refund", {"preview_id": large.result["preview_id"], "action_id": "k-7"}, actor=CLERK
    )
    assert refused.error is not None and refused.error.code == "approval_required"
    assert [r.json()["amount"] for r in recorder.requests] == [10]


def test_without_the_runtime_check_the_large_refund_would_be_sent(
    gated: Built, recorder: RecordingServer
) -> None:
    """The guard of the tests above: the same call on a table whose row asks for no approval sends."""
    table = gated.json("policy.json")
    row = next(r for r in table["tools"] if r["tool"] == "record_refund")
    row.update(approval="never", approval_when=None)
    reg = Registry(
        table,
        gated.json("mcp.json"),
        base_url=recorder.base_url,
        credentials=StaticCredentials({}),
        receipts=MemoryReceiptStore(),
    )
    assert reg.call("record_refund", refund(THRESHOLD * 2, "k-8"), actor=CLERK).ok
    assert len(recorder.requests) == 1


def _spelled(amount: int, spelling: str) -> Any:
    """`amount` as a model might write it: an integer, a float, JSON with an exponent, a Decimal, text."""
    if spelling == "float":
        return float(amount)
    if spelling == "exponent":
        return json.loads(f"{amount / 1000!r}e3" if amount else "0e0")
    if spelling == "decimal":
        return Decimal(amount) / Decimal(1)
    if spelling == "text":
        return str(amount)
    return amount


@settings(max_examples=examples(200))
@given(
    amount=st.one_of(
        st.integers(0, 2 * THRESHOLD), st.sampled_from([THRESHOLD - 1, THRESHOLD, THRESHOLD + 1])
    ),
    spelling=st.sampled_from(["int", "float", "exponent", "decimal", "text"]),
)
def test_no_spelling_of_the_amount_dodges_the_condition(gated: Built, amount: int, spelling: str) -> None:
    with RecordingServer() as recorder:
        reg = registry(gated, recorder)
        res = reg.call("record_refund", refund(_spelled(amount, spelling), "k"), actor=CLERK)
        sent = [r.json()["amount"] for r in recorder.requests]
    if res.error is not None and res.error.code == "invalid_arguments":
        assert spelling == "text" and sent == []  # a string is no integer: refused before anything
        return
    if amount > THRESHOLD:
        assert res.error is not None and res.error.code == "approval_required", res.to_json()
        assert sent == []
    else:
        assert res.ok, res.to_json()
        assert sent == [amount]  # the canonical request: the integer, whatever the spelling


def test_numbers_are_typed_by_their_schema_whatever_their_spelling() -> None:
    schema = {"type": "object", "properties": {"amount": {"type": "integer"}, "rate": {"type": "number"}}}
    condition = compile_condition("args.rate * 2.0 > 3.0 || args.amount % 7 == 3", schema)
    assert condition.holds({"rate": 2, "amount": 0}, "a", []) == (
        True,
        "true",
    )  # an integral rate is a double
    assert condition.holds({"rate": 1, "amount": 10}, "a", []) == (True, "true")
    assert condition.holds({"rate": 1, "amount": 11}, "a", []) == (False, "false")


@pytest.mark.parametrize(
    ("approval", "message"),
    [
        ("Required", "Input should be 'never' or 'required'"),
        ("{when: ''}", "at least 1 character"),
        ("{when: 'args.amount > 1', unless: x}", "unknown key `unless`"),
    ],
)
def test_an_approval_of_neither_form_is_one_located_error(
    tmp_path: Path, approval: str, message: str
) -> None:
    body = (
        "tools:\n  refund:\n    operation: createRefund\n    effect: write\n    permission: payments:write\n"
        f"    approval: {approval}\n"
    )
    out = build(tmp_path, PAYMENTS, body, expect=2).result.output
    assert out.count("intent-invalid") == 1 and message in out, out  # the other form's error is not shown
    assert "api.yaml:9:" in out, out


def test_descriptions_say_when_approval_is_asked_without_showing_the_condition(stored: Built) -> None:
    preview = stored.tool("mcp", "preview_refund")["description"]
    record = stored.tool("mcp", "record_refund")["description"]
    assert "When its approval_required is true, a human must approve" in preview, preview
    assert "else call record_refund with the preview_id." in preview
    assert "when the preview says approval_required" in record, record
    assert "50000" not in preview + record  # a model that knew the threshold could aim just below it


TAGGED = {
    "type": "object",
    "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "amount": {"type": "integer"}},
}


@pytest.mark.parametrize(
    ("when", "count"),
    [
        ('args.tags.exists(a, args.tags.exists(b, a != b && a + b == "xy"))', 400),
        ('args.tags.exists(t, t == "x")', 50_000),
        ("args.amount > 50000", 150_000),
    ],
)
def test_a_condition_over_arguments_too_large_to_evaluate_asks_at_once(when: str, count: int) -> None:
    """cel-python takes about half a millisecond per element a macro visits (400 tags under two
    nested macros: 160,000 visits, over a minute), and the arguments are the caller's to size: a
    condition whose evaluation would exceed its budget asks for the approval at once, unevaluated."""
    condition = compile_condition(when, TAGGED)
    started = time.perf_counter()
    required, why = condition.holds({"tags": [str(i) for i in range(count)], "amount": 1}, "a", [])
    assert time.perf_counter() - started < 1.0
    assert required and why.startswith("evaluation failed (too large"), why
    small = {"tags": ["x", "y"], "amount": 60_000}
    assert condition.holds(small, "a", []) == (True, "true")  # small arguments are evaluated
    assert condition.holds({"tags": ["a", "b"], "amount": 1}, "a", []) == (False, "false")


def test_making_the_condition_environment_leaves_the_recursion_limit_as_it_was() -> None:
    """celpy sets the process's recursion limit when its environment is made; toolgen puts it back, so
    what a later reader follows (a YAML file's nesting) does not depend on whether a condition was
    compiled first."""
    from toolgen.policy import conditions

    conditions._environment.cache_clear()
    before = sys.getrecursionlimit()
    compile_condition("args.amount > 5", {"type": "object", "properties": {"amount": {"type": "integer"}}})
    assert sys.getrecursionlimit() == before


@pytest.mark.parametrize("levels", [60, 500, 990])
def test_a_condition_nested_too_deeply_is_a_problem_not_a_crash(levels: int) -> None:
    schema = {"type": "object", "properties": {"amount": {"type": "integer"}}}
    text = "(" * levels + "args.amount > 5" + ")" * levels
    (problem,) = check(text, schema)
    assert "nests too deeply" in problem.message
    with pytest.raises(ValueError, match="nests too deeply"):
        compile_condition(text, schema)
    assert check("((args.amount > 5))", schema) == []
