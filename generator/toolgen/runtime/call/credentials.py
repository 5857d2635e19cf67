"""Credentials: where the runtime gets secrets and how it puts them on the wire.

Credentials are never tool arguments. A policy row's ``auth`` list names, per security scheme, the
kind (``bearer``/``basic``/``apiKey``/``oauth2``/``openIdConnect``), where it goes
(header/query/cookie + wire name) and the name of the secret (``secret``, e.g. ``TICKETS_TOKEN``).
A `CredentialsProvider` turns a secret name into its value; the default reads environment variables.

The entries of ``auth`` are alternatives (OpenAPI security requirement objects are OR-ed): every
entry whose secret is available is injected; if none is available the call fails with
``missing_credential`` naming the environment variables to set. An empty ``auth`` list means the
operation needs no credentials.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote, quote_plus

from ...policy.format import AuthBinding
from ..errors import ToolError, make_error
from ..redaction import MARKER, MAX_ROUNDS, cover


class CredentialsProvider(Protocol):
    """Returns the value of a named secret, or ``None`` when it is not configured."""

    def get(self, secret: str) -> str | None: ...


@dataclass
class EnvCredentials:
    """Reads secrets from environment variables named by the policy row (the default provider)."""

    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)

    def get(self, secret: str) -> str | None:
        value = self.environ.get(secret)
        return value if value else None


@dataclass
class StaticCredentials:
    """Secrets from an in-memory mapping (tests, embedding applications with their own vault)."""

    secrets: Mapping[str, str]

    def get(self, secret: str) -> str | None:
        return self.secrets.get(secret)


@dataclass
class Injected:
    """Credentials resolved for one request: extra headers, query parameters and cookies, plus the
    secret values (so callers can scrub them from anything echoed back) and the names of the wire
    locations that must be redacted in previews."""

    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)
    secret_values: list[str] = field(default_factory=list)


def _bearer(value: str) -> str:
    return value if value.lower().startswith("bearer ") else f"Bearer {value}"


def _basic(value: str) -> str:
    if value.lower().startswith("basic "):
        return value
    return "Basic " + base64.b64encode(value.encode("utf-8")).decode("ascii")


def resolve(
    auth: Sequence[AuthBinding],
    provider: CredentialsProvider,
    *,
    tool: str,
    own: Mapping[int, str] | None = None,
    mutating: bool = False,
    caller: str | None = None,
) -> Injected:
    """Resolve a policy row's ``auth`` entries into wire values.

    bearer/oauth2/openIdConnect → ``Authorization: Bearer <secret>`` (or the row's header name);
    basic → ``Authorization: Basic base64(<secret>)`` where the secret is ``user:password``;
    apiKey → the raw secret in the row's header/query/cookie.
    An entry with ``per_caller`` takes the caller's own value, `own` (by the entry's index in
    `auth`); without one, the shared secret from `provider` stands in only when its
    ``service_secret`` allows it (``always``, or ``reads`` and the row is not `mutating`), so a write
    never acts with the service's credential unless the map says so. `caller` names the actor in
    errors.
    Raises `ToolError` ``missing_credential`` (naming the secret names, never values) when no entry
    can be satisfied.
    """
    out = Injected()
    if not auth:
        return out
    missing: list[str] = []
    not_own: list[str] = []
    for index, entry in enumerate(auth):
        value = _value(index, entry, provider, own or {}, mutating)
        if value is None:
            (not_own if entry.per_caller is not None else missing).append(entry.secret)
            continue
        _inject(out, entry, value)
    if not out.headers and not out.query and not out.cookies:
        if not_own:
            schemes = sorted({e.scheme for e in auth if e.per_caller is not None})
            raise make_error(
                "missing_credential",
                f"{tool} needs the caller's own credential for {', '.join(schemes)}, and "
                f"{'actor ' + repr(caller) if caller else 'the caller'} has none here; the service's shared "
                "credential is not used for it.",
                details={"schemes": schemes, "per_caller": True},
                next_step="Call with a token of your authorization server (token exchange) or have an "
                "operator add your secret; do not retry until then.",
            )
        names = ", ".join(sorted({m for m in missing if m})) or "(unnamed)"
        raise make_error(
            "missing_credential",
            f"{tool} needs a credential: set the environment variable {names}.",
            details={"secrets": sorted({m for m in missing if m})},
            next_step=f"An operator must set {names} for the runtime; do not retry until then.",
        )
    return out


def _value(
    index: int, entry: AuthBinding, provider: CredentialsProvider, own: Mapping[int, str], mutating: bool
) -> str | None:
    """The value of `entry`: the caller's own for a ``per_caller`` entry (else the shared secret
    where its ``service_secret`` allows), the shared secret for any other."""
    per = entry.per_caller
    if per is not None:
        if own.get(index):
            return own[index]
        if per.service_secret == "never" or (per.service_secret == "reads" and mutating):
            return None
    return provider.get(entry.secret) if entry.secret else None


def _inject(out: Injected, entry: AuthBinding, value: str) -> None:
    """Put `value` on the wire where `entry` says, and record its secret forms."""
    kind, where, name = entry.kind.lower(), entry.location, entry.wire_name or "Authorization"
    if kind in ("bearer", "oauth2", "openidconnect", "http"):
        wire = _bearer(value)
    elif kind == "basic":
        wire = _basic(value)
    else:
        wire = value
    if where == "query":
        out.query[name] = wire
    elif where == "cookie":
        out.cookies[name] = wire
    else:
        out.headers[name] = wire
    out.secret_values.append(value)
    if wire != value:
        out.secret_values.append(wire)
    if kind == "basic" and not value.lower().startswith("basic "):
        # an API echoing the header value without its scheme: base64(user:password), padded or not
        encoded = wire.split(" ", 1)[1]
        out.secret_values.extend(
            dict.fromkeys(
                (encoded, encoded.rstrip("="), encoded.rstrip("=").replace("+", "-").replace("/", "_"))
            )
        )


#: The byte encodings a secret is looked for in, in a response's raw bytes (RFC 8259 JSON is UTF-8,
#: but a text body may be UTF-16 or UTF-32, with or without a charset saying so).
ECHO_ENCODINGS = ("utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")
_REDACTED = MARKER
_PERCENT = re.compile(r"%[0-9A-F]{2}")


def echo_forms(values: Iterable[str]) -> list[str]:
    """Every text form in which an API may echo each secret of `values` (the `Injected.secret_values`
    of a request, which already hold the wire forms: ``Bearer <token>``, ``Basic <base64>`` and the
    bare base64 of a basic ``user:password``): as is; percent-encoded (``quote`` with nothing safe,
    ``quote_plus``, each with upper- and lower-case hex); JSON-escaped (``\\uXXXX`` for non-ASCII and
    as is, and with ``/`` written ``\\/``); HTML-escaped (``&amp;``, ``&lt;``, ``&gt;``, with quotes as
    ``&quot;``/``&#x27;``, ``&#34;``/``&#39;`` or as is), as an HTML error page or a text body echoes it. Empty values are skipped; longest first, so a longer form
    is replaced before a shorter one inside it."""
    out: dict[str, None] = {}
    for value in values:
        if not value:
            continue
        escaped = json.dumps(value)[1:-1]
        forms = [value, escaped, json.dumps(value, ensure_ascii=False)[1:-1], escaped.replace("/", "\\/")]
        for encoded in (quote(value, safe=""), quote_plus(value, safe="")):
            forms += [encoded, _PERCENT.sub(lambda m: m.group(0).lower(), encoded)]
        escaped_html = html.escape(value)
        forms += [
            escaped_html,
            html.escape(value, quote=False),
            escaped_html.replace("&#x27;", "&#39;").replace("&quot;", "&#34;"),
        ]
        out.update((form, None) for form in forms if form)
    return sorted(out, key=len, reverse=True)


def scrub_bytes(content: bytes, forms: Iterable[str]) -> bytes:
    """`content` (a response body's raw bytes, before any decoding) with every form of `forms`
    (see `echo_forms`) replaced by ``[redacted]`` in each encoding of `ECHO_ENCODINGS`, the
    replacement written in the same encoding, never rewriting a marker of any of those encodings
    (`toolgen.runtime.redaction.cover`). Decoding a body with its declared charset and scrubbing
    the text catches what a charset says; this catches a secret in an encoding nothing declared
    (a UTF-16 ``text/plain`` read as UTF-8 would spell the secret with NULs between its letters)."""
    markers = [_REDACTED.encode(e) for e in ECHO_ENCODINGS]
    needles: dict[str, list[bytes]] = {e: [] for e in ECHO_ENCODINGS}
    for form in forms:
        for encoding in ECHO_ENCODINGS:
            try:
                needles[encoding].append(form.encode(encoding))
            except UnicodeEncodeError:  # a lone surrogate: it cannot be on the wire in this encoding
                continue
    for _ in range(MAX_ROUNDS):
        before = content
        for encoding, marker in zip(ECHO_ENCODINGS, markers, strict=True):
            content = cover(content, needles[encoding], markers, marker)
        if content == before:  # one encoding's marker may join text into another's needle: again
            return content
    return markers[0]  # still changing: fail closed, the whole body redacted


def auth_wire_locations(auth: list[dict[str, Any]]) -> tuple[set[str], set[str], set[str]]:
    """Lower-cased header names, query names and cookie names that carry credentials (for
    redaction in previews and audit)."""
    headers: set[str] = set()
    query: set[str] = set()
    cookies: set[str] = set()
    for entry in auth:
        where = str(entry.get("in", "header"))
        name = str(entry.get("name") or "Authorization")
        (query if where == "query" else cookies if where == "cookie" else headers).add(name.lower())
    return headers, query, cookies


__all__ = [
    "ECHO_ENCODINGS",
    "CredentialsProvider",
    "EnvCredentials",
    "Injected",
    "StaticCredentials",
    "ToolError",
    "auth_wire_locations",
    "echo_forms",
    "resolve",
    "scrub_bytes",
]
