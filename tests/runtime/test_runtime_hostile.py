"""A hostile API (and a careless caller) against the runtime's promises, over real HTTP on loopback.

Each test reproduces one attack and asserts the promise it attacks:

- Link pagination never leaves the API's origin: a ``rel="next"`` URL on another port (whose text
  starts with the origin's), another host, behind ``origin@`` userinfo or as a network-path
  reference ends the walk (``next_cursor`` null), and a cursor forged with the registry's own key for
  such a URL (or for a look-alike such as ``https://api.github.com.evil.invalid``) is
  ``invalid_cursor``: no request, and so no credential, ever reaches the other server;
- a relative Link target (RFC 8288) is followed to the next page;
- a credential sent as a query parameter and echoed by the API into its Link URL never appears in
  the (readable) cursor payload, and the next page carries the key exactly once;
- a credential echoed in a JSON body in UTF-16/32 never reaches the result or the audit log;
- an API's error body is bounded (about 2 KB of JSON) and carries no value of a redacted field;
- a body that trickles in byte by byte cannot stretch a call past its deadline (sync and async);
- a blank or padded idempotency key sent as a header is ``invalid_arguments``: nothing is sent and
  no receipt is written;
- shaping a multi-megabyte item to the size budget takes one pass, not minutes;
- a cancelled ``acall`` settles its receipt as ``unknown`` when the cancellation is delivered;
- a failing audit sink never turns into a raise, a write sent unaudited or a ``pending`` receipt;
- NaN and Infinity in a JSON body are not a result, and ``toolgen call`` prints valid JSON;
- a budget-cut page whose last shown item has no cursor field still walks every item exactly once;
- a base URL with ``user:password@`` is refused when the registry is built;
- over MCP, a list page whose first item alone exceeds the size budget is a normal result that
  conforms to the tool's outputSchema and carries a ``next_cursor``.
"""

from __future__ import annotations

import asyncio
import base64
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import httpx
import jsonschema_rs
import pytest
from tests.support.fault_server import Fault, FaultServer
from tests.support.hostile_server import HostileServer, RawRequest, prefix_port_pair, response, trickle
from tests.support.recording_server import RecordingServer
from tests.support.records import acall_record, call_record
from tests.support.runtime_env import GENERATED, tickets_dir

from toolgen.runtime import (
    Actor,
    Approval,
    AuditEvent,
    MemoryAuditSink,
    MemoryReceiptStore,
    Registry,
    StaticCredentials,
)
from toolgen.runtime.call.shaping import compact_size, shrink

TOOLGEN = shutil.which("toolgen") or str(Path(sys.executable).parent / "toolgen")

SECRETS = {
    "TICKETS_TOKEN": "tkt_live_HOSTILE_5e7f1a2b9c",
    "GITHUB_TOKEN": "ghp_liveHOSTILE0123456789abcdef",
    "API_KEY": "sk_live_HOSTILE_query_7d3c",
}
CURSOR_KEY = b"k" * 32

READER = Actor.of("reader", ["ticket:read"])
WRITER = Actor.of("writer", ["ticket:read", "ticket:write"])
ISSUES_READER = Actor.of("issues-reader", ["issues:read"])

FOLLOWUP = "record_ticket_followup"
FOLLOWUP_SCOPE = f"tickets/{FOLLOWUP}"
FOLLOWUPS = r"^/v1/tickets/T-[0-9]+/followups$"
FOLLOWUP_ARGS: dict[str, Any] = {"ticket_id": "T-102", "note": "Called the customer back.", "visibility": "public"}
FOLLOWUP_CREATED: dict[str, Any] = {"id": "F-1", "ticket_id": "T-102", "visibility": "public",
                                    "created_at": "2024-01-01T00:00:00Z"}

ISSUES = "list_issues"
ISSUES_PATH = "/repos/o/r/issues"
ISSUE_ARGS: dict[str, Any] = {"owner": "o", "repo": "r"}

