"""The receipt record and the `ReceiptStore` protocol every store implements.

A receipt is keyed by ``(scope, key)``: `scope` is ``"<api>/<tool>"`` (keys are scoped per tool,
not per actor — the key is usually forwarded to the API, which scopes it by the runtime's own
credential, shared by all actors; see docs/runtime.md) and `key` is the idempotency-key argument.
It stores the canonical-request `fingerprint`, a `state`, the owner's `lease_ms` (how long the owner
may hold a ``pending`` receipt before it counts as abandoned) and, once completed, the shaped result.

States: ``pending`` (written before the HTTP request), ``unknown`` (an attempt may have written
without a definitive answer), ``completed`` (the result is stored and will be replayed). A known
failure (the API rejected the write, or it never left the machine) deletes the receipt so the key
can be used again. A completed receipt is never reopened or released. A ``pending`` receipt whose
lease ran out (its owner died or hung) is reported ``unknown`` by `ReceiptStore.begin` and
`ReceiptStore.get`, which store that change: nothing reads as ``pending`` past its lease.

Spent approvals are not receipts: `ReceiptStore.spend` binds an approval to the one action it
executes, in a record of their own that purging completed receipts (``purge``, Redis
``completed_ttl``) never touches. It lives until the approval can no longer be presented (`until`,
plus `SPEND_MARGIN_S` for clock skew between workers; ``None``: forever) and is keyed by
`spend_digest`, so the store never holds a usable approval id.

Limits are not receipts either: `ReceiptStore.take` counts the requests a call is about to send in
the buckets of its limits (`LimitTake`: one entry per call and bucket, counted until it expires),
all or nothing, atomically across every worker sharing the store; `ReceiptStore.give` takes entries
back (a call that sent nothing, or a concurrent slot at the end of its call). `limit_refusal` is the
decision every store makes over the live entries of a bucket.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

ReceiptState = Literal["pending", "unknown", "completed"]

#: Seconds a spent approval is kept beyond the moment it stops being presentable, so that workers
#: whose clocks disagree by less than this never see an expired spend of a live approval.
SPEND_MARGIN_S = 300.0


def spend_digest(scope: str, token: str) -> str:
    """The store key of a spent approval: ``"hmac-sha256:" + hex(HMAC-SHA256(key=scope, token))``,
    keyed by the approval's scope (``"<api>/<record tool>#approval"``) so the digest of one tool's
    approval says nothing about another's, and never the token itself."""
    mac = hmac.new(
        scope.encode("utf-8", "surrogatepass"), token.encode("utf-8", "surrogatepass"), hashlib.sha256
    )
    return "hmac-sha256:" + mac.hexdigest()


def spend_expiry(until: float | None) -> float | None:
    """When a spend made for an approval presentable until `until` may be forgotten (Unix seconds)."""
    return None if until is None else until + SPEND_MARGIN_S


@dataclass(frozen=True)
class LimitTake:
    """One entry a call adds to a limit's `bucket`: `token` (unique per call and limit), its `cost`
    (1 for a call or a concurrent slot, the summed argument's value for a sum; never negative), the
    bucket's `max` and how long the entry counts (`keep_s` seconds: the window, or the call's lease
    for a concurrent slot), from the moment the store takes it by its own clock."""

    bucket: str
    token: str
    cost: float
    max: float
    keep_s: float


def limit_refusal(live: Iterable[tuple[float, float]], cost: float, most: float, now: float) -> float | None:
    """Whether a bucket whose live entries are `live` (``(cost, expires_at)`` pairs, none expired at
    `now`) takes one more of `cost` within `most`: None when it does, else the seconds until enough
    of its entries expire that it would (`math.inf` when `cost` alone is above `most`)."""
    entries = sorted(live, key=lambda entry: entry[1])
    total = sum(c for c, _ in entries)
    if total + cost <= most:
        return None
    if cost > most:
        return math.inf
    need, freed = total + cost - most, 0.0
    for entry_cost, expires_at in entries:
        freed += entry_cost
        if freed >= need:
            return max(0.0, expires_at - now)
    return math.inf


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

    @classmethod
    def stored(cls, scope: str, key: str, columns: Sequence[Any]) -> Receipt:
        """A receipt from a store's columns, in the order of the SQLite and PostgreSQL tables: fingerprint,
        state, actor, result (JSON text; None: none), status, created_at, updated_at, lease_ms (numbers as
        numbers or their text, as Redis keeps them; a missing lease is 0)."""
        fingerprint, state, actor, result, status, created_at, updated_at, lease_ms = columns
        return cls(
            scope,
            key,
            fingerprint,
            cast(ReceiptState, state),
            actor,
            json.loads(result) if result is not None else None,
            int(status) if status is not None else None,
            float(created_at),
            float(updated_at),
            int(lease_ms or 0),
        )

    def in_flight(self, now: float, fallback_lease_ms: int) -> bool:
        """True while a ``pending`` receipt is inside the window its owner stored (`lease_ms`,
        milliseconds since `updated_at`): the owner may still be waiting for the API. Receipts
        written without a lease use `fallback_lease_ms`. Another caller's own deadline never
        shortens the window."""
        lease = self.lease_ms if self.lease_ms > 0 else fallback_lease_ms
        return self.state == "pending" and (now - self.updated_at) * 1000 < lease

    def lease_expired(self, now: float) -> bool:
        """True for a ``pending`` receipt with a stored lease that ran out: its owner is gone, and
        the store reports (and stores) it as ``unknown``."""
        return (
            self.state == "pending" and self.lease_ms > 0 and (now - self.updated_at) * 1000 >= self.lease_ms
        )


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
        """The stored receipt, or ``None`` (a ``pending`` one past its lease as ``unknown``)."""
        ...

    def spend(self, scope: str, digest: str, action: str, actor: str, until: float | None) -> str | None:
        """Bind the approval `digest` (`spend_digest`) of `scope` to `action`, unless it is bound
        already: compare-and-set, like `begin`. Returns ``None`` when this call bound it, else the
        action it is bound to (equal to `action` for a retry of the same action). The binding is
        kept until `until` (Unix seconds; ``None``: forever), whatever happens to receipts."""
        ...

    def unspend(self, scope: str, digest: str, action: str) -> None:
        """Undo a `spend` of `action` that sent nothing (a binding to another action stays)."""
        ...

    def take(self, takes: Sequence[LimitTake]) -> tuple[int, float] | None:
        """Add every entry of `takes` to its bucket, all or nothing and atomically (no other take
        of the same buckets in between): after dropping the entries that expired, each bucket's
        live costs plus the new one stay within its `max` (`limit_refusal`). Returns None when
        they were added, else ``(index of the first take refused, seconds to wait)`` and nothing
        was added."""
        ...

    def give(self, takes: Sequence[LimitTake]) -> None:
        """Remove the entries of `takes` (a call that sent nothing, or a concurrent slot that ended)."""
        ...

    def close(self) -> None:
        """Release resources."""
        ...
