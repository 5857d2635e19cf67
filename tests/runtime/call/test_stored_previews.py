"""The record tool executes the stored preview: attacks on that guarantee, end to end over loopback.

A record tool of an approval-gated write takes only ``preview_id`` and the idempotency key; the
runtime rebuilds the request from the arguments its preview stored and sends it only when its
fingerprint equals the ``preview_id`` (the request the approval covers). Attacked here:

- a forged, unknown, expired or rewritten preview (in SQLite, behind the runtime) sends nothing and
  leaves no receipt;
- a preview is executable only by the record tool of its own API and intent, and only by the actor
  that made it;
- an approval of preview P never authorises preview Q;
- the request on the wire is, byte for byte, the canonical request of the preview (its fingerprint
  recomputed from what the server received equals the preview_id);
- a retry with the same key replays, a new preview with the same key conflicts;
- the store down (Redis stopped) at preview time or at record time: a structured
  ``receipt_store_unavailable``, nothing sent, no receipt left pending;
- expiry on every backend (memory, SQLite, Redis), then previewing again revives the same id;
- a record row without the ``record`` member is refused at load; one with ``arguments: full`` takes every
  argument again.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import socket
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import ADMIN, GENERATED, WRITER, error_code, stored_preview, tickets_dir

from toolgen.policy.format import PolicyFormatError
from toolgen.runtime import (
    Actor,
    Approval,
    MemoryReceiptStore,
    ReceiptStore,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
    fingerprint,
    receipts_from_url,
)
from toolgen.runtime.clock import ManualClock
from toolgen.testing.tickets_server import TicketsServer

FOLLOWUP, PREVIEW = "record_ticket_followup", "preview_ticket_followup"
NOTE = {"ticket_id": "T-102", "note": "Called the customer back.", "visibility": "public"}
OTHER_NOTE = dict(NOTE, note="Refund issued.")


def _package(api: str = "tickets") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    folder = GENERATED / api
    if not (folder / "policy.json").is_file():
        pytest.skip(f"generated/{api} is not built")
    return (
        json.loads((folder / "policy.json").read_text(encoding="utf-8")),
        json.loads((folder / "mcp.json").read_text(encoding="utf-8")),
    )


def _registry(
    base_url: str,
    receipts: ReceiptStore,
    *,
    api: str = "tickets",
    ttl: int | None = None,
    rename: str | None = None,
    secrets: dict[str, str] | None = None,
) -> Registry:
    policy, catalog = _package(api)
    if rename is not None:
        policy["api"] = rename
    for row in policy["tools"]:
        if ttl is not None and row.get("record"):
            row["record"]["preview_ttl_s"] = ttl
    return Registry(
        policy,
        list(catalog),
        base_url=base_url,
        credentials=StaticCredentials(secrets or {}),
        receipts=receipts,
        cursor_key=b"k" * 32,
    )


@pytest.fixture
def tickets(server: TicketsServer, receipts_path: Path) -> Iterator[Registry]:
    reg = _registry(
        server.base_url, SqliteReceiptStore(receipts_path), secrets={"TICKETS_TOKEN": server.token}
    )
    yield reg
    reg.close()


def _sent_note(request: Any) -> Any:
    return json.loads(request.body)["note"]


def _nothing_happened(server: TicketsServer, reg: Registry, key: str) -> None:
    assert server.side_effects["addFollowup"] == 0 and not server.requests_for("POST", "/followups")
    assert reg.receipts.get(f"{reg.api}/{FOLLOWUP}", key) is None, "a refused record left a receipt"


# -- the record tool's shape ------------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["tickets", "github", "stripe"])
def test_approval_gated_records_take_only_the_preview_id_and_the_key(api: str) -> None:
    policy, catalog = _package(api)
    schemas = {t["name"]: t["inputSchema"] for t in catalog}
    records = [r for r in policy["tools"] if r["mode"] == "record"]
    assert records
    for row in records:
        options = row["record"]
        if row["approval"] == "required":
            assert options["arguments"] == "preview" and options["preview_ttl_s"] == 900, row["tool"]
        schema = schemas[row["tool"]]
        if options["arguments"] == "preview":
            key = (row["idempotency"] or {}).get("arg")
            expected = {"preview_id"} | ({key} if key else set())
            assert set(schema["properties"]) == expected and set(schema["required"]) == expected, row["tool"]
            assert schema["additionalProperties"] is False
            assert row["pair"] in schemas  # the preview tool it executes exists
        else:
            assert "preview_id" not in schema["properties"]
    for row in policy["tools"]:
        if row["mode"] != "record":
            assert row["record"] is None


# -- forged, unknown, expired, rewritten -----------------------------------------------------------------


def test_forged_and_unknown_preview_ids_send_nothing(tickets: Registry, server: TicketsServer) -> None:
    real = stored_preview(tickets, NOTE)
    forged = "sha256:" + hashlib.sha256(b"never previewed").hexdigest()
    for preview_id in (forged, real[:-1] + ("0" if real[-1] != "0" else "1"), "x", "sha256:" + "a" * 64):
        res = tickets.call(
            FOLLOWUP, {"preview_id": preview_id, "action_id": "forged"}, actor=WRITER, approval=preview_id
        )
        assert error_code(res) == "preview_not_found", res.to_json()
        assert res.error is not None and res.error.category == "validation"
        assert res.error.details["pointer"] == "/preview_id" and res.error.details["preview_tool"] == PREVIEW
    # the full arguments again are refused by the strict schema, naming what is not allowed
    res = tickets.call(FOLLOWUP, dict(NOTE, action_id="forged"), actor=WRITER, approval=real)
    assert error_code(res) == "invalid_arguments", res.to_json()
    res = tickets.call(
        FOLLOWUP,
        {"preview_id": real, "action_id": "forged", "note": "sneaked in"},
        actor=WRITER,
        approval=real,
    )
    assert (
        error_code(res) == "invalid_arguments"
        and res.error is not None
        and res.error.details["pointer"] == "/note"
    )
    _nothing_happened(server, tickets, "forged")


def test_a_preview_of_one_tool_cannot_be_recorded_by_another(
    server: TicketsServer, receipts_path: Path
) -> None:
    store = SqliteReceiptStore(receipts_path)
    tickets = _registry(server.base_url, store, secrets={"TICKETS_TOKEN": server.token})
    other_api = _registry(
        server.base_url, store, rename="tickets_copy", secrets={"TICKETS_TOKEN": server.token}
    )
    followup = stored_preview(tickets, NOTE, ADMIN)
    # the delete record tool of the same API, and the same tool of another API on the same store
    res = tickets.call(
        "record_ticket_delete",
        {"preview_id": followup, "action_id": "cross-1"},
        actor=ADMIN,
        approval=followup,
    )
    assert error_code(res) == "preview_not_found", res.to_json()
    res = other_api.call(
        FOLLOWUP, {"preview_id": followup, "action_id": "cross-2"}, actor=ADMIN, approval=followup
    )
    assert error_code(res) == "preview_not_found", res.to_json()
    # a delete preview cannot be executed by the follow-up record tool either
    delete = stored_preview(tickets, {"ticket_id": "T-102"}, ADMIN, "preview_ticket_delete")
    res = tickets.call(FOLLOWUP, {"preview_id": delete, "action_id": "cross-3"}, actor=ADMIN, approval=delete)
    assert error_code(res) == "preview_not_found", res.to_json()
    assert server.side_effects["deleteTicket"] == 0 and server.side_effects["addFollowup"] == 0
    assert not server.requests_for("POST", "/followups") and not server.requests_for("DELETE", "/tickets")
    # the right tool executes it
    ok = tickets.call(
        FOLLOWUP, {"preview_id": followup, "action_id": "cross-4"}, actor=ADMIN, approval=followup
    )
    assert ok.ok, ok.to_json()
    store.close()


def test_a_preview_is_bound_to_the_actor_that_made_it(tickets: Registry, server: TicketsServer) -> None:
    preview_id = stored_preview(tickets, NOTE, WRITER)
    colleague = Actor.of("colleague", WRITER.scopes)
    res = tickets.call(
        FOLLOWUP, {"preview_id": preview_id, "action_id": "mine"}, actor=colleague, approval=preview_id
    )
    assert error_code(res) == "preview_not_found", res.to_json()
    _nothing_happened(server, tickets, "mine")
    # an actor without the scope is refused before any store is read
    reader = Actor.of("writer", ["ticket:read"])  # the same id, not the scope
    res = tickets.call(
        FOLLOWUP, {"preview_id": preview_id, "action_id": "mine"}, actor=reader, approval=preview_id
    )
    assert error_code(res) == "permission_denied", res.to_json()
    # the colleague previews the same arguments: the same request, the same preview_id, now theirs
    assert stored_preview(tickets, NOTE, colleague) == preview_id
    ok = tickets.call(
        FOLLOWUP, {"preview_id": preview_id, "action_id": "mine"}, actor=colleague, approval=preview_id
    )
    assert ok.ok, ok.to_json()
    assert server.side_effects["addFollowup"] == 1


def test_an_approval_of_p_does_not_execute_q(tickets: Registry, server: TicketsServer) -> None:
    p = stored_preview(tickets, NOTE)
    q = stored_preview(tickets, OTHER_NOTE)
    assert p != q
    res = tickets.call(
        FOLLOWUP,
        {"preview_id": q, "action_id": "pq"},
        actor=WRITER,
        approval=Approval(p, approved_by="human"),
    )
    assert error_code(res) == "approval_mismatch", res.to_json()
    assert res.error is not None and res.error.details["request"]["body"]["note"] == OTHER_NOTE["note"]
    _nothing_happened(server, tickets, "pq")
    res = tickets.call(FOLLOWUP, {"preview_id": q, "action_id": "pq"}, actor=WRITER)
    assert error_code(res) == "approval_required", res.to_json()
    assert res.error is not None and res.error.details["preview_id"] == q
    ok = tickets.call(FOLLOWUP, {"preview_id": q, "action_id": "pq"}, actor=WRITER, approval=Approval(q))
    assert ok.ok and ok.request is not None and ok.request["body"]["note"] == OTHER_NOTE["note"], ok.to_json()
    assert [_sent_note(r) for r in server.requests_for("POST", "/followups")] == [OTHER_NOTE["note"]]


@pytest.mark.parametrize(
    "change", ["arguments", "invalid-json", "not-an-object", "undeclared", "intent", "wrong-type"]
)
def test_a_preview_rewritten_in_sqlite_is_refused(
    change: str, tickets: Registry, server: TicketsServer, receipts_path: Path
) -> None:
    preview_id = stored_preview(tickets, NOTE)
    values = {
        "arguments": ("arguments", json.dumps(OTHER_NOTE)),
        "invalid-json": ("arguments", "{not json"),
        "not-an-object": ("arguments", "[1, 2]"),
        "undeclared": ("arguments", json.dumps(dict(NOTE, author="someone else"))),
        "intent": ("intent", "ticket_delete"),
        "wrong-type": ("arguments", json.dumps(dict(NOTE, note=12))),
    }
    column, value = values[change]
    with sqlite3.connect(str(receipts_path)) as conn:  # another process changes the file
        assert (
            conn.execute(
                f"UPDATE previews SET {column} = ? WHERE preview_id = ?", (value, preview_id)
            ).rowcount
            == 1
        )
    res = tickets.call(
        FOLLOWUP,
        {"preview_id": preview_id, "action_id": "tampered"},
        actor=WRITER,
        approval=Approval(preview_id),
    )
    assert error_code(res) == "preview_mismatch", res.to_json()
    assert res.error is not None and res.error.details["pointer"] == "/preview_id"
    _nothing_happened(server, tickets, "tampered")
    # previewing again stores the previewed arguments again: the same id executes what was approved
    assert stored_preview(tickets, NOTE) == preview_id
    ok = tickets.call(
        FOLLOWUP,
        {"preview_id": preview_id, "action_id": "tampered"},
        actor=WRITER,
        approval=Approval(preview_id),
    )
    assert ok.ok, ok.to_json()
    assert [_sent_note(r) for r in server.requests_for("POST", "/followups")] == [NOTE["note"]]


# -- expiry on every backend ------------------------------------------------------------------------------


@pytest.fixture
def any_store(any_receipt_store: ReceiptStore) -> ReceiptStore:
    return any_receipt_store


def test_an_expired_preview_must_be_previewed_again(
    any_store: ReceiptStore, server: TicketsServer, clock: ManualClock
) -> None:
    reg = _registry(server.base_url, any_store, ttl=1, secrets={"TICKETS_TOKEN": server.token})
    assert reg.clock is clock  # the store's
    shown = reg.call(PREVIEW, NOTE, actor=WRITER)
    assert shown.ok and shown.result is not None and shown.result["expires_in_s"] == 1
    preview_id = shown.result["preview_id"]
    clock.advance(1.2)
    res = reg.call(
        FOLLOWUP, {"preview_id": preview_id, "action_id": "late"}, actor=WRITER, approval=preview_id
    )
    assert error_code(res) == "preview_expired", res.to_json()
    assert res.error is not None and res.error.details["pointer"] == "/preview_id"
    assert PREVIEW in res.error.next_step
    _nothing_happened(server, reg, "late")
    assert stored_preview(reg, NOTE) == preview_id  # the same request: the same id, executable again
    ok = reg.call(
        FOLLOWUP, {"preview_id": preview_id, "action_id": "late"}, actor=WRITER, approval=preview_id
    )
    assert ok.ok, ok.to_json()


# -- the wire request is the previewed request ------------------------------------------------------------


WIRE_CASES = [
    (
        "tickets",
        "preview_ticket_followup",
        {"ticket_id": "T-7", "note": 'Zoë called: "urgent" & more', "visibility": "internal"},
        "action_id",
    ),
    (
        "stripe",
        "preview_update_customer",
        {"customer": "cus_1", "name": "Ada & Co", "metadata": {"zeta": "1", "alpha": "two words"}},
        "idempotency_key",
    ),
    (
        "github",
        "preview_create_issue",
        {
            "owner": "octo-org",
            "repo": "hello.world",
            "title": "Crash ✓",
            "body": "Steps",
            "labels": ["bug", "p1"],
        },
        "action_id",
    ),
]
SECRETS = {
    "TICKETS_TOKEN": "tkt-live-secret",
    "STRIPE_SECRET_KEY": "sk_live_secret",
    "GITHUB_TOKEN": "ghp_secret",
}


@pytest.mark.parametrize("api,preview_tool,args,key", WIRE_CASES, ids=[c[0] for c in WIRE_CASES])
def test_the_wire_request_is_the_previewed_canonical_request(
    api: str, preview_tool: str, args: dict[str, Any], key: str, recorder: RecordingServer
) -> None:
    policy, _ = _package(api)
    prefix = str(policy.get("base_url") or "").split("://", 1)[-1]
    base = recorder.base_url + ("/" + prefix.split("/", 1)[1] if "/" in prefix else "").rstrip("/")
    reg = _registry(base, MemoryReceiptStore(), api=api, secrets=SECRETS)
    record = str(reg.row_json(preview_tool)["pair"])
    actor = Actor.of("wire", reg.row_json(record)["permission"])
    shown = reg.call(preview_tool, args, actor=actor)
    assert shown.ok and shown.result is not None, shown.to_json()
    preview_id = shown.result["preview_id"]
    res = reg.call(record, {"preview_id": preview_id, key: "wire-1"}, actor=actor, approval=preview_id)
    assert res.ok, res.to_json()
    assert res.request is not None and res.request["body"] == shown.result["request"]["body"]
    assert len(recorder.requests) == 1
    sent = recorder.last
    row = reg.row_json(record)
    idem = row["idempotency"]
    key_header: set[str] = set()
    if idem["in"] == "header":  # the key goes on the wire beside the canonical request, not inside it
        assert sent.header(idem["name"]) == "wire-1"
        # the preview shows where it goes, with a placeholder the record fills in
        assert shown.result["request"]["headers"][idem["name"]] == f"<{key} of {record}>"
        key_header = {idem["name"].lower()}
    # the canonical request, recomputed from the bytes the server received
    previewed = {k.lower() for k in shown.result["request"]["headers"]}
    secret_names = {str(a.get("name") or "Authorization").lower() for a in row["auth"]}
    headers = sorted(
        [k.lower(), v]
        for k, v in sent.headers.items()
        if k.lower() in previewed and k.lower() not in secret_names | {"content-type"} | key_header
    )
    ctype = sent.header("Content-Type")
    canonical = {
        "method": sent.method,
        "url": recorder.base_url + sent.path + ("?" + sent.raw_query if sent.raw_query else ""),
        "headers": headers + ([["content-type", ctype]] if ctype else []),
        "cookies": [],
        "body_sha256": hashlib.sha256(sent.body).hexdigest() if sent.body else None,
    }
    assert fingerprint(row["intent"], canonical) == preview_id, (canonical, shown.result["request"])


# -- idempotency ------------------------------------------------------------------------------------------


def test_a_retry_with_the_same_key_replays_and_another_preview_conflicts(
    tickets: Registry, server: TicketsServer
) -> None:
    p = stored_preview(tickets, NOTE)
    first = tickets.call(FOLLOWUP, {"preview_id": p, "action_id": "same"}, actor=WRITER, approval=p)
    again = tickets.call(FOLLOWUP, {"preview_id": p, "action_id": "same"}, actor=WRITER, approval=p)
    assert first.ok and not first.replayed and again.ok and again.replayed, (first.to_json(), again.to_json())
    assert again.result == first.result and again.request == first.request
    assert again.to_json()["request"]["body"]["note"] == NOTE["note"]
    q = stored_preview(tickets, OTHER_NOTE)
    conflict = tickets.call(FOLLOWUP, {"preview_id": q, "action_id": "same"}, actor=WRITER, approval=q)
    assert error_code(conflict) == "idempotency_conflict", conflict.to_json()
    assert server.side_effects["addFollowup"] == 1 and len(server.requests_for("POST", "/followups")) == 1


# -- the store down ---------------------------------------------------------------------------------------


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A redis-server of this test alone (it is stopped by the test)."""
    binary = shutil.which("redis-server")
    redis = pytest.importorskip("redis")
    if binary is None:
        pytest.skip("redis-server is not on PATH")
    port = _port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if client.ping():
                break
        except redis.exceptions.ConnectionError:
            time.sleep(0.02)
    client.close()
    try:
        yield url, proc
    finally:
        proc.terminate()
        proc.wait(10)