#: The most of an API's error body a structured error may carry (bytes of compact JSON), and the
#: allowance for the rest of the error's details (status, operation).
PROBLEM_BYTES = 2000
DETAILS_ALLOWANCE = 200
#: Scheduling allowance for timing bounds on a loaded two-core machine (seconds).
SCHEDULING_SLACK_S = 0.25


# --------------------------------------------------------------------------------------------------
# registries over the committed packages, changed in memory only


def load_package(api: str) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    folder = GENERATED / api
    if not (folder / "policy.json").is_file():
        pytest.skip(f"generated/{api} is not built")
    policy: dict[str, Any] = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    catalog: list[Mapping[str, Any]] = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
    return policy, catalog


def row_of(policy: dict[str, Any], tool: str) -> dict[str, Any]:
    row: dict[str, Any] = next(r for r in policy["tools"] if r["tool"] == tool)
    return row


def tickets_registry(server_base: str, *, tweak: Callable[[dict[str, Any]], None] | None = None,
                     audit: MemoryAuditSink | None = None) -> Registry:
    """The tickets package against `server_base` (its ``/v1`` prefix added)."""
    policy, catalog = load_package("tickets")
    if tweak is not None:
        for row in policy["tools"]:
            tweak(row)
    return Registry(policy, catalog, base_url=server_base + "/v1", credentials=StaticCredentials(SECRETS),
                    receipts=MemoryReceiptStore(), audit=audit if audit is not None else MemoryAuditSink(),
                    cursor_key=CURSOR_KEY)


def issues_registry(base_url: str, *, query_key: bool = False, link: bool = True,
                    http_client: httpx.Client | None = None) -> Registry:
    """The GitHub package; with `link` its `list_issues` is paginated by ``Link`` headers (as GitHub
    does), with `query_key` its credential is an API key sent as the query parameter ``api_key``."""
    policy, catalog = load_package("github")
    row = row_of(policy, ISSUES)
    if link:
        row["pagination"].update(style="link", cursor_param=None)
    if query_key:
        row["auth"] = [{"in": "query", "kind": "apiKey", "name": "api_key", "scheme": "api_key", "scopes": [],
                        "secret": "API_KEY", "per_caller": None}]
    return Registry(policy, catalog, base_url=base_url, credentials=StaticCredentials(SECRETS),
                    receipts=MemoryReceiptStore(), audit=MemoryAuditSink(), cursor_key=CURSOR_KEY,
                    http_client=http_client)


def one_attempt(row: dict[str, Any]) -> None:
    """No retries: the call's deadline is its per-attempt timeout."""
    if row.get("retry"):
        row["retry"]["max_attempts"] = 1


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> bytes:
    return response(status, json.dumps(body).encode("utf-8"), {"Content-Type": "application/json", **(headers or {})})


def issue(number: int, **extra: Any) -> dict[str, Any]:
    """A GitHub issue with every field the list_issues output schema requires."""
    return {"number": number, "title": f"issue {number}", "state": "open", "labels": [], "comments": 0,
            "user": {"login": "octocat"}, "updated_at": "2024-01-01T00:00:00Z",
            "html_url": f"https://github.com/o/r/issues/{number}", **extra}


def cursor_payload(token: str) -> str:
    """The readable part of a runtime cursor: the base64url JSON before the dot."""
    body = token.split(".", 1)[0]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("utf-8")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(text: str) -> Any:
    """`text` parsed as RFC 8259 JSON: NaN, Infinity and -Infinity are refused."""
    return json.loads(text, parse_constant=_refuse_constant)


def audit_text(sink: MemoryAuditSink) -> str:
    return json.dumps([e.to_json() for e in sink.events], default=str)


