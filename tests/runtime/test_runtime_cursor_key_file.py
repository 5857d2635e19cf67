"""The cursor key kept beside a SQLite receipt store (`cursor.key`, docs/runtime.md "`toolgen call`"):
every process that opens the store gets the same key, or is refused with a message naming the file.

A key file left empty or short (a process killed between creating it and writing it, a full disk)
must not make each process pick a random key of its own: successive `toolgen call`s, and the workers
of `toolgen serve --workers N`, would then refuse each other's cursors (and approval-round states,
whose key derives from it) with no word of why."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.runtime_env import tickets_dir

from toolgen.cli.call import ReceiptStoreError, open_receipts
from toolgen.runtime import Registry
from toolgen.testing.tickets_server import TicketsServer


@pytest.mark.parametrize("length", [0, 1, 15, 31])
def test_a_damaged_key_file_is_refused_naming_it(tmp_path: Path, length: int) -> None:
    (tmp_path / "cursor.key").write_bytes(b"\x01" * length)
    (tmp_path / "cursor.key").chmod(0o600)
    with pytest.raises(ReceiptStoreError, match=r"cursor\.key"):
        open_receipts(str(tmp_path / "receipts.sqlite3"))


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620])
def test_a_key_file_others_may_read_is_refused(tmp_path: Path, mode: int) -> None:
    """A `cursor.key` committed to a repository is checked out 644: whoever wrote it can forge
    cursors (a link cursor is a URL the runtime fetches with its credentials) and approval-round
    states (their key derives from it)."""
    key = tmp_path / "cursor.key"
    key.write_bytes(b"k" * 32)
    key.chmod(mode)
    with pytest.raises(ReceiptStoreError, match="readable or writable by others"):
        open_receipts(str(tmp_path / "receipts.sqlite3"))


def test_an_empty_cursor_key_is_not_a_random_key() -> None:
    with pytest.raises(ValueError, match="cursor key"):
        Registry.from_dir(tickets_dir(), cursor_key=b"")


def test_a_fresh_key_file_is_one_key_for_every_opener(tmp_path: Path) -> None:
    path = str(tmp_path / "receipts.sqlite3")
    first_store, first = open_receipts(path)
    second_store, second = open_receipts(path)
    first_store.close()
    second_store.close()
    assert first == second and len(first) == 32
    assert os.stat(tmp_path / "cursor.key").st_mode & 0o777 == 0o600


def _call(server: TicketsServer, receipts: Path, args: dict[str, object]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TICKETS_TOKEN": server.token}
    env.pop("TOOLGEN_CURSOR_KEY", None)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgen",
            "call",
            str(tickets_dir()),
            "list_tickets",
            "--scopes",
            "ticket:read",
            "--base-url",
            server.base_url,
            "--receipts",
            str(receipts),
            "--args",
            json.dumps(args),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_successive_calls_over_an_empty_key_file_do_not_each_pick_a_key(
    tmp_path: Path, server: TicketsServer
) -> None:
    receipts = tmp_path / "receipts.sqlite3"
    (tmp_path / "cursor.key").write_bytes(b"")
    (tmp_path / "cursor.key").chmod(0o600)
    first = _call(server, receipts, {"page_size": 2})
    if first.returncode == 2:  # refused, naming the damaged file: nothing more to check
        assert "cursor.key" in first.stderr, first.stderr
        return
    cursor = json.loads(first.stdout)["result"]["next_cursor"]
    second = _call(server, receipts, {"page_size": 2, "cursor": cursor})
    assert second.returncode == 0, second.stdout + second.stderr
