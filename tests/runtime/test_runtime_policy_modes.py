"""Only a record row writes: a ``policy.json`` row whose mode and effect disagree is refused at load
(docs/generated-format.md, "policy.json").

The build writes read and preview rows with ``effect: read`` and ``approval: never``, and record rows
with a write or destructive effect. The typed reader used to take any combination: the delete row
``record_ticket_delete`` edited to ``mode: read`` (its ``effect: destructive`` and ``approval:
required`` kept, its catalog entry taking the ticket id) loaded, and a call sent ``DELETE`` to the
loopback API at once, with no preview, no approval and no receipt. Now each such row is a
`PolicyFormatError` at its member, and the API is never called.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest
from tests.support.runtime_env import ADMIN, load_package

from toolgen.policy.format import PolicyFormatError
from toolgen.runtime import MemoryReceiptStore, Registry, StaticCredentials
from toolgen.testing.tickets_server import TicketsServer

DELETE, PREVIEW = "record_ticket_delete", "preview_ticket_delete"
#: (mode, effect, approval) of the edited delete row -> the member refused
EDITS: dict[str, tuple[str, str, str, str]] = {
    "read-destructive": ("read", "destructive", "required", "effect"),
    "read-write-never": ("read", "write", "never", "effect"),
    "preview-destructive": ("preview", "destructive", "never", "effect"),
    "read-read-required": ("read", "read", "required", "approval"),
    "record-read": ("record", "read", "required", "effect"),
}


def _edited(mode: str, effect: str, approval: str) -> tuple[dict[str, Any], list[Mapping[str, Any]], int]:
    policy, catalog = copy.deepcopy(load_package("tickets"))
    index = next(i for i, r in enumerate(policy["tools"]) if r["tool"] == DELETE)
    row = policy["tools"][index]
    row.update(mode=mode, effect=effect, approval=approval)
    if mode != "record":
        row["record"] = None
        entry = next(t for t in catalog if t["name"] == DELETE)
        entry["inputSchema"] = copy.deepcopy(next(t for t in catalog if t["name"] == PREVIEW)["inputSchema"])
    return policy, list(catalog), index


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_row_whose_mode_and_effect_disagree_is_refused_and_never_sent(edit: str) -> None:
    mode, effect, approval, member = EDITS[edit]
    policy, catalog, index = _edited(mode, effect, approval)
    with TicketsServer() as server:
        registry = None
        try:
            with pytest.raises(PolicyFormatError) as caught:
                registry = Registry(
                    policy,
                    catalog,
                    base_url=server.base_url,
                    receipts=MemoryReceiptStore(),
                    credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
                )
                registry.call(DELETE, {"ticket_id": "T-130"}, actor=ADMIN)
        finally:
            if registry is not None:
                registry.close()
        assert server.side_effects["deleteTicket"] == 0
    assert caught.value.pointer == f"/tools/{index}/{member}"


def test_the_committed_rows_still_load() -> None:
    policy, catalog = load_package("tickets")
    registry = Registry(policy, list[Mapping[str, Any]](catalog))
    try:
        assert registry.row(DELETE).mode == "record" and registry.row(DELETE).approval == "required"
    finally:
        registry.close()
