"""The source article's 11 boundary cases, end to end: runtime → real loopback tickets API.

Each case asserts the outcome code, `retryable` and the server-side count of side effects. Extra
cases: an approval bound to another preview, a restart between two identical writes (SQLite
receipts), and writes that time out (result unknown, no double write on retry).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.records import acall_record, call_record
from tests.support.runtime_env import ADMIN, READER, WRITER, tickets_dir

from toolgen.runtime import (
    Actor,
    Approval,
    MemoryAuditSink,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
)
from toolgen.runtime.call.shaping import CursorCodec
from toolgen.testing.tickets_server import TicketsServer

NOTE = {"ticket_id": "T-102", "note": "Customer asked for a callback.", "visibility": "public"}


def approve(registry: Registry, preview_tool: str, args: dict[str, Any]) -> Approval:
    preview = registry.call(preview_tool, args, actor=WRITER if "followup" in preview_tool else ADMIN)
    assert preview.ok, preview.to_json()
    return Approval(preview.result["preview_id"], approved_by="human@example.com")  # type: ignore[index]


def post_count(server: TicketsServer) -> int:
    return len(server.requests_for("POST", "/followups"))


# 1. read ticket ------------------------------------------------------------------------------------
def test_01_read_ticket(registry: Registry, server: TicketsServer) -> None:
    res = registry.call("get_ticket", {"ticket_id": "T-102"}, actor=READER)
    assert res.ok, res.to_json()
    out = res.result
    assert out is not None
    assert out["id"] == "T-102" and out["status"] in ("open", "pending", "closed")
    assert out["requester"]["phone"] == "[redacted]"  # declared sensitive
    assert out["requester"]["email"] == "user102@example.com"
    assert "body" not in out and "created_at" not in out  # projection to output.fields
    assert sum(server.side_effects.values()) == 0
    steps = [e.step for e in registry.audit.for_call(res.call_id)]  # type: ignore[attr-defined]
    assert steps == ["find", "validate", "permission", "timeout", "http", "output", "result"]


# 2. preview before write ---------------------------------------------------------------------------
def test_02_preview_before_write(registry: Registry, server: TicketsServer) -> None:
    res = registry.call("preview_ticket_followup", NOTE, actor=WRITER)
    assert res.ok, res.to_json()
    preview = res.result
    assert preview is not None
    assert preview["preview_id"].startswith("sha256:") and len(preview["preview_id"]) == 7 + 64
    req = preview["request"]
    assert req["method"] == "POST"
    assert req["url"] == f"{server.base_url}/tickets/T-102/followups"
    assert req["body"] == {"note": NOTE["note"], "visibility": "public"}
    assert req["headers"]["Authorization"] == "[redacted]"
    assert server.token not in str(preview)
    assert preview["record_tool"] == "record_ticket_followup" and preview["approval_required"] is True
    assert post_count(server) == 0 and sum(server.side_effects.values()) == 0
    # the same arguments always give the same preview_id; other arguments another one
    again = registry.call("preview_ticket_followup", dict(NOTE), actor=WRITER)
    other = registry.call("preview_ticket_followup", dict(NOTE, note="x"), actor=WRITER)
    assert again.result["preview_id"] == preview["preview_id"] != other.result["preview_id"]  # type: ignore[index]


# 3. write needs approval ---------------------------------------------------------------------------
def test_03_write_needs_approval(registry: Registry, server: TicketsServer) -> None:
    res = call_record(registry, "record_ticket_followup", dict(NOTE, action_id="act-0003"), actor=WRITER)
    assert not res.ok and res.error is not None
    assert res.error.code == "approval_required" and res.error.category == "policy"
    assert res.error.retryable is False
    assert res.error.details["preview_tool"] == "preview_ticket_followup"
    assert post_count(server) == 0 and server.side_effects["addFollowup"] == 0


# 4. invalid arguments ------------------------------------------------------------------------------
def test_04_invalid_arguments(registry: Registry, server: TicketsServer) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"ticket_id": "102"}, "/ticket_id"),  # pattern
        ({"ticket_id": "T-" + "1" * 40}, "/ticket_id"),  # maxLength
        ({"note": ""}, "/note"),  # minLength
        ({"note": "n" * 2001}, "/note"),  # maxLength
        ({"visibility": "everyone"}, "/visibility"),  # enum
        ({"note": 5}, "/note"),  # type
        ({"surprise": True}, "/surprise"),  # additionalProperties: false
    ]
    valid = {"ticket_id": "T-102", "note": "hi", "visibility": "internal", "action_id": "a1"}
    for change, pointer in cases:
        args = {**valid, **change}
        res = call_record(
            registry, "record_ticket_followup", args, actor=WRITER, approval=Approval("sha256:x")
        )
        assert res.error is not None and res.error.code == "invalid_arguments", args
        assert res.error.details["pointer"] == pointer, (args, res.error.details)
        assert res.error.retryable is False and res.error.category == "validation"
    missing = call_record(
        registry,
        "record_ticket_followup",
        {"ticket_id": "T-102", "visibility": "public", "action_id": "a1"},
        actor=WRITER,
    )
    assert missing.error is not None and missing.error.code == "invalid_arguments"
    assert "note" in missing.error.message and missing.error.details["pointer"] == "/note"
    assert missing.error.details["keyword"] == "required"
    extra = registry.call("get_ticket", {"ticket_id": "T-102", "id": "T-1"}, actor=READER)
    assert extra.error is not None and extra.error.code == "invalid_arguments"
    assert len(server.state.requests) == 0 and sum(server.side_effects.values()) == 0


# 5. permission boundary ----------------------------------------------------------------------------
def test_05_permission_boundary(registry: Registry, server: TicketsServer) -> None:
    approval = approve(registry, "preview_ticket_followup", NOTE)
    res = call_record(
        registry, "record_ticket_followup", dict(NOTE, action_id="act-0005"), actor=READER, approval=approval
    )  # approved, but the actor only reads: approval is not permission
    assert res.error is not None and res.error.code == "permission_denied"
    assert res.error.retryable is False and res.error.details["missing"] == ["ticket:write"]
    delete = call_record(
        registry,
        "record_ticket_delete",
        {"ticket_id": "T-102", "action_id": "d-1"},
        actor=WRITER,
        approval=approve(registry, "preview_ticket_delete", {"ticket_id": "T-102"}),
    )
    assert delete.error is not None and delete.error.code == "permission_denied"
    assert post_count(server) == 0 and sum(server.side_effects.values()) == 0
    assert "T-102" in server.state.tickets


# 6. duplicate action replayed once -----------------------------------------------------------------
def test_06_duplicate_action_replayed_once(registry: Registry, server: TicketsServer) -> None:
    approval = approve(registry, "preview_ticket_followup", NOTE)
    args = dict(NOTE, action_id="act-0006")
    first = call_record(registry, "record_ticket_followup", args, actor=WRITER, approval=approval)
    assert first.ok and first.replayed is False, first.to_json()
    assert first.result is not None and first.result["ticket_id"] == "T-102" and first.status == 201
    assert post_count(server) == 1
    assert server.requests_for("POST", "/followups")[0].headers["Idempotency-Key"] == "act-0006"
    second = call_record(registry, "record_ticket_followup", args, actor=WRITER, approval=approval)
    assert second.ok and second.replayed is True
    assert second.result == first.result
    assert post_count(server) == 1 and server.side_effects["addFollowup"] == 1
    assert second.to_json()["replayed"] is True


# 7. idempotency conflict ---------------------------------------------------------------------------
def test_07_idempotency_conflict(registry: Registry, server: TicketsServer) -> None:
    first_args = dict(NOTE, action_id="act-0007")
    assert call_record(
        registry,
        "record_ticket_followup",
        first_args,
        actor=WRITER,
        approval=approve(registry, "preview_ticket_followup", NOTE),
    ).ok
    changed = dict(NOTE, note="A different note.")
    res = call_record(
        registry,
        "record_ticket_followup",
        dict(changed, action_id="act-0007"),
        actor=WRITER,
        approval=approve(registry, "preview_ticket_followup", changed),
    )
    assert res.error is not None and res.error.code == "idempotency_conflict"
    assert res.error.category == "conflict" and res.error.retryable is False
    assert post_count(server) == 1 and server.side_effects["addFollowup"] == 1


# 8. transient timeout ------------------------------------------------------------------------------
def test_08_transient_timeout(registry: Registry, server: TicketsServer) -> None:
    row = registry.row_json("get_ticket_history")
    assert row["timeout_ms"] == 800
    started = time.monotonic()
    res = registry.call("get_ticket_history", {"ticket_id": "T-102"}, actor=READER)
    elapsed = time.monotonic() - started
    assert res.error is not None and res.error.code == "tool_timeout"
    assert res.error.retryable is True and res.error.result_known is True
    assert res.error.category == "dependency" and res.error.details["timeout_ms"] == 800
    attempts = int(row["retry"]["max_attempts"])
    assert res.attempts == attempts
    assert elapsed < 0.8 * attempts + 1.0  # bounded: no attempt waited for the 1.5 s answer
    assert sum(server.side_effects.values()) == 0
    # with time to spare the same tool works (the server is slow, not broken)
    server.state.history_delay = 0.0
    ok = registry.call("get_ticket_history", {"ticket_id": "T-102"}, actor=READER)
    assert ok.ok and ok.result == {
        "entries": [
            {
                "at": ok.result["entries"][0]["at"],  # type: ignore[index]
                "event": "created",
                "actor": "customer",
            }
        ]
    }


# 9. bounded list with cursor -----------------------------------------------------------------------
def test_09_bounded_list_with_cursor(registry: Registry, server: TicketsServer) -> None:
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        args: dict[str, Any] = {"page_size": 25}
        if cursor is not None:
            args["cursor"] = cursor
        res = registry.call("list_tickets", args, actor=READER)
        assert res.ok, res.to_json()
        out = res.result
        assert out is not None and set(out) <= {"items", "next_cursor", "_truncated"}
        assert len(out["items"]) <= 25
        for item in out["items"]:
            assert set(item) <= {"id", "subject", "status", "priority", "updated_at"}
        seen.extend(i["id"] for i in out["items"])
        pages += 1
        cursor = out["next_cursor"]
        if cursor is None:
            break
        assert "T-" not in cursor  # opaque: not the API's own cursor
    assert len(seen) == len(set(seen)) == len(server.state.tickets) == 60
    assert pages == 3
    limits = [r.query["limit"] for r in server.requests_for("GET", "/v1/tickets")]
    assert limits == [["25"]] * 3
    too_big = registry.call("list_tickets", {"page_size": 500}, actor=READER)
    assert too_big.error is not None and too_big.error.code == "invalid_arguments"
    assert too_big.error.details["pointer"] == "/page_size"
    assert sum(server.side_effects.values()) == 0


# 10. not found -------------------------------------------------------------------------------------
def test_10_not_found(registry: Registry, server: TicketsServer) -> None:
    res = registry.call("get_ticket", {"ticket_id": "T-999"}, actor=READER)
    assert res.error is not None and res.error.code == "not_found"
    assert res.error.category == "not_found" and res.error.retryable is False
    assert res.error.details["status"] == 404
    assert res.error.details["problem"]["detail"] == "Ticket T-999 does not exist."
    assert len(server.requests_for("GET", "/T-999")) == 1  # a 404 is final: not retried
    assert sum(server.side_effects.values()) == 0


# 11. invalid cursor --------------------------------------------------------------------------------
def test_11_invalid_cursor(registry: Registry, server: TicketsServer) -> None:
    page = registry.call("list_tickets", {"page_size": 5}, actor=READER)
    assert page.ok and page.result is not None
    good = page.result["next_cursor"]
    body, mac = good.split(".")
    forged = [
        "T-104",  # the API's own cursor, not the runtime's
        body + "." + mac[:-2] + ("AA" if not mac.endswith("AA") else "BB"),  # tampered signature
        CursorCodec(b"z" * 32).encode("tickets/list_tickets", {"c": "T-150", "n": 5, "h": []}),  # another key
        CursorCodec(b"k" * 32).encode("tickets/get_ticket", {"c": "T-150", "n": 5, "h": []}),  # another tool
        "",
    ]
    before = len(server.state.requests)
    for token in forged:
        res = registry.call("list_tickets", {"page_size": 5, "cursor": token}, actor=READER)
        assert res.error is not None and res.error.code == "invalid_cursor", token
        assert res.error.retryable is False and res.error.details["pointer"] == "/cursor"
    # signed by this runtime's key for this tool, but without the page history every cursor it issues
    # keeps (the form of no release): refused, never read with an empty history
    bare = CursorCodec(b"k" * 32).encode("tickets/list_tickets", {"c": "T-150", "n": 5})
    res = registry.call("list_tickets", {"page_size": 5, "cursor": bare}, actor=READER)
    assert res.error is not None and res.error.code == "invalid_cursor" and "first page" in res.error.message
    assert res.error.details["pointer"] == "/cursor"
    assert len(server.state.requests) == before and sum(server.side_effects.values()) == 0


# extra: approval bound to another preview ----------------------------------------------------------
def test_approval_for_other_arguments_is_rejected(registry: Registry, server: TicketsServer) -> None:
    approval = approve(registry, "preview_ticket_followup", NOTE)
    res = call_record(
        registry,
        "record_ticket_followup",
        dict(NOTE, note="Something else", action_id="act-x"),
        actor=WRITER,
        approval=approval,
    )
    assert res.error is not None and res.error.code == "approval_mismatch"
    assert res.error.retryable is False
    # the approval of one intent does not carry over to another with the same arguments
    delete_approval = approve(registry, "preview_ticket_delete", {"ticket_id": "T-102"})
    res2 = call_record(
        registry,
        "record_ticket_followup",
        dict(NOTE, action_id="act-y"),
        actor=WRITER,
        approval=delete_approval,
    )
    assert res2.error is not None and res2.error.code == "approval_mismatch"
    assert post_count(server) == 0 and server.side_effects["addFollowup"] == 0


def test_destructive_write_end_to_end(registry: Registry, server: TicketsServer) -> None:
    args = {"ticket_id": "T-110"}
    approval = approve(registry, "preview_ticket_delete", args)
    res = call_record(
        registry, "record_ticket_delete", dict(args, action_id="del-110"), actor=ADMIN, approval=approval
    )
    assert res.ok and res.status == 204 and res.result == {"status": 204}, res.to_json()
    again = call_record(
        registry, "record_ticket_delete", dict(args, action_id="del-110"), actor=ADMIN, approval=approval
    )
    assert again.ok and again.replayed
    assert server.side_effects["deleteTicket"] == 1 and len(server.requests_for("DELETE")) == 1
    assert "Idempotency-Key" not in server.requests_for("DELETE")[0].headers  # send_as: none


# extra: restart between two identical writes ---------------------------------------------------------
def test_restart_between_identical_writes_still_replays(server: TicketsServer, tmp_path: Path) -> None:
    db = tmp_path / "receipts.sqlite3"

    def fresh() -> Registry:
        return Registry.from_dir(
            tickets_dir(),
            base_url=server.base_url,
            credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
            receipts=SqliteReceiptStore(db),
            cursor_key=b"k" * 32,
        )

    first_reg = fresh()
    approval = approve(first_reg, "preview_ticket_followup", NOTE)
    first = call_record(
        first_reg,
        "record_ticket_followup",
        dict(NOTE, action_id="act-restart"),
        actor=WRITER,
        approval=approval,
    )
    assert first.ok and not first.replayed
    first_reg.close()  # "restart": a new process would open the same file
    second_reg = fresh()
    second = call_record(
        second_reg,
        "record_ticket_followup",
        dict(NOTE, action_id="act-restart"),
        actor=WRITER,
        approval=approval,
    )
    second_reg.close()
    assert second.ok and second.replayed and second.result == first.result
    assert post_count(server) == 1 and server.side_effects["addFollowup"] == 1


# extra: a write that times out -----------------------------------------------------------------------
def _write_attempts(registry: Registry, tool: str) -> int:
    retry = registry.row_json(tool)["retry"]
    return int(retry["max_attempts"]) if "timeout" in retry.get("on", []) else 1


def test_write_timeout_result_unknown_then_retry_does_not_write_twice(
    registry: Registry, server: TicketsServer
) -> None:
    approval = approve(registry, "preview_ticket_followup", NOTE)
    args = dict(NOTE, action_id="act-timeout")
    # the first attempt commits and loses its answer; any automatic retry stalls too
    server.stall_next(1.2, after_commit=True)
    server.stall_next(1.2, after_commit=False, count=_write_attempts(registry, "record_ticket_followup") - 1)
    res = call_record(
        registry, "record_ticket_followup", args, actor=WRITER, approval=approval, timeout_ms=300
    )
    server.state.stall.clear()
    assert res.error is not None and res.error.code == "result_unknown"
    assert res.error.result_known is False
    assert res.error.retryable is True  # only because the key is forwarded to the API, which dedupes it
    assert server.side_effects["addFollowup"] == 1  # the write did happen; the answer was lost
    retry = call_record(registry, "record_ticket_followup", args, actor=WRITER, approval=approval)
    assert retry.ok, retry.to_json()
    assert retry.result is not None and retry.result["ticket_id"] == "T-102"
    assert server.side_effects["addFollowup"] == 1  # not written twice
    third = call_record(registry, "record_ticket_followup", args, actor=WRITER, approval=approval)
    assert third.ok and third.replayed and post_count(server) >= 2 and server.side_effects["addFollowup"] == 1


def test_keyed_write_with_lost_answer_is_retried_automatically(
    registry: Registry, server: TicketsServer
) -> None:
    """When the policy allows retrying timeouts and the key is forwarded, the runtime resends by
    itself; the API deduplicates the key, so the note is written once and the call succeeds."""
    if _write_attempts(registry, "record_ticket_followup") < 2:
        pytest.skip("the policy row does not allow retrying a timed-out write")
    approval = approve(registry, "preview_ticket_followup", NOTE)
    server.stall_next(1.2, after_commit=True)
    res = call_record(
        registry,
        "record_ticket_followup",
        dict(NOTE, action_id="act-auto"),
        actor=WRITER,
        approval=approval,
        timeout_ms=300,
    )
    assert res.ok and res.attempts == 2, res.to_json()
    assert post_count(server) == 2 and server.side_effects["addFollowup"] == 1


def test_write_timeout_without_forwarded_key_is_not_resent(registry: Registry, server: TicketsServer) -> None:
    args = {"ticket_id": "T-120"}
    approval = approve(registry, "preview_ticket_delete", args)
    server.stall_next(1.2, after_commit=True)
    res = call_record(
        registry,
        "record_ticket_delete",
        dict(args, action_id="del-t"),
        actor=ADMIN,
        approval=approval,
        timeout_ms=300,
    )
    server.state.stall.clear()
    assert res.error is not None and res.error.code == "result_unknown"
    assert res.error.result_known is False and res.error.retryable is False
    retry = call_record(
        registry, "record_ticket_delete", dict(args, action_id="del-t"), actor=ADMIN, approval=approval
    )
    assert (
        retry.error is not None and retry.error.code == "result_unknown" and retry.error.result_known is False
    )
    assert len(server.requests_for("DELETE")) == 1 and server.side_effects["deleteTicket"] == 1


def test_pending_receipt_after_crash(server: TicketsServer, tmp_path: Path) -> None:
    """A receipt left *pending* by a crashed process: the next attempt must not write blindly."""
    db = tmp_path / "r.sqlite3"
    store = SqliteReceiptStore(db)
    reg = Registry.from_dir(
        tickets_dir(),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=store,
    )
    approval = approve(reg, "preview_ticket_delete", {"ticket_id": "T-130"})
    # the crashed process got as far as writing its pending receipt, long ago
    assert store.begin("tickets/record_ticket_delete", "del-crash", approval.preview_id, "admin") is None
    store._conn.execute("UPDATE receipts SET updated_at = updated_at - 3600")
    res = call_record(
        reg,
        "record_ticket_delete",
        {"ticket_id": "T-130", "action_id": "del-crash"},
        actor=ADMIN,
        approval=approval,
    )
    assert res.error is not None and res.error.code == "result_unknown" and res.error.result_known is False
    assert len(server.requests_for("DELETE")) == 0
    # a fresh pending receipt (another worker is mid-call) is reported as in progress
    assert store.begin("tickets/record_ticket_delete", "del-busy", approval.preview_id, "admin") is None
    busy = call_record(
        reg,
        "record_ticket_delete",
        {"ticket_id": "T-130", "action_id": "del-busy"},
        actor=ADMIN,
        approval=Approval(approval.preview_id, approval_id="second approval"),
    )
    assert busy.error is not None and busy.error.code == "idempotency_in_progress" and busy.error.retryable
    reg.close()


def test_missing_credential_names_the_env_var(server: TicketsServer) -> None:
    reg = Registry.from_dir(tickets_dir(), base_url=server.base_url, credentials=StaticCredentials({}))
    res = reg.call("get_ticket", {"ticket_id": "T-102"}, actor=READER)
    assert res.error is not None and res.error.code == "missing_credential"
    assert "TICKETS_TOKEN" in res.error.message and res.error.details["secrets"] == ["TICKETS_TOKEN"]
    assert len(server.state.requests) == 0
    wrong = Registry.from_dir(
        tickets_dir(),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": "nope-secret-value"}),
    )
    denied = wrong.call("get_ticket", {"ticket_id": "T-102"}, actor=READER)
    assert denied.error is not None and denied.error.code == "upstream_unauthorized"
    assert "nope-secret-value" not in str(denied.to_json())


def test_audit_events_carry_no_argument_values_or_secrets(registry: Registry, server: TicketsServer) -> None:
    approval = approve(registry, "preview_ticket_followup", NOTE)
    call_record(
        registry, "record_ticket_followup", dict(NOTE, action_id="act-audit"), actor=WRITER, approval=approval
    )
    sink = registry.audit
    assert isinstance(sink, MemoryAuditSink)
    text = str([e.to_json() for e in sink.events])
    assert server.token not in text and NOTE["note"] not in text
    decisions = [(e.step, e.decision) for e in sink.events if e.tool == "record_ticket_followup"]
    assert ("approval", "allow") in decisions and ("idempotency", "new") in decisions
    assert all(
        e.fingerprint == approval.preview_id
        for e in sink.events
        if e.tool == "record_ticket_followup" and e.step != "find"
    )


@pytest.mark.anyio
async def test_async_call_path(server: TicketsServer, tmp_path: Path) -> None:
    reg = Registry.from_dir(
        tickets_dir(),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=SqliteReceiptStore(tmp_path / "a.sqlite3"),
    )
    try:
        res = await reg.acall("get_ticket", {"ticket_id": "T-102"}, actor=READER)
        assert res.ok and res.result is not None and res.result["id"] == "T-102"
        preview = await reg.acall("preview_ticket_followup", NOTE, actor=WRITER)
        assert preview.result is not None
        approval = Approval(preview.result["preview_id"])
        w1 = await acall_record(
            reg, "record_ticket_followup", dict(NOTE, action_id="a-async"), actor=WRITER, approval=approval
        )
        w2 = await acall_record(
            reg, "record_ticket_followup", dict(NOTE, action_id="a-async"), actor=WRITER, approval=approval
        )
        assert w1.ok and not w1.replayed and w2.ok and w2.replayed
        assert server.side_effects["addFollowup"] == 1
    finally:
        await reg.aclose()


def test_actor_type() -> None:
    assert Actor.of("a", ["x", "x"]).scopes == frozenset({"x"})


def test_registry_from_generated_python_package(server: TicketsServer) -> None:
    """The generated package's POLICY/MCP_TOOLS constants load the same registry as the JSON files."""
    import importlib.util
    import json

    init = tickets_dir() / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        "generated_tickets_pkg", init, submodule_search_locations=[str(tickets_dir())]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    import sys

    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    from_pkg = Registry.from_package(
        module, base_url=server.base_url, credentials=StaticCredentials({"TICKETS_TOKEN": server.token})
    )
    assert from_pkg.policy == json.loads((tickets_dir() / "policy.json").read_text())
    assert from_pkg.catalog() == sorted(
        json.loads((tickets_dir() / "mcp.json").read_text()), key=lambda t: t["name"]
    )
    res = from_pkg.call("get_ticket", {"ticket_id": "T-101"}, actor=READER)
    assert res.ok and res.result is not None and res.result["id"] == "T-101"
    from_pkg.close()
