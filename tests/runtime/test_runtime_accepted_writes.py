"""A write the API accepted (HTTP 2xx) is a known success, whatever its answer's body looks like.

Jira answers several writes (``createComponent``, ``addGadget``, ``createCustomFieldOption``) with a
JSON string, or text labelled JSON, where its spec declares an object. The runtime used to call
such an answer ``result_unknown`` and leave the receipt ``unknown``: a same-key retry answered
``result_unknown`` forever, and an agent was told a write that succeeded may not have happened.

Here a real loopback server answers a write with each body that cannot be shaped (a JSON string, a
JSON number, text labelled JSON, an empty body, a body cut short — complete by its length, or by
a connection closed early —, invalid UTF-8, a lone surrogate, an HTML page), with 200, 201 and 204,
over every receipt store: the result is ``ok`` with the status and a warning that names the problem
with a bounded excerpt from which the call's secret is scrubbed; the receipt is ``completed``; a
replay with the same key returns the same result and warning and sends nothing. A read keeps
``output_invalid`` where its ``output.schema_mode`` is ``strict`` and warns otherwise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import build
from tests.support.fault_server import Fault, FaultServer
from tests.support.profiles import examples
from tests.support.raw_answer_server import RawAnswerServer
from tests.support.runtime_env import WRITER, tickets_dir

from toolgen.runtime import Actor, Approval, MemoryReceiptStore, ReceiptStore, Registry, StaticCredentials
from toolgen.runtime.call import credentials as creds
from toolgen.runtime.call.response_body import EXCERPT_CHARS, excerpt
from toolgen.runtime.pipeline.idempotency import step_key

TOKEN = "tok-4f1c9a7e2b"
SPEC = """openapi: 3.0.3
info: {title: jira slice, version: '1'}
servers: [{url: 'https://jira.example.com'}]
components:
  securitySchemes:
    basic: {type: http, scheme: bearer}
  schemas:
    Component:
      type: object
      properties:
        id: {type: string}
        name: {type: string}
        self: {type: string}
security: [{basic: []}]
paths:
  /rest/api/3/component:
    post:
      operationId: createComponent
      requestBody:
        required: true
        content: {application/json: {schema: {type: object, required: [name], properties: {name: {type: string}}}}}
      responses:
        '201':
          description: created
          content: {application/json: {schema: {$ref: '#/components/schemas/Component'}}}
  /rest/api/3/component/{id}:
    get:
      operationId: getComponent
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        '200':
          description: ok
          content: {application/json: {schema: {$ref: '#/components/schemas/Component'}}}
"""
INTENTS = """auth: {basic: {secret: JIRA_TOKEN}}
tools:
  create_component:
    operation: createComponent
    description: Create a project component.
    effect: write
    approval: never
    permission: [project:write]
    record: {arguments: full}
    idempotency: {key: action_id, send_as: "header:Idempotency-Key"}
  get_component:
    operation: getComponent
    description: Get a component.
    effect: read
    permission: [project:read]
  get_component_strict:
    operation: getComponent
    description: Get a component, refusing an answer that is not one.
    effect: read
    permission: [project:read]
    output: {schema_mode: strict}
