"""Step 5, timeout: the per-attempt timeout and the call's overall deadline.

Input: `Call`, the policy row, and the caller's `timeout_ms` (None, or a value that may only
lower the row's ``timeout_ms``). Output: `Budget`: ``timeout_ms`` per attempt, ``deadline_ms``
(`toolgen.runtime.call.deadline.call_deadline_ms`, the one formula, also giving the row's own deadline
by which another caller's pending receipt is judged), ``max_attempts`` and the monotonic start and
deadline; audits ``timeout`` ``allow``. Errors (`Halt` at step ``validate``): ``invalid_arguments``
when the caller's `timeout_ms` is not a whole number.
"""

from __future__ import annotations

from typing import Any

from ...policy.format import PolicyRow
from ..call.arguments import invalid_argument
from ..call.deadline import call_deadline_ms
from .state import Budget, Call, Halt

__all__ = ["bound", "limits"]


def limits(row: PolicyRow) -> tuple[int, int, int]:
    """Policy: (``timeout_ms``, ``retry.max_attempts``, ``retry.deadline_ms``); the reader refuses a
    table where one of them is below 1 (`toolgen.policy.format`)."""
    return row.timeout_ms, row.retry.max_attempts, row.retry.deadline_ms


def bound(call: Call, row: PolicyRow, override_ms: Any) -> Budget:
    """The call's `Budget`; raises `Halt` ``invalid_arguments`` for a bad `override_ms`."""
    timeout_ms, max_attempts, retry_deadline_ms = limits(row)
    row_deadline_ms = call_deadline_ms(timeout_ms, max_attempts, retry_deadline_ms)
    if override_ms is not None:
        try:
            timeout_ms = max(1, min(timeout_ms, int(override_ms)))
        except (TypeError, ValueError, OverflowError):
            raise Halt(
                "validate", invalid_argument((), "timeout_ms must be a whole number of milliseconds")
            ) from None
    deadline_ms = call_deadline_ms(
        timeout_ms, max_attempts, retry_deadline_ms, lowered=override_ms is not None
    )
    started = call.host.clock.monotonic()
    call.emit("timeout", "allow", timeout_ms=timeout_ms, deadline_ms=deadline_ms, max_attempts=max_attempts)
    return Budget(
        timeout_ms, deadline_ms, max_attempts, row_deadline_ms, started, started + deadline_ms / 1000.0
    )
