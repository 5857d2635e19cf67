"""Callers' JWT access tokens, verified without code: the configuration of an OAuth authorization
server and a `TokenVerifier` for `toolgen serve --http` (`toolgen.runtime.serving.mcp_http`).

Input: an authorization-server file (`load_authorization_server`, YAML or JSON)::

    issuer: https://auth.example.com/       # the `iss` every token must carry, exactly
    jwks_uri: https://auth.example.com/.well-known/jwks.json
    resource: https://tools.example.com/mcp # this server's resource URL: the `aud` required
    algorithms: [RS256, ES256]              # asymmetric JWS algorithms only (default RS256)
    leeway_s: 30                            # clock skew allowed on exp/nbf/iat (0-300)
    scope_claim: scope                      # scope (RFC 9068: a space-separated string), scp, ...
    scope_map: {tickets.write: [ticket:read, ticket:write]}  # optional: AS scopes -> policy scopes
    token_exchange:                         # optional: RFC 8693, for `per_caller: {via: exchange}`
      token_endpoint: https://auth.example.com/oauth/token
      client_id: toolgen-tickets
      client_secret_env: TOOLGEN_EXCHANGE_SECRET   # the variable holding the client's secret

Output: `JwtVerifier.verify_token(token)` → the SDK's `AccessToken` (``subject`` = ``sub``,
``client_id`` = ``client_id``/``azp``, ``scopes`` mapped, ``expires_at`` = ``exp``, ``resource`` =
`resource`, ``token`` = the token as presented, for token exchange) or None, which the SDK's bearer
middleware answers ``401`` (RFC 6750 ``invalid_token``). A token is accepted only when all of these
hold (RFC 7519, RFC 9068 §4, RFC 8725):

- it is a JWS in compact form whose header ``alg`` is one of `algorithms` (never ``none``, never an
  HMAC algorithm: the keys are public), and the JWK it names (``kid``; without one, the set's only
  key) allows that algorithm and has the matching key type;
- its signature verifies with that key; ``iss`` equals `issuer`; ``aud`` holds `resource` (a token
  for another audience is refused, RFC 8707 / MCP authorization); ``exp`` is in the future and
  ``nbf``/``iat`` not in it, each within `leeway_s`; ``sub`` is present.

Keys come from `jwks_uri` (`JwksCache`): fetched when first needed and again after `max_age_s`; a
``kid`` the cached set lacks (the authorization server rotated its keys) refetches at once, but at
most once per `min_refetch_s`, so a stream of tokens with invented ``kid``\\ s costs one fetch per
interval; a ``kid`` still unknown after the refetch is refused. A fetch that fails (not 200, not a
JWKS, over `MAX_JWKS_BYTES`, or longer than `FETCH_TIMEOUT_S` in all) keeps the keys already known;
a JWKS answer replaces them, even when it holds no key this verifier can use (a revoked key ends).

The protected-resource metadata (RFC 9728) is served by the MCP SDK from `auth_settings()`.
Errors: `AuthorizationServerError` (a ValueError) names the file, line and column of a bad value.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from ..call.caller_credentials import TokenExchangeClient
from ..call.local_yaml import compose_located
from ..clock import SYSTEM, Clock
from ..transport.content_coding import BodyTooLarge, BoundedDecoder

__all__ = [
    "ASYMMETRIC_ALGORITHMS",
    "AuthorizationServer",
    "AuthorizationServerError",
    "JwksCache",
    "JwtVerifier",
    "load_authorization_server",
]

#: The JWS algorithms a token may be signed with: asymmetric only (RFC 7518 §3.3-3.5, RFC 8037).
ASYMMETRIC_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
#: The most bytes of a JWKS document read.
MAX_JWKS_BYTES = 256 * 1024
#: Seconds one JWKS fetch may take in all (each read has as long: an answer trickling in ends here).
FETCH_TIMEOUT_S = 5.0
#: Longest token looked at (longer ones are refused unparsed).
MAX_TOKEN_LENGTH = 16 * 1024


class AuthorizationServerError(ValueError):
    """An authorization-server file that cannot be used (located: ``FILE:LINE:COL: ...``)."""


@dataclass(frozen=True)
class AuthorizationServer:
    """One authorization server whose JWT access tokens callers present (see the module docstring).
    `scope_map` None: the token's scopes are the policy's scopes as they are; else each scope maps
    to the policy scopes listed and a scope the map does not name grants nothing."""

    issuer: str
    jwks_uri: str
    resource: str
    algorithms: tuple[str, ...] = ("RS256",)
    leeway_s: int = 30
    scope_claim: str = "scope"
    scope_map: Mapping[str, tuple[str, ...]] | None = None
    max_age_s: float = 300.0
    min_refetch_s: float = 30.0
    exchange: TokenExchangeClient | None = None

    def __post_init__(self) -> None:
        bad = [a for a in self.algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if bad or not self.algorithms:
            raise ValueError(
                f"algorithms must be among {', '.join(ASYMMETRIC_ALGORITHMS)}, not {bad or '[]'}"
            )
        if not 0 <= self.leeway_s <= 300:
            raise ValueError(f"leeway_s must be between 0 and 300 seconds, not {self.leeway_s}")

    def scopes_of(self, claims: Mapping[str, Any]) -> list[str]:
        """The policy scopes a token's `claims` grant: the `scope_claim` (a space-separated string,
        RFC 8693 §4.2, or a list of strings), mapped through `scope_map`. Anything else grants none."""
        value = claims.get(self.scope_claim)
        if isinstance(value, str):
            held = [s for s in value.split(" ") if s]
        elif isinstance(value, list) and all(isinstance(s, str) for s in value):
            held = [s for s in value if s]
        else:
            held = []
        if self.scope_map is None:
            return list(dict.fromkeys(held))
        return list(dict.fromkeys(m for s in held for m in self.scope_map.get(s, ())))

    def auth_settings(self) -> Any:
        """The MCP SDK's `AuthSettings` for this resource server: the 401 challenge names the
        Protected Resource Metadata (RFC 9728) at ``/.well-known/oauth-protected-resource<path>``,
        which lists `issuer` as the authorization server; only tokens whose resource (checked
        audience) is `resource` pass the bearer middleware."""
        from mcp.server.auth.settings import AuthSettings

        return AuthSettings(
            issuer_url=self.issuer, resource_server_url=self.resource, validate_token_resource=True
        )


class JwksCache:
    """The signing keys of a JWKS URL (RFC 7517), cached (see the module docstring for when it
    fetches). A fetch reads at most `MAX_JWKS_BYTES` within `timeout_s` seconds in all, else it
    fails. `fetches` counts the fetches made (successful or not)."""

    def __init__(
        self,
        uri: str,
        *,
        max_age_s: float = 300.0,
        min_refetch_s: float = 30.0,
        timeout_s: float = FETCH_TIMEOUT_S,
        client: httpx.AsyncClient | None = None,
        clock: Clock = SYSTEM,
    ) -> None:
        self.uri = uri
        self.timeout_s = timeout_s
        self.max_age_s = max_age_s
        self.min_refetch_s = min_refetch_s
        self.clock = clock
        self.fetches = 0
        self._client = client
        self._keys: dict[str | None, Any] = {}
        self._fetched_at: float | None = None  # of the last fetch that gave keys
        self._tried_at: float | None = None  # of the last fetch, whatever it gave
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> Any:
        """The `jwt.PyJWK` of `kid` (None: the set's only key), or None when there is none."""
        now = self.clock.monotonic()
        stale = self._fetched_at is None or now - self._fetched_at >= self.max_age_s
        if stale or (self._find(kid) is None and self._may_refetch(now)):
            async with self._lock:
                now = self.clock.monotonic()
                stale = self._fetched_at is None or now - self._fetched_at >= self.max_age_s
                if (stale or self._find(kid) is None) and self._may_refetch(now):
                    await self._fetch(now)
        return self._find(kid)

    def _may_refetch(self, now: float) -> bool:
        return self._tried_at is None or now - self._tried_at >= self.min_refetch_s

    def _find(self, kid: str | None) -> Any:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def _fetch(self, now: float) -> None:
        import jwt

        self._tried_at = now
        self.fetches += 1
        try:
            body = await asyncio.wait_for(self._get(), self.timeout_s)
            if body is None:
                return
            document = json.loads(body)
        except (httpx.HTTPError, ValueError, RecursionError, TimeoutError):  # RecursionError: nested too deep
            return  # keep the keys known
        entries = document.get("keys") if isinstance(document, dict) else None
        if not isinstance(entries, list):
            return
        keys: dict[str | None, Any] = {}
        for entry in entries:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                keys[entry.get("kid") if isinstance(entry.get("kid"), str) else None] = jwt.PyJWK(entry)
            except (jwt.PyJWTError, ValueError, TypeError, KeyError):
                continue  # a key this library cannot use (an unknown kty or curve)
        self._keys = keys  # the set as published, even with no key left: a revoked key verifies nothing
        self._fetched_at = now

    async def _get(self) -> bytes | None:
        """The body of a 200 answer from `uri`, read and decoded (``Content-Encoding``) no further
        than `MAX_JWKS_BYTES`; else None. Raises `httpx.HTTPError` (a body that does not decode)."""
        client = self._client or httpx.AsyncClient(follow_redirects=False)
        try:
            async with client.stream(
                "GET", self.uri, timeout=5.0, headers={"Accept": "application/json"}
            ) as response:
                if response.status_code != 200:
                    return None
                decoder = BoundedDecoder(response.headers.get("content-encoding"), MAX_JWKS_BYTES)
                body = bytearray()
                async for chunk in response.aiter_raw():  # decoded within the bound: no gzip bomb
                    body += decoder.feed(chunk)
                return bytes(body + decoder.finish())
        except BodyTooLarge:
            return None
        finally:
            if self._client is None:
                await client.aclose()


class JwtVerifier:
    """A `TokenVerifier` (the MCP SDK's protocol) for the JWT access tokens of `server` (see the
    module docstring). `verify_token` never raises: any failure is None."""

    def __init__(
        self, server: AuthorizationServer, *, jwks: JwksCache | None = None, clock: Clock = SYSTEM
    ) -> None:
        self.server = server
        self.clock = clock
        self.jwks = jwks or JwksCache(
            server.jwks_uri, max_age_s=server.max_age_s, min_refetch_s=server.min_refetch_s, clock=clock
        )

    async def claims(self, token: str) -> dict[str, Any] | None:
        """The verified claims of `token`, or None."""
        import jwt

        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
            return None
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        algorithm, kid = header.get("alg"), header.get("kid")
        if algorithm not in self.server.algorithms or not (kid is None or isinstance(kid, str)):
            return None
        key = await self.jwks.key(kid)
        declared = getattr(key, "_jwk_data", {}).get("alg") if key is not None else None
        if key is None or declared not in (
            None,
            algorithm,
        ):  # a JWK naming its algorithm allows that one only
            return None
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[algorithm],
                audience=self.server.resource,
                issuer=self.server.issuer,
                leeway=self.server.leeway_s,
                options={"require": ["exp", "iss", "aud", "sub"], "verify_signature": True},
            )
        except (jwt.PyJWTError, ValueError, TypeError):
            return None
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            return None
        return claims

    async def verify_token(self, token: str) -> Any:
        """The SDK's `AccessToken` of a token this server accepts, else None."""
        from mcp.server.auth.provider import AccessToken

        claims = await self.claims(token)
        if claims is None:
            return None
        client = claims.get("client_id") or claims.get("azp") or claims["sub"]
        return AccessToken(
            token=token,
            client_id=str(client),
            scopes=self.server.scopes_of(claims),
            expires_at=int(claims["exp"]),
            resource=self.server.resource,
            subject=str(claims["sub"]),
            claims={"iss": claims["iss"]},
        )