"""
ACTOR = Actor.of("agent", ["project:write", "project:read"])

#: (name, body, Content-Type, claimed Content-Length or None); each cannot be shaped as a Component
BODIES: list[tuple[str, bytes, str | None, int | None]] = [
    ("json-string", f'"Component created by {TOKEN}"'.encode(), "application/json", None),
    ("json-number", b"10000", "application/json;charset=UTF-8", None),
    ("text-labelled-json", f"Component created ({TOKEN})".encode(), "application/json", None),
    ("empty", b"", "application/json", None),
    ("truncated", b'{"id": "10000", "name": "Comp', "application/json", None),
    ("cut-connection", b'{"id": "10000", "na', "application/json", 400),
    ("invalid-utf8", b'{"id": "10000", "name": "\xff\xfe\xc3"}', "application/json", None),
    ("lone-surrogate", b'{"id": "10000", "name": "a\\ud800b", "self": "\\udfff"}', "application/json", None),
    ("html", b"<html><body>Created " + TOKEN.encode() + b"</body></html>", "text/html", None),
    ("long-text", b"x" * 50_000, "application/json", None),
    ("utf16-echo", json.dumps({"name": f"debug {TOKEN}"}).encode("utf-16"), "application/json", None),
    (
        "escaped-echo",
        b'{"name": "debug \\u' + f"{ord(TOKEN[0]):04x}".encode() + TOKEN[1:].encode() + b'"',
        "application/json",
        None,
    ),
]

#: bodies the runtime reads after all: no body (``{"result": null}``, which the schema admits), and valid
#: JSON escaping an unpaired surrogate (read with U+FFFD in its place)
READABLE = ("empty", "lone-surrogate")


def accepted_package(tmp: Path) -> Path:
    """The Jira-shaped package these tests call, built in `tmp`."""
    spec = tmp / "openapi.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    return build(tmp, spec, INTENTS, name="jira", emit="mcp,policy").out


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return accepted_package(tmp_path_factory.mktemp("accepted-writes"))


@pytest.fixture(scope="module")
def server() -> Iterator[RawAnswerServer]:
    with RawAnswerServer() as srv:
        yield srv


def _registry(package: Path, server: RawAnswerServer, store: ReceiptStore) -> Registry:
    return Registry.from_dir(
        package,
        base_url=server.base_url,
        receipts=store,
        credentials=StaticCredentials({"JIRA_TOKEN": TOKEN}),
        cursor_key=b"k" * 32,
    )


def _plain(text: str) -> str:
    """`text` as a reader could read it: NULs (a UTF-16 body read as UTF-8) and JSON escapes undone."""
    return text.replace("\\u0000", "").replace("\x00", "").encode("utf-8").decode("unicode_escape", "replace")


def _write(reg: Registry, key: str) -> dict[str, object]:
    res = reg.call("record_create_component", {"name": "Comp", "action_id": key}, actor=ACTOR)
    return res.to_json()


@pytest.mark.parametrize("status", [200, 201, 204])
@pytest.mark.parametrize("name,body,ctype,length", BODIES, ids=[b[0] for b in BODIES])
def test_a_write_answered_2xx_completes_its_receipt_whatever_its_body(
    package: Path,
    server: RawAnswerServer,
    any_receipt_store: ReceiptStore,
    status: int,
    name: str,
    body: bytes,
    ctype: str | None,
    length: int | None,
) -> None:
    reg = _registry(package, server, any_receipt_store)
    try:
        server.answer(status, body, content_type=ctype, length=length)
        key = f"k-{name}-{status}"
        first = _write(reg, key)
        text = json.dumps(first, ensure_ascii=False)
        assert first["ok"] is True, text[:600]
        assert TOKEN not in _plain(text), f"the call's secret reached the result: {text[:600]}"
        assert len(text) < 3000, f"the excerpt is not bounded ({len(text)} characters)"
        text.encode("utf-8")  # no lone surrogate reaches the result
        result = first["result"]
        assert isinstance(result, dict) and result.get("status", status) == status, text[:600]
        if status == 204 or name in READABLE:
            assert not first.get("warnings"), text[:600]
        else:
            assert first.get("warnings"), f"an unreadable answer must say so: {text[:600]}"
        if name == "lone-surrogate" and status != 204:
            assert result == {"id": "10000", "name": "a\ufffdb", "self": "\ufffd"}, text[:600]
        receipt = any_receipt_store.get("jira/record_create_component", key)
        assert receipt is not None and receipt.state == "completed", receipt
        sent = server.requests
        again = _write(reg, key)
        assert again["ok"] is True and again["replayed"] is True, again
        assert server.requests == sent, "a replay sent the write again"
        assert again["result"] == first["result"] and again.get("warnings") == first.get("warnings"), (
            first,
            again,
        )
    finally:
        reg.close()


@pytest.mark.parametrize("name,body,ctype,length", BODIES, ids=[b[0] for b in BODIES])
def test_a_read_refuses_an_unreadable_answer_only_in_strict_mode(
    package: Path, server: RawAnswerServer, name: str, body: bytes, ctype: str | None, length: int | None
) -> None:
    reg = _registry(package, server, MemoryReceiptStore())
    try:
        server.answer(200, body, content_type=ctype, length=length)
        strict = reg.call("get_component_strict", {"id": "10000"}, actor=ACTOR).to_json()
        warned = reg.call("get_component", {"id": "10000"}, actor=ACTOR).to_json()
        text = json.dumps(warned, ensure_ascii=False)
        text.encode("utf-8")
        if name in READABLE:
            assert strict["ok"] is True and warned["ok"] is True and not warned.get("warnings"), (
                strict,
                warned,
            )
        else:
            assert strict["ok"] is False and strict["error"]["code"] == "output_invalid", strict
            assert warned["ok"] is True and warned.get("warnings"), text[:600]
        assert TOKEN not in _plain(text) and TOKEN not in _plain(json.dumps(strict, ensure_ascii=False))
    finally:
        reg.close()


# --------------------------------------------------------------------------------------------------
# a composite's write step: its step state and its receipt record the success


def _ticket() -> dict[str, object]:
    return {
        "id": "T-102",
        "subject": "Printer on fire",
        "status": "open",
        "priority": "high",
        "requester": {"email": "user@example.com", "name": "User", "phone": "+1-555-0100"},
        "assignee": None,
        "tags": [],
        "followup_count": 0,
        "updated_at": "2025-02-01T11:00:00Z",
        "body": "text",
    }


STEP_BODIES = [
    b
    for b in BODIES
    if b[0] in ("json-string", "text-labelled-json", "truncated", "invalid-utf8", "html", "lone-surrogate")
]


@pytest.mark.parametrize("name,body,ctype,length", STEP_BODIES, ids=[b[0] for b in STEP_BODIES])
def test_a_composite_write_step_answered_2xx_is_done_whatever_its_body(
    any_receipt_store: ReceiptStore, name: str, body: bytes, ctype: str | None, length: int | None
) -> None:
    with FaultServer(honours_keys=False) as fault:
        fault.route("GET", r"^/v1/tickets/T-[0-9]+$", body=_ticket())
        fault.route(
            "POST", r"^/v1/tickets/T-[0-9]+/followups$", status=201, body=lambda req, n: {"id": f"F-{n}"}
        )
        fault.script(
            "POST",
            r"^/v1/tickets/T-[0-9]+/followups$",
            Fault("reply", status=201, body=body, content_type=ctype or "application/json", write=True),
        )
        reg = Registry.from_dir(
            tickets_dir(),
            base_url=fault.base_url + "/v1",
            receipts=any_receipt_store,
            credentials=StaticCredentials({"TICKETS_TOKEN": "tok"}),
            cursor_key=b"k" * 32,
        )
        try:
            args = {"ticket_id": "T-102", "reason": "Customer waiting."}
            shown = reg.call("preview_escalate_ticket", args, actor=WRITER)
            assert shown.ok and shown.result is not None, shown.to_json()
            pid = str(shown.result["preview_id"])
            key = f"esc-{name}"
            first = reg.call(
                "record_escalate_ticket",
                {"preview_id": pid, "action_id": key},
                actor=WRITER,
                approval=Approval(pid),
            ).to_json()
            note = step_key("record_escalate_ticket", key, "note")
            step = any_receipt_store.get("tickets/record_escalate_ticket.note", note)
            assert step is not None and step.state == "completed", (step, first)
            record = any_receipt_store.get("tickets/record_escalate_ticket", key)
            assert first["ok"] is True and record is not None and record.state == "completed", (record, first)
            steps = {s["id"]: s for s in first["result"]["steps"]}
            assert steps["note"]["state"] == "done", first
            if name == "lone-surrogate":  # read, with U+FFFD in place of each unpaired surrogate
                assert "warning" not in steps["note"] and first["result"]["note"]["name"] == "a\ufffdb", first
            else:
                assert "cannot be read" in steps["note"]["warning"], first
            json.dumps(first, ensure_ascii=False).encode("utf-8")
            writes = fault.side_effects_for(note)
            again = reg.call(
                "record_escalate_ticket",
                {"preview_id": pid, "action_id": key},
                actor=WRITER,
                approval=Approval(pid),
            ).to_json()
            assert fault.side_effects_for(note) == writes == 1, "the step was sent again"
            assert again["ok"] is True and again["replayed"] is True and again["result"] == first["result"], (
                again
            )
        finally:
            reg.close()


# --------------------------------------------------------------------------------------------------
# the property: any JSON text, with any escapes, is read without raising, and completes a write

_ESCAPE = st.integers(0, 0xFFFF).map(lambda unit: f"\\u{unit:04x}" if unit % 2 else f"\\u{unit:04X}")
_PIECE = st.one_of(
    _ESCAPE,
    st.text(st.characters(exclude_characters='"\\', exclude_categories=("Cs", "Cc")), max_size=4),
    st.sampled_from(["\\n", "\\\\", '\\"', "\\/"]),
)
_STRING = st.lists(_PIECE, max_size=8).map(lambda parts: '"' + "".join(parts) + '"')
_JSON_TEXT = st.recursive(
    st.one_of(_STRING, st.sampled_from(["1", "-0.5", "true", "null"])),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda items: "[" + ",".join(items) + "]"),
        st.lists(st.tuples(_STRING, inner), max_size=4).map(
            lambda pairs: "{" + ",".join(f"{k}:{v}" for k, v in pairs) + "}"
        ),
    ),
    max_leaves=12,
)


@settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_JSON_TEXT, status=st.sampled_from([200, 201]), ctype=st.sampled_from(["application/json", None]))
def test_any_json_text_is_read_without_raising_and_completes_a_write(
    package: Path, server: RawAnswerServer, text: str, status: int, ctype: str | None
) -> None:
    body = text.encode("utf-8")
    json.loads(text)  # valid JSON, lone surrogates included
    reg = _registry(package, server, MemoryReceiptStore())
    try:
        server.answer(status, body, content_type=ctype)
        read = reg.call("get_component", {"id": "10000"}, actor=ACTOR)
        json.dumps(read.to_json(), ensure_ascii=False).encode("utf-8")  # no lone surrogate reaches a result
        assert read.error is None or read.error.code != "internal_error", read.to_json()
        key = f"k-{hashlib.sha256(body).hexdigest()[:16]}-{status}-{ctype}"
        write = reg.call("record_create_component", {"name": "Comp", "action_id": key}, actor=ACTOR)
        json.dumps(write.to_json(), ensure_ascii=False).encode("utf-8")
        assert write.ok, write.to_json()
        receipt = reg.receipts.get("jira/record_create_component", key)
        assert receipt is not None and receipt.state == "completed", receipt
    finally:
        reg.close()


ASYNC_BODIES = [b for b in BODIES if b[0] in ("cut-connection", "json-string")]


@pytest.mark.anyio
@pytest.mark.parametrize("name,body,ctype,length", ASYNC_BODIES, ids=[b[0] for b in ASYNC_BODIES])
async def test_the_async_driver_completes_the_receipt_too(
    package: Path, server: RawAnswerServer, name: str, body: bytes, ctype: str | None, length: int | None
) -> None:
    reg = _registry(package, server, MemoryReceiptStore())
    try:
        server.answer(201, body, content_type=ctype, length=length)
        res = await reg.acall(
            "record_create_component", {"name": "Comp", "action_id": f"a-{name}"}, actor=ACTOR
        )
        assert res.ok and res.warnings and res.status == 201, res.to_json()
        receipt = reg.receipts.get("jira/record_create_component", f"a-{name}")
        assert receipt is not None and receipt.state == "completed", receipt
    finally:
        reg.close()


@settings(max_examples=examples(300), deadline=None)
@given(
    before=st.text(max_size=300),
    after=st.text(max_size=300),
    secret=st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=6, max_size=40),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-16-le", "utf-32", "latin-1"]),
    declared=st.booleans(),
)
def test_an_excerpt_never_shows_a_secret_and_is_bounded(
    before: str, after: str, secret: str, encoding: str, declared: bool
) -> None:
    """Whatever the text around it and however the body is encoded (declared in ``charset`` or not),
    the excerpt of a body echoing the call's secret shows it in no readable form."""
    try:
        content = (before + secret + after).encode(encoding)
    except UnicodeEncodeError:
        content = (
            before.encode(encoding, "replace") + secret.encode(encoding) + after.encode(encoding, "replace")
        )
    headers = httpx.Headers(
        {"content-type": f"text/plain; charset={encoding}" if declared else "application/json"}
    )
    shown = excerpt(creds.scrub_bytes(content, [secret]), headers, [secret])
    assert len(shown) <= EXCERPT_CHARS + 1
    assert secret not in _plain(json.dumps(shown, ensure_ascii=False)), shown
    assert secret not in shown.replace("\x00", "").replace("\ufffd", "")
