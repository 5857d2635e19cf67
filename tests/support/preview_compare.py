"""Comparing a request as a loopback API received it with the request a preview showed.

`preview_mismatches(preview, method=..., path=..., raw_query=..., headers=..., body=...)` lists how a
received request (as `tests.support.fault_server.Received` holds it: raw path and query, header
pairs in order, body bytes) differs from a preview's ``request`` object, leaving out the
credentials, the idempotency key and the headers the HTTP client adds for the connection.
"""

from __future__ import annotations

import json
from collections.abc import Set as AbstractSet
from typing import Any
from urllib.parse import parse_qsl

#: Headers the HTTP client adds for the connection itself; they are not part of what is approved.
TRANSPORT_HEADERS = frozenset(
    {"host", "content-length", "connection", "accept-encoding", "user-agent", "transfer-encoding"}
)


def _ordered(value: Any) -> Any:
    """A JSON value with objects as lists of (key, value) pairs, so key order is compared too."""
    if isinstance(value, dict):
        return [("{}", [(k, _ordered(v)) for k, v in value.items()])]
    if isinstance(value, list):
        return [_ordered(v) for v in value]
    return value


def _ordered_json(data: bytes) -> Any:
    return json.loads(data, object_pairs_hook=lambda pairs: [("{}", list(pairs))])


def _strip_key_pairs(value: Any, names: set[str]) -> Any:
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], tuple) and value[0][0] == "{}":
        return [("{}", [(k, v) for k, v in value[0][1] if k not in names])]
    return value


def preview_mismatches(  # noqa: PLR0913
    preview: dict[str, Any],
    *,
    method: str,
    path: str,
    raw_query: str,
    headers: list[tuple[str, str]],
    body: bytes,
    secret_headers: AbstractSet[str] = frozenset(),
    secret_query: AbstractSet[str] = frozenset(),
    key_header: str | None = None,
    key_query: str | None = None,
    key_body_field: str | None = None,
) -> list[str]:
    """How a request as received differs from a preview's ``request`` (``{"method", "url",
    "headers", "body"}``), ignoring the credentials (`secret_*`, lower-case names), the idempotency
    key (`key_*`) and transport headers. Empty when they are the same request; JSON and form bodies
    are compared value by value and in order (key order included)."""
    problems: list[str] = []
    if str(preview.get("method", "")).upper() != method.upper():
        problems.append(f"method {method} != previewed {preview.get('method')}")
    url = str(preview.get("url", ""))
    after_scheme = url.split("://", 1)[-1]
    target = "/" + after_scheme.split("/", 1)[1] if "/" in after_scheme else "/"
    p_path, _, p_query = target.partition("?")
    if p_path != path:
        problems.append(f"path {path!r} != previewed {p_path!r}")
    drop_query = {n.lower() for n in secret_query} | ({key_query.lower()} if key_query else set())

    def query_pairs(raw: str) -> list[str]:
        return [
            piece for piece in raw.split("&") if piece and piece.split("=", 1)[0].lower() not in drop_query
        ]

    if query_pairs(raw_query) != query_pairs(p_query):
        problems.append(f"query {raw_query!r} != previewed {p_query!r}")
    drop_headers = TRANSPORT_HEADERS | {h.lower() for h in secret_headers} | {"authorization", "cookie"}
    if key_header:
        drop_headers = drop_headers | {key_header.lower()}
    wire_h: dict[str, str] = {}
    for k, v in headers:
        if k.lower() not in drop_headers:
            wire_h[k.lower()] = v if k.lower() not in wire_h else wire_h[k.lower()] + ", " + v
    prev_h = {
        str(k).lower(): str(v)
        for k, v in (preview.get("headers") or {}).items()
        if str(k).lower() not in drop_headers
    }
    if "accept" not in prev_h and wire_h.get("accept") == "*/*":
        wire_h.pop("accept")  # the HTTP client's default, added when the request sets none
    if wire_h != prev_h:
        problems.append(f"headers {wire_h!r} != previewed {prev_h!r}")
    shown = preview.get("body")
    ctype = (prev_h.get("content-type") or "").lower()
    if shown is None:
        if body:
            problems.append(f"a body of {len(body)} bytes was sent; the preview showed none")
    elif "x-www-form-urlencoded" in ctype:
        pairs = shown if isinstance(shown, list) else list(shown.items())
        expected = [(str(k), str(v)) for k, v in pairs]
        got = [
            (k, v)
            for k, v in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
            if k != key_body_field
        ]
        if got != expected:
            problems.append(f"form body {got!r} != previewed {expected!r}")
    elif "json" in ctype:
        try:
            got_json = _ordered_json(body)
        except ValueError:
            problems.append("the body sent is not JSON")
        else:
            if key_body_field:
                got_json = _strip_key_pairs(got_json, {key_body_field})
            if got_json != _ordered(shown):
                problems.append(f"JSON body {body[:300]!r} != previewed {shown!r}")
    return problems


__all__ = ["TRANSPORT_HEADERS", "preview_mismatches"]
