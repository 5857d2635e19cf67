"""Trust guarantees of the runtime under hostile input and faults, attacked end to end over real HTTP
on loopback (the request guarantees are in `test_runtime_trust.py`). Each test names the guarantee it
attacks:

- `Registry.call` never raises, whatever Python values it is given, and refuses what cannot be sent
  before any receipt exists or any byte leaves;
- hostile response bodies (deep nesting, invalid JSON, HTML) give structured results and never
  leave a receipt ``pending``;
- pagination always makes progress, whatever the size budget;
- the in-progress window of a ``pending`` receipt is its owner's, not the next caller's;
- over MCP, a warn-mode output-schema violation reaches the client as a tool error, not a crash;
- smaller findings: gateway errors on deduplicated writes are retryable, 3xx on a write is an
  unknown outcome, a dropped read is not a "timeout", an approval is not spent by a call that sent
  nothing, ``1.0`` is sent as ``1``, bracketed form keys and undeclared nested members are refused,
  the receipts file is private.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.fault_server import Fault, FaultServer
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.records import call_record
from tests.support.runtime_env import mcp_json
from tests.support.trust_registry import (
    FOLLOWUP,
    FOLLOWUP_ARGS,
    FOLLOWUPS,
    TICKET_PATH,
    actor_for,
    approve,
    call,
    code,
    fast_retries,
    make_registry,
    preview,
    receipt_state,
    scope_rows,
    tickets_routes,
    wire_differences,
)

from toolgen.runtime import (
    Actor,
    Approval,
    CallResult,
    MemoryReceiptStore,
    ReceiptStore,
    Registry,
    SqliteReceiptStore,
    receipts_from_url,
)
from toolgen.runtime.clock import ManualClock

# --------------------------------------------------------------------------------------------------
# Registry.call never raises


class Opaque:
    """A Python object with no JSON form."""

    def __repr__(self) -> str:
        return "Opaque()"


def nest(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def nest_dict(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


Hostile = tuple[str, str, Callable[[], dict[Any, Any]], str | None]

HOSTILE: list[Hostile] = [
    ("non-ascii-key", "tickets", lambda: {"action_id": "clé-ключ-1"}, "/action_id"),
    ("crlf-key", "tickets", lambda: {"action_id": "k1\r\nX-Injected: yes"}, "/action_id"),
    ("lf-key", "tickets", lambda: {"action_id": "k1\nX-Injected: yes"}, "/action_id"),
    ("nul-key", "tickets", lambda: {"action_id": "k1\x00x"}, "/action_id"),
    ("surrogate-key", "tickets", lambda: {"action_id": "k-\udfff"}, "/action_id"),
    (
        "crlf-stripe-key",
        "stripe",
        lambda: {"idempotency_key": "k\r\nStripe-Account: acct_evil"},
        "/idempotency_key",
    ),
    ("surrogate-note", "tickets", lambda: {"note": "hello \ud800"}, "/note"),
    ("deep-900-note", "tickets", lambda: {"note": nest(900)}, "/note"),
    ("deep-100k-note", "tickets", lambda: {"note": nest(100_000)}, "/note"),
    ("deep-100k-dict-note", "tickets", lambda: {"note": nest_dict(100_000)}, "/note"),
    ("nan-note", "tickets", lambda: {"note": float("nan")}, "/note"),
    ("inf-amount", "stripe", lambda: {"amount": float("inf")}, "/amount"),
    ("nan-amount", "stripe", lambda: {"amount": float("nan")}, "/amount"),
    ("bytes-note", "tickets", lambda: {"note": b"hello"}, "/note"),
    ("object-note", "tickets", lambda: {"note": Opaque()}, "/note"),
    ("int-keys-metadata", "stripe", lambda: {"metadata": {1: "x"}}, "/metadata"),
    ("tuple-keys-metadata", "stripe", lambda: {"metadata": {("a", "b"): "x"}}, "/metadata"),
    ("bytes-metadata", "stripe", lambda: {"metadata": {"a": b"x"}}, "/metadata"),
    ("surrogate-metadata-key", "stripe", lambda: {"metadata": {"\ud800": "x"}}, "/metadata"),
    ("deep-900-label", "github", lambda: {"labels": [{"name": "x", "extra": nest(900)}]}, "/labels"),
    (
        "deep-100k-label",
        "github",
        lambda: {"labels": [{"name": "x", "extra": nest_dict(100_000)}]},
        "/labels",
    ),
    ("nan-label", "github", lambda: {"labels": [{"name": "x", "id": float("nan")}]}, "/labels"),
    ("inf-label", "github", lambda: {"labels": [{"name": "x", "weight": float("-inf")}]}, "/labels"),
    ("int-key-label", "github", lambda: {"labels": [{"name": "x", 7: "y"}]}, "/labels"),
    ("object-label", "github", lambda: {"labels": [{"name": "x", "extra": Opaque()}]}, "/labels"),
    ("bytes-label", "github", lambda: {"labels": [{"name": "x", "extra": b"\x00\xff"}]}, "/labels"),
    ("top-level-int-key", "tickets", lambda: {5: "x"}, None),
]

BASE_ARGS: dict[str, tuple[str, dict[str, Any]]] = {
    "tickets": (FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="hostile-1")),
    "stripe": (
        "record_refund_charge",
        {"charge": "ch_1", "amount": 100, "metadata": {"order": "7"}, "idempotency_key": "hostile-2"},
    ),
    "github": (
        "record_create_issue",
        {"owner": "octo", "repo": "app", "title": "Crash", "labels": ["bug"], "action_id": "hostile-3"},
    ),
}


@pytest.mark.parametrize("case", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_call_never_raises_and_refuses_unsendable_values(case: Hostile, tmp_path: Path) -> None:
    _, api, make_override, pointer = case
    tool, base = BASE_ARGS[api]
    with FaultServer() as srv:
        tickets_routes(srv)
        path = tmp_path / "receipts.sqlite3"
        reg = make_registry(api, srv.base_url, honoured=True, receipts=SqliteReceiptStore(path))
        approval = approve(reg, tool, base)
        args = dict(base)
        args.update(make_override())
        res = call(reg, tool, args, approval=approval)
        assert code(res) == "invalid_arguments", res.to_json()
        assert res.error is not None and isinstance(res.error.details.get("pointer"), str)
        if pointer is not None:
            got = res.error.details["pointer"]
            assert got == pointer or got.startswith(pointer + "/"), got
        json.dumps(res.to_json())  # the error itself is plain JSON
        assert srv.requests == [], [(r.method, r.path) for r in srv.requests]
        assert scope_rows(path, f"{reg.api}/{tool}") == 0, "a receipt was written, yet nothing was sent"


def test_uuid_datetime_and_date_are_sent_in_their_json_form(fault: FaultServer) -> None:
    reg = make_registry("tickets", fault.base_url, honoured=True)
    when = datetime(2025, 3, 1, 12, 30, 5, tzinfo=UTC)
    day = date(2025, 3, 2)
    for note, key in ((when, uuid.UUID("12345678-1234-5678-1234-567812345678")), (day, uuid.uuid4())):
        args = {"ticket_id": "T-102", "note": note, "visibility": "public", "action_id": key}
        shown = preview(reg, FOLLOWUP, args)
        assert shown.ok and shown.result is not None, shown.to_json()
        assert shown.result["request"]["body"]["note"] == note.isoformat()
        before = len(fault.requests)
        res = call(reg, FOLLOWUP, args, approval=Approval(shown.result["preview_id"]))
        assert res.ok, res.to_json()
        sent = fault.requests[before:]
        assert len(sent) == 1
        assert sent[0].header("Idempotency-Key") == str(key)
        assert sent[0].json()["note"] == note.isoformat()
        assert wire_differences(reg, FOLLOWUP, shown.result["request"], sent[0]) == []
        assert receipt_state(reg, FOLLOWUP, str(key)) == "completed"


def test_decimal_is_refused_or_sent_as_its_number(recorder: RecordingServer) -> None:
    reg = make_registry("stripe", recorder.base_url, honoured=True)
    args = {"charge": "ch_1", "amount": Decimal(100), "idempotency_key": "dec-1"}
    shown = call(reg, "preview_refund_charge", {k: v for k, v in args.items() if k != "idempotency_key"})
    approval = Approval(shown.result["preview_id"]) if shown.ok and shown.result else None
    res = call(reg, "record_refund_charge", args, approval=approval)
    if recorder.requests:
        assert res.ok, res.to_json()
        assert dict(recorder.last.form())["amount"] == "100"
    else:
        assert code(res) == "invalid_arguments" and res.error is not None
        assert res.error.details.get("pointer") == "/amount"


# --------------------------------------------------------------------------------------------------
# hostile responses


READ_BODIES = [
    ("nested-1000", Fault.nested(1000)),
    ("nested-300-in-subject", Fault.nested_field("subject", 300)),
    ("invalid-json", Fault.invalid_json()),
    ("html", Fault.html()),
]


@pytest.mark.parametrize("name,body", READ_BODIES, ids=[n for n, _ in READ_BODIES])
def test_hostile_read_bodies_are_a_warning_never_a_result(name: str, body: Fault, fault: FaultServer) -> None:
    fault.script("GET", TICKET_PATH, body)  # output_invalid in strict output mode only
    res = call(make_registry("tickets", fault.base_url), "get_ticket", {"ticket_id": "T-102"})
    assert res.ok and res.warnings and set(res.result or {}) == {"status", "_unreadable_body"}, res.to_json()
    json.dumps(res.to_json())


def test_oversized_read_body_is_a_structured_error(fault: FaultServer) -> None:
    fault.script("GET", TICKET_PATH, *[Fault.oversized(9 * 1024 * 1024)] * 3)
    reg = make_registry("tickets", fault.base_url, tweak=fast_retries)
    res = call(reg, "get_ticket", {"ticket_id": "T-102"})
    assert not res.ok and res.error is not None, res.to_json()


WRITE_BODIES = [
    ("nested-1000", Fault.nested(1000, status=201), "completed"),
    ("invalid-json", Fault.invalid_json(status=201), "completed"),
    ("html", Fault.html(status=201), "completed"),
    ("oversized", Fault.oversized(9 * 1024 * 1024, status=201), "completed"),
    ("nested-300-in-id", Fault.nested_field("id", 300, status=201), None),
]


@pytest.mark.parametrize("name,body,state", WRITE_BODIES, ids=[n for n, _, _ in WRITE_BODIES])
def test_hostile_write_bodies_never_leave_a_pending_receipt(
    name: str, body: Fault, state: str | None, fault: FaultServer, tmp_path: Path
) -> None:
    fault.script("POST", FOLLOWUPS, body)
    reg = make_registry(
        "tickets", fault.base_url, honoured=True, receipts=SqliteReceiptStore(tmp_path / "receipts.sqlite3")
    )
    key = f"hostile-body-{name}"
    args = dict(FOLLOWUP_ARGS, action_id=key)
    res = call(reg, FOLLOWUP, args, approval=approve(reg, FOLLOWUP, args))
    json.dumps(res.to_json())
    got = receipt_state(reg, FOLLOWUP, key)
    assert got is not None and got != "pending", got
    if state is not None:  # a 201 that cannot be read (oversized too): a known success
        assert got == state and res.ok and res.warnings, res.to_json()


# --------------------------------------------------------------------------------------------------
# pagination always makes progress


def page_items(sizes: list[tuple[int, int]]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"T-{n}",
            "subject": "s" * size,
            "status": "open",
            "priority": "low",
            "updated_at": "2025-01-01T00:00:00Z",
            "body": "b" * size,
        }
        for n, size in sizes
    ]


def walk_pages(reg: Registry, total: int, page_size: int) -> list[str]:
    """Every id a walk by next_cursor returns; fails when a page makes no progress or the walk does
    not end within total + 2 pages."""
    seen: list[str] = []
    cursor: str | None = None
    reader = Actor.of("reader", ["ticket:read"])
    for _ in range(total + 2):
        args: dict[str, Any] = {"page_size": page_size}
        if cursor is not None:
            args["cursor"] = cursor
        res = call(reg, "list_tickets", args, actor=reader)
        assert res.ok and res.result is not None, res.to_json()
        items = res.result["items"]
        if len(seen) < total:
            assert items, f"a page returned no item and next_cursor {res.result.get('next_cursor')!r}"
        seen += [str(i.get("id")) for i in items]
        nxt = res.result.get("next_cursor")
        if nxt is None:
            return seen
        assert nxt != cursor, "the cursor did not advance"
        cursor = nxt
    pytest.fail(f"pagination did not end after {total + 2} pages (seen {len(seen)} of {total})")


def _budget(max_bytes: int) -> Callable[[dict[str, Any]], None]:
    def tweak(row: dict[str, Any]) -> None:
        if row["tool"] == "list_tickets":
            row["output"]["max_bytes"] = max_bytes

    return tweak


def test_page_of_items_larger_than_the_budget_still_progresses(fault: FaultServer) -> None:
    items = page_items([(n, 3000) for n in range(100, 105)])
    fault.pages(r"^/v1/tickets$", items)
    reg = make_registry("tickets", fault.base_url, tweak=_budget(500))
    assert walk_pages(reg, len(items), 2) == [i["id"] for i in items]


@pytest.fixture(scope="module")
def pager() -> Iterator[FaultServer]:
    with FaultServer() as srv:
        yield srv


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(
        st.tuples(st.integers(0, 10**6), st.integers(0, 3000)), max_size=10, unique_by=lambda t: t[0]
    ),
    max_bytes=st.integers(1, 5000),
    page_size=st.integers(1, 50),
)
def test_walking_pages_returns_every_item_once_in_order(
    pager: FaultServer, sizes: list[tuple[int, int]], max_bytes: int, page_size: int
) -> None:
    items = page_items(sizes)
    pager.pages(r"^/v1/tickets$", items)
    reg = make_registry("tickets", pager.base_url, tweak=_budget(max_bytes))
    try:
        assert walk_pages(reg, len(items), page_size) == [i["id"] for i in items]
    finally:
        reg.close()


# --------------------------------------------------------------------------------------------------
# the in-progress window is the owner's


def test_pending_receipt_window_is_the_owners_not_the_callers(tmp_path: Path) -> None:
    with FaultServer(honours_keys=False) as srv:
        tickets_routes(srv)
        srv.script("POST", FOLLOWUPS, Fault.hang(3.0, write=False))
        path, clock = tmp_path / "receipts.sqlite3", ManualClock()
        owner = make_registry(
            "tickets", srv.base_url, honoured=True, receipts=SqliteReceiptStore(path, clock=clock)
        )
        other = make_registry(
            "tickets", srv.base_url, honoured=True, receipts=SqliteReceiptStore(path, clock=clock)
        )
        key, args = "window-1", dict(FOLLOWUP_ARGS, action_id="window-1")
        approval = approve(owner, FOLLOWUP, args)
        done: list[CallResult] = []
        worker = threading.Thread(
            target=lambda: done.append(
                call_record(owner, FOLLOWUP, args, actor=actor_for(owner, FOLLOWUP), approval=approval)
            ),
            daemon=True,
        )
        worker.start()
        deadline = time.monotonic() + 5
        while not srv.requests_for(key=key) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert srv.requests_for(key=key), "the owner's request never arrived"
        clock.advance(
            0.4
        )  # older than the second caller's own deadline (timeout_ms=50), far inside the owner's
        second = call(other, FOLLOWUP, args, approval=approval, timeout_ms=50)
        sent = len(srv.requests_for(key=key))
        worker.join(15)
        assert code(second) == "idempotency_in_progress", second.to_json()
        assert sent == 1, "the second caller re-sent a write its owner was still waiting for"


# --------------------------------------------------------------------------------------------------
# MCP: a warn-mode output-schema violation


def _all_keys(value: Any) -> set[str]:
    keys: set[str] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            keys |= set(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return keys


@pytest.mark.anyio
async def test_mcp_warn_mode_schema_violation_is_a_tool_error_not_a_crash(fault: FaultServer) -> None:
    from mcp import Client

    from toolgen.runtime.serving.mcp_server import build_server

    fault.route("POST", FOLLOWUPS, status=201, body={"id": 12345, "note": "no ticket_id, no created_at"})
    reg = make_registry("tickets", fault.base_url, honoured=True)
    assert reg.row_json(FOLLOWUP)["output"]["schema_mode"] == "warn"
    writer = Actor.of("mcp", ["ticket:read", "ticket:write"])
    key = "mcp-warn-1"
    async with Client(build_server(reg, writer)) as client:
        shown = await client.call_tool("preview_ticket_followup", FOLLOWUP_ARGS)
        assert shown.is_error is False and shown.structured_content is not None
        meta: Any = {
            "toolgen/approval": {"preview_id": shown.structured_content["preview_id"], "approved_by": "human"}
        }
        try:
            res = await client.call_tool(
                FOLLOWUP, {"preview_id": shown.structured_content["preview_id"], "action_id": key}, meta=meta
            )
        except Exception as exc:  # noqa: BLE001 - the guarantee under test is that the client does not raise
            pytest.fail(f"the MCP client raised {type(exc).__name__}: {str(exc)[:300]}")
    assert res.is_error is True, res
    assert res.structured_content is None, res  # an error result never contradicts the outputSchema
    content = mcp_json(res)
    assert isinstance(content, dict), res
    assert "result_known" in _all_keys(content), content
    assert key in json.dumps(content), content
    assert fault.side_effects_for(key) == 1


# --------------------------------------------------------------------------------------------------
# smaller findings


@pytest.mark.parametrize("status", [502, 503, 504])
def test_gateway_error_on_a_deduplicated_write_is_retryable(status: int, fault: FaultServer) -> None:
    fault.script("POST", FOLLOWUPS, *[Fault.answer(status)] * 6)
    reg = make_registry("tickets", fault.base_url, honoured=True, tweak=fast_retries)
    key = f"gateway-{status}"
    args = dict(FOLLOWUP_ARGS, action_id=key)
    res = call(reg, FOLLOWUP, args, approval=approve(reg, FOLLOWUP, args), timeout_ms=500)
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.retryable is True, res.to_json()
    assert receipt_state(reg, FOLLOWUP, key) != "pending"


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_on_a_write_is_an_unknown_outcome(status: int, fault: FaultServer) -> None:
    fault.script("POST", FOLLOWUPS, Fault.redirect(status, "/v1/elsewhere", write=True))
    reg = make_registry("tickets", fault.base_url, honoured=True, tweak=fast_retries)
    key = f"redirect-{status}"
    args = dict(FOLLOWUP_ARGS, action_id=key)
    res = call(reg, FOLLOWUP, args, approval=approve(reg, FOLLOWUP, args))
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.result_known is False, res.to_json()
    assert receipt_state(reg, FOLLOWUP, key) == "unknown"
    assert not fault.requests_for(path_regex="elsewhere"), "the redirect was followed"


def test_dropped_read_connection_is_not_reported_as_a_timeout(fault: FaultServer) -> None:
    fault.script("GET", TICKET_PATH, *[Fault.drop(after=0.2)] * 6)
    reg = make_registry("tickets", fault.base_url, tweak=fast_retries)
    res = call(reg, "get_ticket", {"ticket_id": "T-102"})
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.code != "tool_timeout", res.to_json()
    assert "timeout" not in res.error.message.lower() and "timed out" not in res.error.message.lower()


def test_approval_is_not_spent_by_a_missing_credential(fault: FaultServer, tmp_path: Path) -> None:
    path = tmp_path / "receipts.sqlite3"
    unconfigured = make_registry("tickets", fault.base_url, secrets={}, receipts=SqliteReceiptStore(path))
    configured = make_registry("tickets", fault.base_url, receipts=SqliteReceiptStore(path))
    approval = approve(configured, FOLLOWUP, FOLLOWUP_ARGS)
    first = call(unconfigured, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="cred-1"), approval=approval)
    assert code(first) == "missing_credential", first.to_json()
    assert fault.requests == []
    second = call(configured, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="cred-2"), approval=approval)
    assert second.ok, second.to_json()
    assert len(fault.requests) == 1


def test_approval_is_not_spent_by_an_idempotency_conflict(fault: FaultServer) -> None:
    reg = make_registry("tickets", fault.base_url, honoured=True)
    other = dict(FOLLOWUP_ARGS, note="A different note.")
    taken = call(reg, FOLLOWUP, dict(other, action_id="conf-1"), approval=approve(reg, FOLLOWUP, other))
    assert taken.ok, taken.to_json()
    approval = approve(reg, FOLLOWUP, FOLLOWUP_ARGS)
    clash = call(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="conf-1"), approval=approval)
    assert code(clash) == "idempotency_conflict", clash.to_json()
    assert len(fault.requests) == 1
    fresh = call(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="conf-2"), approval=approval)
    assert fresh.ok, fresh.to_json()
    assert len(fault.requests) == 2


@pytest.mark.parametrize("store_kind", ["memory", "sqlite", "redis", "postgres"])
def test_approval_spent_on_a_key_is_not_spent_again_after_its_receipt_is_purged(
    store_kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The key an approval was spent on, presented again once the store forgot its completed
    receipt (``purge``; Redis ``completed_ttl``), against an API that does not deduplicate keys:
    a second upstream write from one approval, before the fix."""
    if store_kind == "memory":
        store: ReceiptStore = MemoryReceiptStore()
    elif store_kind == "sqlite":
        store = SqliteReceiptStore(tmp_path / "receipts.sqlite3")
    elif store_kind == "postgres":
        store = receipts_from_url(
            f"{request.getfixturevalue('postgres_url')}?table_prefix=pk{uuid.uuid4().hex[:10]}_"
        )
    else:
        store = receipts_from_url(
            f"{request.getfixturevalue('redis_url')}?prefix=pk-{uuid.uuid4().hex[:10]}:&completed_ttl=1"
        )
    with FaultServer(honours_keys=False) as srv:
        tickets_routes(srv)
        reg = make_registry("tickets", srv.base_url, honoured=False, receipts=store)
        args = dict(FOLLOWUP_ARGS, action_id="purged-1")
        approval = approve(reg, FOLLOWUP, args)
        assert call(reg, FOLLOWUP, args, approval=approval).ok
        if store_kind == "redis":
            time.sleep(1.3)
        else:
            store.purge(0.0)  # type: ignore[attr-defined]
        assert receipt_state(reg, FOLLOWUP, "purged-1") is None, "the store kept the receipt"
        again = call(reg, FOLLOWUP, args, approval=approval)
        assert code(again) == "approval_used", again.to_json()
        assert srv.total_side_effects == 1 and len(srv.requests) == 1
        assert receipt_state(reg, FOLLOWUP, "purged-1") is None  # the refused call keeps no receipt
        reg.close()


