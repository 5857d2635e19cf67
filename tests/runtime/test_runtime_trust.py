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
  the audit log (also on replay).

The guarantees under hostile input and faults (`Registry.call` never raises, hostile responses,
pagination, the pending window, MCP, smaller findings) are in `test_runtime_trust_robustness.py`;
the registries and the fault server's routes both use are in `tests.support.trust_registry`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.support.fault_server import Fault, FaultServer
from tests.support.policy_rows import complete_policy, typed_row
from tests.support.recording_server import RecordingServer
from tests.support.records import preview_tool_of
from tests.support.runtime_env import GENERATED
from tests.support.trust_registry import (
    FOLLOWUP,
    FOLLOWUP_ARGS,
    FOLLOWUPS,
    SECRETS,
    TICKET_PATH,
    approve,
    call,
    code,
    fast_retries,
    key_arg,
    make_registry,
    preview,
    receipt_state,
    tickets_routes,
    wire_differences,
)

from toolgen.runtime import (
    Actor,
    Approval,
    MemoryAuditSink,
    MemoryReceiptStore,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
    ToolError,
)
from toolgen.runtime.call.request import build_request
from toolgen.testing.contract import CannotSynthesise, synthesise, valid_args

# --------------------------------------------------------------------------------------------------
# dot segments


DOT_CASES = [
    (
        "stripe",
        "record_update_customer",
        {"customer": "@", "name": "Eve", "idempotency_key": "dot-1"},
        "customer",
    ),
    ("stripe", "get_customer", {"customer": "@"}, "customer"),
    ("stripe", "record_delete_customer", {"customer": "@", "idempotency_key": "dot-2"}, "customer"),
    (
        "github",
        "record_remove_issue_label",
        {"owner": "octo", "repo": "app", "issue_number": 7, "name": "@", "action_id": "dot-3"},
        "name",
    ),
    ("github", "record_delete_repository", {"owner": "octo", "repo": "@", "action_id": "dot-4"}, "repo"),
    ("github", "get_repository", {"owner": "@", "repo": "app"}, "owner"),
]


@pytest.mark.parametrize("value", ["", ".", ".."], ids=["empty", "dot", "dotdot"])
@pytest.mark.parametrize("api,tool,template,arg", DOT_CASES, ids=[f"{c[0]}-{c[1]}-{c[3]}" for c in DOT_CASES])
def test_dot_segment_path_values_are_refused(
    api: str, tool: str, template: dict[str, Any], arg: str, value: str, recorder: RecordingServer
) -> None:
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
    return {
        "tool": "get_item",
        "mode": "read",
        "effect": "read",
        "intent": "get_item",
        "pair": None,
        "operation": {"id": "getItem", "method": "GET", "path": "/items/{id}"},
        "permission": [],
        "approval": "never",
        "idempotency": None,
        "pagination": None,
        "auth": [],
        "retry": {"max_attempts": 1, "backoff_ms": 10, "deadline_ms": 2000, "on": []},
        "timeout_ms": 2000,
        "output": {"fields": [], "max_bytes": 4000, "redact": [], "schema_mode": "warn"},
        "request": {
            "encoding": "none",
            "content_type": None,
            "fixed": [],
            "bindings": [
                {
                    "arg": "id",
                    "in": "path",
                    "name": "id",
                    "style": style,
                    "explode": False,
                    "required": True,
                    "null": "omit",
                }
            ],
        },
        "success_status": [200],
    }


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
def test_styled_path_values_never_reach_the_wire_as_dot_segments(
    style: str, value: str, recorder: RecordingServer
) -> None:
    schema = {
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
        "additionalProperties": False,
    }
    catalog: list[Mapping[str, Any]] = [{"name": "get_item", "inputSchema": schema}]
    reg = Registry(
        complete_policy({"api": "units", "base_url": recorder.base_url, "tools": [_styled_row(style)]}),
        catalog,
        credentials=StaticCredentials({}),
        receipts=MemoryReceiptStore(),
        cursor_key=b"u" * 32,
    )
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
        out += [
            (api, str(r["tool"]))
            for r in policy["tools"]
            if r.get("mode") == "record" and not r.get("composite")
        ]
    return out


ARG_EXAMPLES: dict[str, Any] = {
    "ticket_id": "T-102",
    "owner": "octo-org",
    "repo": "hello.world",
    "customer": "cus_123",
    "charge": "ch_9",
    "intent": "pi_42",
    "payment_intent": "pi_42",
    "metadata": {"zeta": "1", "alpha": "two words"},
    "issue_number": 42,
    "pull_number": 7,
    "name": "needs triage",
    "note": "Called back.",
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
    props = spec.input_schema.get("properties") or {}
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
    secret = next(
        v for k, v in SECRETS.items() if any(a.get("secret") == k for a in reg.row_json(tool)["auth"])
    )
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
    res = call(
        reg, tool, dict(reordered, idempotency_key="order-1"), approval=Approval(shown.result["preview_id"])
    )
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
    res = call(
        github,
        "record_create_issue",
        dict(swapped, action_id="order-2"),
        approval=Approval(shown.result["preview_id"]),
    )
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
        srv.script(
            "POST",
            FOLLOWUPS,
            Fault.hang(0.6),
            *[Fault.answer(400, {"error": {"type": "invalid_request_error", "message": "bad"}})] * 6,
        )


@pytest.mark.parametrize("second", ["key_in_use", "429", "400"])
def test_result_knowledge_is_monotonic(second: str, fault: FaultServer, tmp_path: Path) -> None:
    _unknown_then(fault, second)
    reg = make_registry(
        "tickets",
        fault.base_url,
        honoured=True,
        tweak=fast_retries,
        receipts=SqliteReceiptStore(tmp_path / "receipts.sqlite3"),
    )
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
        reg = make_registry(
            "tickets",
            srv.base_url,
            honoured=False,
            tweak=fast_retries,
            receipts=SqliteReceiptStore(tmp_path / "receipts.sqlite3"),
        )
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
