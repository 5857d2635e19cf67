"""Callers' JWT access tokens verified without code (`toolgen.runtime.serving.access_tokens`): a real
authorization server on loopback (authlib's server classes, joserfc keys) publishes its JWKS; the
verifier accepts its tokens for this resource and refuses every other (expired, another audience,
another issuer, ``alg: none``, re-signed, HMAC with the public key, mutated), follows key rotation
with rate-limited refetches, and `toolgen serve --http` serves RFC 9728 metadata and each caller's
tools over the real MCP client."""

from __future__ import annotations

import base64
import gzip
import hashlib
import hmac
import json
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.support.hostile_server import HostileServer, response, trickle
from tests.support.http_serving import http_server
from tests.support.profiles import examples
from tests.support.runtime_env import mcp_json, tickets_dir

from toolgen.cli import main
from toolgen.runtime import MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.clock import ManualClock
from toolgen.runtime.serving.access_tokens import (
    MAX_JWKS_BYTES,
    AuthorizationServer,
    AuthorizationServerError,
    JwksCache,
    JwtVerifier,
    load_authorization_server,
)
from toolgen.runtime.serving.mcp_http import actor_from_token
from toolgen.testing.tickets_server import TicketsServer

pytest.importorskip("mcp")
pytest.importorskip("authlib")
httpx2 = pytest.importorskip("httpx2")

from tests.support.authorization_server import AuthorizationServer as LoopbackAS

RESOURCE = "https://tools.example.test/mcp"
HEAD = "issuer: https://a.test/\njwks_uri: https://a.test/j\nresource: https://t.test/mcp\n"


@pytest.fixture(scope="module")
def auth_server() -> Iterator[LoopbackAS]:
    with LoopbackAS(RESOURCE) as server:
        yield server


def config(server: LoopbackAS, **options: Any) -> AuthorizationServer:
    return server.trusted(**options)


def verify(verifier: JwtVerifier, token: str) -> Any:
    return anyio.run(verifier.verify_token, token)


def b64(data: dict[str, Any] | bytes) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def test_a_token_of_the_server_for_this_resource_is_accepted(auth_server: LoopbackAS) -> None:
    verifier = JwtVerifier(config(auth_server))
    token = auth_server.access_token("alice", ["ticket:read", "ticket:write"])
    access = verify(verifier, token)
    assert access is not None
    assert (access.subject, access.scopes, access.resource) == (
        "alice",
        ["ticket:read", "ticket:write"],
        RESOURCE,
    )
    actor = actor_from_token(access)
    assert actor.id == f"jwt:{auth_server.issuer}#alice"  # the issuer's subject, never the bare sub
    assert actor.scopes == {"ticket:read", "ticket:write"}
    assert actor.token == token and token not in repr(actor)  # kept for token exchange, never shown


def hs256(header: dict[str, Any], claims: dict[str, Any], secret: bytes) -> str:
    """A JWT signed with HMAC-SHA256 under `secret` (the key-confusion attack: the public key as secret)."""
    signing_input = f"{b64(header)}.{b64(claims)}"
    return f"{signing_input}.{b64(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest())}"


def refused_tokens(server: LoopbackAS) -> dict[str, str]:
    """One token per way a token must be refused."""
    from joserfc.jwk import RSAKey

    good = server.access_token("mallory", ["ticket:read"])
    header, payload, _ = good.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=="))
    kid = json.loads(base64.urlsafe_b64decode(header + "=="))["kid"]
    impostor = RSAKey.generate_key(2048, parameters={"kid": kid}, private=True)
    public_pem = server.signing.as_pem(private=False) if server.signing else b""
    return {
        "expired": server.access_token("mallory", ["ticket:read"], expires_in=-120),
        "foreign audience": server.access_token(
            "mallory", ["ticket:read"], aud="https://other.example.test/mcp"
        ),
        "audience list without this resource": server.access_token(
            "mallory", [], aud=["https://a.test", "b"]
        ),
        "wrong issuer": server.access_token("mallory", ["ticket:read"], iss="https://evil.example.test/"),
        "no subject": server.sign({"aud": RESOURCE, "scope": "ticket:read"}),
        "not yet valid": server.access_token("mallory", ["ticket:read"], nbf=int(claims["iat"]) + 3600),
        "issued in the future": server.access_token(
            "mallory", ["ticket:read"], iat=int(claims["iat"]) + 3600
        ),
        "subject not a string": server.sign({"sub": 7, "aud": RESOURCE, "scope": "ticket:read"}),
        "longer than 16 KiB": server.access_token("mallory", ["ticket:read"], pad="x" * 16_384),
        "alg none": f"{b64({'alg': 'none', 'typ': 'JWT'})}.{payload}.",
        "alg none with the kid": f"{b64({'alg': 'none', 'kid': kid})}.{payload}.",
        "re-signed by another key with the same kid": server.sign(
            {"sub": "mallory", "aud": RESOURCE, "scope": "ticket:read ticket:write ticket:delete"},
            key=impostor,
        ),
        "HS256 with the public key as secret": hs256(
            {"alg": "HS256", "kid": server.signing.kid if server.signing else ""},
            {**claims, "scope": "ticket:delete"},
            public_pem,
        ),
        "payload swapped under a valid signature": ".".join(
            [header, b64({**claims, "scope": "ticket:delete"}), good.split(".")[2]]
        ),
        "unknown kid": server.sign({"sub": "mallory", "aud": RESOURCE}, header={"kid": "k-unpublished"}),
        "empty": "",
        "garbage": "not.a.jwt",
    }


