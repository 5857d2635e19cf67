"""Composite tools at run time (docs/composites.md "The runtime"), over a real loopback server: the
example tickets API.

The composites are the hand-made plans of `tests.support.composites` (a read pipeline, an aggregate,
a read branch, a writing pipeline with two write steps between two reads: faults between two
writes need two), except for `toolgen call` and MCP over stdio, which serve the committed tickets
package (generated/tickets). Faults between steps and while preparing them are tested in
`test_composite_faults.py`; tests/runtime/pipeline/composite/test_composite_examples.py runs the
composites of every committed example.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.composite_calls import NOTES, composite_registry, preview_notes, step_key_of
from tests.support.composites import composite_package
from tests.support.runtime_env import ADMIN, READER, WRITER, error_code, mcp_json, tickets_dir

from toolgen.cli import main
from toolgen.runtime import Actor, Approval, MemoryAuditSink, Registry
from toolgen.runtime.serving.tool_index import ToolIndex
from toolgen.testing.tickets_server import TicketsServer


@pytest.fixture
def reg(server: TicketsServer) -> Iterator[Registry]:
    server.state.history_delay = 0.05  # the example API's history is slow by default (to trip timeouts)
    policy, catalog = composite_package()
    registry = composite_registry(policy, catalog, server.base_url, server.token, audit=MemoryAuditSink())
    yield registry
    registry.close()


def _posts(server: TicketsServer) -> int:
    return len(server.requests_for("POST", "/followups"))


# -- loading: the steps are never tools -------------------------------------------------------------


def test_step_tools_are_never_findable_or_callable(reg: Registry) -> None:
    names = [s.name for spec in reg.specs.values() for s in spec.steps]
    assert "get_ticket_overview.ticket" in names and "record_ticket_notes.first" in names
    for name in [*names, "get_ticket_overview/ticket", "ticket", "first", "get_ticket_overview.ticket "]:
        result = reg.call(name, {"ticket_id": "T-101"}, actor=ADMIN)
        assert error_code(result) == "unknown_tool", name
        assert not any("." in n for n in result.error.details["available"])  # type: ignore[union-attr]
    assert not any("." in n for n in reg.tool_names())
    assert not any("." in e["name"] for e in reg.catalog())
    index = ToolIndex.from_registry(reg)
    for query in ("get_ticket_overview.ticket", "record_ticket_notes.first ticket history", "followup note"):
        assert not any("." in hit.tool for hit in index.search(query, limit=50)), query


# -- read composites -----------------------------------------------------------------------------------


def test_read_pipeline_feeds_a_later_step_from_an_earlier_answer(
    reg: Registry, server: TicketsServer
) -> None:
    result = reg.call("get_ticket_overview", {"ticket_id": "T-101"}, actor=READER)
    assert result.ok, result.to_json()
    assert result.result is not None and result.result["ticket"]["id"] == "T-101"
    assert result.result["history"][0]["event"] == "created"
    history = server.requests_for("GET", "/history")
    assert [r.path for r in history] == ["/v1/tickets/T-101/history"]
    # every step audited under the composite's call id, by its step name
    events = [e for e in reg.audit.events if e.call_id == result.call_id]  # type: ignore[attr-defined]
    assert {e.tool for e in events} == {
        "get_ticket_overview",
        "get_ticket_overview.ticket",
        "get_ticket_overview.history",
    }


def test_a_failed_step_stops_the_pipeline_and_says_which_did_not_run(
    reg: Registry, server: TicketsServer
) -> None:
    result = reg.call("get_ticket_overview", {"ticket_id": "T-999"}, actor=READER)
    assert error_code(result) == "not_found"
    details = result.error.details  # type: ignore[union-attr]
    assert details["step"] == "ticket"
    assert [(s["id"], s["state"]) for s in details["steps"]] == [("ticket", "failed"), ("history", "not_run")]
    assert server.requests_for("GET", "/history") == []


def test_a_missing_member_is_the_steps_error_naming_the_pointer(server: TicketsServer) -> None:
    policy, catalog = composite_package()
    row = next(r for r in policy["tools"] if r["tool"] == "get_ticket_overview")
    row["composite"]["steps"][1]["args"]["ticket_id"] = {
        "$ref": "step",
        "step": "ticket",
        "pointer": "/parent/id",
    }
    server.state.history_delay = 0.05
    with composite_registry(policy, catalog, server.base_url, server.token) as registry:
        result = registry.call("get_ticket_overview", {"ticket_id": "T-101"}, actor=READER)
    assert error_code(result) == "composite_reference_missing"
    details = result.error.details  # type: ignore[union-attr]
    assert (details["step"], details["from_step"], details["pointer"]) == ("history", "ticket", "/parent/id")
    assert [s["state"] for s in details["steps"]] == ["done", "failed"]
    assert server.requests_for("GET", "/history") == []


def test_composite_arguments_are_validated_before_any_step(reg: Registry, server: TicketsServer) -> None:
    result = reg.call("get_ticket_overview", {"ticket_id": "not a ticket"}, actor=READER)
    assert error_code(result) == "invalid_arguments" and result.error.details["pointer"] == "/ticket_id"  # type: ignore[union-attr]
    assert server.state.requests == []


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_an_aggregate_runs_its_reads_at_once_and_reports_partial_errors(
    reg: Registry, server: TicketsServer, driver: str
) -> None:
    args = {"first": "T-101", "second": "T-102"}

    async def timed_async() -> tuple[Any, float]:
        await reg.acall("get_ticket", {"ticket_id": "T-101"}, actor=READER)  # the async client made
        server.state.history_delay = 0.6
        started = time.monotonic()
        result = await reg.acall("get_two_histories", args, actor=READER)
        return result, time.monotonic() - started

    if driver == "sync":
        reg.call("get_ticket", {"ticket_id": "T-101"}, actor=READER)  # the sync client made
        server.state.history_delay = 0.6  # each read takes 0.6 s: one after the other would take 1.2 s
        started = time.monotonic()
        result = reg.call("get_two_histories", args, actor=READER)
        elapsed = time.monotonic() - started
    else:
        result, elapsed = asyncio.run(timed_async())
    server.state.history_delay = 0.05
    assert result.ok and result.result is not None, result.to_json()
    assert result.result["errors"] == {} and result.result["first"] and result.result["second"]
    assert 0.6 <= elapsed < 1.1, elapsed

    partial = reg.call("get_two_histories", {"first": "T-101", "second": "T-999"}, actor=READER)
    assert partial.ok and partial.result is not None
    assert partial.result["first"][0]["event"] == "created" and "second" not in partial.result
    assert partial.result["errors"]["second"]["code"] == "not_found"
    assert partial.result["errors"]["second"]["details"]["step"] == "second"


def test_an_aggregate_shares_one_deadline(server: TicketsServer) -> None:
    policy, catalog = composite_package()
    row = next(r for r in policy["tools"] if r["tool"] == "get_two_histories")
    row["retry"]["deadline_ms"], row["timeout_ms"] = 500, 500
    server.state.history_delay = 1.5
    with composite_registry(policy, catalog, server.base_url, server.token) as registry:
        started = time.monotonic()
        result = registry.call("get_two_histories", {"first": "T-101", "second": "T-102"}, actor=READER)
        elapsed = time.monotonic() - started
    assert error_code(result) == "tool_timeout" and elapsed < 1.2, (result.to_json(), elapsed)
    assert {s["state"] for s in result.error.details["steps"]} == {"failed"}  # type: ignore[union-attr]


def test_a_branch_runs_the_step_its_switch_chooses(reg: Registry, server: TicketsServer) -> None:
    ticket = reg.call("get_ticket_view", {"view": "ticket", "ticket_id": "T-103"}, actor=READER)
    assert ticket.ok and ticket.result == {"ticket": ticket.result["ticket"]}  # type: ignore[index]
    history = reg.call("get_ticket_view", {"view": "history", "history_of": "T-104"}, actor=READER)
    assert history.ok and set(history.result or {}) == {"history"}
    assert [r.path for r in server.state.requests] == ["/v1/tickets/T-103", "/v1/tickets/T-104/history"]
    # the taken branch's required argument: invalid_arguments naming the branch and the composite argument
    missing = reg.call("get_ticket_view", {"view": "history", "ticket_id": "T-103"}, actor=READER)
    assert error_code(missing) == "invalid_arguments"
    details = missing.error.details  # type: ignore[union-attr]
    assert (details["branch"], details["pointer"]) == ("history", "/history_of")
    assert len(server.state.requests) == 2


# -- permission --------------------------------------------------------------------------------------


def test_permission_of_a_step_the_actor_lacks_is_refused_before_anything_is_sent(
    server: TicketsServer,
) -> None:
    policy, catalog = composite_package()
    for name in ("preview_ticket_notes", "record_ticket_notes"):  # a row that (wrongly) asks only ticket:read
        next(r for r in policy["tools"] if r["tool"] == name)["permission"] = ["ticket:read"]
    with composite_registry(policy, catalog, server.base_url, server.token) as registry:
        for tool, args in (
            ("preview_ticket_notes", NOTES),
            ("record_ticket_notes", {"preview_id": "x", "action_id": "a"}),
        ):
            result = registry.call(tool, args, actor=READER)
            assert error_code(result) == "permission_denied", result.to_json()
            assert result.error.details["step"] == "first"  # type: ignore[union-attr]
            assert result.error.details["missing"] == ["ticket:write"]  # type: ignore[union-attr]
    assert server.state.requests == []
    with composite_registry(*composite_package(), server.base_url, server.token) as registry:
        refused = registry.call("preview_ticket_notes", NOTES, actor=READER)  # the union: refused by the row
        assert error_code(refused) == "permission_denied" and "step" not in refused.error.details  # type: ignore[union-attr]
    assert server.state.requests == []


# -- writing composites -----------------------------------------------------------------------------


def test_preview_runs_the_reads_and_shows_every_write_in_order(reg: Registry, server: TicketsServer) -> None:
    shown = reg.call("preview_ticket_notes", NOTES, actor=WRITER)
    assert shown.ok and shown.result is not None
    requests = shown.result["requests"]
    assert [r["step"] for r in requests] == ["first", "second"]
    assert [r["request"]["body"]["note"] for r in requests] == [NOTES["note"], NOTES["second_note"]]
    assert all(r["request"]["url"].endswith("/tickets/T-101/followups") for r in requests)
    assert all(r["request"]["headers"]["Authorization"] == "[redacted]" for r in requests)
    assert shown.result["reads"] == [{"id": "ticket", "state": "done"}] and shown.result["approval_required"]
    assert _posts(server) == 0 and [r.path for r in server.state.requests] == ["/v1/tickets/T-101"]
    assert preview_notes(reg) == shown.result["preview_id"]  # same reads, same plan


def test_record_one_approval_for_the_plan_keys_per_step_and_replay(
    reg: Registry, server: TicketsServer
) -> None:
    preview_id = preview_notes(reg)
    record = {"preview_id": preview_id, "action_id": "act-1"}
    assert error_code(reg.call("record_ticket_notes", record, actor=WRITER)) == "approval_required"
    assert (
        error_code(reg.call("record_ticket_notes", record, actor=WRITER, approval=Approval("sha256:other")))
        == "approval_mismatch"
    )
    assert _posts(server) == 0
    done = reg.call(
        "record_ticket_notes", record, actor=WRITER, approval=Approval(preview_id, approved_by="ann")
    )
    assert done.ok and done.result is not None, done.to_json()
    assert [(s["id"], s["state"], s.get("idempotency_key")) for s in done.result["steps"]] == [
        ("ticket", "done", None),
        ("first", "done", step_key_of("act-1", "first")),
        ("second", "done", step_key_of("act-1", "second")),
        ("after", "done", None),
    ]
    assert done.result["ticket"]["followup_count"] == 2
    keys = [r.headers.get("Idempotency-Key") for r in server.requests_for("POST", "/followups")]
    assert keys == [step_key_of("act-1", "first"), step_key_of("act-1", "second")]
    again = reg.call("record_ticket_notes", record, actor=WRITER, approval=Approval(preview_id))
    assert again.ok and again.replayed and again.result == done.result
    assert server.side_effects["addFollowup"] == 2
    # the approval was spent on act-1: another action with it is refused, nothing sent
    other = reg.call(
        "record_ticket_notes",
        {"preview_id": preview_id, "action_id": "act-2"},
        actor=WRITER,
        approval=Approval(preview_id),
    )
    assert error_code(other) == "approval_used" and server.side_effects["addFollowup"] == 2
    # the step receipts are the record key's, completed
    for step in ("first", "second"):
        receipt = reg.receipts.get(
            "tickets/record_ticket_notes.first".replace("first", step), step_key_of("act-1", step)
        )
        assert receipt is not None and receipt.state == "completed"
    assert reg.receipts.get("tickets/record_ticket_notes", "act-1").state == "completed"  # type: ignore[union-attr]


def test_a_record_with_another_actors_preview_finds_nothing(reg: Registry, server: TicketsServer) -> None:
    preview_id = preview_notes(reg)
    other = Actor.of("other", ["ticket:read", "ticket:write"])
    result = reg.call(
        "record_ticket_notes",
        {"preview_id": preview_id, "action_id": "a"},
        actor=other,
        approval=Approval(preview_id),
    )
    assert error_code(result) == "preview_not_found" and _posts(server) == 0


# -- the surfaces: toolgen call and the MCP server -------------------------------------------------------


def test_toolgen_call_runs_a_composite(
    server: TicketsServer, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The committed tickets package's branch and writing pipeline through `toolgen call`: each call
    in-process (click's runner: the same exit code and output), except the replay, a real process
    that finds the composite's receipt in the file the earlier calls wrote."""
    toolgen = shutil.which("toolgen") or str(Path(sys.executable).parent / "toolgen")
    monkeypatch.setenv("TICKETS_TOKEN", server.token)
    monkeypatch.delenv("TOOLGEN_SCOPES", raising=False)
    monkeypatch.chdir(tmp_path)

    def call(tool: str, args: dict[str, Any], *extra: str, process: bool = False) -> tuple[int, Any]:
        argv = [
            "call",
            str(tickets_dir()),
            tool,
            "--args",
            json.dumps(args),
            "--base-url",
            server.base_url,
            "--scopes",
            "ticket:read,ticket:write",
            "--receipts",
            str(tmp_path / "r.sqlite3"),
            *extra,
        ]
        if process:
            proc = subprocess.run(
                [toolgen, *argv], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False
            )
            return proc.returncode, json.loads(proc.stdout)
        result = CliRunner().invoke(main, argv)
        return result.exit_code, json.loads(result.stdout)

    code, out = call("get_ticket_view", {"view": "details", "ticket_id": "T-105"})
    assert code == 0 and out["result"]["details"]["id"] == "T-105"
    code, out = call("get_ticket_view", {"view": "history"})
    assert (
        code == 1
        and out["error"]["code"] == "invalid_arguments"
        and out["error"]["details"]["branch"] == "history"
    )
    code, shown = call("preview_escalate_ticket", {"ticket_id": "T-105", "reason": "Called twice."})
    assert code == 0 and server.side_effects["addFollowup"] == 0
    preview_id = shown["result"]["preview_id"]
    record = {"preview_id": preview_id, "action_id": "cli-1"}
    code, out = call("record_escalate_ticket", record)
    assert code == 1 and out["error"]["code"] == "approval_required"
    code, out = call("record_escalate_ticket", record, "--approve", preview_id)
    assert code == 0 and [s["state"] for s in out["result"]["steps"]] == ["done", "done"], out
    code, out = call("record_escalate_ticket", record, "--approve", preview_id, process=True)
    assert code == 0 and out["replayed"] is True and server.side_effects["addFollowup"] == 1


