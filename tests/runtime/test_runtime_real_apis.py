"""The generated GitHub and Stripe tools, run through the runtime against a recording loopback server:
request building (path encoding, query styles, JSON and form bodies with deepObject nesting, fixed
headers, credentials, the Stripe Idempotency-Key header) and the pagination cursor round trip."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest
from tests.support.recording_server import RecordingServer
from tests.support.records import call_record
from tests.support.runtime_env import GENERATED

from toolgen.runtime import Actor, Approval, MemoryReceiptStore, Registry, StaticCredentials

GITHUB = GENERATED / "github"
STRIPE = GENERATED / "stripe"


def _registry(folder: Path, recorder: RecordingServer, secrets: dict[str, str]) -> Registry:
    return Registry.from_dir(
        folder,
        base_url=recorder.base_url,
        credentials=StaticCredentials(secrets),
        receipts=MemoryReceiptStore(),
        cursor_key=b"c" * 32,
    )


def _actor(reg: Registry, tool: str) -> Actor:
    return Actor.of("t", reg.row_json(tool)["permission"])


def _approved(reg: Registry, record: str, args: dict[str, Any]) -> Approval:
    row = reg.row_json(record)
    key = (row.get("idempotency") or {}).get("arg")
    preview = reg.call(
        row["pair"], {k: v for k, v in args.items() if k != key}, actor=_actor(reg, row["pair"])
    )
    assert preview.ok, preview.to_json()
    return Approval(preview.result["preview_id"])  # type: ignore[index]


@pytest.fixture
def github(recorder: RecordingServer) -> Iterator[Registry]:
    if not (GITHUB / "policy.json").is_file():
        pytest.skip("generated/github not built")
    reg = _registry(GITHUB, recorder, {"GITHUB_TOKEN": "ghp_dummy"})
    yield reg
    reg.close()


@pytest.fixture
def stripe(recorder: RecordingServer) -> Iterator[Registry]:
    if not (STRIPE / "policy.json").is_file():
        pytest.skip("generated/stripe not built")
    reg = _registry(STRIPE, recorder, {"STRIPE_SECRET_KEY": "sk_test_dummy"})
    yield reg
    reg.close()


# --- GitHub ------------------------------------------------------------------------------------------


def test_github_path_params_fixed_headers_and_bearer(github: Registry, recorder: RecordingServer) -> None:
    recorder.reply(
        "GET",
        r"/issues/42$",
        body={
            "number": 42,
            "title": "Crash",
            "state": "open",
            "body": "x" * 50,
            "user": {"login": "octo", "id": 1},
            "labels": [{"name": "bug", "id": 9}],
        },
    )
    res = github.call(
        "get_issue",
        {"owner": "octo-org", "repo": "my.repo", "issue_number": 42},
        actor=_actor(github, "get_issue"),
    )
    assert res.ok, res.to_json()
    sent = recorder.last
    assert (sent.method, sent.path, sent.raw_query) == ("GET", "/repos/octo-org/my.repo/issues/42", "")
    assert sent.header("Authorization") == "Bearer ghp_dummy"
    assert sent.header("X-GitHub-Api-Version") == "2022-11-28"
    assert sent.header("Accept") == "application/vnd.github+json"
    assert res.result == {
        "number": 42,
        "title": "Crash",
        "state": "open",
        "body": "x" * 50,
        "user": {"login": "octo"},
        "labels": [{"name": "bug"}],
    }


def test_github_path_segments_are_percent_encoded(github: Registry, recorder: RecordingServer) -> None:
    args = {"owner": "octo", "repo": "app", "issue_number": 7, "name": "needs triage/ux?", "action_id": "a-1"}
    res = call_record(
        github,
        "record_remove_issue_label",
        args,
        actor=_actor(github, "record_remove_issue_label"),
        approval=_approved(github, "record_remove_issue_label", args),
    )
    assert res.ok, res.to_json()
    assert recorder.last.method == "DELETE"
    assert recorder.last.path == "/repos/octo/app/issues/7/labels/needs%20triage%2Fux%3F"


def test_github_json_body_exact(github: Registry, recorder: RecordingServer) -> None:
    args = {
        "owner": "octo",
        "repo": "app",
        "title": "Crash on start",
        "body": "Steps: …",
        "labels": ["bug", "p1"],
        "assignees": None,
        "action_id": "a-2",
    }
    res = call_record(
        github,
        "record_create_issue",
        args,
        actor=_actor(github, "record_create_issue"),
        approval=_approved(github, "record_create_issue", args),
    )
    assert res.ok, res.to_json()
    assert recorder.last.path == "/repos/octo/app/issues"
    assert recorder.last.json() == {"title": "Crash on start", "body": "Steps: …", "labels": ["bug", "p1"]}
    assert recorder.last.header("Content-Type") == "application/json"
    assert recorder.last.header("Idempotency-Key") is None  # GitHub has none: receipts only
    assert len(recorder.requests) == 1  # the preview sent nothing


def test_github_page_pagination_round_trip(github: Registry, recorder: RecordingServer) -> None:
    recorder.reply(
        "GET",
        r"/issues$",
        body=[{"number": n, "title": f"t{n}", "state": "open", "body": "long"} for n in (1, 2)],
    )
    args = {"owner": "octo", "repo": "app", "state": "all", "labels": "bug,ui", "page_size": 2}
    first = github.call("list_issues", args, actor=_actor(github, "list_issues"))
    assert first.ok and first.result is not None, first.to_json()
    assert [i["number"] for i in first.result["items"]] == [1, 2]
    assert "body" not in first.result["items"][0]
    assert dict(recorder.last.query) == {"state": "all", "labels": "bug,ui", "per_page": "2"}
    assert "page" not in dict(recorder.last.query)
    cursor = first.result["next_cursor"]
    assert isinstance(cursor, str)
    # page 2 holds other issues (the same ones again would be an API ignoring `page`: the listing ends)
    recorder.reply(
        "GET", r"/issues$", body=[{"number": n, "title": f"t{n}", "state": "open"} for n in (3, 4)]
    )
    second = github.call("list_issues", dict(args, cursor=cursor), actor=_actor(github, "list_issues"))
    assert second.ok
    assert dict(recorder.last.query)["page"] == "2" and dict(recorder.last.query)["per_page"] == "2"
    recorder.reply("GET", r"/issues$", body=[{"number": 5, "title": "t5", "state": "open"}])
    third = github.call(
        "list_issues",
        dict(args, cursor=second.result["next_cursor"]),  # type: ignore[index]
        actor=_actor(github, "list_issues"),
    )
    assert third.ok and dict(recorder.last.query)["page"] == "3"
    assert third.result is not None and third.result["next_cursor"] is None  # a short page is the last
    # a cursor of list_issues is refused by list_pull_requests
    other = github.call(
        "list_pull_requests",
        {"owner": "octo", "repo": "app", "cursor": cursor},
        actor=_actor(github, "list_pull_requests"),
    )
    assert other.error is not None and other.error.code == "invalid_cursor"


def test_github_search_query_encoding(github: Registry, recorder: RecordingServer) -> None:
    recorder.reply("GET", r"/search/issues$", body={"total_count": 1, "items": [{"number": 3, "title": "x"}]})
    q = 'repo:octo/app is:issue label:"good first issue" crash&burn'
    res = github.call("search_issues", {"q": q, "page_size": 5}, actor=_actor(github, "search_issues"))
    assert res.ok and res.result is not None and res.result["items"] == [{"number": 3, "title": "x"}]
    assert dict(recorder.last.query)["q"] == q
    assert "%20" in recorder.last.raw_query and "%26" in recorder.last.raw_query


# --- Stripe ------------------------------------------------------------------------------------------


def test_stripe_create_customer_form_deep_object_and_idempotency(
    stripe: Registry, recorder: RecordingServer
) -> None:
    recorder.reply("POST", r"/v1/customers$", body={"id": "cus_1", "object": "customer", "email": "a@b.test"})
    args = {
        "email": "a@b.test",
        "name": "Ada & Co",
        "metadata": {"order_id": "6735", "tier": "gold"},
        "description": None,
        "idempotency_key": "idem-123",
    }
    # no preview tool (`preview: false`, no approval): the record takes the full arguments
    assert (
        stripe.row_json("record_create_customer")["pair"] is None
        and "preview_create_customer" not in stripe.specs
    )
    res = stripe.call("record_create_customer", args, actor=_actor(stripe, "record_create_customer"))
    assert res.ok, res.to_json()
    sent = recorder.last
    assert (sent.method, sent.path) == ("POST", "/v1/customers")
    assert sent.header("Content-Type") == "application/x-www-form-urlencoded"
    assert sent.header("Idempotency-Key") == "idem-123"
    assert sent.header("Authorization") == "Bearer sk_test_dummy"
    assert sorted(sent.form()) == sorted(
        [
            ("email", "a@b.test"),
            ("name", "Ada & Co"),
            ("metadata[order_id]", "6735"),
            ("metadata[tier]", "gold"),
        ]
    )
    again = stripe.call("record_create_customer", args, actor=_actor(stripe, "record_create_customer"))
    assert again.ok and again.replayed and len([r for r in recorder.requests if r.method == "POST"]) == 1


def test_stripe_unset_metadata_with_empty_string(stripe: Registry, recorder: RecordingServer) -> None:
    args = {"customer": "cus_1", "metadata": "", "idempotency_key": "idem-9"}
    res = call_record(
        stripe,
        "record_update_customer",
        args,
        actor=_actor(stripe, "record_update_customer"),
        approval=_approved(stripe, "record_update_customer", args),
    )
    assert res.ok, res.to_json()
    assert recorder.last.path == "/v1/customers/cus_1" and recorder.last.form() == [("metadata", "")]


def test_stripe_preview_shows_form_request_and_sends_nothing(
    stripe: Registry, recorder: RecordingServer
) -> None:
    res = stripe.call(
        "preview_refund_charge",
        {"charge": "ch_1", "amount": 500, "reason": "duplicate"},
        actor=_actor(stripe, "preview_refund_charge"),
    )
    assert res.ok and res.result is not None
    req = res.result["request"]
    assert req["method"] == "POST" and req["url"] == f"{recorder.base_url}/v1/refunds"
    assert req["body"] == {"charge": "ch_1", "amount": "500", "reason": "duplicate"}
    assert req["headers"]["Authorization"] == "[redacted]"
    # the key is the record's: the preview shows its place, the record fills it in
    assert req["headers"]["Idempotency-Key"] == "<idempotency_key of record_refund_charge>"
    assert recorder.requests == []


def test_stripe_cursor_pagination_and_deep_object_query(stripe: Registry, recorder: RecordingServer) -> None:
    recorder.reply(
        "GET",
        r"/v1/customers$",
        body={
            "object": "list",
            "has_more": True,
            "url": "/v1/customers",
            "data": [{"id": "cus_1", "email": "a@x"}, {"id": "cus_2", "email": "b@x"}],
        },
    )
    args = {"created": {"gte": 1700000000, "lt": 1800000000}, "page_size": 2}
    first = stripe.call("list_customers", args, actor=_actor(stripe, "list_customers"))
    assert first.ok and first.result is not None, first.to_json()
    assert [c["id"] for c in first.result["items"]] == ["cus_1", "cus_2"]
    assert parse_qsl(recorder.last.raw_query) == [
        ("created[gte]", "1700000000"),
        ("created[lt]", "1800000000"),
        ("limit", "2"),
    ]
    second = stripe.call(
        "list_customers",
        dict(args, cursor=first.result["next_cursor"]),
        actor=_actor(stripe, "list_customers"),
    )
    assert second.ok
    assert dict(parse_qsl(recorder.last.raw_query))["starting_after"] == "cus_2"
    recorder.reply(
        "GET", r"/v1/customers$", body={"object": "list", "has_more": False, "data": [{"id": "cus_3"}]}
    )
    last = stripe.call(
        "list_customers",
        dict(args, cursor=second.result["next_cursor"]),  # type: ignore[index]
        actor=_actor(stripe, "list_customers"),
    )
    assert last.ok and last.result is not None and last.result["next_cursor"] is None


def test_stripe_errors_map_to_structured_errors(stripe: Registry, recorder: RecordingServer) -> None:
    recorder.reply(
        "GET",
        r"/v1/customers/cus_404$",
        status=404,
        body={
            "error": {
                "type": "invalid_request_error",
                "code": "resource_missing",
                "message": "No such customer: 'cus_404'",
                "param": "id",
            }
        },
    )
    res = stripe.call("get_customer", {"customer": "cus_404"}, actor=_actor(stripe, "get_customer"))
    assert res.error is not None and res.error.code == "not_found" and res.error.retryable is False
    assert res.error.details["problem"]["error"]["code"] == "resource_missing"
    recorder.reply(
        "GET",
        r"/v1/balance$",
        status=429,
        body={"error": {"message": "Too many requests"}},
        headers={"Retry-After": "0"},
    )
    limited = stripe.call("get_balance", {}, actor=_actor(stripe, "get_balance"))
    assert limited.error is not None and limited.error.code == "rate_limited" and limited.error.retryable
    assert limited.error.details["retry_after"] == 0
    attempts = int(stripe.row_json("get_balance")["retry"]["max_attempts"])
    assert len([r for r in recorder.requests if r.path == "/v1/balance"]) == attempts
