"""A JWK's ``use`` and ``key_ops`` (RFC 7517 §4.2, §4.3) decide whether it may verify an access
token (`toolgen.runtime.serving.access_tokens.verifies_signatures`): the real loopback authorization
server signs a token with a key it publishes as an encryption key, or with ``key_ops`` that lack
``verify``, or with a malformed member, and the verifier refuses it as a ``kid`` it does not hold
(``token-key-unknown``), never answering with another key of the set; a key published for
signatures verifies."""

from __future__ import annotations

import time
from typing import Any

import anyio
import pytest

from toolgen.runtime.serving.access_tokens import JwtVerifier
from toolgen.runtime.serving.token_refusals import TokenRefusal

pytest.importorskip("authlib")

from tests.support.authorization_server import AuthorizationServer as LoopbackAS

RESOURCE = "https://tools.example.test/mcp"


def verifier_of(server: LoopbackAS) -> JwtVerifier:
    return JwtVerifier(server.trusted())


def verdict(verifier: JwtVerifier, token: str) -> Any:
    return anyio.run(verifier.verdict, token)


@pytest.mark.parametrize(
    "published",
    [
        {"use": "enc"},
        {"use": None, "key_ops": ["encrypt"]},
        {"use": "sig", "key_ops": ["sign"]},
        {"use": None, "key_ops": ["encrypt", "wrapKey"]},
        {"use": None, "key_ops": "verify"},
        {"use": None, "key_ops": ["verify", 1]},
        {"use": None, "key_ops": {"verify": True}},
        {"use": 1},
        {"use": ["sig"]},
        {"use": "SIG"},
    ],
    ids=repr,
)
def test_a_key_that_may_not_verify_is_refused_as_unknown(published: dict[str, Any]) -> None:
    """The token signed by the refused key is ``token-key-unknown`` (its kid is as if absent), while
    the set's other key, published for signatures, still verifies its own tokens."""
    with LoopbackAS(RESOURCE) as server:
        usable = server.signing
        refused = server.rotate(**published)
        assert any(key["kid"] == refused for key in server_jwks(server))  # it is published
        verifier = verifier_of(server)
        found = verdict(verifier, server.access_token("mallory", ["ticket:read"]))
        assert isinstance(found, TokenRefusal) and found.code == "token-key-unknown", found
        # the same key's token without a kid is not answered by the set's other (signing) key either
        assert verdict(verifier, unnamed(server)) is None
        good = server.sign({"sub": "alice", "aud": RESOURCE}, key=usable)
        assert isinstance(verdict(verifier, good), dict)


@pytest.mark.parametrize(
    "published",
    [
        {},
        {"use": "sig", "key_ops": ["verify"]},
        {"use": None, "key_ops": ["sign", "verify"]},
        {"use": None},
    ],
    ids=repr,
)
def test_a_key_published_for_signatures_verifies(published: dict[str, Any]) -> None:
    with LoopbackAS(RESOURCE) as server:
        server.rotate(**published)
        claims = verdict(verifier_of(server), server.access_token("alice", ["ticket:read"]))
        assert isinstance(claims, dict) and claims["sub"] == "alice"


def unnamed(server: LoopbackAS) -> str:
    """An access token signed by the server's current key whose header names no ``kid``."""
    import jwt

    assert server.signing is not None
    now = int(time.time())
    claims = {"iss": server.issuer, "sub": "mallory", "aud": RESOURCE, "iat": now, "exp": now + 600}
    return jwt.encode(claims, server.signing.as_pem(private=True), "RS256", {"typ": "at+jwt"})


def server_jwks(server: LoopbackAS) -> list[dict[str, Any]]:
    import httpx

    answer = httpx.get(server.url + "/jwks", timeout=5)
    keys: list[dict[str, Any]] = answer.json()["keys"]
    return keys