def test_redis_stopped_at_preview_or_at_record_sends_nothing(
    own_redis: tuple[str, subprocess.Popen[bytes]], server: TicketsServer
) -> None:
    url, proc = own_redis
    store = receipts_from_url(url + "?socket_timeout=0.5&socket_connect_timeout=0.5")
    reg = _registry(server.base_url, store, secrets={"TICKETS_TOKEN": server.token})
    stored = stored_preview(reg, NOTE)
    proc.terminate()
    proc.wait(10)
    # at record time: the stored preview cannot be read
    res = reg.call(FOLLOWUP, {"preview_id": stored, "action_id": "down-1"}, actor=WRITER, approval=stored)
    assert error_code(res) == "receipt_store_unavailable", res.to_json()
    assert res.error is not None and res.error.retryable is True and res.error.result_known is True
    # at preview time: no preview_id is handed out that no record could execute
    shown = reg.call(PREVIEW, OTHER_NOTE, actor=WRITER)
    assert error_code(shown) == "receipt_store_unavailable", shown.to_json()
    assert shown.result is None
    assert server.side_effects["addFollowup"] == 0 and not server.requests_for("POST", "/followups")
    reg.close()


# -- full-argument records --------------------------------------------------------------------------------


def test_full_argument_records_take_every_argument_and_a_row_without_record_is_refused(
    server: TicketsServer,
) -> None:
    """A record row with ``record.arguments: full`` takes every argument again (its approval still
    bound to the preview's fingerprint); a record row without ``record`` is refused at load, never
    read as either."""
    policy, catalog = _package()
    old_policy = copy.deepcopy(policy)
    missing = copy.deepcopy(policy)
    record_index = next(i for i, r in enumerate(missing["tools"]) if r["mode"] == "record")
    del missing["tools"][record_index]["record"]
    with pytest.raises(PolicyFormatError, match=f"/tools/{record_index}/record: required member"):
        Registry(missing, list(catalog))
    by_name = {t["name"]: t for t in copy.deepcopy(catalog)}
    for row in old_policy["tools"]:
        if row["mode"] == "record":
            row["record"] = {"arguments": "full", "preview_ttl_s": None}
            schema = copy.deepcopy(by_name[row["pair"]]["inputSchema"])
            key = row["idempotency"]["arg"]
            schema["properties"][key] = {"type": "string", "minLength": 1}
            schema["required"] = [*schema.get("required", []), key]
            by_name[row["tool"]]["inputSchema"] = schema
    reg = Registry(
        old_policy,
        list(by_name.values()),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=MemoryReceiptStore(),
    )
    shown = reg.call(PREVIEW, NOTE, actor=WRITER)
    assert shown.ok and shown.result is not None and "expires_in_s" not in shown.result  # nothing stored
    res = reg.call(FOLLOWUP, dict(NOTE, action_id="old-1"), actor=WRITER, approval=shown.result["preview_id"])
    assert res.ok and res.request is None, res.to_json()
    assert server.side_effects["addFollowup"] == 1


