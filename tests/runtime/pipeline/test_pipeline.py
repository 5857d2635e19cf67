"""The call path as steps: the sans-IO protocol driven by hand (no socket), the pure retry policy,
the one deadline formula and the one permission rule."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.policy_rows import complete_policy, typed_row

from toolgen.runtime import Actor, MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.call.deadline import call_deadline_ms
from toolgen.runtime.identity import missing_scopes, permission_error, permits
from toolgen.runtime.pipeline import Outcome, Send, Sleep, run
from toolgen.runtime.pipeline.retry import RetryPolicy, condition, may_have_applied, resend_safe


def _row(**extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "tool": "list_items",
        "mode": "read",
        "effect": "read",
        "intent": "list_items",
        "pair": None,
        "operation": {"id": "listItems", "method": "GET", "path": "/items"},
        "permission": ["items:read"],
        "approval": "never",
        "idempotency": None,
        "retry": {"max_attempts": 3, "backoff_ms": 1, "deadline_ms": 60000, "on": ["timeout", "503"]},
        "timeout_ms": 1000,
        "pagination": None,
        "output": {"max_bytes": 16000, "redact": [], "schema_mode": "warn"},
        "auth": [],
        "request": {"encoding": "none", "content_type": None, "bindings": [], "fixed": []},
        "success_status": [200],
    }
    row.update(extra)
    return row


def _registry(audit: MemoryAuditSink | None = None, **row: Any) -> Registry:
    tool = {
        "name": "list_items",
        "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
        "outputSchema": {"type": "object"},
    }
    return Registry(
        complete_policy({"api": "units", "base_url": "http://127.0.0.1:9", "tools": [_row(**row)]}),
        [tool],
        credentials=StaticCredentials({}),
        receipts=MemoryReceiptStore(),
        audit=audit,
        cursor_key=b"p" * 32,
    )


READER = Actor.of("r", "items:read")


def _answer(status: int, body: Any) -> Outcome:
    return Outcome(status, httpx.Headers({"content-type": "application/json"}), json.dumps(body).encode())


def test_the_call_path_yields_its_io_and_returns_the_result() -> None:
    """Driven by hand: the first effect is the request, a 503 is retried after a sleep, the 200's
    body is the result; nothing touches a socket."""
    audit = MemoryAuditSink()
    gen = run(_registry(audit), "list_items", {}, READER, None, None)
    first = next(gen)
    assert isinstance(first, Send) and str(first.request.url) == "http://127.0.0.1:9/items"
    assert 0 < first.timeout_s <= 1.0
    sleep = gen.send(_answer(503, {"error": "busy"}))
    assert isinstance(sleep, Sleep) and sleep.seconds >= 0
    again = gen.send(None)
    assert isinstance(again, Send)
    with pytest.raises(StopIteration) as stop:
        gen.send(_answer(200, {"id": 7}))
    result = stop.value.value
    assert result.ok and result.result == {"id": 7} and result.attempts == 2 and result.status == 200
    steps = [(e.step, e.decision) for e in audit.events]
    assert steps == [
        ("find", "allow"),
        ("validate", "allow"),
        ("permission", "allow"),
        ("timeout", "allow"),
        ("http", "send"),
        ("http", "retry"),
        ("http", "send"),
        ("output", "allow"),
        ("result", "ok"),
    ]


def test_a_refusal_yields_nothing() -> None:
    """A step that refuses ends the call before any effect: no request is even offered."""
    gen = run(_registry(), "list_items", {}, Actor.of("nobody"), None, None)
    with pytest.raises(StopIteration) as stop:
        next(gen)
    result = stop.value.value
    assert not result.ok and result.error.code == "permission_denied"
    assert result.error.details == {"missing": ["items:read"], "required": ["items:read"]}


def test_a_closed_call_path_stops_cleanly() -> None:
    """A driver that is cancelled mid-call closes the generator: it ends without another effect."""
    gen = run(_registry(), "list_items", {}, READER, None, None)
    assert isinstance(next(gen), Send)
    gen.close()
    with pytest.raises(StopIteration):
        next(gen)


@given(
    timeout=st.integers(1, 10**6),
    attempts=st.integers(1, 10),
    retry_deadline=st.none() | st.integers(0, 10**7),
    lowered=st.booleans(),
)
def test_the_deadline_is_at_least_one_attempt_and_capped_by_a_lowered_timeout(
    timeout: int, attempts: int, retry_deadline: int | None, lowered: bool
) -> None:
    deadline = call_deadline_ms(timeout, attempts, retry_deadline, lowered=lowered)
    assert deadline >= timeout
    if lowered:
        assert deadline <= max(timeout * attempts, timeout)
    if not retry_deadline:
        assert deadline == timeout * attempts
    elif not lowered:
        assert deadline == max(retry_deadline, timeout)


def test_a_registry_timeout_override_uses_the_one_formula() -> None:
    audit = MemoryAuditSink()
    gen = run(_registry(audit), "list_items", {}, READER, None, 250)
    send = next(gen)
    assert isinstance(send, Send) and send.timeout_s == pytest.approx(0.25)
    gen.close()
    timeout = next(e for e in audit.events if e.step == "timeout")
    assert timeout.detail == {
        "timeout_ms": 250,
        "deadline_ms": call_deadline_ms(250, 3, 60000, lowered=True),
        "max_attempts": 3,
    }
    assert timeout.detail["deadline_ms"] == 750


@pytest.mark.parametrize(
    "outcome,expected",
    [
        (Outcome(kind="timeout"), "timeout"),
        (Outcome(kind="broken"), "timeout"),
        (Outcome(kind="connect"), "connect"),
        (Outcome(kind="too_large", status=200), None),
        (Outcome(status=503), "503"),
        (Outcome(status=429), "429"),
        (Outcome(status=404), None),
        (Outcome(status=200), None),
        (Outcome(status=501), None),
    ],
)
def test_retry_conditions(outcome: Outcome, expected: str | None) -> None:
    assert condition(outcome) == expected


def test_a_write_is_resent_only_where_it_cannot_write_twice() -> None:
    connect, busy, timeout = Outcome(kind="connect"), Outcome(status=429), Outcome(kind="timeout")
    assert resend_safe(timeout, "timeout", mutating=False, uncertain=True, honoured=False)
    assert resend_safe(timeout, "timeout", mutating=True, uncertain=True, honoured=True)
    assert not resend_safe(timeout, "timeout", mutating=True, uncertain=True, honoured=False)
    assert resend_safe(connect, "connect", mutating=True, uncertain=False, honoured=False)
    assert resend_safe(busy, "429", mutating=True, uncertain=False, honoured=False)
    assert not resend_safe(busy, "429", mutating=True, uncertain=True, honoured=False)
    assert (
        may_have_applied(timeout)
        and may_have_applied(Outcome(status=502))
        and may_have_applied(Outcome(status=302))
    )
    assert not may_have_applied(connect) and not may_have_applied(busy)


def test_the_retry_policy_needs_attempts_left_and_a_listed_condition() -> None:
    policy = RetryPolicy.of(
        typed_row({"retry": {"on": ["503"], "backoff_ms": 10, "max_attempts": 2, "deadline_ms": 1000}}), 2
    )
    assert policy.retries(Outcome(status=503), "503", 1, True)
    assert not policy.retries(Outcome(status=503), "503", 2, True)  # no attempt left
    assert not policy.retries(Outcome(status=503), "503", 1, False)  # not safe
    assert not policy.retries(Outcome(kind="timeout"), "timeout", 1, True)  # not listed
    assert policy.retries(Outcome(kind="connect"), "connect", 1, True)  # nothing was sent: always


@given(
    required=st.lists(st.sampled_from(["a", "b", "c:d", "e"]), max_size=4),
    held=st.lists(st.sampled_from(["a", "b", "c:d", "e", "c"]), max_size=5),
)
def test_one_permission_rule(required: list[str], held: list[str]) -> None:
    row = typed_row({"tool": "t", "permission": required})
    missing = missing_scopes(row, held)
    assert missing == [s for s in required if s not in set(held)]
    assert permits(row, held) == (not missing)
    error = permission_error("t", row, "x", held)
    assert (error is None) == permits(row, held)
    if error is not None:
        assert error.code == "permission_denied" and error.details["missing"] == missing
