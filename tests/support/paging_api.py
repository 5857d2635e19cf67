"""An API that pages in every style `toolgen init` drafts, and its OpenAPI document.

One GET operation per style, each listing the same `count` items (``{"id": "<style>-<n>",
"created": <descending timestamp>}``) in its own convention:

| path | style | request | answer |
|---|---|---|---|
| ``/square/payments`` | cursor in the body (Square) | ``cursor``, ``limit`` | ``{errors, payments, cursor}`` |
| ``/slack/channels`` | nested next cursor (Slack) | ``cursor``, ``limit`` | ``{ok, channels, response_metadata.next_cursor}``, ``""`` at the end |
| ``/google/files`` | page token (Google) | ``pageToken``, ``pageSize`` | ``{files, nextPageToken}`` |
| ``/stripe/charges`` | ``has_more`` + ``starting_after`` | ``starting_after``, ``limit`` | ``{object, data, has_more}`` |
| ``/drf/things`` | next URL in the body | ``limit``, ``offset`` | ``{count, next (uri), previous, results}`` |
| ``/hal/orders`` | relative next URL in ``_links.next.href`` | ``page``, ``size`` | ``{_embedded.orders, _links}`` |
| ``/github/issues`` | ``Link`` header | ``page``, ``per_page`` | an array, ``Link: <...>; rel="next"`` |
| ``/offset/rows`` | offset | ``offset``, ``limit`` | ``{data, total}`` |
| ``/page/users`` | page number | ``page``, ``per_page`` | ``{items, total_pages}`` |
| ``/pageno/entries`` | page number, nothing in the answer says more (a `# decide` draft) | ``pageno`` (number), ``pagesize`` | ``{Entities, Metadata: {total}}`` |
| ``/vercel/deployments`` | time window (Vercel) | ``limit``, ``since``, ``until`` | ``{deployments, pagination: {count, next, prev}}`` |
| ``/odata/people`` | OData next link | ``$top``, ``$skip`` | ``{value, "@odata.nextLink"}`` |
| ``/azure/vaults`` | Azure next link | ``api-version`` (required) | ``{value, nextLink}`` (with ``$skiptoken``) |
| ``/visma/customers`` | a next token in a declared response header (Visma) | ``pageToken``, ``rowCount`` | an array, ``NextPageToken: tok-N`` |
| ``/clever/students`` | ``starting_after`` without a has-more flag (a `# decide` draft) | ``starting_after``, ``limit`` | ``{data}`` |
| ``/text/rows`` | offset and limit declared as text (a `# decide` draft) | ``offset``, ``limit`` (strings) | ``{result, count}`` |

The server honours each page-size parameter (``DEFAULT_SIZE`` when absent) and records every
request's path and query (`requests`), so a test can check that the paging parameter moved.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from toolgen.testing.loopback import LoopbackServer

DEFAULT_SIZE = 4
STYLES = (
    "square",
    "slack",
    "google",
    "stripe",
    "drf",
    "hal",
    "github",
    "offset",
    "page",
    "vercel",
    "odata",
    "azure",
    "pageno",
    "visma",
    "clever",
    "text",
)


def _q(name: str, kind: str = "string", **more: Any) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "schema": {"type": kind, **more}}


_ITEM = {"type": "object", "properties": {"id": {"type": "string"}, "created": {"type": "integer"}}}
_ITEMS = {"type": "array", "items": _ITEM}


def _op(
    op_id: str, params: list[dict[str, Any]], answer: dict[str, Any], headers: dict[str, Any] | None = None
) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": "one page",
        "content": {"application/json": {"schema": answer}},
    }
    if headers:
        response["headers"] = headers
    return {
        "get": {
            "operationId": op_id,
            "summary": f"List {op_id.removeprefix('list_')} one page at a time",
            "parameters": params,
            "responses": {"200": response},
        }
    }


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def spec() -> dict[str, Any]:
    """The OpenAPI 3.0 document of the paging API (no security, one server)."""
    nullable_num = {"type": "number", "nullable": True}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Paging styles", "version": "1"},
        "servers": [{"url": "http://127.0.0.1"}],
        "paths": {
            "/square/payments": _op(
                "list_payments",
                [_q("cursor"), _q("limit", "integer", maximum=100)],
                _obj(
                    errors={"type": "array", "items": _obj(code={"type": "string"})},
                    payments=_ITEMS,
                    cursor={"type": "string"},
                ),
            ),
            "/slack/channels": _op(
                "list_channels",
                [_q("cursor"), _q("limit", "integer")],
                _obj(
                    ok={"type": "boolean"},
                    channels=_ITEMS,
                    response_metadata=_obj(next_cursor={"type": "string"}),
                ),
            ),
            "/google/files": _op(
                "list_files",
                [_q("pageToken"), _q("pageSize", "integer")],
                _obj(files=_ITEMS, nextPageToken={"type": "string"}),
            ),
            "/stripe/charges": _op(
                "list_charges",
                [_q("starting_after"), _q("limit", "integer")],
                _obj(object={"type": "string"}, data=_ITEMS, has_more={"type": "boolean"}),
            ),
            "/drf/things": _op(
                "list_things",
                [_q("limit", "integer"), _q("offset", "integer")],
                _obj(
                    count={"type": "integer"},
                    next={"type": "string", "format": "uri", "nullable": True},
                    previous={"type": "string", "format": "uri", "nullable": True},
                    results=_ITEMS,
                ),
            ),
            "/hal/orders": _op(
                "list_orders",
                [_q("page", "integer"), _q("size", "integer")],
                _obj(
                    _embedded=_obj(orders=_ITEMS),
                    _links=_obj(self=_obj(href={"type": "string"}), next=_obj(href={"type": "string"})),
                ),
            ),
            "/github/issues": _op(
                "list_issues",
                [_q("per_page", "integer"), _q("page", "integer")],
                _ITEMS,
                headers={"Link": {"schema": {"type": "string"}}},
            ),
            "/offset/rows": _op(
                "list_rows",
                [_q("offset", "integer"), _q("limit", "integer")],
                _obj(data=_ITEMS, total={"type": "integer"}),
            ),
            "/page/users": _op(
                "list_users",
                [_q("page", "integer"), _q("per_page", "integer")],
                _obj(items=_ITEMS, total_pages={"type": "integer"}),
            ),
            "/pageno/entries": _op(
                "list_entries",
                [_q("pageno", "number"), _q("pagesize", "integer")],
                _obj(Entities=_ITEMS, Metadata=_obj(total={"type": "integer"})),
            ),
            "/vercel/deployments": _op(
                "list_deployments",
                [_q("limit", "number"), _q("since", "number"), _q("until", "number")],
                _obj(
                    deployments=_ITEMS,
                    pagination=_obj(count={"type": "number"}, next=nullable_num, prev=nullable_num),
                ),
            ),
            "/odata/people": _op(
                "list_people",
                [_q("$top", "integer"), _q("$skip", "integer")],
                _obj(value=_ITEMS, **{"@odata.nextLink": {"type": "string"}}),
            ),
            "/azure/vaults": _op(
                "list_vaults",
                [{**_q("api-version"), "required": True}],
                _obj(value=_ITEMS, nextLink={"type": "string", "readOnly": True}),
            ),
            "/visma/customers": _op(
                "list_customers",
                [_q("pageToken"), _q("rowCount", "integer")],
                _ITEMS,
                headers={"NextPageToken": {"schema": {"type": "string"}}},
            ),
            "/clever/students": _op(
                "list_students", [_q("starting_after"), _q("limit", "integer")], _obj(data=_ITEMS)
            ),
            "/text/rows": _op(
                "list_text_rows", [_q("offset"), _q("limit")], _obj(result=_ITEMS, count={"type": "number"})
            ),
        },
    }


#: the tool `toolgen init` drafts for each style's operation
TOOLS = {
    "square": "list_payments",
    "slack": "list_channels",
    "google": "list_files",
    "stripe": "list_charges",
    "drf": "list_things",
    "hal": "list_orders",
    "github": "list_issues",
    "offset": "list_rows",
    "page": "list_users",
    "vercel": "list_deployments",
    "odata": "list_people",
    "azure": "list_vaults",
    "pageno": "list_entries",
    "visma": "list_customers",
    "clever": "list_students",
    "text": "list_text_rows",
}


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        owner = self.server.owner
        split = urlsplit(self.path)
        query = dict(parse_qsl(split.query))
        with owner.lock:
            owner.requests.append((split.path, split.query))
        style = split.path.strip("/").split("/")[0]
        items = [{"id": f"{style}-{n}", "created": 10_000 - n} for n in range(owner.count)]
        try:
            body, headers = owner.answer(style, split.path, query, items)
        except (KeyError, ValueError):
            self._send(400, {"error": "bad paging parameter"}, {})
            return
        self._send(200, body, headers)

    def _send(self, status: int, body: Any, headers: dict[str, str]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: PagingServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class PagingServer(LoopbackServer):
    """``with PagingServer(count=10) as api:``; set `count` between walks to change the listing."""

    def __init__(self, count: int = 10) -> None:
        self.count = count
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []
        self.httpd: _Server = _Server(self)
        super().__init__(self.httpd)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def answer(  # noqa: PLR0911
        self,
        style: str,
        path: str,
        q: dict[str, str],
        items: list[dict[str, Any]],
    ) -> tuple[Any, dict[str, str]]:
        """(body, headers) of one page. Raises KeyError or ValueError on a paging parameter the
        style does not understand (the handler answers 400)."""

        def size(name: str) -> int:
            return int(q.get(name, DEFAULT_SIZE))

        def after(start: int, n: int) -> tuple[list[dict[str, Any]], int | None]:
            page = items[start : start + n]
            return page, (start + n if start + n < len(items) else None)

        if style in ("square", "slack", "google", "visma"):
            token = q.get(
                {"square": "cursor", "slack": "cursor", "google": "pageToken", "visma": "pageToken"}[style]
            )
            start = int(token.removeprefix("tok-")) if token else 0
            if token and not token.startswith("tok-"):
                raise ValueError(token)
            page, nxt = after(start, size({"google": "pageSize", "visma": "rowCount"}.get(style, "limit")))
            tok = f"tok-{nxt}" if nxt is not None else None
            if style == "visma":
                return page, ({"NextPageToken": tok} if tok else {})
            if style == "square":
                return {"errors": [], "payments": page, **({"cursor": tok} if tok else {})}, {}
            if style == "slack":
                return {"ok": True, "channels": page, "response_metadata": {"next_cursor": tok or ""}}, {}
            return {"files": page, **({"nextPageToken": tok} if tok else {})}, {}
        if style in ("stripe", "clever"):
            last = q.get("starting_after")
            start = next(i for i, it in enumerate(items) if it["id"] == last) + 1 if last else 0
            page, nxt = after(start, size("limit"))
            if style == "clever":
                return {"data": page}, {}
            return {"object": "list", "data": page, "has_more": nxt is not None}, {}
        if style in ("drf", "offset", "text"):
            start = int(q.get("offset", 0))
            page, nxt = after(start, size("limit"))
            if style == "offset":
                return {"data": page, "total": len(items)}, {}
            if style == "text":
                return {"result": page, "count": len(items)}, {}
            link = (
                None
                if nxt is None
                else f"{self.base_url}{path}?{urlencode({'limit': size('limit'), 'offset': nxt})}"
            )
            return {"count": len(items), "next": link, "previous": None, "results": page}, {}
        if style == "pageno":  # a page number, and nothing in the answer but the items and a total
            per = size("pagesize")
            page, _ = after((int(float(q.get("pageno", 1))) - 1) * per, per)
            return {"Entities": page, "Metadata": {"total": len(items)}}, {}
        if style in ("hal", "github", "page"):
            per = size({"hal": "size", "github": "per_page", "page": "per_page"}[style])
            number = int(q.get("page", 1))
            page, nxt = after((number - 1) * per, per)
            following = (
                f"{path}?{urlencode({'page': number + 1, ('size' if style == 'hal' else 'per_page'): per})}"
            )
            if style == "hal":
                links: dict[str, Any] = {"self": {"href": path}}
                if nxt is not None:
                    links["next"] = {"href": following}  # relative, as HAL allows
                return {"_embedded": {"orders": page}, "_links": links}, {}
            if style == "github":
                return page, (
                    {"Link": f'<{self.base_url}{following}>; rel="next"'} if nxt is not None else {}
                )
            return {"items": page, "total_pages": -(-len(items) // per)}, {}
        if style == "vercel":
            until = q.get("until")
            rest = [it for it in items if until is None or it["created"] < float(until)]
            page = rest[: size("limit")]
            more = len(rest) > len(page)
            return {
                "deployments": page,
                "pagination": {
                    "count": len(page),
                    "next": page[-1]["created"] if more else None,
                    "prev": None,
                },
            }, {}
        if style in ("odata", "azure"):
            start = int(q.get("$skip" if style == "odata" else "$skiptoken", 0))
            page, nxt = after(start, size("$top"))
            if nxt is None:
                return {"value": page}, {}
            if style == "odata":
                return {
                    "value": page,
                    "@odata.nextLink": f"{self.base_url}{path}?$top={size('$top')}&$skip={nxt}",
                }, {}
            return {
                "value": page,
                "nextLink": f"{self.base_url}{path}?api-version={q['api-version']}&$skiptoken={nxt}",
            }, {}
        raise KeyError(style)
