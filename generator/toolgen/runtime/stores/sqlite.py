"""`SqliteReceiptStore`: receipts in one SQLite file, shared by the processes of one machine.

WAL journal, survives restarts, safe across threads and processes sharing one file. The default
store of `toolgen call` and `toolgen serve` (`DEFAULT_RECEIPTS_PATH`). Stored previews
(`previews()`, previews.py) are the table ``previews`` of the same file. A file whose tables have
another layout than the one below is refused when the store opens (`LayoutError`, naming the file
and the table: delete the file, or name another, to start afresh); it is never read or converted.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..clock import SYSTEM, Clock
from .base import LimitTake, Receipt, limit_refusal, spend_expiry
from .previews import LayoutError, SqlitePreviewStore, refuse_other_layout

#: Where `toolgen call` / `toolgen serve` keep receipts unless told otherwise (relative to cwd).
DEFAULT_RECEIPTS_PATH = Path(".toolgen") / "receipts.sqlite3"


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
  lease_ms INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (scope, key)
) WITHOUT ROWID
"""

# spent approvals (`ReceiptStore.spend`): never touched by `purge` until `keep_until` (NULL: forever)
_SPENDS = """
CREATE TABLE IF NOT EXISTS spends (
  scope TEXT NOT NULL,
  digest TEXT NOT NULL,
  action TEXT NOT NULL,
  actor TEXT NOT NULL,
  created_at REAL NOT NULL,
  keep_until REAL,
  PRIMARY KEY (scope, digest)
) WITHOUT ROWID
"""

# what limits count (`ReceiptStore.take`): one entry per call and bucket, until it expires
_LIMITS = """
CREATE TABLE IF NOT EXISTS limit_entries (
  bucket TEXT NOT NULL,
  token TEXT NOT NULL,
  cost REAL NOT NULL,
  expires_at REAL NOT NULL,
  PRIMARY KEY (bucket, token)
) WITHOUT ROWID
"""

# a pending receipt past its lease turns unknown (ARGV: now, scope, key)
_EXPIRE_LEASE = (
    "UPDATE receipts SET state='unknown', updated_at=?1 WHERE scope=?2 AND key=?3 AND state='pending'"
    " AND lease_ms > 0 AND (?1 - updated_at) * 1000 >= lease_ms"
)


