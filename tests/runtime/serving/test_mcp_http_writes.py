"""`serve --http` writes a response the app sends whole as one segment: the status line and headers
leave with the body in one write (`CoalescedWrites`), so the client wakes up once per response
instead of once for the headers and again for the body, and no write waits for anything else."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import anyio
import pytest
from tests.runtime.serving.test_mcp_http_guard import _host_port
from tests.runtime.test_runtime_identity import make_registry
from tests.support.http_serving import http_server
from tests.support.token_files import write_token_file

from toolgen.runtime.serving.mcp_http import CoalescedWrites, load_token_file
from toolgen.testing.tickets_server import TicketsServer


def _first_reads(host: str, port: int, requests: int) -> list[bytes]:
    """Send `requests` unauthenticated GETs one after another on one kept-alive connection; for
    each, what the first ``recv`` after sending it returned, once the whole response (headers and
    a body of its Content-Length) has been read."""
    firsts: list[bytes] = []
    with socket.create_connection((host, port)) as sock:
        sock.settimeout(5)
        for _ in range(requests):
            sock.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            first = sock.recv(65536)
            whole = first
            while b"\r\n\r\n" not in whole:
                whole += sock.recv(65536)
            head, body = whole.split(b"\r\n\r\n", 1)
            length = int(
                next(
                    line.split(b":", 1)[1]
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
            )
            while len(body) < length:
                body += sock.recv(65536)
            firsts.append(first)
    return firsts


@pytest.mark.anyio
async def test_a_whole_response_arrives_in_one_read(server: TicketsServer, tmp_path: Path) -> None:
    verifier = load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]
    async with http_server(make_registry(server), verifier=verifier) as url:
        host, port = _host_port(url)
        firsts = await anyio.to_thread.run_sync(_first_reads, host, port, 20)
    for first in firsts:  # a 401 with its JSON body: before, the first read held the headers alone
        assert first.startswith(b"HTTP/1.1 401") and first.endswith(b"}"), first


class _Sink(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport


def _read_available(sock: socket.socket) -> bytes:
    sock.settimeout(2)
    return sock.recv(65536)


@pytest.mark.anyio
async def test_a_head_leaves_with_the_next_write_at_once() -> None:
    loop = asyncio.get_running_loop()
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)
    with ours, theirs:
        transport, protocol = await loop.create_connection(_Sink, sock=ours)
        writes = CoalescedWrites(transport, loop)
        writes.write(b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n")
        with pytest.raises(BlockingIOError):  # the head waits for what follows it
            theirs.recv(1)
        writes.writelines([b"", bytearray(b'{"a": 1}')])  # no need to leave this turn of the loop
        assert theirs.recv(65536) == b'HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n{"a": 1}'
        writes.write(b"data: 1\n\n")  # any other write is sent at once
        assert theirs.recv(65536) == b"data: 1\n\n"
        writes.write(b"HTTP/1.1 200 OK\r\n\r\n")  # a head nothing follows: sent when the turn ends
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert theirs.recv(65536) == b"HTTP/1.1 200 OK\r\n\r\n"
        writes.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        writes.close()  # a held head leaves before the connection closes
        theirs.setblocking(True)
        received = b""
        while chunk := await anyio.to_thread.run_sync(_read_available, theirs):
            received += chunk
        assert received == b"HTTP/1.1 204 No Content\r\n\r\n"
        assert protocol.transport is transport and writes.is_closing()


@pytest.mark.anyio
async def test_abort_drops_a_held_head() -> None:
    loop = asyncio.get_running_loop()
    ours, theirs = socket.socketpair()
    with ours, theirs:
        transport, _ = await loop.create_connection(_Sink, sock=ours)
        writes = CoalescedWrites(transport, loop)
        writes.write(b"HTTP/1.1 200 OK\r\n\r\n")
        writes.abort()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert await anyio.to_thread.run_sync(_read_available, theirs) == b""
