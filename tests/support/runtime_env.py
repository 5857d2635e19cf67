"""Shared paths, actors and calls for the runtime tests (against the tickets package), and the
committed packages as a registry takes them (`load_package`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent

from toolgen.runtime import Actor, CallResult, Registry

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / ".." / "shared"
GENERATED = REPO / "generated"
GENERATED_TICKETS = GENERATED / "tickets"


def mcp_json(result: CallToolResult) -> Any:
    """The JSON of an MCP tool result's first content block: toolgen answers with one text block."""
    block = result.content[0]
    assert isinstance(block, TextContent), block
    return json.loads(block.text)


def load_package(api: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The committed package ``generated/<api>``'s (policy.json, mcp.json) as read (fresh objects on
    every call, free to edit), as a `Registry` takes them; skips the test when it is not built."""
    folder = GENERATED / api
    if not (folder / "policy.json").is_file():
        pytest.skip(f"generated/{api} is not built")
    policy: dict[str, Any] = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    catalog: list[dict[str, Any]] = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
    return policy, catalog


def tickets_dir() -> Path:
    """The generated tickets package (`toolgen build` output, committed under generated/tickets)."""
    return GENERATED_TICKETS


READER = Actor.of("reader", ["ticket:read"])
WRITER = Actor.of("writer", ["ticket:read", "ticket:write"])
ADMIN = Actor.of("admin", ["ticket:read", "ticket:write", "ticket:delete"])


def stored_preview(
    reg: Registry, args: dict[str, Any], actor: Actor = WRITER, tool: str = "preview_ticket_followup"
) -> str:
    """Call the preview tool `tool` (it must succeed) and return the ``preview_id`` it stored."""
    shown = reg.call(tool, args, actor=actor)
    assert shown.ok and shown.result is not None, shown.to_json()
    return str(shown.result["preview_id"])


def error_code(result: CallResult) -> str | None:
    """The error code of a call's result; None when it succeeded."""
    return None if result.error is None else result.error.code


def serve_closed(package: Path, cwd: Path, *more: str) -> subprocess.CompletedProcess[str]:
    """`toolgen serve PACKAGE` over stdio with its input closed at once (so it starts, says its start-up
    warnings on stderr and ends), against an upstream nobody listens on and a memory receipt store;
    `more` are further options (``--search-tool always``, ...)."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgen",
            "serve",
            str(package),
            "--base-url",
            "http://127.0.0.1:9",
            "--receipts",
            "memory://",
            *more,
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        check=False,
    )
