"""Retry backoff with jitter, so that agents retrying one API do not retry in lockstep.

The nominal delay before retry `attempt` (1 = the first retry) is ``backoff_ms × 2^(attempt-1)``
(the policy row's ``retry.backoff_ms``). Without jitter every agent that met the same 429 at the
same moment comes back at the same moment, and meets it again. `retry_delay` waits a floor —
half the nominal delay, or the API's ``Retry-After`` when that is longer — plus a uniform draw of
up to half the nominal delay ("equal jitter"): never sooner than the API asked, never more than
the nominal delay past the floor. The draw comes from the `random.Random` the registry was given
(``Registry(retry_random=...)``), so a seeded one replays the same delays.
"""

from __future__ import annotations

import random


def retry_delay(backoff_ms: float, attempt: int, retry_after: float | None, rng: random.Random) -> float:
    """Seconds to wait before retry `attempt` (≥ 1): ``max(nominal / 2, retry_after) +
    uniform(0, nominal / 2)`` with ``nominal = backoff_ms / 1000 × 2^(attempt-1)``."""
    nominal = max(0.0, float(backoff_ms)) / 1000.0 * float(2 ** max(0, attempt - 1))
    floor = nominal / 2
    if retry_after is not None and retry_after > floor:
        floor = retry_after
    return floor + rng.uniform(0.0, nominal / 2)
