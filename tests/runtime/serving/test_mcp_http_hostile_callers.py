"""A hostile caller of `toolgen serve --http` with real tokens of the loopback authorization server,
over real HTTP and the MCP SDK's client: what it types comes back bounded, and it is only ever the
caller its verified token names.

- an unknown tool's name (100,000 characters, with a line break and a bidirectional override) is
  echoed in the JSON-RPC error at most `UNKNOWN_TOOL_SHOWN` characters long, escaped, with its
  length and digest; the error's ``data`` carries the registered code ``unknown_tool``;
- a token in the query string (``?access_token=``, RFC 6750 §2.3, which MCP forbids) or in the
  request body is no token: 401; with a valid token in the header, the caller is the header's, and
  an ``X-Actor``/``Mcp-Actor`` header naming another ``jwt:`` caller changes nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from tests.support.http_serving import http_server
from tests.support.runtime_env import tickets_dir

from toolgen.runtime import MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.serving.access_tokens import JwtVerifier
from toolgen.runtime.serving.mcp_server import UNKNOWN_TOOL_SHOWN
from toolgen.testing.tickets_server import TicketsServer

pytest.importorskip("mcp")
pytest.importorskip("authlib")
httpx2 = pytest.importorskip("httpx2")

from tests.support.authorization_server import AuthorizationServer as LoopbackAS

RESOURCE = "https://tools.example.test/mcp"
JSON_RPC = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def auth_server() -> Iterator[LoopbackAS]:
    with LoopbackAS(RESOURCE) as server:
        yield server


@pytest.fixture
async def served(
    auth_server: LoopbackAS, server: TicketsServer
) -> AsyncIterator[tuple[str, MemoryAuditSink]]:
    policy = json.loads((tickets_dir() / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((tickets_dir() / "mcp.json").read_text(encoding="utf-8"))
    audit = MemoryAuditSink()
    registry = Registry(
        policy,
        catalog,
        base_url=server.base_url,
        receipts=MemoryReceiptStore(),
        audit=audit,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        cursor_key=b"k" * 32,
    )
    settings = auth_server.trusted()
    async with http_server(registry, verifier=JwtVerifier(settings), auth=settings.auth_settings()) as url:
        yield url, audit


@pytest.mark.anyio
async def test_an_unknown_tool_name_is_echoed_bounded(
    auth_server: LoopbackAS, served: tuple[str, MemoryAuditSink]
) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    url, _ = served
    token = auth_server.access_token("alice", ["ticket:read"])
    name = "get_ticket\n[audit] approved by admin\u202e" + "x" * 5_000  # it travels in Mcp-Name too
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        with pytest.raises(MCPError) as caught:
            await client.call_tool(name, {})
        message = str(caught.value.error.message if hasattr(caught.value, "error") else caught.value)
        assert len(message) <= UNKNOWN_TOOL_SHOWN + 80, len(message)
        assert "\n" not in message and "\u202e" not in message
        assert f"{len(name)} chars" in message  # its length and digest say which name it was
        assert (caught.value.error.data or {}).get("code") == "unknown_tool"
        short = await client.list_tools()  # the guard: the server still answers this caller
        assert "get_ticket" in {t.name for t in short.tools}
        with pytest.raises(MCPError) as plain:
            await client.call_tool("get_tickets", {})
        assert "get_tickets" in str(plain.value.error.message)  # a short plain name is shown as it is


@pytest.mark.anyio
async def test_an_unknown_tool_name_of_a_2025_11_25_request_is_echoed_bounded(
    auth_server: LoopbackAS, served: tuple[str, MemoryAuditSink]
) -> None:
    """MCP 2025-11-25 has no ``Mcp-Name`` header (bounded by the server's header limit): the name is in
    the body alone, 100,000 characters of it."""
    url, _ = served
    token = auth_server.access_token("alice", ["ticket:read"])
    name = "\u001b[2J" + "x" * 100_000
    headers = {**JSON_RPC, "Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2025-11-25"}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": {}}}
    async with httpx2.AsyncClient(timeout=30) as http:
        answer = await http.post(url, headers=headers, json=call)
    assert answer.status_code == 200 and len(answer.content) < 1_000, len(answer.content)
    data = json.loads(answer.text.split("data: ", 1)[1])
    assert data["error"]["code"] == -32602 and data["error"]["data"]["code"] == "unknown_tool"
    assert "\u001b" not in data["error"]["message"] and f"{len(name)} chars" in data["error"]["message"]


@pytest.mark.anyio
async def test_a_token_is_read_from_the_authorization_header_only(
    auth_server: LoopbackAS, served: tuple[str, MemoryAuditSink]
) -> None:
    url, audit = served
    alice = auth_server.access_token("alice", ["ticket:read"])
    mallory = auth_server.access_token("mallory", ["ticket:read"])
    params: dict[str, Any] = {"name": "get_ticket", "arguments": {"ticket_id": "T-102"}}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    async with httpx2.AsyncClient(timeout=30) as http:
        in_query = await http.post(url + f"?access_token={alice}", headers=JSON_RPC, json=call)
        assert in_query.status_code == 401
        in_body = await http.post(url, headers=JSON_RPC, json={**call, "access_token": alice})
        assert in_body.status_code == 401
        as_form = await http.post(
            url,
            headers={**JSON_RPC, "Content-Type": "application/x-www-form-urlencoded"},
            content=f"access_token={alice}",
        )
        assert as_form.status_code == 401
        claimed = f"jwt:{auth_server.issuer}#alice"
        answer = await http.post(
            url + f"?access_token={alice}",
            headers={
                **JSON_RPC,
                "Authorization": f"Bearer {mallory}",
                "X-Actor": claimed,
                "Mcp-Actor": claimed,
            },
            json={**call, "params": {**params, "_meta": {"actor": claimed}}},
        )
        assert answer.status_code == 200
    actors = {e.actor for e in audit.events if e.tool == "get_ticket"}
    assert actors == {f"jwt:{auth_server.issuer}#mallory"}


@pytest.mark.anyio
async def test_a_request_with_two_authorization_headers_is_refused(
    auth_server: LoopbackAS, served: tuple[str, MemoryAuditSink]
) -> None:
    """``Authorization`` is a singleton field (RFC 9110 §5.3): with two, the server took the first
    and a proxy in front may check the last, so a valid token first and anything after it was
    served. Refused 400 ``invalid_request`` (RFC 6750 §3.1), code ``token-header-repeated``, in
    either order; the guard: one of them alone is served."""
    url, _ = served
    alice = auth_server.access_token("alice", ["ticket:read"])
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {**JSON_RPC, "MCP-Protocol-Version": "2025-11-25"}
    async with httpx2.AsyncClient(timeout=30) as http:
        for pair in ([alice, "x"], ["x", alice], [alice, alice]):
            answer = await http.post(
                url,
                headers=[*headers.items(), *(("Authorization", f"Bearer {t}") for t in pair)],
                json=listing,
            )
            assert answer.status_code == 400, (pair, answer.status_code)
            assert answer.json()["code"] == "token-header-repeated"
            assert 'error="invalid_request"' in answer.headers["www-authenticate"]
        alone = await http.post(url, headers={**headers, "Authorization": f"Bearer {alice}"}, json=listing)
        assert alone.status_code == 200
