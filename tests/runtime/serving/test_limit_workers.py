"""Limits across worker processes: `toolgen serve --http --workers 2` over a shared receipt store
(a SQLite file; a real Redis and a real PostgreSQL in the slow suite), 50 concurrent MCP callers
(the official client) against ``{calls: 10, window: 1m}``: exactly 10 requests reach the real
loopback API, every other call is ``rate_limited`` with HTTP 429's meaning in its ``_meta``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.runtime.serving.test_workers import wait_for_children
from tests.runtime.test_runtime_identity import TOOLGEN, connect, served_url
from tests.support.build import REPO, Built, build
from tests.support.recording_server import RecordingServer

from toolgen.runtime.serving.mcp_http import token_sha256

pytestmark = pytest.mark.anyio

PAYMENTS = REPO / "tests" / "fixtures" / "limits" / "payments.yaml"
TOKEN = "reader-token-5e1a"
INTENT = """tools:
  balance:
    operation: getBalance
    effect: read
    permission: payments:read
    limits: [{per: tool, calls: 10, window: 1m}]
"""


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("limited"), PAYMENTS, INTENT)


def serve(
    built: Built, tmp_path: Path, base_url: str, receipts: str, workers: int = 2
) -> subprocess.Popen[str]:
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text(
        f"tokens:\n  - actor: reader\n    sha256: {token_sha256(TOKEN)}\n    scopes: [payments:read]\n",
        encoding="utf-8",
    )
    tokens.chmod(0o600)
    return subprocess.Popen(
        [
            TOOLGEN,
            "serve",
            str(built.out),
            "--base-url",
            base_url,
            "--receipts",
            receipts,
            "--http",
            "127.0.0.1:0",
            "--tokens",
            str(tokens),
            "--workers",
            str(workers),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
        cwd=tmp_path,
    )


async def stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = await anyio.to_thread.run_sync(partial(proc.communicate, timeout=60))
    return str(err)


def receipts_for(store: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if store == "postgres":
        return f"{request.getfixturevalue('postgres_url')}?table_prefix=l{uuid.uuid4().hex[:10]}_"
    if store == "redis":
        return f"{request.getfixturevalue('redis_url')}?prefix=l-{uuid.uuid4().hex[:10]}:"
    return str(tmp_path / "receipts.sqlite3")


async def call_many(url: str, count: int) -> list[Any]:
    results: list[Any] = []

    async def one() -> None:
        async with connect(url, TOKEN) as client:  # a connection of its own: either worker
            results.append(await client.call_tool("balance", {}))

    async with anyio.create_task_group() as tg:
        for _ in range(count):
            tg.start_soon(one)
    return results


# the real Redis and PostgreSQL races are in the slow suite (`-m slow`); SQLite stays fast
@pytest.mark.long
@pytest.mark.parametrize(
    "store",
    [
        "sqlite",
        pytest.param("redis", marks=pytest.mark.slow),
        pytest.param("postgres", marks=pytest.mark.slow),
    ],
)
async def test_fifty_callers_on_two_workers_send_exactly_the_limit(
    limited: Built, tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    pytest.importorskip("mcp")
    with RecordingServer() as api:
        proc = serve(limited, tmp_path, api.base_url, receipts_for(store, tmp_path, request))
        try:
            url, printed = await served_url(proc)
            assert "2 workers" in printed[-1]
            assert len(wait_for_children(proc.pid, 2)) == 2
            results = await call_many(url, 50)
        finally:
            err = await stop(proc) if proc.poll() is None else ""
        sent = [r for r in api.requests if r.path == "/balance"]
    assert proc.returncode == 0, err
    assert len(results) == 50
    assert len(sent) == 10, f"{len(sent)} requests reached the API"
    ok = [r for r in results if not r.is_error]
    refused = [r for r in results if r.is_error]
    assert len(ok) == 10 and len(refused) == 40
    for result in refused:
        error = json.loads(result.content[0].text)["error"]
        assert error["code"] == "rate_limited" and error["retryable"] is True, error
        assert 0 < error["details"]["retry_after"] <= 60 and error["details"]["status"] == 429
        assert result.meta is not None and result.meta["toolgen/status"] == 429
        assert result.meta["toolgen/retry_after"] == error["details"]["retry_after"]
