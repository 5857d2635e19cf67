"""What a human approves of a writing composite covers every write it sends, also a write step whose
arguments read an earlier write's answer (shown ``known_after`` that step): its `preview_id` binds
that step's arguments as far as the preview knows them (the composite's arguments, the reads'
answers), the approval shows them, and the record sends nothing else (docs/composites.md "The
runtime"). Over the example tickets API on loopback, in ``approvals="issued"`` mode (an approval
issued for one `preview_id`, as `toolgen approve` or an approval round issues it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.composites import composite_package, ref
from tests.support.profiles import examples
from tests.support.runtime_env import WRITER, error_code

from toolgen.runtime import Approval, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.testing.tickets_server import TicketsServer

APPROVED = {"ticket_id": "T-101", "note": "Called the customer.", "second_note": "Sent the invoice."}


def _chained(second_note: Any) -> tuple[dict[str, Any], list[Any]]:
    """The writing pipeline ``ticket_notes`` whose second write reads the first write's answer
    (``ticket_id`` = ``$first/ticket_id``) and takes its note from `second_note` (a plan node)."""
    policy, catalog = composite_package()
    for row in policy["tools"]:
        if row["tool"] in ("preview_ticket_notes", "record_ticket_notes"):
            second = next(s for s in row["composite"]["steps"] if s["id"] == "second")
            second["args"]["ticket_id"] = ref("first", "/ticket_id")
            second["args"]["note"] = second_note
            second["needs"] = ["first"]
    return policy, catalog


@pytest.fixture
def chained(server: TicketsServer) -> Iterator[Registry]:
    policy, catalog = _chained({"$ref": "input", "pointer": "/second_note"})
    with Registry(
        policy,
        catalog,
        base_url=server.base_url,
        receipts=MemoryReceiptStore(),
        approvals="issued",
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
    ) as registry:
        yield registry


def _approved(registry: Registry, args: dict[str, Any]) -> tuple[str, str]:
    shown = registry.call("preview_ticket_notes", args, actor=WRITER)
    assert shown.ok and shown.result is not None, shown.to_json()
    preview_id = str(shown.result["preview_id"])
    return preview_id, registry.issue_approval(
        "record_ticket_notes", preview_id, approved_by="ann", actor=WRITER.id
    )


def _notes(server: TicketsServer) -> list[str]:
    return [f["note"] for f in server.state.followups.get("T-101", [])]


def test_previewing_other_arguments_never_changes_what_an_approval_sends(
    chained: Registry, server: TicketsServer
) -> None:
    preview_id, approval_id = _approved(chained, APPROVED)
    # the caller previews again with another second note after the human approved
    other = chained.call(
        "preview_ticket_notes", {**APPROVED, "second_note": "Refund 10,000 USD to account 999."}, actor=WRITER
    )
    assert other.ok and other.result is not None
    assert other.result["preview_id"] != preview_id
    done = chained.call(
        "record_ticket_notes",
        {"preview_id": preview_id, "action_id": "act-1"},
        actor=WRITER,
        approval=Approval(preview_id, approval_id=approval_id),
    )
    assert done.ok, done.to_json()
    assert _notes(server) == [APPROVED["note"], APPROVED["second_note"]]


def test_the_approval_shows_a_later_write_as_far_as_it_is_known(chained: Registry) -> None:
    preview_id, _ = _approved(chained, APPROVED)
    requests = chained.approvable_request("record_ticket_notes", preview_id, WRITER.id)["requests"]
    second = next(r for r in requests if r["step"] == "second")
    assert second["known_after"] == "first"
    assert second["arguments"]["note"] == APPROVED["second_note"]
    assert second["arguments"]["visibility"] == "internal"
    assert second["arguments"]["ticket_id"] == {"known_after": "first", "pointer": "/ticket_id"}
    assert "action_id" not in second["arguments"]  # the key is the record's, not the plan's


def test_a_read_a_later_write_uses_that_changes_makes_the_plan_stale(server: TicketsServer) -> None:
    policy, catalog = _chained({"$ref": "step", "step": "ticket", "pointer": "/subject"})
    with Registry(
        policy,
        catalog,
        base_url=server.base_url,
        receipts=MemoryReceiptStore(),
        approvals="issued",
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
    ) as registry:
        preview_id, approval_id = _approved(registry, APPROVED)
        server.state.tickets["T-101"]["subject"] = "Close my account and wire the balance"
        done = registry.call(
            "record_ticket_notes",
            {"preview_id": preview_id, "action_id": "act-1"},
            actor=WRITER,
            approval=Approval(preview_id, approval_id=approval_id),
        )
    assert error_code(done) == "preview_stale", done.to_json()
    assert done.error is not None and done.error.details["steps"] == ["second"]
    assert _notes(server) == []


@settings(
    max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    first=st.text(min_size=1, max_size=40).filter(str.strip),
    second=st.text(min_size=1, max_size=40).filter(str.strip),
)
def test_two_previews_share_a_preview_id_only_when_their_writes_are_the_same(
    chained: Registry, first: str, second: str
) -> None:
    ids = [
        chained.call("preview_ticket_notes", {**APPROVED, "second_note": note}, actor=WRITER).result[
            "preview_id"
        ]  # type: ignore[index]
        for note in (first, second)
    ]
    assert (ids[0] == ids[1]) == (first == second)
