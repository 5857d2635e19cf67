"""An OAuth authorization server on loopback, built from authlib's server classes, for the tests of
callers' JWT access tokens and per-caller credentials.

- ``GET /jwks``: the public keys (JWKS, RFC 7517) of its signing keys; `rotate` adds a key with a
  new ``kid`` and signs with it from then on (published, if asked, with another ``use`` or
  ``key_ops``), `retire` drops one. `jwks_fetches` counts the fetches.
- ``POST /token``: authlib's `AuthorizationServer` token endpoint with an RFC 8693 token-exchange
  grant (`TokenExchangeGrant`): the client authenticates with ``client_secret_basic`` (authlib), the
  ``subject_token`` must be an access token this server signed for `resource` (the MCP server),
  unexpired, and the ``audience`` one this client may ask for; the issued token is a JWT for that
  audience whose ``sub`` is the subject token's and whose ``act`` names the client (RFC 8693 §4.1).
  Every issued token is kept in `issued` (to plant and grep for); `answer_patch` changes the answer's
  members (a value None drops one), for answers a real server might give. Nothing else is accepted.
- `access_token(sub, scopes, ...)`: an access token this server signs for a caller (what its
  authorization endpoint would issue after the caller's login), any claim overridable; `id_token`
  the ID token of such a login (``typ: JWT``, ``nonce``, ``at_hash``).
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qsl

from authlib.oauth2 import AuthorizationServer as AuthlibServer
from authlib.oauth2 import OAuth2Request
from authlib.oauth2.rfc6749 import ClientMixin
from authlib.oauth2.rfc6749.errors import InvalidGrantError, InvalidRequestError, UnauthorizedClientError
from authlib.oauth2.rfc6749.grants import BaseGrant, TokenEndpointMixin
from authlib.oauth2.rfc6749.requests import BasicOAuth2Payload
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet, RSAKey

from toolgen.runtime.serving.access_tokens import AuthorizationServer as TrustedIssuer
from toolgen.testing.loopback import LoopbackServer

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


class Client(ClientMixin):  # type: ignore[misc]
    """A confidential client of the server: id, secret, the grant types and audiences it may use."""

    def __init__(
        self, client_id: str, secret: str, grants: tuple[str, ...], audiences: tuple[str, ...] = ()
    ) -> None:
        self.client_id, self.secret, self.grants, self.audiences = client_id, secret, grants, audiences

    def get_client_id(self) -> str:
        return self.client_id

    def check_client_secret(self, client_secret: str) -> bool:
        return secrets.compare_digest(self.secret, client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "client_secret_basic"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.grants

    def get_allowed_scope(self, scope: str) -> str:
        return scope or ""


class _Request(OAuth2Request):  # type: ignore[misc]
    def __init__(self, method: str, uri: str, form: dict[str, str], headers: Mapping[str, str]) -> None:
        super().__init__(method, uri, headers=dict(headers))
        self.payload = BasicOAuth2Payload(form)
        self._form = form

    @property
    def args(self) -> dict[str, str]:
        return {}

    @property
    def form(self) -> dict[str, str]:
        return self._form


class TokenExchangeGrant(BaseGrant, TokenEndpointMixin):  # type: ignore[misc]
    """RFC 8693 token exchange on authlib's grant classes (see the module docstring)."""

    GRANT_TYPE = TOKEN_EXCHANGE
    TOKEN_ENDPOINT_AUTH_METHODS: ClassVar[list[str]] = ["client_secret_basic"]

    def validate_token_request(self) -> None:
        client = self.authenticate_token_endpoint_client()
        if not client.check_grant_type(self.GRANT_TYPE):
            raise UnauthorizedClientError("the client may not exchange tokens")
        form = self.request.payload.data
        if form.get("subject_token_type") != ACCESS_TOKEN_TYPE or not form.get("subject_token"):
            raise InvalidRequestError("subject_token of type access_token required")
        audience = form.get("audience")
        if audience not in client.audiences:
            raise InvalidRequestError("audience not allowed for this client")  # RFC 8693: invalid_target
        owner: AuthorizationServer = self.server.owner
        claims = owner.verify(form["subject_token"], audience=owner.resource)
        if claims is None:
            raise InvalidGrantError("the subject token is not valid")
        self.request.client = client
        self.request.user = claims

    def create_token_response(self) -> tuple[int, dict[str, Any], list[tuple[str, str]]]:
        owner: AuthorizationServer = self.server.owner
        form, claims = self.request.payload.data, self.request.user
        scope = form.get("scope") or claims.get("scope", "")
        token = owner.sign(
            {
                "sub": claims["sub"],
                "aud": form["audience"],
                "scope": scope,
                "act": {"sub": self.request.client.client_id},
            },
            expires_in=owner.exchanged_ttl_s,
        )
        answer = {
            "access_token": token,
            "issued_token_type": ACCESS_TOKEN_TYPE,
            "token_type": "Bearer",
            "expires_in": owner.exchanged_ttl_s,
            "scope": scope,
        }
        for name, value in owner.answer_patch.items():  # a test's changes to the answer (None: drop)
            if value is None:
                answer.pop(name, None)
            else:
                answer[name] = value
        owner.issued.append(token)
        return 200, answer, [("Content-Type", "application/json"), ("Cache-Control", "no-store")]


