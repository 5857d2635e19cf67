"""Step 11, redirect: a read whose only declared success is a redirect follows it, on the same origin.

Input: `Call`, `ToolSpec`, the wire `BuiltRequest`, the sent `httpx.Request`, `Budget` and the send
step's `Exchange`. Output: ``(exchange, request, landed)``: the last exchange, the request that got
it, and the URL the redirects led to (without the credentials; None when nothing was followed).

Only for a row whose ``output.redirect`` is ``follow`` (`toolgen.compile.lower.outputs.redirect_body`:
a read that is no download link), and only while:

- the answer is a redirect (301, 302, 303, 307, 308; RFC 9110 §15.4) with a ``Location``;
- its target is on the request's origin (scheme, host and port: RFC 6454) and names no userinfo
  (which the HTTP client would send as ``Authorization: Basic`` in place of the call's credential):
  the call's credentials never go to another origin, so a cross-origin redirect is not followed and
  the declared answer (its ``Location``) is the result;
- at most `MAX_REDIRECTS` hops, each within what is left of the call's deadline;
- the target answers: a hop that fails (no answer, or a 4xx/5xx) ends the walk, and the last
  redirect, the answer the spec declares, is the result (its ``Location``).

Each hop is a GET (RFC 9110 §15.4: a client may change a redirected GET's method to GET; a HEAD
stays a HEAD) with the request's headers, and the credentials the row sends in the query. A write
never follows a redirect (its row says ``location``). Audits ``http`` ``redirect`` per hop. Raises
nothing.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx

from ..call.request import BuiltRequest
from ..call.toolspec import ToolSpec
from .effects import REDIRECT_STATUSES, Effect, Send
from .state import Budget, Call, Exchange

__all__ = ["MAX_REDIRECTS", "REDIRECT_STATUSES", "follow", "location_of"]

#: The most redirects a read follows in one call.
MAX_REDIRECTS = 5


def location_of(exchange: Exchange, base: httpx.URL) -> httpx.URL | None:
    """The absolute target of a redirect answer (its ``Location`` resolved against `base`), or None
    when the answer is no redirect or its ``Location`` is missing or unreadable."""
    outcome = exchange.outcome
    if outcome.kind is not None or outcome.status not in REDIRECT_STATUSES or outcome.headers is None:
        return None
    raw = outcome.headers.get("location")
    if not raw:
        return None
    try:
        target = base.join(raw.strip())
    except (httpx.InvalidURL, ValueError):
        return None
    return target if target.scheme in ("http", "https") and target.host else None


def _same_origin(target: httpx.URL, sent: httpx.URL) -> bool:
    """Whether `target` is on the origin of `sent` and names no userinfo: the HTTP client sends a
    URL's userinfo as ``Authorization: Basic`` in place of the call's own credential (the same
    check as `toolgen.runtime.call.page_cursor.same_origin`)."""
    return not target.userinfo and (target.scheme, target.host, target.port) == (
        sent.scheme,
        sent.host,
        sent.port,
    )


def _with_query_credentials(target: httpx.URL, sent: httpx.URL, wire: BuiltRequest) -> httpx.URL:
    """`target` with the query pairs of `sent` that carry credentials (`BuiltRequest.redact_query`)."""
    if not wire.redact_query:
        return target
    pairs = [
        (k, v)
        for k, v in parse_qsl(sent.query.decode("ascii", "replace"), keep_blank_values=True)
        if k.lower() in wire.redact_query
    ]
    if not pairs:
        return target
    query = target.query.decode("ascii", "replace")
    return target.copy_with(
        query=((query + "&") if query else "").encode("ascii") + urlencode(pairs).encode("ascii")
    )


def follow(
    call: Call,
    spec: ToolSpec,
    wire: BuiltRequest,
    http_request: httpx.Request,
    budget: Budget,
    exchange: Exchange,
) -> Generator[Effect, Any, tuple[Exchange, httpx.Request, str | None]]:
    """Follow same-origin redirects of a ``follow`` row (see the module docstring)."""
    if spec.row.output.redirect != "follow" or spec.mutating:
        return exchange, http_request, None
    request = previous = http_request
    landed, plain = None, httpx.URL(wire.url)
    for hop in range(1, MAX_REDIRECTS + 1):
        target = location_of(exchange, plain)
        remaining = budget.deadline - call.host.clock.monotonic()
        if target is None or not _same_origin(target, request.url) or remaining <= 0:
            break
        method = "HEAD" if request.method == "HEAD" else "GET"
        headers = [
            (k, v)
            for k, v in request.headers.multi_items()
            if k.lower() not in ("content-length", "content-type", "host")
        ]
        request = httpx.Request(
            method, _with_query_credentials(target, http_request.url, wire), headers=headers
        )
        outcome = yield Send(request, max(0.001, min(budget.timeout_ms / 1000.0, remaining)))
        call.emit(
            "http",
            "redirect",
            attempt=hop,
            status=outcome.status or None,
            failure=outcome.kind,
            elapsed_ms=round(outcome.elapsed_ms, 1),
        )
        if outcome.kind is not None or outcome.status >= 400:
            break  # the target failed: the declared redirect is the answer
        exchange = Exchange(
            outcome,
            exchange.attempts + 1,
            exchange.uncertain,
            round((call.host.clock.monotonic() - budget.started) * 1000),
        )
        previous, plain, landed = request, target, str(target)
    return exchange, previous, landed
