"""A complete MCP client built on the SDK's plain `mcp.ClientSession`, and how its approvals work.

A `ClientSession` opened over a transport performs the initialize handshake, so it negotiates the
protocol version of that handshake (2025-11-25), not 2026-07-28: the server cannot ask it for an
approval inside the call (no multi round-trip requests), even under `toolgen serve --approvals
elicit` and even when the session has an `elicitation_callback`. An approval-gated record call without
an approval therefore answers the tool error ``approval_required`` — not a crash and not a prompt:
a client that ignores tool errors sees nothing happen. (`mcp.Client`, docs/examples/mcp_client_elicit.py,
speaks 2026-07-28 and is asked.)

Such a client approves out of band: a human runs `toolgen approve` on the receipt store the server
uses, reads the exact request, and gets an ``approval_id``; the client retries the record call with
``_meta: {"toolgen/approval": {"preview_id": ..., "approval_id": ...}}``. This script does all of it:

    python -m toolgen.testing.tickets_server --port 8765 &
    export TICKETS_TOKEN=test-token-7f3a
    python docs/examples/mcp_client_session.py      # runs `toolgen approve --yes` itself, as the human would

Options: ``--base-url URL`` (default: the policy's, http://127.0.0.1:8765/v1).
`tests/test_docs_mcp_clients.py` runs this file against a real `toolgen serve`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

RECORD = "record_ticket_followup"


def _text(result: types.CallToolResult) -> str:
    first = result.content[0] if result.content else None
    return first.text if isinstance(first, types.TextContent) else ""


def _approve(preview_id: str, receipts: Path, base_url: str | None) -> str:
    """What the human does: `toolgen approve` shows the exact request and issues an approval_id."""
    command = [sys.executable, "-m", "toolgen", "approve", "tickets", RECORD, preview_id, "--actor", "mcp",
               "--by", "example-user", "--receipts", str(receipts), "--yes", "--format", "json"]
    if base_url:
        command += ["--base-url", base_url]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    issued = json.loads(done.stdout.strip().splitlines()[-1])
    return str(issued["approval_id"])


async def run(session: ClientSession, receipts: Path, base_url: str | None) -> int:
    """Preview a follow-up note, see the record call refused without an approval, approve it as a
    human would, and record it."""
    init = await session.initialize()
    print("protocol:", init.protocol_version)
    note = {"ticket_id": "T-103", "note": "Refund sent.", "visibility": "internal"}
    preview = await session.call_tool("preview_ticket_followup", note)
    preview_id = (preview.structured_content or {})["preview_id"]
    print("preview_id:", preview_id)
    record = {"preview_id": preview_id, "action_id": "example-2"}
    first = await session.call_tool(RECORD, record)
    error = json.loads(_text(first))["error"] if first.is_error else {}
    print("without an approval:", error.get("code"), "-", error.get("next_step"))
    if error.get("code") != "approval_required":
        return 1
    approval_id = _approve(preview_id, receipts, base_url)
    # RequestParamsMeta is a TypedDict open to extra keys ("toolgen/approval" is toolgen's own)
    meta: Any = {"toolgen/approval": {"preview_id": preview_id, "approval_id": approval_id}}
    done = await session.call_tool(RECORD, record, meta=meta)
    if done.is_error:
        print("not written:", json.loads(_text(done))["error"]["code"])
        return 1
    print("written:", json.dumps(done.structured_content, sort_keys=True))
    return 0


async def main(base_url: str | None) -> int:
    with tempfile.TemporaryDirectory() as folder:
        receipts = Path(folder) / "receipts.sqlite3"  # shared by the server and `toolgen approve`
        args = ["-m", "toolgen", "serve", "tickets", "--approvals", "elicit", "--scopes", "ticket:read,ticket:write",
                "--receipts", str(receipts)]
        if base_url:
            args += ["--base-url", base_url]
        env = {k: v for k, v in os.environ.items() if k in ("TICKETS_TOKEN", "PATH", "PYTHONPATH", "HOME")}
        params = StdioServerParameters(command=sys.executable, args=args, env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await run(session, receipts, base_url)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default=None, help="the tickets API (default: the policy's base URL)")
    sys.exit(anyio.run(main, parser.parse_args().base_url))
