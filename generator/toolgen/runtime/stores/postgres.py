"""`PostgresReceiptStore`: receipts, spent approvals, stored previews and issued approvals in PostgreSQL.

Same semantics as `SqliteReceiptStore` (sqlite.py, base.py), for teams that already run PostgreSQL:
every worker on every machine that opens the same database and table prefix shares idempotency,
previews, issued approvals (stored as previews, approvals.py) and the pagination-cursor key.

Tables (prefix ``toolgen_`` by default, created on first use): ``<prefix>receipts`` (primary key
``(scope, key)``), ``<prefix>spends`` (``(scope, digest)``), ``<prefix>limits`` (``(bucket, token)``:
what limits count), ``<prefix>previews`` (``(scope, actor,
preview_id)``, indexed by deletion time and by ``(actor, created_at)``) and ``<prefix>meta``
(the shared cursor key). Results and arguments are stored as text, exactly the compact JSON the
other stores keep, so a replay returns the same bytes.

Atomicity: `take` (limits) is one transaction under an advisory lock per bucket. `begin` and
`spend` are one transaction whose ``INSERT ... ON CONFLICT DO NOTHING`` is
the compare-and-set (under READ COMMITTED a second inserter waits for the first to commit and then
sees its row). Storing a preview takes a transaction-scoped advisory lock on its actor,
so the per-actor bounds of previews.py hold under concurrent writers. Times are the writing
worker's Unix time, as with SQLite and Redis.

Connections: a psycopg pool per store (`POOL_SIZE` at most, per worker process), each connection
checked alive when taken, autocommit outside the explicit transactions. A failed statement raises
(the registry reports ``receipt_store_unavailable``, and a write whose receipt could not be updated
is left ``unknown``, never replayed as done); the pool discards the broken connection and the next
call gets a fresh one, so a database restart costs the calls made while it was down, nothing more.
A call is never retried inside the store: whether a statement that lost its connection committed
cannot be known.

Schema: versioned in ``<prefix>meta`` (``schema-version``); opening a store creates or migrates the
tables to `SCHEMA_VERSION` under an advisory lock (several workers starting at once migrate once)
and refuses tables written by a newer toolgen.

Needs the optional `psycopg` and `psycopg-pool` packages (the ``postgres`` extra: ``pip install -e ".[postgres]"`` in a clone of toolgen),
imported only when a store is created.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..clock import SYSTEM, Clock
from .base import LimitTake, Receipt, limit_refusal, spend_expiry
from .previews import (
    MAX_PREVIEW_BYTES_PER_ACTOR,
    MAX_PREVIEWS_PER_ACTOR,
    StoredPreview,
    _arguments,
    _keep_until,
)

#: Table-name prefix of every table the store creates.
DEFAULT_TABLE_PREFIX = "toolgen_"
#: a whole table prefix (`fullmatch`: ``$`` would also let a trailing newline through)
_IDENT = re.compile(r"[a-z_][a-z0-9_]{0,40}")
_T = TypeVar("_T")


def _import_psycopg() -> tuple[Any, Any]:
    try:
        import psycopg
        import psycopg_pool
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "a postgresql:// receipt store needs psycopg and psycopg-pool: pip install -e "
            '".[postgres]" in a clone of toolgen (it is not on a package index)'
        ) from exc
    return psycopg, psycopg_pool


def _schema_v1(p: str) -> tuple[str, ...]:
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
        f"CREATE INDEX IF NOT EXISTS {p}previews_of_actor ON {p}previews (actor, created_at, scope, preview_id)",
    )


def _schema_v2(p: str) -> tuple[str, ...]:
    """Version 2: the entries limits count (`PostgresReceiptStore.take`)."""
    return (
        f"""CREATE TABLE IF NOT EXISTS {p}limits (
          bucket TEXT NOT NULL, token TEXT NOT NULL, cost DOUBLE PRECISION NOT NULL,
          expires_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (bucket, token))""",
    )


class _Refused(Exception):
    """Rolls back a `take` that a bucket refused, carrying the refusal."""

    def __init__(self, refusal: tuple[int, float]) -> None:
        super().__init__(refusal)
        self.refusal = refusal


#: The schema this code writes; ``_MIGRATIONS[n]`` takes the tables from version n to n + 1.
SCHEMA_VERSION = 2
_MIGRATIONS: tuple[Callable[[str], tuple[str, ...]], ...] = (_schema_v1, _schema_v2)
#: Connections per store (per worker process) at most.
POOL_SIZE = 8
CONNECT_TIMEOUT = 5  # seconds to open the store (retries included) and to wait for a connection


class PostgresReceiptStore:
    """A `ReceiptStore` in a PostgreSQL database (`url`: a libpq connection URL or DSN).

    `table_prefix` (lowercase letters, digits, ``_``; default ``toolgen_``) names the tables, so
    several independent stores can share one database; `pool_size` bounds this store's connections;
    `connect_timeout` (seconds) bounds opening and waiting for a connection. Raises `ImportError`
    without psycopg, `ValueError` for a bad prefix or pool size, psycopg_pool's `PoolTimeout` when the
    database cannot be reached, `RuntimeError` for tables of a newer schema version or of none.
    """

    def __init__(
        self,
        url: str,
        table_prefix: str = DEFAULT_TABLE_PREFIX,
        connect_timeout: float = CONNECT_TIMEOUT,
        pool_size: int = POOL_SIZE,
        *,
        clock: Clock = SYSTEM,
    ) -> None:
        self.clock = clock
        if not isinstance(table_prefix, str) or not _IDENT.fullmatch(table_prefix):
            raise ValueError(
                f"table prefix {table_prefix!r}: use lowercase letters, digits and '_' (at most 41)"
            )
        if not 1 <= pool_size <= 100:
            raise ValueError(f"pool_size must be between 1 and 100, not {pool_size}")
        _, pool_module = _import_psycopg()
        self.url = url
        self.prefix = table_prefix
        self._previews: PostgresPreviewStore | None = None
        self._pool = pool_module.ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            open=False,
            timeout=connect_timeout,
            name=f"toolgen-{table_prefix}",
            kwargs={"autocommit": True, "connect_timeout": max(1, int(connect_timeout))},
            check=pool_module.ConnectionPool.check_connection,
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
            self._run(self._migrate)
        except BaseException:
            self._pool.close()
            raise

    def _migrate(self, cur: Any) -> None:
        """Create or upgrade the tables to `SCHEMA_VERSION`, one worker at a time (an advisory lock);
        refuse a database written by a newer toolgen, and tables of the prefix that carry no schema
        version (a layout this toolgen does not write: never read or converted)."""
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"toolgen-schema:{self.prefix}",))
        cur.execute(
            f"CREATE TABLE IF NOT EXISTS {self.prefix}meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)"
        )
        cur.execute(f"SELECT value FROM {self.prefix}meta WHERE name='schema-version'")
        row = cur.fetchone()
        version = int(row[0]) if row is not None else 0
        if version == 0:
            cur.execute(
                "SELECT to_regclass(%s), to_regclass(%s), to_regclass(%s)",
                tuple(f"{self.prefix}{t}" for t in ("receipts", "spends", "previews")),
            )
            found = [name for name in (cur.fetchone() or ()) if name is not None]
            if found:
                raise RuntimeError(
                    f"the tables {', '.join(map(str, found))} carry no schema version (a layout this "
                    "toolgen does not write); they are not read or converted: drop them, or use "
                    "another table_prefix"
                )
        if version > SCHEMA_VERSION:
            raise RuntimeError(
                f"the tables {self.prefix}* hold schema version {version}, written by a newer toolgen "
                f"(this one knows {SCHEMA_VERSION}): upgrade toolgen, or use another table_prefix"
            )
        for step in range(version, SCHEMA_VERSION):
            for statement in _MIGRATIONS[step](self.prefix):
                cur.execute(statement)
        cur.execute(
            f"INSERT INTO {self.prefix}meta (name, value) VALUES ('schema-version', %s) ON CONFLICT (name)"
            " DO UPDATE SET value = EXCLUDED.value",
            (str(SCHEMA_VERSION),),
        )

    def schema_version(self) -> int:
        """The schema version of this store's tables (`SCHEMA_VERSION` once opened)."""

        def work(cur: Any) -> int:
            cur.execute(f"SELECT value FROM {self.prefix}meta WHERE name='schema-version'")
            return int(cur.fetchone()[0])

        return self._run(work)

    # -- connection ------------------------------------------------------------------------------

    def _run(self, work: Callable[[Any], _T]) -> _T:
        """`work(cursor)` inside one transaction on a pooled connection (checked alive first, so a
        connection the database dropped while idle is replaced, not failed on); a broken connection
        goes back to the pool, which discards it."""
        with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            return work(cur)

    # -- ReceiptStore ----------------------------------------------------------------------------

    def _expire_lease(self, cur: Any, now: float, scope: str, key: str) -> None:
        cur.execute(
            f"UPDATE {self.prefix}receipts SET state='unknown', updated_at=%s WHERE scope=%s AND key=%s"
            " AND state='pending' AND lease_ms > 0 AND (%s - updated_at) * 1000 >= lease_ms",
            (now, scope, key, now),
        )

    def _select(self, cur: Any, scope: str, key: str) -> Receipt | None:
        cur.execute(
            f"SELECT fingerprint, state, actor, result, status, created_at, updated_at, lease_ms FROM"
            f" {self.prefix}receipts WHERE scope=%s AND key=%s",
            (scope, key),
        )
        row = cur.fetchone()
        if row is None:
            return None
        return Receipt.stored(scope, key, row)

    def begin(self, scope: str, key: str, fingerprint: str, actor: str, lease_ms: int = 0) -> Receipt | None:
        now = self.clock.time()

        def work(cur: Any) -> Receipt | None:
            self._expire_lease(cur, now, scope, key)
            cur.execute(
                f"INSERT INTO {self.prefix}receipts (scope, key, fingerprint, state, actor, created_at,"
                " updated_at, lease_ms) VALUES (%s, %s, %s, 'pending', %s, %s, %s, %s)"
                " ON CONFLICT (scope, key) DO NOTHING",
                (scope, key, fingerprint, actor, now, now, int(lease_ms)),
            )
            return None if cur.rowcount == 1 else self._select(cur, scope, key)

        return self._run(work)

    def complete(self, scope: str, key: str, result: Any, status: int) -> None:
        text = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
        self._run(
            lambda cur: cur.execute(
                f"UPDATE {self.prefix}receipts SET state='completed', result=%s, status=%s, updated_at=%s"
                " WHERE scope=%s AND key=%s",
                (text, int(status), self.clock.time(), scope, key),
            )
        )

    def mark_unknown(self, scope: str, key: str) -> None:
        self._run(
            lambda cur: cur.execute(
                f"UPDATE {self.prefix}receipts SET state='unknown', updated_at=%s WHERE scope=%s AND key=%s"
                " AND state='pending'",
                (self.clock.time(), scope, key),
            )
        )

    def resume(self, scope: str, key: str, lease_ms: int = 0) -> None:
        self._run(
            lambda cur: cur.execute(
                f"UPDATE {self.prefix}receipts SET state='pending', updated_at=%s, lease_ms=%s WHERE scope=%s"
                " AND key=%s AND state!='completed'",
                (self.clock.time(), int(lease_ms), scope, key),
            )
        )

    def release(self, scope: str, key: str) -> None:
        self._run(
            lambda cur: cur.execute(
                f"DELETE FROM {self.prefix}receipts WHERE scope=%s AND key=%s AND state!='completed'",
                (scope, key),
            )
        )

    def get(self, scope: str, key: str) -> Receipt | None:
        now = self.clock.time()

        def work(cur: Any) -> Receipt | None:
            self._expire_lease(cur, now, scope, key)
            return self._select(cur, scope, key)

        return self._run(work)

    def spend(self, scope: str, digest: str, action: str, actor: str, until: float | None) -> str | None:
        now = self.clock.time()

        def work(cur: Any) -> str | None:
            cur.execute(
                f"DELETE FROM {self.prefix}spends WHERE scope=%s AND digest=%s AND keep_until < %s",
                (scope, digest, now),
            )
            cur.execute(
                f"INSERT INTO {self.prefix}spends (scope, digest, action, actor, created_at, keep_until)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (scope, digest) DO NOTHING",
                (scope, digest, action, actor, now, spend_expiry(until)),
            )
            if cur.rowcount == 1:
                return None
            cur.execute(
                f"SELECT action FROM {self.prefix}spends WHERE scope=%s AND digest=%s", (scope, digest)
            )
            row = cur.fetchone()
            return None if row is None else str(row[0])

        return self._run(work)

    def unspend(self, scope: str, digest: str, action: str) -> None:
        self._run(
            lambda cur: cur.execute(
                f"DELETE FROM {self.prefix}spends WHERE scope=%s AND digest=%s AND action=%s",
                (scope, digest, action),
            )
        )

    def take(self, takes: Sequence[LimitTake]) -> tuple[int, float] | None:
        """`ReceiptStore.take` in one transaction holding an advisory lock per bucket (taken in sorted
        order, so two calls over the same buckets never deadlock): no other take of those buckets
        reads or writes between this one's count and its insert, on any worker."""
        now = self.clock.time()
        table = f"{self.prefix}limits"

        def work(cur: Any) -> None:
            for bucket in sorted({take.bucket for take in takes}):
                cur.execute(
                    "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"toolgen-limit:{self.prefix}:{bucket}",)
                )
            for index, take in enumerate(takes):
                cur.execute(f"DELETE FROM {table} WHERE bucket=%s AND expires_at <= %s", (take.bucket, now))
                cur.execute(f"SELECT cost, expires_at FROM {table} WHERE bucket=%s", (take.bucket,))
                wait = limit_refusal(
                    [(float(c), float(e)) for c, e in cur.fetchall()], take.cost, take.max, now
                )
                if wait is not None:
                    raise _Refused((index, wait))
                cur.execute(
                    f"INSERT INTO {table} (bucket, token, cost, expires_at) VALUES (%s, %s, %s, %s)"
                    " ON CONFLICT (bucket, token) DO UPDATE SET cost=EXCLUDED.cost,"
                    " expires_at=EXCLUDED.expires_at",
                    (take.bucket, take.token, take.cost, now + take.keep_s),
                )

        try:
            self._run(work)
        except _Refused as refused:
            return refused.refusal
        return None

    def give(self, takes: Sequence[LimitTake]) -> None:
        def work(cur: Any) -> None:
            for take in takes:
                cur.execute(
                    f"DELETE FROM {self.prefix}limits WHERE bucket=%s AND token=%s", (take.bucket, take.token)
                )

        self._run(work)

    def previews(self) -> PostgresPreviewStore:
        """The preview store in the same database (table ``<prefix>previews``), on this store's
        connection and lock."""
        if self._previews is None:
            self._previews = PostgresPreviewStore(self)
        return self._previews

    def close(self) -> None:
        self._pool.close()

    # -- maintenance -----------------------------------------------------------------------------

    def purge(self, older_than_seconds: float) -> int:
        """Delete completed receipts older than the given age, and spent approvals past their expiry
        (as `SqliteReceiptStore.purge`); returns how many receipts were deleted."""
        now = self.clock.time()

        def work(cur: Any) -> int:
            cur.execute(
                f"DELETE FROM {self.prefix}receipts WHERE state='completed' AND updated_at < %s",
                (now - older_than_seconds,),
            )
            deleted = int(cur.rowcount)
            cur.execute(f"DELETE FROM {self.prefix}spends WHERE keep_until < %s", (now,))
            cur.execute(f"DELETE FROM {self.prefix}limits WHERE expires_at <= %s", (now,))
            return deleted

        return self._run(work)

    def shared_cursor_key(self) -> bytes:
        """A 32-byte HMAC key for pagination cursors, created once and kept in ``<prefix>meta``, so
        every worker sharing this database accepts the others' cursors."""

        def work(cur: Any) -> str:
            cur.execute(
                f"INSERT INTO {self.prefix}meta (name, value) VALUES ('cursor-key', %s)"
                " ON CONFLICT (name) DO NOTHING",
                (secrets.token_hex(32),),
            )
            cur.execute(f"SELECT value FROM {self.prefix}meta WHERE name='cursor-key'")
            return str(cur.fetchone()[0])

        text = self._run(work)
        try:
            data = bytes.fromhex(text)
        except ValueError:
            data = b""
        if len(data) < 32:
            raise ValueError(
                f"the row 'cursor-key' of {self.prefix}meta holds no usable cursor key (64 hex digits)"
            )
        return data[:32]


