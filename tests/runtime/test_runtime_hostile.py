"""A hostile API (and a careless caller) against the runtime's promises, over real HTTP on loopback.

Each test reproduces one attack and asserts the promise it attacks:

- a credential echoed in a JSON body in UTF-16/32 never reaches the result or the audit log;
- an API's error body is bounded (about 2 KB of JSON) and carries no value of a redacted field;
- a body that trickles in byte by byte cannot stretch a call past its deadline (sync and async);
- a blank or padded idempotency key sent as a header is ``invalid_arguments``: nothing is sent and
  no receipt is written;
- shaping a multi-megabyte item to the size budget takes one pass, not minutes;
- a cancelled ``acall`` settles its receipt as ``unknown`` when the cancellation is delivered;
- a failing audit sink never turns into a raise, a write sent unaudited or a ``pending`` receipt;
- NaN and Infinity in a JSON body are not a result, and ``toolgen call`` prints valid JSON;
- a base URL with ``user:password@`` is refused when the registry is built.

The attacks on pagination (Link targets, cursors, cut pages, MCP list pages) are in
`test_runtime_hostile_paging.py`; the registries both build are `tests.support.hostile_registries`'.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.support.fault_server import Fault, FaultServer
from tests.support.hostile_registries import (
    CURSOR_KEY,
    READER,
    SECRETS,
    row_of,
    tickets_registry,
)
from tests.support.hostile_server import HostileServer, RawRequest, response, trickle
from tests.support.recording_server import RecordingServer
from tests.support.records import acall_record, call_record
from tests.support.runtime_env import load_package, tickets_dir

from toolgen.runtime import Actor, Approval, AuditEvent, MemoryAuditSink, Registry, StaticCredentials
from toolgen.runtime.call.shaping import compact_size, shrink

TOOLGEN = shutil.which("toolgen") or str(Path(sys.executable).parent / "toolgen")
WRITER = Actor.of("writer", ["ticket:read", "ticket:write"])

FOLLOWUP = "record_ticket_followup"
FOLLOWUP_SCOPE = f"tickets/{FOLLOWUP}"
FOLLOWUPS = r"^/v1/tickets/T-[0-9]+/followups$"
FOLLOWUP_ARGS: dict[str, Any] = {
    "ticket_id": "T-102",
    "note": "Called the customer back.",
    "visibility": "public",
}
FOLLOWUP_CREATED: dict[str, Any] = {
    "id": "F-1",
    "ticket_id": "T-102",
    "visibility": "public",
    "created_at": "2024-01-01T00:00:00Z",
}

#: The most of an API's error body a structured error may carry (bytes of compact JSON), and the
#: allowance for the rest of the error's details (status, operation).
PROBLEM_BYTES = 2000
DETAILS_ALLOWANCE = 200
#: Scheduling allowance for timing bounds on a loaded two-core machine (seconds).
SCHEDULING_SLACK_S = 0.25


def one_attempt(row: dict[str, Any]) -> None:
    """No retries: the call's deadline is its per-attempt timeout."""
    if row.get("retry"):
        row["retry"]["max_attempts"] = 1


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(text: str) -> Any:
    """`text` parsed as RFC 8259 JSON: NaN, Infinity and -Infinity are refused."""
    return json.loads(text, parse_constant=_refuse_constant)


def audit_text(sink: MemoryAuditSink) -> str:
    return json.dumps([e.to_json() for e in sink.events], default=str)


