"""A hostile API against the runtime's pagination, over real HTTP on loopback. Each test reproduces
one attack and asserts the promise it attacks:

- Link pagination never leaves the API's origin: a ``rel="next"`` URL on another port (whose text
  starts with the origin's), another host, behind ``origin@`` userinfo or as a network-path
  reference ends the walk (``next_cursor`` null), and a cursor forged with the registry's own key for
  such a URL (or for a look-alike such as ``https://api.github.com.evil.invalid``) is
  ``invalid_cursor``: no request, and so no credential, ever reaches the other server;
- a relative Link target (RFC 8288) is followed to the next page;
- a credential sent as a query parameter and echoed by the API into its Link URL never appears in
  the (readable) cursor payload, and the next page carries the key exactly once;
- a budget-cut page whose last shown item has no cursor field still walks every item exactly once;
- over MCP, a list page whose first item alone exceeds the size budget is a normal result that
  conforms to the tool's outputSchema and carries a ``next_cursor``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote, unquote

import httpx
import jsonschema_rs
import pytest
from tests.support.fault_server import FaultServer
from tests.support.hostile_registries import (
    CURSOR_KEY,
    READER,
    SECRETS,
    row_of,
    tickets_registry,
)
from tests.support.hostile_server import HostileServer, RawRequest, prefix_port_pair, response
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import load_package

from toolgen.runtime import Actor, MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.call.shaping import compact_size

ISSUES_READER = Actor.of("issues-reader", ["issues:read"])

ISSUES = "list_issues"
ISSUES_PATH = "/repos/o/r/issues"
ISSUE_ARGS: dict[str, Any] = {"owner": "o", "repo": "r"}


def issues_registry(
    base_url: str, *, query_key: bool = False, link: bool = True, http_client: httpx.Client | None = None
) -> Registry:
    """The GitHub package; with `link` its `list_issues` is paginated by ``Link`` headers (as GitHub
    does), with `query_key` its credential is an API key sent as the query parameter ``api_key``."""
    policy, catalog = load_package("github")
    row = row_of(policy, ISSUES)
    if link:
        row["pagination"].update(style="link", cursor_param=None)
    if query_key:
        row["auth"] = [
            {
                "in": "query",
                "kind": "apiKey",
                "name": "api_key",
                "scheme": "api_key",
                "scopes": [],
                "secret": "API_KEY",
                "per_caller": None,
            }
        ]
    return Registry(
        policy,
        list(catalog),
        base_url=base_url,
        credentials=StaticCredentials(SECRETS),
        receipts=MemoryReceiptStore(),
        audit=MemoryAuditSink(),
        cursor_key=CURSOR_KEY,
        http_client=http_client,
    )


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> bytes:
    return response(
        status, json.dumps(body).encode("utf-8"), {"Content-Type": "application/json", **(headers or {})}
    )


def issue(number: int, **extra: Any) -> dict[str, Any]:
    """A GitHub issue with every field the list_issues output schema requires."""
    return {
        "number": number,
        "title": f"issue {number}",
        "state": "open",
        "labels": [],
        "comments": 0,
        "user": {"login": "octocat"},
        "updated_at": "2024-01-01T00:00:00Z",
        "html_url": f"https://github.com/o/r/issues/{number}",
        **extra,
    }


def cursor_payload(token: str) -> str:
    """The readable part of a runtime cursor: the base64url JSON before the dot."""
    body = token.split(".", 1)[0]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8")


@pytest.fixture
def origin_pair() -> Iterator[tuple[HostileServer, HostileServer]]:
    """(the API, another server) on loopback; the other server's URL starts with the API's origin
    text (``http://127.0.0.1:4711`` and ``http://127.0.0.1:47113``)."""
    api, other = prefix_port_pair()
    try:
        yield api, other
    finally:
        api.stop()
        other.stop()


# --------------------------------------------------------------------------------------------------
# 1-3. Link pagination: the origin, relative targets, credentials in the link


LINK_ESCAPES: dict[str, Callable[[HostileServer, HostileServer], str]] = {
    "other_port_sharing_the_origin_text": lambda api, other: f"{other.base_url}/exfil?page=2",
    "other_host": lambda api, other: f"http://localhost:{other.port}/exfil?page=2",
    "origin_as_userinfo": lambda api, other: (
        f"http://127.0.0.1:{api.port}@127.0.0.1:{other.port}/exfil?page=2"
    ),
    "network_path_reference": lambda api, other: f"//127.0.0.1:{other.port}/exfil?page=2",
}


@pytest.mark.parametrize("case", sorted(LINK_ESCAPES))
def test_link_next_elsewhere_ends_the_walk_and_a_forged_cursor_for_it_is_refused(
    case: str, origin_pair: tuple[HostileServer, HostileServer]
) -> None:
    api, other = origin_pair
    assert other.base_url.startswith(api.base_url)
    target = LINK_ESCAPES[case](api, other)
    api.handler = lambda req: json_response([issue(1)], headers={"Link": f'<{target}>; rel="next"'})
    other.handler = lambda req: json_response([issue(666)])
    reg = issues_registry(api.base_url)

    page = reg.call(ISSUES, ISSUE_ARGS, actor=ISSUES_READER)
    assert page.ok and page.result is not None, page.to_json()
    assert [i["number"] for i in page.result["items"]] == [1]
    assert page.result["next_cursor"] is None, f"a cursor was issued for {target}"

    forged = reg.cursors.encode(f"{reg.api}/{ISSUES}", {"c": target, "n": 2, "h": []})
    res = reg.call(ISSUES, dict(ISSUE_ARGS, cursor=forged), actor=ISSUES_READER)
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.code == "invalid_cursor", res.to_json()
    assert res.error.details.get("pointer") == "/cursor"

    assert len(api.requests) == 1
    assert other.requests == [], f"the other server was called: {[r.target for r in other.requests]}"
    assert not any(r.header_values("Authorization") for r in other.requests)


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("https://api.github.com/repos/o/r/issues?page=2", True),  # the origin itself: followed
        ("https://api.github.com.evil.invalid/repos/o/r/issues?page=2", False),
        ("https://api.github.com@evil.invalid/repos/o/r/issues?page=2", False),
        ("https://api.github.com:443@evil.invalid/repos/o/r/issues?page=2", False),
        ("https://user@api.github.com/repos/o/r/issues?page=2", False),
        ("https://api.github.com:8443/repos/o/r/issues?page=2", False),
        ("http://api.github.com/repos/o/r/issues?page=2", False),
    ],
)
def test_forged_link_cursor_for_a_look_alike_origin_is_refused_before_sending(
    url: str, accepted: bool
) -> None:
    sent: list[httpx.Request] = []

    def transport(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json=[])

    with httpx.Client(transport=httpx.MockTransport(transport)) as client:
        reg = issues_registry("https://api.github.com", http_client=client)
        forged = reg.cursors.encode(f"{reg.api}/{ISSUES}", {"c": url, "n": 2, "h": []})
        res = reg.call(ISSUES, dict(ISSUE_ARGS, cursor=forged), actor=ISSUES_READER)
    if accepted:
        assert res.ok, res.to_json()
        assert [str(r.url) for r in sent] == [url]
    else:
        assert not res.ok and res.error is not None and res.error.code == "invalid_cursor", res.to_json()
        assert sent == []


