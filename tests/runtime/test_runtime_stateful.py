"""A stateful attack on the write path: preview → approve → record → retry with the same key →
restart (a new registry over the same SQLite receipts file) → fault injection, in any order.

Two configurations run against the fault-injecting loopback server: an API that deduplicates by
``Idempotency-Key`` (and a policy row that says so) and one that does not. After every step:

- the record tool executes the stored preview (it is given only the preview_id and the key): every
  request on the wire equals the request its preview showed (key and credentials aside), and a
  record result names that request;
- a record of a preview that expired, was changed in the store, or was never made sends nothing
  (``preview_expired``, ``preview_mismatch``, ``preview_not_found``), and previewing again makes the
  same preview_id executable again (also after a restart: previews live in the receipts file);
- an API that honours keys sees at most one side effect per key; an API that does not is never sent
  a write again automatically unless its previous answer proved nothing was done (429) — one
  request per record call otherwise — and so also sees at most one side effect per key;
- a key whose outcome became unknown (``result_known: false``) only becomes known again through a
  definitive 2xx or a replay, never through a later 409/429/4xx/3xx;
- no receipt is left ``pending`` once a call has returned;
- the credential never appears in a result, in the receipts file or in an audit event, even when
  the API echoes it in a success body;
- `Registry.call` never raises.

A third machine (`LifetimeMachine`) holds the lifetimes on each receipt store (memory, SQLite, Redis
on a redis-server of the test session), issued approvals, slow upstreams and pagination:

- an approval executes at most one write for its whole lifetime, whatever the store's retention
  (``purge`` of every completed receipt, Redis ``completed_ttl``);
- every call returns within its deadline plus `DEADLINE_SLACK_MS`, sync (`Registry.call`) and
  async (`Registry.acall`), against slow headers, a slow body, silence and dropped connections;
- a cursor always moves (never the one passed in, never one seen before) or the listing ends,
  also against an API that ignores the cursor parameter;
- nothing reads as ``pending`` past its lease, also the receipt of a process that died mid-call.
"""

from __future__ import annotations

import asyncio
import gc
import json
import random
import shutil
import sqlite3
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qsl

import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from tests.support.fault_server import Fault, FaultServer, Received
from tests.support.preview_compare import preview_mismatches
from tests.support.profiles import examples
from tests.support.runtime_env import GENERATED

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
    receipts_from_url,
)
from toolgen.runtime.clock import ManualClock
from toolgen.runtime.serving.registry import DEADLINE_SLACK_MS

TOKEN = "tkt-live-4f9a8b7c6d5e4f3a"
SECRETS = (TOKEN, f"Bearer {TOKEN}")
TOOL = "record_ticket_followup"
PREVIEW = "preview_ticket_followup"
FOLLOWUPS = r"^/v1/tickets/T-[0-9]+/followups$"
NOTES = ("Called the customer back.", "Refund issued.", "Escalated to tier two.")
KEYS = ("key-a", "key-b", "key-c", "key-d")
#: What the runtime itself answers to a record step it does not accept
REFUSALS = (
    "invalid_arguments",
    "preview_not_found",
    "preview_expired",
    "preview_mismatch",
    "approval_required",
    "approval_mismatch",
    "approval_used",
    "permission_denied",
)
WRITER = Actor.of("machine", ["ticket:read", "ticket:write"])
TIMEOUT_MS = 300

FAULTS: dict[str, Fault] = {
    "hang": Fault.hang(0.5),
    "hang_holding_key": Fault.hang(0.5, hold_key=True),
    "drop_after_write": Fault.drop(write=True),
    "drop_before_write": Fault.drop(write=False),
    "gateway_503": Fault.answer(503),
    "rate_limited": Fault.rate_limited("0"),
    "key_in_use": Fault.key_in_use(),
    "rejected_400": Fault.answer(400, {"error": {"type": "invalid_request_error", "message": "bad"}}),
    "html_201": Fault.html(status=201),
    "echo_201": Fault.echo_auth("id", "ticket_id", status=201),
    "redirect_303": Fault.redirect(303, "/v1/elsewhere", write=True),
}


