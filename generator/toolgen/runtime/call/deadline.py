"""Whole-attempt deadlines for the synchronous HTTP client.

httpx's timeouts bound each socket operation, not an attempt: an upstream that sends one header
byte every 50 ms never trips a 500 ms read timeout, and a call waits for as long as the upstream
trickles. The async driver bounds the whole attempt with a cancel scope; a blocking socket has no
such thing, so the sync driver bounds every socket operation by what is left of the attempt
instead:

- `attempt_deadline(seconds)` sets the attempt's deadline (monotonic clock) for the current
  thread's context while the driver sends the request and reads the answer;
- `DeadlineBackend` wraps httpcore's network backend: each host-name lookup (in a small thread pool,
  since ``getaddrinfo`` takes no timeout), connect, TLS handshake, read and write
  gets at most the time left (never more than its own timeout), and once none is left raises
  ``ConnectTimeout`` (connect, TLS: nothing was sent), ``WriteTimeout`` or ``ReadTimeout`` — which
  httpx reports as its own timeout exceptions, so the call path classifies them as usual.

Bound: an attempt ends within its deadline plus one socket operation's scheduling slack (a
``recv`` that returns at its timeout), measured at well under 50 ms on loopback
(docs/runtime.md "Deadlines"). Outside `attempt_deadline` the backend is the plain backend.

`call_deadline_ms` is the one formula of a call's overall deadline (the call path's ``timeout``
step and the in-flight window of another caller's receipt both use it); `DEADLINE_SLACK_MS` is
how long after it a call returns at the latest.

`ensure_deadlines` installs the backend in an `httpx.Client`'s transports (its default one and the
proxy transports it mounted, also from the environment) where they are httpx's own
(`HTTPTransport`): the clients the runtime creates, and a caller's own client on first use; any
other transport keeps only httpx's per-operation timeouts. `deadline_transport()` builds one.
"""

from __future__ import annotations

import ipaddress
import socket
import time
import typing
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from contextvars import ContextVar

import httpcore
import httpx

#: How long after its deadline (`call_deadline_ms`) a call returns at the latest, sync or async,
#: whatever the upstream does (milliseconds; docs/runtime.md "Deadlines"). Receipt-store latency is
#: extra.
DEADLINE_SLACK_MS = 250

_DEADLINE: ContextVar[float | None] = ContextVar("toolgen_attempt_deadline", default=None)
#: Threads that resolve host names for attempts with a deadline (a blocking ``getaddrinfo`` has no
#: timeout of its own; a lookup left behind ends with the system resolver's own timeout).
_RESOLVER = ThreadPoolExecutor(max_workers=4, thread_name_prefix="toolgen-resolve")


def call_deadline_ms(
    timeout_ms: int, max_attempts: int, retry_deadline_ms: int | None, *, lowered: bool = False
) -> int:
    """A call's overall deadline (milliseconds): the row's ``retry.deadline_ms``, else `timeout_ms`
    × `max_attempts`; when the caller `lowered` the per-attempt timeout (`timeout_ms` is then the
    lowered one), at most `timeout_ms` × `max_attempts`; never less than one attempt's `timeout_ms`.
    Pure; docs/runtime.md "Deadlines"."""
    deadline = int(retry_deadline_ms or timeout_ms * max_attempts)
    if lowered:
        deadline = min(deadline, timeout_ms * max_attempts)
    return max(deadline, timeout_ms)


@contextmanager
def attempt_deadline(seconds: float) -> Iterator[None]:
    """Bound every socket operation of this context by ``now + seconds`` (monotonic)."""
    token = _DEADLINE.set(time.monotonic() + max(0.0, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    """The timeout of one socket operation: its own, capped by the time left in the attempt.
    Raises `expired` when no time is left."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise expired("the attempt's deadline passed")
    return remaining if timeout is None else min(timeout, remaining)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: typing.Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _Stream(
            self._inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout))
        )

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend (or `inner`), each operation bounded by `attempt_deadline`."""

    def __init__(self, inner: httpcore.NetworkBackend | None = None) -> None:
        self._inner = inner if inner is not None else httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        options = list(socket_options or [])
        failure: Exception | None = None
        for address in _addresses(host, port, _left(timeout, httpcore.ConnectTimeout)):
            try:  # each address in turn, as socket.create_connection does, within the time left
                return _Stream(
                    self._inner.connect_tcp(
                        address, port, _left(timeout, httpcore.ConnectTimeout), local_address, options
                    )
                )
            except httpcore.ConnectError as exc:
                failure = exc
        raise failure if failure is not None else httpcore.ConnectError(f"{host!r} has no address")

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[typing.Any] | None = None,
    ) -> httpcore.NetworkStream:
        return _Stream(
            self._inner.connect_unix_socket(path, _left(timeout, httpcore.ConnectTimeout), socket_options)
        )

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _addresses(host: str, port: int, timeout: float | None) -> list[str]:
    """The addresses to connect to for `host`: itself when it is an IP literal or no deadline is
    set, else its lookup made within `timeout` (``ConnectTimeout`` past it, ``ConnectError`` when
    it fails), in the resolver's order without repeats."""
    try:
        ipaddress.ip_address(host)
        return [host]
    except ValueError:
        pass
    if _DEADLINE.get() is None or timeout is None:
        return [host]
    lookup = _RESOLVER.submit(socket.getaddrinfo, host, port, 0, socket.SOCK_STREAM)
    try:
        found = lookup.result(timeout)
    except FutureTimeout:
        raise httpcore.ConnectTimeout(
            f"looking up {host!r} took longer than the attempt's deadline"
        ) from None
    except OSError as exc:
        raise httpcore.ConnectError(str(exc)) from exc
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def _install(transport: httpx.BaseTransport) -> bool:
    """Wrap the network backend of httpx's own transport; False for any other transport."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if not isinstance(transport, httpx.HTTPTransport) or backend is None:
        return False
    if not isinstance(backend, DeadlineBackend):
        pool._network_backend = DeadlineBackend(backend)  # type: ignore[union-attr]
    return True


def deadline_transport(**options: typing.Any) -> httpx.HTTPTransport:
    """An `httpx.HTTPTransport` (same `options`) whose connections honour `attempt_deadline`."""
    transport = httpx.HTTPTransport(**options)
    _install(transport)
    return transport


def ensure_deadlines(client: httpx.Client) -> bool:
    """Make `client`'s transports — its default one and those it mounted for proxies (also from
    ``HTTP(S)_PROXY``) — honour `attempt_deadline` where they are httpx's own `HTTPTransport` (the
    backend changes nothing outside a deadline). Returns whether the default transport does."""
    for mounted in client._mounts.values():  # httpx exposes no public accessor for either
        if mounted is not None:
            _install(mounted)
    return _install(client._transport)
