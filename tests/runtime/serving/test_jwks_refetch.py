"""Fetching the authorization server's keys never stalls a token whose ``kid`` the cache holds:
the JWKS endpoint is a fault-injecting loopback server (it hangs until the test lets it go, answers
500, or trickles its answer), and the tests assert on the order of events, not on timings. A
``kid`` the cache lacks starts one fetch however many such tokens arrive (single flight), waits
for it at most the fetch's deadline, and after a fetch (failed or not) no other starts within
`min_refetch_s`: meanwhile such tokens are refused with ``token-key-unknown``."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any, Self

import anyio
import pytest
from tests.support.hostile_server import HostileServer, RawRequest, Reply, response

from toolgen.runtime.clock import ManualClock
from toolgen.runtime.serving.access_tokens import AuthorizationServer, JwksCache, JwtVerifier, TokenRefusal

pytest.importorskip("authlib")

from tests.support.authorization_server import AuthorizationServer as LoopbackAS

RESOURCE = "https://tools.example.test/mcp"
JSON = {"Content-Type": "application/json"}


class FaultyJwks:
    """The loopback authorization server's JWKS, served by a server whose `mode` injects a fault:
    ``ok``, ``hang`` (holds the request until the test opens `gate`, then closes without an answer),
    ``500``, ``slow`` (the answer trickles in, a byte every 0.2 s, until `gate` opens)."""

    def __init__(self, issuer: LoopbackAS) -> None:
        self.issuer = issuer
        self.mode = "ok"
        self.gate = threading.Event()
        self.server = HostileServer(self.answer)

    def answer(self, request: RawRequest) -> Reply:
        body = json.dumps({"keys": [k.as_dict(private=False) for k in self.issuer.keys]}).encode()
        if self.mode == "hang":
            self.gate.wait(30)
            return None
        if self.mode == "500":
            return response(500, b'{"error": "down"}', JSON)
        if self.mode == "slow":
            return self.trickle(body)
        return response(200, body, JSON)

    def trickle(self, body: bytes, pad: int = 150) -> Iterator[tuple[bytes, float]]:
        """A 200 whose head comes at once and whose body (`pad` spaces, then the JWKS) comes a space
        every 0.2 s until `release`, then whole."""
        yield response(200, b"", {**JSON, "Content-Length": str(pad + len(body))}), 0.0
        sent = 0
        while sent < pad - 1 and not self.gate.is_set():
            yield b" ", 0.2
            sent += 1
        yield b" " * (pad - sent) + body, 0.0

    @property
    def fetched(self) -> int:
        return len(self.server.requests)

    def __enter__(self) -> Self:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.gate.set()
        self.server.stop()


@pytest.fixture(scope="module")
def issuer() -> Iterator[LoopbackAS]:
    with LoopbackAS(RESOURCE) as server:
        yield server


def verifier_of(issuer: LoopbackAS, jwks: FaultyJwks, clock: ManualClock, timeout_s: float) -> JwtVerifier:
    settings_ = AuthorizationServer(
        issuer=issuer.issuer, jwks_uri=jwks.server.base_url + "/jwks", resource=RESOURCE
    )
    cache = JwksCache(settings_.jwks_uri, max_age_s=60, min_refetch_s=30, timeout_s=timeout_s, clock=clock)
    return JwtVerifier(settings_, jwks=cache, clock=clock)


def invented(issuer: LoopbackAS, n: int) -> str:
    return issuer.sign({"sub": "mallory", "aud": RESOURCE}, header={"kid": f"k-invented-{n}"})


@pytest.mark.parametrize("fault", ["hang", "slow"])
def test_known_kids_are_served_while_the_authorization_server_stalls(issuer: LoopbackAS, fault: str) -> None:
    """The set is stale and the JWKS endpoint hangs (or trickles its answer): ten tokens with the
    known ``kid`` are all verified while the refresh is still held by the server (the test lets it
    go only once they are in), and ten tokens with invented ``kid``\\ s share that one fetch and are
    refused after it."""
    clock = ManualClock()
    with FaultyJwks(issuer) as jwks:
        verifier = verifier_of(issuer, jwks, clock, timeout_s=20)
        token = issuer.access_token("alice", ["ticket:read"])
        events: list[tuple[str, bool]] = []

        async def scenario() -> None:
            assert await verifier.verify_token(token) is not None
            jwks.mode = fault
            clock.advance(61)  # the set is stale: the next token starts a refresh

            async def known() -> None:
                events.append(("known", await verifier.verify_token(token) is not None))

            async def unknown(n: int) -> None:
                events.append(("unknown", await verifier.verify_token(invented(issuer, n)) is not None))

            async def release() -> None:
                with anyio.fail_after(10):  # a known kid waiting on the hung fetch never gets here
                    while sum(1 for what, _ in events if what == "known") < 10:
                        await anyio.sleep(0.01)
                events.append(("released", True))
                jwks.gate.set()

            async with anyio.create_task_group() as group:
                for n in range(10):
                    group.start_soon(known)
                    group.start_soon(unknown, n)
                group.start_soon(release)

        anyio.run(scenario)
    order = [what for what, _ in events]
    released = order.index("released")
    assert order[:released] == ["known"] * 10 and all(ok for what, ok in events if what == "known")
    assert order[released + 1 :] == ["unknown"] * 10 and not any(
        ok for what, ok in events if what == "unknown"
    )
    assert jwks.fetched == 2  # the first fetch, then one refresh however many unknown kids came


@pytest.mark.parametrize("fault", ["slow", "500"])
def test_a_refresh_that_fails_keeps_the_key(issuer: LoopbackAS, fault: str) -> None:
    """A refresh that trickles in past its deadline (1 s) or answers 500: the tokens with the known
    ``kid`` are verified meanwhile, and the key is still held after the refresh failed."""
    clock = ManualClock()
    with FaultyJwks(issuer) as jwks:
        verifier = verifier_of(issuer, jwks, clock, timeout_s=1.0)
        token = issuer.access_token("alice", ["ticket:read"])
        events: list[str] = []

        async def scenario() -> None:
            assert await verifier.verify_token(token) is not None
            jwks.mode = fault
            clock.advance(61)

            async def known() -> None:
                assert await verifier.verify_token(token) is not None
                events.append("known")

            async with anyio.create_task_group() as group:
                for _ in range(10):
                    group.start_soon(known)
            await verifier.jwks.settle()
            events.append("refresh ended")
            assert await verifier.verify_token(token) is not None  # the failed refresh kept the key

        anyio.run(scenario)
    assert events == ["known"] * 10 + ["refresh ended"]
    assert jwks.fetched == 2


def test_after_a_failed_fetch_unknown_kids_are_refused_without_another(issuer: LoopbackAS) -> None:
    """A failed fetch starts the cooldown: a flood of invented ``kid``\\ s within `min_refetch_s`
    reaches the authorization server not once and is refused at once with ``token-key-unknown``;
    after it, one token starts exactly one fetch."""
    clock = ManualClock()
    with FaultyJwks(issuer) as jwks:
        jwks.mode = "500"
        verifier = verifier_of(issuer, jwks, clock, timeout_s=2.0)

        async def flood() -> list[Any]:
            found: list[Any] = []

            async def one(n: int) -> None:
                found.append(await verifier.verdict(invented(issuer, n)))

            async with anyio.create_task_group() as group:
                for n in range(100):
                    group.start_soon(one, n)
            return found

        first = anyio.run(flood)  # no keys yet: one fetch, which fails
        assert jwks.fetched == 1
        assert all(isinstance(r, TokenRefusal) and r.code == "token-key-unknown" for r in first)
        assert "could not be fetched" in first[-1].description
        clock.advance(10)
        again = anyio.run(flood)
        assert jwks.fetched == 1  # the cooldown: nothing reaches the server
        assert "fetched again in 20 s" in again[0].description
        jwks.mode = "ok"
        clock.advance(21)
        token = issuer.access_token("alice", ["ticket:read"])
        assert anyio.run(verifier.verify_token, token) is not None
        assert jwks.fetched == 2


def test_a_hung_fetch_ends_at_its_deadline_and_refuses_the_unknown_kid(issuer: LoopbackAS) -> None:
    """Without keys and with the server hanging, a token waits for the one fetch no longer than its
    deadline (0.5 s here; the bound asserted is generous), then is refused."""
    clock = ManualClock()
    with FaultyJwks(issuer) as jwks:
        jwks.mode = "hang"
        verifier = verifier_of(issuer, jwks, clock, timeout_s=0.5)
        token = issuer.access_token("alice", ["ticket:read"])

        async def bounded() -> Any:
            with anyio.fail_after(5):
                return await verifier.verdict(token)

        refused = anyio.run(bounded)
        assert isinstance(refused, TokenRefusal) and refused.code == "token-key-unknown"
        assert jwks.fetched == 1