def _followup(req: Received, n: int) -> dict[str, Any]:
    sent = req.json() if req.body else {}
    return {
        "id": f"F-{n}",
        "ticket_id": req.path.split("/")[3],
        "note": sent.get("note"),
        "visibility": sent.get("visibility"),
        "created_at": "2025-03-01T12:00:00Z",
    }


def _package(honoured: bool) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    policy = json.loads((GENERATED / "tickets" / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((GENERATED / "tickets" / "mcp.json").read_text(encoding="utf-8"))
    for row in policy["tools"]:
        idem = row.get("idempotency")
        if idem and idem.get("in") in ("header", "query", "body"):
            idem["honoured_by_api"] = honoured
        if row.get("retry"):
            row["retry"]["backoff_ms"] = 20
    return policy, catalog


class WritePathMachine(RuleBasedStateMachine):
    """One API, one receipts file, a few keys and notes; see the module docstring."""

    HONOURED: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="toolgen-machine-"))
        self.receipts_path = self.folder / "receipts.sqlite3"
        self.server = FaultServer(honours_keys=self.HONOURED).start()
        self.server.route("POST", FOLLOWUPS, status=201, body=_followup)
        self.policy, self.catalog = _package(self.HONOURED)
        self.audit = MemoryAuditSink()
        self.registry = self._open()
        self.previews: dict[int, tuple[str, dict[str, Any]]] = {}
        self.action_of: dict[str, int] = {}
        self.known: dict[str, bool] = {}

    # -- calls and checks ----------------------------------------------------------------------------

    def _open(self) -> Registry:
        self.audit = MemoryAuditSink()
        return Registry(
            self.policy,
            self.catalog,
            base_url=self.server.base_url + "/v1",
            credentials=StaticCredentials({"TICKETS_TOKEN": TOKEN}),
            receipts=SqliteReceiptStore(self.receipts_path),
            audit=self.audit,
            cursor_key=b"m" * 32,
        )

    def _call(self, tool: str, args: dict[str, Any], approval: Approval | None = None) -> CallResult:
        failure = ""
        try:
            result = self.registry.call(tool, args, actor=WRITER, approval=approval, timeout_ms=TIMEOUT_MS)
        except Exception as exc:  # noqa: BLE001 - the guarantee under test is that nothing is raised
            failure = f"Registry.call({tool!r}) raised {type(exc).__name__}: {str(exc)[:300]}"
        assert not failure, failure
        # a request written just before the call's deadline may reach the server after it returned
        assert self.server.wait_received(), "the server did not take in what it was sent"
        assert isinstance(result, CallResult)
        text = json.dumps(result.to_json(), ensure_ascii=False)
        for secret in SECRETS:
            assert secret not in text, f"the credential reached the result: {text[:300]}"
        return result

    def _args(self, note: int) -> dict[str, Any]:
        return {"ticket_id": "T-102", "note": NOTES[note], "visibility": "public"}

    def _preview(self, note: int) -> tuple[str, dict[str, Any]]:
        if note not in self.previews:
            before = len(self.server.requests)
            shown = self._call(PREVIEW, self._args(note))
            assert shown.ok and shown.result is not None, shown.to_json()
            assert len(self.server.requests) == before, "a preview sent a request"
            self.previews[note] = (shown.result["preview_id"], shown.result["request"])
        return self.previews[note]

    def _record(self, key: str, note: int) -> tuple[CallResult, list[Received]]:
        preview_id, shown = self._preview(note)
        approval = Approval(preview_id, approved_by="reviewer", approval_id=f"{key}/{note}")
        before = len(self.server.requests)
        result = self._call(TOOL, {"preview_id": preview_id, "action_id": key}, approval)
        sent = self.server.requests[before:]
        # a live, untouched, approved preview: whatever else happens, the record step itself is accepted
        assert result.error is None or result.error.code not in REFUSALS, result.to_json()
        if result.ok:
            assert result.request is not None and result.request["body"] == shown["body"], result.to_json()
            assert result.request["url"] == shown["url"]
        for request in sent:
            problems = preview_mismatches(
                shown,
                method=request.method,
                path=request.path,
                raw_query=request.raw_query,
                headers=request.headers,
                body=request.body,
                key_header="Idempotency-Key",
            )
            assert problems == [], problems
            assert request.header("Idempotency-Key") == key
        if not self.HONOURED:
            # no automatic resend: a request is only sent again after an answer proving the earlier
            # one did nothing (429); a timeout, a dropped connection or a 5xx leaves it possibly done
            earlier = [r.answered for r in sent[:-1]]
            assert all(status == 429 for status in earlier), (
                f"re-sent to an API that does not deduplicate, after answers {earlier}"
            )
        for k, count in self.server.side_effects_by_key().items():
            assert count <= 1, f"key {k!r} was written {count} times"
        return result, sent

    def _receipt(self, key: str) -> Any:
        return self.registry.receipts.get(f"{self.registry.api}/{TOOL}", key)

    def _observe(self, key: str, result: CallResult) -> None:
        """Result knowledge only grows: after an unknown outcome, only a success makes it known."""
        event(
            f"record: {'replayed' if result.replayed else 'ok'}"
            if result.ok
            else f"record: {result.error.code if result.error else '?'}"
        )
        if result.ok:
            self.known[key] = True
            return
        assert result.error is not None
        if self.known.get(key) is False:
            assert result.error.result_known is False, (
                f"key {key!r}: an unknown outcome became known without a 2xx or a replay: {result.to_json()}"
            )
        self.known[key] = result.error.result_known

    # -- rules ---------------------------------------------------------------------------------------

    @rule(note=st.integers(0, len(NOTES) - 1))
    def preview(self, note: int) -> None:
        self._preview(note)

    @rule(key=st.sampled_from(KEYS), note=st.integers(0, len(NOTES) - 1))
    def record(self, key: str, note: int) -> None:
        existing = self._receipt(key)
        if existing is not None and key in self.action_of and self.action_of[key] != note:
            result, sent = self._record(key, note)  # the key is taken by another action
            assert result.error is not None and result.error.code == "idempotency_conflict", result.to_json()
            assert sent == [], "a conflicting key reached the API"
            return
        if existing is None:
            self.action_of[key] = note  # a new action (or the earlier one is known not to have happened)
            self.known.pop(key, None)
        result, _ = self._record(key, self.action_of[key])
        self._observe(key, result)

    @rule(
        key=st.sampled_from(KEYS), note=st.integers(0, len(NOTES) - 1), kind=st.sampled_from(sorted(FAULTS))
    )
    def record_under_fault(self, key: str, note: int, kind: str) -> None:
        """The next request of this record call meets `kind` (later ones are answered normally)."""
        self.server.clear_scripts()
        self.server.script("POST", FOLLOWUPS, FAULTS[kind])
        self.record(key, note)
        self.server.clear_scripts()

    @precondition(lambda self: bool(self.action_of))
    @rule(data=st.data())
    def retry(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.action_of)))
        result, _ = self._record(key, self.action_of[key])
        self._observe(key, result)

    @precondition(lambda self: bool(self.previews))
    @rule(data=st.data(), change=st.sampled_from(["expire", "tamper", "forge"]))
    def record_a_broken_preview(self, data: st.DataObject, change: str) -> None:
        """The stored preview expired, was rewritten behind the runtime, or never existed: the record
        call is refused before anything is stored or sent; previewing again restores it."""
        note = data.draw(st.sampled_from(sorted(self.previews)))
        preview_id, _ = self.previews[note]
        with sqlite3.connect(str(self.receipts_path)) as conn:
            if change == "expire":
                conn.execute(
                    "UPDATE previews SET expires_at = created_at - 1 WHERE preview_id = ?", (preview_id,)
                )
            elif change == "tamper":
                other = json.dumps(self._args((note + 1) % len(NOTES)))
                conn.execute("UPDATE previews SET arguments = ? WHERE preview_id = ?", (other, preview_id))
        target = "sha256:" + "0" * 64 if change == "forge" else preview_id
        before = len(self.server.requests)
        result = self._call(
            TOOL,
            {"preview_id": target, "action_id": "probe"},
            Approval(target, approval_id=f"probe/{note}/{change}"),
        )
        expected = {"expire": "preview_expired", "tamper": "preview_mismatch", "forge": "preview_not_found"}[
            change
        ]
        assert result.error is not None and result.error.code == expected, result.to_json()
        assert len(self.server.requests) == before, "a broken preview reached the API"
        assert self._receipt("probe") is None, "a refused record left a receipt"
        event(f"broken preview: {change}")
        del self.previews[note]  # the next record of this note previews again (same preview_id)

    @rule()
    def restart(self) -> None:
        self.registry.close()
        self.registry = self._open()

    @rule(kind=st.sampled_from(sorted(FAULTS)))
    def inject_fault(self, kind: str) -> None:
        self.server.script("POST", FOLLOWUPS, FAULTS[kind])

    @rule()
    def clear_faults(self) -> None:
        self.server.clear_scripts()

    # -- invariants ----------------------------------------------------------------------------------

    @invariant()
    def no_receipt_is_pending(self) -> None:
        with sqlite3.connect(str(self.receipts_path)) as conn:
            pending = conn.execute("SELECT scope, key FROM receipts WHERE state = 'pending'").fetchall()
        assert pending == [], f"receipts left pending after the call returned: {pending}"

    @invariant()
    def no_secret_is_stored_or_audited(self) -> None:
        stored = b"".join(p.read_bytes() for p in self.folder.glob("receipts.sqlite3*"))
        for secret in SECRETS:
            assert secret.encode() not in stored, "the credential was written to the receipts file"
        for audited in self.audit.events:
            text = json.dumps(audited.to_json(), ensure_ascii=False, default=str)
            for secret in SECRETS:
                assert secret not in text, f"the credential reached the audit log: {text[:300]}"

    def teardown(self) -> None:
        try:
            self.registry.close()
        finally:
            self.server.stop()
            shutil.rmtree(self.folder, ignore_errors=True)