@pytest.mark.parametrize("reference", ["/repos/o/r/issues?page=2", "issues?page=2", "?page=2"])
def test_relative_link_target_is_followed_to_page_two(reference: str, hostile: HostileServer) -> None:
    def api(req: RawRequest) -> bytes:
        if ("page", "2") in req.query:
            return json_response([issue(2)])
        return json_response([issue(1)], headers={"Link": f'<{reference}>; rel="next"'})

    hostile.handler = api
    reg = issues_registry(hostile.base_url)
    first = reg.call(ISSUES, ISSUE_ARGS, actor=ISSUES_READER)
    assert first.ok and first.result is not None, first.to_json()
    assert isinstance(first.result["next_cursor"], str)

    second = reg.call(ISSUES, dict(ISSUE_ARGS, cursor=first.result["next_cursor"]), actor=ISSUES_READER)
    assert second.ok and second.result is not None, second.to_json()
    assert [i["number"] for i in second.result["items"]] == [2]
    assert second.result["next_cursor"] is None
    assert [r.target for r in hostile.requests][-1] == "/repos/o/r/issues?page=2"


@pytest.mark.parametrize(
    "encode",
    [lambda s: s, lambda s: s.replace("_", "%5F", 1), lambda s: quote(s, safe="")],
    ids=["as_is", "partly_percent_encoded", "percent_encoded"],
)
def test_bearer_token_echoed_into_the_link_never_reaches_the_cursor(
    encode: Callable[[str], str], hostile: HostileServer
) -> None:
    """A header credential the API copies into its Link target, in any percent-encoding (RFC 3986
    2.3: ``%5F`` is ``_`` to the API): the walk ends rather than put it in a readable cursor."""
    secret = SECRETS["GITHUB_TOKEN"]

    def api(req: RawRequest) -> bytes:
        if ("page", "2") in req.query:
            return json_response([issue(2)])
        link = f'<{hostile.base_url}{req.path}?sig={encode(secret)}&page=2>; rel="next"'
        return json_response([issue(1)], headers={"Link": link})

    hostile.handler = api
    reg = issues_registry(hostile.base_url)
    first = reg.call(ISSUES, ISSUE_ARGS, actor=ISSUES_READER)
    assert first.ok and first.result is not None, first.to_json()
    token = first.result["next_cursor"]
    assert token is None or secret not in unquote(cursor_payload(token)), cursor_payload(token)


