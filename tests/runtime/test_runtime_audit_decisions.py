"""Every policy decision is an audit event with the actor, the tool, the arguments digest and the
rule that decided (`Call.decide`): allowed and denied by scope, approval asked, spent and refused,
against the loopback tickets API; argument values never reach the audit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples
from tests.support.runtime_env import READER, WRITER

from toolgen.runtime import Approval, JsonlAuditSink, MemoryAuditSink, Registry
from toolgen.runtime.audit import AuditEvent, digest_arguments


def decisions(audit: MemoryAuditSink, call_id: str | None) -> list[tuple[str, str, str | None, str | None]]:
    """(step, decision, rule, code) of the call's events that a rule decided."""
    return [
        (e.step, e.decision, e.rule, e.code)
        for e in audit.events
        if e.rule is not None and (call_id is None or e.call_id == call_id)
    ]


def sink(registry: Registry) -> MemoryAuditSink:
    assert isinstance(registry.audit, MemoryAuditSink)
    return registry.audit


def test_allowed_by_scope(registry: Registry) -> None:
    args = {"ticket_id": "T-102"}
    result = registry.call("get_ticket", args, actor=READER)
    assert result.ok
    assert decisions(sink(registry), result.call_id) == [("permission", "allow", "/permission", None)]
    events = [e for e in sink(registry).events if e.call_id == result.call_id]
    assert {(e.actor, e.tool, e.args_digest) for e in events} == {
        ("reader", "get_ticket", digest_arguments(args))
    }


def test_denied_by_scope_before_the_arguments_are_read(registry: Registry) -> None:
    args = {"ticket_id": "T-102", "note": "hello", "visibility": "public"}
    result = registry.call("preview_ticket_followup", args, actor=READER)
    assert result.error is not None and result.error.code == "permission_denied"
    denied = [e for e in sink(registry).events if e.call_id == result.call_id and e.rule is not None]
    assert [(e.step, e.decision, e.rule, e.code) for e in denied] == [
        ("permission", "deny", "/permission", "permission_denied")
    ]
    assert denied[0].actor == "reader" and denied[0].tool == "preview_ticket_followup"
    assert denied[0].args_digest == digest_arguments(args) and denied[0].fingerprint is None
    assert denied[0].detail["missing"] == ["ticket:write"]


def test_approval_asked_spent_and_refused(registry: Registry) -> None:
    args = {"ticket_id": "T-102", "note": "Called back.", "visibility": "public"}
    preview = registry.call("preview_ticket_followup", args, actor=WRITER)
    assert preview.ok and preview.result is not None
    preview_id = preview.result["preview_id"]
    record_args = {"preview_id": preview_id, "action_id": "a-1"}
    asked = registry.call("record_ticket_followup", record_args, actor=WRITER)
    assert asked.error is not None and asked.error.code == "approval_required"
    assert decisions(sink(registry), asked.call_id)[-1] == (
        "approval",
        "ask",
        "/approval",
        "approval_required",
    )
    wrong = registry.call(
        "record_ticket_followup", record_args, actor=WRITER, approval=Approval("sha256:" + "0" * 64)
    )
    assert wrong.error is not None
    assert ("approval", "deny", "/approval", "approval_mismatch") in decisions(sink(registry), wrong.call_id)
    done = registry.call(
        "record_ticket_followup",
        record_args,
        actor=WRITER,
        approval=Approval(preview_id, approved_by="alice"),
    )
    assert done.ok, done.error
    spent = [e for e in sink(registry).events if e.call_id == done.call_id and e.step == "approval"]
    assert [(e.decision, e.rule, e.detail.get("approved_by")) for e in spent] == [
        ("allow", "/approval", "alice")
    ]
    assert spent[0].fingerprint == preview_id and spent[0].args_digest == digest_arguments(record_args)


def test_every_event_of_a_call_carries_its_arguments_digest(registry: Registry) -> None:
    for tool, args in (
        ("get_ticket", {"ticket_id": "T-102"}),
        ("no_such_tool", {"x": 1}),
        ("get_ticket", {"ticket_id": 7}),
        ("list_tickets", {}),
    ):
        result = registry.call(tool, args, actor=READER)
        events = [e for e in sink(registry).events if e.call_id == result.call_id]
        assert events and {e.args_digest for e in events} == {digest_arguments(args)}, tool


@settings(max_examples=examples(100), deadline=None)
@given(
    st.dictionaries(
        st.text(max_size=8),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=12),
            lambda inner: (
                st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
            ),
            max_leaves=8,
        ),
    )
)
def test_the_digest_is_of_the_canonical_json_and_never_holds_a_value(args: dict[str, Any]) -> None:
    """Key order does not change the digest; any change of a value does; no value is in it."""
    digest = digest_arguments(args)
    assert digest == digest_arguments(dict(reversed(list(args.items()))))
    assert digest.startswith("sha256:") and len(digest) == 71
    assert digest != digest_arguments({**args, "planted": "v"})


def test_argument_values_never_reach_the_audit_log(registry: Registry, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    jsonl = JsonlAuditSink(log)
    registry.audit = jsonl
    planted = "PLANTED-note-4b1f9a"
    for actor in (READER, WRITER):
        registry.call(
            "preview_ticket_followup",
            {"ticket_id": "T-102", "note": planted, "visibility": "public"},
            actor=actor,
        )
    jsonl.close()
    text = log.read_text(encoding="utf-8")
    assert planted not in text
    rows = [json.loads(line) for line in text.splitlines()]
    assert {r["rule"] for r in rows} >= {"/permission"}
    assert all(r["args_digest"].startswith("sha256:") for r in rows)
    assert set(rows[0]) == set(AuditEvent(0, "", "", "", "", "").to_json())
