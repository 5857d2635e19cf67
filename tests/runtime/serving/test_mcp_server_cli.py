"""`toolgen call` and `toolgen serve` end to end: real subprocesses, the real MCP SDK client over
stdio, the loopback tickets API."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.runtime_env import mcp_json, tickets_dir

from toolgen.cli import main
from toolgen.testing.tickets_server import TicketsServer

TOOLGEN = shutil.which("toolgen") or str(Path(sys.executable).parent / "toolgen")


def run_call(
    server: TicketsServer, tmp_path: Path, tool: str, args: Any, *extra: str, token: str | None = None
) -> tuple[int, Any, str]:
    env = dict(os.environ, TICKETS_TOKEN=token or server.token)
    env.pop("TOOLGEN_SCOPES", None)
    proc = subprocess.run(
        [
            TOOLGEN,
            "call",
            str(tickets_dir()),
            tool,
            "--args",
            args if isinstance(args, str) else json.dumps(args),
            "--base-url",
            server.base_url,
            "--receipts",
            str(tmp_path / "r.sqlite3"),
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    out = json.loads(proc.stdout) if proc.stdout.strip() else None
    return proc.returncode, out, proc.stderr


def call_here(
    server: TicketsServer, tmp_path: Path, tool: str, args: Any, *extra: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, Any, str]:
    """`run_call` in-process: one `toolgen call` command as click runs it, in `tmp_path`, with its own
    registry over the same receipts file (what two commands share is only what is on disk)."""
    monkeypatch.setenv("TICKETS_TOKEN", server.token)
    monkeypatch.delenv("TOOLGEN_SCOPES", raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main,
        [
            "call",
            str(tickets_dir()),
            tool,
            "--args",
            args if isinstance(args, str) else json.dumps(args),
            "--base-url",
            server.base_url,
            "--receipts",
            str(tmp_path / "r.sqlite3"),
            *extra,
        ],
    )
    out = json.loads(result.stdout) if result.stdout.strip() else None
    return result.exit_code, out, result.stderr


def test_a_preview_in_a_memory_store_is_gone_for_the_next_command(
    server: TicketsServer, tmp_path: Path
) -> None:
    args = {"ticket_id": "T-103", "note": "Called back.", "visibility": "internal"}
    memory = ["--scopes", "ticket:write", "--receipts", "memory://"]
    code, preview, err = run_call(server, tmp_path, "preview_ticket_followup", args, *memory)
    assert code == 0 and "memory://" in err and "executes the stored preview" in err, err
    preview_id = preview["result"]["preview_id"]
    code, out, err = run_call(
        server,
        tmp_path,
        "record_ticket_followup",
        {"preview_id": preview_id, "action_id": "m"},
        *memory,
        "--approve",
        preview_id,
    )
    assert code == 1 and out["error"]["code"] == "preview_not_found" and "memory://" in err
    assert server.side_effects["addFollowup"] == 0


def test_call_read_preview_record_and_errors(
    server: TicketsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each command in-process (the real processes are the other tests'): a preview stored by one
    command is executed by the next through the receipts file, and so are the cursors."""

    def run_call(
        server: TicketsServer, tmp_path: Path, tool: str, args: Any, *extra: str
    ) -> tuple[int, Any, str]:
        return call_here(server, tmp_path, tool, args, *extra, monkeypatch=monkeypatch)

    code, out, _ = run_call(server, tmp_path, "get_ticket", {"ticket_id": "T-102"}, "--scopes", "ticket:read")
    assert code == 0 and out["ok"] and out["result"]["id"] == "T-102"

    code, out, _ = run_call(server, tmp_path, "get_ticket", {"ticket_id": "T-102"})
    assert code == 1 and out["error"]["code"] == "permission_denied"

    args = {"ticket_id": "T-103", "note": "Called back.", "visibility": "internal"}
    code, preview, _ = run_call(server, tmp_path, "preview_ticket_followup", args, "--scopes", "ticket:write")
    assert code == 0 and preview["result"]["preview_id"].startswith("sha256:")
    # the record tool executes the preview stored by the first process (same receipts file, same actor)
    record = {"preview_id": preview["result"]["preview_id"], "action_id": "cli-1"}
    code, out, _ = run_call(server, tmp_path, "record_ticket_followup", record, "--scopes", "ticket:write")
    assert code == 1 and out["error"]["code"] == "approval_required"
    assert (
        out["error"]["details"]["request"]["body"] == preview["result"]["request"]["body"]
    )  # what to approve
    code, out, _ = run_call(
        server, tmp_path, "record_ticket_followup", dict(args, action_id="cli-1"), "--scopes", "ticket:write"
    )
    assert code == 1 and out["error"]["code"] == "invalid_arguments"  # the arguments again: refused
    approve = ["--scopes", "ticket:write", "--approve", preview["result"]["preview_id"]]
    code, first, _ = run_call(server, tmp_path, "record_ticket_followup", record, *approve)
    assert code == 0 and first["replayed"] is False
    assert first["request"]["url"] == preview["result"]["request"]["url"]
    code, second, _ = run_call(server, tmp_path, "record_ticket_followup", record, *approve)
    assert code == 0 and second["replayed"] is True and second["result"] == first["result"]
    assert server.side_effects["addFollowup"] == 1

    # pagination cursors survive between processes (key kept beside the receipts)
    code, page1, _ = run_call(server, tmp_path, "list_tickets", {"page_size": 2}, "--scopes", "ticket:read")
    code, page2, _ = run_call(
        server,
        tmp_path,
        "list_tickets",
        {"page_size": 2, "cursor": page1["result"]["next_cursor"]},
        "--scopes",
        "ticket:read",
    )
    assert code == 0 and page2["ok"]
    assert {i["id"] for i in page1["result"]["items"]}.isdisjoint({i["id"] for i in page2["result"]["items"]})


