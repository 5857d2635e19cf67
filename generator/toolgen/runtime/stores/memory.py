"""`MemoryReceiptStore`: receipts in one process's memory (tests, embedding; lost on exit)."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..clock import SYSTEM, Clock
from .base import LimitTake, Receipt, ReceiptState, limit_refusal, spend_expiry
from .previews import MemoryPreviewStore


class MemoryReceiptStore:
    """An in-process `ReceiptStore` (lost on restart). `clock`: where it reads the time (clock.py)."""

    def __init__(self, *, clock: Clock = SYSTEM) -> None:
        self.clock = clock
        self._data: dict[tuple[str, str], Receipt] = {}
        self._lock = threading.Lock()
        self._previews = MemoryPreviewStore(clock=clock)
        self._spends: dict[tuple[str, str], tuple[str, float | None]] = {}  # -> (action, keep until)
        self._limits: dict[str, dict[str, tuple[float, float]]] = {}  # bucket -> token -> (cost, expires_at)

    def _current(self, scope: str, key: str) -> Receipt | None:
        """The receipt, a pending one past its lease turned ``unknown`` (lock held)."""
        existing = self._data.get((scope, key))
        now = self.clock.time()
        if existing is not None and existing.lease_expired(now):
            existing = self._data[(scope, key)] = replace(existing, state="unknown", updated_at=now)
        return existing

    def begin(self, scope: str, key: str, fingerprint: str, actor: str, lease_ms: int = 0) -> Receipt | None:
        with self._lock:
            existing = self._current(scope, key)
            if existing is not None:
                return existing
            now = self.clock.time()
            self._data[(scope, key)] = Receipt(
                scope, key, fingerprint, "pending", actor, None, None, now, now, int(lease_ms)
            )
            return None

    def _set(self, scope: str, key: str, only_from: tuple[ReceiptState, ...], **changes: Any) -> None:
        with self._lock:
            existing = self._data.get((scope, key))
            if existing is not None and existing.state in only_from:
                self._data[(scope, key)] = replace(existing, updated_at=self.clock.time(), **changes)

    # the same state rules as SqliteReceiptStore: a completed receipt is never reopened or released
    def complete(self, scope: str, key: str, result: Any, status: int) -> None:
        copy = json.loads(json.dumps(result, ensure_ascii=False))  # stored as JSON, like the other stores
        self._set(
            scope, key, ("pending", "unknown", "completed"), state="completed", result=copy, status=status
        )

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
            return self._current(scope, key)

    def spend(self, scope: str, digest: str, action: str, actor: str, until: float | None) -> str | None:
        with self._lock:
            found = self._spends.get((scope, digest))
            if found is not None and (found[1] is None or found[1] >= self.clock.time()):
                return found[0]
            self._spends[(scope, digest)] = (action, spend_expiry(until))
            return None

    def unspend(self, scope: str, digest: str, action: str) -> None:
        with self._lock:
            found = self._spends.get((scope, digest))
            if found is not None and found[0] == action:
                del self._spends[(scope, digest)]

    def take(self, takes: Sequence[LimitTake]) -> tuple[int, float] | None:
        now = self.clock.time()
        with self._lock:
            for index, take in enumerate(takes):
                bucket = self._limits.setdefault(take.bucket, {})
                for token in [t for t, (_, expires) in bucket.items() if expires <= now]:
                    del bucket[token]
                wait = limit_refusal(bucket.values(), take.cost, take.max, now)
                if wait is not None:
                    for earlier in takes[:index]:
                        self._limits.get(earlier.bucket, {}).pop(earlier.token, None)
                    return index, wait
                bucket[take.token] = (take.cost, now + take.keep_s)
            return None

    def give(self, takes: Sequence[LimitTake]) -> None:
        with self._lock:
            for take in takes:
                self._limits.get(take.bucket, {}).pop(take.token, None)

    def purge(self, older_than_seconds: float) -> int:
        """Delete completed receipts older than the given age, spends past their expiry and limit
        entries past theirs; returns how many receipts were deleted (as `SqliteReceiptStore.purge`)."""
        now = self.clock.time()
        with self._lock:
            old = [
                k
                for k, r in self._data.items()
                if r.state == "completed" and r.updated_at < now - older_than_seconds
            ]
            for k in old:
                del self._data[k]
            for k in [k for k, (_, keep) in self._spends.items() if keep is not None and keep < now]:
                del self._spends[k]
            for bucket in list(self._limits):  # limit entries past their window or lease
                live = {t: e for t, e in self._limits[bucket].items() if e[1] > now}
                if live:
                    self._limits[bucket] = live
                else:
                    del self._limits[bucket]
            return len(old)

    def previews(self) -> MemoryPreviewStore:
        """The preview store of this process (one per receipt store)."""
        return self._previews

    def close(self) -> None:
        pass