class _Expired(Exception):
    """Raised by the SIGALRM handler of `time_limit`."""


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Fail the block after `seconds` (SIGALRM; where it is unavailable the block runs unguarded)."""
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise _Expired

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    except _Expired:
        pytest.fail(f"did not finish within {seconds} s", pytrace=False)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    with HostileServer() as srv:
        yield srv


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
    "origin_as_userinfo": lambda api, other: f"http://127.0.0.1:{api.port}@127.0.0.1:{other.port}/exfil?page=2",
    "network_path_reference": lambda api, other: f"//127.0.0.1:{other.port}/exfil?page=2",
}


@pytest.mark.parametrize("case", sorted(LINK_ESCAPES))
def test_link_next_elsewhere_ends_the_walk_and_a_forged_cursor_for_it_is_refused(
        case: str, origin_pair: tuple[HostileServer, HostileServer]) -> None:
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

    forged = reg.cursors.encode(f"{reg.api}/{ISSUES}", {"c": target, "n": 2})
    res = reg.call(ISSUES, dict(ISSUE_ARGS, cursor=forged), actor=ISSUES_READER)
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.code == "invalid_cursor", res.to_json()
    assert res.error.details.get("pointer") == "/cursor"

    assert len(api.requests) == 1
    assert other.requests == [], f"the other server was called: {[r.target for r in other.requests]}"
    assert not any(r.header_values("Authorization") for r in other.requests)


@pytest.mark.parametrize(("url", "accepted"), [
    ("https://api.github.com/repos/o/r/issues?page=2", True),  # the origin itself: followed
    ("https://api.github.com.evil.invalid/repos/o/r/issues?page=2", False),
    ("https://api.github.com@evil.invalid/repos/o/r/issues?page=2", False),
    ("https://api.github.com:443@evil.invalid/repos/o/r/issues?page=2", False),
    ("https://user@api.github.com/repos/o/r/issues?page=2", False),
    ("https://api.github.com:8443/repos/o/r/issues?page=2", False),
    ("http://api.github.com/repos/o/r/issues?page=2", False),
])
def test_forged_link_cursor_for_a_look_alike_origin_is_refused_before_sending(url: str, accepted: bool) -> None:
    sent: list[httpx.Request] = []

    def transport(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json=[])

    with httpx.Client(transport=httpx.MockTransport(transport)) as client:
        reg = issues_registry("https://api.github.com", http_client=client)
        forged = reg.cursors.encode(f"{reg.api}/{ISSUES}", {"c": url, "n": 2})
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


@pytest.mark.parametrize("encode", [lambda s: s, lambda s: s.replace("_", "%5F", 1), lambda s: quote(s, safe="")],
                         ids=["as_is", "partly_percent_encoded", "percent_encoded"])
def test_bearer_token_echoed_into_the_link_never_reaches_the_cursor(encode: Callable[[str], str],
                                                                    hostile: HostileServer) -> None:
    """A header credential the API copies into its Link target, in any percent-encoding (RFC 3986
    2.3: ``%5F`` is ``_`` to the API): the walk ends rather than put it in a readable cursor."""
    secret = SECRETS["GITHUB_TOKEN"]

    def api(req: RawRequest) -> bytes:
        if ("page", "2") in req.query:
            return json_response([issue(2)])
        link = f"<{hostile.base_url}{req.path}?sig={encode(secret)}&page=2>; rel=\"next\""
        return json_response([issue(1)], headers={"Link": link})

    hostile.handler = api
    reg = issues_registry(hostile.base_url)
    first = reg.call(ISSUES, ISSUE_ARGS, actor=ISSUES_READER)
    assert first.ok and first.result is not None, first.to_json()
    token = first.result["next_cursor"]
    assert token is None or secret not in unquote(cursor_payload(token)), cursor_payload(token)


@pytest.mark.parametrize("echo", ["under_its_own_name", "under_another_name", "partly_percent_encoded"])
def test_query_credential_echoed_into_the_link_never_reaches_the_cursor(echo: str, hostile: HostileServer) -> None:
    secret = SECRETS["API_KEY"]
    # RFC 3986 2.3: an unreserved character percent-encoded is the same character to the API
    echoed = {"under_another_name": secret, "partly_percent_encoded": secret.replace("_", "%5F", 1)}.get(echo)

    def api(req: RawRequest) -> bytes:
        if ("page", "2") in req.query:
            return json_response([issue(2)])
        query = req.raw_query + (f"&sig={echoed}" if echoed else "")
        link = f"<{hostile.base_url}{req.path}?{query}&page=2>; rel=\"next\""
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
# 4-5. bodies: other encodings, error bodies


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_secret_echoed_in_a_non_utf8_json_body_never_reaches_the_result(encoding: str,
                                                                        hostile: HostileServer) -> None:
    secret = SECRETS["TICKETS_TOKEN"]

    def api(req: RawRequest) -> bytes:
        body = {"id": "T-1", "subject": "debug: " + (req.header("Authorization") or ""), "status": "open"}
        return response(200, json.dumps(body).encode(encoding), {"Content-Type": "application/json"})

    hostile.handler = api
    audit = MemoryAuditSink()
    reg = tickets_registry(hostile.base_url, audit=audit)
    res = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
    assert hostile.requests[0].header("Authorization") == f"Bearer {secret}"
    assert res.ok and res.warnings and res.result is not None, res.to_json()  # a 200 that cannot be read
    assert set(res.result) == {"status", "_unreadable_body"}, res.to_json()
    shown = json.dumps(res.to_json())
    assert secret not in shown and secret not in shown.replace("\\u0000", ""), shown
    assert secret not in audit_text(audit)


def test_error_body_is_bounded_and_carries_no_redacted_value(recorder: RecordingServer) -> None:
    phone, ssn = "+1-555-0100", "123-45-6789"
    body = {"type": "about:blank", "title": "Unprocessable", "status": 422,
            "errors": [{"ticket": {"requester": {"phone": phone, "ssn": ssn}}, "blob": "A" * 200}] * 20000}
    recorder.reply("GET", r"^/v1/tickets/", status=422, body=body, content_type="application/problem+json")
    reg = tickets_registry(recorder.base_url)
    assert "requester.phone" in reg.row_json("get_ticket")["output"]["redact"]

    res = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.code == "upstream_rejected"
    assert compact_size(res.error.details) <= PROBLEM_BYTES + DETAILS_ALLOWANCE, compact_size(res.error.details)
    assert res.error.details["problem"]["title"] == "Unprocessable"
    out = json.dumps(res.to_json())
    assert phone not in out and ssn not in out


def test_small_error_body_echoing_a_redacted_field_carries_no_redacted_value(recorder: RecordingServer) -> None:
    phone = "+1-555-0100"
    body = {"title": "Unprocessable", "status": 422,
            "errors": [{"field": "requester", "requester": {"phone": phone, "name": "Ada"}}]}
    recorder.reply("GET", r"^/v1/tickets/", status=422, body=body, content_type="application/problem+json")
    reg = tickets_registry(recorder.base_url)
    res = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
    assert not res.ok and res.error is not None and res.error.code == "upstream_rejected", res.to_json()
    assert phone not in json.dumps(res.to_json())


# --------------------------------------------------------------------------------------------------
# 6. deadlines against a body that trickles in

TRICKLE_TIMEOUT_MS = 600
TRICKLE_DELAY_S = 0.3


@pytest.fixture
def trickling(hostile: HostileServer) -> HostileServer:
    """An API whose get_ticket body arrives one byte every 0.3 s (about 20 s in all)."""
    body = json.dumps({"id": "T-1", "subject": "s" * 40, "status": "open"}).encode()
    hostile.handler = lambda req: trickle(200, body, TRICKLE_DELAY_S, {"Content-Type": "application/json"})
    return hostile


def test_trickling_body_cannot_stretch_a_sync_call_past_its_deadline(trickling: HostileServer) -> None:
    reg = tickets_registry(trickling.base_url, tweak=one_attempt)
    started = time.monotonic()
    res = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER, timeout_ms=TRICKLE_TIMEOUT_MS)
    elapsed = time.monotonic() - started
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.code == "tool_timeout", res.to_json()
    # the deadline (one attempt: the timeout) plus at most one socket read that began before it
    assert elapsed <= 2 * TRICKLE_TIMEOUT_MS / 1000 + SCHEDULING_SLACK_S, f"took {elapsed:.2f} s"
    assert len(trickling.requests) == 1


@pytest.mark.anyio
async def test_trickling_body_cannot_stretch_an_async_call_past_its_deadline(trickling: HostileServer) -> None:
    reg = tickets_registry(trickling.base_url, tweak=one_attempt)
    try:
        started = time.monotonic()
        res = await reg.acall("get_ticket", {"ticket_id": "T-1"}, actor=READER, timeout_ms=TRICKLE_TIMEOUT_MS)
        elapsed = time.monotonic() - started
    finally:
        await reg.aclose()
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.code == "tool_timeout", res.to_json()
    assert elapsed <= 1.2 * TRICKLE_TIMEOUT_MS / 1000 + SCHEDULING_SLACK_S, f"took {elapsed:.2f} s"


# --------------------------------------------------------------------------------------------------
# 7. idempotency keys that HTTP would rewrite


@pytest.mark.parametrize("key", ["   ", " k1", "k1 ", "\tk1"])
def test_blank_or_padded_header_key_is_refused_before_anything_happens(key: str, recorder: RecordingServer) -> None:
    recorder.reply("POST", FOLLOWUPS, status=201, body=FOLLOWUP_CREATED)
    reg = tickets_registry(recorder.base_url)
    assert reg.row_json(FOLLOWUP)["idempotency"]["in"] == "header"
    preview = reg.call("preview_ticket_followup", FOLLOWUP_ARGS, actor=WRITER)
    assert preview.ok and preview.result is not None, preview.to_json()
    approval = Approval(preview.result["preview_id"])

    res = call_record(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id=key), actor=WRITER, approval=approval)
    assert not res.ok and res.error is not None, res.to_json()
    assert res.error.code == "invalid_arguments", res.to_json()
    assert res.error.details.get("pointer") == "/action_id"
    assert recorder.requests == []
    assert reg.receipts.get(FOLLOWUP_SCOPE, key) is None

    # nothing was spent: the same approval sends the write once under a proper key
    ok = call_record(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="k1"), actor=WRITER, approval=approval)
    assert ok.ok, ok.to_json()
    assert [r.header("Idempotency-Key") for r in recorder.requests] == ["k1"]


# --------------------------------------------------------------------------------------------------
# 8. shaping cost


def test_shrinking_a_five_megabyte_item_is_one_pass() -> None:
    item: dict[str, Any] = {
        "id": "T-big",
        "status": "open",
        "description": "d" * 500_000,
        "comments": [{"id": n, "body": "y" * 100, "tags": ["a", "b"]} for n in range(25_000)],
        "labels": ["x" * 60 for _ in range(25_000)],
    }
    size = compact_size(item)
    assert size > 5_000_000
    budget = 4000
    with time_limit(20):  # the old algorithm re-serialised the whole item for every string it cut
        out, changed = shrink(item, budget)
    assert changed
    assert compact_size(out) <= budget
    assert out["id"] == "T-big" and out["status"] == "open"
    assert isinstance(out["comments"], list) and isinstance(out["labels"], list)
    assert len(item["comments"]) == 25_000 and len(item["description"]) == 500_000  # the input is untouched


# --------------------------------------------------------------------------------------------------
# 9. cancellation


@pytest.mark.anyio
async def test_cancelled_acall_leaves_its_receipt_unknown_at_once() -> None:
    key = "cancel-1"
    with FaultServer(honours_keys=True) as fault:
        fault.route("POST", FOLLOWUPS, status=201, body=FOLLOWUP_CREATED)
        fault.script("POST", FOLLOWUPS, Fault.hang(5.0))
        reg = tickets_registry(fault.base_url)
        try:
            preview = await reg.acall("preview_ticket_followup", FOLLOWUP_ARGS, actor=WRITER)
            assert preview.ok and preview.result is not None, preview.to_json()
            approval = Approval(preview.result["preview_id"])
            task = asyncio.ensure_future(
                reg.acall(FOLLOWUP, {"preview_id": approval.preview_id, "action_id": key}, actor=WRITER,
                          approval=approval))
            for _ in range(500):  # until the API holds the request (at most 5 s)
                if fault.requests_for(key=key) or task.done():
                    break
                await asyncio.sleep(0.01)
            assert fault.requests_for(key=key), "the write never reached the API"
            receipt = reg.receipts.get(FOLLOWUP_SCOPE, key)
            assert receipt is not None and receipt.state == "pending"

            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            # the task object is still referenced: the receipt was settled by the cancellation itself
            receipt = reg.receipts.get(FOLLOWUP_SCOPE, key)
            assert receipt is not None and receipt.state == "unknown", receipt

            again = await acall_record(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id=key), actor=WRITER, approval=approval)
            assert again.error is None or again.error.code != "idempotency_in_progress", again.to_json()
            assert again.ok, again.to_json()  # the API deduplicates the key: re-sent, answered by its replay
            assert fault.side_effects_for(key) == 1
        finally:
            await reg.aclose()


# --------------------------------------------------------------------------------------------------
# 10. a failing audit sink


class FailingSink(MemoryAuditSink):
    """An audit sink that raises (disk full) for the events of one call-path step (``*``: all)."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: str | None = None

    def emit(self, event: AuditEvent) -> None:
        if self.failing is not None and self.failing in (event.step, "*"):
            raise OSError(errno.ENOSPC, "No space left on device")
        super().emit(event)


