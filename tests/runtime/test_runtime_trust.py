"""Trust guarantees of the runtime, attacked end to end over real HTTP on loopback.

Each test names the guarantee it attacks:

- dot segments: a path argument of ``""``, ``"."`` or ``".."`` would make the HTTP client collapse
  the URL onto another resource (``POST /v1/customers/.`` is ``POST /v1/customers``, a create);
  it must be refused as ``invalid_arguments`` naming the argument, with nothing sent;
- the wire request is the previewed request, and an approval covers that request only;
- result knowledge is monotonic: once a write may have happened, a later 409/429/400 cannot make
  the outcome "known", and its receipt stays ``unknown`` until a definitive 2xx or replay;
- a key the API does not deduplicate is never re-sent blindly;
- a credential echoed by the API in a success body never reaches the result, the receipt store or
  the audit log (also on replay);
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
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.fault_server import Fault, FaultServer, Received, preview_mismatches
from tests.support.policy_rows import complete_policy, typed_row
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.records import call_record, preview_tool_of, record_arguments
from tests.support.runtime_env import GENERATED, mcp_json

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
    receipts_from_url,
)
from toolgen.runtime.call.request import build_request
from toolgen.runtime.clock import ManualClock
from toolgen.testing.contract import CannotSynthesise, synthesise, valid_args

SECRETS = {
    "TICKETS_TOKEN": "tkt-live-9d1e2f3a4b5c6d7e",
    "GITHUB_TOKEN": "ghp_live0123456789abcdefSECRET",
    "STRIPE_SECRET_KEY": "sk_live_51HqSECRETx2Lk9Zz",
}
TICKET_PATH = r"^/v1/tickets/T-[0-9]+$"
FOLLOWUPS = r"^/v1/tickets/T-[0-9]+/followups$"
FOLLOWUP = "record_ticket_followup"
FOLLOWUP_ARGS: dict[str, Any] = {"ticket_id": "T-102", "note": "Called the customer back.",
                                  "visibility": "public"}


# --------------------------------------------------------------------------------------------------
# building registries over the committed packages


def load_package(api: str) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    folder = GENERATED / api
    if not (folder / "policy.json").is_file():
        pytest.skip(f"generated/{api} is not built")
    policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
    return policy, catalog


def api_base(policy: dict[str, Any], server_base: str) -> str:
    """The server's base URL plus the path prefix of the package's own base URL (``/v1`` for tickets)."""
    prefix = str(policy.get("base_url") or "").split("://", 1)[-1]
    prefix = "/" + prefix.split("/", 1)[1] if "/" in prefix else ""
    return server_base + prefix.rstrip("/")


def make_registry(api: str, server_base: str, *, honoured: bool | None = None,
                  receipts: ReceiptStore | None = None, audit: MemoryAuditSink | None = None,
                  secrets: dict[str, str] | None = None,
                  tweak: Callable[[dict[str, Any]], None] | None = None) -> Registry:
    """A registry over generated/<api>. `honoured` sets ``idempotency.honoured_by_api`` of every row
    whose key is forwarded to the API; `tweak` may change each row in memory."""
    policy, catalog = load_package(api)
    for row in policy["tools"]:
        idem = row.get("idempotency")
        if honoured is not None and idem and idem.get("in") in ("header", "query", "body"):
            idem["honoured_by_api"] = honoured
        if tweak is not None:
            tweak(row)
    return Registry(policy, catalog, base_url=api_base(policy, server_base),
                    credentials=StaticCredentials(SECRETS if secrets is None else secrets),
                    receipts=receipts if receipts is not None else MemoryReceiptStore(),
                    audit=audit if audit is not None else MemoryAuditSink(), cursor_key=b"k" * 32)


def fast_retries(row: dict[str, Any]) -> None:
    """Short backoff, so retry tests take milliseconds rather than seconds."""
    if row.get("retry"):
        row["retry"]["backoff_ms"] = 20


def actor_for(reg: Registry, tool: str) -> Actor:
    pair = reg.row(tool).pair
    return Actor.of("tester", {*reg.row(tool).permission, *(reg.row(pair).permission if pair in reg.specs else ())})


def key_arg(reg: Registry, tool: str) -> str | None:
    idem = reg.row_json(tool).get("idempotency")
    return str(idem["arg"]) if idem else None


def preview(reg: Registry, record_tool: str, args: dict[str, Any]) -> CallResult:
    row = reg.row_json(record_tool)
    key = key_arg(reg, record_tool)
    return call(reg, str(row["pair"]), {k: v for k, v in args.items() if k != key},
                actor=actor_for(reg, record_tool))


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
    return {"id": f"T-{number}", "subject": "Printer on fire", "status": "open", "priority": "high",
            "requester": {"email": "user@example.com", "name": "User", "phone": "+1-555-0100"},
            "assignee": None, "tags": [], "followup_count": 0, "updated_at": "2025-02-01T11:00:00Z",
            "body": "Long original request text."}


def followup_body(req: Received, n: int) -> dict[str, Any]:
    ticket = req.path.split("/")[3]
    sent = req.json() if req.body else {}
    return {"id": f"F-{n}", "ticket_id": ticket, "note": sent.get("note"),
            "visibility": sent.get("visibility"), "author": "api", "created_at": "2025-03-01T12:00:00Z"}


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


@pytest.fixture
def fault() -> Iterator[FaultServer]:
    with FaultServer(honours_keys=True) as srv:
        tickets_routes(srv)
        yield srv


# --------------------------------------------------------------------------------------------------
# dot segments


DOT_CASES = [
    ("stripe", "record_update_customer", {"customer": "@", "name": "Eve", "idempotency_key": "dot-1"},
     "customer"),
    ("stripe", "get_customer", {"customer": "@"}, "customer"),
    ("stripe", "record_delete_customer", {"customer": "@", "idempotency_key": "dot-2"}, "customer"),
    ("github", "record_remove_issue_label",
     {"owner": "octo", "repo": "app", "issue_number": 7, "name": "@", "action_id": "dot-3"}, "name"),
    ("github", "record_delete_repository", {"owner": "octo", "repo": "@", "action_id": "dot-4"}, "repo"),
    ("github", "get_repository", {"owner": "@", "repo": "app"}, "owner"),
]


@pytest.mark.parametrize("value", ["", ".", ".."], ids=["empty", "dot", "dotdot"])
@pytest.mark.parametrize("api,tool,template,arg", DOT_CASES, ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in DOT_CASES])
def test_dot_segment_path_values_are_refused(api: str, tool: str, template: dict[str, Any], arg: str,
                                             value: str, recorder: RecordingServer) -> None:
    reg = make_registry(api, recorder.base_url)
    args = {k: (value if v == "@" else v) for k, v in template.items()}
    approval = None
    if reg.row_json(tool).get("mode") == "record":
        shown = preview(reg, tool, args)
        assert not shown.ok and code(shown) == "invalid_arguments", shown.to_json()
        assert shown.error is not None and shown.error.details.get("pointer") == f"/{arg}"
        approval = Approval("sha256:" + "0" * 64)
    res = call(reg, tool, args, approval=approval)
    assert code(res) == "invalid_arguments", res.to_json()
    assert res.error is not None and res.error.details.get("pointer") == f"/{arg}"
    assert recorder.requests == [], [(r.method, r.path) for r in recorder.requests]


def _styled_row(style: str) -> dict[str, Any]:
    return {"tool": "get_item", "mode": "read", "effect": "read", "intent": "get_item", "pair": None,
            "operation": {"id": "getItem", "method": "GET", "path": "/items/{id}"}, "permission": [],
            "approval": "never", "idempotency": None, "pagination": None, "auth": [],
            "retry": {"max_attempts": 1, "backoff_ms": 10, "deadline_ms": 2000, "on": []}, "timeout_ms": 2000,
            "output": {"fields": [], "max_bytes": 4000, "redact": [], "schema_mode": "warn"},
            "request": {"encoding": "none", "content_type": None, "fixed": [],
                        "bindings": [{"arg": "id", "in": "path", "name": "id", "style": style,
                                      "explode": False, "required": True, "null": "omit"}]},
            "success_status": [200]}


STYLED_DOTS = [("simple", ""), ("simple", "."), ("simple", ".."), ("label", ""), ("label", ".")]


@pytest.mark.parametrize("style,value", STYLED_DOTS, ids=[f"{s}-{v or 'empty'}" for s, v in STYLED_DOTS])
def test_build_request_refuses_values_that_make_a_dot_segment(style: str, value: str) -> None:
    """``label`` style prefixes a ``.``: ``""`` becomes the segment ``.``, ``"."`` becomes ``..``."""
    with pytest.raises(ToolError) as info:
        build_request(typed_row(_styled_row(style)), {"id": value}, base_url="http://127.0.0.1:9")
    assert info.value.code == "invalid_arguments"
    assert info.value.details.get("pointer") == "/id"


STYLED_ALL = [*STYLED_DOTS, ("matrix", "."), ("matrix", "..")]


@pytest.mark.parametrize("style,value", STYLED_ALL, ids=[f"{s}-{v or 'empty'}" for s, v in STYLED_ALL])
def test_styled_path_values_never_reach_the_wire_as_dot_segments(style: str, value: str,
                                                                  recorder: RecordingServer) -> None:
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"],
              "additionalProperties": False}
    catalog: list[Mapping[str, Any]] = [{"name": "get_item", "inputSchema": schema}]
    reg = Registry(complete_policy({"api": "units", "base_url": recorder.base_url, "tools": [_styled_row(style)]}),
                   catalog, credentials=StaticCredentials({}), receipts=MemoryReceiptStore(), cursor_key=b"u" * 32)
    res = call(reg, "get_item", {"id": value}, actor=Actor.of("a"))
    for sent in recorder.requests:
        segments = sent.path.split("/")[1:]
        assert sent.path.startswith("/items/") and len(segments) == 2, sent.path
        assert segments[1] not in ("", ".", ".."), sent.path
    if not recorder.requests:
        assert code(res) == "invalid_arguments" and res.error is not None
        assert res.error.details.get("pointer") == "/id"


# --------------------------------------------------------------------------------------------------
# the wire request is the previewed request


def _record_tools() -> list[tuple[str, str]]:
    out = []
    for api in ("tickets", "github", "stripe"):
        folder = GENERATED / api
        if not (folder / "policy.json").is_file():
            continue
        policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
        out += [(api, str(r["tool"])) for r in policy["tools"] if r.get("mode") == "record" and not r.get("composite")]
    return out


ARG_EXAMPLES: dict[str, Any] = {
    "ticket_id": "T-102", "owner": "octo-org", "repo": "hello.world", "customer": "cus_123", "charge": "ch_9",
    "intent": "pi_42", "payment_intent": "pi_42", "metadata": {"zeta": "1", "alpha": "two words"},
    "issue_number": 42, "pull_number": 7, "name": "needs triage", "note": "Called back.",
}


def rich_args(reg: Registry, tool: str) -> dict[str, Any]:
    """Valid arguments for `tool` with every optional argument that can be synthesised filled in (for
    a record tool executing a stored preview: its preview tool's arguments, plus the key)."""
    record = tool
    tool = preview_tool_of(reg, tool) or tool
    try:
        args = valid_args(reg, tool, ARG_EXAMPLES)
    except CannotSynthesise as exc:
        pytest.skip(str(exc))
    spec = reg.specs[tool]
    props = (spec.input_schema.get("properties") or {})
    for name, schema in props.items():
        if name in args or name in ("cursor", "page_size"):
            continue
        try:
            value = synthesise(schema, spec.input_schema, arg_examples=ARG_EXAMPLES, name=name)
        except CannotSynthesise:
            continue
        trial = dict(args, **{name: value})
        if value is not None and spec.input_validator.is_valid(trial):
            args = trial
    key = key_arg(reg, record)
    if key:
        args[key] = f"wire-{record}"
    return args


def _secret_locations(reg: Registry, tool: str) -> tuple[set[str], set[str]]:
    headers: set[str] = set()
    query: set[str] = set()
    for entry in reg.row_json(tool).get("auth") or []:
        name = str(entry.get("name") or "Authorization").lower()
        (query if entry.get("in") == "query" else headers).add(name)
    return headers, query


def wire_differences(reg: Registry, tool: str, shown: dict[str, Any], sent: Any) -> list[str]:
    idem = reg.row_json(tool).get("idempotency") or {}
    where, name = idem.get("in"), idem.get("name")
    secret_headers, secret_query = _secret_locations(reg, tool)
    headers = sent.headers if isinstance(sent.headers, list) else list(sent.headers.items())
    return preview_mismatches(shown, method=sent.method, path=sent.path, raw_query=sent.raw_query,
                              headers=headers, body=sent.body, secret_headers=secret_headers,
                              secret_query=secret_query, key_header=name if where == "header" else None,
                              key_query=name if where == "query" else None,
                              key_body_field=name if where == "body" else None)


@pytest.mark.parametrize("api,tool", _record_tools(), ids=[f"{a}-{t}" for a, t in _record_tools()])
def test_wire_request_equals_previewed_request(api: str, tool: str, recorder: RecordingServer) -> None:
    reg = make_registry(api, recorder.base_url, honoured=True)
    if not reg.row_json(tool).get("pair"):
        pytest.skip(f"{tool} has no preview tool (`preview: false`)")
    args = rich_args(reg, tool)
    shown = preview(reg, tool, args)
    assert shown.ok and shown.result is not None, shown.to_json()
    assert recorder.requests == [], "a preview sent a request"
    res = call(reg, tool, args, approval=Approval(shown.result["preview_id"]))
    assert res.ok, res.to_json()
    assert len(recorder.requests) == 1
    problems = wire_differences(reg, tool, shown.result["request"], recorder.last)
    assert problems == [], problems
    secret = next(v for k, v in SECRETS.items() if any(a.get("secret") == k for a in reg.row_json(tool)["auth"]))
    assert secret not in json.dumps(shown.to_json())


def test_approval_does_not_cover_a_request_with_other_bytes(recorder: RecordingServer) -> None:
    """Two argument objects with the same fingerprint but another member order would encode other
    bytes: the approval of the first covers the first request only."""
    reg = make_registry("stripe", recorder.base_url, honoured=True)
    tool = "record_update_customer"
    first = {"customer": "cus_1", "name": "Ada", "metadata": {"alpha": "1", "zeta": "2"}}
    reordered = {"metadata": {"zeta": "2", "alpha": "1"}, "name": "Ada", "customer": "cus_1"}
    shown = preview(reg, tool, first)
    assert shown.ok and shown.result is not None
    res = call(reg, tool, dict(reordered, idempotency_key="order-1"),
               approval=Approval(shown.result["preview_id"]))
    if recorder.requests:
        assert res.ok, res.to_json()
        assert wire_differences(reg, tool, shown.result["request"], recorder.last) == []
    else:
        assert code(res) == "approval_mismatch", res.to_json()

    recorder.clear()
    github = make_registry("github", recorder.base_url, honoured=True)
    args = {"owner": "octo", "repo": "app", "title": "Crash", "body": "Steps", "labels": ["bug", "p1"]}
    shown = preview(github, "record_create_issue", args)
    assert shown.ok and shown.result is not None
    swapped = {"labels": ["bug", "p1"], "body": "Steps", "title": "Crash", "repo": "app", "owner": "octo"}
    res = call(github, "record_create_issue", dict(swapped, action_id="order-2"),
               approval=Approval(shown.result["preview_id"]))
    if recorder.requests:
        assert res.ok, res.to_json()
        assert wire_differences(github, "record_create_issue", shown.result["request"], recorder.last) == []
    else:
        assert code(res) == "approval_mismatch", res.to_json()


def test_approval_of_one_origin_does_not_authorise_another() -> None:
    """The previewed URL is part of what was approved: a registry pointed at another base URL must
    not send the write under that approval."""
    with RecordingServer() as shown_to, RecordingServer() as elsewhere:
        receipts = MemoryReceiptStore()
        first = make_registry("tickets", shown_to.base_url, receipts=receipts)
        second = make_registry("tickets", elsewhere.base_url, receipts=receipts)
        approval = approve(first, FOLLOWUP, FOLLOWUP_ARGS)
        res = call(second, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="origin-1"), approval=approval)
        assert elsewhere.requests == [], "the write went to a URL nobody approved"
        assert code(res) == "approval_mismatch", res.to_json()