class PostgresPreviewStore:
    """Previews in the receipt store's database (table ``<prefix>previews``), with the bounds and
    lifetimes of previews.py: a write deletes what is past its deletion time, stores the preview,
    then evicts the actor's least recently stored previews, of any scope, beyond `max_per_actor`
    previews or `max_bytes_per_actor` bytes (never the one just stored), all in one transaction under
    an advisory lock on the actor."""

    def __init__(
        self,
        store: PostgresReceiptStore,
        max_per_actor: int = MAX_PREVIEWS_PER_ACTOR,
        max_bytes_per_actor: int = MAX_PREVIEW_BYTES_PER_ACTOR,
    ) -> None:
        self._store = store
        self.max_per_actor = max(1, int(max_per_actor))
        self.max_bytes_per_actor = max(1, int(max_bytes_per_actor))

    def put(self, preview: StoredPreview) -> None:
        text = json.dumps(preview.arguments, separators=(",", ":"), ensure_ascii=False)
        size = len(text.encode("utf-8", "surrogatepass"))
        table = f"{self._store.prefix}previews"
        owner = (preview.scope, preview.actor)

        def work(cur: Any) -> None:
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"toolgen-previews:actor:{owner[1]}",))
            cur.execute(f"DELETE FROM {table} WHERE keep_until < %s", (self._store.clock.time(),))
            cur.execute(
                f"INSERT INTO {table} (scope, actor, preview_id, intent, arguments, created_at, expires_at,"
                " keep_until, size) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (scope, actor,"
                " preview_id) DO UPDATE SET intent=EXCLUDED.intent, arguments=EXCLUDED.arguments,"
                " created_at=EXCLUDED.created_at, expires_at=EXCLUDED.expires_at,"
                " keep_until=EXCLUDED.keep_until, size=EXCLUDED.size",
                (
                    *owner,
                    preview.preview_id,
                    preview.intent,
                    text,
                    preview.created_at,
                    preview.expires_at,
                    _keep_until(preview),
                    size,
                ),
            )
            cur.execute(f"SELECT COUNT(*), COALESCE(SUM(size), 0) FROM {table} WHERE actor=%s", (owner[1],))
            count, total = (int(v) for v in cur.fetchone())
            if count <= self.max_per_actor and total <= self.max_bytes_per_actor:
                return
            cur.execute(
                f"SELECT scope, preview_id, size FROM {table} WHERE actor=%s"
                " ORDER BY created_at, scope, preview_id",
                (owner[1],),
            )
            victims: list[tuple[str, str]] = []
            for scope, preview_id, row_size in cur.fetchall():
                if count <= 1 or (count <= self.max_per_actor and total <= self.max_bytes_per_actor):
                    break
                if (scope, preview_id) != (preview.scope, preview.preview_id):
                    victims.append((str(scope), str(preview_id)))
                    count, total = count - 1, total - int(row_size)
            for scope, preview_id in victims:
                cur.execute(
                    f"DELETE FROM {table} WHERE scope=%s AND actor=%s AND preview_id=%s",
                    (scope, owner[1], preview_id),
                )

        self._store._run(work)

    def get(self, scope: str, actor: str, preview_id: str) -> StoredPreview | None:
        def work(cur: Any) -> Any:
            cur.execute(
                f"SELECT intent, arguments, created_at, expires_at FROM {self._store.prefix}previews"
                " WHERE scope=%s AND actor=%s AND preview_id=%s",
                (scope, actor, preview_id),
            )
            return cur.fetchone()

        row = self._store._run(work)
        if row is None:
            return None
        intent, text, created, expires = row
        return StoredPreview(
            scope, actor, preview_id, str(intent), _arguments(str(text)), float(created), float(expires)
        )
