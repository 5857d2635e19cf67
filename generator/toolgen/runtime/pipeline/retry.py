"""The retry policy of the send step, pure: which outcomes are retried, when a write may be
re-sent, and how long to wait.

Input: the policy row's ``retry`` (`RetryPolicy.of`), each attempt's `Outcome`, and what is known
of a write. Output: decisions; no IO, no clock, no randomness of its own (the jitter comes from
the `random.Random` passed in, backoff.py). The rules:

- an outcome's retry condition (`condition`): ``timeout`` (no answer, or the connection broke),
  ``connect`` (nothing was sent), or the HTTP status 408, 425, 429, 500, 502, 503, 504; any other
  outcome is final;
- a write (a mutating tool) is re-sent only where it cannot write twice (`resend_safe`): the API
  deduplicates the forwarded key (``honoured``), or nothing so far can have reached it (a connect
  failure, or a 429/425 refusal, while no earlier attempt was uncertain);
- a retry needs attempts left and a condition the row lists in ``retry.on`` (a connect failure is
  always retried);
- a write attempt may have taken effect without the API saying so (`may_have_applied`) on a
  timeout, a broken connection, a 5xx or a 3xx.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ...policy.format import PolicyRow
from ..call.backoff import retry_delay
from ..errors import parse_retry_after
from .effects import Outcome

__all__ = ["RetryPolicy", "condition", "may_have_applied", "resend_safe"]

_RETRIED_STATUSES = (408, 425, 429, 500, 502, 503, 504)


@dataclass(frozen=True)
class RetryPolicy:
    """A row's ``retry``: at most `max_attempts` attempts, the conditions retried (`on`, as strings)
    and the base backoff (`backoff_ms`)."""

    max_attempts: int
    on: frozenset[str]
    backoff_ms: float

    @classmethod
    def of(cls, row: PolicyRow, max_attempts: int) -> RetryPolicy:
        """Policy: the row's ``retry.on`` and ``retry.backoff_ms``, with `max_attempts` from the
        timeout step."""
        return cls(max_attempts, frozenset(row.retry.on), float(row.retry.backoff_ms))

    def retries(self, outcome: Outcome, cond: str, attempts: int, safe: bool) -> bool:
        """Whether to try again after attempt number `attempts` ended with `outcome` matching `cond`."""
        if attempts >= self.max_attempts or not safe:
            return False
        return cond in self.on or outcome.kind == "connect"

    def delay(self, outcome: Outcome, cond: str, attempts: int, rng: random.Random) -> float:
        """Seconds to wait before the next attempt (backoff with jitter; a 429's ``Retry-After``)."""
        retry_after = None
        if cond == "429" and outcome.headers is not None:
            retry_after = parse_retry_after(outcome.headers.get("retry-after"))
        return retry_delay(self.backoff_ms, attempts, retry_after, rng)


def condition(outcome: Outcome) -> str | None:
    """The retry condition an outcome matches (``timeout``, ``connect``, or the HTTP status as a
    string), or ``None`` when the outcome is final."""
    if outcome.kind in ("timeout", "broken"):
        return "timeout"
    if outcome.kind == "connect":
        return "connect"
    if outcome.kind is None and outcome.status in _RETRIED_STATUSES:
        return str(outcome.status)
    return None


def resend_safe(outcome: Outcome, cond: str, *, mutating: bool, uncertain: bool, honoured: bool) -> bool:
    """Whether another attempt cannot write twice: always for a read; for a write, when the API
    deduplicates the key, or nothing so far can have reached it."""
    if not mutating:
        return True
    return honoured or (not uncertain and (outcome.kind == "connect" or cond in ("429", "425")))


def may_have_applied(outcome: Outcome) -> bool:
    """Whether a write attempt with this outcome may have taken effect without the API saying so:
    no answer (timeout, broken connection), a server error or gateway failure, or a redirect (the
    API answered, but not with the write's result)."""
    if outcome.kind in ("timeout", "broken"):
        return True
    if outcome.kind is None:
        return outcome.status >= 500 or 300 <= outcome.status < 400
    return False
