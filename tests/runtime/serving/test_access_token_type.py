"""RFC 9068 §4: a resource server accepts a JWT access token only with the header ``typ: at+jwt``,
so an ID token (``typ: JWT``, ``nonce``, ``at_hash``) cannot be replayed as an access token. Real
tokens signed by the loopback authorization server; the ID token is one issued to this MCP server
as a client (its ``aud`` is the resource), so only its type tells it apart. Over `toolgen serve
--http` the refusal is a ``401`` naming the registered code."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.support.http_serving import http_server
from tests.support.runtime_env import tickets_dir

from toolgen.codes import CODES
from toolgen.runtime import MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.serving.access_tokens import (
    AuthorizationServer,
    AuthorizationServerError,
    JwtVerifier,
    TokenRefusal,
    load_authorization_server,
)
from toolgen.testing.tickets_server import TicketsServer

pytest.importorskip("mcp")
pytest.importorskip("authlib")
httpx2 = pytest.importorskip("httpx2")

from tests.support.authorization_server import AuthorizationServer as LoopbackAS

RESOURCE = "https://tools.example.test/mcp"
CLAIMS = {"sub": "alice", "aud": RESOURCE, "scope": "ticket:read"}


@pytest.fixture(scope="module")
def auth_server() -> Iterator[LoopbackAS]:
    with LoopbackAS(RESOURCE) as server:
        yield server


def config(server: LoopbackAS, **options: Any) -> AuthorizationServer:
    return server.trusted(**options)


def verdict(verifier: JwtVerifier, token: str) -> Any:
    return anyio.run(verifier.verdict, token)


def test_the_codes_are_registered() -> None:
    assert {"token-not-access-token", "token-key-unknown"} <= set(CODES)


def test_by_default_only_an_at_jwt_typ_is_accepted(auth_server: LoopbackAS) -> None:
    settings_ = config(auth_server)
    assert settings_.typ == "at+jwt"
    verifier = JwtVerifier(settings_)
    for good in ("at+jwt", "application/at+jwt", "AT+JWT", "Application/At+Jwt"):  # a media type, any case
        assert isinstance(verdict(verifier, auth_server.sign(CLAIMS, header={"typ": good})), dict), good
    bad: tuple[tuple[object, str], ...] = (
        (None, "missing"),
        ("JWT", "'JWT'"),
        ("jwt", "'jwt'"),
        ("at+jwt+x", "'at+jwt+x'"),
        ("application/jwt", "'application/jwt'"),
        (7, "another value"),
        ('at+jwt"\r\nX: y', "another value"),  # never echoed into the challenge
    )
    for typ, shown in bad:
        refused = verdict(verifier, auth_server.sign(CLAIMS, header={"typ": typ}))
        assert isinstance(refused, TokenRefusal), typ
        assert refused.code == "token-not-access-token" and f"typ is {shown}," in refused.description


def test_an_id_token_is_refused_as_not_an_access_token(auth_server: LoopbackAS) -> None:
    """The ID token of a login at this server as a client holds the resource as its audience, a
    ``sub`` and a valid signature: everything the other checks look at. Only ``typ`` refuses it,
    and with the check off (`typ: any`) its ``nonce``/``at_hash`` still do."""
    id_token = auth_server.id_token("alice", RESOURCE, scope="ticket:read ticket:write")
    for typ in ("at+jwt", "any"):
        refused = verdict(JwtVerifier(config(auth_server, typ=typ)), id_token)
        assert isinstance(refused, TokenRefusal) and refused.code == "token-not-access-token", typ
        assert anyio.run(JwtVerifier(config(auth_server, typ=typ)).verify_token, id_token) is None
    # the guard: the same claims without the ID token's own members, signed as an access token, pass
    as_access = auth_server.sign({"sub": "alice", "aud": RESOURCE, "scope": "ticket:read"})
    assert isinstance(verdict(JwtVerifier(config(auth_server)), as_access), dict)


def test_typ_any_accepts_access_tokens_of_servers_that_do_not_set_it(auth_server: LoopbackAS) -> None:
    plain = auth_server.sign(CLAIMS, header={"typ": "JWT"})
    untyped = auth_server.sign(CLAIMS, header={"typ": None})
    strict, lenient = JwtVerifier(config(auth_server)), JwtVerifier(config(auth_server, typ="any"))
    for token in (plain, untyped):
        assert isinstance(verdict(strict, token), TokenRefusal)
        assert isinstance(verdict(lenient, token), dict)
    with pytest.raises(ValueError, match="typ must be one of at\\+jwt, any"):
        config(auth_server, typ="JWT")


def test_the_typ_setting_is_read_from_the_file(tmp_path: Path) -> None:
    head = "issuer: https://a.test/\njwks_uri: https://a.test/j\nresource: https://t.test/mcp\n"
    path = tmp_path / "auth.yaml"
    path.write_text(head, encoding="utf-8")
    path.chmod(0o600)
    assert load_authorization_server(path).typ == "at+jwt"
    path.write_text(head + "typ: any\n", encoding="utf-8")
    assert load_authorization_server(path).typ == "any"
    path.write_text(head + "typ: JWT\n", encoding="utf-8")
    with pytest.raises(AuthorizationServerError, match="must be one of at\\+jwt, any") as caught:
        load_authorization_server(path)
    assert str(caught.value).startswith(f"{path}:4:6:")


@pytest.mark.anyio
async def test_the_401_names_the_refusal(auth_server: LoopbackAS, server: TicketsServer) -> None:
    """Over `toolgen serve --http`: the ID token's 401 carries ``token-not-access-token`` in its body
    and its challenge; a token refused for a reason not told keeps the SDK's answer; a good token of
    the same client is then served (nothing of the refusal outlives its request)."""
    policy = json.loads((tickets_dir() / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((tickets_dir() / "mcp.json").read_text(encoding="utf-8"))
    registry = Registry(
        policy,
        catalog,
        base_url=server.base_url,
        receipts=MemoryReceiptStore(),
        audit=MemoryAuditSink(),
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        cursor_key=b"k" * 32,
    )
    settings_ = config(auth_server)
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with (
        http_server(registry, verifier=JwtVerifier(settings_), auth=settings_.auth_settings()) as url,
        httpx2.AsyncClient(timeout=30) as http,
    ):

        async def post(token: str) -> Any:
            return await http.post(url, headers={**headers, "Authorization": f"Bearer {token}"}, json=request)

        refused = await post(auth_server.id_token("alice", RESOURCE, scope="ticket:read"))
        assert refused.status_code == 401
        body = refused.json()
        assert body["error"] == "invalid_token" and body["code"] == "token-not-access-token"
        assert "typ is 'JWT'" in body["error_description"]
        challenge = refused.headers["www-authenticate"]
        assert 'error="invalid_token"' in challenge and "(token-not-access-token)" in challenge
        assert "resource_metadata=" in challenge and int(refused.headers["content-length"]) == len(
            refused.content
        )
        expired = await post(auth_server.access_token("alice", ["ticket:read"], expires_in=-600))
        assert expired.status_code == 401 and expired.json() == {
            "error": "invalid_token",
            "error_description": "Authentication required",
        }
        served = await post(auth_server.access_token("alice", ["ticket:read"]))
        assert served.status_code == 200, served.text