class _Authlib(AuthlibServer):  # type: ignore[misc]
    def __init__(self, owner: AuthorizationServer) -> None:
        super().__init__()
        self.owner = owner

    def query_client(self, client_id: str) -> Client | None:
        return self.owner.clients.get(client_id)

    def save_token(self, token: Any, request: Any) -> None:
        return None

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        return None

    def create_oauth2_request(self, request: Any) -> Any:
        return request

    def handle_response(
        self, status: int, body: Any, headers: Any
    ) -> tuple[int, bytes, list[tuple[str, str]]]:
        return status, json.dumps(body).encode("utf-8"), list(headers)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _answer(self, status: int, body: bytes, headers: list[tuple[str, str]]) -> None:
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        owner = self.server.owner
        if self.path != "/jwks":
            self._answer(404, b"{}", [("Content-Type", "application/json")])
            return
        with owner.lock:
            owner.jwks_fetches += 1
            body = json.dumps({"keys": [owner.jwk(k) for k in owner.keys]}).encode("utf-8")
        self._answer(200, body, [("Content-Type", "application/json")])

    def do_POST(self) -> None:
        owner = self.server.owner
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path != "/token":
            self._answer(404, b"{}", [("Content-Type", "application/json")])
            return
        with owner.lock:
            owner.token_requests.append(raw)
        form = dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
        request = _Request("POST", owner.url + "/token", form, dict(self.headers.items()))
        self._answer(*owner.authlib.create_token_response(request))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: AuthorizationServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


