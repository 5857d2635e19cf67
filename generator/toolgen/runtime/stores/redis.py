"""`RedisReceiptStore`: idempotency receipts shared by many runtime workers through one Redis server.

Same semantics as `SqliteReceiptStore` (see sqlite.py and base.py); every operation is one Lua script on one
Redis key, so each is atomic across processes and machines and the store works on Redis Cluster.

Layout: one hash per receipt, ``<prefix>r:<len(scope)>:<scope>:<key>`` (the length makes the
split between scope and key unambiguous), fields ``fingerprint state actor result status
created_at updated_at lease_ms``; `result` is compact JSON. Stored previews (`previews()`,
previews.py) live beside them under ``<prefix>p:...``, each with its own expiry. Times are the writing worker's Unix time, as in
SQLite (the registry compares them with its own clock to tell a stale *pending* from a live one, so
workers' clocks should agree within a fraction of a tool's deadline).

Limits (`take`): one hash per bucket, ``<prefix>l{limits}:<bucket>``, field the call's token, value
``"<cost> <expires_at>"``; one Lua script drops the expired entries of every bucket a call takes and
adds its entries or none, so the count is exact across workers; the hash expires with its last entry.

Spent approvals (`spend`): one string per approval, ``<prefix>s:<len(scope)>:<scope>:<digest>``
holding the action it is bound to, with a Redis expiry at the approval's own (plus
`SPEND_MARGIN_S`; none for an approval without expiry): ``completed_ttl`` and `purge` never touch it.

Lifetimes: *pending* and *unknown* receipts never expire (forgetting one could let a write happen
twice). A *completed* receipt lives forever by default; ``completed_ttl`` (seconds) lets Redis
expire it — choose at least the API's own idempotency window, since after expiry the same key
writes again.

Durability is Redis's: run it with ``appendonly yes`` (``appendfsync everysec``) for receipts that
survive a Redis restart; with snapshots only, the last seconds of receipts can be lost.

Needs the optional `redis` package (the ``redis`` extra: ``pip install -e ".[redis]"`` in a clone of toolgen); it is imported only when a
store is created.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..clock import SYSTEM, Clock
from .base import LimitTake, Receipt, spend_expiry
from .previews import RedisPreviewStore

if TYPE_CHECKING:
    import redis

#: Key prefix of every key the store writes.
DEFAULT_PREFIX = "toolgen:"

# A pending receipt past its lease turns unknown (KEYS[1] receipt, ARGV[1] now); the start of _BEGIN and _GET.
_EXPIRE_LEASE = """
local f = redis.call('HMGET', KEYS[1], 'state', 'updated_at', 'lease_ms')
if f[1] == 'pending' and tonumber(f[3] or '0') > 0
   and (tonumber(ARGV[1]) - tonumber(f[2])) * 1000 >= tonumber(f[3]) then
  redis.call('HSET', KEYS[1], 'state', 'unknown', 'updated_at', ARGV[1])
end
"""

# KEYS[1] receipt; ARGV now. The receipt's hash (empty when there is none).
_GET = (
    _EXPIRE_LEASE
    + """
return redis.call('HGETALL', KEYS[1])
"""
)

# KEYS[1] receipt; ARGV now, fingerprint, actor, lease_ms. Returns nil when created, else the existing hash.
_BEGIN = (
    _EXPIRE_LEASE
    + """
local existing = redis.call('HGETALL', KEYS[1])
if #existing > 0 then return existing end
redis.call('HSET', KEYS[1], 'fingerprint', ARGV[2], 'state', 'pending', 'actor', ARGV[3],
           'created_at', ARGV[1], 'updated_at', ARGV[1], 'lease_ms', ARGV[4])