class _Expired(Exception):
    """Raised by the SIGALRM handler of `time_limit`."""


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Fail the block after `seconds` (SIGALRM; where it is unavailable the block runs unguarded)."""
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise _Expired

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    except _Expired:
        pytest.fail(f"did not finish within {seconds} s", pytrace=False)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --------------------------------------------------------------------------------------------------
# 4-5. bodies: other encodings, error bodies


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_secret_echoed_in_a_non_utf8_json_body_never_reaches_the_result(
    encoding: str, hostile: HostileServer
) -> None:
    secret = SECRETS["TICKETS_TOKEN"]

    def api(req: RawRequest) -> bytes:
        body = {"id": "T-1", "subject": "debug: " + (req.header("Authorization") or ""), "status": "open"}
        return response(200, json.dumps(body).encode(encoding), {"Content-Type": "application/json"})

    hostile.handler = api
    audit = MemoryAuditSink()
    reg = tickets_registry(hostile.base_url, audit=audit)
    res = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
    assert hostile.requests[0].header("Authorization") == f"Bearer {secret}"
    assert res.ok and res.warnings and res.result is not None, res.to_json()  # a 200 that cannot be read
    assert set(res.result) == {"status", "_unreadable_body"}, res.to_json()
    shown = json.dumps(res.to_json())
    assert secret not in shown and secret not in shown.replace("\\u0000", ""), shown
    assert secret not in audit_text(audit)


def test_error_body_is_bounded_and_carries_no_redacted_value(recorder: RecordingServer) -> None:
    phone, ssn = "+1-555-0100", "123-45-6789"
    body = {
        "type": "about:blank",
        "title": "Unprocessable",
        "status": 422,
        "errors": [{"ticket": {"requester": {"phone": phone, "ssn": ssn}}, "blob": "A" * 200}] * 20000,
    }
    recorder.reply("GET", r"^/v1/tickets/", status=422, body=body, content_type="application/problem+json")
    reg = tickets_registry(recorder.base_url)
    assert "requester.phone" in reg.row_json("get_ticket")["output"]["redact"]

    res = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.code == "upstream_rejected"
    assert compact_size(res.error.details) <= PROBLEM_BYTES + DETAILS_ALLOWANCE, compact_size(
        res.error.details
    )
    assert res.error.details["problem"]["title"] == "Unprocessable"
    out = json.dumps(res.to_json())
    assert phone not in out and ssn not in out


def test_small_error_body_echoing_a_redacted_field_carries_no_redacted_value(
    recorder: RecordingServer,
) -> None:
    phone = "+1-555-0100"
    body = {
        "title": "Unprocessable",
        "status": 422,
        "errors": [{"field": "requester", "requester": {"phone": phone, "name": "Ada"}}],
    }
    recorder.reply("GET", r"^/v1/tickets/", status=422, body=body, content_type="application/problem+json")
    reg = tickets_registry(recorder.base_url)
    res = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
    assert not res.ok and res.error is not None and res.error.code == "upstream_rejected", res.to_json()
    assert phone not in json.dumps(res.to_json())


# --------------------------------------------------------------------------------------------------
# 6. deadlines against a body that trickles in

TRICKLE_TIMEOUT_MS = 600
TRICKLE_DELAY_S = 0.3


@pytest.fixture
def trickling(hostile: HostileServer) -> HostileServer:
    """An API whose get_ticket body arrives one byte every 0.3 s (about 20 s in all)."""
    body = json.dumps({"id": "T-1", "subject": "s" * 40, "status": "open"}).encode()
    hostile.handler = lambda req: trickle(200, body, TRICKLE_DELAY_S, {"Content-Type": "application/json"})
    return hostile


def test_trickling_body_cannot_stretch_a_sync_call_past_its_deadline(trickling: HostileServer) -> None:
    reg = tickets_registry(trickling.base_url, tweak=one_attempt)
    started = time.monotonic()
    res = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER, timeout_ms=TRICKLE_TIMEOUT_MS)
    elapsed = time.monotonic() - started
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.code == "tool_timeout", res.to_json()
    # the deadline (one attempt: the timeout) plus at most one socket read that began before it
    assert elapsed <= 2 * TRICKLE_TIMEOUT_MS / 1000 + SCHEDULING_SLACK_S, f"took {elapsed:.2f} s"
    assert len(trickling.requests) == 1


@pytest.mark.anyio
async def test_trickling_body_cannot_stretch_an_async_call_past_its_deadline(
    trickling: HostileServer,
) -> None:
    reg = tickets_registry(trickling.base_url, tweak=one_attempt)
    try:
        started = time.monotonic()
        res = await reg.acall("get_ticket", {"ticket_id": "T-1"}, actor=READER, timeout_ms=TRICKLE_TIMEOUT_MS)
        elapsed = time.monotonic() - started
    finally:
        await reg.aclose()
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.code == "tool_timeout", res.to_json()
    assert elapsed <= 1.2 * TRICKLE_TIMEOUT_MS / 1000 + SCHEDULING_SLACK_S, f"took {elapsed:.2f} s"


# --------------------------------------------------------------------------------------------------
# 7. idempotency keys that HTTP would rewrite


@pytest.mark.parametrize("key", ["   ", " k1", "k1 ", "\tk1"])
def test_blank_or_padded_header_key_is_refused_before_anything_happens(
    key: str, recorder: RecordingServer
) -> None:
    recorder.reply("POST", FOLLOWUPS, status=201, body=FOLLOWUP_CREATED)
    reg = tickets_registry(recorder.base_url)
    assert reg.row_json(FOLLOWUP)["idempotency"]["in"] == "header"
    preview = reg.call("preview_ticket_followup", FOLLOWUP_ARGS, actor=WRITER)
    assert preview.ok and preview.result is not None, preview.to_json()
    approval = Approval(preview.result["preview_id"])

    res = call_record(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id=key), actor=WRITER, approval=approval)
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.code == "invalid_arguments", res.to_json()
    assert res.error.details.get("pointer") == "/action_id"
    assert recorder.requests == []
    assert reg.receipts.get(FOLLOWUP_SCOPE, key) is None

    # nothing was spent: the same approval sends the write once under a proper key
    ok = call_record(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="k1"), actor=WRITER, approval=approval)
    assert ok.ok, ok.to_json()
    assert [r.header("Idempotency-Key") for r in recorder.requests] == ["k1"]


# --------------------------------------------------------------------------------------------------
# 8. shaping cost


def test_shrinking_a_five_megabyte_item_is_one_pass() -> None:
    item: dict[str, Any] = {
        "id": "T-big",
        "status": "open",
        "description": "d" * 500_000,
        "comments": [{"id": n, "body": "y" * 100, "tags": ["a", "b"]} for n in range(25_000)],
        "labels": ["x" * 60 for _ in range(25_000)],
    }
    size = compact_size(item)
    assert size > 5_000_000
    budget = 4000
    with time_limit(20):  # the old algorithm re-serialised the whole item for every string it cut
        out, changed = shrink(item, budget)
    assert changed
    assert compact_size(out) <= budget
    assert out["id"] == "T-big" and out["status"] == "open"
    assert isinstance(out["comments"], list) and isinstance(out["labels"], list)
    assert len(item["comments"]) == 25_000 and len(item["description"]) == 500_000  # the input is untouched


# --------------------------------------------------------------------------------------------------
# 9. cancellation


@pytest.mark.anyio
async def test_cancelled_acall_leaves_its_receipt_unknown_at_once() -> None:
    key = "cancel-1"
    with FaultServer(honours_keys=True) as fault:
        fault.route("POST", FOLLOWUPS, status=201, body=FOLLOWUP_CREATED)
        fault.script("POST", FOLLOWUPS, Fault.hang(5.0))
        reg = tickets_registry(fault.base_url)
        try:
            preview = await reg.acall("preview_ticket_followup", FOLLOWUP_ARGS, actor=WRITER)
            assert preview.ok and preview.result is not None, preview.to_json()
            approval = Approval(preview.result["preview_id"])
            task = asyncio.ensure_future(
                reg.acall(
                    FOLLOWUP,
                    {"preview_id": approval.preview_id, "action_id": key},
                    actor=WRITER,
                    approval=approval,
                )
            )
            for _ in range(500):  # until the API holds the request (at most 5 s)
                if fault.requests_for(key=key) or task.done():
                    break
                await asyncio.sleep(0.01)
            assert fault.requests_for(key=key), "the write never reached the API"
            receipt = reg.receipts.get(FOLLOWUP_SCOPE, key)
            assert receipt is not None and receipt.state == "pending"

            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # the task object is still referenced: the receipt was settled by the cancellation itself
            receipt = reg.receipts.get(FOLLOWUP_SCOPE, key)
            assert receipt is not None and receipt.state == "unknown", receipt

            again = await acall_record(
                reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id=key), actor=WRITER, approval=approval
            )
            assert again.error is None or again.error.code != "idempotency_in_progress", again.to_json()
            assert again.ok, again.to_json()  # the API deduplicates the key: re-sent, answered by its replay
            assert fault.side_effects_for(key) == 1
        finally:
            await reg.aclose()


# --------------------------------------------------------------------------------------------------
# 10. a failing audit sink


class FailingSink(MemoryAuditSink):
    """An audit sink that raises (disk full) for the events of one call-path step (``*``: all)."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: str | None = None

    def emit(self, event: AuditEvent) -> None:
        if self.failing is not None and self.failing in (event.step, "*"):
            raise OSError(errno.ENOSPC, "No space left on device")
        super().emit(event)


