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
write).

The stores share the receipt store's backend: `MemoryPreviewStore` (one process),
`SqlitePreviewStore` (the receipt file's connection, table ``previews``) and `RedisPreviewStore` (the
receipt store's client, keys ``<prefix>p:...``). A receipt store hands out its preview store with
``previews()``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import redis


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
    """Previews in one process's memory (with `MemoryReceiptStore`)."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str, str], tuple[StoredPreview, str]] = {}
        self._lock = threading.Lock()

    def put(self, preview: StoredPreview) -> None:
        text = json.dumps(preview.arguments, ensure_ascii=False)  # stored as JSON, like the other stores
        now = time.time()
        with self._lock:
            for k in [k for k, (p, _) in self._data.items() if _keep_until(p) < now]:
                del self._data[k]
            self._data[(preview.scope, preview.actor, preview.preview_id)] = (preview, text)

    def get(self, scope: str, actor: str, preview_id: str) -> StoredPreview | None:
        with self._lock:
            found = self._data.get((scope, actor, preview_id))
        if found is None:
            return None
        preview, text = found
        return StoredPreview(preview.scope, preview.actor, preview.preview_id, preview.intent, _arguments(text),
                             preview.created_at, preview.expires_at)


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
  PRIMARY KEY (scope, actor, preview_id)
) WITHOUT ROWID
"""


class SqlitePreviewStore:
    """Previews in the receipt store's SQLite file (table ``previews``), on its connection and lock."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock) -> None:
        self._conn = conn
        self._lock = lock
        with self._lock:
            self._conn.execute(_SCHEMA)

    def put(self, preview: StoredPreview) -> None:
        text = json.dumps(preview.arguments, separators=(",", ":"), ensure_ascii=False)
        with self._lock:
            self._conn.execute("DELETE FROM previews WHERE keep_until < ?", (time.time(),))
            self._conn.execute(
                "INSERT OR REPLACE INTO previews (scope, actor, preview_id, intent, arguments, created_at, expires_at,"
                " keep_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (preview.scope, preview.actor, preview.preview_id, preview.intent, text, preview.created_at,
                 preview.expires_at, _keep_until(preview)))

    def get(self, scope: str, actor: str, preview_id: str) -> StoredPreview | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT intent, arguments, created_at, expires_at FROM previews WHERE scope=? AND actor=? AND"
                " preview_id=?", (scope, actor, preview_id)).fetchone()
        if row is None:
            return None
        intent, text, created, expires = row
        return StoredPreview(scope, actor, preview_id, str(intent), _arguments(str(text)), float(created),
                             float(expires))


class RedisPreviewStore:
    """Previews on the receipt store's Redis client: one hash per preview,
    ``<prefix>p:<len(scope)>:<scope>:<len(actor)>:<actor>:<preview_id>`` (fields ``intent arguments
    created_at expires_at``), which Redis deletes once the preview has been expired for its lifetime
    once more."""

    def __init__(self, client: redis.Redis, prefix: str) -> None:
        self._client = client
        self.prefix = prefix

    def redis_key(self, scope: str, actor: str, preview_id: str) -> str:
        return f"{self.prefix}p:{len(scope)}:{scope}:{len(actor)}:{actor}:{preview_id}"

    def put(self, preview: StoredPreview) -> None:
        name = self.redis_key(preview.scope, preview.actor, preview.preview_id)
        text = json.dumps(preview.arguments, separators=(",", ":"), ensure_ascii=False)
        keep_ms = max(1, round((_keep_until(preview) - time.time()) * 1000))
        pipe = self._client.pipeline(transaction=True)
        pipe.delete(name)
        pipe.hset(name, mapping={"intent": preview.intent, "arguments": text,
                                 "created_at": repr(preview.created_at), "expires_at": repr(preview.expires_at)})
        pipe.pexpire(name, keep_ms)
        pipe.execute()

    def get(self, scope: str, actor: str, preview_id: str) -> StoredPreview | None:
        raw = self._client.hgetall(self.redis_key(scope, actor, preview_id))
        if not raw:
            return None
        items = {_text(k): _text(v) for k, v in raw.items()}
        return StoredPreview(scope, actor, preview_id, items["intent"], _arguments(items["arguments"]),
                             float(items["created_at"]), float(items["expires_at"]))


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