# --------------------------------------------------------------------------------------------------
# result knowledge is monotonic; no blind resends


def _unknown_then(srv: FaultServer, second: str) -> None:
    if second == "key_in_use":
        srv.script("POST", FOLLOWUPS, Fault.hang(1.5, hold_key=True))
    elif second == "429":
        srv.script("POST", FOLLOWUPS, Fault.hang(0.6), *[Fault.rate_limited("0")] * 6)
    else:
        srv.script("POST", FOLLOWUPS, Fault.hang(0.6),
                   *[Fault.answer(400, {"error": {"type": "invalid_request_error", "message": "bad"}})] * 6)


@pytest.mark.parametrize("second", ["key_in_use", "429", "400"])
def test_result_knowledge_is_monotonic(second: str, fault: FaultServer, tmp_path: Path) -> None:
    _unknown_then(fault, second)
    reg = make_registry("tickets", fault.base_url, honoured=True, tweak=fast_retries,
                        receipts=SqliteReceiptStore(tmp_path / "receipts.sqlite3"))
    key = f"mono-{second}"
    args = dict(FOLLOWUP_ARGS, action_id=key)
    approval = approve(reg, FOLLOWUP, args)
    results = [call(reg, FOLLOWUP, args, approval=approval, timeout_ms=300)]
    if len(fault.requests_for(key=key)) < 2:  # the runtime did not resend by itself: the caller retries
        results.append(call(reg, FOLLOWUP, args, approval=approval, timeout_ms=300))
    assert len(fault.requests_for(key=key)) >= 2, "the write was never retried"
    final = results[-1]
    assert not final.ok and final.error is not None, final.to_json()
    assert final.error.code in ("result_unknown", "idempotency_in_progress"), final.to_json()
    assert final.error.result_known is False, final.to_json()
    assert receipt_state(reg, FOLLOWUP, key) == "unknown"
    assert fault.side_effects_for(key) == 1

    assert fault.wait_idle(5.0)
    fault.clear_scripts()
    later = call(reg, FOLLOWUP, args, approval=approval, timeout_ms=2000)
    assert later.ok, later.to_json()
    assert receipt_state(reg, FOLLOWUP, key) == "completed"
    assert fault.side_effects_for(key) == 1


