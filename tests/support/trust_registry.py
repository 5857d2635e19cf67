"""Registries over the committed packages (``generated/<api>``) for the runtime's trust tests, and
the tickets routes of the fault-injecting API they call: `make_registry` (a registry with static test
secrets, in-memory receipts and audit unless given, each policy row optionally changed), the helpers
that preview, approve and call a tool as an actor holding its permissions (`call` turns an exception
into a test failure), `wire_differences` (a sent request against its preview), and the bodies the
fault server answers with (`ticket_body`, `followup_body`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.fault_server import FaultServer, Received
from tests.support.preview_compare import preview_mismatches
from tests.support.records import record_arguments
from tests.support.runtime_env import load_package

from toolgen.runtime import (
    Actor,
    Approval,
    CallResult,
    MemoryAuditSink,
    MemoryReceiptStore,
    ReceiptStore,
    Registry,
    StaticCredentials,
)

SECRETS = {
    "TICKETS_TOKEN": "tkt-live-9d1e2f3a4b5c6d7e",
    "GITHUB_TOKEN": "ghp_live0123456789abcdefSECRET",
    "STRIPE_SECRET_KEY": "sk_live_51HqSECRETx2Lk9Zz",
}
TICKET_PATH = r"^/v1/tickets/T-[0-9]+$"
FOLLOWUPS = r"^/v1/tickets/T-[0-9]+/followups$"
FOLLOWUP = "record_ticket_followup"
FOLLOWUP_ARGS: dict[str, Any] = {
    "ticket_id": "T-102",
    "note": "Called the customer back.",
    "visibility": "public",
}


# --------------------------------------------------------------------------------------------------
# building registries over the committed packages


def api_base(policy: dict[str, Any], server_base: str) -> str:
    """The server's base URL plus the path prefix of the package's own base URL (``/v1`` for tickets)."""
    prefix = str(policy.get("base_url") or "").split("://", 1)[-1]
    prefix = "/" + prefix.split("/", 1)[1] if "/" in prefix else ""
    return server_base + prefix.rstrip("/")


def make_registry(
    api: str,
    server_base: str,
    *,
    honoured: bool | None = None,
    receipts: ReceiptStore | None = None,
    audit: MemoryAuditSink | None = None,
    secrets: dict[str, str] | None = None,
    tweak: Callable[[dict[str, Any]], None] | None = None,
) -> Registry:
    """A registry over generated/<api>. `honoured` sets ``idempotency.honoured_by_api`` of every row
    whose key is forwarded to the API; `tweak` may change each row in memory."""
    policy, catalog = load_package(api)
    for row in policy["tools"]:
        idem = row.get("idempotency")
        if honoured is not None and idem and idem.get("in") in ("header", "query", "body"):
            idem["honoured_by_api"] = honoured
        if tweak is not None:
            tweak(row)
    return Registry(
        policy,
        list(catalog),
        base_url=api_base(policy, server_base),
        credentials=StaticCredentials(SECRETS if secrets is None else secrets),
        receipts=receipts if receipts is not None else MemoryReceiptStore(),
        audit=audit if audit is not None else MemoryAuditSink(),
        cursor_key=b"k" * 32,
    )


def fast_retries(row: dict[str, Any]) -> None:
    """Short backoff, so retry tests take milliseconds rather than seconds."""
    if row.get("retry"):
        row["retry"]["backoff_ms"] = 20


def actor_for(reg: Registry, tool: str) -> Actor:
    pair = reg.row(tool).pair
    return Actor.of(
        "tester", {*reg.row(tool).permission, *(reg.row(pair).permission if pair in reg.specs else ())}
    )


def key_arg(reg: Registry, tool: str) -> str | None:
    idem = reg.row_json(tool).get("idempotency")
    return str(idem["arg"]) if idem else None


def preview(reg: Registry, record_tool: str, args: dict[str, Any]) -> CallResult:
    row = reg.row_json(record_tool)
    key = key_arg(reg, record_tool)
    return call(
        reg, str(row["pair"]), {k: v for k, v in args.items() if k != key}, actor=actor_for(reg, record_tool)
    )


def approve(reg: Registry, record_tool: str, args: dict[str, Any], **extra: Any) -> Approval:
    shown = preview(reg, record_tool, args)
    assert shown.ok and shown.result is not None, shown.to_json()
    return Approval(shown.result["preview_id"], approved_by="reviewer@example.com", **extra)


def receipt_state(reg: Registry, tool: str, key: str) -> str | None:
    found = reg.receipts.get(f"{reg.api}/{tool}", key)
    return None if found is None else found.state


def scope_rows(path: Path, scope: str) -> int:
    """Receipts stored for `scope` in a SQLite receipts file (read with a separate connection)."""
    with sqlite3.connect(str(path)) as conn:
        return int(conn.execute("SELECT count(*) FROM receipts WHERE scope = ?", (scope,)).fetchone()[0])


def ticket_body(number: int = 102) -> dict[str, Any]:
    return {
        "id": f"T-{number}",
        "subject": "Printer on fire",
        "status": "open",
        "priority": "high",
        "requester": {"email": "user@example.com", "name": "User", "phone": "+1-555-0100"},
        "assignee": None,
        "tags": [],
        "followup_count": 0,
        "updated_at": "2025-02-01T11:00:00Z",
        "body": "Long original request text.",
    }


def followup_body(req: Received, n: int) -> dict[str, Any]:
    ticket = req.path.split("/")[3]
    sent = req.json() if req.body else {}
    return {
        "id": f"F-{n}",
        "ticket_id": ticket,
        "note": sent.get("note"),
        "visibility": sent.get("visibility"),
        "author": "api",
        "created_at": "2025-03-01T12:00:00Z",
    }


def tickets_routes(srv: FaultServer) -> None:
    srv.route("GET", TICKET_PATH, body=ticket_body())
    srv.route("POST", FOLLOWUPS, status=201, body=followup_body)
    srv.route("DELETE", TICKET_PATH, status=204, body=b"")


def call(reg: Registry, tool: str, args: Any, **kw: Any) -> CallResult:
    """`reg.call`, turning an exception into a test failure that names it."""
    failure = ""
    try:
        actor = kw.pop("actor", None) or actor_for(reg, tool)
        # a record tool executing a stored preview: preview `args` as `actor`, record its preview_id
        sent = record_arguments(reg, tool, args, actor=actor, dialect=kw.get("dialect"))
        result = sent if isinstance(sent, CallResult) else reg.call(tool, sent, actor=actor, **kw)
    except Exception as exc:  # noqa: BLE001 - the guarantee under test is that nothing is raised
        failure = f"Registry.call({tool!r}) raised {type(exc).__name__}: {str(exc)[:300]}"
    if failure:  # failed outside the handler: a recursion traceback is not worth formatting
        pytest.fail(failure)
    assert isinstance(result, CallResult)
    return result


def code(result: CallResult) -> str | None:
    return None if result.error is None else result.error.code


def _secret_locations(reg: Registry, tool: str) -> tuple[set[str], set[str]]:
    headers: set[str] = set()
    query: set[str] = set()
    for entry in reg.row_json(tool).get("auth") or []:
        name = str(entry.get("name") or "Authorization").lower()
        (query if entry.get("in") == "query" else headers).add(name)
    return headers, query


def wire_differences(reg: Registry, tool: str, shown: dict[str, Any], sent: Any) -> list[str]:
    """How the request `sent` (a recorded request) differs from the previewed request `shown`
    (`preview_mismatches`), leaving out the tool's credentials and reading its idempotency key where
    the row puts it; ``[]`` when they are the same request."""
    idem = reg.row_json(tool).get("idempotency") or {}
    where, name = idem.get("in"), idem.get("name")
    secret_headers, secret_query = _secret_locations(reg, tool)
    headers = sent.headers if isinstance(sent.headers, list) else list(sent.headers.items())
    return preview_mismatches(
        shown,
        method=sent.method,
        path=sent.path,
        raw_query=sent.raw_query,
        headers=headers,
        body=sent.body,
        secret_headers=secret_headers,
        secret_query=secret_query,
        key_header=name if where == "header" else None,
        key_query=name if where == "query" else None,
        key_body_field=name if where == "body" else None,
    )