class AuthorizationServer(LoopbackServer):
    """The loopback authorization server (see the module docstring). `resource`: the MCP server's
    resource URL (the audience of callers' tokens); `clients`: client id -> `Client`."""

    def __init__(
        self, resource: str, clients: Mapping[str, Client] | None = None, *, exchanged_ttl_s: int = 600
    ) -> None:
        self._http = _HTTPServer(self)
        super().__init__(self._http)
        self.resource = resource
        self.clients: dict[str, Client] = dict(clients or {})
        self.exchanged_ttl_s = exchanged_ttl_s
        self.lock = threading.Lock()
        self.keys: list[RSAKey] = []
        self.signing: RSAKey | None = None
        self.jwks_fetches = 0
        self.issued: list[str] = []
        self.token_requests: list[bytes] = []
        self.answer_patch: dict[str, Any] = {}
        self.published: dict[str, dict[str, Any]] = {}
        self.authlib = _Authlib(self)
        self.authlib.register_grant(TokenExchangeGrant)
        self.rotate()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_port}"

    @property
    def issuer(self) -> str:
        return self.url + "/"

    def trusted(self, **options: Any) -> TrustedIssuer:
        """The runtime's settings that trust this server (`toolgen.runtime.serving.access_tokens.
        AuthorizationServer`): its issuer, its JWKS URL and `resource`; `options` are the settings'
        other fields, or another ``resource``."""
        return TrustedIssuer(
            **{"issuer": self.issuer, "jwks_uri": self.url + "/jwks", "resource": self.resource, **options}
        )

    def rotate(self, **published: Any) -> str:
        """Add a new signing key (a new ``kid``) and sign with it; its kid. `published`: members that
        replace (a value None drops one) those of the key's JWK in the JWKS answer only (``use``,
        ``key_ops``), so that the server signs with a key it publishes as one that must not verify."""
        kid = "k-" + secrets.token_hex(4)
        key = RSAKey.generate_key(2048, parameters={"kid": kid, "alg": "RS256", "use": "sig"}, private=True)
        with self.lock:
            self.keys.append(key)
            self.signing = key
            self.published[kid] = dict(published)
        return kid

    def jwk(self, key: RSAKey) -> dict[str, Any]:
        """The public JWK of `key` as the JWKS answer publishes it (with its `rotate` changes)."""
        members = {**key.as_dict(private=False), **self.published.get(str(key.kid), {})}
        return {name: value for name, value in members.items() if value is not None}

    def retire(self, kid: str) -> None:
        with self.lock:
            self.keys = [k for k in self.keys if k.kid != kid]

    def sign(
        self,
        claims: Mapping[str, Any],
        *,
        expires_in: int = 600,
        key: RSAKey | None = None,
        header: Mapping[str, Any] | None = None,
    ) -> str:
        """A JWT of `claims` (``iss``, ``iat``, ``exp``, ``jti`` added unless given) signed with the
        current key (or `key`); its header ``typ: at+jwt`` unless `header` says otherwise (a member
        None drops it)."""
        signer = key or self.signing
        assert signer is not None
        now = int(time.time())
        body = {
            "iss": self.issuer,
            "iat": now,
            "exp": now + expires_in,
            "jti": secrets.token_hex(8),
            **claims,
        }
        fields = {"alg": "RS256", "kid": signer.kid, "typ": "at+jwt", **(header or {})}
        if not isinstance(fields["typ"], str):  # joserfc writes typ JWT for none and refuses others
            import jwt as pyjwt

            others = {k: v for k, v in fields.items() if k != "alg"}
            return pyjwt.encode(body, signer.as_pem(private=True), "RS256", others)
        return jwt.encode(fields, body, signer)

    def access_token(self, sub: str, scopes: list[str], **claims: Any) -> str:
        """A caller's access token for `resource` (overridable claims: ``aud``, ``exp``...)."""
        expires_in = int(claims.pop("expires_in", 600))
        return self.sign(
            {
                "sub": sub,
                "aud": self.resource,
                "scope": " ".join(scopes),
                "client_id": sub + "-agent",
                **claims,
            },
            expires_in=expires_in,
        )

    def id_token(self, sub: str, audience: str, **claims: Any) -> str:
        """An OpenID Connect ID token for `sub`, as the server's authorization endpoint returns it to
        the client `audience` after a login: header ``typ: JWT``, with a ``nonce`` and an
        ``at_hash`` (OpenID Connect Core 1.0 §2, §3.1.3.6)."""
        return self.sign(
            {"sub": sub, "aud": audience, "nonce": secrets.token_hex(8), "at_hash": "x" * 22, **claims},
            header={"typ": "JWT"},
        )

    def verify(self, token: str, *, audience: str) -> dict[str, Any] | None:
        """The claims of a token this server signed for `audience`, unexpired; else None."""
        with self.lock:
            keys = KeySet(list(self.keys))
        try:
            decoded = jwt.decode(token, keys, algorithms=["RS256"])
            jwt.JWTClaimsRegistry(
                iss={"essential": True, "value": self.issuer},
                aud={"essential": True, "value": audience},
                exp={"essential": True},
                sub={"essential": True},
            ).validate(decoded.claims)
        except (JoseError, ValueError):
            return None
        return dict(decoded.claims)