@pytest.mark.anyio
async def test_the_mcp_client_calls_composites_over_stdio(server: TicketsServer, tmp_path: Any) -> None:
    """The official MCP client, over stdio, on the committed tickets package's composites."""
    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError

    server.state.history_delay = 0.05
    toolgen = shutil.which("toolgen") or str(Path(sys.executable).parent / "toolgen")
    params = StdioServerParameters(
        command=toolgen,
        args=[
            "serve",
            str(tickets_dir()),
            "--scopes",
            "ticket:read,ticket:write",
            "--base-url",
            server.base_url,
            "--receipts",
            str(tmp_path / "mcp.sqlite3"),
        ],
        env={"TICKETS_TOKEN": server.token, "PATH": os.environ.get("PATH", "")},
        cwd=str(tmp_path),
    )
    async with Client(params) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert {"get_ticket_view", "preview_escalate_ticket", "record_escalate_ticket"} <= set(listed)
        assert not any("." in name for name in listed)
        view = await client.call_tool("get_ticket_view", {"view": "details", "ticket_id": "T-106"})
        assert (
            view.is_error is False and view.structured_content["details"]["id"] == "T-106"
        )  # the SDK checks it
        history = await client.call_tool("get_ticket_view", {"view": "history", "ticket_id": "T-106"})
        assert history.is_error is False and history.structured_content["history"]["entries"]
        for hidden in (
            "get_ticket_view.details",
            "record_escalate_ticket.note",
            "preview_escalate_ticket.ticket",
        ):
            with pytest.raises(MCPError):  # an unknown tool, as for any name no catalog lists
                await client.call_tool(hidden, {"ticket_id": "T-106"})
        preview = await client.call_tool(
            "preview_escalate_ticket", {"ticket_id": "T-106", "reason": "Escalated."}
        )
        assert preview.is_error is False
        preview_id = preview.structured_content["preview_id"]
        assert preview.structured_content["requests"][0]["request"]["body"]["note"] == "Escalated."
        meta: Any = {"toolgen/approval": {"preview_id": preview_id, "approved_by": "human"}}
        record = {"preview_id": preview_id, "action_id": "mcp-1"}
        first = await client.call_tool("record_escalate_ticket", record, meta=meta)
        assert first.is_error is False, mcp_json(first)
        assert [s["state"] for s in first.structured_content["steps"]] == ["done", "done"]
        again = await client.call_tool("record_escalate_ticket", record, meta=meta)
        assert again.is_error is False and (again.meta or {}).get("toolgen/replayed") is True
    assert server.side_effects["addFollowup"] == 1


