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
    typ: at+jwt                             # at+jwt (default): RFC 9068 access tokens only | any
    token_exchange:                         # optional: RFC 8693, for `per_caller: {via: exchange}`
      token_endpoint: https://auth.example.com/oauth/token
      client_id: toolgen-tickets
      client_secret_env: TOOLGEN_EXCHANGE_SECRET   # the variable holding the client's secret

Output: `JwtVerifier.verify_token(token)` → the SDK's `AccessToken` (``subject`` = ``sub``,
``client_id`` = ``client_id``/``azp``, ``scopes`` mapped, ``expires_at`` = ``exp``, ``resource`` =
`resource`, ``token`` = the token as presented, for token exchange) or None, which the SDK's bearer
middleware answers ``401`` (RFC 6750 ``invalid_token``). A token is accepted only when all of these
hold (RFC 7519, RFC 9068 §4, RFC 8725):

- its header and claims are I-JSON (RFC 7493: no duplicate member name, RFC 7515 §5.2; no lone
  surrogate, byte-order mark, ``NaN`` or ``Infinity``), and ``exp``/``nbf``/``iat`` are JSON
  numbers (RFC 7519 §2 NumericDate: never a string such as ``"1796656097"``, never ``true``);
  ``sub`` is a non-empty string without a control character (it makes the caller id);
