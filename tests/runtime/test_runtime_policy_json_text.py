"""The text of a ``policy.json`` is read as the build writes it, or refused at load
(docs/generated-format.md, "policy.json").

A member named twice in one object (``"approval": "required", "approval": "never"``) used to load
with the last one counting: a reviewer reading the first saw an approval the runtime never asked
for. ``NaN`` and ``Infinity`` (no JSON) loaded inside literal values, and a table nested deep enough
made loading raise a RecursionError instead of the `PolicyFormatError` that ``toolgen call`` and
``toolgen serve`` report. Each is now a `PolicyFormatError` at the document; the committed table
still loads and calls the loopback API.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.support.runtime_env import tickets_dir

from toolgen.cli import main
from toolgen.policy.format import PolicyFormatError
from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.testing.tickets_server import TicketsServer

RECORD = "record_ticket_followup"


def _committed() -> str:
    return (tickets_dir() / "policy.json").read_text(encoding="utf-8")


def _package(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "tickets"
    shutil.copytree(tickets_dir(), folder)
    (folder / "policy.json").write_text(text, encoding="utf-8")
    return folder


def _approval_twice() -> str:
    policy = json.loads(_committed())
    row = next(r for r in policy["tools"] if r["tool"] == RECORD)
    assert row["approval"] == "required"
    text = json.dumps(policy)
    shown = json.dumps(row)
    assert text.count(shown) == 1
    return text.replace(
        shown, shown.replace('"approval": "required"', '"approval": "required", "approval": "never"')
    )


def _literal_nan() -> str:
    policy = json.loads(_committed())
    row = next(r for r in policy["tools"] if r["tool"] == "list_tickets")
    row["request"]["fixed"].append({"in": "query", "name": "x", "value": float("nan"), "source": "intent"})
    return json.dumps(policy)


def _deep() -> str:
    return _committed().replace('"toolsets": [', '"toolsets": [' + "[" * 100_000 + "]" * 100_000 + ",", 1)


CASES: dict[str, Callable[[], str]] = {"member-twice": _approval_twice, "nan": _literal_nan, "deep": _deep}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_table_text_the_build_never_writes_is_refused_at_load(tmp_path: Path, case: str) -> None:
    folder = _package(tmp_path, CASES[case]())
    with pytest.raises(PolicyFormatError) as caught:
        Registry.from_dir(folder)
    assert caught.value.pointer == ""
    done = CliRunner().invoke(
        main, ["call", str(folder), "list_tickets", "--args", "{}", "--scopes", "ticket:read"]
    )
    assert done.exit_code == 2, done.output
    assert "policy.json" in done.output


def test_the_committed_table_still_loads_and_calls(tmp_path: Path) -> None:
    folder = _package(tmp_path, _committed())
    with TicketsServer() as server:
        registry = Registry.from_dir(
            folder,
            base_url=server.base_url,
            credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
            receipts=MemoryReceiptStore(),
        )
        try:
            out = registry.call("list_tickets", {}, actor=Actor("agent", frozenset({"ticket:read"})))
        finally:
            registry.close()
    assert out.ok, out.error
    assert registry.row(RECORD).approval == "required"


def test_a_catalog_nested_too_deep_is_refused_at_load(tmp_path: Path) -> None:
    """``mcp.json`` nested deeper than the JSON reader goes: a ValueError naming the file, and
    ``toolgen call`` exits 2 (it was a RecursionError with a traceback)."""
    folder = _package(tmp_path, _committed())
    (folder / "mcp.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(ValueError, match=r"mcp\.json"):
        Registry.from_dir(folder)
    done = CliRunner().invoke(
        main, ["call", str(folder), "list_tickets", "--args", "{}", "--scopes", "ticket:read"]
    )
    assert done.exit_code == 2, done.output
    assert "mcp.json" in done.output
