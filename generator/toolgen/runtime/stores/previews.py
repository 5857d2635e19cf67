"""The preview store: what a record tool needs to execute exactly the request its preview showed.

When a write's record tool executes the stored preview (policy row ``record.arguments`` =
``preview``), its preview tool stores a `StoredPreview`: the validated, normalised canonical
arguments of the preview call, the intent and the ``preview_id`` (the canonical-request
fingerprint). The record call looks it up by ``(scope, actor, preview_id)``, rebuilds the request
from the stored arguments and sends it only when its fingerprint equals the ``preview_id``.

Keys: `scope` is ``"<api>/<record tool>"`` (a preview of one API or intent is invisible to any
other record tool) and `actor` is the id of the actor that made the preview (a preview is bound to
its actor; another actor gets ``preview_not_found``). Storing the same request again refreshes
the expiry.

Lifetime: a preview can be executed until `expires_at` (its ``preview_ttl_s`` after the preview
call). It is kept for as long again so the record call can say ``preview_expired`` rather than
``preview_not_found``; after that it is deleted (Redis expires the key, SQLite and memory purge on
write, touching only what has expired: a write costs the same however full the store is).

Bound: each actor keeps at most `MAX_PREVIEWS_PER_ACTOR` previews holding at most
`MAX_PREVIEW_BYTES_PER_ACTOR` of arguments, over every scope of the store together (every record
tool of every API sharing it, a composite's plan and issued approvals included). Storing one more
deletes that actor's least recently stored ones, of any scope, as needed (the newest always stays;
previewing an evicted one again stores it again, with the same ``preview_id``), so a caller
previewing in a loop, over one record tool or hundreds, never holds more than those bounds and
never pushes out another actor's previews. A store never refuses a preview for its size.

The stores share the receipt store's backend: `MemoryPreviewStore` (one process),
`SqlitePreviewStore` (the receipt file's connection, table ``previews``) and `RedisPreviewStore` (the
receipt store's client, keys ``<prefix>p:...``). A receipt store hands out its preview store with
``previews()``.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..clock import SYSTEM, Clock

if TYPE_CHECKING:
    import redis


#: Previews kept per actor (all scopes together); storing one more deletes that actor's least recently stored one.
MAX_PREVIEWS_PER_ACTOR = 1000
#: Bytes of stored arguments (their UTF-8 JSON) kept per actor (all scopes together), evicting the same way;
#: the newest preview always stays, whatever its size.
MAX_PREVIEW_BYTES_PER_ACTOR = 16 * 1024 * 1024


@dataclass(frozen=True)
class StoredPreview:
    """One stored preview. `arguments`: the preview call's canonical arguments as validated and
    normalised (a JSON object); `preview_id`: the fingerprint of the request they build;
    `created_at` / `expires_at`: Unix seconds."""

    scope: str
    actor: str
    preview_id: str
    intent: str
    arguments: dict[str, Any]
    created_at: float
    expires_at: float

    def expired(self, now: float) -> bool:
        return now >= self.expires_at


class PreviewStore(Protocol):
    """Storage for previews a record tool executes. Both methods may raise on a store outage
    (the registry reports ``receipt_store_unavailable``)."""

    def put(self, preview: StoredPreview) -> None:
        """Store (or refresh) `preview`, keyed by ``(scope, actor, preview_id)``."""
        ...

    def get(self, scope: str, actor: str, preview_id: str) -> StoredPreview | None:
        """The stored preview (possibly expired: see `StoredPreview.expired`), or ``None``."""
        ...


def _keep_until(preview: StoredPreview) -> float:
    """When a stored preview is deleted: its lifetime once more after it expired."""
    return preview.expires_at + max(0.0, preview.expires_at - preview.created_at)


def _arguments(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise TypeError("a stored preview's arguments are not a JSON object")
    return value


class MemoryPreviewStore:
    """Previews in one process's memory (with `MemoryReceiptStore`). A write purges only the
    previews past their deletion time (a heap ordered by it) and evicts beyond `max_per_actor`
    previews or `max_bytes_per_actor` bytes of arguments per actor (all scopes): O(log n) per write."""

    def __init__(
        self,
        max_per_actor: int = MAX_PREVIEWS_PER_ACTOR,
        max_bytes_per_actor: int = MAX_PREVIEW_BYTES_PER_ACTOR,
        *,
        clock: Clock = SYSTEM,
    ) -> None:
        self.clock = clock
        self.max_per_actor = max(1, int(max_per_actor))
        self.max_bytes_per_actor = max(1, int(max_bytes_per_actor))
        self._data: dict[tuple[str, str, str], tuple[StoredPreview, str]] = {}
        # per actor: its (scope, preview id)s -> bytes, least recently stored first; and their total
        self._order: dict[str, dict[tuple[str, str], int]] = {}
        self._bytes: dict[str, int] = {}
        self._deadlines: list[tuple[float, tuple[str, str, str]]] = []  # (keep until, key), a heap
        self._lock = threading.Lock()

    def size(self) -> int:
        """How many previews are stored (expired ones not yet purged included)."""
        with self._lock:
            return len(self._data)

    def _delete(self, key: tuple[str, str, str]) -> None:
        del self._data[key]
        owner = self._order.get(key[1])
        if owner is not None:
            self._bytes[key[1]] -= owner.pop((key[0], key[2]), 0)
            if not owner:
                del self._order[key[1]], self._bytes[key[1]]

    def put(self, preview: StoredPreview) -> None:
        text = json.dumps(preview.arguments, ensure_ascii=False)  # stored as JSON, like the other stores
        now = self.clock.time()
        key = (preview.scope, preview.actor, preview.preview_id)
        keep = _keep_until(preview)
        with self._lock:
            while self._deadlines and self._deadlines[0][0] < now:
                until, old = heapq.heappop(self._deadlines)
                found = self._data.get(old)
                if found is not None and _keep_until(found[0]) == until:  # not refreshed since
                    self._delete(old)
            if key in self._data:
                self._delete(key)  # a refresh makes it the most recently stored
            self._data[key] = (preview, text)
            heapq.heappush(self._deadlines, (keep, key))
            owner = self._order.setdefault(preview.actor, {})
            owner[(key[0], key[2])] = len(text.encode("utf-8", "surrogatepass"))
            self._bytes[preview.actor] = self._bytes.get(preview.actor, 0) + owner[(key[0], key[2])]
            while len(owner) > 1 and (
                len(owner) > self.max_per_actor or self._bytes[preview.actor] > self.max_bytes_per_actor
            ):
                scope, preview_id = next(iter(owner))
                self._delete((scope, preview.actor, preview_id))
            if len(self._deadlines) > 2 * len(self._data) + 64:  # refreshed entries left behind
                self._deadlines = [(_keep_until(p), k) for k, (p, _) in self._data.items()]
                heapq.heapify(self._deadlines)

    def get(self, scope: str, actor: str, preview_id: str) -> StoredPreview | None:
        with self._lock:
            found = self._data.get((scope, actor, preview_id))
        if found is None:
            return None
        preview, text = found
        return StoredPreview(
            preview.scope,
            preview.actor,
            preview.preview_id,
            preview.intent,
            _arguments(text),
            preview.created_at,
            preview.expires_at,
        )


_SCHEMA = """
CREATE TABLE IF NOT EXISTS previews (
  scope TEXT NOT NULL,
  actor TEXT NOT NULL,
  preview_id TEXT NOT NULL,
  intent TEXT NOT NULL,
  arguments TEXT NOT NULL,
  created_at REAL NOT NULL,
  expires_at REAL NOT NULL,
  keep_until REAL NOT NULL,
  size INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (scope, actor, preview_id)
) WITHOUT ROWID
"""
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS previews_keep_until ON previews (keep_until)",
    "CREATE INDEX IF NOT EXISTS previews_of_actor ON previews (actor, created_at, size)",
)
# per actor (all scopes): how many previews and how many bytes of arguments, kept by triggers
_TOTALS = (
    (
        "CREATE TABLE IF NOT EXISTS preview_actor_totals (actor TEXT NOT NULL PRIMARY KEY, count INTEGER NOT NULL,"
        " bytes INTEGER NOT NULL) WITHOUT ROWID"
    ),
    (
        "CREATE TRIGGER IF NOT EXISTS previews_actor_counted AFTER INSERT ON previews BEGIN"
        " INSERT INTO preview_actor_totals (actor, count, bytes) VALUES (new.actor, 1, new.size)"
        " ON CONFLICT (actor) DO UPDATE SET count = count + 1, bytes = bytes + new.size; END"
    ),
    (
        "CREATE TRIGGER IF NOT EXISTS previews_actor_uncounted AFTER DELETE ON previews BEGIN"
        " UPDATE preview_actor_totals SET count = count - 1, bytes = bytes - old.size WHERE actor = old.actor;"
        " DELETE FROM preview_actor_totals WHERE actor = old.actor AND count <= 0; END"
    ),
)


#: the columns of each table of the SQLite receipt file, as this toolgen writes them
_COLUMNS = {
    "receipts": (
        "scope",
        "key",
        "fingerprint",
        "state",
        "actor",
        "result",
        "status",
        "created_at",
        "updated_at",
        "lease_ms",
    ),
    "spends": ("scope", "digest", "action", "actor", "created_at", "keep_until"),
    "previews": (
        "scope",
        "actor",
        "preview_id",
        "intent",
        "arguments",
        "created_at",
        "expires_at",
        "keep_until",
        "size",
    ),
}


class LayoutError(ValueError):
    """A SQLite receipt file whose tables this toolgen does not write (an unreleased earlier layout,
    or another program's file): refused, never read or converted. The message names the file and
    the table."""


def refuse_other_layout(conn: sqlite3.Connection, path: object = None) -> None:
    """Raise `LayoutError` unless every table of `_COLUMNS` that the file holds has exactly its
    columns, and the file holds no table or row of another layout (``preview_totals``; a spent
    approval kept as a receipt of scope ``...#approval``, which would not count as spent)."""
    file = (
        str(path) if path is not None else (conn.execute("PRAGMA database_list").fetchone()[2] or ":memory:")
    )
    hint = "; it is not read or converted: delete it (or give another receipts path) to start afresh"
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for table, expected in _COLUMNS.items():
        if table not in tables:
            continue
        columns = tuple(row[1] for row in conn.execute(f"PRAGMA table_info({table})"))
        if sorted(columns) != sorted(expected):
            raise LayoutError(
                f"{file}: table {table} has the columns {', '.join(columns)}, not the "
                f"{', '.join(expected)} this toolgen writes{hint}"
            )
    if "preview_totals" in tables:
        raise LayoutError(f"{file}: table preview_totals is of a layout this toolgen does not write{hint}")
    if (
        "receipts" in tables
        and conn.execute("SELECT 1 FROM receipts WHERE scope LIKE '%#approval' LIMIT 1").fetchone()
        is not None
    ):
        raise LayoutError(
            f"{file}: table receipts holds spent approvals (scope ...#approval) of a layout this "
            f"toolgen does not write, which it would not count as spent{hint}"
        )


class SqlitePreviewStore:
    """Previews in the receipt store's SQLite file (table ``previews``), on its connection and lock.
    Indexed by deletion time (a write purges only what has expired) and by ``(actor, created_at)``
    (evicting beyond `max_per_actor` previews or `max_bytes_per_actor` bytes of arguments per actor,
    all scopes, column ``size``; table ``preview_actor_totals`` keeps each actor's count and bytes by
    trigger, recounted on opening). A ``previews`` table of another layout is refused
    (`refuse_other_layout`). `conn`
    is in autocommit mode (``isolation_level=None``, as `SqliteReceiptStore` opens it): a write is one ``BEGIN IMMEDIATE``
    transaction."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        lock: threading.Lock,
        max_per_actor: int = MAX_PREVIEWS_PER_ACTOR,
        max_bytes_per_actor: int = MAX_PREVIEW_BYTES_PER_ACTOR,
        *,
        clock: Clock = SYSTEM,
    ) -> None:
        self.clock = clock
        self._conn = conn
        self._lock = lock
        self.max_per_actor = max(1, int(max_per_actor))
        self.max_bytes_per_actor = max(1, int(max_bytes_per_actor))
        with self._lock:
            self._conn.execute(_SCHEMA)
            refuse_other_layout(self._conn)
            for statement in _TOTALS:
                self._conn.execute(statement)
            self._conn.execute("BEGIN IMMEDIATE")  # recount: the totals follow the table, whatever wrote it
            self._conn.execute("DELETE FROM preview_actor_totals")
            self._conn.execute(
                "INSERT INTO preview_actor_totals (actor, count, bytes) SELECT actor,"
                " COUNT(*), SUM(size) FROM previews GROUP BY actor"
            )
            self._conn.execute("COMMIT")
            for index in _INDEXES:
                self._conn.execute(index)

    def put(self, preview: StoredPreview) -> None:
        text = json.dumps(preview.arguments, separators=(",", ":"), ensure_ascii=False)
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")  # one transaction: purge, store, evict
            try:
                self._conn.execute("DELETE FROM previews WHERE keep_until < ?", (self.clock.time(),))
                self._conn.execute(
                    "DELETE FROM previews WHERE scope=? AND actor=? AND preview_id=?",
                    (preview.scope, preview.actor, preview.preview_id),
                )  # a refresh
                self._conn.execute(
                    "INSERT INTO previews (scope, actor, preview_id, intent, arguments, created_at, expires_at,"
                    " keep_until, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        preview.scope,
                        preview.actor,
                        preview.preview_id,
                        preview.intent,
                        text,
                        preview.created_at,
                        preview.expires_at,
                        _keep_until(preview),
                        len(text.encode("utf-8", "surrogatepass")),
                    ),
                )
                # beyond the bounds: the actor's least recently stored previews go (never the newest)
                self._evict(preview.actor, (preview.scope, preview.preview_id))
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _evict(self, actor: str, newest: tuple[str, str]) -> None:
        """Delete `actor`'s least recently stored previews (of any scope) beyond the bounds, never
        `newest` (scope, preview id). Below the bounds this reads the totals and one index entry; at
        them (and whenever the totals disagree with the rows, changed behind the store) it counts the
        actor's rows again from the covering index, so it ends and evicts exactly whatever the totals
        said."""
        where = "FROM previews WHERE actor=?"
        row = self._conn.execute(
            "SELECT count, bytes FROM preview_actor_totals WHERE actor=?", (actor,)
        ).fetchone()
        count, total = (int(row[0]), int(row[1])) if row is not None else (0, 0)
        more = (
            count < 1 or self._conn.execute(f"SELECT 1 {where} LIMIT 1 OFFSET ?", (actor, count)).fetchone()
        )
        if not more and count <= self.max_per_actor and total <= self.max_bytes_per_actor:
            return
        self._conn.execute("DELETE FROM preview_actor_totals WHERE actor=?", (actor,))
        self._conn.execute(
            f"INSERT INTO preview_actor_totals (actor, count, bytes) SELECT actor, COUNT(*),"
            f" SUM(size) {where} GROUP BY actor",
            (actor,),
        )
        count, total = self._conn.execute(
            f"SELECT COUNT(*), COALESCE(SUM(size), 0) {where}", (actor,)
        ).fetchone()
        victims: list[tuple[str, str, str]] = []
        for scope, preview_id, size in self._conn.execute(
            f"SELECT scope, preview_id, size {where} ORDER BY created_at, scope, preview_id", (actor,)
        ).fetchall():
            if count <= 1 or (count <= self.max_per_actor and total <= self.max_bytes_per_actor):
                break
            if (scope, preview_id) != newest:
                victims.append((str(scope), actor, str(preview_id)))
                count, total = count - 1, total - int(size)
        self._conn.executemany("DELETE FROM previews WHERE scope=? AND actor=? AND preview_id=?", victims)

    def get(self, scope: str, actor: str, preview_id: str) -> StoredPreview | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT intent, arguments, created_at, expires_at FROM previews WHERE scope=? AND actor=? AND"
                " preview_id=?",
                (scope, actor, preview_id),
            ).fetchone()
        if row is None:
            return None
        intent, text, created, expires = row
        return StoredPreview(
            scope, actor, preview_id, str(intent), _arguments(str(text)), float(created), float(expires)
        )


# KEYS[1] the actor's index (sorted set: member -> keep until), KEYS[2] its sizes (hash: member -> bytes),
# a member naming one preview of any scope (`_member`); ARGV now, member, keep until, bytes, keep ms, max
# previews, max bytes. Forgets members Redis has expired, adds the member, then evicts the least recently
# stored beyond the bounds (never the member just stored); returns the evicted members, whose preview
# hashes the caller deletes.
_BOOK_PREVIEW = """
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
for _, id in ipairs(expired) do redis.call('HDEL', KEYS[2], id) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
local total = 0
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do total = total + tonumber(v) end
local count = redis.call('ZCARD', KEYS[1])
local evicted = {}
while count > 1 and (count > tonumber(ARGV[6]) or total > tonumber(ARGV[7])) do
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
  if oldest == ARGV[2] then break end
  total = total - tonumber(redis.call('HGET', KEYS[2], oldest) or '0')
  redis.call('ZREM', KEYS[1], oldest)
  redis.call('HDEL', KEYS[2], oldest)
  count = count - 1
  evicted[#evicted + 1] = oldest
end
for _, key in ipairs(KEYS) do
  if redis.call('PTTL', key) < tonumber(ARGV[5]) then redis.call('PEXPIRE', key, ARGV[5]) end
end
return evicted
"""


class RedisPreviewStore:
    """Previews on the receipt store's Redis client: one hash per preview,
    ``<prefix>p:<len(scope)>:<scope>:<len(actor)>:<actor>:<preview_id>`` (fields ``intent arguments
    created_at expires_at``), which Redis deletes once the preview has been expired for its lifetime
    once more; and per actor (all scopes) a sorted set ``<prefix>pa:<len(actor)>:<actor>`` of its
    previews (members ``<len(scope)>:<scope>:<preview_id>``) by deletion time and a hash
    ``<prefix>pb:<len(actor)>:<actor>`` of their sizes, which bound them to `max_per_actor` previews and `max_bytes_per_actor` bytes (the least
    recently stored go first, deleted by the write that stores one more)."""

    def __init__(
        self,
        client: redis.Redis,
        prefix: str,
        max_per_actor: int = MAX_PREVIEWS_PER_ACTOR,
        max_bytes_per_actor: int = MAX_PREVIEW_BYTES_PER_ACTOR,
        *,
        clock: Clock = SYSTEM,
    ) -> None:
        self.clock = clock
        self._client = client
        self.prefix = prefix
        self.max_per_actor = max(1, int(max_per_actor))
        self.max_bytes_per_actor = max(1, int(max_bytes_per_actor))
        self._book = client.register_script(_BOOK_PREVIEW)

    def redis_key(self, scope: str, actor: str, preview_id: str) -> str:
        return f"{self.prefix}p:{len(scope)}:{scope}:{len(actor)}:{actor}:{preview_id}"

    def index_key(self, actor: str, kind: str = "pa") -> str:
        """The actor's index (``pa``) or sizes (``pb``)."""
        return f"{self.prefix}{kind}:{len(actor)}:{actor}"

    def put(self, preview: StoredPreview) -> None:
        name = self.redis_key(preview.scope, preview.actor, preview.preview_id)
        text = json.dumps(preview.arguments, separators=(",", ":"), ensure_ascii=False)
        now = self.clock.time()
        keep_until = _keep_until(preview)
        keep_ms = max(1, round((keep_until - now) * 1000))
        pipe = self._client.pipeline(transaction=True)
        pipe.delete(name)
        pipe.hset(
            name,
            mapping={
                "intent": preview.intent,
                "arguments": text,
                "created_at": repr(preview.created_at),
                "expires_at": repr(preview.expires_at),
            },
        )
        pipe.pexpire(name, keep_ms)
        pipe.execute()
        evicted = self._book(
            keys=[self.index_key(preview.actor), self.index_key(preview.actor, "pb")],
            args=[
                repr(now),
                _member(preview.scope, preview.preview_id),
                repr(keep_until),
                len(text.encode("utf-8", "surrogatepass")),
                keep_ms,
                self.max_per_actor,
                self.max_bytes_per_actor,
            ],
        )
        if evicted:
            gone = [_unmember(_text(m)) for m in evicted]
            self._client.delete(*(self.redis_key(scope, preview.actor, pid) for scope, pid in gone))

    def get(self, scope: str, actor: str, preview_id: str) -> StoredPreview | None:
        raw = self._client.hgetall(self.redis_key(scope, actor, preview_id))
        if not raw:
            return None
        items = {_text(k): _text(v) for k, v in raw.items()}
        return StoredPreview(
            scope,
            actor,
            preview_id,
            items["intent"],
            _arguments(items["arguments"]),
            float(items["created_at"]),
            float(items["expires_at"]),
        )


def _member(scope: str, preview_id: str) -> str:
    """A preview in an actor's Redis index: ``<len(scope)>:<scope>:<preview_id>``."""
    return f"{len(scope)}:{scope}:{preview_id}"


def _unmember(member: str) -> tuple[str, str]:
    """(scope, preview id) of `_member`."""
    length, _, rest = member.partition(":")
    n = int(length)
    return rest[:n], rest[n + 1 :]


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