def test_unhonoured_key_is_sent_exactly_once(tmp_path: Path) -> None:
    with FaultServer(honours_keys=False) as srv:
        tickets_routes(srv)
        srv.script("POST", FOLLOWUPS, Fault.hang(1.0))
        reg = make_registry("tickets", srv.base_url, honoured=False, tweak=fast_retries,
                            receipts=SqliteReceiptStore(tmp_path / "receipts.sqlite3"))
        key = "blind-1"
        args = dict(FOLLOWUP_ARGS, action_id=key)
        approval = approve(reg, FOLLOWUP, args)
        res = call(reg, FOLLOWUP, args, approval=approval, timeout_ms=300)
        assert len(srv.requests_for(key=key)) == 1, "a write the API does not deduplicate was re-sent"
        assert srv.total_side_effects == 1
        assert code(res) == "result_unknown" and res.error is not None, res.to_json()
        assert res.error.result_known is False and res.error.next_step
        assert receipt_state(reg, FOLLOWUP, key) == "unknown"
        again = call(reg, FOLLOWUP, args, approval=approval, timeout_ms=300)
        assert code(again) == "result_unknown", again.to_json()
        assert len(srv.requests_for(key=key)) == 1 and srv.total_side_effects == 1


def test_honoured_key_is_resent_and_written_once(fault: FaultServer) -> None:
    fault.script("POST", FOLLOWUPS, Fault.hang(0.6))
    reg = make_registry("tickets", fault.base_url, honoured=True, tweak=fast_retries)
    key = "resend-1"
    args = dict(FOLLOWUP_ARGS, action_id=key)
    approval = approve(reg, FOLLOWUP, args)
    res = call(reg, FOLLOWUP, args, approval=approval, timeout_ms=300)
    if not res.ok:  # no automatic resend: a retry with the same key is the resend
        assert res.error is not None and res.error.retryable, res.to_json()
        res = call(reg, FOLLOWUP, args, approval=approval, timeout_ms=2000)
    assert res.ok, res.to_json()
    assert len(fault.requests_for(key=key)) >= 2
    assert fault.side_effects_for(key) == 1


