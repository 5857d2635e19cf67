"""A composite write step's idempotency key and the keys callers choose live in disjoint spaces,
at the API and in the receipt store (docs/composites.md "Writing composites", step keys).

A step sends ``tgs-`` + a digest of (composite record tool, record key, step id); a single record
tool refuses a caller's key of that form (any case), so no caller can pre-empt a step's key (the
API would answer 422 to the composite) or have the composite absorb a write it made earlier (the
same body under the same key: one write, reported as two). Over the committed tickets package and the example tickets API (which replays a known
key with the same body and answers 422 to one with another body), on loopback.
"""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples
from tests.support.runtime_env import WRITER, error_code, tickets_dir

from toolgen.runtime import (
    Actor,
    Approval,
    CallResult,
    MemoryAuditSink,
    MemoryReceiptStore,
    Registry,
    StaticCredentials,
)
from toolgen.runtime.pipeline.idempotency import reserved, step_key, step_key_length
from toolgen.testing.tickets_server import TicketsServer

OTHER = Actor.of("other-bot", ["ticket:read", "ticket:write"])
REASON = "Customer waiting since Monday."
STEP_SCOPE = "tickets/record_escalate_ticket.note"


def _registry(server: TicketsServer) -> Registry:
    return Registry.from_dir(
        tickets_dir(),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=MemoryReceiptStore(),
        audit=MemoryAuditSink(),
        cursor_key=b"k" * 32,
    )


def _followup(registry: Registry, actor: Actor, note: str, key: str) -> CallResult:
    shown = registry.call(
        "preview_ticket_followup", {"ticket_id": "T-101", "note": note, "visibility": "internal"}, actor=actor
    )
    preview_id = str(shown.result["preview_id"])  # type: ignore[index]
    return registry.call(
        "record_ticket_followup",
        {"preview_id": preview_id, "action_id": key},
        actor=actor,
        approval=Approval(preview_id),
    )


def _escalate(registry: Registry, key: str) -> CallResult:
    shown = registry.call("preview_escalate_ticket", {"ticket_id": "T-101", "reason": REASON}, actor=WRITER)
    preview_id = str(shown.result["preview_id"])  # type: ignore[index]
    return registry.call(
        "record_escalate_ticket",
        {"preview_id": preview_id, "action_id": key},
        actor=WRITER,
        approval=Approval(preview_id),
    )


def _sent_keys(server: TicketsServer) -> list[str | None]:
    return [r.headers.get("Idempotency-Key") for r in server.requests_for("POST", "/followups")]


def test_the_step_key_is_the_documented_digest() -> None:
    digest = hashlib.sha256(json.dumps(["record_escalate_ticket", "esc-7", "note"]).encode()).hexdigest()
    assert step_key("record_escalate_ticket", "esc-7", "note") == "tgs-" + digest[:32]
    assert re.fullmatch(r"tgs-[0-9a-f]{32}", step_key("record_x", "é" * 190, "s"))
    # a shorter maxLength of the step operation's own key shortens the digest, never below 16 digits
    assert [step_key_length(n) for n in (None, 255, 36, 30, 12, True)] == [36, 36, 36, 30, 20, 36]
    assert step_key("record_x", "k", "s", 30) == step_key("record_x", "k", "s")[:30]


def test_another_callers_key_cannot_make_an_approved_composite_write_fail(
    registry: Registry, server: TicketsServer
) -> None:
    assert _followup(
        registry, OTHER, "Something else entirely.", "esc-7.note"
    ).ok  # <record key>.<step id>: a free key
    escalated = _escalate(registry, "esc-7")
    assert escalated.ok, escalated.to_json()
    assert server.side_effects["addFollowup"] == 2
    assert _sent_keys(server) == ["esc-7.note", step_key("record_escalate_ticket", "esc-7", "note")]


