"""A redirect whose ``Location`` carries userinfo is never followed (docs/runtime.md, redirects).

A read whose only declared success is a redirect follows it on the API's own origin. A hostile API
answered ``302`` with ``Location: http://intruder:pw@<the same host and port>/landed``: scheme, host
and port matched, so the hop was sent, and the HTTP client turned the userinfo into an
``Authorization: Basic`` header in place of the call's own credential (the call then read the API
as whoever the Location named, and the result named that userinfo as where it landed). The
paginator's origin check already refused userinfo; the redirect step now uses the same check, so
such a target is not followed and the declared redirect is the answer. Against a real loopback
server; a plain same-origin redirect is still followed with the call's own credential.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import Built, build
from tests.support.recording_server import RecordingServer

from toolgen.runtime.call.credentials import StaticCredentials
from toolgen.runtime.serving.registry import Actor, Registry

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Moves", "version": "1"},
    "servers": [{"url": "https://moves.example.com"}],
    "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
    "security": [{"bearer": []}],
    "paths": {
        "/moved": {
            "get": {
                "operationId": "getMoved",
                "responses": {
                    "302": {"description": "moved", "headers": {"Location": {"schema": {"type": "string"}}}}
                },
            }
        }
    },
}
MAP = "tools:\n  get_moved:\n    operation: getMoved\n    effect: read\n    permission: moves:read\n"
TOKEN = "tok-moves-0123456789"


@pytest.fixture(scope="module")
def moves(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp: Path = tmp_path_factory.mktemp("moves")
    spec = tmp / "moves.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    return build(tmp, spec, MAP, name="moves", emit="mcp,policy,report")


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


def _call(built: Built, server: RecordingServer) -> Any:
    reg = Registry.from_dir(
        built.out, base_url=server.base_url, credentials=StaticCredentials({"MOVES_TOKEN": TOKEN})
    )
    try:
        return reg.call("get_moved", {}, actor=Actor.of("tester", {"moves:read"}))
    finally:
        reg.close()


def _authorizations(server: RecordingServer) -> list[str]:
    return [
        next((v for k, v in r.headers.items() if k.lower() == "authorization"), "") for r in server.requests
    ]


@pytest.mark.parametrize("userinfo", ["intruder:pw@", "intruder@", ":pw@"])
def test_a_location_with_userinfo_is_not_followed(
    moves: Built, server: RecordingServer, userinfo: str
) -> None:
    assert moves.row("get_moved")["output"]["redirect"] == "follow"
    target = server.base_url.replace("http://", f"http://{userinfo}", 1) + "/landed"
    server.reply("GET", "^/moved$", 302, None, headers={"Location": target})
    server.reply("GET", "^/landed$", 200, {"account": "intruder"})
    out = _call(moves, server)
    assert [r.path for r in server.requests] == ["/moved"], _authorizations(server)
    assert out.ok and out.result == {"status": 302, "location": target}, out.to_json()


def test_a_plain_same_origin_location_is_followed_with_the_call_credential(
    moves: Built, server: RecordingServer
) -> None:
    server.reply("GET", "^/moved$", 302, None, headers={"Location": "/landed"})
    server.reply("GET", "^/landed$", 200, {"account": "caller"})
    out = _call(moves, server)
    assert [r.path for r in server.requests] == ["/moved", "/landed"]
    assert _authorizations(server) == [f"Bearer {TOKEN}"] * 2
    assert out.ok and out.result == {
        "status": 200,
        "location": f"{server.base_url}/landed",
        "body": {"account": "caller"},
    }, out.to_json()
