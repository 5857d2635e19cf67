"""Transport drivers: perform a `Send` effect of the call path with an httpx client.

`send_sync` (a blocking `httpx.Client`, each attempt bounded by `deadline.attempt_deadline`) and
`send_async` (an `httpx.AsyncClient`, bounded by a cancel scope) send one request, read its body
raw and decode it within `MAX_RESPONSE_BYTES` (`content_coding.BoundedDecoder`: a gzip bomb never
inflates), and return an `Outcome`. They never raise: whatever the HTTP client throws becomes an
`Outcome` with a failure `kind` (`failure_kind`) the call path classifies.
"""

from __future__ import annotations

import time

import anyio
import httpx

from .content_coding import BodyTooLarge, BoundedDecoder
from .deadline import attempt_deadline
from .errors import failure_cause
from .pipeline.effects import MAX_RESPONSE_BYTES, Outcome, Send

__all__ = ["failure_kind", "send_async", "send_sync"]


def failure_kind(exc: Exception) -> str:
    """``connect`` when nothing was sent (connect error/timeout, no pooled connection, bad URL),
    ``timeout`` when the request went out but no answer came in time, else ``broken`` (the request
    may have been sent: any other failure, including ones the HTTP client does not classify)."""
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)):
        return "connect"
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    return "broken"


def send_sync(client: httpx.Client, send: Send) -> Outcome:
    """Send `send.request` on `client` within `send.timeout_s` seconds (the whole attempt: every
    socket operation, deadline.py; the caller installs the deadline backend, `ensure_deadlines`)."""
    started = time.perf_counter()
    send.request.extensions["timeout"] = httpx.Timeout(send.timeout_s).as_dict()
    try:
        with attempt_deadline(send.timeout_s):  # the whole attempt: every socket operation (deadline.py)
            return _exchange_sync(client, send, started)
    except Exception as exc:  # noqa: BLE001 - see failure_kind
        return Outcome(kind=failure_kind(exc), elapsed_ms=(time.perf_counter() - started) * 1000,
                       cause=failure_cause(exc))


def _exchange_sync(client: httpx.Client, send: Send, started: float) -> Outcome:
    response = client.send(send.request, stream=True)
    try:  # raw bytes, decoded within the size cap (content_coding.py): a gzip bomb never inflates
        whole = response.is_stream_consumed  # built in memory by a caller's transport: httpx decoded it
        decoder = BoundedDecoder(None if whole else response.headers.get("content-encoding"), MAX_RESPONSE_BYTES)
        chunks: list[bytes] = []
        for chunk in response.iter_bytes() if whole else response.iter_raw():
            chunks.append(decoder.feed(chunk))
            if time.perf_counter() - started > send.timeout_s:  # a body trickling in past the deadline
                return Outcome(kind="timeout", elapsed_ms=(time.perf_counter() - started) * 1000)
        chunks.append(decoder.finish())
    except BodyTooLarge:
        return Outcome(status=response.status_code, kind="too_large")
    finally:
        response.close()
    return Outcome(response.status_code, response.headers, b"".join(chunks),
                    elapsed_ms=(time.perf_counter() - started) * 1000)



async def send_async(client: httpx.AsyncClient, send: Send) -> Outcome:
    """`send_sync` for asyncio: the whole attempt bounded by a cancel scope."""
    started = time.perf_counter()
    send.request.extensions["timeout"] = httpx.Timeout(send.timeout_s).as_dict()
    try:
        with anyio.fail_after(send.timeout_s + 0.05):  # the whole attempt, not each socket read
            return await _exchange_async(client, send, started)
    except TimeoutError:
        return Outcome(kind="timeout", elapsed_ms=(time.perf_counter() - started) * 1000)
    except Exception as exc:  # noqa: BLE001 - see failure_kind
        return Outcome(kind=failure_kind(exc), elapsed_ms=(time.perf_counter() - started) * 1000,
                       cause=failure_cause(exc))


async def _exchange_async(client: httpx.AsyncClient, send: Send, started: float) -> Outcome:
    response = await client.send(send.request, stream=True)
    try:  # raw bytes, decoded within the size cap (content_coding.py)
        whole = response.is_stream_consumed  # built in memory by a caller's transport: httpx decoded it
        decoder = BoundedDecoder(None if whole else response.headers.get("content-encoding"), MAX_RESPONSE_BYTES)
        chunks: list[bytes] = []
        async for chunk in response.aiter_bytes() if whole else response.aiter_raw():
            chunks.append(decoder.feed(chunk))
        chunks.append(decoder.finish())
    except BodyTooLarge:
        return Outcome(status=response.status_code, kind="too_large")
    finally:
        await response.aclose()
    return Outcome(response.status_code, response.headers, b"".join(chunks),
                    elapsed_ms=(time.perf_counter() - started) * 1000)
