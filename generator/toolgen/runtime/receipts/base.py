"""The receipt record and the `ReceiptStore` protocol every store implements.

A receipt is keyed by ``(scope, key)``: `scope` is ``"<api>/<tool>"`` (keys are scoped per tool,
not per actor — the key is usually forwarded to the API, which scopes it by the runtime's own
credential, shared by all actors; see docs/runtime.md) and `key` is the idempotency-key argument.
It stores the canonical-request `fingerprint`, a `state`, the owner's `lease_ms` (how long the owner
may hold a ``pending`` receipt before it counts as abandoned) and, once completed, the shaped result.

States: ``pending`` (written before the HTTP request), ``unknown`` (an attempt may have written
without a definitive answer), ``completed`` (the result is stored and will be replayed). A known
failure (the API rejected the write, or it never left the machine) deletes the receipt so the key
can be used again. A completed receipt is never reopened or released.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

ReceiptState = Literal["pending", "unknown", "completed"]


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
