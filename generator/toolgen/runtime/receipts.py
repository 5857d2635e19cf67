"""Idempotency receipts: the durable record that makes a repeated write safe.

A receipt is keyed by ``(scope, key)``: `scope` is ``"<api>/<tool>"`` (keys are scoped per tool,
not per actor — the key is usually forwarded to the API, which scopes it by the runtime's own
credential, shared by all actors; see docs/runtime.md) and `key` is the idempotency-key argument.
It stores the canonical-argument `fingerprint`, a `state` and, once completed, the shaped result.

States: ``pending`` (written before the HTTP request), ``unknown`` (the request timed out: the
write may or may not have happened), ``completed`` (the result is stored and will be replayed).
A known failure (the API rejected the write, or it never left the machine) deletes the receipt so
the key can be used again.

`SqliteReceiptStore` is the default (WAL journal, survives restarts, safe across threads and
processes sharing one file); `MemoryReceiptStore` is for tests and single-process embedding. A
server store (PostgreSQL/Redis) implements the same `ReceiptStore` protocol.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol

ReceiptState = Literal["pending", "unknown", "completed"]

#: Where `toolgen call` / `toolgen serve` keep receipts unless told otherwise (relative to cwd).
DEFAULT_RECEIPTS_PATH = Path(".toolgen") / "receipts.sqlite3"


@dataclass(frozen=True)
class Receipt:
    """One stored receipt. Times are Unix seconds; `result` is the shaped result JSON (completed
    receipts only); `status` the HTTP status of the completed call."""

    scope: str
    key: str
    fingerprint: str
    state: ReceiptState
    actor: str
    result: Any = None
    status: int | None = None
    created_at: float = 0.0
    updated_at: float = 0.0


class ReceiptStore(Protocol):
    """Storage for idempotency receipts. All methods are atomic; `begin` must be a compare-and-set
    so that two concurrent calls with one key cannot both start a write."""

    def begin(self, scope: str, key: str, fingerprint: str, actor: str) -> Receipt | None:
        """Insert a ``pending`` receipt unless one exists. Returns ``None`` when this call created
        it (go ahead and send), else the existing receipt (do not send blindly)."""
        ...

    def complete(self, scope: str, key: str, result: Any, status: int) -> None:
        """Mark the receipt ``completed`` with the result to replay."""
        ...

    def mark_unknown(self, scope: str, key: str) -> None:
        """Mark the receipt ``unknown``: the request was sent but its outcome was not observed."""
        ...

    def resume(self, scope: str, key: str) -> None:
        """Set an ``unknown``/``pending`` receipt back to ``pending`` (a safe resend is starting)."""
        ...

    def release(self, scope: str, key: str) -> None:
        """Delete the receipt: the write is known not to have happened."""
        ...

    def get(self, scope: str, key: str) -> Receipt | None:
        """The stored receipt, or ``None``."""
        ...

    def close(self) -> None:
        """Release resources."""
        ...


class MemoryReceiptStore:
    """An in-process `ReceiptStore` (lost on restart)."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], Receipt] = {}
        self._lock = threading.Lock()

    def begin(self, scope: str, key: str, fingerprint: str, actor: str) -> Receipt | None:
        with self._lock:
            existing = self._data.get((scope, key))
            if existing is not None:
                return existing
            now = time.time()
            self._data[(scope, key)] = Receipt(scope, key, fingerprint, "pending", actor, None, None, now, now)
            return None

    def _set(self, scope: str, key: str, **changes: Any) -> None:
        with self._lock:
            existing = self._data.get((scope, key))
            if existing is not None:
                self._data[(scope, key)] = replace(existing, updated_at=time.time(), **changes)

    def complete(self, scope: str, key: str, result: Any, status: int) -> None:
        self._set(scope, key, state="completed", result=result, status=status)

    def mark_unknown(self, scope: str, key: str) -> None:
        self._set(scope, key, state="unknown")

    def resume(self, scope: str, key: str) -> None:
        self._set(scope, key, state="pending")

    def release(self, scope: str, key: str) -> None:
        with self._lock:
            self._data.pop((scope, key), None)

    def get(self, scope: str, key: str) -> Receipt | None:
        with self._lock:
            return self._data.get((scope, key))

    def close(self) -> None:
        pass


_SCHEMA = """
CREATE TABLE IF NOT EXISTS receipts (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  state TEXT NOT NULL,
  actor TEXT NOT NULL,
  result TEXT,
  status INTEGER,
  created_at REAL NOT NULL,
  updated_at REAL NOT NULL,
  PRIMARY KEY (scope, key)
) WITHOUT ROWID
"""


class SqliteReceiptStore:
    """A `ReceiptStore` in one SQLite file (default `DEFAULT_RECEIPTS_PATH`).

    WAL journal mode and ``synchronous=NORMAL``: a committed receipt survives a process crash or
    restart (it may be lost only on an OS crash / power loss). One connection per store guarded by
    a lock; several processes may share the file (``busy_timeout`` 5 s).
    """

    def __init__(self, path: str | os.PathLike[str] = DEFAULT_RECEIPTS_PATH) -> None:
        self.path = Path(path)
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=5.0)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=5000")
        self._conn.execute(_SCHEMA)

    def begin(self, scope: str, key: str, fingerprint: str, actor: str) -> Receipt | None:
        now = time.time()
        with self._lock:
            cur = self._conn.execute(
                "INSERT OR IGNORE INTO receipts (scope, key, fingerprint, state, actor, result, status,"
                " created_at, updated_at) VALUES (?, ?, ?, 'pending', ?, NULL, NULL, ?, ?)",
                (scope, key, fingerprint, actor, now, now),
            )
            if cur.rowcount == 1:
                return None
            return self._get_locked(scope, key)

    def complete(self, scope: str, key: str, result: Any, status: int) -> None:
        text = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
        with self._lock:
            self._conn.execute(
                "UPDATE receipts SET state='completed', result=?, status=?, updated_at=? WHERE scope=? AND key=?",
                (text, status, time.time(), scope, key),
            )

    def mark_unknown(self, scope: str, key: str) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE receipts SET state='unknown', updated_at=? WHERE scope=? AND key=? AND state='pending'",
                (time.time(), scope, key),
            )

    def resume(self, scope: str, key: str) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE receipts SET state='pending', updated_at=? WHERE scope=? AND key=? AND state!='completed'",
                (time.time(), scope, key),
            )

    def release(self, scope: str, key: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM receipts WHERE scope=? AND key=? AND state!='completed'", (scope, key))

    def get(self, scope: str, key: str) -> Receipt | None:
        with self._lock:
            return self._get_locked(scope, key)

    def _get_locked(self, scope: str, key: str) -> Receipt | None:
        row = self._conn.execute(
            "SELECT fingerprint, state, actor, result, status, created_at, updated_at FROM receipts"
            " WHERE scope=? AND key=?",
            (scope, key),
        ).fetchone()
        if row is None:
            return None
        fingerprint, state, actor, result, status, created, updated = row
        return Receipt(scope, key, fingerprint, state, actor, json.loads(result) if result is not None else None,
                       status, created, updated)

    def purge(self, older_than_seconds: float) -> int:
        """Delete completed receipts older than the given age; returns how many were deleted."""
        with self._lock:
            cur = self._conn.execute(
                "DELETE FROM receipts WHERE state='completed' AND updated_at < ?",
                (time.time() - older_than_seconds,),
            )
            return cur.rowcount

    def close(self) -> None:
        with self._lock:
            self._conn.close()
