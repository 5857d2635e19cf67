"""`PostgresReceiptStore`: receipts, spent approvals, stored previews and issued approvals in PostgreSQL.

Same semantics as `SqliteReceiptStore` (sqlite.py, base.py), for teams that already run PostgreSQL:
every worker on every machine that opens the same database and table prefix shares idempotency,
previews, issued approvals (stored as previews, approvals.py) and the pagination-cursor key.

Tables (prefix ``toolgen_`` by default, created on first use): ``<prefix>receipts`` (primary key
``(scope, key)``), ``<prefix>spends`` (``(scope, digest)``), ``<prefix>previews`` (``(scope, actor,
preview_id)``, indexed by deletion time and by ``(scope, actor, created_at)``) and ``<prefix>meta``
(the shared cursor key). Results and arguments are stored as text, exactly the compact JSON the
other stores keep, so a replay returns the same bytes.

Atomicity: `begin` and `spend` are one transaction whose ``INSERT ... ON CONFLICT DO NOTHING`` is
the compare-and-set (under READ COMMITTED a second inserter waits for the first to commit and then
sees its row). Storing a preview takes a transaction-scoped advisory lock on its ``(scope, actor)``,
so the per-actor bounds of previews.py hold under concurrent writers. Times are the writing
worker's Unix time, as with SQLite and Redis.

Connection: one connection per store, guarded by a lock, autocommit outside explicit transactions.
A failed statement raises (the registry reports ``receipt_store_unavailable``, and a write whose
receipt could not be updated is left ``unknown``, never replayed as done); the next call opens a new
connection, so a database restart costs the calls made while it was down, nothing more. A call is
never retried inside the store: whether a statement that lost its connection committed is unknown.

Needs the optional `psycopg` package (``pip install 'toolgen[postgres]'``), imported only when a
store is created.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from .base import Receipt, ReceiptState, spend_expiry
from .previews import (
    MAX_PREVIEW_BYTES_PER_ACTOR,
    MAX_PREVIEWS_PER_ACTOR,
    StoredPreview,
    _arguments,
    _keep_until,
)

#: Table-name prefix of every table the store creates.
DEFAULT_TABLE_PREFIX = "toolgen_"
_IDENT = re.compile(r"^[a-z_][a-z0-9_]{0,40}$")
_T = TypeVar("_T")


def _import_psycopg() -> Any:
    try:
        import psycopg
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("a postgresql:// receipt store needs the psycopg package: "
                          "pip install 'toolgen[postgres]'") from exc
    return psycopg


def _schema(p: str) -> tuple[str, ...]:
    return (
        f"""CREATE TABLE IF NOT EXISTS {p}receipts (
          scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, state TEXT NOT NULL,
          actor TEXT NOT NULL, result TEXT, status INTEGER, created_at DOUBLE PRECISION NOT NULL,
          updated_at DOUBLE PRECISION NOT NULL, lease_ms BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (scope, key))""",
        f"""CREATE TABLE IF NOT EXISTS {p}spends (
          scope TEXT NOT NULL, digest TEXT NOT NULL, action TEXT NOT NULL, actor TEXT NOT NULL,
          created_at DOUBLE PRECISION NOT NULL, keep_until DOUBLE PRECISION, PRIMARY KEY (scope, digest))""",
        f"""CREATE TABLE IF NOT EXISTS {p}previews (
          scope TEXT NOT NULL, actor TEXT NOT NULL, preview_id TEXT NOT NULL, intent TEXT NOT NULL,
          arguments TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL,
          keep_until DOUBLE PRECISION NOT NULL, size BIGINT NOT NULL, PRIMARY KEY (scope, actor, preview_id))""",
        f"CREATE INDEX IF NOT EXISTS {p}previews_keep_until ON {p}previews (keep_until)",
        f"CREATE INDEX IF NOT EXISTS {p}previews_by_actor ON {p}previews (scope, actor, created_at, preview_id)",
        f"CREATE TABLE IF NOT EXISTS {p}meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    )


class PostgresReceiptStore:
    """A `ReceiptStore` in a PostgreSQL database (`url`: a libpq connection URL or DSN).

    `table_prefix` (lowercase letters, digits, ``_``; default ``toolgen_``) names the tables, so
    several independent stores can share one database. `completed_ttl` is accepted for parity with
    Redis and applied by `purge` only. Raises `ImportError` without psycopg, `ValueError` for a bad
    prefix, and psycopg's `OperationalError` when the database cannot be reached.
    """

    def __init__(self, url: str, table_prefix: str = DEFAULT_TABLE_PREFIX, connect_timeout: float = 5.0) -> None:
        if not _IDENT.match(table_prefix):
            raise ValueError(f"table prefix {table_prefix!r}: use lowercase letters, digits and '_' (at most 41)")
        self._psycopg = _import_psycopg()
        self.url = url
        self.prefix = table_prefix
        self._timeout = connect_timeout
        self._lock = threading.Lock()
        self._conn: Any = None
        self._previews: PostgresPreviewStore | None = None
        with self._lock, self._transaction() as cur:
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"toolgen-schema:{self.prefix}",))
            for statement in _schema(self.prefix):
                cur.execute(statement)

    # -- connection ------------------------------------------------------------------------------

    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed or self._conn.broken:
            if self._conn is not None:
                self._conn.close()
            self._conn = self._psycopg.connect(self.url, autocommit=True, connect_timeout=max(1, int(self._timeout)))
        return self._conn

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        """A cursor inside one transaction (the caller holds the lock); a failure rolls back and
        drops a broken connection so the next call reconnects."""
        conn = self._connection()
        try:
            with conn.transaction(), conn.cursor() as cur:
                yield cur
        except self._psycopg.OperationalError:
            conn.close()
            raise

    def _run(self, work: Callable[[Any], _T]) -> _T:
        with self._lock, self._transaction() as cur:
            return work(cur)

    # -- ReceiptStore ----------------------------------------------------------------------------

    def _expire_lease(self, cur: Any, now: float, scope: str, key: str) -> None:
        cur.execute(f"UPDATE {self.prefix}receipts SET state='unknown', updated_at=%s WHERE scope=%s AND key=%s"
                    " AND state='pending' AND lease_ms > 0 AND (%s - updated_at) * 1000 >= lease_ms",
                    (now, scope, key, now))

    def _select(self, cur: Any, scope: str, key: str) -> Receipt | None:
        cur.execute(f"SELECT fingerprint, state, actor, result, status, created_at, updated_at, lease_ms FROM"
                    f" {self.prefix}receipts WHERE scope=%s AND key=%s", (scope, key))
        row = cur.fetchone()
        if row is None:
            return None
        fingerprint, state, actor, result, status, created, updated, lease_ms = row
        return Receipt(scope, key, fingerprint, cast(ReceiptState, state), actor,
                       json.loads(result) if result is not None else None, status, float(created), float(updated),
                       int(lease_ms or 0))

    def begin(self, scope: str, key: str, fingerprint: str, actor: str, lease_ms: int = 0) -> Receipt | None:
        now = time.time()

        def work(cur: Any) -> Receipt | None:
            self._expire_lease(cur, now, scope, key)
            cur.execute(f"INSERT INTO {self.prefix}receipts (scope, key, fingerprint, state, actor, created_at,"
                        " updated_at, lease_ms) VALUES (%s, %s, %s, 'pending', %s, %s, %s, %s)"
                        " ON CONFLICT (scope, key) DO NOTHING", (scope, key, fingerprint, actor, now, now,
                                                                 int(lease_ms)))
            return None if cur.rowcount == 1 else self._select(cur, scope, key)

        return self._run(work)

    def complete(self, scope: str, key: str, result: Any, status: int) -> None:
        text = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
        self._run(lambda cur: cur.execute(
            f"UPDATE {self.prefix}receipts SET state='completed', result=%s, status=%s, updated_at=%s"
            " WHERE scope=%s AND key=%s", (text, int(status), time.time(), scope, key)))

    def mark_unknown(self, scope: str, key: str) -> None:
        self._run(lambda cur: cur.execute(
            f"UPDATE {self.prefix}receipts SET state='unknown', updated_at=%s WHERE scope=%s AND key=%s"
            " AND state='pending'", (time.time(), scope, key)))

    def resume(self, scope: str, key: str, lease_ms: int = 0) -> None:
        self._run(lambda cur: cur.execute(
            f"UPDATE {self.prefix}receipts SET state='pending', updated_at=%s, lease_ms=%s WHERE scope=%s"
            " AND key=%s AND state!='completed'", (time.time(), int(lease_ms), scope, key)))

    def release(self, scope: str, key: str) -> None:
        self._run(lambda cur: cur.execute(
            f"DELETE FROM {self.prefix}receipts WHERE scope=%s AND key=%s AND state!='completed'", (scope, key)))

    def get(self, scope: str, key: str) -> Receipt | None:
        now = time.time()

        def work(cur: Any) -> Receipt | None:
            self._expire_lease(cur, now, scope, key)
            return self._select(cur, scope, key)

        return self._run(work)

    def spend(self, scope: str, digest: str, action: str, actor: str, until: float | None) -> str | None:
        now = time.time()

        def work(cur: Any) -> str | None:
            cur.execute(f"DELETE FROM {self.prefix}spends WHERE scope=%s AND digest=%s AND keep_until < %s",
                        (scope, digest, now))
            cur.execute(f"INSERT INTO {self.prefix}spends (scope, digest, action, actor, created_at, keep_until)"
                        " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (scope, digest) DO NOTHING",
                        (scope, digest, action, actor, now, spend_expiry(until)))
            if cur.rowcount == 1:
                return None
            cur.execute(f"SELECT action FROM {self.prefix}spends WHERE scope=%s AND digest=%s", (scope, digest))
            row = cur.fetchone()
            return None if row is None else str(row[0])

        return self._run(work)

    def unspend(self, scope: str, digest: str, action: str) -> None:
        self._run(lambda cur: cur.execute(
            f"DELETE FROM {self.prefix}spends WHERE scope=%s AND digest=%s AND action=%s", (scope, digest, action)))

    def previews(self) -> PostgresPreviewStore:
        """The preview store in the same database (table ``<prefix>previews``), on this store's
        connection and lock."""
        if self._previews is None:
            self._previews = PostgresPreviewStore(self)
        return self._previews

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- maintenance -----------------------------------------------------------------------------

    def purge(self, older_than_seconds: float) -> int:
        """Delete completed receipts older than the given age, and spent approvals past their expiry
        (as `SqliteReceiptStore.purge`); returns how many receipts were deleted."""
        now = time.time()

        def work(cur: Any) -> int:
            cur.execute(f"DELETE FROM {self.prefix}receipts WHERE state='completed' AND updated_at < %s",
                        (now - older_than_seconds,))
            deleted = int(cur.rowcount)
            cur.execute(f"DELETE FROM {self.prefix}spends WHERE keep_until < %s", (now,))
            return deleted

        return self._run(work)

    def shared_cursor_key(self) -> bytes:
        """A 32-byte HMAC key for pagination cursors, created once and kept in ``<prefix>meta``, so
        every worker sharing this database accepts the others' cursors."""

        def work(cur: Any) -> str:
            cur.execute(f"INSERT INTO {self.prefix}meta (name, value) VALUES ('cursor-key', %s)"
                        " ON CONFLICT (name) DO NOTHING", (secrets.token_hex(32),))
            cur.execute(f"SELECT value FROM {self.prefix}meta WHERE name='cursor-key'")
            return str(cur.fetchone()[0])

        text = self._run(work)
        try:
            data = bytes.fromhex(text)
        except ValueError:
            data = b""
        if len(data) < 32:
            raise ValueError(f"the row 'cursor-key' of {self.prefix}meta holds no usable cursor key (64 hex digits)")
        return data[:32]


