"""A complete MCP client for `toolgen serve --approvals elicit`: a human approves the exact request
inside the protocol.

The official `mcp` SDK's high-level `mcp.Client` speaks MCP 2026-07-28, where a tool call can answer
"input required" (multi round-trip requests). When the client passes an `elicitation_callback`, a
record call that needs an approval makes the server ask it: the callback receives a message showing
the exact request the previewed write will send (method, URL, headers with credentials redacted,
body) and answers with a form ``{"approve": true | false, "approved_by": NAME}``. The SDK then
retries the call with that answer; the server issues an approval bound to this preview and writes
once.

Run it against the example tickets API (from a clone of toolgen, with the ``mcp`` extra):

    python -m toolgen.testing.tickets_server --port 8765 &      # prints the token to export
    export TICKETS_TOKEN=test-token-7f3a
    python docs/examples/mcp_client_elicit.py                  # asks "Approve? [y/N]" on the terminal

Options: ``--base-url URL`` (default: the policy's, http://127.0.0.1:8765/v1), ``--yes`` (approve
without asking). `tests/test_docs_mcp_clients.py` runs this file against a real `toolgen serve`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters


def server(base_url: str | None) -> StdioServerParameters:
    """`toolgen serve tickets` over stdio, approvals asked in the protocol. The SDK starts a stdio
    server with a minimal environment, so the secret the tools need is passed on explicitly."""
    args = ["-m", "toolgen", "serve", "tickets", "--approvals", "elicit", "--scopes", "ticket:read,ticket:write",
            "--receipts", "memory://"]
    if base_url:
        args += ["--base-url", base_url]
    env = {k: v for k, v in os.environ.items() if k in ("TICKETS_TOKEN", "PATH", "PYTHONPATH", "HOME")}
    return StdioServerParameters(command=sys.executable, args=args, env=env)


def approver(assume_yes: bool) -> Any:
    """The elicitation callback: show the server's message (the exact request) to the human, and
    answer the approval form."""

    async def ask(context: Any, params: Any) -> types.ElicitResult:
        print("--- the server asks for an approval ---")
        print(params.message)
        answer = "y" if assume_yes else await anyio.to_thread.run_sync(input, "Approve? [y/N] ")
        approved = answer.strip().lower() in ("y", "yes")
        return types.ElicitResult(action="accept", content={"approve": approved, "approved_by": "example-user"})

    return ask


def _text(result: types.CallToolResult) -> str:
    first = result.content[0] if result.content else None
    return first.text if isinstance(first, types.TextContent) else ""


async def main(base_url: str | None, assume_yes: bool) -> int:
    async with Client(server(base_url), elicitation_callback=approver(assume_yes)) as client:
        tools = await client.list_tools()
        print("tools:", ", ".join(sorted(t.name for t in tools.tools)))
        note = {"ticket_id": "T-102", "note": "Customer called back; issue resolved.", "visibility": "internal"}
        preview = await client.call_tool("preview_ticket_followup", note)
        if preview.is_error:
            print("preview failed:", _text(preview))
            return 1
        preview_id = preview.structured_content["preview_id"]
        print("preview_id:", preview_id)
        done = await client.call_tool("record_ticket_followup", {"preview_id": preview_id, "action_id": "example-1"})
        if done.is_error:
            print("not written:", json.loads(_text(done))["error"]["code"])
            return 1
        print("written:", json.dumps(done.structured_content, sort_keys=True))
        return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default=None, help="the tickets API (default: the policy's base URL)")
    parser.add_argument("--yes", action="store_true", help="approve without asking")
    options = parser.parse_args()
    sys.exit(anyio.run(main, options.base_url, options.yes))
