"""A request that names the one thing it acts on by a value ("delete virtual machine 740") prefers the
operations that act on one item (`toolgen.search.text_index.names_one`, `item_path`, and `ITEM_BOOST` in
`ToolIndex.search`): the value is no word to search for, so the boost is the only trace it leaves."""

from __future__ import annotations

from typing import Any

import pytest

from toolgen.runtime.serving.tool_index import ToolIndex
from toolgen.search.text_index import ITEM_BOOST, item_path, names_one


@pytest.mark.parametrize(
    "query",
    [
        "delete virtual machine 740",
        "cancel the rack reservation 8",
        "show playlist 3cEYpjA9oz9GiPac4AsH4n",
        "look up charge ch_3MmlLr, did it succeed",
        "assign IP address 5521 to interface 1001",
        "void envelope 93be49ab-4d1e-4c32-8a4e-1c2f3e5a7b90?",
        "close PROJ-123",
    ],
)
def test_a_value_right_after_the_object_names_one_thing(query: str) -> None:
    assert names_one(query)


@pytest.mark.parametrize(
    "query",
    [
        "delete devices 501, 502 and 503",  # a plural object names several
        "Who belongs to signing group 8899?",  # the value comes after a preposition: context
        "give issue 77 a thumbs up reaction",  # the object goes on after the value
        "what changed between v1.4.0 and v1.5.0?",
        "list the open issues",
        "",
        "740",
    ],
)
def test_no_value_or_a_value_of_context_names_no_one_thing(query: str) -> None:
    assert not names_one(query)


@pytest.mark.parametrize(
    ("path", "item"),
    [
        ("/widgets/{id}/", True),
        ("/widgets/{id}", True),
        ("/subscriptions/{id}/cancel", True),
        ("/widgets/", False),
        ("/widgets/{id}/parts", False),
        ("/", False),
        ("", False),
    ],
)
def test_item_paths(path: str, item: bool) -> None:
    assert item_path(path) is item


def _package() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Two operations with the same words: one deletes many widgets, one deletes one; and reads of
    other things, so that the words of the two are rare (bm25 scores them well above its rounding)."""
    rows: list[dict[str, Any]] = []
    catalog: list[dict[str, Any]] = []
    others = [
        (f"get_{thing}", f"{thing}Read", f"/{thing}s/{{id}}/", "GET", f"Read {thing}s")
        for thing in ("gadget", "sprocket", "lever", "spring", "bolt", "nut", "washer", "gear")
    ]
    for tool, op_id, path, method, title in (
        ("bulk_delete_widgets", "widgetsBulkDelete", "/widgets/", "DELETE", "Delete widgets"),
        ("delete_widget", "widgetsDelete", "/widgets/{id}/", "DELETE", "Delete widgets"),
        *others,
    ):
        rows.append(
            {
                "tool": tool,
                "mode": "read",
                "intent": tool,
                "permission": [],
                "toolset": None,
                "effect": "destructive" if method == "DELETE" else "read",
                "operation": {"id": op_id, "method": method, "path": path},
            }
        )
        catalog.append(
            {
                "name": tool,
                "title": title,
                "description": f"{title}.",
                "inputSchema": {"type": "object", "properties": {}},
            }
        )
    return {"tools": rows}, catalog


def test_the_item_operation_gains_exactly_the_boost_when_the_request_names_one() -> None:
    index = ToolIndex(*_package())
    plain = {h.tool: h.score for h in index.search("delete widget", limit=5)}
    one = {h.tool: h.score for h in index.search("delete widget 740", limit=5)}
    assert set(plain) == set(one) == {"bulk_delete_widgets", "delete_widget"}
    assert min(plain.values()) > 0.01
    assert one["bulk_delete_widgets"] == plain["bulk_delete_widgets"]
    assert one["delete_widget"] == pytest.approx(plain["delete_widget"] * (1 + ITEM_BOOST), rel=1e-4)
    assert ITEM_BOOST > 0


def test_several_values_or_a_new_thing_gain_nothing() -> None:
    index = ToolIndex(*_package())
    plain = {h.tool: h.score for h in index.search("delete widgets", limit=5)}
    assert {h.tool: h.score for h in index.search("delete widgets 1, 2 and 3", limit=5)} == plain
    made = {h.tool: h.score for h in index.search("create widget", limit=5)}
    assert {h.tool: h.score for h in index.search("create widget 740", limit=5)} == made