def test_the_sqlite_previews_table_shares_the_receipts_file(tickets: Registry, receipts_path: Path) -> None:
    preview_id = stored_preview(tickets, NOTE)
    with sqlite3.connect(str(receipts_path)) as conn:
        rows = conn.execute(
            "SELECT scope, actor, intent, expires_at - created_at FROM previews WHERE preview_id = ?",
            (preview_id,),
        ).fetchall()
    assert rows == [("tickets/record_ticket_followup", "writer", "ticket_followup", 900.0)]
    assert tickets_dir().is_dir()


def test_redis_expires_a_stored_preview_after_its_lifetime_once_more(
    redis_url: str, server: TicketsServer
) -> None:
    from toolgen.runtime import RedisReceiptStore

    store = receipts_from_url(f"{redis_url}?prefix=e-{uuid.uuid4().hex[:10]}:")
    assert isinstance(store, RedisReceiptStore)
    reg = _registry(server.base_url, store, ttl=30, secrets={"TICKETS_TOKEN": server.token})
    preview_id = stored_preview(reg, NOTE)
    previews = store.previews()
    name = previews.redis_key(f"tickets/{FOLLOWUP}", WRITER.id, preview_id)
    assert name.startswith(store.prefix + "p:") and store.client.exists(name)
    assert 58_000 < int(store.client.pttl(name)) <= 60_000  # expired after 30 s, kept 30 s more
    assert not store.client.keys(store.prefix + "r:*")
    reg.close()
