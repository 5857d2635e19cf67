"""`toolgen serve --http`: the MCP server over Streamable HTTP, callers identified by bearer token.

Input: a loaded `Registry`, a token verifier (the MCP SDK's `TokenVerifier` protocol:
``async verify_token(token) -> AccessToken | None``) and where to listen. Output: an ASGI app
(`build_http_app`) or a running server (`serve_http`) built with the official SDK's
``Server.streamable_http_app``: stateless (no session id; MCP 2026-07-28 requests carry their own
version, 2025-11-25 clients are served statelessly after their handshake), at path ``/mcp``.

Every request passes the SDK's bearer middleware first: a missing, unknown or expired token is
answered ``401`` with ``WWW-Authenticate: Bearer error="invalid_token", ...`` (RFC 6750; with
`AuthSettings.resource_server_url` also ``resource_metadata=`` and the Protected Resource Metadata
document, RFC 9728, as the MCP authorization specification asks of an OAuth resource server), and
no handler runs. Otherwise the caller is the token's actor (`actor_from_token`: id = the token's
subject, else its client id, bound to its issuer when the verifier names one; scopes = the token's scopes) for that one request: it lists only the
tools its scopes allow and every call goes through the runtime's permission check.

Self-hosting without an authorization server: a static token file (`load_token_file`, in
`toolgen.runtime.serving.token_files`), holding the
SHA-256 of each token, never the token::

    tokens:
      - actor: support-bot                       # audit and receipts name this actor
        sha256: 9f2c...64 hex digits...          # printf %s "$TOKEN" | sha256sum
        scopes: [ticket:read, ticket:write]

Tokens are compared in constant time (`hmac.compare_digest` against every entry) and never logged.

Connections that have not (yet) sent a request cannot hold the server: each must deliver a request's
headers within `HEADER_TIMEOUT_S` of connecting or of its previous response (one byte at a time does
not extend it). Until a connection has carried an authenticated request it is unproven, and
unproven connections are bounded: at most `max_waiting_connections` (an eighth of the open-file
limit, at most 256; also the most the event loop accepts in one go) wait for headers at once — a new
one beyond that closes the longest waiting connection of the client address that has the most
waiting — and one client address holds at most `max_connections_per_address` (a quarter of that)
open — a new one beyond that closes that address's own longest waiting one, or itself when none of
the address's connections is waiting. A connection that carried an authenticated request is never
closed to make room for unproven ones (only its own header deadline ends it). So a flood of
connections from one address, or half-open connections beyond the file limit, never lock a token
holder out, and the event loop's "out of system resource" accept errors, should they happen, are
logged as one line every 10 s instead of one traceback each.
"""

from __future__ import annotations

import contextlib
import gc
import ipaddress
import logging
import resource
import signal
import socket
import threading
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Generator, Iterable
from typing import Any

from ..clock import SYSTEM, Clock
from ..identity import ISSUER_CALLER_PREFIX, issuer_caller_id
from .registry import Actor, Registry
from .token_files import (
    StaticToken,
    StaticTokenVerifier,
    TokenFileError,
    load_token_file,
    token_sha256,
)
from .token_refusals import ExplainRefusals

__all__ = [
    "MCP_PATH",
    "StaticToken",
    "StaticTokenVerifier",
    "TokenFileError",
    "actor_from_token",
    "build_http_app",
    "load_token_file",
    "serve_http",
    "token_sha256",
]

MCP_PATH = "/mcp"
#: Seconds a connection has to send a request's headers, from connecting or from its previous response.
HEADER_TIMEOUT_S = 10.0
#: Handshaken connections the kernel queues for accepting (they hold no descriptor until accepted).
LISTEN_BACKLOG = 2048


