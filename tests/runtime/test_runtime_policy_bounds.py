"""A hand-edited ``policy.json`` whose numbers the build never writes is refused at load, never
read into a wait, a deadline or an approval lifetime the runtime cannot compute with
(docs/generated-format.md, "policy.json").

A ``timeout_ms``, ``retry.deadline_ms`` or ``retry.backoff_ms`` of 10**400 used to load and make
every call an ``internal_error`` (an OverflowError); a ``record.preview_ttl_s`` beyond the build's
bound kept a stored preview, and the approval bound to it, executable for as long as the table said.
The reader now holds each to the intent map's own bound (`toolgen.policy.members`), so the largest
value the build writes still loads and calls the loopback API, and one more is refused at its pointer.

The page sizes too: a ``pagination.min_page_size`` of 10**5000 made every call of the list tool an
``internal_error``; the build writes 1 <= min <= default <= max <= 1000. And an integer too long to
write out (past 4300 digits) in any member is refused as a `PolicyFormatError`, not a bare
ValueError from naming it in the message.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from tests.support.runtime_env import load_package, tickets_dir

from toolgen.policy.format import PolicyFormatError
from toolgen.policy.members import (
    MAX_ATTEMPTS,
    MAX_BACKOFF_MS,
    MAX_DEADLINE_MS,
    MAX_PAGE_SIZE,
    MAX_PREVIEW_TTL_S,
    MAX_TIMEOUT_MS,
)
from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.testing.tickets_server import TicketsServer

READ, RECORD = "list_tickets", "record_ticket_followup"
#: (tool, path of the member in its row, the build's greatest value)
BOUNDS: list[tuple[str, tuple[str, ...], int]] = [
    (READ, ("timeout_ms",), MAX_TIMEOUT_MS),
    (READ, ("retry", "deadline_ms"), MAX_DEADLINE_MS),
    (READ, ("retry", "backoff_ms"), MAX_BACKOFF_MS),
    (READ, ("retry", "max_attempts"), MAX_ATTEMPTS),
    (RECORD, ("record", "preview_ttl_s"), MAX_PREVIEW_TTL_S),
    (READ, ("pagination", "max_page_size"), MAX_PAGE_SIZE),
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
def test_a_number_beyond_the_build_bound_is_refused_at_load(
    tmp_path: Path, tool: str, path: tuple[str, ...], bound: int, excess: int
) -> None:
    folder, index = _edited(tmp_path, tool, path, bound + excess)
    with pytest.raises(PolicyFormatError) as caught:
        Registry.from_dir(folder)
    assert caught.value.pointer == f"/tools/{index}/" + "/".join(path)
    assert "above the greatest value" in caught.value.message


@pytest.mark.parametrize(("tool", "path", "bound"), BOUNDS, ids=IDS)
def test_the_build_bound_itself_loads_and_calls(
    tmp_path: Path, tool: str, path: tuple[str, ...], bound: int
) -> None:
    folder, _ = _edited(tmp_path, tool, path, bound)
    with TicketsServer() as server:
        registry = Registry.from_dir(
            folder,
            base_url=server.base_url,
            credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
            receipts=MemoryReceiptStore(),
        )
        try:
            out = registry.call(READ, {}, actor=Actor("agent", frozenset({"ticket:read"})))
        finally:
            registry.close()
    assert out.ok, out.error


PAGE_SIZES = {  # the list tool's (min, default, max) page sizes; the committed row: (1, 20, 50)
    "min-above-max": ((51, 20, 50), "min_page_size"),
    "default-below-min": ((5, 4, 50), "default_page_size"),
    "default-above-max": ((1, 51, 50), "default_page_size"),
    "min-zero": ((0, 20, 50), "min_page_size"),
}


@pytest.mark.parametrize("case", sorted(PAGE_SIZES))
def test_page_sizes_out_of_order_are_refused_at_load(tmp_path: Path, case: str) -> None:
    (least, default, largest), member = PAGE_SIZES[case]
    folder, index = _edited(tmp_path, READ, ("pagination", "min_page_size"), least)
    policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    policy["tools"][index]["pagination"].update(default_page_size=default, max_page_size=largest)
    (folder / "policy.json").write_text(json.dumps(policy), encoding="utf-8")
    with pytest.raises(PolicyFormatError) as caught:
        Registry.from_dir(folder)
    assert caught.value.pointer == f"/tools/{index}/pagination/{member}"


@pytest.mark.parametrize(
    "path",
    [("mode",), ("timeout_ms",), ("pagination", "min_page_size")],
    ids=["choice", "bound", "page-size"],
)
def test_an_unwritable_integer_is_named_by_its_size(path: tuple[str, ...]) -> None:
    """A policy table given as a Python value (a package's ``POLICY``) can hold an integer JSON text
    cannot (past 4300 digits): refused as any other, named by its size."""
    policy, catalog = load_package("tickets")
    index = next(i for i, r in enumerate(policy["tools"]) if r["tool"] == READ)
    member = policy["tools"][index]
    for key in path[:-1]:
        member = member[key]
    member[path[-1]] = -(10**5000)
    with pytest.raises(PolicyFormatError) as caught:
        Registry(policy, list[Mapping[str, Any]](catalog))
    assert caught.value.pointer == f"/tools/{index}/" + "/".join(path)
    assert "-an integer of about 5000 digits" in caught.value.message