class HonouredKeysMachine(WritePathMachine):
    HONOURED = True


class UnhonouredKeysMachine(WritePathMachine):
    HONOURED = False


MACHINE_SETTINGS = settings(max_examples=examples(25), stateful_step_count=12, deadline=None)

TestHonouredKeys = HonouredKeysMachine.TestCase
TestHonouredKeys.settings = MACHINE_SETTINGS
TestUnhonouredKeys = UnhonouredKeysMachine.TestCase
TestUnhonouredKeys.settings = MACHINE_SETTINGS


# -- lifetimes: approvals, deadlines, cursors, leases, on every store ---------------------------------

SLOW_FAULTS: dict[str, Fault] = {
    "slow_headers": Fault.trickle(0.04, part="headers"),
    "slow_body": Fault.trickle(0.04, part="body"),
    "silent": Fault.hang(2.0),
    "drop_after_write": Fault.drop(write=True),
}
LIFETIME_TIMEOUT_MS = 100
#: Seconds Redis keeps a completed receipt in `RedisLifetimes` (``completed_ttl``), and how long the
#: store's retention waits for Redis to expire them: short, so the forgetting costs little waiting.
REDIS_COMPLETED_TTL_S = 0.05
REDIS_EXPIRY_WAIT_S = 0.07
LISTED = [
    {
        "id": f"T-{100 + n}",
        "subject": f"ticket {n}",
        "status": "open",
        "priority": "normal",
        "created_at": "2025-03-01T12:00:00Z",
    }
    for n in range(7)
]
READ_PATH = r"^/v1/tickets/T-[0-9]+$"
LIST_PATH = r"^/v1/tickets$"


