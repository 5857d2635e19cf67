"""Idempotency receipts: the durable record that makes a repeated write safe.

`base` defines the `Receipt` and the `ReceiptStore` protocol; the stores are `MemoryReceiptStore`
(memory.py: tests and single-process embedding), `SqliteReceiptStore` (sqlite.py: the default;
one file, survives restarts, shared by the processes of one machine), `RedisReceiptStore`
(redis.py, optional `redis` extra: shared by workers on many machines) and `PostgresReceiptStore`
(postgres.py, optional `postgres` extra: the same, in a PostgreSQL database). Each hands out the preview store on the same
backend with ``previews()`` (previews.py: what a record tool executes). `receipts_from_url` picks
one from a URL or a path (``toolgen call/serve --receipts``). One behavioural test suite runs
against all four.
"""

from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, urlencode, urlsplit

from ..clock import SYSTEM, Clock
from .base import SPEND_MARGIN_S, LimitTake, Receipt, ReceiptState, ReceiptStore, limit_refusal, spend_digest
from .memory import MemoryReceiptStore
from .postgres import (
    CONNECT_TIMEOUT,
    DEFAULT_TABLE_PREFIX,
    POOL_SIZE,
    PostgresPreviewStore,
    PostgresReceiptStore,
)
from .previews import (
    LayoutError,
    MemoryPreviewStore,
    PreviewStore,
    RedisPreviewStore,
    SqlitePreviewStore,
    StoredPreview,
)
from .redis import DEFAULT_PREFIX, RedisReceiptStore
from .sqlite import DEFAULT_RECEIPTS_PATH, SqliteReceiptStore

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+)://")
_REDIS_SCHEMES = {"redis": "redis", "rediss": "rediss", "redis+unix": "unix", "unix": "unix"}
_POSTGRES_SCHEMES = ("postgresql", "postgres")


def receipts_scheme(spec: str | os.PathLike[str]) -> str:
    """``"redis"``, ``"postgres"``, ``"sqlite"`` or ``"memory"``: the store `receipts_from_url` opens for `spec`.
    Raises `ValueError` for an unknown URL scheme."""
    if not isinstance(spec, str):
        return "sqlite"
    match = _SCHEME.match(spec)
    if match is None:
        return "sqlite"
    scheme = match.group(1).lower()
    if scheme in _REDIS_SCHEMES:
        return "redis"
    if scheme in _POSTGRES_SCHEMES:
        return "postgres"
    if scheme in ("sqlite", "memory"):
        return scheme
    raise ValueError(
        f"unknown receipt store URL scheme {scheme!r}: use redis://, rediss://, redis+unix://, postgresql://, "
        "sqlite:///PATH, "
        "memory:// or a file path"
    )