BEFORE_SENDING = ["*", "find", "validate", "permission", "approval", "timeout", "idempotency"]
AFTER_SENDING = ["http", "output", "result"]


@pytest.mark.parametrize("step", BEFORE_SENDING + AFTER_SENDING)
def test_failing_audit_sink_never_raises_sends_unaudited_or_leaves_a_pending_receipt(step: str) -> None:
    key = f"audit-{step}"
    with FaultServer(honours_keys=True) as fault:
        fault.route("POST", FOLLOWUPS, status=201, body=FOLLOWUP_CREATED)
        sink = FailingSink()
        reg = tickets_registry(fault.base_url, audit=sink)
        preview = reg.call("preview_ticket_followup", FOLLOWUP_ARGS, actor=WRITER)
        assert preview.ok and preview.result is not None, preview.to_json()
        approval = Approval(preview.result["preview_id"])

        sink.failing = step
        res = call_record(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id=key), actor=WRITER, approval=approval)
        receipt = reg.receipts.get(FOLLOWUP_SCOPE, key)
        assert receipt is None or receipt.state != "pending", receipt
        if step in AFTER_SENDING:
            assert res.ok, res.to_json()  # the write happened: its real outcome is returned
            assert len(fault.requests) == 1
            assert receipt is not None and receipt.state == "completed"
            return
        assert not res.ok and res.error is not None, res.to_json()
        assert res.error.code == "internal_error", res.to_json()
        assert fault.requests == [], "a write was sent although its audit failed"
        assert receipt is None  # released: the key is free again

        sink.failing = None
        retry = call_record(
            reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id=key), actor=WRITER, approval=approval
        )
        assert retry.ok, retry.to_json()
        assert fault.side_effects_for(key) == 1