BEFORE_SENDING = ["*", "find", "validate", "permission", "approval", "timeout", "idempotency"]
AFTER_SENDING = ["http", "output", "result"]


@pytest.mark.parametrize("step", BEFORE_SENDING + AFTER_SENDING)
def test_failing_audit_sink_never_raises_sends_unaudited_or_leaves_a_pending_receipt(step: str) -> None:
    key = f"audit-{step}"
    with FaultServer(honours_keys=True) as fault:
        fault.route("POST", FOLLOWUPS, status=201, body=FOLLOWUP_CREATED)
        sink = FailingSink()
        reg = tickets_registry(fault.base_url, audit=sink)
        preview = reg.call("preview_ticket_followup", FOLLOWUP_ARGS, actor=WRITER)
        assert preview.ok and preview.result is not None, preview.to_json()
        approval = Approval(preview.result["preview_id"])

        sink.failing = step
        res = call_record(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id=key), actor=WRITER, approval=approval)
        receipt = reg.receipts.get(FOLLOWUP_SCOPE, key)
        assert receipt is None or receipt.state != "pending", receipt
        if step in AFTER_SENDING:
            assert res.ok, res.to_json()  # the write happened: its real outcome is returned
            assert len(fault.requests) == 1
            assert receipt is not None and receipt.state == "completed"
            return
        assert not res.ok and res.error is not None, res.to_json()
        assert res.error.code == "internal_error", res.to_json()
        assert fault.requests == [], "a write was sent although its audit failed"
        assert receipt is None  # released: the key is free again

        sink.failing = None
        retry = call_record(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id=key), actor=WRITER, approval=approval)
        assert retry.ok, retry.to_json()
        assert fault.side_effects_for(key) == 1


