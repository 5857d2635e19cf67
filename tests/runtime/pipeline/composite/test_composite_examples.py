"""The composites of the committed example packages (generated/), run end to end over loopback:
the tickets API's branch and writing pipeline on the example tickets server; Stripe's pipeline and
GitHub's aggregate on the fault-injecting API, answering as those APIs do. Every success must
conform to the composite's own output schema as the MCP server checks it (`conforming`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.fault_server import Fault, FaultServer
from tests.support.runtime_env import GENERATED, READER, WRITER, error_code

from toolgen.runtime import Actor, Approval, CallResult, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.pipeline.idempotency import step_key
from toolgen.runtime.serving.mcp_server import conforming
from toolgen.testing.tickets_server import TicketsServer


def _composites(api: str) -> dict[str, dict[str, Any]]:
    policy = json.loads((GENERATED / api / "policy.json").read_text(encoding="utf-8"))
    return {r["tool"]: r for r in policy["tools"] if r.get("composite")}


def _conforms(registry: Registry, result: CallResult) -> None:
    assert result.ok, result.to_json()
    checked = conforming(registry, result)
    assert checked.ok and not result.warnings, (checked.to_json(), result.warnings)


def test_every_example_package_has_a_composite_and_no_step_is_a_tool() -> None:
    for api in ("tickets", "stripe", "github"):
        composites = _composites(api)
        assert composites, api
        registry = Registry.from_dir(GENERATED / api)
        for name in composites:
            for step in registry.specs[name].steps:
                assert step.name not in registry.specs
                result = registry.call(step.name, {}, actor=Actor.of("x", ["*"]))
                assert error_code(result) == "unknown_tool"


@pytest.fixture
def tickets(server: TicketsServer) -> Iterator[Registry]:
    server.state.history_delay = 0.05
    registry = Registry.from_dir(
        GENERATED / "tickets",
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
    )
    yield registry
    registry.close()


def test_tickets_branch(tickets: Registry, server: TicketsServer) -> None:
    details = tickets.call("get_ticket_view", {"view": "details", "ticket_id": "T-101"}, actor=READER)
    _conforms(tickets, details)
    assert details.result is not None and details.result["details"]["requester"]["phone"] == "[redacted]"
    history = tickets.call("get_ticket_view", {"view": "history", "ticket_id": "T-101"}, actor=READER)
    _conforms(tickets, history)
    missing = tickets.call("get_ticket_view", {"view": "history"}, actor=READER)
    assert error_code(missing) == "invalid_arguments"
    assert missing.error is not None and missing.error.details["branch"] == "history"
    assert len(server.state.requests) == 2


def test_tickets_writing_pipeline(tickets: Registry, server: TicketsServer) -> None:
    shown = tickets.call(
        "preview_escalate_ticket", {"ticket_id": "T-102", "reason": "Customer called twice."}, actor=WRITER
    )
    _conforms(tickets, shown)
    assert shown.result is not None and server.side_effects["addFollowup"] == 0
    preview_id = shown.result["preview_id"]
    record = {"preview_id": preview_id, "action_id": "esc-1"}
    assert error_code(tickets.call("record_escalate_ticket", record, actor=WRITER)) == "approval_required"
    done = tickets.call("record_escalate_ticket", record, actor=WRITER, approval=Approval(preview_id))
    _conforms(tickets, done)
    assert done.result is not None and [s["state"] for s in done.result["steps"]] == ["done", "done"]
    sent = server.requests_for("POST", "/followups")
    assert [r.headers.get("Idempotency-Key") for r in sent] == [
        step_key("record_escalate_ticket", "esc-1", "note")
    ]
    again = tickets.call("record_escalate_ticket", record, actor=WRITER, approval=Approval(preview_id))
    assert again.ok and again.replayed and server.side_effects["addFollowup"] == 1


def _fault_registry(api: str, fault: FaultServer, secret: str) -> Registry:
    return Registry.from_dir(
        GENERATED / api,
        base_url=fault.base_url,
        receipts=MemoryReceiptStore(),
        credentials=StaticCredentials({secret: "loopback-secret-4d2e"}),
    )


def test_stripe_customer_then_open_invoices() -> None:
    with FaultServer() as fault:
        fault.route(
            "GET",
            r"^/v1/customers/cus_1$",
            200,
            {
                "id": "cus_1",
                "object": "customer",
                "email": "a@example.com",
                "name": "Ann",
                "balance": 0,
                "currency": "usd",
                "delinquent": False,
                "created": 1,
                "livemode": False,
            },
        )
        fault.route(
            "GET",
            r"^/v1/invoices$",
            200,
            {
                "object": "list",
                "url": "/v1/invoices",
                "has_more": False,
                "data": [
                    {
                        "id": "in_1",
                        "object": "invoice",
                        "number": "N-1",
                        "amount_due": 500,
                        "currency": "usd",
                        "due_date": None,
                        "hosted_invoice_url": None,
                        "customer": "cus_1",
                        "status": "open",
                    }
                ],
            },
        )
        with _fault_registry("stripe", fault, "STRIPE_SECRET_KEY") as registry:
            actor = Actor.of("billing", ["customers:read", "invoices:read"])
            result = registry.call("get_customer_open_invoices", {"customer": "cus_1"}, actor=actor)
            assert result.ok and result.result is not None, result.to_json()
            assert result.result["customer"]["id"] == "cus_1" and result.result["invoices"][0]["id"] == "in_1"
            assert conforming(registry, result).ok
            invoices = fault.requests_for(path_regex=r"^/v1/invoices$")
            assert ("customer", "cus_1") in invoices[0].query and ("status", "open") in invoices[0].query
            fault.script("GET", r"^/v1/invoices$", Fault.answer(500))
            failed = registry.call("get_customer_open_invoices", {"customer": "cus_1"}, actor=actor)
            assert failed.error is not None and failed.error.details["step"] == "invoices"
            assert [s["state"] for s in failed.error.details["steps"]] == ["done", "failed"]


def test_github_issue_thread_reports_a_missing_pull_request_as_a_partial_error() -> None:
    issue = {
        "number": 7,
        "title": "Bug",
        "state": "open",
        "body": "b",
        "labels": [],
        "user": {"login": "ann"},
        "html_url": "https://github.com/o/r/issues/7",
    }
    with FaultServer() as fault:
        fault.route("GET", r"^/repos/o/r/issues/7$", 200, issue)
        fault.route(
            "GET",
            r"^/repos/o/r/issues/7/comments$",
            200,
            [{"id": 1, "user": {"login": "bob"}, "body": "same here", "created_at": "2025-01-01T00:00:00Z"}],
        )
        fault.route("GET", r"^/repos/o/r/pulls/7$", 404, {"message": "Not Found"})
        with _fault_registry("github", fault, "GITHUB_TOKEN") as registry:
            actor = Actor.of("dev", ["issues:read", "pull_requests:read"])
            result = registry.call("get_issue_thread", {"owner": "o", "repo": "r", "number": 7}, actor=actor)
            assert result.ok and result.result is not None, result.to_json()
            assert (
                set(result.result["errors"]) == {"pull"}
                and result.result["errors"]["pull"]["code"] == "not_found"
            )
            assert "pull_request" not in result.result
            assert (
                result.result["comments"][0]["user"]["login"] == "bob"
                and result.result["issue"]["number"] == 7
            )
            assert conforming(registry, result).ok
            assert len(fault.requests) == 3