return nil
"""
)

# KEYS[1] spend; ARGV action, keep ms (0 = forever). Returns nil when bound now, else the bound action.
_SPEND = """
local bound = redis.call('GET', KEYS[1])
if bound then return bound end
if tonumber(ARGV[2]) > 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else redis.call('SET', KEYS[1], ARGV[1]) end
return nil
"""

# KEYS[1] spend; ARGV action. Deletes the spend when it is bound to that action.
_UNSPEND = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# Limits (`take`). KEYS: one hash per bucket (field token -> "cost expires_at"); ARGV[1] now, then per
# key: token, cost, max, expires_at. Drops expired entries, then adds every entry or none: nil when
# added, else {index (1-based), seconds to wait or 'inf'}. Each hash expires with its last entry.
_TAKE = """
local now = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  local at = 1 + (i - 1) * 4
  local cost, most = tonumber(ARGV[at + 2]), tonumber(ARGV[at + 3])
  local flat = redis.call('HGETALL', key)
  local total, live = 0, {}
  for j = 1, #flat, 2 do
    local sep = string.find(flat[j + 1], ' ', 1, true)
    local c, e = tonumber(string.sub(flat[j + 1], 1, sep - 1)), tonumber(string.sub(flat[j + 1], sep + 1))
    if e <= now then redis.call('HDEL', key, flat[j]) else total = total + c; live[#live + 1] = {e, c} end
  end
  if total + cost > most then
    for k = 1, i - 1 do redis.call('HDEL', KEYS[k], ARGV[1 + (k - 1) * 4 + 1]) end
    if cost > most then return {i, 'inf'} end
    table.sort(live, function(a, b) return a[1] < b[1] end)
    local need, freed = total + cost - most, 0
    for _, entry in ipairs(live) do
      freed = freed + entry[2]
      if freed >= need then return {i, tostring(math.max(0, entry[1] - now))} end
    end
    return {i, 'inf'}
  end
  redis.call('HSET', key, ARGV[at + 1], ARGV[at + 2] .. ' ' .. ARGV[at + 4])
  local keep = math.ceil((tonumber(ARGV[at + 4]) - now) * 1000)
  if redis.call('PTTL', key) < keep then redis.call('PEXPIRE', key, math.max(1, keep)) end
end
return nil
"""

# KEYS[1] receipt; ARGV result JSON, status, now, ttl seconds (0 = none). Returns 1 when updated.
_COMPLETE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'state', 'completed', 'result', ARGV[1], 'status', ARGV[2], 'updated_at', ARGV[3])
local ttl = tonumber(ARGV[4])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) else redis.call('PERSIST', KEYS[1]) end
return 1
"""

# KEYS[1] receipt; ARGV now. pending → unknown.
_MARK_UNKNOWN = """
if redis.call('HGET', KEYS[1], 'state') ~= 'pending' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'unknown', 'updated_at', ARGV[1])
return 1
"""

# KEYS[1] receipt; ARGV now, lease_ms. unknown/pending → pending (a completed receipt stays completed).
_RESUME = """
local state = redis.call('HGET', KEYS[1], 'state')
if not state or state == 'completed' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'pending', 'updated_at', ARGV[1], 'lease_ms', ARGV[2])
return 1
"""

# KEYS[1] receipt. Deletes it unless it is completed.
_RELEASE = """
local state = redis.call('HGET', KEYS[1], 'state')
if not state or state == 'completed' then return 0 end
return redis.call('DEL', KEYS[1])
"""

# KEYS[1] receipt; ARGV cutoff. Deletes it when completed and last updated before the cutoff.
_PURGE_ONE = """
local fields = redis.call('HMGET', KEYS[1], 'state', 'updated_at')
if fields[1] ~= 'completed' or tonumber(fields[2]) >= tonumber(ARGV[1]) then return 0 end
return redis.call('DEL', KEYS[1])
"""


def _import_redis() -> Any:
    try:
        import redis
    except ModuleNotFoundError as exc:
        raise ImportError(
            "RedisReceiptStore needs the 'redis' package: pip install -e \".[redis]\" in a clone of toolgen "
            "(or pip install 'redis>=5')"
        ) from exc
    return redis


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class RedisReceiptStore:
    """A `ReceiptStore` on a Redis server, shared by every worker that uses the same server, database
    and `prefix`.

    `client_or_url`: a ``redis://``/``rediss://``/``unix://`` URL (`redis.Redis.from_url`; socket
    timeouts default to 5 s unless the URL sets them) or an existing `redis.Redis` client (not
    closed by `close`). `prefix`: namespace of the keys. `completed_ttl`: seconds after which Redis
    drops a completed receipt (default ``None``: never).
    """

    def __init__(
        self,
        client_or_url: str | redis.Redis = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = DEFAULT_PREFIX,
        completed_ttl: float | None = None,
        clock: Clock = SYSTEM,
    ) -> None:
        self.clock = clock
        if completed_ttl is not None and completed_ttl <= 0:
            raise ValueError("completed_ttl must be a positive number of seconds (or None for no expiry)")
        redis_mod = _import_redis()
        if isinstance(client_or_url, str):
            self._client: redis.Redis = redis_mod.Redis.from_url(
                client_or_url, socket_timeout=5.0, socket_connect_timeout=5.0
            )
            self._own_client = True
        else:
            self._client = client_or_url
            self._own_client = False
        self.prefix = prefix
        self.completed_ttl = completed_ttl
        self._ttl_ms = 0 if completed_ttl is None else max(1, round(completed_ttl * 1000))
        reg = self._client.register_script
        self._begin, self._complete, self._mark_unknown = reg(_BEGIN), reg(_COMPLETE), reg(_MARK_UNKNOWN)
        self._resume, self._release, self._purge_one = reg(_RESUME), reg(_RELEASE), reg(_PURGE_ONE)
        self._get, self._spend, self._unspend = reg(_GET), reg(_SPEND), reg(_UNSPEND)
        self._take = reg(_TAKE)

    @property
    def client(self) -> redis.Redis:
        return self._client

    def redis_key(self, scope: str, key: str) -> str:
        """The Redis key of the receipt ``(scope, key)``."""
        return f"{self.prefix}r:{len(scope)}:{scope}:{key}"

    def _receipt(self, scope: str, key: str, raw: Any) -> Receipt | None:
        if not raw:
            return None
        if isinstance(raw, dict):
            items = {_text(k): _text(v) for k, v in raw.items()}
        else:  # a flat [field, value, ...] list, as a script returns HGETALL
            flat = [_text(v) for v in raw]
            items = dict(zip(flat[0::2], flat[1::2], strict=True))
        columns = (
            items["fingerprint"],
            items["state"],
            items.get("actor", ""),
            items.get("result"),
            items.get("status"),
            items.get("created_at", 0.0),
            items.get("updated_at", 0.0),
            items.get("lease_ms", 0),
        )
        return Receipt.stored(scope, key, columns)

    # -- ReceiptStore --------------------------------------------------------------------------------

    def begin(self, scope: str, key: str, fingerprint: str, actor: str, lease_ms: int = 0) -> Receipt | None:
        raw = self._begin(
            keys=[self.redis_key(scope, key)],
            args=[repr(self.clock.time()), fingerprint, actor, int(lease_ms)],
        )
        return None if raw is None else self._receipt(scope, key, raw)

    def complete(self, scope: str, key: str, result: Any, status: int) -> None:
        text = json.dumps(result, separators=(",", ":"), ensure_ascii=False)
        self._complete(
            keys=[self.redis_key(scope, key)], args=[text, int(status), repr(self.clock.time()), self._ttl_ms]
        )

    def mark_unknown(self, scope: str, key: str) -> None:
        self._mark_unknown(keys=[self.redis_key(scope, key)], args=[repr(self.clock.time())])

    def resume(self, scope: str, key: str, lease_ms: int = 0) -> None:
        self._resume(keys=[self.redis_key(scope, key)], args=[repr(self.clock.time()), int(lease_ms)])

    def release(self, scope: str, key: str) -> None:
        self._release(keys=[self.redis_key(scope, key)])

    def get(self, scope: str, key: str) -> Receipt | None:
        return self._receipt(
            scope, key, self._get(keys=[self.redis_key(scope, key)], args=[repr(self.clock.time())])
        )

    def spend_key(self, scope: str, digest: str) -> str:
        """The Redis key of the spent approval `digest` of `scope`."""
        return f"{self.prefix}s:{len(scope)}:{scope}:{digest}"

    def spend(self, scope: str, digest: str, action: str, actor: str, until: float | None) -> str | None:
        keep = spend_expiry(until)
        keep_ms = 0 if keep is None else max(1, round((keep - self.clock.time()) * 1000))
        bound = self._spend(keys=[self.spend_key(scope, digest)], args=[action, keep_ms])
        return None if bound is None else _text(bound)

    def unspend(self, scope: str, digest: str, action: str) -> None:
        self._unspend(keys=[self.spend_key(scope, digest)], args=[action])

    def limit_key(self, bucket: str) -> str:
        """The Redis key of a limit's `bucket`: ``<prefix>l{limits}:<bucket>``; the hash tag puts every
        bucket in one Redis Cluster slot, so one script can take several atomically."""
        return f"{self.prefix}l{{limits}}:{bucket}"

    def take(self, takes: Sequence[LimitTake]) -> tuple[int, float] | None:
        if not takes:
            return None
        now = self.clock.time()
        args: list[Any] = [repr(now)]
        for take in takes:
            args += [
                take.token,
                repr(float(take.cost)),
                repr(float(take.max)),
                repr(now + float(take.keep_s)),
            ]
        refused = self._take(keys=[self.limit_key(take.bucket) for take in takes], args=args)
        if refused is None:
            return None
        wait = _text(refused[1])
        return int(refused[0]) - 1, math.inf if wait == "inf" else float(wait)

    def give(self, takes: Sequence[LimitTake]) -> None:
        pipe = self._client.pipeline(transaction=False)
        for take in takes:
            pipe.hdel(self.limit_key(take.bucket), take.token)
        pipe.execute()

    def previews(self) -> RedisPreviewStore:
        """The preview store on the same Redis client and prefix (keys ``<prefix>p:...``)."""
        return RedisPreviewStore(self._client, self.prefix, clock=self.clock)

    def close(self) -> None:
        if self._own_client:
            self._client.close()

    # -- maintenance ---------------------------------------------------------------------------------

    def purge(self, older_than_seconds: float) -> int:
        """Delete completed receipts older than the given age (as `SqliteReceiptStore.purge`);
        returns how many were deleted. Walks this prefix's keys with SCAN."""
        cutoff = repr(self.clock.time() - older_than_seconds)
        deleted = 0
        for name in self._client.scan_iter(match=f"{_glob_escape(self.prefix)}r:*", count=500):
            deleted += int(self._purge_one(keys=[name], args=[cutoff]))
        return deleted

    def shared_cursor_key(self) -> bytes:
        """A 32-byte HMAC key for pagination cursors, created once and kept in Redis
        (``<prefix>cursor-key``), so every worker sharing this store accepts the others' cursors."""
        name = f"{self.prefix}cursor-key"
        self._client.set(name, secrets.token_hex(32), nx=True)
        value = self._client.get(name)
        try:
            data = bytes.fromhex(_text(value))
        except ValueError:
            data = b""
        if len(data) < 32:
            raise ValueError(f"the Redis key {name!r} holds no usable cursor key (64 hex digits)")
        return data[:32]


def _glob_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)
