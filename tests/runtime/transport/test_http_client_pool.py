"""`IdleStackPool`: the async client's connection pool reuses, bounds and discards connections as
httpx's own pool did, against real loopback servers (the tickets API and a raw socket server whose
keep-alive, delay and closing the test decides)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from tests.support.runtime_env import tickets_dir

from toolgen.runtime import Actor, MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.transport import http_client as transport
from toolgen.runtime.transport.http_client import (
    IdleStackPool,
    IdleStackTransport,
    async_client,
    failure_kind,
)
from toolgen.testing.tickets_server import TicketsServer


def make_registry(server: TicketsServer, **options: Any) -> Registry:
    folder = tickets_dir()
    return Registry(
        json.loads((folder / "policy.json").read_text(encoding="utf-8")),
        json.loads((folder / "mcp.json").read_text(encoding="utf-8")),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=MemoryReceiptStore(),
        audit=MemoryAuditSink(),
        **options,
    )


class RawServer:
    """HTTP/1.1 on loopback, one thread per connection: answers every request with ``ok`` after
    `delay_s`; with `close_after_s` closes each connection that long after its answer. Counts the
    connections it accepted."""

    def __init__(self, *, delay_s: float = 0.0, close_after_s: float | None = None) -> None:
        self.delay_s = delay_s
        self.close_after_s = close_after_s
        self.accepted = 0
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/x"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buffer = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buffer:
                    try:
                        data = conn.recv(65536)
                    except OSError:
                        return
                    if not data:
                        return
                    buffer += data
                _, buffer = buffer.split(b"\r\n\r\n", 1)
                time.sleep(self.delay_s)
                try:
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok"
                    )
                except OSError:
                    return
                if self.close_after_s is not None:
                    time.sleep(self.close_after_s)
                    return

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def raw() -> Iterator[RawServer]:
    server = RawServer()
    yield server
    server.close()


async def get(client: httpx.AsyncClient, url: str, **extensions: Any) -> tuple[int, bytes]:
    request = httpx.Request("GET", url, extensions=extensions)
    response = await client.send(request, stream=True)
    try:
        return response.status_code, b"".join([chunk async for chunk in response.aiter_raw()])
    finally:
        await response.aclose()


def pool_of(client: httpx.AsyncClient, url: str = "http://127.0.0.1/") -> IdleStackPool:
    """The pool `client` sends a request for `url` through (the client's own routing, under test)."""
    transport = client._transport_for_url(httpx.URL(url))
    assert isinstance(transport, IdleStackTransport)
    return transport.pool


@pytest.mark.anyio
async def test_sequential_requests_reuse_one_connection(raw: RawServer) -> None:
    async with async_client() as client:
        for _ in range(5):
            assert await get(client, raw.url) == (200, b"ok")
        assert raw.accepted == 1 and pool_of(client).idle_count() == 1


@pytest.mark.anyio
async def test_concurrent_requests_open_what_they_need_and_keep_at_most_max_idle(raw: RawServer) -> None:
    raw.delay_s = 0.05
    pool = IdleStackPool(max_connections=100, max_idle=3)
    async with httpx.AsyncClient(transport=IdleStackTransport(pool)) as client:
        answers: list[tuple[int, bytes]] = []

        async def one() -> None:
            answers.append(await get(client, raw.url))

        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(one)
        assert answers == [(200, b"ok")] * 8
        assert raw.accepted == 8 and pool.idle_count() == 3
        for _ in range(3):  # the kept ones serve the next requests
            assert await get(client, raw.url) == (200, b"ok")
        assert raw.accepted == 8


@pytest.mark.anyio
async def test_a_connection_the_server_closed_is_not_reused(raw: RawServer) -> None:
    raw.close_after_s = 0.05
    async with async_client() as client:
        for _ in range(3):
            assert await get(client, raw.url) == (200, b"ok")
            await anyio.sleep(0.3)  # the server has closed it meanwhile
        assert raw.accepted == 3


@pytest.mark.anyio
async def test_an_expired_keep_alive_connection_is_closed_not_reused(raw: RawServer) -> None:
    pool = IdleStackPool(keepalive_expiry=0.1)
    async with httpx.AsyncClient(transport=IdleStackTransport(pool)) as client:
        assert await get(client, raw.url) == (200, b"ok")
        await anyio.sleep(0.3)
        assert await get(client, raw.url) == (200, b"ok")
        assert raw.accepted == 2 and pool.idle_count() == 1


@pytest.mark.anyio
async def test_max_connections_bounds_requests_in_flight_and_the_pool_timeout_is_a_connect_failure(
    raw: RawServer,
) -> None:
    raw.delay_s = 0.5
    pool = IdleStackPool(max_connections=2)
    failures: list[str] = []
    async with httpx.AsyncClient(transport=IdleStackTransport(pool)) as client:

        async def one() -> None:
            try:
                await get(client, raw.url, timeout={"connect": 5, "read": 5, "write": 5, "pool": 0.1})
            except httpx.HTTPError as exc:
                failures.append(failure_kind(exc))

        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(one)
        assert failures == ["connect"] and raw.accepted == 2  # nothing of the third was sent
        assert await get(client, raw.url) == (200, b"ok")  # the slots came back


@pytest.mark.anyio
async def test_a_cancelled_request_closes_its_connection_and_frees_its_slot(raw: RawServer) -> None:
    raw.delay_s = 1.0
    pool = IdleStackPool(max_connections=1)
    async with httpx.AsyncClient(transport=IdleStackTransport(pool)) as client:
        with anyio.move_on_after(0.1):
            await get(client, raw.url)
        assert pool.idle_count() == 0
        raw.delay_s = 0.0
        with anyio.fail_after(5):  # the one slot is free again; a new connection answers
            assert await get(client, raw.url) == (200, b"ok")
        assert raw.accepted == 2


@pytest.mark.anyio
async def test_a_closed_pool_closes_its_idle_connections_and_refuses_requests(raw: RawServer) -> None:
    client = async_client()
    assert await get(client, raw.url) == (200, b"ok")
    pool = pool_of(client)
    await client.aclose()
    assert pool.idle_count() == 0
    with pytest.raises(RuntimeError):
        await get(client, raw.url)


@pytest.mark.anyio
async def test_registry_calls_through_the_pool_under_concurrency(server: TicketsServer) -> None:
    registry = make_registry(server)
    reader = Actor.of("reader", ["ticket:read"])
    tickets = [f"T-{n}" for n in range(100, 140)]
    seen: dict[str, Any] = {}

    async def one(ticket: str) -> None:
        result = await registry.acall("get_ticket", {"ticket_id": ticket}, actor=reader)
        seen[ticket] = result.result["id"] if result.ok and result.result is not None else result.error

    async with anyio.create_task_group() as tg:
        for ticket in tickets:
            tg.start_soon(one, ticket)
    assert seen == {t: t for t in tickets}  # every answer is its own request's, none crossed
    assert registry._aclient is not None
    assert pool_of(registry._aclient, server.base_url).idle_count() >= 1
    await registry.aclose()


def test_the_registry_sends_with_the_pooled_client_unless_given_one(server: TicketsServer) -> None:
    given = httpx.AsyncClient()
    assert make_registry(server, async_http_client=given)._aclient is given
    anyio.run(given.aclose)


def test_proxies_from_the_environment_still_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "internal.example")
    client = async_client()
    routed = client._transport_for_url(httpx.URL("http://api.example/v1"))
    assert not isinstance(routed, IdleStackTransport)  # httpx's proxy transport, as before
    assert isinstance(client._transport_for_url(httpx.URL("https://api.example/v1")), IdleStackTransport)
    direct = client._transport_for_url(httpx.URL("http://internal.example/v1"))  # NO_PROXY: sent directly
    assert (
        isinstance(direct, httpx.AsyncHTTPTransport) and type(direct._pool).__name__ == "AsyncConnectionPool"
    )
    for name in ("HTTP_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name)
    assert pool_of(async_client(), "http://api.example/v1") is not None


@pytest.mark.anyio
async def test_the_tls_context_is_made_once_and_only_for_a_tls_origin(raw: RawServer) -> None:
    made: list[int] = []

    def make() -> Any:
        made.append(1)
        return httpx.create_ssl_context()

    pool = IdleStackPool(make_ssl_context=make)
    async with httpx.AsyncClient(transport=IdleStackTransport(pool)) as client:
        assert await get(client, raw.url) == (200, b"ok")
        assert made == []  # plain HTTP: no CA bundle loaded
        for _ in range(2):  # nothing answers TLS there: each attempt fails, one context serves both
            with pytest.raises(
                httpx.HTTPError
            ):  # the handshake waits for an answer: give up after 0.5 s, not 5
                await get(
                    client,
                    raw.url.replace("http://", "https://"),
                    timeout={"connect": 0.5, "read": 0.5, "write": 0.5, "pool": 0.5},
                )
        assert made == [1]


def test_every_client_of_every_registry_shares_one_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading the CA bundle costs tens of ms of CPU: a process does it once, not once per registry,
    client or proxy transport (httpx makes one for each of those unless given a context)."""
    made: list[int] = []
    real = httpx.create_ssl_context

    def counting(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("verify", args[0] if args else True) is True:  # loads the CAs (a context given is kept)
            made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(httpx, "create_ssl_context", counting)
    monkeypatch.setattr(
        httpx._transports.default, "create_ssl_context", counting
    )  # what httpx's transports call
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")  # httpx mounts a proxy transport of its own
    transport.tls_context.cache_clear()
    try:
        with TicketsServer() as server:
            for _ in range(3):
                reg = Registry.from_dir(
                    tickets_dir(),
                    base_url=server.base_url,
                    credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
                    receipts=MemoryReceiptStore(),
                    audit=MemoryAuditSink(),
                )
                assert reg.call("get_ticket", {"ticket_id": "T-102"}, actor=Actor.of("r", ["ticket:read"])).ok
                reg.close()
        for _ in range(2):
            async_client()  # httpx's default and proxy transports take the shared context (nothing opened)
        assert made == [1]
        assert transport.tls_context() is transport.tls_context()
    finally:
        transport.tls_context.cache_clear()


@pytest.mark.anyio
async def test_the_pool_answers_as_httpx_own_pool_does(server: TicketsServer) -> None:
    """The equivalence the pool is kept under (benchmarks/results/speed_tricks.md): the same calls,
    concurrent, through `IdleStackPool` and through httpx's own pool, give the same results and
    errors (a found ticket, a missing one, a list page but its sealed cursor, a ticket's history)."""
    reader = Actor.of("reader", ["ticket:read"])
    calls: list[tuple[str, dict[str, Any]]] = [
        *(("get_ticket", {"ticket_id": f"T-{n}"}) for n in range(100, 112)),
        ("get_ticket", {"ticket_id": "T-999"}),
        ("list_tickets", {}),
        ("get_ticket_history", {"ticket_id": "T-102"}),
    ]

    async def outcomes(registry: Registry) -> list[Any]:
        found: list[Any] = [None] * len(calls)

        async def one(i: int) -> None:
            tool, args = calls[i]
            result = await registry.acall(tool, args, actor=reader)
            if not result.ok:
                found[i] = result.error.code if result.error else None
            elif isinstance(result.result, dict):  # a page's cursor is sealed afresh by each registry
                found[i] = {k: v for k, v in result.result.items() if k != "next_cursor"}
            else:
                found[i] = result.result

        async with anyio.create_task_group() as tg:
            for i in range(len(calls)):
                tg.start_soon(one, i)
        await registry.aclose()
        return found

    pooled = make_registry(server)
    plain = make_registry(server, async_http_client=httpx.AsyncClient(follow_redirects=False))
    mine, theirs = await outcomes(pooled), await outcomes(plain)
    assert mine == theirs
    assert "not_found" in mine and sum(isinstance(o, dict) for o in mine) >= 12  # both kinds were compared