# --------------------------------------------------------------------------------------------------
# credentials echoed in success bodies


def test_credential_echoed_in_success_bodies_is_scrubbed(fault: FaultServer, tmp_path: Path) -> None:
    token = SECRETS["TICKETS_TOKEN"]
    fault.script("GET", TICKET_PATH, Fault.echo_auth("subject", "assignee"))
    fault.script("POST", FOLLOWUPS, Fault.echo_auth("id", "ticket_id", "created_at", status=201))
    audit = MemoryAuditSink()
    path = tmp_path / "receipts.sqlite3"
    reg = make_registry("tickets", fault.base_url, receipts=SqliteReceiptStore(path), audit=audit)
    read = call(reg, "get_ticket", {"ticket_id": "T-102"})
    args = dict(FOLLOWUP_ARGS, action_id="echo-1")
    approval = approve(reg, FOLLOWUP, args)
    write = call(reg, FOLLOWUP, args, approval=approval)
    replay = call(reg, FOLLOWUP, args, approval=approval)
    assert all(r.header("Authorization") == f"Bearer {token}" for r in fault.requests), "nothing was echoed"
    assert read.ok and write.ok and replay.ok and replay.replayed, [read.to_json(), write.to_json()]
    outputs = [json.dumps(r.to_json(), ensure_ascii=False) for r in (read, write, replay)]
    events = [json.dumps(e.to_json(), ensure_ascii=False, default=str) for e in audit.events]
    reg.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("receipts.sqlite3*"))
    assert stored, "no receipts file"
    for needle in (token, f"Bearer {token}"):
        for text in outputs:
            assert needle not in text, text[:500]
        for text in events:
            assert needle not in text, text[:500]
        assert needle.encode() not in stored, "the credential was written to the receipts file"


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
    ("crlf-stripe-key", "stripe", lambda: {"idempotency_key": "k\r\nStripe-Account: acct_evil"},
     "/idempotency_key"),
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
    ("deep-100k-label", "github", lambda: {"labels": [{"name": "x", "extra": nest_dict(100_000)}]},
     "/labels"),
    ("nan-label", "github", lambda: {"labels": [{"name": "x", "id": float("nan")}]}, "/labels"),
    ("inf-label", "github", lambda: {"labels": [{"name": "x", "weight": float("-inf")}]}, "/labels"),
    ("int-key-label", "github", lambda: {"labels": [{"name": "x", 7: "y"}]}, "/labels"),
    ("object-label", "github", lambda: {"labels": [{"name": "x", "extra": Opaque()}]}, "/labels"),
    ("bytes-label", "github", lambda: {"labels": [{"name": "x", "extra": b"\x00\xff"}]}, "/labels"),
    ("top-level-int-key", "tickets", lambda: {5: "x"}, None),
]

