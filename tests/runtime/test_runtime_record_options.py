"""What a write's record tool takes, as the intent map chooses it: the stored preview (default with
approval) or the full arguments (`record.arguments: full`, default without approval), `preview:
false` for a write whose preview gates nothing, the preview's lifetime; the located errors of
contradictory choices; the lint rule that suggests dropping a preview; the runtime running each
shape against the loopback tickets API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import REPO, Built, build, run

from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.testing.tickets_server import TicketsServer

TICKETS = REPO / "specs" / "tickets.yaml"
WRITER = Actor.of("writer", ["ticket:write"])
NOTE = {"ticket_id": "T-102", "note": "Called back.", "visibility": "public"}


def followup(extra: str = "", approval: str = "required") -> str:
    """An intent map body with the follow-up write; `extra` lines go under the intent."""
    return (
        "tools:\n  followup:\n    operation: addFollowup\n    effect: write\n    permission: ticket:write\n"
        f"    approval: {approval}\n"
        '    idempotency: {key: action_id, send_as: "header:Idempotency-Key", honoured_by_api: true}\n'
        + extra
    )


def _schema(built: Built, tool: str) -> dict[str, Any]:
    return built.tool("mcp", tool)["inputSchema"]  # type: ignore[no-any-return]


def _registry(built: Built, server: TicketsServer) -> Registry:
    return Registry.from_dir(
        built.out,
        base_url=server.base_url,
        credentials=StaticCredentials({"API_TOKEN": server.token}),
        receipts=MemoryReceiptStore(),
    )


@pytest.mark.parametrize(
    "extra, approval, line",
    [
        ("    preview: false\n", "required", 11),
        ("    preview: false\n    record: {arguments: preview}\n", "never", 11),
    ],
)
def test_preview_false_is_refused_where_the_record_needs_its_preview(
    tmp_path: Path, extra: str, approval: str, line: int
) -> None:
    built = build(tmp_path, TICKETS, followup(extra, approval), expect=2)
    assert "error[preview-required]" in built.result.output, built.result.output
    assert f"api.yaml:{line}:" in built.result.output, built.result.output
    assert not (tmp_path / "out").exists()


def test_idempotency_key_named_preview_id_is_refused(tmp_path: Path) -> None:
    body = (
        "tools:\n  followup:\n    operation: addFollowup\n    effect: write\n    permission: ticket:write\n"
        "    approval: required\n"
        '    idempotency: {key: preview_id, send_as: "header:Idempotency-Key", honoured_by_api: true}\n'
    )
    built = build(tmp_path, TICKETS, body, expect=2)
    assert "idempotency-key-collision" in built.result.output and "api.yaml:10:" in built.result.output


def test_default_with_approval_executes_the_stored_preview(tmp_path: Path, server: TicketsServer) -> None:
    built = build(tmp_path, TICKETS, followup("    record: {preview_ttl_s: 60}\n"))
    schema = _schema(built, "record_followup")
    assert (
        set(schema["properties"]) == {"preview_id", "action_id"} and schema["additionalProperties"] is False
    )
    assert built.row("record_followup")["record"] == {"arguments": "preview", "preview_ttl_s": 60}
    assert built.row("preview_followup")["record"] is None
    policy_md = (built.out / "POLICY.md").read_text(encoding="utf-8")
    assert "stored preview of `preview_followup` (expires after 1 min)" in policy_md
    reg = _registry(built, server)
    shown = reg.call("preview_followup", NOTE, actor=WRITER)
    assert shown.ok and shown.result is not None and shown.result["expires_in_s"] == 60
    res = reg.call(
        "record_followup",
        {"preview_id": shown.result["preview_id"], "action_id": "a-1"},
        actor=WRITER,
        approval=shown.result["preview_id"],
    )
    assert res.ok and res.request is not None, res.to_json()


def test_full_arguments_on_request_keep_the_old_record(tmp_path: Path, server: TicketsServer) -> None:
    built = build(tmp_path, TICKETS, followup("    record: {arguments: full}\n"))
    schema = _schema(built, "record_followup")
    assert {"ticket_id", "note", "visibility", "action_id"} <= set(schema["properties"])
    assert "preview_id" not in schema["properties"]
    assert built.row("record_followup")["record"] == {"arguments": "full", "preview_ttl_s": None}
    assert "| full arguments |" in (built.out / "POLICY.md").read_text(encoding="utf-8")
    reg = _registry(built, server)
    shown = reg.call("preview_followup", NOTE, actor=WRITER)
    assert shown.ok and shown.result is not None and "expires_in_s" not in shown.result
    res = reg.call(
        "record_followup", dict(NOTE, action_id="a-1"), actor=WRITER, approval=shown.result["preview_id"]
    )
    assert res.ok and res.request is None, res.to_json()
    other = reg.call(
        "record_followup",
        dict(NOTE, note="Other", action_id="a-2"),
        actor=WRITER,
        approval=shown.result["preview_id"],
    )
    assert other.error is not None and other.error.code == "approval_mismatch"


def test_a_write_without_approval_may_opt_in_to_the_stored_preview(
    tmp_path: Path, server: TicketsServer
) -> None:
    built = build(tmp_path, TICKETS, followup("    record: {arguments: preview}\n", "never"))
    assert set(_schema(built, "record_followup")["properties"]) == {"preview_id", "action_id"}
    reg = _registry(built, server)
    shown = reg.call("preview_followup", NOTE, actor=WRITER)
    assert shown.ok and shown.result is not None and shown.result["approval_required"] is False
    res = reg.call(
        "record_followup", {"preview_id": shown.result["preview_id"], "action_id": "a-1"}, actor=WRITER
    )
    assert res.ok, res.to_json()
    assert server.side_effects["addFollowup"] == 1


def test_preview_false_drops_the_preview_tool(tmp_path: Path, server: TicketsServer) -> None:
    built = build(tmp_path, TICKETS, followup("    preview: false\n", "never"))
    assert "preview_followup" not in built.names("mcp") and "preview_followup" not in built.names("openai")
    row = built.row("record_followup")
    assert row["pair"] is None and row["record"] == {"arguments": "full", "preview_ttl_s": None}
    assert "full arguments (no preview tool)" in (built.out / "POLICY.md").read_text(encoding="utf-8")
    reg = _registry(built, server)
    res = reg.call("record_followup", dict(NOTE, action_id="a-1"), actor=WRITER)
    assert res.ok, res.to_json()


def test_a_ttl_on_a_full_argument_record_is_a_warning(tmp_path: Path) -> None:
    built = build(tmp_path, TICKETS, followup("    record: {arguments: full, preview_ttl_s: 60}\n"))
    assert "warning[preview-ttl-unused]" in built.result.output and "api.yaml:11:" in built.result.output


def _lint(tmp_path: Path, body: str) -> list[dict[str, Any]]:
    intent = tmp_path / "api.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(TICKETS))}\napi: {{name: api}}\n{body}", encoding="utf-8"
    )
    result = run("lint", str(intent), "--format", "json")
    data = json.loads(result.output)
    findings = data["findings"] if isinstance(data, dict) else data
    return [f for f in findings if f.get("code") == "preview-adds-nothing"]


def test_lint_suggests_dropping_a_preview_that_gates_nothing(tmp_path: Path) -> None:
    found = _lint(tmp_path, followup("", "never"))
    assert len(found) == 1 and found[0]["severity"] == "info", found
    assert "preview: false" in json.dumps(found[0])
    # not when it gates something, when it is gone, or when the record executes it
    assert _lint(tmp_path, followup("", "required")) == []
    assert _lint(tmp_path, followup("    preview: false\n", "never")) == []
    assert _lint(tmp_path, followup("    record: {arguments: preview}\n", "never")) == []
    destructive = (
        "tools:\n  delete:\n    operation: DELETE /tickets/{ticket_id}\n    effect: destructive\n"
        "    permission: ticket:delete\n    approval: never\n    idempotency: {key: action_id, send_as: none}\n"
    )
    assert _lint(tmp_path, destructive) == []
