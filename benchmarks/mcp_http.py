"""What serving MCP over Streamable HTTP with bearer tokens costs, per request.

Run on demand (not part of the test suite):

    python benchmarks/mcp_http.py [--calls 300]

Starts the tickets API (``python -m toolgen.testing.tickets_server``) and ``toolgen serve --http
127.0.0.1:0 --tokens FILE`` as separate processes, then measures with the official MCP client
(response caching off, so every ``tools/list`` reaches the server), interleaved so drift hits every
side alike:

- ``tools/list`` and ``tools/call get_ticket`` over Streamable HTTP, MCP 2026-07-28 (stateless
  requests) and 2025-11-25 (handshake, then stateless);
- the same two requests to an in-process server (`build_server`, no transport) as the baseline;
- the static token check alone (`StaticTokenVerifier.lookup`: SHA-256 + a constant-time compare
  with every entry) for token files of 1, 100 and 1,000 entries.

Prints median microseconds per request.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.serving.mcp_http import StaticToken, StaticTokenVerifier, token_sha256
from toolgen.runtime.serving.mcp_server import build_server

TOKEN = "bench-token-" + "x" * 32
TICKETS_TOKEN = "test-token-7f3a"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def token_check(entries: int, rounds: int = 20_000) -> float:
    verifier = StaticTokenVerifier(
        StaticToken(bytes.fromhex(token_sha256(f"t-{n}")), f"a{n}", ("s",)) for n in range(entries)
    )
    start = time.perf_counter()
    for _ in range(rounds):
        verifier.lookup(f"t-{entries - 1}")
    return (time.perf_counter() - start) / rounds * 1e6


async def measure(url: str, base_url: str, calls: int) -> dict[str, list[float]]:
    registry = Registry.from_dir(
        REPO / "generated" / "tickets",
        base_url=base_url,
        receipts=MemoryReceiptStore(),
        credentials=StaticCredentials({"TICKETS_TOKEN": TICKETS_TOKEN}),
    )
    times: dict[str, list[float]] = {}
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http), cache=None) as modern,
        Client(streamable_http_client(url, http_client=http), cache=None, mode="legacy") as legacy,
        Client(build_server(registry, Actor.of("bench", ["ticket:read"])), cache=None) as inproc,
    ):
        sides: dict[str, Any] = {"http 2026-07-28": modern, "http 2025-11-25": legacy, "in-process": inproc}
        for _ in range(calls):
            for name, client in sides.items():
                start = time.perf_counter()
                await client.list_tools()
                times.setdefault(f"{name} tools/list", []).append(time.perf_counter() - start)
                start = time.perf_counter()
                result = await client.call_tool("get_ticket", {"ticket_id": "T-102"})
                times.setdefault(f"{name} get_ticket", []).append(time.perf_counter() - start)
                assert result.is_error is False, result
    await registry.aclose()
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    for entries in (1, 100, 1000):
        print(f"token check, {entries:>4} entries: {token_check(entries):8.1f} µs")
    api_port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        tokens = Path(tmp) / "tokens.yaml"
        tokens.write_text(
            f"tokens:\n  - actor: bench\n    sha256: {token_sha256(TOKEN)}\n    scopes: [ticket:read]\n"
        )
        tokens.chmod(0o600)
        api = subprocess.Popen(
            [sys.executable, "-m", "toolgen.testing.tickets_server", "--port", str(api_port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base_url = f"http://127.0.0.1:{api_port}/v1"
        env = dict(os.environ, TICKETS_TOKEN=TICKETS_TOKEN)
        serve = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "toolgen"),
                "serve",
                "tickets",
                "--http",
                "127.0.0.1:0",
                "--tokens",
                str(tokens),
                "--base-url",
                base_url,
                "--receipts",
                "memory://",
            ],
            cwd=REPO,
            env=env,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            url = None
            assert serve.stderr is not None
            for line in serve.stderr:
                if "serving MCP on " in line:
                    url = line.split("serving MCP on ", 1)[1].split()[0]
                    break
            if url is None:
                raise SystemExit("toolgen serve did not start")
            times = anyio.run(measure, url, base_url, args.calls)
        finally:
            for proc in (serve, api):
                proc.terminate()
                proc.wait(timeout=30)
    for name, values in times.items():
        print(f"{name:<32} {statistics.median(values) * 1e6:8.0f} µs (median of {len(values)})")


if __name__ == "__main__":
    main()
