"""Fixtures for the runtime tests: the tickets API on loopback and a registry over its tools."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import tickets_dir

from toolgen.examples.tickets_server import TicketsServer
from toolgen.runtime import (
    MemoryAuditSink,
    MemoryReceiptStore,
    ReceiptStore,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
    receipts_from_url,
)


@pytest.fixture(scope="session")
def tickets_server() -> Iterator[TicketsServer]:
    with TicketsServer() as srv:
        yield srv


@pytest.fixture
def server() -> Iterator[TicketsServer]:
    """A fresh tickets server per test (fresh data and side-effect counters)."""
    with TicketsServer() as srv:
        yield srv


@pytest.fixture
def receipts_path(tmp_path: Path) -> Path:
    return tmp_path / "receipts.sqlite3"


@pytest.fixture
def registry(server: TicketsServer, receipts_path: Path) -> Iterator[Registry]:
    reg = Registry.from_dir(
        tickets_dir(),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=SqliteReceiptStore(receipts_path),
        audit=MemoryAuditSink(),
        cursor_key=b"k" * 32,
    )
    yield reg
    reg.close()


@pytest.fixture
def recorder() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _unavailable(reason: str) -> None:
    """Skip locally; in CI (``CI=true``, where .ci/run installs redis-server) a missing server fails."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI must run the Redis receipt-store tests: see .ci/run)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``redis-server`` on loopback for this test session (one per xdist worker), no
    persistence; its TCP URL (it also listens on ``redis.sock`` in `redis_socket`'s folder). Skipped when redis-server or the `redis` package is missing."""
    binary = shutil.which("redis-server")
    if binary is None:
        _unavailable("redis-server is not on PATH (apt-get install redis-server)")
    try:
        import redis
    except ModuleNotFoundError:
        _unavailable("the redis package is not installed (pip install -e '.[dev]')")
    workdir = tmp_path_factory.mktemp("redis")
    for _ in range(3):  # the free port can be taken between probing and binding; try again
        port = _free_port()
        proc = subprocess.Popen(
            [str(binary), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(workdir), "--daemonize", "no", "--loglevel", "warning",
             "--unixsocket", str(workdir / "redis.sock"), "--unixsocketperm", "700"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        url = f"redis://127.0.0.1:{port}/0"
        client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
        deadline = time.monotonic() + 10
        up = False
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                up = bool(client.ping())
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.02)
        client.close()
        if up:
            try:
                yield url
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            return
        proc.kill()
        proc.wait()
    pytest.fail("redis-server did not answer PING within 10 s")


@pytest.fixture(scope="session")
def redis_socket(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unix socket of the `redis_url` server."""
    sockets = list(tmp_path_factory.getbasetemp().glob("redis*/redis.sock"))
    assert sockets, "redis-server opened no unix socket"
    return sockets[0]


@pytest.fixture(params=["memory", "sqlite", "redis"])
def any_receipt_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ReceiptStore]:
    """A receipt store on each backend in turn: memory, a SQLite file, the session's real Redis (under a
    key prefix of this test's own); closed afterwards."""
    store = receipt_store(request, tmp_path, f"prefix=t-{uuid.uuid4().hex[:10]}:")
    yield store
    store.close()


def receipt_store(request: pytest.FixtureRequest, tmp_path: Path, redis_query: str) -> ReceiptStore:
    """The receipt store of `request.param` (``memory``, ``sqlite``: a file in `tmp_path`, ``redis``:
    the session's real Redis with `redis_query` appended to its URL, e.g. a key prefix)."""
    if request.param == "memory":
        return MemoryReceiptStore()
    if request.param == "sqlite":
        return SqliteReceiptStore(tmp_path / "receipts.sqlite3")
    return receipts_from_url(f"{request.getfixturevalue('redis_url')}?{redis_query}")