def test_call_stopped_by_a_failing_audit_sink_leaves_its_approval_unspent() -> None:
    with FaultServer(honours_keys=True) as fault:
        fault.route("POST", FOLLOWUPS, status=201, body=FOLLOWUP_CREATED)
        sink = FailingSink()
        reg = tickets_registry(fault.base_url, audit=sink)
        preview = reg.call("preview_ticket_followup", FOLLOWUP_ARGS, actor=WRITER)
        assert preview.ok and preview.result is not None, preview.to_json()
        approval = Approval(preview.result["preview_id"])
        sink.failing = "idempotency"
        stopped = call_record(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="audit-a"), actor=WRITER, approval=approval)
        assert stopped.error is not None and stopped.error.code == "internal_error", stopped.to_json()
        assert fault.requests == []
        sink.failing = None
        fresh = call_record(reg, FOLLOWUP, dict(FOLLOWUP_ARGS, action_id="audit-b"), actor=WRITER, approval=approval)
        assert fresh.ok, fresh.to_json()


# --------------------------------------------------------------------------------------------------
# 11. NaN and Infinity

NOT_JSON_NUMBERS = [
    pytest.param("NaN", id="NaN"),
    pytest.param("Infinity", id="Infinity"),
    pytest.param("-Infinity", id="-Infinity"),
    pytest.param("1e999", id="1e999"),
]