def actor_from_token(access_token: Any) -> Actor:
    """The caller of a verified `AccessToken`: scopes = its ``scopes``; id = its ``subject`` (else its
    ``client_id``: RFC 9068 §2.2) bound to the issuer its ``claims`` name (``iss``), as
    `identity.issuer_caller_id` writes it, so one ``sub`` of two issuers is two callers; a verifier
    naming no issuer gives the bare name, and one spelled as an issuer-bound id is `NOBODY` (no
    scopes). `Actor.token` = the token as presented when the verifier checked it as a JWT of an
    issuer (`toolgen.runtime.serving.access_tokens.JwtVerifier`), the subject token of a token exchange."""
    claims = getattr(access_token, "claims", None)
    issuer = claims.get("iss") if isinstance(claims, dict) else None
    token = access_token.token if issuer else None
    scopes = [str(s) for s in access_token.scopes or []]
    name = str(getattr(access_token, "subject", None) or access_token.client_id)
    if isinstance(issuer, str) and issuer and name:
        return Actor.of(issuer_caller_id(issuer, name), scopes, token=token)
    if name.startswith(ISSUER_CALLER_PREFIX):
        return NOBODY
    return Actor.of(name, scopes, token=token)


#: The caller of a request that has no verified token (cannot happen behind the bearer
#: middleware): an actor without scopes sees and may call nothing.
NOBODY = Actor.of("unauthenticated", ())


def _actor_of_request(ctx: Any) -> Actor:
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    if isinstance(user, AuthenticatedUser):
        return actor_from_token(user.access_token)
    return NOBODY


def build_http_app(
    registry: Registry,
    *,
    verifier: Any = None,
    auth: Any = None,
    actor: Actor | None = None,
    host: str = "127.0.0.1",
    search_tool: bool | None = None,
    transport_security: Any = None,
    elicit: bool = False,
) -> Any:
    """The Starlette app serving `registry` over Streamable HTTP at ``/mcp``, stateless.

    `verifier`: a `TokenVerifier` (e.g. `StaticTokenVerifier`, or a deployment's own, checking
    tokens of its OAuth authorization server); `auth`: the SDK's `AuthSettings` for an OAuth
    resource server (``issuer_url``, ``resource_server_url``, ``required_scopes``; adds
    ``resource_metadata`` to the 401 challenge and serves the Protected Resource Metadata). Without
    a verifier, `actor` must be given: every request is that actor, unauthenticated (``--no-auth``).
    `host` turns on DNS-rebinding protection (the SDK's Host and Origin checks) for every loopback
    host (127.0.0.0/8, ``::1``, ``localhost``) unless `transport_security` is given. Raises `ValueError` when neither a verifier nor an actor is given."""
    from mcp.server.auth.settings import AuthSettings

    from .mcp_server import build_server

    if transport_security is None:
        transport_security = _loopback_security(host)
    if verifier is None:
        if actor is None:
            raise ValueError("serving HTTP needs a token verifier (or an explicit unauthenticated actor)")
        server = build_server(registry, actor, search_tool=search_tool, elicit=elicit)
        return server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            host=host,
            transport_security=transport_security,
        )
    if actor is not None:
        raise ValueError("with a token verifier the caller comes from the token: do not also give an actor")
    server = build_server(registry, actor_for=_actor_of_request, search_tool=search_tool, elicit=elicit)
    if auth is None:
        # The SDK installs its bearer middleware only with AuthSettings, whose issuer_url is
        # mandatory; without resource_server_url and an authorization-server provider it is used
        # nowhere (no metadata route, no OAuth endpoints), so the server's own origin is given.
        auth = AuthSettings(issuer_url=f"http://{_url_host(host)}", resource_server_url=None)
    return ExplainRefusals(  # a refusal the verifier reported is told in the 401 (token_refusals)
        server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            host=host,
            auth=auth,
            token_verifier=verifier,
            transport_security=transport_security,
        )
    )


#: the loopback hosts the SDK's DNS-rebinding protection knows by itself
SDK_PROTECTED_HOSTS = ("127.0.0.1", "localhost", "::1")


