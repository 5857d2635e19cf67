"""What the human is shown in an approval round (``--approvals elicit``) is the write, readable and
unforgeable: a composite record shows each write of its plan (a later write as far as it is known),
and characters that reorder or hide text (bidirectional overrides, zero-width and control characters)
are shown escaped, as `toolgen approve` shows them. End to end with the official `mcp` client over
Streamable HTTP with bearer tokens, against the loopback tickets API and the committed tickets
package (``record_escalate_ticket``: read the ticket, then add an internal note)."""

from __future__ import annotations

from typing import Any

import pytest
from tests.runtime.serving.test_elicit import _answer, _client, _registry
from tests.support.http_serving import http_server
from tests.support.token_files import TOKENS, write_token_file

from toolgen.runtime.serving.elicit import approval_input_required
from toolgen.runtime.serving.mcp_http import load_token_file
from toolgen.runtime.serving.registry import Actor
from toolgen.testing.tickets_server import TicketsServer

pytestmark = pytest.mark.anyio
mcp = pytest.importorskip("mcp")


@pytest.fixture
def tokens(tmp_path: Any) -> Any:
    return load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]


async def test_a_composite_record_shows_each_write_of_its_plan(server: TicketsServer, tokens: Any) -> None:
    reg = _registry(server)
    callback, seen = _answer(True)
    reason = "Customer asked for a refund of 40 USD."
    async with http_server(reg, verifier=tokens, elicit=True) as url:
        http, client = _client(url, TOKENS["writer"][0], elicitation_callback=callback)
        async with http, client:
            shown = await client.call_tool(
                "preview_escalate_ticket", {"ticket_id": "T-101", "reason": reason}
            )
            pid = shown.structured_content["preview_id"]
            done = await client.call_tool("record_escalate_ticket", {"preview_id": pid, "action_id": "x-1"})
            assert done.is_error is False, done
    message = seen[0].message
    assert "POST " in message and "/tickets/T-101/followups" in message, message
    assert reason in message and "internal" in message
    assert "? ?" not in message and server.token not in message
    reg.close()


@pytest.mark.parametrize("trick", ["\u202e", "\u2066", "\u200b", "\x1b[2K", "\u2028", "\x9b"])
def test_text_that_reorders_or_hides_what_is_shown_is_escaped(server: TicketsServer, trick: str) -> None:
    reg = _registry(server)
    writer = Actor.of("writer", ["ticket:read", "ticket:write"])
    note = f"Refund {trick}0001{trick} USD"
    shown = reg.call(
        "preview_ticket_followup",
        {"ticket_id": "T-102", "note": note, "visibility": "internal"},
        actor=writer,
    )
    assert shown.ok and shown.result is not None, shown.to_json()
    ask = approval_input_required(
        reg, "record_ticket_followup", {"preview_id": shown.result["preview_id"], "action_id": "x"}, writer
    )
    message = ask.input_requests["toolgen/approval"].params.message
    assert trick not in message
    assert f"\\u{ord(trick[0]):04x}" in message
    reg.close()