def not_json_body(number: str) -> bytes:
    return ('{"id":"T-1","subject":"s","status":"open","priority":"low","followup_count":' + number + "}").encode()


@pytest.mark.parametrize("number", NOT_JSON_NUMBERS)
def test_nan_or_infinity_in_a_body_is_not_a_result(number: str, recorder: RecordingServer) -> None:
    recorder.reply("GET", r"^/v1/tickets/", body=not_json_body(number))
    reg = tickets_registry(recorder.base_url)
    res = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
    strict_json(json.dumps(res.to_json()))
    assert res.ok and res.warnings and res.result is not None, res.to_json()  # a 200 that is not JSON
    assert set(res.result) == {"status", "_unreadable_body"}, res.to_json()


@pytest.mark.parametrize("number", [NOT_JSON_NUMBERS[0], NOT_JSON_NUMBERS[3]])
def test_toolgen_call_prints_valid_json_for_a_nan_body(number: str, recorder: RecordingServer,
                                                      tmp_path: Path) -> None:
    recorder.reply("GET", r"^/v1/tickets/", body=not_json_body(number))
    policy, _ = load_package("tickets")
    names = [str(a["secret"]) for a in row_of(policy, "get_ticket")["auth"]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLGEN_")}
    env.update({name: SECRETS["TICKETS_TOKEN"] for name in names})
    proc = subprocess.run(
        [TOOLGEN, "call", str(tickets_dir()), "get_ticket", "--args", json.dumps({"ticket_id": "T-1"}),
         "--base-url", recorder.base_url + "/v1", "--receipts", "memory://", "--scopes", "ticket:read"],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path, check=False,
    )
    assert recorder.requests and recorder.last.header("Authorization") == f"Bearer {SECRETS['TICKETS_TOKEN']}"
    out = strict_json(proc.stdout)
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr[-500:])
    assert out["ok"] is True and out["warnings"] and "_unreadable_body" in out["result"], out
    assert SECRETS["TICKETS_TOKEN"] not in proc.stdout + proc.stderr


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
    items: list[dict[str, Any]] = [{"id": f"T-{i:03d}", "subject": s, "status": "open"}
                                   for i, s in enumerate(subjects)]
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
# 13. credentials in the base URL