_KEYS = (
    "issuer",
    "jwks_uri",
    "resource",
    "algorithms",
    "leeway_s",
    "scope_claim",
    "scope_map",
    "max_age_s",
    "min_refetch_s",
    "token_exchange",
)
_EXCHANGE_KEYS = ("token_endpoint", "client_id", "client_secret_env")


def load_authorization_server(
    path: str | os.PathLike[str], environ: Mapping[str, str] | None = None
) -> AuthorizationServer:
    """Read an authorization-server file (YAML or JSON; shape in the module docstring). `environ`
    (default: the process environment) holds the token-exchange client's secret. Raises
    `AuthorizationServerError` naming the file, line and column of the first problem: an unknown or
    missing key, a URL that is not ``https://`` (``http://`` only on a loopback host), an algorithm
    outside `ASYMMETRIC_ALGORITHMS`, a leeway outside 0-300 s, a client secret variable that is not
    set, a file every user may write."""

    file = Path(path)
    env = os.environ if environ is None else environ
    try:
        text = file.read_text(encoding="utf-8")
        mode = file.stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        raise AuthorizationServerError(
            f"{file}: cannot read the authorization-server file: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    if mode & stat.S_IWOTH:
        raise AuthorizationServerError(
            f"{file}: writable by every user of this machine (mode "
            f"{stat.S_IMODE(mode):04o}): anyone could name their own issuer; "
            f"run `chmod 644 {file}`"
        )
    root = compose_located(file, text, AuthorizationServerError)
    reader = _Reader(file)
    top = reader.mapping(root, "the authorization-server file", _KEYS)
    for required in ("issuer", "jwks_uri", "resource"):
        if required not in top:
            raise reader.fail(root, f'missing `{required}:` (see docs/runtime.md, "Deploying for a team")')
    issuer, jwks_uri, resource = (reader.url(top[k]) for k in ("issuer", "jwks_uri", "resource"))
    algorithms = tuple(reader.strings(top["algorithms"])) if "algorithms" in top else ("RS256",)
    for algorithm, node in zip(
        algorithms, top["algorithms"].value if "algorithms" in top else (), strict=False
    ):
        if algorithm not in ASYMMETRIC_ALGORITHMS:
            raise reader.fail(
                node,
                f"algorithm {algorithm[:20]!r} is not allowed: use an asymmetric JWS algorithm "
                f"({', '.join(ASYMMETRIC_ALGORITHMS)}); `none` and HMAC are never accepted",
            )
    if "algorithms" in top and not algorithms:
        raise reader.fail(top["algorithms"], "`algorithms` must list at least one algorithm, e.g. [RS256]")
    scope_map = None
    if "scope_map" in top:
        node = reader.mapping(top["scope_map"], "`scope_map`", None)
        scope_map = {name: tuple(reader.strings(value)) for name, value in node.items()}
    exchange = None
    if "token_exchange" in top:
        fields = reader.mapping(top["token_exchange"], "`token_exchange`", _EXCHANGE_KEYS)
        for required in _EXCHANGE_KEYS:
            if required not in fields:
                raise reader.fail(top["token_exchange"], f"`token_exchange` needs `{required}:`")
        variable = reader.text(fields["client_secret_env"])
        secret = env.get(variable)
        if not secret:
            raise reader.fail(
                fields["client_secret_env"],
                f"the environment variable {variable} (the token-exchange client's secret) is not set",
            )
        exchange = TokenExchangeClient(
            reader.url(fields["token_endpoint"]), reader.text(fields["client_id"]), secret
        )
    return AuthorizationServer(
        issuer=issuer,
        jwks_uri=jwks_uri,
        resource=resource,
        algorithms=algorithms,
        leeway_s=reader.number(top.get("leeway_s"), 30, 0, 300),
        scope_claim=reader.text(top["scope_claim"]) if "scope_claim" in top else "scope",
        scope_map=scope_map,
        max_age_s=reader.number(top.get("max_age_s"), 300, 1, 86400),
        min_refetch_s=reader.number(top.get("min_refetch_s"), 30, 0, 3600),
        exchange=exchange,
    )


class _Reader:
    """Located reading of the composed YAML nodes of one file."""

    def __init__(self, file: Path) -> None:
        self.file = file

    def fail(self, node: Any, message: str) -> AuthorizationServerError:
        mark = getattr(node, "start_mark", None)
        where = f"{self.file}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(self.file)
        return AuthorizationServerError(f"{where}: {message}")

    def mapping(self, node: Any, what: str, allowed: tuple[str, ...] | None) -> dict[str, Any]:
        import yaml

        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{what} must be a mapping")
        out: dict[str, Any] = {}
        for key, value in node.value:
            name = str(key.value) if isinstance(key, yaml.ScalarNode) else ""
            if allowed is not None and name not in allowed:
                raise self.fail(key, f"unknown key {name[:40]!r} in {what}; allowed: {', '.join(allowed)}")
            if name in out:
                raise self.fail(key, f"duplicate key {name!r} in {what}")
            out[name] = value
        return out

    def text(self, node: Any) -> str:
        import yaml

        if (
            not isinstance(node, yaml.ScalarNode)
            or node.tag != "tag:yaml.org,2002:str"
            or not node.value.strip()
        ):
            raise self.fail(node, "must be a non-empty string")
        return str(node.value).strip()

    def strings(self, node: Any) -> list[str]:
        import yaml

        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, "must be a list of strings")
        return [self.text(item) for item in node.value]

    def url(self, node: Any) -> str:
        from .mcp_http import is_loopback

        value = self.text(node)
        parsed = httpx.URL(value) if "://" in value else None
        if (
            parsed is None
            or not parsed.host
            or parsed.scheme not in ("https", "http")
            or (parsed.scheme == "http" and not is_loopback(parsed.host))
        ):
            raise self.fail(
                node, f"{value[:80]!r} is not an https:// URL (http:// is accepted on a loopback host only)"
            )
        return value

    def number(self, node: Any, default: float, least: float, most: float) -> int:
        if node is None:
            return int(default)
        try:
            value = int(str(node.value))
        except ValueError:
            raise self.fail(
                node, f"must be a whole number of seconds between {least:g} and {most:g}"
            ) from None
        if not least <= value <= most:
            raise self.fail(node, f"must be between {least:g} and {most:g} seconds, not {value}")
        return value
