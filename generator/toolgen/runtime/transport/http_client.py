"""Transport drivers: perform a `Send` effect of the call path with an httpx client.

`send_sync` (a blocking `httpx.Client`, each attempt bounded by `deadline.attempt_deadline`) and
`send_async` (an `httpx.AsyncClient`, bounded by a cancel scope) send one request, read its body
raw and decode it within `MAX_RESPONSE_BYTES` (`content_coding.BoundedDecoder`: a gzip bomb never
inflates), and return an `Outcome`. They never raise: whatever the HTTP client throws becomes an
`Outcome` with a failure `kind` (`failure_kind`) the call path classifies.

`async_client()` is the `httpx.AsyncClient` a registry makes for itself: httpx's own, with its
connection pool replaced by `IdleStackPool` (HTTP/1.1 keep-alive connections kept per origin on a
stack). httpcore's pool looks at every open connection (a ``poll`` of its socket each) for every
request and every response it hands back, so a server with many agents in flight spent a quarter of
its CPU there; this one looks at the one connection it reuses.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable
from functools import cache
from typing import Any, Self

import anyio
import httpcore
import httpx

from ..call.deadline import attempt_deadline
from ..errors import failure_cause
from ..pipeline.effects import MAX_RESPONSE_BYTES, Outcome, Send
from ..telemetry import record_status, upstream_span
from .content_coding import BodyTooLarge, BoundedDecoder

__all__ = [
    "IdleStackPool",
    "IdleStackTransport",
    "async_client",
    "failure_kind",
    "send_async",
    "send_sync",
    "tls_context",
]


@cache
def tls_context() -> ssl.SSLContext:
    """The certificate-verifying TLS context of this process, made on first use and shared by every
    client a registry makes: httpx's default (certifi's CA bundle, or ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR`` when set). Loading the CAs takes 20-70 ms of CPU, which httpx spends again for
    every client and every proxy transport it makes; a process now spends it once."""
    return httpx.create_ssl_context()


def failure_kind(exc: Exception) -> str:
    """``connect`` when nothing was sent (connect error/timeout, no pooled connection, bad URL),
    ``timeout`` when the request went out but no answer came in time, else ``broken`` (the request
    may have been sent: any other failure, including ones the HTTP client does not classify)."""
    if isinstance(
        exc, (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.UnsupportedProtocol)
    ):
        return "connect"
    if isinstance(exc, httpx.TimeoutException):
        return "timeout"
    return "broken"


def send_sync(client: httpx.Client, send: Send) -> Outcome:
    """Send `send.request` on `client` within `send.timeout_s` seconds (the whole attempt: every
    socket operation, deadline.py; the caller installs the deadline backend, `ensure_deadlines`),
    in a client span whose trace context the request carries (`toolgen.runtime.telemetry`)."""
    with upstream_span(send.request) as span:
        outcome = _send_sync(client, send)
        record_status(span, outcome.status, outcome.kind)
        return outcome


def _send_sync(client: httpx.Client, send: Send) -> Outcome:
    started = time.perf_counter()
    send.request.extensions["timeout"] = httpx.Timeout(send.timeout_s).as_dict()
    try:
        with attempt_deadline(send.timeout_s):  # the whole attempt: every socket operation (deadline.py)
            return _exchange_sync(client, send, started)
    except Exception as exc:  # noqa: BLE001 - see failure_kind
        return Outcome(
            kind=failure_kind(exc),
            elapsed_ms=(time.perf_counter() - started) * 1000,
            cause=failure_cause(exc),
        )


def _exchange_sync(client: httpx.Client, send: Send, started: float) -> Outcome:
    response = client.send(send.request, stream=True)
    try:  # raw bytes, decoded within the size cap (content_coding.py): a gzip bomb never inflates
        whole = response.is_stream_consumed  # built in memory by a caller's transport: httpx decoded it
        decoder = BoundedDecoder(
            None if whole else response.headers.get("content-encoding"), MAX_RESPONSE_BYTES
        )
        chunks: list[bytes] = []
        for chunk in response.iter_bytes() if whole else response.iter_raw():
            chunks.append(decoder.feed(chunk))
            if time.perf_counter() - started > send.timeout_s:  # a body trickling in past the deadline
                return _late(response.status_code, response.headers, started)
        chunks.append(decoder.finish())
    except BodyTooLarge:
        return Outcome(status=response.status_code, kind="too_large")
    except httpx.TimeoutException:  # the attempt's deadline passed while its body came
        return _late(response.status_code, response.headers, started)
    except (httpx.RemoteProtocolError, httpx.ReadError):
        if not 200 <= response.status_code < 300:
            raise
        return _cut(response.status_code, response.headers, chunks, started)
    finally:
        response.close()
    return Outcome(
        response.status_code,
        response.headers,
        b"".join(chunks),
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )


def _late(status: int, headers: httpx.Headers, started: float) -> Outcome:
    """An answer whose body did not come whole within the attempt's timeout: ``timeout``, with the
    status and headers that came (a write answered 2xx is done: `outcome.judge`)."""
    return Outcome(status, headers, kind="timeout", elapsed_ms=(time.perf_counter() - started) * 1000)


def _cut(status: int, headers: httpx.Headers, chunks: list[bytes], started: float) -> Outcome:
    """A 2xx answer whose connection closed before its whole body came: the API accepted the request
    (its status says so), so the call knows its outcome; the body is what came (`Outcome.cut`)."""
    return Outcome(
        status, headers, b"".join(chunks), elapsed_ms=(time.perf_counter() - started) * 1000, cut=True
    )


async def send_async(client: httpx.AsyncClient, send: Send) -> Outcome:
    """`send_sync` for asyncio: the whole attempt bounded by a cancel scope, in a client span."""
    with upstream_span(send.request) as span:
        outcome = await _send_async(client, send)
        record_status(span, outcome.status, outcome.kind)
        return outcome


async def _send_async(client: httpx.AsyncClient, send: Send) -> Outcome:
    started = time.perf_counter()
    send.request.extensions["timeout"] = httpx.Timeout(send.timeout_s).as_dict()
    try:
        with anyio.fail_after(send.timeout_s + 0.05):  # the whole attempt, not each socket read
            return await _exchange_async(client, send, started)
    except TimeoutError:
        return Outcome(kind="timeout", elapsed_ms=(time.perf_counter() - started) * 1000)
    except Exception as exc:  # noqa: BLE001 - see failure_kind
        return Outcome(
            kind=failure_kind(exc),
            elapsed_ms=(time.perf_counter() - started) * 1000,
            cause=failure_cause(exc),
        )


async def _exchange_async(client: httpx.AsyncClient, send: Send, started: float) -> Outcome:
    response = await client.send(send.request, stream=True)
    try:  # raw bytes, decoded within the size cap (content_coding.py)
        whole = response.is_stream_consumed  # built in memory by a caller's transport: httpx decoded it
        decoder = BoundedDecoder(
            None if whole else response.headers.get("content-encoding"), MAX_RESPONSE_BYTES
        )
        chunks: list[bytes] = []
        # the body within what is left of the attempt (the caller's scope has 50 ms more): a body
        # that does not come whole in time is `_late`, with the status that came
        with anyio.move_on_after(max(0.0, send.timeout_s - (time.perf_counter() - started))) as body_scope:
            async for chunk in response.aiter_bytes() if whole else response.aiter_raw():
                chunks.append(decoder.feed(chunk))
            chunks.append(decoder.finish())
        if body_scope.cancelled_caught:
            return _late(response.status_code, response.headers, started)
    except BodyTooLarge:
        return Outcome(status=response.status_code, kind="too_large")
    except (httpx.RemoteProtocolError, httpx.ReadError):
        if not 200 <= response.status_code < 300:
            raise
        return _cut(response.status_code, response.headers, chunks, started)
    finally:
        await response.aclose()
    return Outcome(
        response.status_code,
        response.headers,
        b"".join(chunks),
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )


#: httpx's defaults (`httpx.Limits()`): connections open at once (more requests wait for one, within
#: the attempt's timeout), idle keep-alive connections kept, and seconds an idle one is kept.
MAX_CONNECTIONS = 100
MAX_IDLE_CONNECTIONS = 20
KEEPALIVE_EXPIRY_S = 5.0


def _key(origin: httpcore.Origin) -> tuple[bytes, bytes, int]:
    return origin.scheme, origin.host, origin.port


class IdleStackPool:
    """An httpcore connection pool (``handle_async_request``, ``aclose``) for HTTP/1.1.

    A request takes the origin's most recently returned idle connection whose socket has not been
    closed by the server or kept past `keepalive_expiry` (httpcore's own ``has_expired``; expired
    ones are closed on the way), else opens a new one; at most `max_connections` are in use at
    once (a request past that waits for one, within its ``pool`` timeout, else
    `httpcore.PoolTimeout`). When its response is closed, the connection goes back on its origin's
    stack if it can carry another request and fewer than `max_idle` wait there, else it is closed.
    TLS origins use `ssl_context`, else one `make_ssl_context()` makes when the first is met.
    A request that fails, or is cancelled, closes its connection. Connect, read and write timeouts,
    TLS and the HTTP exchange are httpcore's `AsyncHTTPConnection`'s."""

    def __init__(
        self,
        ssl_context: Any = None,
        *,
        max_connections: int = MAX_CONNECTIONS,
        max_idle: int = MAX_IDLE_CONNECTIONS,
        keepalive_expiry: float = KEEPALIVE_EXPIRY_S,
        make_ssl_context: Callable[[], Any] | None = None,
    ) -> None:
        self._ssl_context = ssl_context
        self._make_ssl_context = make_ssl_context
        self._max_connections = max_connections
        self._max_idle = max_idle
        self._keepalive_expiry = keepalive_expiry
        self._idle: dict[tuple[bytes, bytes, int], list[httpcore.AsyncHTTPConnection]] = {}
        self._slots: anyio.Semaphore | None = None
        self._closed = False

    def idle_count(self) -> int:
        """Idle connections kept, over every origin."""
        return sum(len(stack) for stack in self._idle.values())

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        if self._closed:
            raise RuntimeError("the connection pool is closed")
        if self._slots is None:
            self._slots = anyio.Semaphore(self._max_connections)
        slots = self._slots
        wait = (request.extensions.get("timeout") or {}).get("pool")
        try:
            with anyio.fail_after(wait):
                await slots.acquire()
        except TimeoutError:
            raise httpcore.PoolTimeout("no connection became free within the pool timeout") from None
        try:
            connection = await self._take(request.url.origin)
            try:
                response = await connection.handle_async_request(request)
            except BaseException:
                with anyio.CancelScope(shield=True):
                    await connection.aclose()
                raise
        except BaseException:
            slots.release()
            raise
        assert isinstance(response.stream, AsyncIterable)
        return httpcore.Response(
            status=response.status,
            headers=response.headers,
            content=_PooledStream(response.stream, connection, request.url.origin, self),
            extensions=response.extensions,
        )

    async def _take(self, origin: httpcore.Origin) -> httpcore.AsyncHTTPConnection:
        stack = self._idle.get(_key(origin))
        while stack:
            connection = stack.pop()
            if connection.is_idle() and not connection.has_expired():
                return connection
            with anyio.CancelScope(shield=True):
                await connection.aclose()
        if origin.scheme == b"https" and self._ssl_context is None and self._make_ssl_context is not None:
            self._ssl_context = self._make_ssl_context()  # on the first TLS origin: loading CAs takes time
        return httpcore.AsyncHTTPConnection(
            origin=origin, ssl_context=self._ssl_context, keepalive_expiry=self._keepalive_expiry
        )

    async def _give_back(self, connection: httpcore.AsyncHTTPConnection, origin: httpcore.Origin) -> None:
        try:
            stack = self._idle.setdefault(_key(origin), [])
            if not self._closed and connection.is_idle() and len(stack) < self._max_idle:
                stack.append(connection)
            else:
                with anyio.CancelScope(shield=True):
                    await connection.aclose()
        finally:
            assert self._slots is not None
            self._slots.release()

    async def aclose(self) -> None:
        self._closed = True
        stacks, self._idle = self._idle, {}
        with anyio.CancelScope(shield=True):
            for stack in stacks.values():
                for connection in stack:
                    await connection.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _PooledStream:
    """A response body that gives its connection back to the pool once, when it is closed."""

    def __init__(
        self,
        stream: AsyncIterable[bytes],
        connection: httpcore.AsyncHTTPConnection,
        origin: httpcore.Origin,
        pool: IdleStackPool,
    ) -> None:
        self._stream = stream
        self._connection = connection
        self._origin = origin
        self._pool = pool
        self._done = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._stream:
            yield part

    async def aclose(self) -> None:
        if self._done:
            return
        self._done = True
        try:
            closer = getattr(self._stream, "aclose", None)
            if closer is not None:
                with anyio.CancelScope(shield=True):
                    await closer()
        finally:
            await self._pool._give_back(self._connection, self._origin)


class IdleStackTransport(httpx.AsyncHTTPTransport):
    """httpx's transport (request and response mapping, httpcore errors raised as httpx's) over an
    `IdleStackPool` (`pool`; default: one with httpx's default limits and TLS settings, which honour
    ``SSL_CERT_FILE``/``SSL_CERT_DIR``: `tls_context`)."""

    def __init__(self, pool: IdleStackPool | None = None) -> None:
        # not httpx's __init__: it would build the httpcore pool this one replaces
        self._pool = pool or IdleStackPool(make_ssl_context=tls_context)  # type: ignore[assignment]

    @property
    def pool(self) -> IdleStackPool:
        assert isinstance(self._pool, IdleStackPool)
        return self._pool


def async_client() -> httpx.AsyncClient:
    """The `httpx.AsyncClient` a registry sends with when none is given: redirects not followed,
    connections pooled by `IdleStackPool`. Mounted for every URL rather than given as the client's
    ``transport``, which would turn off httpx's proxies from the environment (``HTTP_PROXY``,
    ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``): proxied URLs keep going through httpx's proxy
    transports, and hosts ``NO_PROXY`` exempts from a proxy through httpx's own direct transport. Those
    transports of httpx's take the process's `tls_context` rather than loading the CAs each."""
    return httpx.AsyncClient(
        follow_redirects=False, mounts={"all://": IdleStackTransport()}, verify=tls_context()
    )