def receipts_from_url(spec: str | os.PathLike[str], *, clock: Clock = SYSTEM) -> ReceiptStore:
    """Open the receipt store a URL or path names:

    - ``redis://[[user]:password@]host[:port][/db]``, ``rediss://...`` (TLS),
      ``redis+unix:///path/to/redis.sock?db=0`` → `RedisReceiptStore`. The query parameters
      ``prefix`` (key namespace, default ``toolgen:``) and ``completed_ttl`` (seconds a completed
      receipt is kept; default forever) configure the store; any others go to redis-py.
    - ``postgresql://[user[:password]@]host[:port]/dbname[?...]`` (or ``postgres://``) →
      `PostgresReceiptStore`. The query parameters ``table_prefix`` (default ``toolgen_``: names its
      tables), ``pool_size`` (default 8: connections per process) and ``connect_timeout`` (seconds, default 5:
      libpq's own parameter, here bounding the whole open, retries included) configure the store; any others (``sslmode``, ``host`` for a unix socket folder, ...) go to libpq.
    - ``sqlite:///relative/file`` or ``sqlite:////absolute/file`` → `SqliteReceiptStore`.
    - ``memory://`` → `MemoryReceiptStore` (one process, lost on exit).
    - anything without a scheme is a SQLite file path.

    `clock`: where the store reads the time (`toolgen.runtime.clock`; default the system clock).
    Raises `ValueError` for an unknown scheme or a bad parameter, `ImportError` when a Redis URL is
    given without the `redis` package installed (a PostgreSQL URL without `psycopg`), and psycopg's
    `OperationalError` when a PostgreSQL database cannot be reached.
    """
    kind = receipts_scheme(spec)
    if kind == "memory":
        return MemoryReceiptStore(clock=clock)
    if kind == "sqlite":
        text = os.fspath(spec)
        if isinstance(text, str) and text.lower().startswith("sqlite://"):
            text = text[len("sqlite://") :]
            text = text.removeprefix("/")
            if not text:
                raise ValueError("a sqlite:// receipts URL needs a file: sqlite:///receipts.sqlite3")
        return SqliteReceiptStore(text, clock=clock)
    if kind == "postgres":
        return _postgres_from_url(str(spec), clock)
    own, url = _take_options(
        str(spec), ("prefix", "completed_ttl"), _REDIS_SCHEMES[urlsplit(str(spec)).scheme.lower()]
    )
    completed_ttl: float | None = None
    ttl = own.get("completed_ttl", "")
    try:
        completed_ttl = float(ttl) if ttl not in ("", "none", "0") else None
    except ValueError:
        raise ValueError(f"completed_ttl must be a number of seconds, not {ttl!r}") from None
    return RedisReceiptStore(
        url, prefix=own.get("prefix", DEFAULT_PREFIX), completed_ttl=completed_ttl, clock=clock
    )


def _postgres_from_url(spec: str, clock: Clock = SYSTEM) -> PostgresReceiptStore:
    own, url = _take_options(spec, ("table_prefix", "pool_size", "connect_timeout"))
    pool = own.get("pool_size", str(POOL_SIZE))
    if not pool.isdigit():
        raise ValueError(f"pool_size must be a whole number of connections, not {pool!r}")
    timeout = own.get("connect_timeout", str(CONNECT_TIMEOUT))
    if not timeout.isdigit() or int(timeout) < 1:
        raise ValueError(f"connect_timeout must be a whole number of seconds, at least 1, not {timeout!r}")
    return PostgresReceiptStore(
        url,
        table_prefix=own.get("table_prefix", DEFAULT_TABLE_PREFIX),
        pool_size=int(pool),
        connect_timeout=float(timeout),
        clock=clock,
    )


def _take_options(spec: str, names: tuple[str, ...], scheme: str | None = None) -> tuple[dict[str, str], str]:
    """The store's own query parameters (`names`; the last of a repeated one wins) of the store URL
    `spec`, and the URL without them (any others go to the driver), its scheme replaced by `scheme`.
    Put together by hand, not by urlunsplit, which drops the "//" of ``unix:///path`` without a host."""
    parts = urlsplit(spec)
    own: dict[str, str] = {}
    passed: list[tuple[str, str]] = []
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if name in names:
            own[name] = value
        else:
            passed.append((name, value))
    query = urlencode(passed)
    return own, f"{scheme or parts.scheme}://{parts.netloc}{parts.path}" + (f"?{query}" if query else "")


__all__ = [
    "DEFAULT_PREFIX",
    "DEFAULT_RECEIPTS_PATH",
    "SPEND_MARGIN_S",
    "LayoutError",
    "LimitTake",
    "MemoryPreviewStore",
    "MemoryReceiptStore",
    "PostgresPreviewStore",
    "PostgresReceiptStore",
    "PreviewStore",
    "Receipt",
    "ReceiptState",
    "ReceiptStore",
    "RedisPreviewStore",
    "RedisReceiptStore",
    "SqlitePreviewStore",
    "SqliteReceiptStore",
    "StoredPreview",
    "limit_refusal",
    "receipts_from_url",
    "receipts_scheme",
    "spend_digest",
]