@pytest.mark.parametrize("echo", ["under_its_own_name", "under_another_name", "partly_percent_encoded"])
def test_query_credential_echoed_into_the_link_never_reaches_the_cursor(
    echo: str, hostile: HostileServer
) -> None:
    secret = SECRETS["API_KEY"]
    # RFC 3986 2.3: an unreserved character percent-encoded is the same character to the API
    echoed = {"under_another_name": secret, "partly_percent_encoded": secret.replace("_", "%5F", 1)}.get(echo)

    def api(req: RawRequest) -> bytes:
        if ("page", "2") in req.query:
            return json_response([issue(2)])
        query = req.raw_query + (f"&sig={echoed}" if echoed else "")
        link = f'<{hostile.base_url}{req.path}?{query}&page=2>; rel="next"'
        return json_response([issue(1)], headers={"Link": link})

    hostile.handler = api
    reg = issues_registry(hostile.base_url, query_key=True)
    first = reg.call(ISSUES, ISSUE_ARGS, actor=ISSUES_READER)
    assert first.ok and first.result is not None, first.to_json()
    assert [v for k, v in hostile.requests[0].query if k == "api_key"] == [secret], "the key was not sent"
    assert secret not in json.dumps(first.to_json())

    token = first.result["next_cursor"]
    if token is not None:
        payload = cursor_payload(token)
        assert secret not in payload and quote(secret, safe="") not in payload, payload
        assert secret not in unquote(payload), payload
        assert "api_key" not in payload, payload
    if echoed:
        assert token is None  # the link still holds the secret: the walk ends rather than carry it
        return

    assert token is not None  # without the key the link is a good next page
    second = reg.call(ISSUES, dict(ISSUE_ARGS, cursor=token), actor=ISSUES_READER)
    assert second.ok and second.result is not None, second.to_json()
    assert [i["number"] for i in second.result["items"]] == [2]
    wire = hostile.requests[-1]
    assert ("page", "2") in wire.query
    assert [v for k, v in wire.query if k == "api_key"] == [secret], wire.target.replace(secret, "<key>")


# --------------------------------------------------------------------------------------------------
# 12. pagination when the last shown item names no position


def _subjects(n: int) -> list[str]:
    return [f"item{i:02d} " + "x" * 3000 for i in range(n)]