class LifetimeMachine(RuleBasedStateMachine):
    """Issued approvals, slow upstreams, listings and dead processes on one receipt store; see the
    module docstring."""

    STORE: ClassVar[str] = "memory"
    redis_url: ClassVar[str | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="toolgen-lifetimes-"))
        self.server = FaultServer(honours_keys=True).start()
        self.server.route("POST", FOLLOWUPS, status=201, body=_followup)
        self.server.route("GET", READ_PATH, body={"id": "T-102", "subject": "x", "status": "open"})
        self.server.route("GET", LIST_PATH, body=self._listing)
        self.clock = ManualClock()  # leases run out when `wait` moves it
        self.store = self._store()
        policy, catalog = _package(True)
        self.registry = Registry(
            policy,
            catalog,
            base_url=self.server.base_url + "/v1",
            credentials=StaticCredentials({"TICKETS_TOKEN": TOKEN}),
            receipts=self.store,
            audit=MemoryAuditSink(),
            cursor_key=b"m" * 32,
            approvals="issued",
            retry_random=random.Random(0),
        )
        self.loop = asyncio.new_event_loop()
        self.approvals: list[tuple[str, str]] = []  # (approval_id, preview_id)
        self.writes: Counter[str] = Counter()  # side effects per approval_id
        self.keys: set[str] = set()
        self.ignores_cursor = False
        self.cursor: str | None = None
        self.seen: set[str] = set()
        self.pages = 0

    def _store(self) -> ReceiptStore:
        if self.STORE == "memory":
            return MemoryReceiptStore(clock=self.clock)
        if self.STORE == "sqlite":
            return SqliteReceiptStore(self.folder / "receipts.sqlite3", clock=self.clock)
        assert self.redis_url is not None
        return receipts_from_url(
            f"{self.redis_url}?prefix=lt-{uuid.uuid4().hex[:10]}:&completed_ttl={REDIS_COMPLETED_TTL_S}",
            clock=self.clock,
        )

    def _listing(self, req: Received, n: int) -> dict[str, Any]:
        query = dict(parse_qsl(req.raw_query))
        limit = int(query.get("limit", "3"))
        start = 0
        after = query.get("starting_after")
        if after is not None and not self.ignores_cursor:
            start = [i["id"] for i in LISTED].index(after) + 1
        page = LISTED[start : start + limit]
        return {"data": page, "has_more": True if self.ignores_cursor else start + limit < len(LISTED)}

    def _timed(
        self,
        tool: str,
        args: dict[str, Any],
        approval: Approval | None,
        mode: str,
        timeout_ms: int = LIFETIME_TIMEOUT_MS,
    ) -> CallResult:
        """The call (`mode` sync or async), which must return within its deadline plus the bound. The
        garbage collector is off during the call (it runs after): a full collection of this test
        process's heap, which earlier tests of the same worker fill, can pause every thread for longer
        than the bound, a stall of the process that no deadline of the runtime can shorten."""
        gc.disable()
        started = time.monotonic()
        failure = ""
        try:
            if mode == "sync":
                result = self.registry.call(
                    tool, args, actor=WRITER, approval=approval, timeout_ms=timeout_ms
                )
            else:
                result = self.loop.run_until_complete(
                    self.registry.acall(tool, args, actor=WRITER, approval=approval, timeout_ms=timeout_ms)
                )
        except Exception as exc:  # noqa: BLE001 - the guarantee under test is that nothing is raised
            failure = f"{tool} raised {type(exc).__name__}: {exc}"
        finally:
            gc.enable()
        assert not failure, failure
        elapsed_ms = (time.monotonic() - started) * 1000
        assert self.server.wait_received(), "the server did not take in what it was sent"
        details = result.error.details if result.error is not None else {}
        deadline_ms = int(details.get("deadline_ms") or timeout_ms * 3)
        assert elapsed_ms <= deadline_ms + DEADLINE_SLACK_MS, (
            f"{mode} {tool} returned after {elapsed_ms:.0f} ms, deadline {deadline_ms} ms: {result.to_json()}"
        )
        return result

    # -- rules ---------------------------------------------------------------------------------------

    @rule(note=st.integers(0, len(NOTES) - 1))
    def issue(self, note: int) -> None:
        shown = self.registry.call(
            PREVIEW, {"ticket_id": "T-102", "note": NOTES[note], "visibility": "public"}, actor=WRITER
        )
        assert shown.ok and shown.result is not None, shown.to_json()
        pid = str(shown.result["preview_id"])
        approval_id = self.registry.issue_approval(
            TOOL, pid, approved_by="reviewer", actor=WRITER.id, ttl_s=3600
        )
        self.approvals.append((approval_id, pid))

    @precondition(lambda self: bool(self.approvals))
    @rule(
        data=st.data(),
        key=st.sampled_from([*KEYS, "fresh", "fresh"]),
        mode=st.sampled_from(["sync", "async"]),
        fault=st.sampled_from(["none", "none", "none", *sorted(SLOW_FAULTS)]),
        forget_first=st.booleans(),
    )
    def record(self, data: st.DataObject, key: str, mode: str, fault: str, forget_first: bool) -> None:
        """Record with an issued approval (after the store forgot its completed receipts, when
        `forget_first`), possibly against a slow or failing upstream."""
        if forget_first:
            self.forget_completed_receipts()
        approval_id, pid = data.draw(st.sampled_from(self.approvals))
        if key == "fresh":  # a key never used: only the approval's own record can refuse it
            key = f"fresh-{uuid.uuid4().hex[:8]}"
        self.server.clear_scripts()
        if fault != "none":
            self.server.script("POST", FOLLOWUPS, SLOW_FAULTS[fault])
        before = self.server.total_side_effects
        result = self._timed(
            TOOL, {"preview_id": pid, "action_id": key}, Approval(pid, approval_id=approval_id), mode
        )
        self.server.clear_scripts()
        self.writes[approval_id] += self.server.total_side_effects - before
        self.keys.add(key)
        event(f"record {fault}: {'ok' if result.ok else result.error.code if result.error else '?'}")

    @rule()
    def forget_completed_receipts(self) -> None:
        """The store's retention: every completed receipt goes (Redis also expires them itself)."""
        if self.STORE == "redis":
            time.sleep(REDIS_EXPIRY_WAIT_S)  # past REDIS_COMPLETED_TTL_S: Redis itself dropped them
        purge = getattr(self.store, "purge", None)
        if purge is not None:
            purge(0.0)

    @rule(mode=st.sampled_from(["sync", "async"]), fault=st.sampled_from(sorted(SLOW_FAULTS)))
    def read_under_fault(self, mode: str, fault: str) -> None:
        self.server.clear_scripts()
        self.server.script("GET", READ_PATH, *[SLOW_FAULTS[fault]] * 3)
        self._timed("get_ticket", {"ticket_id": "T-102"}, None, mode)
        self.server.clear_scripts()

    @rule(ignores=st.booleans())
    def start_listing(self, ignores: bool) -> None:
        self.ignores_cursor = ignores
        result = self._timed("list_tickets", {"page_size": 3}, None, "sync", timeout_ms=3000)
        assert result.ok and result.result is not None, result.to_json()
        self.cursor, self.seen, self.pages = result.result["next_cursor"], set(), 1

    @precondition(lambda self: self.cursor is not None)
    @rule(mode=st.sampled_from(["sync", "async"]))
    def next_page(self, mode: str) -> None:
        passed = self.cursor
        assert passed is not None
        result = self._timed("list_tickets", {"page_size": 3, "cursor": passed}, None, mode, timeout_ms=3000)
        assert result.ok and result.result is not None, result.to_json()
        self.seen.add(passed)
        nxt = result.result["next_cursor"]
        assert nxt != passed, "next_cursor is the cursor passed in"
        assert nxt is None or nxt not in self.seen, "a cursor came back"
        self.pages += 1
        assert self.pages <= len(LISTED) // 3 + 1, f"the listing did not end after {self.pages} pages"
        if nxt is None and self.ignores_cursor:
            assert result.result.get("_stalled", {}).get("code") == "cursor_did_not_move", result.result
        self.cursor = nxt

    @rule(lease_ms=st.integers(50, 400))
    def a_process_dies_mid_write(self, lease_ms: int) -> None:
        """A worker began a write (its receipt is pending, with its lease) and died."""
        key = f"dead-{uuid.uuid4().hex[:8]}"
        assert (
            self.store.begin(f"{self.registry.api}/{TOOL}", key, "sha256:" + "d" * 64, "ghost", lease_ms)
            is None
        )
        self.keys.add(key)

    @rule(ms=st.integers(50, 300))
    def wait(self, ms: int) -> None:
        self.clock.advance(ms / 1000)  # what leases see; nothing sleeps

    # -- invariants ----------------------------------------------------------------------------------

    @invariant()
    def an_approval_executes_at_most_one_write(self) -> None:
        over = {aid[:8]: n for aid, n in self.writes.items() if n > 1}
        assert not over, f"approvals that executed more than one write: {over}"

    @invariant()
    def nothing_pending_outlives_its_lease(self) -> None:
        now = self.clock.time()
        for key in sorted(self.keys):
            receipt = self.store.get(f"{self.registry.api}/{TOOL}", key)
            if receipt is not None and receipt.state == "pending":
                age_ms = (now - receipt.updated_at) * 1000
                assert receipt.lease_ms > 0 and age_ms < receipt.lease_ms, (
                    f"{key}: pending for {age_ms:.0f} ms, lease {receipt.lease_ms} ms"
                )

    def teardown(self) -> None:
        try:
            self.registry.close()
            self.loop.run_until_complete(self.registry.aclose())
            self.loop.close()
            self.store.close()
        finally:
            self.server.stop()
            shutil.rmtree(self.folder, ignore_errors=True)


class MemoryLifetimes(LifetimeMachine):
    STORE = "memory"


class SqliteLifetimes(LifetimeMachine):
    STORE = "sqlite"


class RedisLifetimes(LifetimeMachine):
    STORE = "redis"


@pytest.fixture
def machine_redis(redis_url: str) -> Iterator[None]:
    """Points `RedisLifetimes` at the session's redis-server (conftest `redis_url`)."""
    RedisLifetimes.redis_url = redis_url
    yield
    RedisLifetimes.redis_url = None


LIFETIME_SETTINGS = settings(max_examples=examples(10), stateful_step_count=12, deadline=None)

# long: each spends about ten seconds mostly waiting (timeouts, leases), started first (tests/conftest.py)
TestMemoryLifetimes = pytest.mark.long(MemoryLifetimes.TestCase)
TestMemoryLifetimes.settings = LIFETIME_SETTINGS
TestSqliteLifetimes = pytest.mark.long(SqliteLifetimes.TestCase)
TestSqliteLifetimes.settings = LIFETIME_SETTINGS
TestRedisLifetimes = pytest.mark.long(pytest.mark.usefixtures("machine_redis")(RedisLifetimes.TestCase))
TestRedisLifetimes.settings = LIFETIME_SETTINGS