def test_call_bad_input_exit_2(
    server: TicketsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = call_here(server, tmp_path, "get_ticket", "{not json", monkeypatch=monkeypatch)
    assert code == 2 and out is None and "JSON" in err
    code, out, err = call_here(server, tmp_path, "no_such_tool", {}, monkeypatch=monkeypatch)
    assert code == 2 and "unknown tool" in err
    proc = subprocess.run(
        [TOOLGEN, "call", str(tmp_path / "nowhere"), "get_ticket"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2


def test_call_secret_never_printed(server: TicketsServer, tmp_path: Path) -> None:
    code, out, err = run_call(
        server,
        tmp_path,
        "get_ticket",
        {"ticket_id": "T-102"},
        "--scopes",
        "ticket:read",
        token="wrong-secret-token-123",
    )
    assert code == 1 and out["error"]["code"] == "upstream_unauthorized"
    assert "wrong-secret-token-123" not in json.dumps(out) + err


@pytest.mark.anyio
async def test_mcp_server_over_stdio(server: TicketsServer, tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.shared.exceptions import MCPError

    params = StdioServerParameters(
        command=TOOLGEN,
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
    catalog = json.loads((tickets_dir() / "mcp.json").read_text())
    policy = json.loads((tickets_dir() / "policy.json").read_text())
    allowed = {"ticket:read", "ticket:write"}
    visible = sorted(r["tool"] for r in policy["tools"] if set(r["permission"]) <= allowed)
    async with Client(params) as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == visible  # only what the actor's scopes allow, in order
        assert "record_ticket_delete" not in visible
        by_name = {t.name: t for t in listed.tools}
        for entry in (e for e in catalog if e["name"] in visible):
            assert by_name[entry["name"]].input_schema == entry["inputSchema"]
            assert by_name[entry["name"]].output_schema == entry.get("outputSchema")

        ok = await client.call_tool("get_ticket", {"ticket_id": "T-102"})
        assert ok.is_error is False and ok.structured_content["id"] == "T-102"
        assert mcp_json(ok) == ok.structured_content

        bad = await client.call_tool("get_ticket", {"ticket_id": "nope"})
        assert bad.is_error is True
        assert mcp_json(bad)["error"]["code"] == "invalid_arguments"
        assert mcp_json(bad)["error"]["details"]["pointer"] == "/ticket_id"

        args = {"ticket_id": "T-104", "note": "From MCP.", "visibility": "public"}
        preview = await client.call_tool("preview_ticket_followup", args)
        preview_id = preview.structured_content["preview_id"]
        record = {"preview_id": preview_id, "action_id": "mcp-1"}
        denied = await client.call_tool("record_ticket_followup", record)
        assert denied.is_error and mcp_json(denied)["error"]["code"] == "approval_required"
        # the host shows the human what the approval covers: the previewed request
        assert (
            mcp_json(denied)["error"]["details"]["request"]["body"]
            == preview.structured_content["request"]["body"]
        )
        meta: Any = {"toolgen/approval": {"preview_id": preview_id, "approved_by": "human"}}
        first = await client.call_tool("record_ticket_followup", record, meta=meta)
        assert first.is_error is False, first
        shown = (first.meta or {}).get("toolgen/request")
        assert shown is not None and shown["url"] == preview.structured_content["request"]["url"]
        again = await client.call_tool("record_ticket_followup", record, meta=meta)
        assert again.is_error is False and (again.meta or {}).get("toolgen/replayed") is True
        assert server.side_effects["addFollowup"] == 1

        no_scope = await client.call_tool(
            "record_ticket_delete", {"preview_id": preview_id, "action_id": "x"}
        )
        assert no_scope.is_error and mcp_json(no_scope)["error"]["code"] in ("permission_denied",)

        with pytest.raises(MCPError):
            await client.call_tool("no_such_tool", {})


def test_list_tools_result_is_ordered_and_carries_cache_hints() -> None:
    """MCP 2026-07-28: a deterministic order, ``ttlMs``/``cacheScope``, all four hints on every tool;
    a list cut down to one caller's scopes is ``private``."""
    from toolgen.runtime import Actor, Registry
    from toolgen.runtime.serving.mcp_server import list_tools_result

    with Registry.from_dir(tickets_dir()) as reg:
        result = list_tools_result(reg)
        per_caller = list_tools_result(reg, Actor.of("reader", ["ticket:read"])).model_dump(by_alias=True)
    dumped = result.model_dump(by_alias=True, exclude_none=True)
    assert [t["name"] for t in dumped["tools"]] == sorted(t["name"] for t in dumped["tools"])
    assert dumped["ttlMs"] > 0 and dumped["cacheScope"] == "public"
    assert per_caller["cacheScope"] == "private"
    assert [t["name"] for t in per_caller["tools"]] == [
        "get_ticket",
        "get_ticket_history",
        "get_ticket_view",
        "list_tickets",
    ]
    for tool in dumped["tools"]:
        assert set(tool["annotations"]) >= {
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        }
