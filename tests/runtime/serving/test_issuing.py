"""Issued approvals: in ``approvals="issued"`` mode the runtime accepts only an approval it issued.

Over ``toolgen serve --http`` a caller holding a write's scopes must not be able to approve its own
preview. Attacked here, end to end against the loopback tickets API, on every store backend
(memory, SQLite, Redis):

- self-approval with a bare ``preview_id`` (the client's word) is refused, nothing sent, no receipt;
- a forged or guessed ``approval_id`` (including the preview_id itself) is refused;
- an approval issued for preview P never authorises preview Q, nor another record tool, nor
  another actor that previewed the same request;
- an expired approval is refused; a valid one works once, a second key gets ``approval_used``;
- the approver in the audit log is the one the runtime recorded, never the caller's word;
- the store never holds a usable approval_id;
- ``toolgen approve`` shows the request (credentials redacted), asks, and prints an id that another
  registry on the same SQLite file accepts; over MCP Streamable HTTP with the real SDK client;
- ``approvals="client"`` (the default) keeps today's behaviour.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.profiles import examples
from tests.support.runtime_env import ADMIN, WRITER, error_code, load_package, stored_preview, tickets_dir

from toolgen.cli import main
from toolgen.runtime import (
    Actor,
    Approval,
    CallResult,
    MemoryAuditSink,
    MemoryReceiptStore,
    ReceiptStore,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
    ToolError,
)
from toolgen.runtime.clock import ManualClock
from toolgen.runtime.stores.approvals import approval_key
from toolgen.testing.tickets_server import TicketsServer

FOLLOWUP, PREVIEW = "record_ticket_followup", "preview_ticket_followup"
DELETE, PREVIEW_DELETE = "record_ticket_delete", "preview_ticket_delete"
NOTE = {"ticket_id": "T-102", "note": "Called the customer back.", "visibility": "public"}
OTHER_NOTE = dict(NOTE, note="Refund issued.")
MALLORY = Actor.of("mallory", ["ticket:read", "ticket:write"])


def _package() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return load_package("tickets")


def _registry(server: TicketsServer, receipts: ReceiptStore, approvals: str = "issued") -> Registry:
    policy, catalog = _package()
    return Registry(
        policy,
        list(catalog),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=receipts,
        audit=MemoryAuditSink(),
        cursor_key=b"k" * 32,
        approvals=approvals,
    )


@pytest.fixture
def store(any_receipt_store: ReceiptStore) -> ReceiptStore:
    return any_receipt_store


@pytest.fixture
def issued(server: TicketsServer, store: ReceiptStore) -> Iterator[Registry]:
    reg = _registry(server, store)
    yield reg
    reg.close()


def _record(
    reg: Registry,
    preview_id: str,
    approval: Approval | str | None,
    key: str = "a-1",
    actor: Actor = WRITER,
    tool: str = FOLLOWUP,
) -> CallResult:
    return reg.call(tool, {"preview_id": preview_id, "action_id": key}, actor=actor, approval=approval)


def _nothing_sent(server: TicketsServer, reg: Registry, *keys: str) -> None:
    assert server.side_effects["addFollowup"] == 0 and not server.requests_for("POST", "/followups")
    assert server.side_effects["deleteTicket"] == 0
    for key in keys:
        assert reg.receipts.get(f"{reg.api}/{FOLLOWUP}", key) is None, "a refused record left a receipt"


# -- the attacks ------------------------------------------------------------------------------------


def test_self_approval_with_the_clients_word_is_refused(issued: Registry, server: TicketsServer) -> None:
    pid = stored_preview(issued, NOTE)
    for forged in (
        pid,
        Approval(pid),
        Approval(pid, approved_by="writer"),
        Approval(pid, approved_by="writer", approval_id=pid),
    ):
        refused = _record(issued, pid, forged)
        assert error_code(refused) == "approval_required", refused.to_json()
        assert refused.error is not None and "toolgen approve" in (refused.error.next_step or "")
    assert error_code(_record(issued, pid, None)) == "approval_required"
    _nothing_sent(server, issued, "a-1")


def test_forged_or_guessed_approval_ids_are_refused(issued: Registry, server: TicketsServer) -> None:
    pid = stored_preview(issued, NOTE)
    real = issued.issue_approval(FOLLOWUP, pid, approved_by="alice", actor=WRITER.id)
    guesses = [
        secrets.token_urlsafe(32),
        real[:-1] + ("A" if real[-1] != "A" else "B"),
        real.upper(),
        approval_key(real),
        " " + real,
        "x",
    ]  # the stored key is not an approval either
    for n, guess in enumerate(guesses):
        refused = _record(issued, pid, Approval(pid, approval_id=guess), key=f"g-{n}")
        assert error_code(refused) == "approval_required", (guess, refused.to_json())
    _nothing_sent(server, issued, *[f"g-{n}" for n in range(len(guesses))])
    assert _record(issued, pid, Approval(pid, approval_id=real)).ok  # the real one still works


def test_an_approval_of_p_never_authorises_q(issued: Registry, server: TicketsServer) -> None:
    p, q = stored_preview(issued, NOTE), stored_preview(issued, OTHER_NOTE)
    approval_id = issued.issue_approval(FOLLOWUP, p, approved_by="alice", actor=WRITER.id)
    # the client claims the approval is for Q: the runtime knows it was issued for P
    refused = _record(issued, q, Approval(q, approval_id=approval_id))
    assert error_code(refused) == "approval_mismatch", refused.to_json()
    # the client tells the truth (P) but records Q: the approval does not cover this request
    assert (
        error_code(_record(issued, q, Approval(p, approval_id=approval_id), key="a-2")) == "approval_mismatch"
    )
    _nothing_sent(server, issued, "a-1", "a-2")
    ok = _record(issued, p, Approval(p, approval_id=approval_id), key="a-3")
    assert ok.ok and server.side_effects["addFollowup"] == 1


def test_an_approval_is_bound_to_its_record_tool_and_its_actor(
    issued: Registry, server: TicketsServer
) -> None:
    deletion = stored_preview(issued, {"ticket_id": "T-102"}, actor=ADMIN, tool=PREVIEW_DELETE)
    for_delete = issued.issue_approval(DELETE, deletion, approved_by="alice", actor=ADMIN.id)
    followup = stored_preview(issued, NOTE, actor=ADMIN)
    refused = _record(issued, followup, Approval(followup, approval_id=for_delete), actor=ADMIN)
    assert error_code(refused) == "approval_required", refused.to_json()
    # another actor previews the very same request (same preview_id) and presents the writer's approval
    pid = stored_preview(issued, NOTE)
    assert stored_preview(issued, NOTE, actor=MALLORY) == pid
    writers = issued.issue_approval(FOLLOWUP, pid, approved_by="alice", actor=WRITER.id)
    stolen = _record(issued, pid, Approval(pid, approval_id=writers), actor=MALLORY, key="m-1")
    assert error_code(stolen) == "approval_required", stolen.to_json()
    _nothing_sent(server, issued, "a-1", "m-1")
    assert issued.receipts.get(f"{issued.api}/{DELETE}", "a-1") is None


def test_an_expired_approval_is_refused(issued: Registry, server: TicketsServer, clock: ManualClock) -> None:
    pid = stored_preview(issued, NOTE)
    approval_id = issued.issue_approval(FOLLOWUP, pid, approved_by="alice", actor=WRITER.id, ttl_s=60)
    clock.advance(61)
    refused = _record(issued, pid, Approval(pid, approval_id=approval_id))
    assert error_code(refused) == "approval_required" and refused.error is not None
    assert refused.error.details.get("reason") == "expired", refused.to_json()
    _nothing_sent(server, issued, "a-1")


def test_an_issued_approval_works_once_and_records_the_issued_approver(
    issued: Registry, server: TicketsServer
) -> None:
    pid = stored_preview(issued, NOTE)
    approval_id = issued.issue_approval(FOLLOWUP, pid, approved_by="alice", actor=WRITER.id)
    claim = Approval(pid, approved_by="mallory", approval_id=approval_id)  # the caller's word is ignored
    first = _record(issued, pid, claim)
    assert first.ok, first.to_json()
    again = _record(issued, pid, claim)  # a retry of the same action replays
    assert again.ok and again.replayed
    second = _record(issued, pid, claim, key="a-2")
    assert error_code(second) == "approval_used", second.to_json()
    assert server.side_effects["addFollowup"] == 1
    approvers = [
        e.detail.get("approved_by")
        for e in issued.audit.events  # type: ignore[attr-defined]
        if e.step == "approval" and e.decision == "allow"
    ]
    assert approvers == ["alice"]


def test_issuing_needs_a_real_preview_of_an_approval_gated_record(issued: Registry) -> None:
    pid = stored_preview(issued, NOTE)
    with pytest.raises(ToolError) as unknown:
        issued.issue_approval(FOLLOWUP, "sha256:" + "0" * 64, approved_by="alice", actor=WRITER.id)
    assert unknown.value.code == "preview_not_found"
    with pytest.raises(ToolError) as other_actor:  # the preview was made by the writer
        issued.issue_approval(FOLLOWUP, pid, approved_by="alice", actor=MALLORY.id)
    assert other_actor.value.code == "preview_not_found"
    for tool in ("get_ticket", PREVIEW, "no_such_tool"):
        with pytest.raises(ToolError) as not_gated:
            issued.issue_approval(tool, pid, approved_by="alice", actor=WRITER.id)
        assert not_gated.value.code == "unknown_tool"
    for by, ttl in (
        ("", 60.0),
        ("  ", 60.0),
        ("x" * 256, 60.0),
        ("alice", 0.0),
        ("alice", -1.0),
        ("alice", 1e9),
    ):
        with pytest.raises(ValueError):
            issued.issue_approval(FOLLOWUP, pid, approved_by=by, actor=WRITER.id, ttl_s=ttl)
    assert issued.approvable_request(FOLLOWUP, pid, WRITER.id)["method"] == "POST"


def test_approvable_request_redacts_credentials(server: TicketsServer, tmp_path: Path) -> None:
    reg = _registry(server, SqliteReceiptStore(tmp_path / "r.sqlite3"))
    try:
        pid = stored_preview(reg, NOTE)
        shown = reg.approvable_request(FOLLOWUP, pid, WRITER.id)
        assert shown["method"] == "POST" and shown["url"].startswith(server.base_url)
        assert server.token not in json.dumps(shown)
    finally:
        reg.close()


def test_the_store_never_holds_a_usable_approval_id(server: TicketsServer, tmp_path: Path) -> None:
    path = tmp_path / "receipts.sqlite3"
    reg = _registry(server, SqliteReceiptStore(path))
    try:
        pid = stored_preview(reg, NOTE)
        approval_id = reg.issue_approval(FOLLOWUP, pid, approved_by="alice", actor=WRITER.id)
        with sqlite3.connect(path) as conn:
            dumped = "\n".join(conn.iterdump())
        assert approval_id not in dumped and "alice" in dumped
    finally:
        reg.close()


def test_client_mode_is_unchanged(server: TicketsServer) -> None:
    reg = _registry(server, MemoryReceiptStore(), approvals="client")
    try:
        assert reg.approvals == "client"
        pid = stored_preview(reg, NOTE)
        assert _record(reg, pid, pid).ok
        assert error_code(_record(reg, pid, pid, key="a-2")) == "approval_used"
    finally:
        reg.close()
    policy, catalog = _package()
    assert Registry(policy, list(catalog)).approvals == "client"
    with pytest.raises(ValueError, match="approvals"):
        Registry(policy, list(catalog), approvals="trusted")


# -- toolgen approve --------------------------------------------------------------------------------


def _approve(path: Path, server: TicketsServer, pid: str, *extra: str, stdin: str | None = None) -> Any:
    return CliRunner().invoke(
        main,
        [
            "approve",
            str(tickets_dir()),
            FOLLOWUP,
            pid,
            "--actor",
            WRITER.id,
            "--by",
            "alice",
            "--receipts",
            str(path),
            "--base-url",
            server.base_url,
            *extra,
        ],
        input=stdin,
    )


def test_cli_approve_issues_an_id_the_server_accepts_through_a_shared_sqlite_file(
    server: TicketsServer, tmp_path: Path
) -> None:
    path = tmp_path / "receipts.sqlite3"
    reg = _registry(server, SqliteReceiptStore(path))
    try:
        pid = stored_preview(reg, NOTE)
        declined = _approve(path, server, pid, stdin="n\n")
        assert declined.exit_code == 1 and "not approved" in declined.output
        assert '"method": "POST"' in declined.output and server.token not in declined.output
        out = _approve(path, server, pid, stdin="y\n")
        assert out.exit_code == 0, out.output
        approval_id = out.output.rsplit("approval_id: ", 1)[1].split()[0]
        ok = _record(reg, pid, Approval(pid, approval_id=approval_id))
        assert ok.ok, ok.to_json()
        as_json = _approve(path, server, pid, "--yes", "--format", "json")
        assert as_json.exit_code == 0, as_json.output
        issued = json.loads(as_json.stdout.strip().splitlines()[-1])
        assert issued["preview_id"] == pid and issued["request"]["method"] == "POST"
        assert _record(reg, pid, Approval(pid, approval_id=issued["approval_id"]), key="a-2").ok
        assert server.side_effects["addFollowup"] == 2
    finally:
        reg.close()


def test_cli_approve_bad_input(server: TicketsServer, tmp_path: Path) -> None:
    path = tmp_path / "receipts.sqlite3"
    unknown = _approve(path, server, "sha256:" + "0" * 64, "--yes")
    assert unknown.exit_code == 1 and "No preview" in unknown.output
    not_gated = CliRunner().invoke(
        main,
        [
            "approve",
            str(tickets_dir()),
            "get_ticket",
            "x",
            "--actor",
            "w",
            "--by",
            "alice",
            "--receipts",
            str(path),
            "--yes",
        ],
    )
    assert not_gated.exit_code == 2 and "not an approval-gated record tool" in not_gated.output
    missing_by = CliRunner().invoke(main, ["approve", str(tickets_dir()), FOLLOWUP, "x", "--actor", "w"])
    assert missing_by.exit_code == 2


def test_cli_serve_rejects_an_unknown_approvals_mode(tmp_path: Path) -> None:
    out = CliRunner().invoke(
        main,
        ["serve", str(tickets_dir()), "--approvals", "anyone", "--receipts", str(tmp_path / "r.sqlite3")],
    )
    assert out.exit_code == 2


# -- over MCP Streamable HTTP, real SDK client ------------------------------------------------------


@pytest.mark.anyio
async def test_http_self_approval_refused_issued_approval_accepted(
    server: TicketsServer, tmp_path: Path
) -> None:
    pytest.importorskip("mcp")
    pytest.importorskip("httpx2")
    from tests.runtime.test_runtime_identity import connect, error_of
    from tests.support.http_serving import http_server
    from tests.support.token_files import TOKENS, write_token_file

    from toolgen.runtime.serving.mcp_http import load_token_file

    verifier = load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]
    path = tmp_path / "receipts.sqlite3"
    reg = _registry(server, SqliteReceiptStore(path))
    token = TOKENS["writer"][0]
    async with http_server(reg, verifier=verifier) as url, connect(url, token) as client:
        shown = await client.call_tool(PREVIEW, NOTE)
        pid = shown.structured_content["preview_id"]
        record = {"preview_id": pid, "action_id": "h-1"}
        for meta in (
            {"toolgen/approval": pid},
            {"toolgen/approval": {"preview_id": pid, "approved_by": "writer"}},
            {"toolgen/approval": {"preview_id": pid, "approval_id": secrets.token_urlsafe(32)}},
        ):
            refused = await client.call_tool(FOLLOWUP, record, meta=meta)
            assert error_of(refused)["code"] == "approval_required"
        assert server.side_effects["addFollowup"] == 0
        assert reg.receipts.get(f"{reg.api}/{FOLLOWUP}", "h-1") is None
        out = _approve(path, server, pid, "--yes")  # a human, in another process's shoes, on the same file
        assert out.exit_code == 0, out.output
        approval_id = out.output.rsplit("approval_id: ", 1)[1].split()[0]
        meta = {"toolgen/approval": {"preview_id": pid, "approval_id": approval_id}}
        ok = await client.call_tool(FOLLOWUP, record, meta=meta)
        assert ok.is_error is False, ok
        used = await client.call_tool(FOLLOWUP, dict(record, action_id="h-2"), meta=meta)
        assert error_of(used)["code"] == "approval_used"
    assert server.side_effects["addFollowup"] == 1


@pytest.mark.anyio
async def test_cli_serve_http_issues_by_default_and_accepts_what_toolgen_approve_issued(
    server: TicketsServer, tmp_path: Path
) -> None:
    """Two processes on one SQLite file: `toolgen serve --http` (no --approvals) and `toolgen approve`."""
    pytest.importorskip("mcp")
    pytest.importorskip("httpx2")
    import signal
    import subprocess
    from functools import partial

    import anyio
    from tests.runtime.test_runtime_identity import TOOLGEN, connect, error_of, serve_process, served_url
    from tests.support.token_files import TOKENS, write_token_file

    tokens = write_token_file(tmp_path / "tokens.yaml")
    proc = serve_process(tmp_path, server, "--http", "127.0.0.1:0", "--tokens", str(tokens))
    try:
        url, printed = await served_url(proc)
        assert not [line for line in printed if "--approvals client" in line]
        async with connect(url, TOKENS["writer"][0]) as client:
            assert "toolgen approve" in (client.instructions or "")
            pid = (await client.call_tool(PREVIEW, NOTE)).structured_content["preview_id"]
            record = {"preview_id": pid, "action_id": "p-1"}
            refused = await client.call_tool(FOLLOWUP, record, meta={"toolgen/approval": pid})
            assert error_of(refused)["code"] == "approval_required"
            assert "toolgen approve" in error_of(refused)["next_step"]
            assert server.side_effects["addFollowup"] == 0
            approve = await anyio.to_thread.run_sync(
                partial(
                    subprocess.run,
                    [
                        TOOLGEN,
                        "approve",
                        str(tickets_dir()),
                        FOLLOWUP,
                        pid,
                        "--actor",
                        "writer",
                        "--by",
                        "alice",
                        "--receipts",
                        str(tmp_path / "r.sqlite3"),
                        "--base-url",
                        server.base_url,
                        "--yes",
                        "--format",
                        "json",
                    ],
                    capture_output=True,
                    text=True,
                    cwd=tmp_path,
                    timeout=60,
                    check=False,
                )
            )
            assert approve.returncode == 0, approve.stderr
            assert server.token not in approve.stdout + approve.stderr and "[redacted]" in approve.stderr
            approval_id = json.loads(approve.stdout)["approval_id"]
            meta = {"toolgen/approval": {"preview_id": pid, "approval_id": approval_id}}
            ok = await client.call_tool(FOLLOWUP, record, meta=meta)
            assert ok.is_error is False, ok
        async with connect(url, TOKENS["admin"][0]) as other:  # another token cannot reuse the writer's
            assert (await other.call_tool(PREVIEW, NOTE)).structured_content["preview_id"] == pid
            stolen = await other.call_tool(FOLLOWUP, dict(record, action_id="p-2"), meta=meta)
            assert error_of(stolen)["code"] == "approval_required"
        assert server.side_effects["addFollowup"] == 1
        proc.send_signal(signal.SIGTERM)
        _, err = await anyio.to_thread.run_sync(partial(proc.communicate, timeout=30))
        assert proc.returncode == 0, err
        assert approval_id not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_concurrent_records_spend_an_issued_approval_once(server: TicketsServer, tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "receipts.sqlite3"
    regs = [_registry(server, SqliteReceiptStore(path)) for _ in range(4)]  # four workers, one file
    try:
        pid = stored_preview(regs[0], NOTE)
        approval_id = regs[0].issue_approval(FOLLOWUP, pid, approved_by="alice", actor=WRITER.id)
        with ThreadPoolExecutor(8) as pool:
            results = list(
                pool.map(
                    lambda n: _record(regs[n % 4], pid, Approval(pid, approval_id=approval_id), key=f"c-{n}"),
                    range(8),
                )
            )
        assert sum(r.ok for r in results) == 1, [r.to_json() for r in results]
        assert {error_code(r) for r in results if not r.ok} == {"approval_used"}
        assert server.side_effects["addFollowup"] == 1
    finally:
        for reg in regs:
            reg.close()


def test_no_unissued_approval_text_ever_approves(tickets_server: TicketsServer) -> None:
    """Any approval a client can put in _meta (texts of up to 255 characters) but did not get issued."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    reg = _registry(tickets_server, MemoryReceiptStore())
    pid = stored_preview(reg, dict(NOTE, note=f"property {secrets.token_hex(4)}"))
    reg.issue_approval(FOLLOWUP, pid, approved_by="alice", actor=WRITER.id)  # one real approval exists
    before = tickets_server.side_effects["addFollowup"]

    @settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        approval_id=st.one_of(
            st.text(min_size=1, max_size=255),
            st.just(pid),
            st.from_regex(r"[A-Za-z0-9_-]{43}", fullmatch=True),
        ),
        by=st.one_of(st.none(), st.text(max_size=20)),
    )
    def attack(approval_id: str, by: str | None) -> None:
        result = _record(
            reg, pid, Approval(pid, approved_by=by, approval_id=approval_id), key="k-" + secrets.token_hex(6)
        )
        assert error_code(result) == "approval_required", result.to_json()

    try:
        attack()
        assert tickets_server.side_effects["addFollowup"] == before
    finally:
        reg.close()


