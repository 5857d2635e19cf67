"""An answer whose JSON holds JSON again as a string (a spec whose examples are strings holding JSON,
Xero's style, answered as written by a mock such as Prism's static mode): the error says where (the
JSON pointer in the answer), what the spec declares there and what came (a string holding a JSON
object), and what to do, instead of a bare ``output_invalid``."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import load_package

from toolgen.runtime import MemoryAuditSink, Registry, StaticCredentials
from toolgen.runtime.serving.mcp_server import conforming
from toolgen.runtime.serving.registry import Actor

READER = Actor.of("reader", "ticket:read")
TICKET = {
    "id": "T-1",
    "subject": "Printer",
    "status": "open",
    "priority": "low",
    "requester": {"email": "a@example.com", "name": "A"},
}
PRISM = Path.home() / ".cache" / "toolgen-corpus" / "node_modules" / ".bin" / "prism"


@pytest.fixture
def echo() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


def _call(echo: RecordingServer, body: Any, *, strict: bool = False, mcp: bool = True) -> dict[str, Any]:
    """get_ticket answered `body`: the runtime's result (as the MCP server sends it when `mcp`), with
    the tool's ``output.schema_mode`` ``strict`` when `strict` (else the package's ``warn``)."""
    echo.reply("GET", "/v1/tickets/", body=json.dumps(body).encode("utf-8"), content_type="application/json")
    policy, catalog = load_package("tickets")
    for row in policy["tools"]:
        if strict:
            row["output"]["schema_mode"] = "strict"
    with Registry(
        policy,
        list(catalog),
        base_url=echo.base_url + "/v1",
        audit=MemoryAuditSink(),
        credentials=StaticCredentials({"TICKETS_TOKEN": "t" * 20}),
        cursor_key=b"k" * 32,
    ) as reg:
        result = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
        return (conforming(reg, result) if mcp else result).to_json()


def _says_what_and_where(text: str, pointer: str) -> None:
    assert f"at {pointer}" in text, text
    assert "a string holding a JSON object" in text, text
    assert "declares an object" in text, text
    assert "examples" in text and "prism mock -d" in text, text


def test_a_whole_answer_that_is_a_string_holding_json_is_named(echo: RecordingServer) -> None:
    warned = _call(
        echo, json.dumps(TICKET), mcp=False
    )  # warn mode: a success that says what it could not read
    assert warned["ok"] is True and "_unreadable_body" in warned["result"], warned
    _says_what_and_where(" ".join(warned["warnings"]), "/")
    served = _call(echo, json.dumps(TICKET))  # over MCP: output_invalid, the call known to have succeeded
    assert (
        served["error"]["code"] == "output_invalid" and served["error"]["details"]["call_succeeded"] is True
    )
    _says_what_and_where(served["error"]["message"], "/")
    strict = _call(echo, json.dumps(TICKET), strict=True)
    assert strict["error"]["code"] == "output_invalid" and strict["error"]["details"]["pointer"] == "/", (
        strict
    )
    _says_what_and_where(strict["error"]["message"], "/")


def test_a_member_that_is_a_string_holding_json_is_named(echo: RecordingServer) -> None:
    out = _call(echo, dict(TICKET, requester=json.dumps(TICKET["requester"])))
    assert out["error"]["code"] == "output_invalid"
    _says_what_and_where(out["error"]["message"], "/requester")
    strict = _call(echo, dict(TICKET, requester=json.dumps(TICKET["requester"])), strict=True)
    assert strict["error"]["details"]["pointer"] == "/requester"
    _says_what_and_where(strict["error"]["message"], "/requester")


def test_plain_text_where_json_is_declared_keeps_its_own_message(echo: RecordingServer) -> None:
    out = _call(echo, "just words")
    assert out["error"]["code"] == "output_invalid"
    assert (
        "holding" not in out["error"]["message"]
        and "text where the tool's output is JSON" in out["error"]["message"]
    )


@pytest.mark.skipif(not PRISM.exists(), reason="Prism (@stoplight/prism-cli) is not installed")
def test_against_prism_static_mode_a_xero_style_example_is_named(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Xero-style", "version": "1"},
        "servers": [{"url": "https://api.xero.example/api.xro/2.0"}],
        "paths": {
            "/Accounts/{AccountID}": {
                "get": {
                    "operationId": "getAccount",
                    "summary": "Get one account",
                    "parameters": [
                        {"name": "AccountID", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Accounts"},
                                    "example": json.dumps(
                                        {
                                            "Id": "ce8b6f30",
                                            "Status": "OK",
                                            "Accounts": [{"AccountID": "ebd06280", "Code": "970"}],
                                        }
                                    ),
                                }
                            },
                        }
                    },
                }
            }
        },
        "components": {
            "schemas": {
                "Accounts": {
                    "type": "object",
                    "properties": {
                        "Id": {"type": "string"},
                        "Status": {"type": "string"},
                        "Accounts": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"AccountID": {"type": "string"}, "Code": {"type": "string"}},
                            },
                        },
                    },
                }
            }
        },
    }
    (tmp_path / "xero.json").write_text(json.dumps(spec), encoding="utf-8")
    toolgen = [sys.executable, "-m", "toolgen"]
    for args in (["init", "xero.json"], ["build"]):
        done = subprocess.run(
            [*toolgen, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, done.stderr
    port = _free_port()
    with (tmp_path / "prism.log").open("w", encoding="utf-8") as log:
        prism = subprocess.Popen(
            [str(PRISM), "mock", "xero.json", "-p", str(port), "-h", "127.0.0.1"],
            cwd=tmp_path,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while "Prism is listening" not in (tmp_path / "prism.log").read_text(
            encoding="utf-8", errors="replace"
        ):
            assert prism.poll() is None and time.monotonic() < deadline, (tmp_path / "prism.log").read_text()
            time.sleep(0.2)
        done = subprocess.run(
            [
                *toolgen,
                "call",
                "xero",
                "get_account",
                "--args",
                '{"AccountID": "a"}',
                "--scopes",
                "xero:read",
                "--base-url",
                f"http://127.0.0.1:{port}",
                "--receipts",
                "memory://",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        prism.terminate()
        prism.wait(10)
    assert done.returncode == 0, done.stderr  # a success whose body could not be shaped, and says why
    _says_what_and_where(" ".join(json.loads(done.stdout)["warnings"]), "/")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port