def _loopback_name(host: str) -> str | None:
    """The loopback host `host` names, as a Host header spells it (``localhost``, ``127.0.0.2``,
    ``[::1]``), or None when it names no loopback host. Any letter case and a trailing dot name the
    same host (``LOCALHOST``, ``localhost.``), and an IPv4-mapped IPv6 address its IPv4 address
    (``::ffff:127.0.0.1``)."""
    bare = host.strip("[]").lower().rstrip(".")
    if bare == "localhost":
        return bare
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(bare)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if not address.is_loopback:
        return None
    return f"[{address.compressed}]" if address.version == 6 else address.compressed


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and every loopback address (127.0.0.0/8, ``::1``, IPv4-mapped ones; IPv6
    in brackets or not; names in any letter case, with or without a trailing dot)."""
    return _loopback_name(host) is not None


def _loopback_security(host: str) -> Any:
    """DNS-rebinding protection (Host and Origin checks) for a loopback `host` the SDK does not
    protect itself (it knows ``127.0.0.1``, ``localhost`` and ``::1`` spelled so only; all of
    127.0.0.0/8 is loopback, and ``LOCALHOST`` or ``::ffff:127.0.0.1`` name loopback too): only
    that host, as written and as `_loopback_name` spells it, any port. None for those three and for
    non-loopback hosts."""
    from mcp.server.transport_security import TransportSecuritySettings

    bare = host.strip("[]")
    name = _loopback_name(host)
    if bare in SDK_PROTECTED_HOSTS or name is None:
        return None
    written = f"[{bare}]" if ":" in bare else bare
    names = list(dict.fromkeys([name, written]))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:*" for n in names],
        allowed_origins=[f"http://{n}:*" for n in names],
    )


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets whose
    # protocol says TCP; with proto 0 every response would wait for a delayed ACK (~40 ms on Linux).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
    except OSError:
        sock.close()
        raise
    return sock


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host`:`port` (0: any free port) and listening, for `serve_http`'s
    `sock`: bound once before forking serve workers, so that they all accept from one queue.
    Raises `OSError` when the address cannot be bound."""
    sock = _bind(host, port)
    sock.listen(LISTEN_BACKLOG)
    return sock


