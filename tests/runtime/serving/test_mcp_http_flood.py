"""`serve --http` under a connection flood: connections are bounded per client address and in
total, and a connection that carried an authenticated request is never closed to make room for
unauthenticated ones.

All on loopback: the flood comes from other loopback addresses (127.0.0.2, 127.0.0.3: Linux routes
all of 127.0.0.0/8 to the loopback interface), the token holder from 127.0.0.1, as an attacker and a
customer come from different addresses. Every loop is bounded and stops by itself.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from pathlib import Path

import anyio
import httpx
import pytest
from tests.runtime.serving.test_mcp_http_guard import (
    LIST_TOOLS,
    MCP_HEADERS,
    _closed_by_server,
    _host_port,
    _list_tools,
)
from tests.runtime.test_runtime_identity import make_registry
from tests.support.http_serving import http_server
from tests.support.token_files import TOKENS, write_token_file

from toolgen.runtime.serving.mcp_http import load_token_file, max_connections_per_address
from toolgen.testing.tickets_server import TicketsServer

pytestmark = pytest.mark.anyio

AUTHORIZED_LIST = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n"
    b"Authorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s"
)


def _connect_from(source: str, host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(2.0)
    sock.connect((host, port))
    return sock


def _authorized_request(sock: socket.socket, token: str) -> bytes:
    """One authenticated ``tools/list`` on a kept-alive raw connection: the response's status line."""
    body = httpx.Request("POST", "http://x", json=LIST_TOOLS).content
    sock.sendall(AUTHORIZED_LIST % (sock.getpeername()[1], token.encode(), len(body), body))
    sock.settimeout(10.0)
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(65536)
        if not chunk:
            return answer  # closed by the server
        answer += chunk
    head, rest = answer.split(b"\r\n\r\n", 1)
    lengths = [
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    ]
    while (len(rest) < lengths[0]) if lengths else not rest.endswith(b"0\r\n\r\n"):  # or chunked
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head.split(b"\r\n", 1)[0]


async def test_silent_connections_never_evict_an_authenticated_kept_alive_one(
    server: TicketsServer, tmp_path: Path
) -> None:
    verifier = load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]
    async with http_server(
        make_registry(server), verifier=verifier, header_timeout_s=60, max_waiting=4
    ) as url:
        host, port = _host_port(url)
        kept = await anyio.to_thread.run_sync(_connect_from, "127.0.0.1", host, port)
        first = await anyio.to_thread.run_sync(_authorized_request, kept, TOKENS["reader"][0])
        assert first == b"HTTP/1.1 200 OK", first
        silent = []
        for n in range(40):  # from the same address and from others, one by one
            source = ("127.0.0.1", "127.0.0.2", "127.0.0.3")[n % 3]
            silent.append(await anyio.to_thread.run_sync(_connect_from, source, host, port))
            await anyio.sleep(0.005)
        await anyio.sleep(0.2)
        again = await anyio.to_thread.run_sync(_authorized_request, kept, TOKENS["reader"][0])
        assert again == b"HTTP/1.1 200 OK", (
            "the authenticated kept-alive connection was closed for silent ones"
        )
        closed = [await anyio.to_thread.run_sync(_closed_by_server, s, 0.05) for s in silent]
        assert sum(not c for c in closed) <= 4, closed  # the silent ones are still capped
        for sock in (kept, *silent):
            sock.close()


async def test_connections_are_bounded_per_client_address(server: TicketsServer, tmp_path: Path) -> None:
    verifier = load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]
    per_address = max_connections_per_address(16)
    async with http_server(
        make_registry(server), verifier=verifier, header_timeout_s=60, max_waiting=16
    ) as url:
        host, port = _host_port(url)
        flood = []
        for _ in range(per_address + 8):
            flood.append(await anyio.to_thread.run_sync(_connect_from, "127.0.0.2", host, port))
            await anyio.sleep(0.01)
        others = [await anyio.to_thread.run_sync(_connect_from, "127.0.0.3", host, port) for _ in range(2)]
        await anyio.sleep(0.2)
        flood_closed = [await anyio.to_thread.run_sync(_closed_by_server, s, 0.05) for s in flood]
        assert flood_closed == [True] * 8 + [False] * per_address, flood_closed  # its own oldest go
        assert not any([await anyio.to_thread.run_sync(_closed_by_server, s, 0.05) for s in others])
        for sock in (*flood, *others):
            sock.close()


def _flood(host: str, port: int, stop: threading.Event, opened: list[int], seconds: float) -> None:
    """Open connections from 127.0.0.2 as fast as one thread can, never sending a byte, for at most
    `seconds` (or until `stop`); keeps the latest 300 open on this side. `opened[0]`: how many."""
    held: deque[socket.socket] = deque()
    ends = time.monotonic() + seconds
    try:
        while not stop.is_set() and time.monotonic() < ends:
            try:
                held.append(_connect_from("127.0.0.2", host, port))
            except OSError:
                continue
            opened[0] += 1
            while len(held) > 300:
                held.popleft().close()
    finally:
        for sock in held:
            sock.close()


@pytest.mark.long
async def test_a_connection_flood_locks_no_token_holder_out(server: TicketsServer, tmp_path: Path) -> None:
    verifier = load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]
    async with http_server(make_registry(server), verifier=verifier, max_waiting=32) as url:
        host, port = _host_port(url)
        stop, opened = threading.Event(), [0]
        flooding = threading.Thread(target=_flood, args=(host, port, stop, opened, 20.0), daemon=True)
        flooding.start()

        def token_holder() -> list[int | str]:
            statuses: list[int | str] = []
            with httpx.Client(timeout=5.0) as client:  # one kept-alive connection, as a real client
                while opened[0] < 300 and flooding.is_alive():  # the flood is well under way
                    time.sleep(0.01)
                for _ in range(20):
                    try:
                        statuses.append(
                            client.post(
                                url,
                                json=LIST_TOOLS,
                                headers={**MCP_HEADERS, "Authorization": f"Bearer {TOKENS['reader'][0]}"},
                            ).status_code
                        )
                    except httpx.HTTPError as exc:
                        statuses.append(type(exc).__name__)
                    time.sleep(0.05)
            return statuses

        try:
            statuses = await anyio.to_thread.run_sync(token_holder)
        finally:
            stop.set()
            await anyio.to_thread.run_sync(flooding.join, 30)
            # a request on a fresh connection is accepted after every flood connection the kernel
            # still queued: once it is answered none is left for the server to accept as it stops
            last = await anyio.to_thread.run_sync(_list_tools, url, TOKENS["reader"][0])
        assert opened[0] >= 300, f"the flood opened only {opened[0]} connections"
        assert statuses == [200] * 20 and last == 200, (statuses, last)
