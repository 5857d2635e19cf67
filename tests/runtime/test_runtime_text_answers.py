"""An API that answers text where its spec promises JSON must not carry past the output policy
what the intent map keeps from the model.

``output.fields`` (else the properties the output schema declares) and ``output.redact`` apply to a
JSON answer. An API that drifts to another representation — XML because the client's ``Accept:
*/*`` let it choose (a Spring service with an XML converter does), a CSV export, a plain-text dump —
was returned whole as ``{"result": "<person>…<ssn>123-45-6789</ssn><salary>…"}``: the redacted member
and every member the projection drops, without a warning. Such an answer is not readable as the
tool's result, and none of it is returned: a read is ``output_invalid`` in ``strict`` output mode and
otherwise a success with a warning; a write is a known success (its receipt completed) whose result
says its body could not be read, with the excerpt withheld (the tool redacts members of its output).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import build
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer

from toolgen.runtime import Actor, Approval, Registry

SPEC = """openapi: 3.0.3
info: {title: people, version: '1'}
servers: [{url: 'https://api.example.com'}]
components:
  schemas:
    Person:
      type: object
      properties:
        name: {type: string}
        ssn: {type: string}
        salary: {type: integer}
paths:
  /people/{id}:
    get:
      operationId: getPerson
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        '200':
          description: ok
          content: {application/json: {schema: {$ref: '#/components/schemas/Person'}}}
    put:
      operationId: putPerson
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      requestBody:
        required: true
        content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}
      responses:
        '200':
          description: ok
          content: {application/json: {schema: {$ref: '#/components/schemas/Person'}}}
"""

INTENTS = """tools:
  get_person:
    operation: getPerson
    description: Get a person's name.
    effect: read
    permission: [people:read]
    output: {fields: [name, ssn], redact: [ssn]}
  rename_person:
    operation: putPerson
    description: Rename a person.
    effect: write
    approval: required
    permission: [people:write]
    idempotency: {key: action_id, send_as: none}
    output: {fields: [name, ssn], redact: [ssn]}
"""

SSN, SALARY = "123-45-6789", "987654"
ACTOR = Actor.of("hr", ["people:read", "people:write"])
TEXT_ANSWERS = [
    ("application/xml", f"<person><name>Bob</name><ssn>{SSN}</ssn><salary>{SALARY}</salary></person>"),
    ("text/xml; charset=utf-8", f"<person name='Bob' ssn='{SSN}' salary='{SALARY}'/>"),
    ("text/csv", f"name,ssn,salary\nBob,{SSN},{SALARY}"),
    ("text/plain", f"name=Bob ssn={SSN} salary={SALARY}"),
    ("application/problem+xml", f"<p><ssn>{SSN}</ssn><salary>{SALARY}</salary></p>"),
]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("text-answers")
    spec = tmp / "openapi.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    return build(tmp, spec, INTENTS, name="people", emit="mcp,policy").out


@pytest.fixture(scope="module")
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def registry(package: Path, server: RecordingServer) -> Iterator[Registry]:
    reg = Registry.from_dir(package, base_url=server.base_url, cursor_key=b"k" * 32)
    yield reg
    reg.close()


def _leaks(text: str) -> bool:
    return SSN in text or SALARY in text


@pytest.mark.parametrize("ctype,body", TEXT_ANSWERS, ids=[c for c, _ in TEXT_ANSWERS])
def test_a_text_answer_to_a_read_is_never_returned_past_its_output_policy(
    registry: Registry, server: RecordingServer, ctype: str, body: str
) -> None:
    server.reply("GET", r"/people/", 200, body.encode(), content_type=ctype)
    res = registry.call("get_person", {"id": "p1"}, actor=ACTOR)
    shown = json.dumps(res.to_json(), ensure_ascii=False)
    assert not _leaks(shown), f"the answer's redacted or unprojected members reached the model: {shown[:300]}"
    assert res.ok and res.warnings and res.result is not None, shown[:300]
    assert res.result["_unreadable_body"]["excerpt"] == "[withheld: the tool redacts members of its output]"


def test_a_json_answer_is_projected_and_redacted(registry: Registry, server: RecordingServer) -> None:
    server.reply("GET", r"/people/", 200, {"name": "Bob", "ssn": SSN, "salary": int(SALARY)})
    res = registry.call("get_person", {"id": "p1"}, actor=ACTOR)
    assert res.ok and res.result == {"name": "Bob", "ssn": "[redacted]"}, res.to_json()


@pytest.mark.parametrize("ctype,body", TEXT_ANSWERS[:2], ids=[c for c, _ in TEXT_ANSWERS[:2]])
def test_a_text_answer_to_a_write_is_never_returned(
    registry: Registry, server: RecordingServer, ctype: str, body: str
) -> None:
    server.reply("PUT", r"/people/", 200, body.encode(), content_type=ctype)
    shown = registry.call("preview_rename_person", {"id": "p1", "name": f"Rob {ctype}"}, actor=ACTOR)
    assert shown.ok and shown.result is not None, shown.to_json()
    pid = str(shown.result["preview_id"])
    res = registry.call(
        "record_rename_person",
        {"preview_id": pid, "action_id": f"rename-{ctype}"},
        actor=ACTOR,
        approval=Approval(pid),
    )
    text = json.dumps(res.to_json(), ensure_ascii=False)
    assert not _leaks(text), text[:300]
    assert res.ok and res.result is not None and res.result["status"] == 200 and res.warnings, text[:300]


@settings(
    max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ctype=st.sampled_from(
        [
            "text/plain",
            "text/html",
            "application/xml",
            "text/markdown",
            "application/yaml",
            "application/octet-stream",
            "",
            "*/*",
            "text/x-anything",
        ]
    ),
    prefix=st.text(max_size=20),
)
def test_no_answer_carries_a_redacted_member_to_the_model(
    registry: Registry, server: RecordingServer, ctype: str, prefix: str
) -> None:
    server.reply(
        "GET", r"/people/", 200, f"{prefix} ssn: {SSN} salary: {SALARY}".encode(), content_type=ctype
    )
    res = registry.call("get_person", {"id": "p1"}, actor=ACTOR)
    assert not _leaks(json.dumps(res.to_json(), ensure_ascii=False)), res.to_json()


@pytest.mark.parametrize("status", [400, 404, 409, 500])
def test_a_text_error_body_never_carries_a_redacted_member(
    registry: Registry, server: RecordingServer, status: int
) -> None:
    """An error page is shown as a 200-character excerpt; text cannot be redacted, so a tool whose
    output redacts members shows none of it (a JSON problem body is redacted member by member)."""
    server.reply(
        "GET", r"/people/", status, f"<error><ssn>{SSN}</ssn></error>".encode(), content_type="text/xml"
    )
    res = registry.call("get_person", {"id": "p1"}, actor=ACTOR)
    assert res.error is not None and res.error.details.get("status") == status, res.to_json()
    assert SSN not in json.dumps(res.to_json(), ensure_ascii=False), res.to_json()
    server.reply("GET", r"/people/", status, {"detail": "bad", "errors": [{"person": {"ssn": SSN}}]})
    res = registry.call("get_person", {"id": "p1"}, actor=ACTOR)
    assert res.error is not None and SSN not in json.dumps(res.to_json(), ensure_ascii=False), res.to_json()
