"""Idempotency receipts: the durable record that makes a repeated write safe.

A receipt is keyed by ``(scope, key)``: `scope` is ``"<api>/<tool>"`` (keys are scoped per tool,
not per actor — the key is usually forwarded to the API, which scopes it by the runtime's own
credential, shared by all actors; see docs/runtime.md) and `key` is the idempotency-key argument.
It stores the canonical-request `fingerprint`, a `state`, the owner's `lease_ms` (how long the owner
may hold a ``pending`` receipt before it counts as abandoned) and, once completed, the shaped result.

States: ``pending`` (written before the HTTP request), ``unknown`` (the request timed out: the
write may or may not have happened), ``completed`` (the result is stored and will be replayed).
A known failure (the API rejected the write, or it never left the machine) deletes the receipt so
the key can be used again.

`SqliteReceiptStore` is the default (WAL journal, survives restarts, safe across threads and
processes sharing one file); `MemoryReceiptStore` is for tests and single-process embedding;
`RedisReceiptStore` (receipts_redis.py, optional `redis` extra) is shared by workers on many
machines. `receipts_from_url` picks one from a URL or a path (``toolgen call/serve --receipts``).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit

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
    lease_ms: int = 0

    def in_flight(self, now: float, fallback_lease_ms: int) -> bool:
        """True while a ``pending`` receipt is inside the window its owner stored (`lease_ms`,
        milliseconds since `updated_at`): the owner may still be waiting for the API. Receipts
        written without a lease use `fallback_lease_ms`. Another caller's own deadline never
        shortens the window."""
        lease = self.lease_ms if self.lease_ms > 0 else fallback_lease_ms
        return self.state == "pending" and (now - self.updated_at) * 1000 < lease


class ReceiptStore(Protocol):
    """Storage for idempotency receipts. All methods are atomic; `begin` must be a compare-and-set
    so that two concurrent calls with one key cannot both start a write."""

    def begin(self, scope: str, key: str, fingerprint: str, actor: str, lease_ms: int = 0) -> Receipt | None:
        """Insert a ``pending`` receipt unless one exists. Returns ``None`` when this call created
        it (go ahead and send), else the existing receipt (do not send blindly). `lease_ms` is how
        long (milliseconds) the caller may take before its ``pending`` receipt counts as abandoned."""
        ...

    def complete(self, scope: str, key: str, result: Any, status: int) -> None:
        """Mark the receipt ``completed`` with the result to replay."""
        ...

    def mark_unknown(self, scope: str, key: str) -> None:
        """Mark the receipt ``unknown``: the request was sent but its outcome was not observed."""
        ...

    def resume(self, scope: str, key: str, lease_ms: int = 0) -> None:
        """Set an ``unknown``/``pending`` receipt back to ``pending`` (a safe resend is starting),
        with the resender's `lease_ms`."""
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

    def begin(self, scope: str, key: str, fingerprint: str, actor: str, lease_ms: int = 0) -> Receipt | None:
        with self._lock:
            existing = self._data.get((scope, key))
            if existing is not None:
                return existing
            now = time.time()
            self._data[(scope, key)] = Receipt(scope, key, fingerprint, "pending", actor, None, None, now, now,
                                               int(lease_ms))
            return None

    def _set(self, scope: str, key: str, only_from: tuple[ReceiptState, ...], **changes: Any) -> None:
        with self._lock:
            existing = self._data.get((scope, key))
            if existing is not None and existing.state in only_from:
                self._data[(scope, key)] = replace(existing, updated_at=time.time(), **changes)

    # the same state rules as SqliteReceiptStore: a completed receipt is never reopened or released
    def complete(self, scope: str, key: str, result: Any, status: int) -> None:
        copy = json.loads(json.dumps(result, ensure_ascii=False))  # stored as JSON, like the other stores
        self._set(scope, key, ("pending", "unknown", "completed"), state="completed", result=copy, status=status)

    def mark_unknown(self, scope: str, key: str) -> None:
        self._set(scope, key, ("pending",), state="unknown")

    def resume(self, scope: str, key: str, lease_ms: int = 0) -> None:
        self._set(scope, key, ("pending", "unknown"), state="pending", lease_ms=int(lease_ms))

    def release(self, scope: str, key: str) -> None:
        with self._lock:
            existing = self._data.get((scope, key))
            if existing is not None and existing.state != "completed":
                del self._data[(scope, key)]

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
  lease_ms INTEGER NOT NULL DEFAULT 0,
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
            _create_private(self.path)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False, timeout=5.0)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA busy_timeout=5000")
        self._conn.execute(_SCHEMA)
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(receipts)")}
        if "lease_ms" not in columns:  # a file written by an earlier version
            self._conn.execute("ALTER TABLE receipts ADD COLUMN lease_ms INTEGER NOT NULL DEFAULT 0")

    def begin(self, scope: str, key: str, fingerprint: str, actor: str, lease_ms: int = 0) -> Receipt | None:
        now = time.time()
        with self._lock:
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
                (text, status, time.time(), scope, key),
            )

    def mark_unknown(self, scope: str, key: str) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE receipts SET state='unknown', updated_at=? WHERE scope=? AND key=? AND state='pending'",
                (time.time(), scope, key),
            )

    def resume(self, scope: str, key: str, lease_ms: int = 0) -> None:
        with self._lock:
            self._conn.execute(
                "UPDATE receipts SET state='pending', updated_at=?, lease_ms=? WHERE scope=? AND key=?"
                " AND state!='completed'",
                (time.time(), int(lease_ms), scope, key),
            )

    def release(self, scope: str, key: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM receipts WHERE scope=? AND key=? AND state!='completed'", (scope, key))

    def get(self, scope: str, key: str) -> Receipt | None:
        with self._lock:
            return self._get_locked(scope, key)

    def _get_locked(self, scope: str, key: str) -> Receipt | None:
        row = self._conn.execute(
            "SELECT fingerprint, state, actor, result, status, created_at, updated_at, lease_ms FROM receipts"
            " WHERE scope=? AND key=?",
            (scope, key),
        ).fetchone()
        if row is None:
            return None
        fingerprint, state, actor, result, status, created, updated, lease_ms = row
        return Receipt(scope, key, fingerprint, state, actor, json.loads(result) if result is not None else None,
                       status, created, updated, int(lease_ms or 0))

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


def _create_private(path: Path) -> None:
    """Create the receipts file readable by its owner only (mode 0600): receipts hold result bodies.
    An existing file keeps its mode."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return
    os.close(fd)


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")
_REDIS_SCHEMES = {"redis": "redis", "rediss": "rediss", "redis+unix": "unix", "unix": "unix"}


def receipts_scheme(spec: str | os.PathLike[str]) -> str:
    """``"redis"``, ``"sqlite"`` or ``"memory"``: the store `receipts_from_url` opens for `spec`.
    Raises `ValueError` for an unknown URL scheme."""
    if not isinstance(spec, str):
        return "sqlite"
    match = _SCHEME.match(spec)
    if match is None:
        return "sqlite"
    scheme = match.group(1).lower()
    if scheme in _REDIS_SCHEMES:
        return "redis"
    if scheme in ("sqlite", "memory"):
        return scheme
    raise ValueError(
        f"unknown receipt store URL scheme {scheme!r}: use redis://, rediss://, redis+unix://, sqlite:///PATH, "
        "memory:// or a file path"
    )


def receipts_from_url(spec: str | os.PathLike[str]) -> ReceiptStore:
    """Open the receipt store a URL or path names:

    - ``redis://[[user]:password@]host[:port][/db]``, ``rediss://...`` (TLS),
      ``redis+unix:///path/to/redis.sock?db=0`` → `RedisReceiptStore`. The query parameters
      ``prefix`` (key namespace, default ``toolgen:``) and ``completed_ttl`` (seconds a completed
      receipt is kept; default forever) configure the store; any others go to redis-py.
    - ``sqlite:///relative/file`` or ``sqlite:////absolute/file`` → `SqliteReceiptStore`.
    - ``memory://`` → `MemoryReceiptStore` (one process, lost on exit).
    - anything without a scheme is a SQLite file path.

    Raises `ValueError` for an unknown scheme or a bad parameter, `ImportError` when a Redis URL is
    given without the `redis` package installed.
    """
    kind = receipts_scheme(spec)
    if kind == "memory":
        return MemoryReceiptStore()
    if kind == "sqlite":
        text = os.fspath(spec)
        if isinstance(text, str) and text.lower().startswith("sqlite://"):
            text = text[len("sqlite://"):]
            text = text.removeprefix("/")
            if not text:
                raise ValueError("a sqlite:// receipts URL needs a file: sqlite:///receipts.sqlite3")
        return SqliteReceiptStore(text)
    from .receipts_redis import DEFAULT_PREFIX, RedisReceiptStore

    parts = urlsplit(str(spec))
    prefix = DEFAULT_PREFIX
    completed_ttl: float | None = None
    passed: list[tuple[str, str]] = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name == "prefix":
            prefix = value
        elif name == "completed_ttl":
            try:
                completed_ttl = float(value) if value not in ("", "none", "0") else None
            except ValueError:
                raise ValueError(f"completed_ttl must be a number of seconds, not {value!r}") from None
        else:
            passed.append((name, value))
    query = urlencode(passed)
    # not urlunsplit: it drops the "//" of unix:///path when there is no host
    url = f"{_REDIS_SCHEMES[parts.scheme.lower()]}://{parts.netloc}{parts.path}" + (f"?{query}" if query else "")
    return RedisReceiptStore(url, prefix=prefix, completed_ttl=completed_ttl)
