"""The per-request paths of `toolgen serve --http` that were made cheaper keep their behaviour.

- ``Mcp-Param-*`` header checks (MCP 2026-07-28): a catalog that declares no ``x-mcp-header`` gives
  the SDK a lookup that answers "nothing to check" instead of a ``tools/list`` per ``tools/call``; the
  answers to calls with or without such headers are what the listing path gave. A catalog that does
  declare one keeps the SDK's caller-scoped listing, so a mismatched header is still refused.
- ``settle_heap``: the objects alive once the server listens are frozen out of the collector's walks,
  and the server keeps serving.
"""

from __future__ import annotations

import copy
import gc
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.http_serving import http_server
from tests.support.runtime_env import tickets_dir

from toolgen.runtime import Actor, MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.serving.mcp_server import build_server, declares_param_headers
from toolgen.testing.tickets_server import TicketsServer

pytest.importorskip("mcp")
httpx2 = pytest.importorskip("httpx2")

READER = Actor.of("reader", ["ticket:read"])
MODERN = "2026-07-28"


def make_registry(server: TicketsServer, *, header_on: str | None = None) -> Registry:
    """The tickets registry; `header_on`: a tool whose ``ticket_id`` declares ``x-mcp-header: Ticket``."""
    folder = tickets_dir()
    policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    catalog = copy.deepcopy(json.loads((folder / "mcp.json").read_text(encoding="utf-8")))
    for entry in catalog:
        if entry["name"] == header_on:
            entry["inputSchema"]["properties"]["ticket_id"]["x-mcp-header"] = "Ticket"
    return Registry(
        policy,
        catalog,
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=MemoryReceiptStore(),
        audit=MemoryAuditSink(),
        cursor_key=b"k" * 32,
    )


async def raw_call(url: str, ticket_id: str, headers: dict[str, str]) -> tuple[int, Any]:
    """A 2026-07-28 ``tools/call`` of ``get_ticket`` posted by hand, with extra `headers`."""
    from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "get_ticket",
            "arguments": {"ticket_id": ticket_id},
            "_meta": {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_CAPABILITIES_META_KEY: {}},
        },
    }
    sent = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "get_ticket",
        **headers,
    }
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(url, content=json.dumps(body), headers=sent)
    text = response.text
    if text.startswith(("event:", "data:")):  # an SSE answer: its one message
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return response.status_code, json.loads(text)


def _oracle(value: Any) -> bool:
    if isinstance(value, dict):
        return "x-mcp-header" in value or any(_oracle(v) for v in value.values())
    if isinstance(value, list):
        return any(_oracle(v) for v in value)
    return False


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["type", "properties", "items", "x-mcp-header", "a"]), inner, max_size=4
        )
    ),
    max_leaves=20,
)


@given(_json)
def test_declares_param_headers_finds_the_keyword_at_any_depth(schema: Any) -> None:
    assert declares_param_headers(schema) is _oracle(schema)


def test_the_lookup_is_installed_only_when_no_tool_declares_a_header(server: TicketsServer) -> None:
    plain = build_server(make_registry(server), READER)
    assert plain.get_tool_input_schema is not None
    assert all(plain.get_tool_input_schema(name) is None for name in make_registry(server).specs)
    declared = build_server(make_registry(server, header_on="get_ticket_history"), READER)
    assert declared.get_tool_input_schema is None  # the SDK's caller-scoped listing path


@pytest.mark.anyio
async def test_calls_with_and_without_param_headers_are_answered_as_before(server: TicketsServer) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    registry = make_registry(server)
    async with http_server(registry, actor=READER) as url:
        # no tool declares a header: an Mcp-Param header the schema does not name is ignored, as the
        # listing path ignored it, and the call runs through the whole runtime
        status, answer = await raw_call(url, "T-102", {"Mcp-Param-Ticket": "T-999"})
        assert status == 200 and answer["result"]["structuredContent"]["id"] == "T-102", answer
        status, answer = await raw_call(url, "T-102", {})
        assert status == 200 and answer["result"]["structuredContent"]["id"] == "T-102", answer
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            assert client.protocol_version == MODERN
            result = await client.call_tool("get_ticket", {"ticket_id": "T-103"})
            assert result.is_error is False and result.structured_content["id"] == "T-103"
    calls = [e for e in registry.audit.events if e.tool == "get_ticket" and e.step == "result"]  # type: ignore[attr-defined]
    assert len(calls) == 3


@pytest.mark.anyio
async def test_a_declared_header_is_still_checked_against_the_arguments(server: TicketsServer) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    registry = make_registry(server, header_on="get_ticket")
    async with http_server(registry, actor=READER) as url:
        status, answer = await raw_call(url, "T-102", {"Mcp-Param-Ticket": "T-999"})
        assert status == 400 and "Mcp-Param-Ticket" in answer["error"]["message"], answer
        status, answer = await raw_call(url, "T-102", {})  # the argument is there, its header is not
        assert status == 400 and "missing" in answer["error"]["message"], answer
        status, answer = await raw_call(url, "T-102", {"Mcp-Param-Ticket": "T-102"})
        assert status == 200 and answer["result"]["structuredContent"]["id"] == "T-102", answer
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):  # mirrors the header itself
            result = await client.call_tool("get_ticket", {"ticket_id": "T-104"})
            assert result.is_error is False and result.structured_content["id"] == "T-104"
    calls = [e for e in registry.audit.events if e.tool == "get_ticket" and e.step == "result"]  # type: ignore[attr-defined]
    assert len(calls) == 2  # the refused ones never reached the runtime


@pytest.mark.anyio
async def test_settle_heap_freezes_what_is_alive_at_start_and_serving_goes_on(server: TicketsServer) -> None:
    registry = make_registry(server)
    assert gc.get_freeze_count() == 0
    try:
        async with http_server(registry, actor=READER, settle_heap=True) as url:
            frozen = gc.get_freeze_count()
            assert frozen > 10_000  # the modules, the registry and the app
            for ticket in ("T-102", "T-103"):
                status, answer = await raw_call(url, ticket, {})
                assert status == 200 and answer["result"]["structuredContent"]["id"] == ticket
            assert gc.get_freeze_count() <= frozen  # once, at start: requests' objects stay collectable
    finally:
        gc.unfreeze()


@pytest.mark.anyio
@pytest.mark.parametrize("settle", [True, False], ids=["settled", "unsettled"])
async def test_a_settled_heap_serves_what_an_unsettled_one_does(server: TicketsServer, settle: bool) -> None:
    """The equivalence `settle_heap` is kept under (benchmarks/results/speed_tricks.md): a server
    that froze its heap at start and one that did not answer the same calls (found and missing
    tickets) with what the registry itself answers."""
    registry = make_registry(server)
    tickets = ("T-102", "T-103")
    expected = [await registry.acall("get_ticket", {"ticket_id": t}, actor=READER) for t in tickets]
    try:
        async with http_server(registry, actor=READER, settle_heap=settle) as url:
            assert (gc.get_freeze_count() > 0) is settle
            for ticket, direct in zip(tickets, expected, strict=True):
                status, answer = await raw_call(url, ticket, {})
                assert status == 200 and answer["result"]["structuredContent"] == direct.result
            status, answer = await raw_call(url, "T-999", {})
            assert status == 200 and answer["result"]["isError"] is True
    finally:
        gc.unfreeze()
