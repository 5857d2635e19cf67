"""Per-caller upstream credentials: each caller reaches the API as itself (``auth[].per_caller``).

A security scheme whose policy binding has ``per_caller`` never acts for one caller with another's
credential. Its value for a call comes from the caller:

- ``via: exchange``: RFC 8693 token exchange. The caller's access token (`Actor.token`, the JWT
  `toolgen serve --http` verified) is the ``subject_token``; this server authenticates as its
  client (``client_secret_basic``) at the authorization server's token endpoint and asks for the
  binding's ``audience``, ``resource`` and ``scope``. `TokenExchange` builds that request (the call
  path sends it as a `Send` effect: sans IO) and reads the answer; the issued token is cached per
  caller — keyed by the actor id, the SHA-256 of the subject token and what was asked — until
  ``expires_in`` (at most a day) minus a margin (an answer without ``expires_in`` is used once, not
  cached). Neither
  token is ever logged, audited, stored in a receipt or shown: the call scrubs both from everything
  it returns (`Call.secret_values`).
- ``via: lookup``: the caller's own secret by its principal, from a `SecretResolver`: a caller
  secrets file (`CallerSecretsFile`) or any object with ``get(principal, secret_name)``.

What a call uses when the caller has no credential of its own is the binding's
``service_secret``: ``never`` (``missing_credential``), ``reads``, or ``always`` (`credentials.resolve`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode

import httpx

from ...policy.format import PerCaller
from ..clock import SYSTEM, Clock
from ..errors import ToolError, make_error
from .local_yaml import UnreadableFile, UnsafeMode, compose_located, read_operator_file

__all__ = [
    "ACCESS_TOKEN_TYPE",
    "CallerCredentials",
    "CallerSecretsError",
    "CallerSecretsFile",
    "SecretResolver",
    "TokenExchange",
    "TokenExchangeClient",
    "load_caller_secrets",
]

#: RFC 8693 §3: the token type of an OAuth 2.0 access token
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
GRANT_TYPE = "urn:ietf:params:oauth:grant-type:token-exchange"
#: Seconds before its ``expires_in`` an exchanged token stops being used (at most a tenth of its life).
EXPIRY_MARGIN_S = 30.0
#: An RFC 6750 §2.1 ``b64token``: what an ``Authorization: Bearer`` header may carry.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
#: Longest an exchanged token is cached (seconds), whatever its ``expires_in`` says.
MAX_CACHED_S = 86_400
#: The most bytes of a token endpoint's answer read.
MAX_ANSWER_BYTES = 64 * 1024


@dataclass(frozen=True)
class TokenExchangeClient:
    """How this server authenticates at the authorization server's token endpoint for RFC 8693
    token exchange: `client_id` and `client_secret` (``client_secret_basic``, RFC 6749 §2.3.1)."""

    token_endpoint: str
    client_id: str
    client_secret: str = field(repr=False)


class SecretResolver(Protocol):
    """The secret named `secret` (the binding's ``secret``, e.g. ``TICKETS_API_KEY``) of the caller
    `principal` (its actor id), or None when that caller has none."""

    def get(self, principal: str, secret: str) -> str | None: ...


class CallerSecretsError(ValueError):
    """A caller secrets file that cannot be used (located; never holds a secret)."""


@dataclass(frozen=True)
class CallerSecretsFile:
    """Per-caller secrets read from a file (`load_caller_secrets`): principal -> secret name -> value."""

    secrets: Mapping[str, Mapping[str, str]] = field(repr=False)

    def get(self, principal: str, secret: str) -> str | None:
        value = self.secrets.get(principal, {}).get(secret)
        return value or None


def load_caller_secrets(path: str | os.PathLike[str]) -> CallerSecretsFile:
    """Read ``{"callers": {PRINCIPAL: {SECRET_NAME: value, ...}, ...}}`` (YAML or JSON). Refused
    with `CallerSecretsError` (naming the file, and line and column where one applies): a file
    another user may read or write (it holds secrets: ``chmod 600``), any other shape, an empty
    value."""
    import yaml  # type: ignore[import-untyped, unused-ignore]

    file = Path(path)
    try:
        text, _ = read_operator_file(file, refused_bits=stat.S_IRWXG | stat.S_IRWXO)
    except UnreadableFile as exc:
        raise CallerSecretsError(f"{file}: cannot read the caller secrets file: {exc.detail}") from None
    except UnsafeMode as exc:
        raise CallerSecretsError(
            f"{file}: other users may read or write it (mode {exc.mode:04o}); it holds "
            f"secrets: run `chmod 600 {file}`"
        ) from None
    root = compose_located(file, text, CallerSecretsError)

    def fail(node: Any, message: str) -> CallerSecretsError:
        mark = getattr(node, "start_mark", None)
        return CallerSecretsError(
            f"{file}:{mark.line + 1}:{mark.column + 1}: {message}" if mark else f"{file}: {message}"
        )

    def pairs(node: Any, what: str) -> list[tuple[str, Any]]:
        if not isinstance(node, yaml.MappingNode):
            raise fail(node, f"{what} must be a mapping")
        out: list[tuple[str, Any]] = []
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode) or not str(key.value).strip():
                raise fail(key, f"every key of {what} must be a non-empty string")
            if any(k == key.value for k, _ in out):
                raise fail(key, f"duplicate key {str(key.value)[:40]!r} in {what}")
            out.append((str(key.value), value))
        return out

    top = dict(pairs(root, "the caller secrets file")) if root is not None else {}
    if set(top) != {"callers"}:
        raise fail(root, "the file must hold `callers:` alone: {PRINCIPAL: {SECRET_NAME: value}}")
    callers: dict[str, dict[str, str]] = {}
    for principal, node in pairs(top["callers"], "`callers`"):
        own: dict[str, str] = {}
        for name, value in pairs(node, f"the secrets of {principal[:40]!r}"):
            if (
                not isinstance(value, yaml.ScalarNode)
                or value.tag != "tag:yaml.org,2002:str"
                or not value.value
            ):
                raise fail(value, f"the secret {name[:40]!r} must be a non-empty string")
            own[name] = str(value.value)
        callers[principal] = own
    return CallerSecretsFile(callers)


class TokenExchange:
    """RFC 8693 token exchange for `client` with a per-caller cache (see the module docstring).
    `max_entries` bounds the cache (least recently used first out)."""

    def __init__(
        self, client: TokenExchangeClient, *, clock: Clock = SYSTEM, max_entries: int = 10_000
    ) -> None:
        self.client = client
        self.clock = clock
        self.max_entries = max_entries
        self._cache: OrderedDict[tuple[str, str, str], tuple[str, float]] = OrderedDict()
        self._lock = threading.Lock()  # an aggregate's branches run in threads (sync driver)

    @staticmethod
    def _key(actor_id: str, subject_token: str, per: PerCaller) -> tuple[str, str, str]:
        asked = json.dumps([per.audience, per.resource, per.scope])
        return actor_id, hashlib.sha256(subject_token.encode("utf-8")).hexdigest(), asked

    def cached(self, actor_id: str, subject_token: str, per: PerCaller) -> str | None:
        """The token this caller's `subject_token` was exchanged for, while it lasts; else None."""
        key = self._key(actor_id, subject_token, per)
        with self._lock:
            entry = self._cache.get(key)
            if entry is None:
                return None
            if self.clock.time() >= entry[1]:
                del self._cache[key]
                return None
            self._cache.move_to_end(key)
            return entry[0]

    def request(self, subject_token: str, per: PerCaller) -> httpx.Request:
        """The token-exchange request (RFC 8693 §2.1), form-encoded, the client authenticated with
        HTTP Basic (RFC 6749 §2.3.1: client id and secret form-encoded first)."""
        form = {
            "grant_type": GRANT_TYPE,
            "subject_token": subject_token,
            "subject_token_type": ACCESS_TOKEN_TYPE,
            "requested_token_type": ACCESS_TOKEN_TYPE,
        }
        form.update(
            {
                k: v
                for k, v in (("audience", per.audience), ("resource", per.resource), ("scope", per.scope))
                if v
            }
        )
        auth = httpx.BasicAuth(
            urlencode({"": self.client.client_id})[1:], urlencode({"": self.client.client_secret})[1:]
        )
        request = httpx.Request(
            "POST",
            self.client.token_endpoint,
            content=urlencode(form).encode("ascii"),
            headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
        )
        return next(auth.auth_flow(request))

    def accept(self, actor_id: str, subject_token: str, per: PerCaller, outcome: Any, *, tool: str) -> str:
        """The issued token of the token endpoint's answer `outcome` (the call path's `Outcome`:
        ``status``, ``content``, failure ``kind``), cached for this caller. The answer must issue what
        was asked: ``issued_token_type`` the access-token type (RFC 8693 §2.2.1, required) and
        ``token_type`` ``Bearer`` (RFC 6749 §5.1, any case); a refresh or ID token is never sent,
        nor an ``access_token`` that is no RFC 6750 §2.1 ``b64token`` (a line break, a space, a NUL or
        a non-ASCII character: it would end, split or break the ``Authorization`` header).
        Raises `ToolError` ``credential_unavailable`` (retryable when the endpoint could not be
        reached or failed, 5xx; not when it refused, 4xx), never naming a token."""
        status = outcome.status
        if outcome.kind is not None or status >= 500 or status == 0:
            raise self._failed(tool, "the authorization server could not be reached or failed", True, status)
        try:
            answer = (
                json.loads(outcome.content[:MAX_ANSWER_BYTES])
                if len(outcome.content) <= MAX_ANSWER_BYTES
                else None
            )
        except ValueError:
            answer = None
        if status != 200 or not isinstance(answer, dict):
            reason = (
                answer.get("error")
                if isinstance(answer, dict) and isinstance(answer.get("error"), str)
                else None
            )
            raise self._failed(
                tool,
                f"the authorization server refused the token exchange{f' ({reason[:40]})' if reason else ''}",
                False,
                status,
            )
        token, expires = answer.get("access_token"), answer.get("expires_in")
        if not isinstance(token, str) or not token:
            raise self._failed(tool, "the authorization server's answer holds no access_token", False, status)
        if not _B64TOKEN.fullmatch(token):  # a line break would end the header, a space split it
            raise self._failed(
                tool,
                "the authorization server's access_token is not a bearer token (RFC 6750 section 2.1: "
                "letters, digits and -._~+/ then =)",
                False,
                status,
            )
        issued, kind = answer.get("issued_token_type"), answer.get("token_type")
        if issued != ACCESS_TOKEN_TYPE or not isinstance(kind, str) or kind.lower() != "bearer":
            raise self._failed(
                tool,
                "the authorization server issued no bearer access token (issued_token_type, token_type)",
                False,
                status,
            )
        if isinstance(expires, int) and not isinstance(expires, bool) and expires > 0:
            expires = min(expires, MAX_CACHED_S)  # any integer: 10**400 is no float
            until = self.clock.time() + expires - min(EXPIRY_MARGIN_S, expires / 10)
            key = self._key(actor_id, subject_token, per)
            with self._lock:
                self._cache[key] = (token, until)
                self._cache.move_to_end(key)
                while len(self._cache) > self.max_entries:
                    self._cache.popitem(last=False)
        return token

    @staticmethod
    def _failed(tool: str, why: str, retryable: bool, status: int) -> ToolError:
        return make_error(
            "credential_unavailable",
            f"{tool}: {why}; the caller's own credential could not be obtained and nothing was sent.",
            retryable=retryable,
            details={"via": "exchange", "status": status or None},
        )


@dataclass
class CallerCredentials:
    """Where per-caller credentials come from (`Registry.caller_credentials`): `exchange` for
    ``via: exchange`` bindings, `secrets` for ``via: lookup`` ones. Either may be None: a binding
    whose source is not configured has no caller credential (then its ``service_secret`` decides)."""

    exchange: TokenExchange | None = None
    secrets: SecretResolver | None = None