BASE_ARGS: dict[str, tuple[str, dict[str, Any]]] = {
    "tickets": (FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="hostile-1")),
    "stripe": ("record_refund_charge", {"charge": "ch_1", "amount": 100, "metadata": {"order": "7"},
                                        "idempotency_key": "hostile-2"}),
    "github": ("record_create_issue", {"owner": "octo", "repo": "app", "title": "Crash", "labels": ["bug"],
                                       "action_id": "hostile-3"}),
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
def test_hostile_write_bodies_never_leave_a_pending_receipt(name: str, body: Fault, state: str | None,
                                                            fault: FaultServer, tmp_path: Path) -> None:
    fault.script("POST", FOLLOWUPS, body)
    reg = make_registry("tickets", fault.base_url, honoured=True,
                        receipts=SqliteReceiptStore(tmp_path / "receipts.sqlite3"))
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
    return [{"id": f"T-{n}", "subject": "s" * size, "status": "open", "priority": "low",
             "updated_at": "2025-01-01T00:00:00Z", "body": "b" * size} for n, size in sizes]


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
@given(sizes=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 3000)), max_size=10,
                      unique_by=lambda t: t[0]),
       max_bytes=st.integers(1, 5000), page_size=st.integers(1, 50))
def test_walking_pages_returns_every_item_once_in_order(pager: FaultServer, sizes: list[tuple[int, int]],
                                                        max_bytes: int, page_size: int) -> None:
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
        owner = make_registry("tickets", srv.base_url, honoured=True, receipts=SqliteReceiptStore(path, clock=clock))
        other = make_registry("tickets", srv.base_url, honoured=True, receipts=SqliteReceiptStore(path, clock=clock))
        key, args = "window-1", dict(FOLLOWUP_ARGS, action_id="window-1")
        approval = approve(owner, FOLLOWUP, args)
        done: list[CallResult] = []
        worker = threading.Thread(target=lambda: done.append(call_record(owner, FOLLOWUP, args, actor=actor_for(
            owner, FOLLOWUP), approval=approval)), daemon=True)
        worker.start()
        deadline = time.monotonic() + 5
        while not srv.requests_for(key=key) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert srv.requests_for(key=key), "the owner's request never arrived"
        clock.advance(0.4)  # older than the second caller's own deadline (timeout_ms=50), far inside the owner's
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
        meta: Any = {"toolgen/approval": {"preview_id": shown.structured_content["preview_id"],
                                          "approved_by": "human"}}
        try:
            res = await client.call_tool(FOLLOWUP, {"preview_id": shown.structured_content["preview_id"],
                                                    "action_id": key}, meta=meta)
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
        store_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The key an approval was spent on, presented again once the store forgot its completed
    receipt (``purge``; Redis ``completed_ttl``), against an API that does not deduplicate keys:
    a second upstream write from one approval, before the fix."""
    if store_kind == "memory":
        store: ReceiptStore = MemoryReceiptStore()
    elif store_kind == "sqlite":
        store = SqliteReceiptStore(tmp_path / "receipts.sqlite3")
    elif store_kind == "postgres":
        store = receipts_from_url(f"{request.getfixturevalue('postgres_url')}?table_prefix=pk{uuid.uuid4().hex[:10]}_")
    else:
        store = receipts_from_url(f"{request.getfixturevalue('redis_url')}?prefix=pk-{uuid.uuid4().hex[:10]}:"
                                  "&completed_ttl=1")
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
    res = call(reg, "record_update_customer", dict(args, idempotency_key="br-1"),
               approval=Approval("sha256:" + "0" * 64))
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
