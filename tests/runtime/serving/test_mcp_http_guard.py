"""`serve --http` against connections that never send a request: half-open connections and header
trickles are closed after the header deadline, the connections waiting for headers are capped (the
longest waiting is closed first; the bounds per client address are in serving/test_mcp_http_flood.py), so a
token holder is served even when an attacker holds more
connections than the process has file descriptors, and stderr stays quiet."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import anyio
import httpx
import pytest
from tests.runtime.test_runtime_identity import make_registry, served_url
from tests.support.http_serving import http_server
from tests.support.runtime_env import tickets_dir
from tests.support.token_files import TOKENS, write_token_file

from toolgen.runtime.serving.mcp_http import load_token_file
from toolgen.testing.tickets_server import TicketsServer

TOOLGEN = str(Path(sys.executable).parent / "toolgen")
LIST_TOOLS = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


def _host_port(url: str) -> tuple[str, int]:
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    return host, int(port)


def _closed_by_server(sock: socket.socket, within_s: float) -> bool:
    """Whether the server closes `sock` (recv gives b"" or a reset) within `within_s` seconds."""
    sock.settimeout(within_s)
    try:
        return sock.recv(1024) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def _list_tools(url: str, token: str, timeout: float = 10) -> int:
    return httpx.post(
        url, json=LIST_TOOLS, headers={**MCP_HEADERS, "Authorization": f"Bearer {token}"}, timeout=timeout
    ).status_code


def test_the_waiting_cap_follows_the_open_file_limit() -> None:
    from toolgen.runtime.serving.mcp_http import max_waiting_connections

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    cap = max_waiting_connections()
    assert 8 <= cap <= 256 and (soft == resource.RLIM_INFINITY or cap <= max(8, soft // 8))


@pytest.mark.anyio
async def test_silent_and_trickling_connections_are_closed_at_the_header_deadline(
    server: TicketsServer, tmp_path: Path
) -> None:
    verifier = load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]
    async with http_server(make_registry(server), verifier=verifier, header_timeout_s=0.5) as url:
        host, port = _host_port(url)
        silent = socket.create_connection((host, port))
        trickle = socket.create_connection((host, port))
        started = time.monotonic()

        def drip() -> bool:
            for byte in b"POST /mcp HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 200:
                try:
                    trickle.send(bytes([byte]))
                except OSError:
                    return True  # the server closed it
                time.sleep(0.02)
            return _closed_by_server(trickle, 1.0)

        assert await anyio.to_thread.run_sync(drip)
        assert await anyio.to_thread.run_sync(_closed_by_server, silent, 2.0)
        assert time.monotonic() - started < 4.0
        # a kept-alive connection that finished a request gets its next deadline too
        kept = socket.create_connection((host, port))

        def request_then_stall() -> tuple[bytes, bool]:
            kept.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            kept.settimeout(2.0)
            answer = b""
            while not answer.endswith(b"}"):  # the whole 401 (its JSON body last)
                answer += kept.recv(4096)
            kept.sendall(b"GET /mcp HTTP/1.1\r\n")  # and then never finishes the next one
            return answer, _closed_by_server(kept, 3.0)

        answer, closed = await anyio.to_thread.run_sync(request_then_stall)
        assert answer.startswith(b"HTTP/1.1 401") and closed
        assert await anyio.to_thread.run_sync(_list_tools, url, TOKENS["reader"][0]) == 200
        for sock in (silent, trickle, kept):
            sock.close()


@pytest.mark.anyio
async def test_the_longest_waiting_connection_is_closed_beyond_the_cap(
    server: TicketsServer, tmp_path: Path
) -> None:
    verifier = load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]
    async with http_server(
        make_registry(server), verifier=verifier, header_timeout_s=60, max_waiting=4
    ) as url:
        host, port = _host_port(url)
        socks = []
        for n in range(
            10
        ):  # one by one, each from an address of its own (one address has a bound of its own)
            socks.append(
                await anyio.to_thread.run_sync(
                    partial(socket.create_connection, (host, port), source_address=(f"127.0.0.{n + 2}", 0))
                )
            )
            await anyio.sleep(0.02)
        await anyio.sleep(0.3)
        closed = [await anyio.to_thread.run_sync(_closed_by_server, s, 0.3) for s in socks]
        assert closed[:6] == [True] * 6 and closed[6:] == [False] * 4, closed  # the oldest go first
        assert await anyio.to_thread.run_sync(_list_tools, url, TOKENS["writer"][0]) == 200
        for sock in socks:
            sock.close()


def _serve_with_256_files(tmp_path: Path, server: TicketsServer) -> subprocess.Popen[str]:
    """`toolgen serve --http` with a token file, in a process whose open-file limit is 256."""
    tokens = write_token_file(tmp_path / "tokens.yaml")
    env = dict(os.environ, TICKETS_TOKEN=server.token)
    env.pop("TOOLGEN_SCOPES", None)
    limited = (
        "import os, resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256)); "
        "os.execv(sys.argv[1], sys.argv[1:])"
    )
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            limited,
            TOOLGEN,
            "serve",
            str(tickets_dir()),
            "--base-url",
            server.base_url,
            "--receipts",
            str(tmp_path / "r.db"),
            "--http",
            "127.0.0.1:0",
            "--tokens",
            str(tokens),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )


@pytest.mark.anyio
async def test_half_open_connections_beyond_the_file_limit_lock_no_token_holder_out(
    server: TicketsServer, tmp_path: Path
) -> None:
    proc = _serve_with_256_files(tmp_path, server)
    socks: list[socket.socket] = []
    try:
        url, _ = await served_url(proc)
        host, port = _host_port(url)
        for i in range(300):
            sock = socket.create_connection((host, port))
            if i % 3 == 0:
                sock.send(b"POST /mcp HTTP/1.1\r\nHost: x\r\n")  # headers begun, never finished
            socks.append(sock)
        started = time.monotonic()
        status = await anyio.to_thread.run_sync(_list_tools, url, TOKENS["reader"][0])
        assert status == 200 and time.monotonic() - started < 5.0
        for sock in socks:
            sock.close()
        proc.terminate()
        _, err = await anyio.to_thread.run_sync(lambda: proc.communicate(timeout=30))
        assert "Traceback" not in err and len(err.splitlines()) < 10, err[:2000]
    finally:
        for sock in socks:
            sock.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
