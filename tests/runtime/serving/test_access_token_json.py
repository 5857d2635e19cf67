"""A token's header and claims are read as I-JSON (RFC 7493) and its times as NumericDates (RFC 7519
§2), whatever the JSON library would let through: real tokens signed with the loopback authorization
server's key (the signature verifies, so only the strict reading refuses them).

- duplicate member names (RFC 7515 §5.2, RFC 7519 §4) are refused, in the header and in the claims:
  a library keeping the last ``sub`` and a gateway keeping the first would name two callers;
- a lone surrogate (``"\\ud800"``), a byte-order mark, ``NaN``/``Infinity`` are refused (RFC 7493
  §2.1, RFC 8259 §8.1);
- ``exp``, ``nbf`` and ``iat`` must be JSON numbers: ``"1796656097"`` (a string PyJWT reads with
  `int`) and ``true`` are refused."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from toolgen.runtime.serving.access_tokens import JwtVerifier

pytest.importorskip("authlib")
pytest.importorskip("cryptography")

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from tests.support.authorization_server import AuthorizationServer as LoopbackAS

RESOURCE = "https://tools.example.test/mcp"


@pytest.fixture(scope="module")
def auth_server() -> Iterator[LoopbackAS]:
    with LoopbackAS(RESOURCE) as server:
        yield server


def part(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode("utf-8", "surrogatepass")).rstrip(b"=").decode()


def signed(server: LoopbackAS, header: str, claims: str) -> str:
    """A compact JWS of exactly these header and claims texts, signed RS256 with the server's key."""
    assert server.signing is not None
    key: Any = serialization.load_pem_private_key(server.signing.as_pem(private=True), None)
    signing_input = f"{part(header)}.{part(claims)}"
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


def texts(server: LoopbackAS, **claims: Any) -> tuple[str, str]:
    assert server.signing is not None
    header = json.dumps({"alg": "RS256", "kid": server.signing.kid, "typ": "at+jwt"})
    body = {"iss": server.issuer, "sub": "alice", "aud": RESOURCE, "exp": int(time.time()) + 600, **claims}
    return header, json.dumps(body)


def verdict(server: LoopbackAS, token: str) -> Any:
    verifier = JwtVerifier(server.trusted())
    return anyio.run(verifier.verdict, token)


def test_the_guard_a_plain_token_of_these_texts_verifies(auth_server: LoopbackAS) -> None:
    header, claims = texts(auth_server, nbf=int(time.time()) - 5, iat=int(time.time()) - 5)
    assert isinstance(verdict(auth_server, signed(auth_server, header, claims)), dict)
    floats = texts(auth_server, exp=time.time() + 600.5, nbf=time.time() - 0.5)
    assert isinstance(verdict(auth_server, signed(auth_server, *floats)), dict)  # NumericDates may be floats


def refused_texts(server: LoopbackAS) -> dict[str, tuple[str, str]]:
    header, claims = texts(server)
    now = int(time.time())
    return {
        "a second sub in the claims": (header, claims[:-1] + ', "sub": "admin"}'),
        "a second typ in the header": (header[:-1] + ', "typ": "JWT"}', claims),
        "a second alg in the header": ('{"alg": "HS256", ' + header[1:], claims),
        "a lone surrogate in sub": (header, claims.replace('"alice"', '"\\ud800"')),
        "a byte-order mark before the header": ("\ufeff" + header, claims),
        "a byte-order mark before the claims": (header, "\ufeff" + claims),
        "nbf NaN": (header, claims[:-1] + ', "nbf": NaN}'),
        "exp as a string": texts(server, exp=str(now + 600)),
        "exp as a padded string": texts(server, exp=f" {now + 600} "),
        "nbf as a string": texts(server, nbf=str(now - 5)),
        "iat as a string": texts(server, iat=str(now - 5)),
        "iat true": texts(server, iat=True),
    }


def test_tokens_that_are_not_i_json_or_whose_times_are_not_numbers_are_refused(
    auth_server: LoopbackAS,
) -> None:
    accepted = [
        why
        for why, (header, claims) in refused_texts(auth_server).items()
        if verdict(auth_server, signed(auth_server, header, claims)) is not None
    ]
    assert accepted == []


@pytest.mark.parametrize("subject", ["a\x00b", "alice\n", "\x1b[2J", "a\x85b", "\x7f"])
def test_a_subject_with_a_control_character_is_refused(auth_server: LoopbackAS, subject: str) -> None:
    """The caller id is made of ``sub`` (`identity.issuer_caller_id`) and keys every store: a NUL no
    PostgreSQL text holds, a line break or an escape sequence in every log and store that names the
    caller. Refused; the guard: the same token with ``sub`` "alice" verifies."""
    header, claims = texts(auth_server, sub=subject)
    assert verdict(auth_server, signed(auth_server, header, claims)) is None
    header, claims = texts(auth_server, sub="alice b@example.com")
    assert isinstance(verdict(auth_server, signed(auth_server, header, claims)), dict)


@pytest.mark.parametrize("depth", [400, 5_000])
def test_a_deeply_nested_unsigned_token_is_refused_not_raised(auth_server: LoopbackAS, depth: int) -> None:
    """json reads nestings deeper than a recursive walk can follow: the check for lone surrogates must
    not raise RecursionError (the SDK would answer 500 with a traceback, before any signature check)."""
    header = json.dumps({"alg": "RS256", "typ": "at+jwt"})
    claims = '{"a":' * depth + "1" + "}" * depth
    token = f"{part(header)}.{part(claims)}.AAAA"
    assert verdict(auth_server, token) is None


@pytest.mark.parametrize(
    "times",
    [
        {"exp": "1" + "0" * 400},  # a future time no double holds
        {"iat": "-1" + "0" * 400},
        {"nbf": "-1" + "0" * 400},
        {"exp": "1e400"},  # read by Python as infinity
    ],
)
def test_a_signed_time_beyond_a_double_is_refused_not_raised(
    auth_server: LoopbackAS, times: dict[str, str]
) -> None:
    """RFC 7493 §2.2: no number beyond a double's range; a signed ``exp`` of 400 digits made the
    NumericDate check raise OverflowError."""
    header, claims = texts(auth_server)
    body = claims[:-1] + "".join(f', "{name}": {value}' for name, value in times.items()) + "}"
    body = body.replace('"exp": ' + str(json.loads(claims)["exp"]) + ", ", "") if "exp" in times else body
    assert verdict(auth_server, signed(auth_server, header, body)) is None
