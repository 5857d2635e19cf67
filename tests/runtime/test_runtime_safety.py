"""Safety nets of the runtime: receipt-store outages never cause a write without a receipt nor hide an
outcome; an approval is spent on one action; undeclared response fields never reach the model."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from tests.support.records import call_record
from tests.support.runtime_env import WRITER, tickets_dir

from toolgen.runtime import (
    Approval,
    MemoryAuditSink,
    MemoryReceiptStore,
    Registry,
    StaticCredentials,
)
from toolgen.testing.tickets_server import TicketsServer

NOTE = {"ticket_id": "T-102", "note": "Outage drill.", "visibility": "internal"}


def _registry(server: TicketsServer, receipts: Any, audit: MemoryAuditSink) -> Registry:
    return Registry.from_dir(
        tickets_dir(),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=receipts,
        audit=audit,
        cursor_key=b"k" * 32,
    )


def _approved(reg: Registry) -> Approval:
    preview = reg.call("preview_ticket_followup", NOTE, actor=WRITER)
    assert preview.ok, preview.to_json()
    return Approval(preview.result["preview_id"])  # type: ignore[index]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_store_sends_nothing(server: TicketsServer) -> None:
    pytest.importorskip("redis")
    from toolgen.runtime import RedisReceiptStore

    store = RedisReceiptStore(f"redis://127.0.0.1:{_closed_port()}/0")  # nothing listens there
    reg = _registry(server, store, MemoryAuditSink())
    # the preview cannot be stored, so there is no preview_id to execute
    shown = reg.call("preview_ticket_followup", NOTE, actor=WRITER)
    assert shown.error is not None and shown.error.code == "receipt_store_unavailable", shown.to_json()
    # nor can a record call read one
    res = reg.call(
        "record_ticket_followup",
        {"preview_id": str(shown.fingerprint), "action_id": "out-1"},
        actor=WRITER,
        approval=str(shown.fingerprint),
    )
    assert not res.ok and res.error is not None
    assert res.error.code == "receipt_store_unavailable"
    assert res.error.retryable is True and res.error.result_known is True
    assert server.side_effects["addFollowup"] == 0 and not server.requests_for("POST", "/followups")


class _FailsOnComplete(MemoryReceiptStore):
    """The store goes away after the write was sent (approvals, recorded before, still work)."""

    def complete(self, scope: str, *args: Any, **kwargs: Any) -> None:
        if scope.endswith("#approval"):
            return super().complete(scope, *args, **kwargs)
        raise OSError("store went away")


def test_store_failure_after_the_write_keeps_the_result(server: TicketsServer) -> None:
    audit = MemoryAuditSink()
    reg = _registry(server, _FailsOnComplete(), audit)
    res = call_record(
        reg, "record_ticket_followup", dict(NOTE, action_id="out-2"), actor=WRITER, approval=_approved(reg)
    )
    assert res.ok, res.to_json()
    assert server.side_effects["addFollowup"] == 1
    failures = [e for e in audit.events if e.decision == "store_failed"]
    assert failures and failures[0].code == "receipt_store_unavailable"


def test_an_approval_is_spent_on_one_action(server: TicketsServer) -> None:
    reg = _registry(server, MemoryReceiptStore(), MemoryAuditSink())
    approval = _approved(reg)
    first = call_record(
        reg, "record_ticket_followup", dict(NOTE, action_id="a-1"), actor=WRITER, approval=approval
    )
    again = call_record(
        reg, "record_ticket_followup", dict(NOTE, action_id="a-1"), actor=WRITER, approval=approval
    )
    other = call_record(
        reg, "record_ticket_followup", dict(NOTE, action_id="a-2"), actor=WRITER, approval=approval
    )
    assert first.ok and again.ok and again.replayed
    assert (
        other.error is not None and other.error.code == "approval_used" and other.error.category == "policy"
    )
    assert server.side_effects["addFollowup"] == 1
    fresh = Approval(
        approval.preview_id, approval_id="second yes"
    )  # a second human approval of the same action
    assert call_record(
        reg, "record_ticket_followup", dict(NOTE, action_id="a-2"), actor=WRITER, approval=fresh
    ).ok
    assert server.side_effects["addFollowup"] == 2


def test_undeclared_response_fields_never_reach_the_model(tmp_path: Any) -> None:
    """Without output.fields, a result keeps only what its output schema declares."""
    from click.testing import CliRunner
    from tests.support.build import TICKETS_SPEC_PATH as spec
    from tests.support.recording_server import RecordingServer

    from toolgen.cli import main

    intent = tmp_path / "m.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {spec}\napi: {{name: t}}\ntools:\n"
        "  get_ticket: {operation: getTicket, effect: read, permission: ticket:read}\n"
    )
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["build", str(intent), "--out", str(out), "-q"]).exit_code == 0
    with RecordingServer() as rec:
        rec.reply(
            "GET",
            r"/tickets/T-1$",
            body={
                "id": "T-1",
                "subject": "s",
                "status": "open",
                "priority": "low",
                "created_at": "2026-01-01T00:00:00Z",
                "secret_cost": 42,
            },
        )
        reg = Registry.from_dir(out, base_url=rec.base_url, credentials=StaticCredentials({"T_TOKEN": "x"}))
        from toolgen.runtime import Actor

        res = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=Actor.of("a", ["ticket:read"]))
        reg.close()
    assert res.ok, res.to_json()
    assert res.result == {
        "id": "T-1",
        "subject": "s",
        "status": "open",
        "priority": "low",
        "created_at": "2026-01-01T00:00:00Z",
    }