def test_approval_is_given_back_when_the_api_refuses_the_write(fault: FaultServer) -> None:
    """A write the API refused (a known 4xx) took no effect: its approval is not spent, on any key."""
    fault.script("POST", FOLLOWUPS, Fault.answer(422, {"title": "Unprocessable", "detail": "note too long"}))
    reg = make_registry("tickets", fault.base_url, honoured=False)
    approval = approve(reg, FOLLOWUP, FOLLOWUP_ARGS)
    refused = call(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="rej-1"), approval=approval)
    assert code(refused) == "validation_error" or not refused.ok, refused.to_json()
    assert refused.error is not None and refused.error.result_known, refused.to_json()
    other = call(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="rej-2"), approval=approval)
    assert other.ok, other.to_json()  # another key may use it: the refused call spent nothing
    again = call(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="rej-1"), approval=approval)
    assert code(again) == "approval_used", again.to_json()  # now it is spent, on rej-2
    assert fault.total_side_effects == 1 and len(fault.requests) == 2


def test_integral_float_is_sent_as_an_integer(recorder: RecordingServer) -> None:
    github = make_registry("github", recorder.base_url)
    res = call(github, "get_issue", {"owner": "octo", "repo": "app", "issue_number": 1.0})
    assert recorder.requests and recorder.last.path == "/repos/octo/app/issues/1", recorder.last.path
    assert res.status == 200
    recorder.clear()
    stripe = make_registry("stripe", recorder.base_url, honoured=True)
    args = {"charge": "ch_1", "amount": 100.0, "idempotency_key": "float-1"}
    shown = preview(stripe, "record_refund_charge", args)
    assert shown.ok and shown.result is not None, shown.to_json()
    res = call(stripe, "record_refund_charge", args, approval=Approval(shown.result["preview_id"]))
    assert res.ok, res.to_json()
    assert dict(recorder.last.form())["amount"] == "100"


