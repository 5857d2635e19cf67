"""A composite record's replay obeys the policy of the call that replays it, as a single record's
does (docs/runtime.md "Outputs": a replayed result is redacted again with the current policy's
paths). Over the committed tickets package and the example tickets API on loopback."""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.support.runtime_env import WRITER, tickets_dir

from toolgen.runtime import Approval, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.testing.tickets_server import TicketsServer


def _package() -> tuple[dict[str, Any], list[Any]]:
    folder = tickets_dir()
    return (
        json.loads((folder / "policy.json").read_text(encoding="utf-8")),
        json.loads((folder / "mcp.json").read_text(encoding="utf-8")),
    )


def test_a_replayed_composite_record_is_redacted_with_the_current_policy(server: TicketsServer) -> None:
    policy, catalog = _package()
    store = MemoryReceiptStore()
    creds = StaticCredentials({"TICKETS_TOKEN": server.token})
    args = {"ticket_id": "T-101", "reason": "Customer waiting since Monday; call +1 555 0100."}
    with Registry(policy, catalog, base_url=server.base_url, credentials=creds, receipts=store) as before:
        preview_id = str(before.call("preview_escalate_ticket", args, actor=WRITER).result["preview_id"])  # type: ignore[index]
        record = {"preview_id": preview_id, "action_id": "esc-1"}
        first = before.call("record_escalate_ticket", record, actor=WRITER, approval=Approval(preview_id))
        assert first.ok and first.result is not None, first.to_json()
        assert first.result["note"]["note"] == args["reason"]
    # a rebuild hides the note's text and the ticket's subject from the composite's result
    hidden = copy.deepcopy(policy)
    row = next(r for r in hidden["tools"] if r["tool"] == "record_escalate_ticket")
    row["output"]["redact"] = [*row["output"]["redact"], "note.note", "ticket.subject"]
    with Registry(hidden, catalog, base_url=server.base_url, credentials=creds, receipts=store) as after:
        after.call("preview_escalate_ticket", args, actor=WRITER)
        again = after.call("record_escalate_ticket", record, actor=WRITER, approval=Approval(preview_id))
    assert again.ok and again.replayed and again.result is not None, again.to_json()
    assert again.result["note"]["note"] == "[redacted]"
    assert again.result["ticket"]["subject"] == "[redacted]"
    assert again.result["note"]["id"] == first.result["note"]["id"]  # the same stored result, shaped again
    assert server.side_effects["addFollowup"] == 1