def test_call_stopped_by_a_failing_audit_sink_leaves_its_approval_unspent() -> None:
    with FaultServer(honours_keys=True) as fault:
        fault.route("POST", FOLLOWUPS, status=201, body=FOLLOWUP_CREATED)
        sink = FailingSink()
        reg = tickets_registry(fault.base_url, audit=sink)
        preview = reg.call("preview_ticket_followup", FOLLOWUP_ARGS, actor=WRITER)
        assert preview.ok and preview.result is not None, preview.to_json()
        approval = Approval(preview.result["preview_id"])
        sink.failing = "idempotency"
        stopped = call_record(
            reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="audit-a"), actor=WRITER, approval=approval
        )
        assert stopped.error is not None and stopped.error.code == "internal_error", stopped.to_json()
        assert fault.requests == []
        sink.failing = None
        fresh = call_record(
            reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="audit-b"), actor=WRITER, approval=approval
        )
        assert fresh.ok, fresh.to_json()


# --------------------------------------------------------------------------------------------------
# 11. NaN and Infinity

NOT_JSON_NUMBERS = [
    pytest.param("NaN", id="NaN"),
    pytest.param("Infinity", id="Infinity"),
    pytest.param("-Infinity", id="-Infinity"),
    pytest.param("1e999", id="1e999"),
]


def not_json_body(number: str) -> bytes:
    return (
        '{"id":"T-1","subject":"s","status":"open","priority":"low","followup_count":' + number + "}"
    ).encode()


@pytest.mark.parametrize("number", NOT_JSON_NUMBERS)
def test_nan_or_infinity_in_a_body_is_not_a_result(number: str, recorder: RecordingServer) -> None:
    recorder.reply("GET", r"^/v1/tickets/", body=not_json_body(number))
    reg = tickets_registry(recorder.base_url)
    res = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
    strict_json(json.dumps(res.to_json()))
    assert res.ok and res.warnings and res.result is not None, res.to_json()  # a 200 that is not JSON
    assert set(res.result) == {"status", "_unreadable_body"}, res.to_json()


@pytest.mark.parametrize("number", [NOT_JSON_NUMBERS[0], NOT_JSON_NUMBERS[3]])
def test_toolgen_call_prints_valid_json_for_a_nan_body(
    number: str, recorder: RecordingServer, tmp_path: Path
) -> None:
    recorder.reply("GET", r"^/v1/tickets/", body=not_json_body(number))
    policy, _ = load_package("tickets")
    names = [str(a["secret"]) for a in row_of(policy, "get_ticket")["auth"]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLGEN_")}
    env.update({name: SECRETS["TICKETS_TOKEN"] for name in names})
    proc = subprocess.run(
        [
            TOOLGEN,
            "call",
            str(tickets_dir()),
            "get_ticket",
            "--args",
            json.dumps({"ticket_id": "T-1"}),
            "--base-url",
            recorder.base_url + "/v1",
            "--receipts",
            "memory://",
            "--scopes",
            "ticket:read",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    assert recorder.requests and recorder.last.header("Authorization") == f"Bearer {SECRETS['TICKETS_TOKEN']}"
    out = strict_json(proc.stdout)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr[-500:])
    assert out["ok"] is True and out["warnings"] and "_unreadable_body" in out["result"], out
    assert SECRETS["TICKETS_TOKEN"] not in proc.stdout + proc.stderr


# --------------------------------------------------------------------------------------------------
# 13. credentials in the base URL


@pytest.mark.parametrize(
    "base_url",
    [
        "http://gw:gw_PASSWORD@127.0.0.1:9/v1",
        "http://gw_PASSWORD@127.0.0.1:9/v1",
        "https://gw:gw_PASSWORD@api.example.com/v1",
    ],
)
def test_base_url_with_userinfo_is_refused_at_construction(base_url: str) -> None:
    with pytest.raises(ValueError) as refused:
        Registry.from_dir(
            tickets_dir(), base_url=base_url, credentials=StaticCredentials(SECRETS), cursor_key=CURSOR_KEY
        )
    assert "gw_PASSWORD" not in str(refused.value)
    policy, catalog = load_package("tickets")
    policy["base_url"] = base_url
    with pytest.raises(ValueError):
        Registry(policy, list(catalog), credentials=StaticCredentials(SECRETS), cursor_key=CURSOR_KEY)
