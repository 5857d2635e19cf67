"""The IO the call path asks for, and what comes back: its sans-IO protocol.

The call path (`run`) is a generator. It yields `Send` (send this request, give up after
`timeout_s` seconds), `Sleep` (wait before a retry) and, for a composite tool's aggregate,
`Gather` (run these call paths at once); the driver (`Registry.call` with a sync httpx client,
`Registry.acall` with an async one, `toolgen.runtime.transport.drivers` over `toolgen.runtime.transport`)
performs the effect and sends back an `Outcome` for a `Send`, ``None`` for a `Sleep` and the list
of return values for a `Gather`. When the generator returns, its value is the call's
`CallResult`. A driver never raises into the call path:
whatever the HTTP client throws becomes an `Outcome` with a failure `kind`.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import httpx

from ..calls import CallResult

__all__ = [
    "MAX_RESPONSE_BYTES",
    "REDIRECT_STATUSES",
    "Effect",
    "Gather",
    "Outcome",
    "Pipeline",
    "Send",
    "Sleep",
]

#: Bodies larger than this are not read into memory (bytes).
MAX_RESPONSE_BYTES = 8 * 1024 * 1024
#: The statuses that redirect to a ``Location`` (RFC 9110 §15.4; 300 and 304 do not).
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


@dataclass
class Send:
    """Send `request` once; the whole attempt (connect, send, read the body) ends within `timeout_s`
    seconds. Answered with an `Outcome`."""

    request: httpx.Request
    timeout_s: float


@dataclass
class Sleep:
    """Wait `seconds` (a retry's backoff). Answered with ``None``."""

    seconds: float


@dataclass
class Outcome:
    """What the driver observed: a response, or a failure `kind` — ``connect`` (nothing was sent),
    ``timeout`` (sent or partly sent, no answer in time), ``broken`` (connection broke after sending),
    ``too_large``. `cut` is true for a 2xx answer whose connection closed before its whole body came:
    the status is known, `content` holds what came."""

    status: int = 0
    headers: httpx.Headers | None = None
    content: bytes = b""
    kind: str | None = None
    elapsed_ms: float = 0.0
    cause: str | None = None  # why nothing (or no answer) came back, for `upstream_unavailable`
    cut: bool = False


@dataclass
class Gather:
    """Drive every generator of `branches` (each yields these same effects) to its end, concurrently,
    and answer with the list of their return values, in order. A branch never raises (the
    composite's step path turns every failure into its result); a driver cancelled mid-way closes
    every branch, so each settles what it holds."""

    branches: list[Generator[Any, Any, Any]]


Effect = Send | Sleep | Gather
#: The call path: yields effects, is sent `Outcome`/None back, returns the `CallResult`.
Pipeline = Generator[Effect, Any, CallResult]
