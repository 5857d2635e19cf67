"""What a human approves is what is sent: the preview of a multipart or binary write shows the
content of the body, not only its shape.

A preview's ``request.body`` is what the human reading it (`toolgen approve`, an elicitation, a
host's approval screen) decides on, and an approval covers the request's fingerprint, whatever it
shows. A multipart body was shown as the names of its parts and a binary body as a byte count, so
a model could put any text in a message's ``text`` part, or any bytes in an upload, and the human
approved a list of field names. Here every part is shown with the value it sends, and the bytes of
a binary body with their text when they are UTF-8 (else their count and SHA-256), and a real
server receives exactly that.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from email.parser import BytesParser
from email.policy import HTTP
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import build
from tests.support.profiles import examples
from tests.support.recording_server import Recorded, RecordingServer

from toolgen.runtime import Actor, Approval, Registry

SPEC = """openapi: 3.0.3
info: {title: chat, version: '1'}
servers: [{url: 'https://api.example.com'}]
paths:
  /messages:
    post:
      operationId: postMessage
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema:
              type: object
              required: [channel, text]
              properties:
                channel: {type: string}
                text: {type: string}
                meta: {type: object, properties: {tag: {type: string}}}
                attachment: {type: string, format: binary}
      responses:
        '201':
          description: ok
          content: {application/json: {schema: {type: object, properties: {id: {type: string}}}}}
  /raw:
    put:
      operationId: putRaw
      requestBody:
        required: true
        content:
          application/octet-stream:
            schema: {type: string, format: binary}
      responses:
        '204': {description: ok}
"""

INTENTS = """tools:
  post_message:
    operation: postMessage
    description: Post a message to a channel.
    effect: write
    approval: required
    permission: [chat:write]
    idempotency: {key: action_id, send_as: none}
  put_raw:
    operation: putRaw
    description: Replace the raw document.
    effect: write
    approval: required
    permission: [chat:write]
    idempotency: {key: action_id, send_as: none}
"""

WRITER = Actor.of("writer", ["chat:write"])


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("shown")
    spec = tmp / "openapi.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    return build(tmp, spec, INTENTS, name="chat", emit="mcp,policy").out


@pytest.fixture(scope="module")
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        srv.reply("POST", r"/messages", 201, {"id": "m1"})
        srv.reply("PUT", r"/raw", 204, None)
        yield srv


@pytest.fixture(scope="module")
def registry(package: Path, server: RecordingServer) -> Iterator[Registry]:
    reg = Registry.from_dir(package, base_url=server.base_url, cursor_key=b"k" * 32)
    yield reg
    reg.close()


def _preview_and_send(
    registry: Registry, server: RecordingServer, intent: str, args: dict[str, Any], key: str
) -> tuple[dict[str, Any], Recorded]:
    shown = registry.call(f"preview_{intent}", args, actor=WRITER)
    assert shown.ok and shown.result is not None, shown.to_json()
    pid = str(shown.result["preview_id"])
    assert registry.approvable_request(f"record_{intent}", pid, WRITER.id) == shown.result["request"]
    server.clear()
    sent = registry.call(
        f"record_{intent}", {"preview_id": pid, "action_id": key}, actor=WRITER, approval=Approval(pid)
    )
    assert sent.ok, sent.to_json()
    assert sent.request == shown.result["request"]
    return shown.result["request"], server.requests[-1]


def _parts(recorded: Recorded) -> dict[str, bytes]:
    head = f"Content-Type: {recorded.header('content-type')}\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + recorded.body)
    out: dict[str, bytes] = {}
    for part in message.iter_parts():
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        out[str(part.get_param("name", header="content-disposition"))] = payload
    return out


_TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r"), min_size=1, max_size=40)


@settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_TEXT, tag=_TEXT, attachment=_TEXT)
def test_a_multipart_preview_shows_every_part_as_sent(
    registry: Registry, server: RecordingServer, text: str, tag: str, attachment: str
) -> None:
    args = {"channel": "general", "text": text, "meta": {"tag": tag}, "attachment": attachment}
    shown, wire = _preview_and_send(
        registry, server, "post_message", args, hashlib.sha256(repr(args).encode()).hexdigest()
    )
    parts = shown["body"]["multipart"]
    assert [p["name"] for p in parts] == ["channel", "text", "meta", "attachment"]
    assert {p["name"]: p["value"] for p in parts} == args, "the approver is not shown what is sent"
    received = _parts(wire)
    assert received["text"] == text.encode("utf-8")
    assert received["attachment"] == attachment.encode("utf-8")


def test_a_binary_preview_shows_the_bytes_sent(registry: Registry, server: RecordingServer) -> None:
    shown, wire = _preview_and_send(registry, server, "put_raw", {"body": "DROP TABLE users;"}, "raw-1")
    assert shown["body"] == {
        "bytes": 17,
        "sha256": hashlib.sha256(b"DROP TABLE users;").hexdigest(),
        "text": "DROP TABLE users;",
    }
    assert wire.body == b"DROP TABLE users;"