def walk(reg: Registry, page_size: int, max_pages: int) -> tuple[list[str], list[dict[str, Any]]]:
    """Follow next_cursor from the first page, at most `max_pages` pages; (the subjects shown, in
    order, cut to their first six characters; the pages)."""
    seen: list[str] = []
    pages: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(max_pages):
        args: dict[str, Any] = {"page_size": page_size}
        if cursor is not None:
            args["cursor"] = cursor
        res = reg.call("list_tickets", args, actor=READER)
        assert res.ok and res.result is not None, res.to_json()
        pages.append(res.result)
        seen += [str(i.get("subject"))[:6] for i in res.result["items"]]
        cursor = res.result["next_cursor"]
        if cursor is None:
            break
    return seen, pages


def test_cut_page_without_item_ids_walks_every_item_once(recorder: RecordingServer) -> None:
    items = [{"subject": s, "status": "open"} for s in _subjects(10)]  # no "id": the cursor field
    recorder.reply("GET", r"^/v1/tickets$", body={"data": items, "has_more": True})
    reg = tickets_registry(recorder.base_url)
    assert reg.row_json("list_tickets")["pagination"]["cursor_from_item"] == "id"
    seen, pages = walk(reg, page_size=10, max_pages=8)
    assert "_truncated" in pages[0], "the first page was not cut by the size budget"
    assert seen == [f"item{i:02d}" for i in range(10)], seen
    assert pages[-1]["next_cursor"] is None, "following next_cursor never ended"


def test_cut_page_whose_last_shown_item_has_no_id_walks_every_item_once() -> None:
    subjects = _subjects(12)
    items: list[dict[str, Any]] = [
        {"id": f"T-{i:03d}", "subject": s, "status": "open"} for i, s in enumerate(subjects)
    ]
    with FaultServer() as fault:
        reg = tickets_registry(fault.base_url)
        budget = int(reg.row_json("list_tickets")["output"]["max_bytes"])
        # the first page is cut by the size budget; make its last shown item the one without an id
        shown = budget // (len(subjects[0]) + 60)
        assert 1 < shown < 6
        del items[shown - 1]["id"]
        fault.pages(r"^/v1/tickets$", items)
        seen, pages = walk(reg, page_size=6, max_pages=12)
    first = pages[0]
    assert "_truncated" in first and len(first["items"]) == shown, first.get("_truncated")
    assert "id" not in first["items"][-1]
    assert seen == [f"item{i:02d}" for i in range(12)], seen
    assert pages[-1]["next_cursor"] is None, "following next_cursor never ended"


# --------------------------------------------------------------------------------------------------
# 14. MCP: one list item larger than the whole budget

LONG_HTML_URL = "https://github.com/an-organisation-with-a-long-name/a-repository-with-a-long-name/issues/1"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "html_url",
    [
        pytest.param("https://github.com/o/r/issues/1", id="short_url"),
        pytest.param(LONG_HTML_URL, id="url_over_64_chars"),
    ],
)
async def test_mcp_oversized_list_item_is_a_conforming_page_with_a_cursor(
    html_url: str, recorder: RecordingServer
) -> None:
    from mcp import Client

    from toolgen.runtime.serving.mcp_server import build_server

    assert len(LONG_HTML_URL) > 64
    labels = [{"name": f"label-{n:05d}-" + "z" * 20} for n in range(2000)]
    page = [issue(1, html_url=html_url, labels=labels)] + [issue(n) for n in range(2, 21)]
    recorder.reply("GET", r"^/repos/o/r/issues$", body=page)
    reg = issues_registry(recorder.base_url, link=False)  # the committed package as it is (page style)
    budget = int(reg.row_json(ISSUES)["output"]["max_bytes"])
    assert compact_size(page[0]) > budget
    schema = reg.specs[ISSUES].output_schema
    assert schema is not None
    async with Client(build_server(reg, ISSUES_READER)) as client:
        res = await client.call_tool(ISSUES, ISSUE_ARGS)
    await reg.aclose()
    content = res.structured_content
    assert res.is_error is False, content
    assert isinstance(content, dict)
    validator = jsonschema_rs.Draft202012Validator(schema, validate_formats=True)
    assert validator.is_valid(content), [e.message for e in validator.iter_errors(content)][:3]
    assert [i["number"] for i in content["items"]] == [1]
    assert isinstance(content["next_cursor"], str)
    assert content.get("_truncated", {}).get("shortened_items") == 1
