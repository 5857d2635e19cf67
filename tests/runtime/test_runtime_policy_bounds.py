"""A hand-edited ``policy.json`` whose numbers the build never writes is refused at load, never
read into a wait, a deadline or an approval lifetime the runtime cannot compute with
(docs/generated-format.md, "policy.json").

A ``timeout_ms``, ``retry.deadline_ms`` or ``retry.backoff_ms`` of 10**400 used to load and make
every call an ``internal_error`` (an OverflowError); a ``record.preview_ttl_s`` beyond the build's
bound kept a stored preview, and the approval bound to it, executable for as long as the table said.
The reader now holds each to the intent map's own bound (`toolgen.policy_members`), so the largest
value the build writes still loads and calls the loopback API, and one more is refused at its pointer.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.support.runtime_env import tickets_dir

from toolgen.examples.tickets_server import TicketsServer
from toolgen.policy_format import PolicyFormatError
from toolgen.policy_members import (
    MAX_ATTEMPTS,
    MAX_BACKOFF_MS,
    MAX_DEADLINE_MS,
    MAX_PREVIEW_TTL_S,
    MAX_TIMEOUT_MS,
)
from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials

READ, RECORD = "list_tickets", "record_ticket_followup"
#: (tool, path of the member in its row, the build's greatest value)
BOUNDS: list[tuple[str, tuple[str, ...], int]] = [
    (READ, ("timeout_ms",), MAX_TIMEOUT_MS),
    (READ, ("retry", "deadline_ms"), MAX_DEADLINE_MS),
    (READ, ("retry", "backoff_ms"), MAX_BACKOFF_MS),
    (READ, ("retry", "max_attempts"), MAX_ATTEMPTS),
    (RECORD, ("record", "preview_ttl_s"), MAX_PREVIEW_TTL_S),
]
IDS = ["/".join(path) for _, path, _ in BOUNDS]


def _edited(tmp_path: Path, tool: str, path: tuple[str, ...], value: Any) -> tuple[Path, int]:
    folder = tmp_path / "tickets"
    shutil.copytree(tickets_dir(), folder)
    policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    index = next(i for i, r in enumerate(policy["tools"]) if r["tool"] == tool)
    member = policy["tools"][index]
    for key in path[:-1]:
        member = member[key]
    member[path[-1]] = copy.deepcopy(value)
    (folder / "policy.json").write_text(json.dumps(policy), encoding="utf-8")
    return folder, index


@pytest.mark.parametrize(("tool", "path", "bound"), BOUNDS, ids=IDS)
@pytest.mark.parametrize("excess", [1, 10**400], ids=["one-more", "huge"])
def test_a_number_beyond_the_build_bound_is_refused_at_load(tmp_path: Path, tool: str, path: tuple[str, ...],
                                                            bound: int, excess: int) -> None:
    folder, index = _edited(tmp_path, tool, path, bound + excess)
    with pytest.raises(PolicyFormatError) as caught:
        Registry.from_dir(folder)
    assert caught.value.pointer == f"/tools/{index}/" + "/".join(path)
    assert "above the greatest value" in caught.value.message


@pytest.mark.parametrize(("tool", "path", "bound"), BOUNDS, ids=IDS)
def test_the_build_bound_itself_loads_and_calls(tmp_path: Path, tool: str, path: tuple[str, ...],
                                                bound: int) -> None:
    folder, _ = _edited(tmp_path, tool, path, bound)
    with TicketsServer() as server:
        registry = Registry.from_dir(folder, base_url=server.base_url,
                                     credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
                                     receipts=MemoryReceiptStore())
        try:
            out = registry.call(READ, {}, actor=Actor("agent", frozenset({"ticket:read"})))
        finally:
            registry.close()
    assert out.ok, out.error
