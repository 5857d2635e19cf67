"""Fixtures for the runtime tests: the tickets API on loopback and a registry over its tools."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import tickets_dir
from tests.support.tickets_server import TicketsServer

from toolgen.runtime import (
    MemoryAuditSink,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
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