BRACKET_KEYS = ["a[b]", "a]", "[a", "x][y"]


@pytest.mark.parametrize("key", BRACKET_KEYS)
def test_bracketed_form_keys_are_refused(key: str, recorder: RecordingServer) -> None:
    reg = make_registry("stripe", recorder.base_url, honoured=True)
    args = {"customer": "cus_1", "metadata": {key: "x"}}
    shown = preview(reg, "record_update_customer", args)
    assert code(shown) == "invalid_arguments", shown.to_json()
    res = call(
        reg,
        "record_update_customer",
        dict(args, idempotency_key="br-1"),
        approval=Approval("sha256:" + "0" * 64),
    )
    assert code(res) == "invalid_arguments", res.to_json()
    assert res.error is not None and str(res.error.details.get("pointer", "")).startswith("/metadata")
    assert recorder.requests == []


def test_undeclared_nested_member_is_refused_not_forwarded(recorder: RecordingServer) -> None:
    reg = make_registry("stripe", recorder.base_url)
    res = call(reg, "list_customers", {"created": {"evil": {"deep": "1"}}})
    assert code(res) == "invalid_arguments", res.to_json()
    assert res.error is not None and str(res.error.details.get("pointer", "")).startswith("/created")
    assert recorder.requests == [], [r.raw_query for r in recorder.requests]
    fine = call(reg, "list_customers", {"created": {"gt": 5}})
    assert fine.ok, fine.to_json()
    assert ("created[gt]", "5") in parse_qsl(recorder.last.raw_query), recorder.last.raw_query


def test_new_sqlite_receipts_file_is_private(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "receipts.sqlite3"
    store = SqliteReceiptStore(path)
    try:
        assert store.begin("api/tool", "k", "sha256:x", "a") is None
        mode = os.stat(path).st_mode & 0o777
        assert mode == 0o600, oct(mode)
    finally:
        store.close()
