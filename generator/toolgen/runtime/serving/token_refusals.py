"""Why a bearer token was refused, told to the client that presented it.

The MCP SDK's bearer middleware answers every refused token the same way: ``401``, ``WWW-Authenticate:
Bearer error="invalid_token", error_description="Authentication required"`` and that JSON body. A
verifier that knows a refusal the client can act on (an ID token presented where an access token is
needed; a key the authorization server has not published yet) reports it with `report`, and
`ExplainRefusals`, wrapped around the app, writes it into that one answer: the challenge's
``error_description`` and the body ``{"error": "invalid_token", "error_description": ..., "code":
...}`` (RFC 6750 §3: ``invalid_token`` stays the error; the code is registered in `toolgen.codes`,
stage ``serve``). Refusals no verifier reported keep the SDK's answer, which says nothing of why.

A request carrying more than one ``Authorization`` header (a singleton field, RFC 9110 §5.3) is
answered ``400`` ``invalid_request`` (RFC 6750 §3.1) with the code ``token-header-repeated`` before
any token is read: a proxy in front reading the last and the server the first would authenticate two
different callers for one request.

Input: refusals reported while one HTTP request is authenticated. Output: that request's ``401``
rewritten; every other answer, and every scope other than ``http``, passed through untouched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = ["ExplainRefusals", "TokenRefusal", "report"]

Message = MutableMapping[str, Any]


@dataclass(frozen=True)
class TokenRefusal:
    """One refusal a client can act on: `code` (kebab-case, registered in `toolgen.codes`, stage
    ``serve``) and `description`, one line of printable ASCII without ``"`` or ``\\`` (it goes into a
    quoted-string of the ``WWW-Authenticate`` header, RFC 9110 §5.6.4)."""

    code: str
    description: str

    def __post_init__(self) -> None:
        if not _SAFE.fullmatch(self.description):
            raise ValueError("a refusal's description is printable ASCII without quotes or backslashes")


_SAFE = re.compile(r"[ !#-\[\]-~]{1,300}")
_DESCRIPTION = re.compile(rb'error_description="[^"]*"')
#: the refusals reported during the request being authenticated (set by `ExplainRefusals`)
_REPORTED: ContextVar[list[TokenRefusal] | None] = ContextVar("toolgen_token_refusals", default=None)


def report(refusal: TokenRefusal) -> None:
    """Note `refusal` for the request being authenticated; nothing outside `ExplainRefusals`."""
    reported = _REPORTED.get()
    if reported is not None:
        reported.append(refusal)


class ExplainRefusals:
    """ASGI middleware: the SDK's ``401`` of a request whose verifier reported a `TokenRefusal`
    carries that refusal (the last one reported) instead of "Authentication required"."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(
        self,
        scope: Message,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        if sum(name.lower() == b"authorization" for name, _ in scope.get("headers") or ()) > 1:
            await _refuse_repeated(send)  # before any token is read: which one would be the caller's?
            return
        reported: list[TokenRefusal] = []
        owed: list[bytes] = []  # the rewritten body, sent in place of the SDK's (and its parts swallowed)

        async def explained(message: Message) -> None:
            kind = message.get("type")
            if kind == "http.response.start" and message.get("status") == 401 and reported:
                refusal = reported[-1]
                text = json.dumps(
                    {"error": "invalid_token", "error_description": refusal.description, "code": refusal.code}
                ).encode("ascii")
                owed.append(text)
                message = {**message, "headers": _headers(message.get("headers") or [], refusal, len(text))}
            elif kind == "http.response.body" and owed:
                if owed[0] == b"":
                    return  # a later part of the SDK's body: already replaced
                message = {"type": kind, "body": owed[0], "more_body": False}
                owed[0] = b""
            await send(message)

        token = _REPORTED.set(reported)
        try:
            await self.app(scope, receive, explained)
        finally:
            _REPORTED.reset(token)


def _headers(
    headers: list[tuple[bytes, bytes]], refusal: TokenRefusal, length: int
) -> list[tuple[bytes, bytes]]:
    """`headers` with the challenge's ``error_description`` and the ``Content-Length`` of the new body."""
    described = f'error_description="{refusal.description} ({refusal.code})"'.encode("ascii")
    out: list[tuple[bytes, bytes]] = []
    for name, value in headers:
        lower = name.lower()
        if lower == b"content-length":
            value = str(length).encode("ascii")
        elif lower == b"www-authenticate":
            value = _DESCRIPTION.sub(lambda _: described, value, count=1)
        out.append((name, value))
    return out


#: the answer to a request with more than one Authorization header
REPEATED = TokenRefusal(
    "token-header-repeated",
    "the request carries more than one Authorization header: send exactly one (RFC 6750 section 3.1)",
)


async def _refuse_repeated(send: Callable[[Message], Awaitable[None]]) -> None:
    """``400`` ``invalid_request`` with `REPEATED` in the challenge and the JSON body."""
    body = json.dumps(
        {"error": "invalid_request", "error_description": REPEATED.description, "code": REPEATED.code}
    ).encode("ascii")
    challenge = (
        f'Bearer error="invalid_request", error_description="{REPEATED.description} ({REPEATED.code})"'
    )
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode("ascii")),
                (b"www-authenticate", challenge.encode("ascii")),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})