@pytest.mark.parametrize("base_url", ["http://gw:gw_PASSWORD@127.0.0.1:9/v1", "http://gw_PASSWORD@127.0.0.1:9/v1",
                                      "https://gw:gw_PASSWORD@api.example.com/v1"])
def test_base_url_with_userinfo_is_refused_at_construction(base_url: str) -> None:
    with pytest.raises(ValueError) as refused:
        Registry.from_dir(tickets_dir(), base_url=base_url, credentials=StaticCredentials(SECRETS),
                          cursor_key=CURSOR_KEY)
    assert "gw_PASSWORD" not in str(refused.value)
    policy, catalog = load_package("tickets")
    policy["base_url"] = base_url
    with pytest.raises(ValueError):
        Registry(policy, catalog, credentials=StaticCredentials(SECRETS), cursor_key=CURSOR_KEY)


# --------------------------------------------------------------------------------------------------
# 14. MCP: one list item larger than the whole budget

LONG_HTML_URL = "https://github.com/an-organisation-with-a-long-name/a-repository-with-a-long-name/issues/1"


@pytest.mark.anyio
@pytest.mark.parametrize("html_url", [
    pytest.param("https://github.com/o/r/issues/1", id="short_url"),
    pytest.param(LONG_HTML_URL, id="url_over_64_chars"),
])
async def test_mcp_oversized_list_item_is_a_conforming_page_with_a_cursor(html_url: str,
                                                                          recorder: RecordingServer) -> None:
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