class SqliteReceiptStore:
    """A `ReceiptStore` in one SQLite file (default `DEFAULT_RECEIPTS_PATH`).

    WAL journal mode and ``synchronous=NORMAL``: a committed receipt survives a process crash or
    restart (it may be lost only on an OS crash / power loss). One connection per store guarded by
    a lock; several processes may share the file (``busy_timeout`` 5 s).
    """

    def __init__(
        self, path: str | os.PathLike[str] = DEFAULT_RECEIPTS_PATH, *, clock: Clock = SYSTEM
    ) -> None:
        self.clock = clock
        self.path = Path(path)
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _create_private(self.path)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            str(self.path), isolation_level=None, check_same_thread=False, timeout=5.0
        )
        try:  # before anything is written to the file: a file of another layout stays as it was
            self._conn.execute("PRAGMA busy_timeout=5000")
            refuse_other_layout(self._conn, self.path)
        except (LayoutError, sqlite3.Error):
            self._conn.close()
            raise
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(_SCHEMA)
        self._previews: SqlitePreviewStore | None = None
        self._conn.execute(_SPENDS)
        self._conn.execute(_LIMITS)

    def begin(self, scope: str, key: str, fingerprint: str, actor: str, lease_ms: int = 0) -> Receipt | None:
        now = self.clock.time()
        with self._lock:
            self._conn.execute(_EXPIRE_LEASE, (now, scope, key))
            cur = self._conn.execute(
                "INSERT OR IGNORE INTO receipts (scope, key, fingerprint, state, actor, result, status,"
                " created_at, updated_at, lease_ms) VALUES (?, ?, ?, 'pending', ?, NULL, NULL, ?, ?, ?)",
                (scope, key, fingerprint, actor, now, now, int(lease_ms)),
            )
            if cur.rowcount == 1:
                return None
            return self._get_locked(scope, key)

    def complete(self, scope: str, key: str, result: Any, status: int) -> None:
        text = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
        with self._lock:
            self._conn.execute(
                "UPDATE receipts SET state='completed', result=?, status=?, updated_at=? WHERE scope=? AND key=?",
                (text, status, self.clock.time(), scope, key),
            )

    def mark_unknown(self, scope: str, key: str) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE receipts SET state='unknown', updated_at=? WHERE scope=? AND key=? AND state='pending'",
                (self.clock.time(), scope, key),
            )

    def resume(self, scope: str, key: str, lease_ms: int = 0) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE receipts SET state='pending', updated_at=?, lease_ms=? WHERE scope=? AND key=?"
                " AND state!='completed'",
                (self.clock.time(), int(lease_ms), scope, key),
            )

    def release(self, scope: str, key: str) -> None:
        with self._lock:
            self._conn.execute(
                "DELETE FROM receipts WHERE scope=? AND key=? AND state!='completed'", (scope, key)
            )

    def get(self, scope: str, key: str) -> Receipt | None:
        with self._lock:
            self._conn.execute(_EXPIRE_LEASE, (self.clock.time(), scope, key))
            return self._get_locked(scope, key)

    def spend(self, scope: str, digest: str, action: str, actor: str, until: float | None) -> str | None:
        now = self.clock.time()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.execute(
                    "DELETE FROM spends WHERE scope=? AND digest=? AND keep_until < ?", (scope, digest, now)
                )
                cur = self._conn.execute(
                    "INSERT OR IGNORE INTO spends (scope, digest, action, actor, created_at, keep_until)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (scope, digest, action, actor, now, spend_expiry(until)),
                )
                row = (
                    None
                    if cur.rowcount == 1
                    else self._conn.execute(
                        "SELECT action FROM spends WHERE scope=? AND digest=?", (scope, digest)
                    ).fetchone()
                )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        return None if row is None else str(row[0])

    def unspend(self, scope: str, digest: str, action: str) -> None:
        with self._lock:
            self._conn.execute(
                "DELETE FROM spends WHERE scope=? AND digest=? AND action=?", (scope, digest, action)
            )

    def take(self, takes: Sequence[LimitTake]) -> tuple[int, float] | None:
        now = self.clock.time()
        with self._lock:
            self._conn.execute(
                "BEGIN IMMEDIATE"
            )  # one writer at a time, across the processes sharing the file
            try:
                for index, take in enumerate(takes):
                    self._conn.execute(
                        "DELETE FROM limit_entries WHERE bucket=? AND expires_at <= ?", (take.bucket, now)
                    )
                    live = self._conn.execute(
                        "SELECT cost, expires_at FROM limit_entries WHERE bucket=?", (take.bucket,)
                    ).fetchall()
                    wait = limit_refusal(live, take.cost, take.max, now)
                    if wait is not None:
                        self._conn.execute("ROLLBACK")
                        return index, wait
                    self._conn.execute(
                        "INSERT OR REPLACE INTO limit_entries (bucket, token, cost, expires_at)"
                        " VALUES (?, ?, ?, ?)",
                        (take.bucket, take.token, take.cost, now + take.keep_s),
                    )
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
        return None

    def give(self, takes: Sequence[LimitTake]) -> None:
        with self._lock:
            self._conn.executemany(
                "DELETE FROM limit_entries WHERE bucket=? AND token=?",
                [(take.bucket, take.token) for take in takes],
            )

    def _get_locked(self, scope: str, key: str) -> Receipt | None:
        row = self._conn.execute(
            "SELECT fingerprint, state, actor, result, status, created_at, updated_at, lease_ms FROM receipts"
            " WHERE scope=? AND key=?",
            (scope, key),
        ).fetchone()
        if row is None:
            return None
        return Receipt.stored(scope, key, row)

    def previews(self) -> SqlitePreviewStore:
        """The preview store in the same file (table ``previews``), on this store's connection."""
        if self._previews is None:
            self._previews = SqlitePreviewStore(self._conn, self._lock, clock=self.clock)
        return self._previews

    def purge(self, older_than_seconds: float) -> int:
        """Delete completed receipts older than the given age, and spent approvals past their
        expiry (never a spend that could still be presented); returns how many receipts were deleted."""
        now = self.clock.time()
        with self._lock:
            cur = self._conn.execute(
                "DELETE FROM receipts WHERE state='completed' AND updated_at < ?",
                (now - older_than_seconds,),
            )
            deleted = cur.rowcount
            self._conn.execute("DELETE FROM spends WHERE keep_until < ?", (now,))
            self._conn.execute("DELETE FROM limit_entries WHERE expires_at <= ?", (now,))
            return deleted

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _create_private(path: Path) -> None:
    """Create the receipts file readable by its owner only (mode 0600): receipts hold result bodies.
    An existing file keeps its mode."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)
