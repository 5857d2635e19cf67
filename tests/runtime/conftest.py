"""Fixtures for the runtime tests: the tickets API on loopback and a registry over its tools."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.fault_server import FaultServer
from tests.support.hostile_server import HostileServer
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import tickets_dir
from tests.support.trust_registry import tickets_routes

from toolgen.runtime import (
    MemoryAuditSink,
    MemoryReceiptStore,
    ReceiptStore,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
    receipts_from_url,
)
from toolgen.runtime.clock import SYSTEM, Clock, ManualClock
from toolgen.testing.tickets_server import TicketsServer


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
def fault() -> Iterator[FaultServer]:
    """The fault-injecting API, deduplicating idempotency keys, answering the tickets routes of
    `tests.support.trust_registry.tickets_routes` (a ticket, its follow-ups, its deletion); one per test."""
    with FaultServer(honours_keys=True) as srv:
        tickets_routes(srv)
        yield srv


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    """A hostile API on loopback (`tests.support.hostile_server`): each test sets its handler."""
    with HostileServer() as srv:
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
            [
                str(binary),
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(workdir),
                "--daemonize",
                "no",
                "--loglevel",
                "warning",
                "--unixsocket",
                str(workdir / "redis.sock"),
                "--unixsocketperm",
                "700",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
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


def _postgres_binaries() -> Path | None:
    """The folder holding initdb and postgres: PATH first, then Debian's /usr/lib/postgresql/N/bin."""
    found = shutil.which("initdb")
    if found is not None and shutil.which("postgres") is not None:
        return Path(found).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: p.parent.parent.name)
    return versions[-1].parent if versions else None


def _as_server_user() -> tuple[list[str], int | None, int | None]:
    """PostgreSQL refuses to run as root: when the tests run as root, run it as ``postgres`` (or
    ``nobody``) with setpriv; the (command prefix, uid, gid) to use."""
    if os.geteuid() != 0:
        return [], None, None
    import pwd

    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            _unavailable("setpriv is missing: cannot run PostgreSQL as a non-root user")
        assert setpriv is not None
        return (
            [setpriv, f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"],
            entry.pw_uid,
            entry.pw_gid,
        )
    _unavailable("no non-root user to run PostgreSQL as")
    raise AssertionError  # unreachable


class PostgresServer:
    """A real PostgreSQL server in a temporary folder on a loopback port (fsync off, user
    ``toolgen`` trusted): `start`, `stop` (a fast shutdown, as a restart or crash looks to clients)
    and `start` again on the same data and port. Skips (fails in CI) when PostgreSQL or psycopg is
    missing."""

    def __init__(self) -> None:
        bindir = _postgres_binaries()
        if bindir is None:
            _unavailable("PostgreSQL is not installed (apt-get install postgresql)")
        try:
            import psycopg  # noqa: F401
        except ModuleNotFoundError:
            _unavailable("the psycopg package is not installed (pip install -e '.[dev]')")
        assert bindir is not None
        self.bindir = bindir
        self.prefix, uid, gid = _as_server_user()
        self.workdir = Path(tempfile.mkdtemp(prefix="toolgen-pg-"))
        self.data = self.workdir / "data"
        if uid is not None:
            os.chown(self.workdir, uid, gid if gid is not None else -1)
        subprocess.run(
            [
                *self.prefix,
                str(bindir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "toolgen",
                "-A",
                "trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"postgresql://toolgen@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        import psycopg

        for _ in range(3):  # the free port can be taken between probing and binding; try again
            self.port = self.port or _free_port()
            self.proc = subprocess.Popen(
                [
                    *self.prefix,
                    str(self.bindir / "postgres"),
                    "-D",
                    str(self.data),
                    "-p",
                    str(self.port),
                    "-h",
                    "127.0.0.1",
                    "-k",
                    str(self.workdir),
                    "-F",
                    "-c",
                    "max_connections=200",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    psycopg.connect(self.url, connect_timeout=1).close()
                    return
                except psycopg.OperationalError:
                    time.sleep(0.05)
            self.stop()
            self.port = 0
        pytest.fail("PostgreSQL did not accept a connection within 20 s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown: clients are disconnected
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A real PostgreSQL server on loopback for this test session (one per xdist worker): its URL.
    Tests keep apart by table prefix."""
    server = PostgresServer()
    try:
        server.start()
        yield server.url
    finally:
        server.remove()


@pytest.fixture
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own, started, which the test may stop and start again."""
    server = PostgresServer()
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture
def clock() -> ManualClock:
    """This test's clock: the system's until the test moves it (`ManualClock.advance`), to pass a
    lifetime without waiting for it. The stores of `any_receipt_store` read it, and so does a
    registry over one of them."""
    return ManualClock()


@pytest.fixture(params=["memory", "sqlite", "redis", "postgres"])
def any_receipt_store(
    request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock
) -> Iterator[ReceiptStore]:
    """A receipt store on each backend in turn: memory, a SQLite file, the session's real Redis (under a
    key prefix of this test's own), the session's real PostgreSQL (under a table prefix of its own);
    reading this test's `clock`; closed afterwards."""
    store = receipt_store(request, tmp_path, f"prefix=t-{uuid.uuid4().hex[:10]}:", clock)
    yield store
    store.close()


def receipt_store(
    request: pytest.FixtureRequest, tmp_path: Path, redis_query: str, clock: Clock = SYSTEM
) -> ReceiptStore:
    """The receipt store of `request.param` (``memory``, ``sqlite``: a file in `tmp_path`, ``redis``:
    the session's real Redis with `redis_query` appended to its URL, e.g. a key prefix; ``postgres``:
    the session's real PostgreSQL under a table prefix of its own), reading the time from `clock`."""
    if request.param == "memory":
        return MemoryReceiptStore(clock=clock)
    if request.param == "sqlite":
        return SqliteReceiptStore(tmp_path / "receipts.sqlite3", clock=clock)
    if request.param == "postgres":  # a table prefix of this test's own
        return receipts_from_url(
            f"{request.getfixturevalue('postgres_url')}?table_prefix=t{uuid.uuid4().hex[:12]}_", clock=clock
        )
    return receipts_from_url(f"{request.getfixturevalue('redis_url')}?{redis_query}", clock=clock)