def test_tokens_that_must_be_refused_are(auth_server: LoopbackAS) -> None:
    verifier = JwtVerifier(config(auth_server))
    for why, token in refused_tokens(auth_server).items():
        assert verify(verifier, token) is None, why


def test_the_check_fails_when_audience_or_issuer_is_not_checked(auth_server: LoopbackAS) -> None:
    """The refusals above come from the configuration: a verifier for the other audience (or
    issuer) accepts exactly the token refused for this one."""
    other = "https://other.example.test/mcp"
    token = auth_server.access_token("mallory", ["ticket:read"], aud=other)
    assert verify(JwtVerifier(config(auth_server)), token) is None
    lenient = JwtVerifier(auth_server.trusted(resource=other))
    assert verify(lenient, token) is not None


def test_clock_skew_is_allowed_up_to_the_leeway(auth_server: LoopbackAS) -> None:
    token = auth_server.access_token("alice", ["ticket:read"], expires_in=-10)
    assert verify(JwtVerifier(config(auth_server, leeway_s=30)), token) is not None
    assert verify(JwtVerifier(config(auth_server, leeway_s=0)), token) is None


def test_only_allowed_algorithms_are_accepted(auth_server: LoopbackAS) -> None:
    token = auth_server.access_token("alice", ["ticket:read"])
    assert verify(JwtVerifier(config(auth_server, algorithms=("ES256",))), token) is None
    for bad in (("none",), ("HS256",), ()):
        with pytest.raises(ValueError, match="algorithms"):
            config(auth_server, algorithms=bad)


def test_scope_claim_and_scope_map(auth_server: LoopbackAS) -> None:
    token = auth_server.access_token("alice", ["tickets.write", "profile"], scp=["tickets.read"])
    mapped = config(auth_server, scope_map={"tickets.write": ("ticket:read", "ticket:write")})
    assert verify(JwtVerifier(mapped), token).scopes == [
        "ticket:read",
        "ticket:write",
    ]  # profile grants nothing
    assert verify(JwtVerifier(config(auth_server, scope_claim="scp")), token).scopes == ["tickets.read"]
    assert verify(JwtVerifier(config(auth_server, scope_claim="roles")), token).scopes == []


@settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_a_mutated_token_is_always_refused(auth_server: LoopbackAS, data: st.DataObject) -> None:
    """Any change to a valid token's bytes that changes what it decodes to is refused: one character
    replaced, inserted or deleted anywhere, or its parts reordered."""
    verifier = JwtVerifier(config(auth_server))
    token = auth_server.access_token("alice", ["ticket:read"])
    kind = data.draw(st.sampled_from(["replace", "insert", "delete", "swap"]))
    if kind == "swap":
        parts = token.split(".")
        order = data.draw(st.permutations([0, 1, 2]))
        assume(list(order) != [0, 1, 2])
        mutated = ".".join(parts[i] for i in order)
    else:
        at = data.draw(st.integers(0, len(token) - (0 if kind == "insert" else 1)))
        char = data.draw(st.sampled_from("ABCDEFabcdef0123456789-_.=+/ "))
        mutated = (
            token[:at] + char + token[at + 1 :]
            if kind == "replace"
            else token[:at] + char + token[at:]
            if kind == "insert"
            else token[:at] + token[at + 1 :]
        )

    def decoded(text: str) -> list[bytes | None]:
        out: list[bytes | None] = []
        for part in text.split("."):
            try:
                out.append(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
            except ValueError:
                out.append(None)
        return out

    assume(decoded(mutated) != decoded(token))  # base64 may spell the same bytes twice (padding bits)
    assert verify(verifier, mutated) is None


def test_key_rotation_refetches_once_and_unknown_kids_are_rate_limited(auth_server: LoopbackAS) -> None:
    clock = ManualClock()
    server = config(auth_server, min_refetch_s=30, max_age_s=300)
    jwks = JwksCache(server.jwks_uri, max_age_s=300, min_refetch_s=30, clock=clock)
    verifier = JwtVerifier(server, jwks=jwks, clock=clock)
    assert verify(verifier, auth_server.access_token("alice", ["ticket:read"])) is not None
    assert jwks.fetches == 1
    old = str(auth_server.signing.kid if auth_server.signing else "")
    clock.advance(31)
    new = auth_server.rotate()  # the server signs with a new kid: the cache refetches at once
    assert verify(verifier, auth_server.access_token("alice", ["ticket:read"])) is not None
    assert jwks.fetches == 2
    # a flood of unknown kids: refused, and no refetch within min_refetch_s
    for n in range(20):
        forged = auth_server.sign({"sub": "mallory", "aud": RESOURCE}, header={"kid": f"k-invented-{n}"})
        assert verify(verifier, forged) is None
    assert jwks.fetches == 2
    clock.advance(31)
    assert (
        verify(verifier, auth_server.sign({"sub": "m", "aud": RESOURCE}, header={"kid": "k-still-unknown"}))
        is None
    )
    assert jwks.fetches == 3  # one refetch per interval, then refused
    # a retired key's tokens are refused once the cache has refetched (max_age_s)
    auth_server.retire(old)
    clock.advance(301)
    assert (
        verify(verifier, auth_server.access_token("alice", ["ticket:read"])) is not None
    )  # new kid still good
    assert jwks.fetches == 4
    assert new in [k.kid for k in auth_server.keys]


def test_a_failed_jwks_fetch_keeps_the_known_keys(auth_server: LoopbackAS) -> None:
    clock = ManualClock()
    jwks = JwksCache(auth_server.url + "/jwks", max_age_s=60, min_refetch_s=0, clock=clock)
    verifier = JwtVerifier(config(auth_server), jwks=jwks, clock=clock)
    token = auth_server.access_token("alice", ["ticket:read"])
    assert verify(verifier, token) is not None
    jwks.uri = auth_server.url + "/missing"  # the server answers 404 from now on
    clock.advance(61)
    assert verify(verifier, token) is not None


def around_a_refresh(verifier: JwtVerifier, token: str) -> tuple[bool, bool]:
    """Whether `token` verifies once (with a stale set: a refresh starts) and again once the
    refresh has ended, in one event loop."""

    async def both() -> tuple[bool, bool]:
        before = await verifier.verify_token(token) is not None
        await verifier.jwks.settle()
        return before, await verifier.verify_token(token) is not None

    return anyio.run(both)


def test_a_key_the_set_no_longer_holds_verifies_nothing_even_when_none_is_left() -> None:
    """The authorization server revokes its only key (it publishes an empty set, or one of keys this
    verifier cannot use): once the cache refetches, the old key's tokens are refused. An answer
    that is a JWKS replaces the keys whatever it holds; only a failed fetch keeps them. The first
    token after `max_age_s` does not wait for the refetch (its key is still held: it verifies, and
    the refresh runs in the background); the next one after the refresh is refused."""
    clock = ManualClock()
    with LoopbackAS(RESOURCE) as server:
        jwks = JwksCache(server.url + "/jwks", max_age_s=60, min_refetch_s=30, clock=clock)
        verifier = JwtVerifier(config(server), jwks=jwks, clock=clock)
        token = server.access_token("alice", ["ticket:read"])
        assert verify(verifier, token) is not None
        server.retire(str(server.signing.kid if server.signing else ""))
        clock.advance(61)
        assert around_a_refresh(verifier, token) == (True, False)
        assert jwks.fetches == 2 and server.jwks_fetches == 2
    unusable = {"keys": [{"kty": "XYZ", "kid": "k-new", "use": "sig"}]}
    with LoopbackAS(RESOURCE) as server:
        jwks = JwksCache(server.url + "/jwks", max_age_s=60, min_refetch_s=30, clock=clock)
        verifier = JwtVerifier(config(server), jwks=jwks, clock=clock)
        token = server.access_token("alice", ["ticket:read"])
        assert verify(verifier, token) is not None
        with hostile_jwks(response(200, json.dumps(unusable), {"Content-Type": "application/json"})) as other:
            jwks.uri = other.base_url + "/jwks"
            clock.advance(61)
            assert around_a_refresh(verifier, token) == (True, False)


def test_a_jwk_naming_its_algorithm_verifies_that_algorithm_only(auth_server: LoopbackAS) -> None:
    """The signing key published with ``alg: PS256``: an RS256 token it signed is refused even when
    the configuration allows both (RFC 7517 §4.4: the key is for that algorithm only); published
    with ``alg: RS256`` (the guard), the same token verifies."""
    token = auth_server.access_token("alice", ["ticket:read"])
    assert auth_server.signing is not None
    for declared, accepted in (("PS256", False), ("RS256", True)):
        jwk = {**auth_server.signing.as_dict(private=False), "alg": declared}
        body = json.dumps({"keys": [jwk]})
        with hostile_jwks(response(200, body, {"Content-Type": "application/json"})) as jwks:
            verifier = JwtVerifier(
                config(auth_server, algorithms=("RS256", "PS256")), jwks=JwksCache(jwks.base_url + "/jwks")
            )
            assert (verify(verifier, token) is not None) is accepted, declared


def hostile_jwks(answer: Any) -> HostileServer:
    """A JWKS endpoint that answers every fetch with `answer` (raw bytes or chunks, `HostileServer`)."""
    return HostileServer(lambda request: answer)


def test_a_deeply_nested_jwks_answer_is_a_failed_fetch_not_an_exception(auth_server: LoopbackAS) -> None:
    """`json.loads` of 100,000 opening brackets raises RecursionError, no ValueError: the verifier
    still answers None (a 401), never an exception (the SDK's middleware would answer 500)."""
    token = auth_server.access_token("alice", ["ticket:read"])
    with hostile_jwks(response(200, b"[" * 100_000, {"Content-Type": "application/json"})) as jwks:
        verifier = JwtVerifier(config(auth_server), jwks=JwksCache(jwks.base_url + "/jwks"))
        assert verify(verifier, token) is None
        assert verifier.jwks.fetches == 1


def test_a_huge_jwks_answer_is_not_read_past_the_bound(auth_server: LoopbackAS) -> None:
    """A 32 MB answer: the fetch stops reading once it passes `MAX_JWKS_BYTES` (256 KiB), so the
    memory it takes stays near the bound, and the answer gives no keys."""
    size, chunk = 32 * 1024 * 1024, b" " * 65536
    head = response(200, b"", {"Content-Type": "application/json", "Content-Length": str(size)})
    answer = [(head, 0.0)] + [(chunk, 0.0)] * (size // len(chunk))
    with hostile_jwks(answer) as jwks:
        cache = JwksCache(jwks.base_url + "/jwks")
        tracemalloc.start()
        try:
            assert anyio.run(cache.key, None) is None
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 4 * MAX_JWKS_BYTES, f"the fetch held {peak / 1e6:.1f} MB"


def test_a_compressed_jwks_answer_is_bounded_decoded() -> None:
    """64 KiB of gzip that inflate to 64 MB: the bound holds for the decoded answer, each chunk
    decoded no further than what is left of it (a decoder inflating a whole chunk at once would
    hold the 64 MB before any size check)."""
    bomb = gzip.compress(b" " * (64 * 1024 * 1024), compresslevel=9)
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    with hostile_jwks(response(200, bomb, headers)) as jwks:
        cache = JwksCache(jwks.base_url + "/jwks")
        tracemalloc.start()
        try:
            assert anyio.run(cache.key, None) is None
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert len(bomb) < MAX_JWKS_BYTES and peak < 4 * MAX_JWKS_BYTES, f"the fetch held {peak / 1e6:.1f} MB"
    from joserfc.jwk import RSAKey

    key = RSAKey.generate_key(2048, parameters={"kid": "k-1", "alg": "RS256"}, private=False)
    published = gzip.compress(json.dumps({"keys": [key.as_dict(private=False)]}).encode())
    with hostile_jwks(response(200, published, headers)) as jwks:  # the guard: a small gzip answer is read
        assert anyio.run(JwksCache(jwks.base_url + "/jwks").key, "k-1") is not None


def test_a_jwks_answer_that_trickles_in_ends_at_the_fetch_deadline(auth_server: LoopbackAS) -> None:
    """One byte every 0.2 s (each read within the per-read timeout) would hold the fetch, and every
    verification waiting on its lock, for as long as the server likes: the whole fetch has a
    deadline (`timeout_s`), after which the keys already known are kept."""
    token = auth_server.access_token("alice", ["ticket:read"])
    clock = ManualClock()
    body = json.dumps({"keys": []}).encode() + b" " * 1000
    with hostile_jwks(trickle(200, body, 0.2, {"Content-Type": "application/json"})) as jwks:
        cache = JwksCache(auth_server.url + "/jwks", max_age_s=60, timeout_s=1.0, clock=clock)
        verifier = JwtVerifier(config(auth_server), jwks=cache, clock=clock)
        assert verify(verifier, token) is not None
        cache.uri = jwks.base_url + "/jwks"
        clock.advance(61)
        started = time.monotonic()

        async def bounded() -> Any:
            with anyio.fail_after(10):
                return await verifier.verify_token(token)

        assert anyio.run(bounded) is not None  # the known key still verifies
        assert time.monotonic() - started < 5
        assert cache.fetches == 2


def test_keys_come_only_from_the_configured_jwks_answer(auth_server: LoopbackAS) -> None:
    """A forger's key reaches the verifier by no other way: not by a redirect of `jwks_uri` (not
    followed), not by the token's own ``jku``/``x5u`` header (never fetched), not as a symmetric
    (``oct``) key published in the set (HMAC is never an allowed algorithm, and an RSA algorithm
    cannot use it)."""
    from joserfc.jwk import OctKey, RSAKey

    evil = RSAKey.generate_key(2048, parameters={"kid": "k-evil", "alg": "RS256"}, private=True)
    oct_key = OctKey.generate_key(256, parameters={"kid": "k-oct"})
    claims = {"sub": "mallory", "aud": RESOURCE, "scope": "ticket:delete"}
    forged = auth_server.sign(claims, key=evil)
    published = {"keys": [evil.as_dict(private=False), oct_key.as_dict(private=True)]}
    with hostile_jwks(response(200, json.dumps(published), {"Content-Type": "application/json"})) as theirs:

        def redirect(request: Any) -> bytes:
            return response(302, b"", {"Location": theirs.base_url + "/jwks"})

        with HostileServer(redirect) as ours:
            redirected = JwtVerifier(config(auth_server), jwks=JwksCache(ours.base_url + "/jwks"))
            assert verify(redirected, forged) is None
            assert [r.path for r in theirs.requests] == []  # the redirect was not followed
        verifier = JwtVerifier(config(auth_server))
        for header in ({"jku": theirs.base_url + "/jwks"}, {"x5u": theirs.base_url + "/jwks"}):
            assert verify(verifier, auth_server.sign(claims, key=evil, header=header)) is None
        assert theirs.requests == []
        trusting = JwtVerifier(config(auth_server), jwks=JwksCache(theirs.base_url + "/jwks"))
        assert verify(trusting, forged) is not None  # the guard: that set's keys do verify
        for algorithm in ("HS256", "RS256"):
            body = {**claims, "iss": auth_server.issuer, "exp": int(time.time()) + 600}
            signed = hs256({"alg": algorithm, "kid": "k-oct"}, body, oct_key.raw_value)
            assert verify(trusting, signed) is None, algorithm


# ------------------------------------------------------------------------------------------------
# the authorization-server file


def write(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "auth.yaml"
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_the_file_is_read(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "issuer: https://auth.example.test/\njwks_uri: https://auth.example.test/jwks\n"
        "resource: https://tools.example.test/mcp\nalgorithms: [RS256, ES256]\nleeway_s: 10\n"
        "scope_map: {tickets.write: [ticket:write]}\n"
        "token_exchange: {token_endpoint: 'https://auth.example.test/token', client_id: tg,\n"
        "                 client_secret_env: TG_SECRET}\n",
    )
    server = load_authorization_server(path, environ={"TG_SECRET": "s3cret"})
    assert server.algorithms == ("RS256", "ES256") and server.leeway_s == 10
    assert server.scope_map == {"tickets.write": ("ticket:write",)}
    assert server.exchange is not None and server.exchange.client_secret == "s3cret"
    assert "s3cret" not in repr(server)


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (
            HEAD + "algorithms: [RS256, none]\n",
            ":4:",
            "not allowed",
        ),
        (
            HEAD + "algorithms: [HS256]\n",
            ":4:",
            "HMAC",
        ),
        (
            "issuer: http://a.test/\njwks_uri: https://a.test/j\nresource: https://t.test/mcp\n",
            ":1:",
            "https://",
        ),
        ("issuer: https://a.test/\nresource: https://t.test/mcp\n", ":1:", "jwks_uri"),
        (
            HEAD + "leeway: 5\n",
            ":4:",
            "unknown key",
        ),
        (
            HEAD + "leeway_s: 900\n",
            ":4:",
            "between",
        ),
        (
            HEAD
            + "token_exchange:\n"
            + "  token_endpoint: https://a.test/t\n  client_id: c\n  client_secret_env: UNSET_VARIABLE_X\n",
            ":7:",
            "not set",
        ),
    ],
)
def test_bad_files_are_refused_located(tmp_path: Path, text: str, where: str, what: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(AuthorizationServerError, match=what) as caught:
        load_authorization_server(path, environ={})
    assert str(caught.value).startswith(f"{path}{where}"), str(caught.value)


def test_a_file_every_user_may_write_is_refused(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEAD,
        mode=0o666,
    )
    with pytest.raises(AuthorizationServerError, match="chmod"):
        load_authorization_server(path)


def test_serve_takes_one_token_source(tmp_path: Path) -> None:
    path = write(tmp_path, HEAD)
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text("tokens: []\n", encoding="utf-8")
    out = CliRunner().invoke(
        main,
        [
            "serve",
            str(tickets_dir()),
            "--http",
            "127.0.0.1:0",
            "--tokens",
            str(tokens),
            "--authorization-server",
            str(path),
        ],
    )
    assert out.exit_code == 2 and "exclude each other" in out.output
    out = CliRunner().invoke(main, ["serve", str(tickets_dir()), "--authorization-server", str(path)])
    assert out.exit_code == 2 and "--http only" in out.output
    bad = write(tmp_path, "issuer: https://a.test/\n")
    out = CliRunner().invoke(
        main, ["serve", str(tickets_dir()), "--http", "127.0.0.1:0", "--authorization-server", str(bad)]
    )
    assert out.exit_code == 2 and f"{bad}:1:1" in out.output


# ------------------------------------------------------------------------------------------------
# served over MCP Streamable HTTP


@pytest.mark.anyio
async def test_serve_http_with_the_jwt_verifier(auth_server: LoopbackAS, server: TicketsServer) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    policy = json.loads((tickets_dir() / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((tickets_dir() / "mcp.json").read_text(encoding="utf-8"))
    audit = MemoryAuditSink()
    registry = Registry(
        policy,
        catalog,
        base_url=server.base_url,
        receipts=MemoryReceiptStore(),
        audit=audit,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        cursor_key=b"k" * 32,
    )
    settings_ = config(auth_server)
    async with http_server(registry, verifier=JwtVerifier(settings_), auth=settings_.auth_settings()) as url:
        base = url.removesuffix("/mcp")
        async with httpx2.AsyncClient(timeout=30) as http:
            metadata = (await http.get(base + "/.well-known/oauth-protected-resource/mcp")).json()
            assert metadata["resource"] == RESOURCE
            assert [s.rstrip("/") for s in metadata["authorization_servers"]] == [
                auth_server.issuer.rstrip("/")
            ]
            for token in (None, *refused_tokens(auth_server).values()):
                headers = {"Authorization": f"Bearer {token}"} if token else {}
                answer = await http.post(
                    url,
                    headers={
                        **headers,
                        "Accept": "application/json, text/event-stream",
                        "Content-Type": "application/json",
                    },
                    json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                )
                assert answer.status_code == 401, token
                assert "resource_metadata=" in answer.headers["www-authenticate"]
        reader = auth_server.access_token("alice", ["ticket:read"])
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {reader}"}, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            names = sorted(t.name for t in (await client.list_tools()).tools)
            assert names == ["get_ticket", "get_ticket_history", "get_ticket_view", "list_tickets"]
            result = await client.call_tool("get_ticket", {"ticket_id": "T-102"})
            assert result.is_error is False and mcp_json(result)["id"] == "T-102"
            denied = await client.call_tool(
                "record_ticket_delete", {"preview_id": "sha256:" + "0" * 64, "action_id": "a-1"}
            )
            assert denied.is_error is True
    assert {e.actor for e in audit.events if e.tool == "get_ticket"} == {f"jwt:{auth_server.issuer}#alice"}