class PostgresPreviewStore:
    """Previews in the receipt store's database (table ``<prefix>previews``), with the bounds and
    lifetimes of previews.py: a write deletes what is past its deletion time, stores the preview,
    then evicts the actor's least recently stored previews beyond `max_per_actor` previews or
    `max_bytes_per_actor` bytes (never the one just stored), all in one transaction under an
    advisory lock on ``(scope, actor)``."""

    def __init__(self, store: PostgresReceiptStore, max_per_actor: int = MAX_PREVIEWS_PER_ACTOR,
                 max_bytes_per_actor: int = MAX_PREVIEW_BYTES_PER_ACTOR) -> None:
        self._store = store
        self.max_per_actor = max(1, int(max_per_actor))
        self.max_bytes_per_actor = max(1, int(max_bytes_per_actor))

    def put(self, preview: StoredPreview) -> None:
        text = json.dumps(preview.arguments, separators=(",", ":"), ensure_ascii=False)
        size = len(text.encode("utf-8", "surrogatepass"))
        table = f"{self._store.prefix}previews"
        owner = (preview.scope, preview.actor)

        def work(cur: Any) -> None:
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))",
                        (f"toolgen-previews:{len(owner[0])}:{owner[0]}:{owner[1]}",))
            cur.execute(f"DELETE FROM {table} WHERE keep_until < %s", (time.time(),))
            cur.execute(f"INSERT INTO {table} (scope, actor, preview_id, intent, arguments, created_at, expires_at,"
                        " keep_until, size) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (scope, actor,"
                        " preview_id) DO UPDATE SET intent=EXCLUDED.intent, arguments=EXCLUDED.arguments,"
                        " created_at=EXCLUDED.created_at, expires_at=EXCLUDED.expires_at,"
                        " keep_until=EXCLUDED.keep_until, size=EXCLUDED.size",
                        (*owner, preview.preview_id, preview.intent, text, preview.created_at, preview.expires_at,
                         _keep_until(preview), size))
            cur.execute(f"SELECT COUNT(*), COALESCE(SUM(size), 0) FROM {table} WHERE scope=%s AND actor=%s", owner)
            count, total = (int(v) for v in cur.fetchone())
            if count <= self.max_per_actor and total <= self.max_bytes_per_actor:
                return
            cur.execute(f"SELECT preview_id, size FROM {table} WHERE scope=%s AND actor=%s"
                        " ORDER BY created_at, preview_id", owner)
            victims: list[str] = []
            for preview_id, row_size in cur.fetchall():
                if count <= 1 or (count <= self.max_per_actor and total <= self.max_bytes_per_actor):
                    break
                if preview_id != preview.preview_id:
                    victims.append(str(preview_id))
                    count, total = count - 1, total - int(row_size)
            if victims:
                cur.execute(f"DELETE FROM {table} WHERE scope=%s AND actor=%s AND preview_id = ANY(%s)",
                            (*owner, victims))

        self._store._run(work)

    def get(self, scope: str, actor: str, preview_id: str) -> StoredPreview | None:
        def work(cur: Any) -> Any:
            cur.execute(f"SELECT intent, arguments, created_at, expires_at FROM {self._store.prefix}previews"
                        " WHERE scope=%s AND actor=%s AND preview_id=%s", (scope, actor, preview_id))
            return cur.fetchone()

        row = self._store._run(work)
        if row is None:
            return None
        intent, text, created, expires = row
        return StoredPreview(scope, actor, preview_id, str(intent), _arguments(str(text)), float(created),
                             float(expires))
