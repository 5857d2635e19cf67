"""The runtime's one source of time: `Clock`.

Every decision of the runtime that depends on the time — a preview's or an approval's lifetime, a
receipt's lease and in-flight window, a call's deadline and what is left of it, an approval round's
expiry, when stored entries are purged, the time of an audit event — reads it from a `Clock`: the
registry's (`Registry(clock=...)`, which the call path reads as ``host.clock``), a receipt or
preview store's (``clock=``), the HTTP server's. No other runtime module reads the system clock
(a test walks their syntax trees), except where real time itself is the point: a socket operation
bounded by the time left of an attempt, a sleep between retries, a process supervisor's poll. Those
wait for real; the durations they wait for are computed on the clock.

- `Clock`: the system clock. ``time()``: wall-clock time, Unix seconds (float), for what is stored
  or compared across processes (expiries, receipts' ``updated_at``); ``monotonic()``: seconds from an
  arbitrary origin that never goes back, for durations and deadlines inside one process.
- `SYSTEM`: the `Clock` every registry, store and server uses unless given another.
- `ManualClock`: the system clock moved forward by `ManualClock.advance`, both readings alike; what
  a test uses to let a lifetime run out without waiting for it (time still flows, so a deadline
  still expires for a call that waits on a real socket).
"""

from __future__ import annotations

import threading
import time as _time

__all__ = ["SYSTEM", "Clock", "ManualClock"]


class Clock:
    """The system clock (see the module docstring)."""

    def time(self) -> float:
        """Wall-clock time: Unix seconds."""
        return _time.time()

    def monotonic(self) -> float:
        """Monotonic time: seconds from an arbitrary origin, never going back."""
        return _time.monotonic()


#: The clock of every registry, store and server not given another.
SYSTEM = Clock()


class ManualClock(Clock):
    """The system clock plus an offset that only `advance` changes (thread-safe): ``time()`` and
    ``monotonic()`` both read the system's plus the offset, so an expiry ``ttl`` seconds away is
    passed by ``advance(ttl)``, with no sleep."""

    def __init__(self) -> None:
        self._offset = 0.0
        self._lock = threading.Lock()

    @property
    def offset(self) -> float:
        """Seconds this clock is ahead of the system's."""
        return self._offset

    def advance(self, seconds: float) -> None:
        """Move the clock `seconds` forward. Raises `ValueError` for a negative or non-finite
        `seconds` (a clock never goes back)."""
        if not 0 <= seconds < float("inf"):
            raise ValueError(f"a clock only moves forward, by a finite number of seconds, not {seconds!r}")
        with self._lock:
            self._offset += seconds

    def time(self) -> float:
        return _time.time() + self._offset

    def monotonic(self) -> float:
        return _time.monotonic() + self._offset