- it is a JWS in compact form whose header ``alg`` is one of `algorithms` (never ``none``, never an
  HMAC algorithm: the keys are public), whose header ``typ`` is ``at+jwt`` (RFC 9068 §4: an ID
  token replayed as an access token is refused; `typ: any` skips this for authorization servers
  that do not set it, and refuses instead a token carrying an ID token's ``nonce``, ``at_hash`` or
  ``c_hash``), and the JWK it names (``kid``; without one, the set's only key) allows that
  algorithm and has the matching key type; a JWK whose ``use`` is not ``sig`` or whose ``key_ops``
  lacks ``verify`` (RFC 7517 §4.2, §4.3) is left out when the set is read (`verifies_signatures`),
  as if absent: its ``kid`` is unknown, never answered by another key;
- its signature verifies with that key; ``iss`` equals `issuer`; ``aud`` holds `resource` (a token
  for another audience is refused, RFC 8707 / MCP authorization); ``exp`` is in the future and
  ``nbf``/``iat`` not in it, each within `leeway_s`; ``sub`` is present.

A refusal the client can act on is a `TokenRefusal` with a registered code (``token-not-access-token``,
``token-key-unknown``), written into the ``401`` (`toolgen.runtime.serving.token_refusals`).

Keys come from `jwks_uri` (`JwksCache`), and a token whose ``kid`` the cache holds never waits on the
authorization server: a set older than `max_age_s` is refreshed in the background. A ``kid`` the
cached set lacks (the authorization server rotated its keys) starts one fetch (single flight: every
token with an unknown ``kid`` waits on that one, at most `FETCH_TIMEOUT_S`), but at most one per
`min_refetch_s` (a cooldown after any fetch, failed or not), so a stream of tokens with invented
``kid``\\ s costs one fetch per interval; a ``kid`` still unknown is refused. A fetch that fails (not
200, not a JWKS, over `MAX_JWKS_BYTES`, or longer than `FETCH_TIMEOUT_S` in all) keeps the keys
already known; a JWKS answer replaces them, even when it holds no key this verifier can use (a
revoked key ends).

The protected-resource metadata (RFC 9728) is served by the MCP SDK from `auth_settings()`.
Errors: `AuthorizationServerError` (a ValueError) names the file, line and column of a bad value.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from ...pointer import lone_surrogate_pointer
from ..call.arguments import DOUBLE_MAX, strict_json
from ..call.caller_credentials import TokenExchangeClient
from ..call.local_yaml import UnreadableFile, UnsafeMode, compose_located, read_operator_file
from ..clock import SYSTEM, Clock
from ..transport.content_coding import BodyTooLarge, BoundedDecoder
from .token_refusals import TokenRefusal, report

__all__ = [
    "ACCESS_TOKEN_TYPES",
    "ASYMMETRIC_ALGORITHMS",
    "AuthorizationServer",
    "AuthorizationServerError",
    "JwksCache",
    "JwtVerifier",
    "TokenRefusal",
    "load_authorization_server",
    "verifies_signatures",
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
#: Seconds one JWKS fetch may take in all (each read has as long: an answer trickling in ends here),
#: and the longest a token with an unknown ``kid`` waits on it.
FETCH_TIMEOUT_S = 2.0
#: Longest token looked at (longer ones are refused unparsed).
MAX_TOKEN_LENGTH = 16 * 1024
#: The `typ` settings: ``at+jwt`` (the default) accepts only a header ``typ`` of ``at+jwt`` or
#: ``application/at+jwt`` (RFC 9068 §4); ``any`` does not read ``typ`` (for authorization servers
#: that do not set it) but refuses a token carrying an ID token's ``nonce``, ``at_hash`` or ``c_hash``.
TYP_SETTINGS = ("at+jwt", "any")
#: The header ``typ`` values of a JWT access token (RFC 9068 §2.1, §4; media types, any case).
ACCESS_TOKEN_TYPES = ("at+jwt", "application/at+jwt")
#: Claims only an OpenID Connect ID token carries (OpenID Connect Core 1.0 §2, §3.1.3.6).
ID_TOKEN_CLAIMS = ("nonce", "at_hash", "c_hash")
_SHOWN = re.compile(r"[A-Za-z0-9+./-]{1,40}")
#: A control character (C0, DEL, C1): never in a subject, which every store and log names.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


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
    typ: str = "at+jwt"

    def __post_init__(self) -> None:
        if self.typ not in TYP_SETTINGS:
            raise ValueError(f"typ must be one of {', '.join(TYP_SETTINGS)}, not {self.typ!r}")
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
    """The signing keys of a JWKS URL (RFC 7517), cached; no verification waits on the
    authorization server for a key the cache holds.

    - A ``kid`` the cached set holds is answered at once. When the set is older than `max_age_s`, a
      refresh starts in the background; the key answers meanwhile.
    - A ``kid`` the set lacks (or no set yet) starts a fetch, unless one is in flight (single
      flight: every such token waits on that one fetch, at most `timeout_s`) or one started within
      `min_refetch_s` (a cooldown after any fetch, failed or not). Still unknown: None, refused
      (`unknown` says why), so a flood of invented ``kid``\\ s costs one fetch per `min_refetch_s`.
    - A fetch reads at most `MAX_JWKS_BYTES` within `timeout_s` seconds in all, else it fails and
      the keys known are kept; a JWKS answer replaces them, whatever it holds.

    `fetches` counts the fetches started (successful or not)."""

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
        self._tried_at: float | None = None  # of the last fetch started, whatever it gave
        self._inflight: asyncio.Task[None] | None = None

    async def key(self, kid: str | None) -> Any:
        """The `jwt.PyJWK` of `kid` (None: the set's only key), or None when there is none (see the
        class docstring for when it fetches and how long it may wait: never, for a known `kid`)."""
        now = self.clock.monotonic()
        found = self._find(kid)
        if found is not None:
            if self._fetched_at is None or now - self._fetched_at >= self.max_age_s:
                self._start(now)  # a refresh in the background: this key answers now
            return found
        fetch = self._start(now)
        if fetch is not None:
            await asyncio.wait({fetch}, timeout=self.timeout_s)  # never cancels the shared fetch
        return self._find(kid)

    async def settle(self) -> None:
        """Wait (at most `timeout_s`) for the fetch in flight, if any."""
        fetch = self._running()
        if fetch is not None:
            await asyncio.wait({fetch}, timeout=self.timeout_s)

    def unknown(self, kid: str | None) -> TokenRefusal:
        """``token-key-unknown``: why no key of the cache answers `kid` now."""
        now = self.clock.monotonic()
        if self._running() is not None:
            why = "a fetch of the authorization server's keys is still running"
        elif self._fetched_at is None:
            why = "the authorization server's keys could not be fetched"
        else:
            why = "the authorization server's key set holds no such key"
        wait = 0.0 if self._tried_at is None else max(0.0, self.min_refetch_s - (now - self._tried_at))
        return TokenRefusal(
            "token-key-unknown",
            f"the token's kid names no key this server holds ({why}); "
            f"the keys are fetched again in {wait:.0f} s at the earliest",
        )

    def _running(self) -> asyncio.Task[None] | None:
        fetch = self._inflight
        if fetch is None or fetch.done() or fetch.get_loop() is not asyncio.get_running_loop():
            return None
        return fetch

    def _start(self, now: float) -> asyncio.Task[None] | None:
        """The fetch in flight, or a new one when none ran within `min_refetch_s`; else None."""
        running = self._running()
        if running is not None:
            return running
        if self._tried_at is not None and now - self._tried_at < self.min_refetch_s:
            return None
        self._tried_at = now
        self.fetches += 1
        fetch = asyncio.get_running_loop().create_task(self._fetch(now))
        fetch.add_done_callback(_retrieve)
        self._inflight = fetch
        return fetch

    def _find(self, kid: str | None) -> Any:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def _fetch(self, now: float) -> None:
        import jwt

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
            if not isinstance(entry, dict) or not verifies_signatures(entry):
                continue  # refused: as if absent, so its kid is unknown (never another key's)
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
                "GET", self.uri, timeout=self.timeout_s, headers={"Accept": "application/json"}
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


def verifies_signatures(jwk: Mapping[str, Any]) -> bool:
    """Whether a JWK (a member of a JWKS's ``keys``) may verify a signature: its ``use``, when
    present, is the string ``"sig"`` (RFC 7517 §4.2: ``"enc"`` marks an encryption key), and its
    ``key_ops``, when present, is a list of strings holding ``"verify"`` (RFC 7517 §4.3). Any other
    value of either member (``"enc"``, a number, null, a list for ``use``; a string or a list holding
    a non-string for ``key_ops``) refuses the key: fail closed."""
    if "use" in jwk and jwk["use"] != "sig":
        return False
    if "key_ops" not in jwk:
        return True
    operations = jwk["key_ops"]
    return (
        isinstance(operations, list)
        and all(isinstance(operation, str) for operation in operations)
        and "verify" in operations
    )


def _retrieve(fetch: asyncio.Task[None]) -> None:
    """Read a finished fetch's outcome, so that an unexpected exception is not reported as never
    retrieved (the fetch already keeps the known keys)."""
    if not fetch.cancelled():
        fetch.exception()


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
        """The verified claims of `token`, or None; a refusal the client can act on is reported
        (`token_refusals.report`) for the answer's ``401``."""
        found = await self.verdict(token)
        if isinstance(found, TokenRefusal):
            report(found)
            return None
        return found

    async def verdict(self, token: str) -> dict[str, Any] | TokenRefusal | None:
        """The verified claims of `token`; a `TokenRefusal` for a refusal the client can act on
        (``token-not-access-token``: not a JWT access token, RFC 9068 §4; ``token-key-unknown``: its
        ``kid`` names no key the cache holds or may fetch now); None for every other refusal."""
        import jwt

        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH or not _is_i_json(token):
            return None  # not I-JSON: a duplicate member, a lone surrogate, NaN (RFC 7493, RFC 7515 §5.2)
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        algorithm, kid = header.get("alg"), header.get("kid")
        if algorithm not in self.server.algorithms or not (kid is None or isinstance(kid, str)):
            return None
        if self.server.typ == "at+jwt" and not _is_access_token_type(header.get("typ")):
            return _not_an_access_token(header.get("typ"))
        key = await self.jwks.key(kid)
        if key is None:
            return self.jwks.unknown(kid)
        declared = getattr(key, "_jwk_data", {}).get("alg")
        if declared not in (None, algorithm):  # a JWK naming its algorithm allows that one only
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
        if (
            not isinstance(claims.get("sub"), str)
            or not claims["sub"]
            or _CONTROL.search(claims["sub"])
            or any(name in claims and not _is_numeric_date(claims[name]) for name in ("exp", "nbf", "iat"))
        ):
            return None  # no subject; a time "1796656097" or true, which the library reads with int()
        if self.server.typ == "any" and any(name in claims for name in ID_TOKEN_CLAIMS):
            return TokenRefusal(  # typ not read: an ID token is still told by its own claims
                "token-not-access-token",
                "the token carries an ID token's claims (nonce, at_hash or c_hash): an ID token is "
                "not an access token (RFC 9068 section 4)",
            )
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


def _is_i_json(token: str) -> bool:
    """Whether `token` is three dot-separated segments whose first two (header, claims) `_i_json` reads."""
    parts = token.split(".")
    return len(parts) == 3 and all(_i_json(p) is not None for p in parts[:2])


def _i_json(segment: str) -> dict[str, Any] | None:
    """The JSON object a compact JWS segment (base64url) encodes, read as I-JSON (RFC 7493 §2):
    UTF-8 without a byte-order mark, no duplicate member name (RFC 7515 §5.2, RFC 7519 §4: a parser
    keeping the last ``sub`` and one keeping the first would see two callers), no lone surrogate,
    no ``NaN``/``Infinity`` and no number beyond an IEEE 754 double's range (RFC 7493 §2.2: ``1e400``,
    an integer of 400 digits). None for anything else (nested too deep included)."""
    import binascii

    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
        value = strict_json(raw.decode("utf-8"), unique_keys=True, double_integers=True)
    except (binascii.Error, ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError too
        return None
    if not isinstance(value, dict) or lone_surrogate_pointer(value) is not None:
        return None
    return value


def _is_numeric_date(value: Any) -> bool:
    """A NumericDate (RFC 7519 §2): a JSON number (integer or not), never a string or a boolean."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return abs(value) <= DOUBLE_MAX if isinstance(value, int) else math.isfinite(value)


def _is_access_token_type(typ: Any) -> bool:
    """Whether a header ``typ`` names a JWT access token: ``at+jwt`` or ``application/at+jwt``, in
    any letter case (RFC 9068 §4; RFC 7515 §4.1.9: a media type, whose ``application/`` may go)."""
    return isinstance(typ, str) and typ.lower() in ACCESS_TOKEN_TYPES


def _not_an_access_token(typ: Any) -> TokenRefusal:
    """``token-not-access-token`` naming the header's `typ` (when it is short and plain)."""
    if typ is None:
        shown = "missing"
    elif isinstance(typ, str) and _SHOWN.fullmatch(typ):
        shown = f"'{typ}'"
    else:
        shown = "another value"
    return TokenRefusal(
        "token-not-access-token",
        f"the token's typ is {shown}, not at+jwt: only a JWT access token is accepted, never an "
        "ID token or another JWT (RFC 9068 section 4)",
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
    "typ",
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
        text, _ = read_operator_file(file, refused_bits=stat.S_IWOTH)
    except UnreadableFile as exc:
        raise AuthorizationServerError(
            f"{file}: cannot read the authorization-server file: {exc.detail}"
        ) from None
    except UnsafeMode as exc:
        raise AuthorizationServerError(
            f"{file}: writable by every user of this machine (mode "
            f"{exc.mode:04o}): anyone could name their own issuer; "
            f"run `chmod 644 {file}`"
        ) from None
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
        typ=reader.choice(top["typ"], TYP_SETTINGS) if "typ" in top else "at+jwt",
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

    def choice(self, node: Any, allowed: tuple[str, ...]) -> str:
        value = self.text(node)
        if value not in allowed:
            raise self.fail(node, f"must be one of {', '.join(allowed)}, not {value[:40]!r}")
        return value

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