def test_issuing_is_audited_first_and_a_failing_sink_issues_nothing(
    server: TicketsServer, tmp_path: Path
) -> None:
    class BrokenSink:
        def emit(self, event: Any) -> None:
            if event.step == "approval":
                raise OSError("disk full")

    reg = _registry(server, SqliteReceiptStore(tmp_path / "r.sqlite3"))
    try:
        pid = stored_preview(reg, NOTE)
        approval_id = reg.issue_approval(FOLLOWUP, pid, approved_by="alice", actor=WRITER.id)
        issued_events = [e for e in reg.audit.events if e.decision == "issue"]  # type: ignore[attr-defined]
        assert [(e.tool, e.actor, e.fingerprint, e.detail["approved_by"]) for e in issued_events] == [
            (FOLLOWUP, WRITER.id, pid, "alice")
        ]
        assert approval_id not in json.dumps([e.detail for e in reg.audit.events])  # type: ignore[attr-defined]
        reg.audit = BrokenSink()
        with pytest.raises(ToolError) as failed:
            reg.issue_approval(FOLLOWUP, pid, approved_by="alice", actor=WRITER.id)
        assert failed.value.code == "internal_error"
        with sqlite3.connect(tmp_path / "r.sqlite3") as conn:
            stored = conn.execute("SELECT COUNT(*) FROM previews WHERE scope LIKE '%#approval'").fetchone()[0]
        assert stored == 1  # only the first approval exists
    finally:
        reg.close()


def test_cli_approve_appends_to_the_audit_log(server: TicketsServer, tmp_path: Path) -> None:
    path, log = tmp_path / "receipts.sqlite3", tmp_path / "audit.jsonl"
    reg = _registry(server, SqliteReceiptStore(path))
    try:
        pid = stored_preview(reg, NOTE)
        out = _approve(path, server, pid, "--yes", "--audit-log", str(log))
        assert out.exit_code == 0, out.output
        events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        assert [(e["step"], e["decision"], e["detail"]["approved_by"]) for e in events] == [
            ("approval", "issue", "alice")
        ]
    finally:
        reg.close()