def test_the_plan_is_deep_copied_per_package() -> None:
    """The support package builder gives independent plans (tests change them)."""
    one, _ = composite_package()
    two, _ = composite_package()
    one_row = next(r for r in one["tools"] if r["tool"] == "get_ticket_overview")
    two_row = next(r for r in two["tools"] if r["tool"] == "get_ticket_overview")
    one_row["composite"]["steps"][0]["args"] = {}
    assert two_row["composite"]["steps"][0]["args"] != {}
    assert copy.deepcopy(two_row) == two_row


def test_issued_approvals_cover_a_composite_plan(server: TicketsServer) -> None:
    policy, catalog = composite_package()
    with composite_registry(policy, catalog, server.base_url, server.token, approvals="issued") as registry:
        preview_id = preview_notes(registry)
        shown = registry.approvable_request("record_ticket_notes", preview_id, WRITER.id)
        assert [r["step"] for r in shown["requests"]] == ["first", "second"]
        assert shown["requests"][1]["request"]["body"]["note"] == NOTES["second_note"]
        record = {"preview_id": preview_id, "action_id": "i-1"}
        bare = registry.call("record_ticket_notes", record, actor=WRITER, approval=Approval(preview_id))
        assert error_code(bare) == "approval_required" and _posts(server) == 0
        approval_id = registry.issue_approval(
            "record_ticket_notes", preview_id, approved_by="ann", actor=WRITER.id
        )
        done = registry.call(
            "record_ticket_notes",
            record,
            actor=WRITER,
            approval=Approval(preview_id, approval_id=approval_id),
        )
        assert done.ok, done.to_json()
        assert server.side_effects["addFollowup"] == 2


@pytest.mark.anyio
async def test_the_mcp_client_calls_composites_over_streamable_http(server: TicketsServer) -> None:
    from contextlib import AsyncExitStack

    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from tests.support.http_serving import http_server

    httpx2 = pytest.importorskip("httpx2")
    server.state.history_delay = 0.3
    policy, catalog = composite_package()
    registry = composite_registry(policy, catalog, server.base_url, server.token)
    async with http_server(registry, actor=READER) as url, AsyncExitStack() as stack:
        http = await stack.enter_async_context(httpx2.AsyncClient(timeout=30))
        client = await stack.enter_async_context(Client(streamable_http_client(url, http_client=http)))
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "get_two_histories" in listed and "preview_ticket_notes" not in listed  # by the union
        warm = await client.call_tool("get_ticket_overview", {"ticket_id": "T-107"})  # the HTTP clients made
        assert warm.is_error is False
        started = time.monotonic()
        both = await client.call_tool("get_two_histories", {"first": "T-107", "second": "T-108"})
        elapsed = time.monotonic() - started
        assert both.is_error is False and both.structured_content["errors"] == {}
        assert elapsed < 0.55, elapsed  # the two 0.3 s reads overlapped in the server's event loop
    await registry.aclose()