def max_waiting_connections() -> int:
    """How many connections may wait for a request's headers at once: an eighth of the process's
    open-file limit (``RLIMIT_NOFILE``, soft), between 8 and 256, so that waiting connections can
    never take the descriptors the server needs to accept and serve a token holder. It also bounds
    how many connections the event loop accepts in one go before the longest waiting are closed (a
    few such bursts stay below half the limit)."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return 256
    return max(8, min(256, soft // 8))


def max_connections_per_address(max_waiting: int) -> int:
    """How many connections one client address may hold open at once while none of them carried an
    authenticated request: a quarter of `max_waiting` (the cap on connections waiting for headers),
    at least 2, so that one address can never fill the waiting room by itself."""
    return max(2, max_waiting // 4)


class CoalescedWrites:
    """A connection's transport that sends a response's status line and headers together with what
    is written next (every other attribute is the transport's).

    uvicorn writes a response's head (status line and headers) and its body with one ``write``
    each, so a response the app sends whole went out as two TCP segments: the client woke up for
    the head alone and waited again for the body, and on a busy machine that wake-up could take the
    CPU from the server before it wrote the body. Here a write that is a response head (``HTTP/1.x
    ...`` ending in an empty line) is held; the next write sends it and itself as one segment at
    once, and a head nothing follows within the event loop's turn (a stream whose first event comes
    later) is sent at the end of that turn. Every other write is sent at once, as before. `close`
    and `write_eof` send a held head first; `abort` drops it."""

    def __init__(self, transport: Any, loop: Any) -> None:
        self._transport = transport
        self._loop = loop
        self._head: bytes | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        chunk = bytes(data)
        if self._head is None and chunk.startswith(b"HTTP/1.") and chunk.endswith(b"\r\n\r\n"):
            self._head = chunk
            self._loop.call_soon(self.flush)
            return
        if self._head is not None:
            chunk, self._head = self._head + chunk, None
        if not self._transport.is_closing():
            self._transport.write(chunk)

    def writelines(self, chunks: Iterable[bytes | bytearray | memoryview]) -> None:
        for chunk in chunks:
            self.write(chunk)

    def flush(self) -> None:
        """Send a held head now (nothing when the connection is closing)."""
        head, self._head = self._head, None
        if head is not None and not self._transport.is_closing():
            self._transport.write(head)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._head = None
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _guarded_protocol(
    header_timeout_s: float, max_waiting: int, max_per_address: int | None = None
) -> type[Any]:
    """uvicorn's h11 protocol, with a deadline for each request's headers and bounds on the
    connections that never carried an authenticated request ("unproven"; shared by the connections
    of one server; see the module docstring), writing through `CoalescedWrites`:

    - one client address holds at most `max_per_address` (default `max_connections_per_address`)
      unproven connections open: one more closes that address's longest waiting one, or is closed
      at once when none of its connections is waiting;
    - at most `max_waiting` unproven connections wait for headers in total: one more closes the
      longest waiting connection of the address that has the most waiting;
    - a connection that carried an authenticated request (the bearer middleware's authenticated
      user) is proven: kept alive, only its header deadline bounds it, and it is never closed to
      make room for unproven ones.

    A connection past its deadline or closed by a bound goes without a response and without a log
    line."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    per_address = max_per_address or max_connections_per_address(max_waiting)
    waiting: OrderedDict[Any, None] = OrderedDict()  # unproven, waiting for headers, oldest first
    by_address: dict[str, OrderedDict[Any, None]] = {}  # the same, per client address
    unproven: Counter[str] = Counter()  # open unproven connections per client address

    class GuardedH11Protocol(H11Protocol):
        _header_deadline: Any = None
        _address = ""
        _counted = False
        _proven = False
        _scope: Any = None

        def connection_made(self, transport: Any) -> None:
            coalesced: Any = CoalescedWrites(transport, self.loop)  # a Transport by delegation
            super().connection_made(coalesced)
            peer = transport.get_extra_info("peername")
            self._address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
            if unproven[self._address] >= per_address:
                mine = by_address.get(self._address)
                if not mine:  # every connection of this address is busy: no room for one more
                    self.transport.close()
                    return
                next(iter(mine))._drop()  # the address's own longest waiting goes
            unproven[self._address] += 1
            self._counted = True
            self._await_headers()

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            if self.cycle is not before:  # a request's headers arrived: it is the app's now
                self._scope = getattr(self.cycle, "scope", None)
                self._stop_waiting()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            user = self._scope.get("user") if isinstance(self._scope, dict) else None
            if getattr(user, "is_authenticated", False) is True:  # the bearer middleware's verdict
                self._proven = True
                self._uncount()
            if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
                self._await_headers()  # kept alive: the next request's headers are due in time too

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_waiting()
            self._uncount()
            super().connection_lost(exc)

        def _await_headers(self) -> None:
            if self._header_deadline is None:
                self._header_deadline = self.loop.call_later(header_timeout_s, self._drop)
            if self._proven:
                return
            waiting[self] = None
            by_address.setdefault(self._address, OrderedDict())[self] = None
            while len(waiting) > max_waiting:
                crowded = max(by_address.values(), key=len)
                next(iter(crowded))._drop()

        def _stop_waiting(self) -> None:
            waiting.pop(self, None)
            mine = by_address.get(self._address)
            if mine is not None:
                mine.pop(self, None)
                if not mine:
                    del by_address[self._address]
            if self._header_deadline is not None:
                self._header_deadline.cancel()
                self._header_deadline = None

        def _uncount(self) -> None:
            if self._counted:
                self._counted = False
                unproven[self._address] -= 1
                if unproven[self._address] <= 0:
                    del unproven[self._address]

        def _drop(self) -> None:
            self._stop_waiting()
            self._uncount()
            if not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol


class _QuietAcceptErrors(logging.Filter):
    """The event loop's "socket.accept() out of system resource" error (a traceback per failed
    accept, thousands a second when descriptors run out) as one line without traceback, at most
    once every `every_s` seconds."""

    def __init__(self, every_s: float = 10.0, clock: Clock = SYSTEM) -> None:
        super().__init__()
        self.every_s = every_s
        self.clock = clock
        self.last = float("-inf")

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("socket.accept() out of system resource"):
            return True
        now = self.clock.monotonic()
        if now - self.last < self.every_s:
            return False
        self.last = now
        error = record.exc_info[1] if record.exc_info else None
        record.msg, record.args, record.exc_info, record.exc_text = (
            "toolgen serve: cannot accept connections: %s (out of file descriptors); retrying",
            (getattr(error, "strerror", None) or type(error).__name__,),
            None,
            None,
        )
        return True