def test_two_approved_writes_are_two_writes_or_the_runtime_says_otherwise(
    registry: Registry, server: TicketsServer
) -> None:
    assert _followup(registry, WRITER, REASON, "esc-8.note").ok
    escalated = _escalate(registry, "esc-8")
    assert escalated.ok and escalated.result is not None, escalated.to_json()
    assert not any(s.get("replayed") for s in escalated.result["steps"])
    assert server.side_effects["addFollowup"] == 2


@pytest.mark.parametrize("transform", [str, str.upper, str.title])
def test_a_caller_key_in_the_step_key_form_is_refused_before_anything_is_sent(
    registry: Registry, server: TicketsServer, transform: type[str]
) -> None:
    taken = transform(step_key("record_escalate_ticket", "esc-9", "note"))
    refused = _followup(registry, OTHER, "Pre-empting.", taken)
    assert error_code(refused) == "invalid_arguments"
    assert refused.error is not None and refused.error.details.get("pointer") == "/action_id"
    assert "tgs-" in refused.error.message and "reserved" in refused.error.message
    assert (
        server.side_effects["addFollowup"] == 0
        and registry.receipts.get("tickets/record_ticket_followup", taken) is None
    )
    escalated = _escalate(registry, "esc-9")
    assert escalated.ok, escalated.to_json()
    assert server.side_effects["addFollowup"] == 1
    # the rule holds for a composite's own record key too (it is not sent, but one rule is simpler)
    assert error_code(_escalate(registry, transform("tgs-esc"))) == "invalid_arguments"
    assert server.side_effects["addFollowup"] == 1


_KEY_CHARS = st.characters(min_codepoint=0x20, max_codepoint=0x7E)
_RECORD_KEYS = st.text(_KEY_CHARS, min_size=1, max_size=24).filter(lambda k: k.strip() == k != "")


@st.composite
def _caller_and_record_keys(draw: st.DrawFn) -> tuple[str, str]:
    record_key = draw(_RECORD_KEYS)
    derived = step_key("record_escalate_ticket", record_key, "note")
    caller = draw(
        st.one_of(
            _RECORD_KEYS,
            st.just(f"{record_key}.note"),  # <record key>.<step id>: a key like any other
            st.sampled_from(
                [derived, derived.upper(), "TgS-" + derived[4:], derived[:20]]
            ),  # the reserved form
            st.builds(lambda a, b: a + b, st.sampled_from(["tgs-", "TGS-", "tgs", "xtgs-"]), _RECORD_KEYS),
        )
    )
    return caller, record_key


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_caller_and_record_keys())
def test_no_caller_key_and_no_step_key_ever_share_a_receipt_or_an_upstream_key(keys: tuple[str, str]) -> None:
    caller, record_key = keys
    with TicketsServer() as server:
        registry = _registry(server)
        try:
            single = _followup(registry, OTHER, "A caller's own note.", caller)
            escalated = _escalate(registry, record_key)
            step = step_key("record_escalate_ticket", record_key, "note")
            if reserved(caller):
                assert error_code(single) == "invalid_arguments"
            assert escalated.ok, escalated.to_json()  # whatever key the caller chose first
            assert not any(s.get("replayed") for s in escalated.result["steps"])  # type: ignore[index]
            upstream = _sent_keys(server)
            assert upstream[-1] == step and upstream.count(step) == 1
            if single.ok:
                assert upstream[:-1] == [caller] and caller != step
                assert server.side_effects["addFollowup"] == 2
            else:
                assert upstream[:-1] == [] and server.side_effects["addFollowup"] == 1
            # receipts: the caller's under its tool, the step's under the step tool, never one shared
            caller_receipt = registry.receipts.get("tickets/record_ticket_followup", caller)
            assert (caller_receipt is not None) == single.ok
            assert registry.receipts.get("tickets/record_ticket_followup", step) is None
            if single.ok:  # an accepted caller key never names a step receipt
                assert registry.receipts.get(STEP_SCOPE, caller) is None
            assert registry.receipts.get(STEP_SCOPE, step) is not None
        finally:
            registry.close()
