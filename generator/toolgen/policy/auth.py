"""Kernel `policy.auth`: the credentials a policy row's request carries (``auth[]`` of ``policy.json``).

Input: the lowering's `AuthBinding`s (`toolgen.compile.lower.security`); a row's ``auth`` member
(`read_auth`, called by `toolgen.policy.format.from_json`). Output: the frozen `AuthBinding` and
`PerCaller` values and their JSON (every member written, ``per_caller`` ``null`` when unset). Part
of the one definition of the format, `toolgen.policy.format` (which re-exports them); a bad value
is a `PolicyFormatError` at its JSON pointer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .members import MEMBERS
from .nodes import Node

__all__ = ["AuthBinding", "AuthLocation", "PerCaller", "PerCallerVia", "ServiceSecretUse", "read_auth"]

JSON = Any  # a JSON value: dict/list/str/int/float/bool/None
AuthLocation = Literal["header", "query", "cookie"]
PerCallerVia = Literal["exchange", "lookup"]
ServiceSecretUse = Literal["never", "reads", "always"]


@dataclass(frozen=True)
class PerCaller:
    """Where a security scheme's credential comes from per caller (``auth[].per_caller``).

    `via`: ``exchange`` (RFC 8693 token exchange of the caller's access token at the authorization
    server, asking for `audience`, `resource` and `scope` when set) or ``lookup`` (the caller's own
    secret, looked up by its principal). `service_secret`: when the scheme's shared `secret` may
    stand in for a caller that has no credential of its own: ``never`` (the default: the call fails
    with ``missing_credential``), ``reads`` (for read rows only) or ``always`` (writes too: the map
    says so explicitly)."""

    via: PerCallerVia
    audience: str | None = None
    resource: str | None = None
    scope: str | None = None
    service_secret: ServiceSecretUse = "never"

    def to_json(self) -> dict[str, JSON]:
        return {
            "via": self.via,
            "audience": self.audience,
            "resource": self.resource,
            "scope": self.scope,
            "service_secret": self.service_secret,
        }


@dataclass(frozen=True)
class AuthBinding:
    """A credential the runtime injects (``auth[]``; never a tool argument).

    `scheme` is the securitySchemes key; `kind` is ``bearer``/``basic``/``apiKey``/``oauth2``/
    ``openIdConnect``; `location`/`wire_name` say where it goes; `secret` is the name of the runtime
    secret (an environment variable by default) holding the value; `scopes` the OAuth scopes;
    `per_caller` (None: every caller shares `secret`) where each caller's own credential comes from.
    """

    scheme: str
    kind: str
    location: AuthLocation
    wire_name: str
    secret: str
    scopes: tuple[str, ...] = ()
    per_caller: PerCaller | None = None

    def to_json(self) -> dict[str, JSON]:
        return {
            "scheme": self.scheme,
            "kind": self.kind,
            "in": self.location,
            "name": self.wire_name,
            "secret": self.secret,
            "scopes": list(self.scopes),
            "per_caller": None if self.per_caller is None else self.per_caller.to_json(),
        }


def read_auth(n: Node) -> AuthBinding:
    """The `AuthBinding` of an ``auth[]`` entry; raises `PolicyFormatError` located at the member."""
    n.exactly(MEMBERS["auth"])
    return AuthBinding(
        scheme=n.get("scheme").text(),
        kind=n.get("kind").text(),
        location=n.get("in").choice(AuthLocation),
        wire_name=n.get("name").text(),
        secret=n.get("secret").text(),
        scopes=n.get("scopes").tuple_of(Node.text),
        per_caller=_read_per_caller(n.get("per_caller")),
    )


def _read_per_caller(n: Node) -> PerCaller | None:
    if n.value is None:
        return None
    n.exactly(MEMBERS["per_caller"])
    return PerCaller(
        via=n.get("via").choice(PerCallerVia),
        audience=n.get("audience").opt_text(),
        resource=n.get("resource").opt_text(),
        scope=n.get("scope").opt_text(),
        service_secret=n.get("service_secret").choice(ServiceSecretUse),
    )