async def serve_http(  # noqa: PLR0913
    registry: Registry,
    *,
    verifier: Any = None,
    auth: Any = None,
    actor: Actor | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    search_tool: bool | None = None,
    transport_security: Any = None,
    on_ready: Callable[[str], Awaitable[None] | None] | None = None,
    header_timeout_s: float = HEADER_TIMEOUT_S,
    max_waiting: int | None = None,
    sock: socket.socket | None = None,
    elicit: bool = False,
    settle_heap: bool = False,
    max_per_address: int | None = None,
) -> None:
    """Serve `registry` over Streamable HTTP (`build_http_app`) on `host`:`port` (0: any free port)
    until SIGINT/SIGTERM, then stop gracefully and return. `on_ready(url)` is called once the
    server accepts connections, with the endpoint's URL (``http://HOST:PORT/mcp``, the bound port).
    `header_timeout_s`: seconds a connection has to send a request's headers; `max_waiting`: the
    most unauthenticated connections waiting for headers at once (default
    `max_waiting_connections()`); `max_per_address`: the most unauthenticated connections one client
    address holds open (default `max_connections_per_address(max_waiting)`). `sock`: a
    socket from `listen` to serve on instead of binding `host`:`port` (a serve worker's, shared
    with its siblings; see `toolgen.runtime.serving.workers`). `elicit`: approvals asked in the protocol
    (`build_server`). `settle_heap`: once the server accepts connections, collect garbage and move
    every object alive then (modules, the registry, the app: what the process keeps until it ends)
    out of the collector's reach (`gc.freeze`), so that the collections requests trigger walk only
    what requests allocate: serving the tickets package, a full collection walks about 17,000
    objects instead of 128,000, each of which had cost about 0.1 s of CPU on a loaded 2-core
    machine, and showed in p99 latency. Meant for a server process (the CLI sets it); a library
    caller's heap is its own business.
    Raises `OSError` when the address cannot be bound, `ValueError` as `build_http_app`."""
    import anyio
    import uvicorn

    app = build_http_app(
        registry,
        verifier=verifier,
        auth=auth,
        actor=actor,
        host=host,
        search_tool=search_tool,
        transport_security=transport_security,
        elicit=elicit,
    )
    sock = _bind(host, port) if sock is None else sock
    bound = sock.getsockname()[1]
    waiting = max_waiting or max_waiting_connections()
    server = _graceful_server_class()(
        uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            http=_guarded_protocol(header_timeout_s, waiting, max_per_address),
            backlog=max(waiting, 8),
        )
    )
    quiet = _QuietAcceptErrors(clock=registry.clock)
    logging.getLogger("asyncio").addFilter(quiet)

    async def announce() -> None:
        while not server.started and not server.should_exit:
            await anyio.sleep(0.01)
        if server.started and settle_heap:
            gc.collect()
            gc.freeze()
        if server.started:
            # the event loop accepts at most `backlog` connections per wake-up (the burst bound
            # above); the kernel may queue many more handshakes meanwhile, none holding a descriptor
            sock.listen(LISTEN_BACKLOG)
        if server.started and on_ready is not None:
            maybe = on_ready(f"http://{_url_host(host)}:{bound}{MCP_PATH}")
            if maybe is not None:
                await maybe

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(announce)
            await server.serve(sockets=[sock])
            tg.cancel_scope.cancel()
    finally:
        logging.getLogger("asyncio").removeFilter(quiet)
        sock.close()
        await registry.aclose()


def _graceful_server_class() -> type[Any]:
    import uvicorn

    class GracefulServer(uvicorn.Server):
        """uvicorn's server, stopping on SIGINT/SIGTERM and then returning normally (uvicorn
        re-raises the signal after its graceful shutdown, which would end the process with it)."""

        @contextlib.contextmanager
        def capture_signals(self) -> Generator[None, None, None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    return GracefulServer
