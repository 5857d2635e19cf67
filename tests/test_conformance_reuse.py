"""Each catalog tool's conformance remembered between builds
(`toolgen.builder.incremental.conformance_problems`):
for the dialects that check per tool (`Dialect.checks_per_tool`), a catalog conforms exactly when each tool conforms alone
and no name is used twice; a remembered verdict is keyed by the tool object's content, so a changed
tool is checked again (and a key that leaves the object out is caught). The same for each tool
object's bytes and tokens (`toolgen.emit.build_report.measure`)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.builder.test_cache import _apply, _edits, _fresh_state, _write_inputs
from tests.support.profiles import examples

from toolgen.builder import incremental
from toolgen.builder.build import build_api
from toolgen.builder.incremental import conformance_problems
from toolgen.dialects import check_catalog, registry
from toolgen.emit import build_report as report
from toolgen.emit import dialect_catalogs as catalogs_module
from toolgen.emit import piece_key
from toolgen.emit.dialect_catalogs import build_catalogs
from toolgen.remember import Memo

#: the dialects whose tools' verdicts are remembered (`Dialect.checks_per_tool`)
PER_TOOL_CONFORMANCE = tuple(d.name for d in registry().values() if d.checks_per_tool)


_CATALOGS: dict[str, list[dict[str, Any]]] = {}


def _catalogs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    if not _CATALOGS:
        work = tmp_path_factory.mktemp("conformance")
        state = _fresh_state()
        state["extra_ops"] = {1, 2}
        build = build_api(_write_inputs(work, state), work / "out", cache=None)
        _CATALOGS.update({d: build.catalogs.by_dialect()[d] for d in PER_TOOL_CONFORMANCE})
    return _CATALOGS


def _name_of(dialect: str, tool: dict[str, Any]) -> dict[str, Any]:
    return tool["function"] if dialect == "openai" else tool


#: damage done to one tool object: each breaks a rule of every dialect here, or names it twice; the
#: last two break Anthropic's rules that span tools (`Dialect.check_across`: every tool deferred and
#: no tool-search tool; more strict tools than one request's budget), and nothing elsewhere
_DAMAGE = ("name", "schema", "twice", "none", "all-deferred", "all-strict")
_ACROSS = ("all-deferred", "all-strict")


def _damaged(dialect: str, tools: list[dict[str, Any]], index: int, damage: str) -> list[dict[str, Any]]:
    tools = copy.deepcopy(tools)
    target = tools[index % len(tools)]
    if damage == "name":
        _name_of(dialect, target)["name"] = "has spaces and dots."
    elif damage in _ACROSS:
        if dialect == "anthropic":
            for tool in tools:
                tool["defer_loading" if damage == "all-deferred" else "strict"] = True
    elif damage == "schema":
        key = {
            "openai": "parameters",
            "mcp": "inputSchema",
            "gemini": "parameters",
            "anthropic": "input_schema",
        }[dialect]
        holder = _name_of(dialect, target)
        holder[key if key in holder or dialect != "gemini" else "parametersJsonSchema"] = {"type": "array"}
    elif damage == "twice":
        tools.append(copy.deepcopy(target))
    return tools


@settings(max_examples=examples(30), deadline=None)
@given(
    dialect=st.sampled_from(PER_TOOL_CONFORMANCE),
    edits=st.lists(st.tuples(st.integers(0, 20), st.sampled_from(_DAMAGE)), min_size=1, max_size=5),
)
def test_a_remembered_verdict_gives_the_whole_check(
    tmp_path_factory: pytest.TempPathFactory, dialect: str, edits: list[tuple[int, str]]
) -> None:
    """Over a sequence of catalogs (one tool damaged, or named twice, or none), sharing one table:
    what the remembered check finds is what checking the whole catalog finds."""
    good = _catalogs(tmp_path_factory)[dialect]
    table = Memo()
    assert conformance_problems(dialect, good, table) == [] == check_catalog(dialect, good, max_tools=None)
    for index, damage in edits:
        tools = _damaged(dialect, good, index, damage)
        whole = check_catalog(dialect, tools, max_tools=None)
        assert conformance_problems(dialect, tools, table) == whole
        assert bool(whole) == (damage != "none" and (damage not in _ACROSS or dialect == "anthropic"))


def test_an_unchanged_catalog_is_not_checked_again(tmp_path_factory: pytest.TempPathFactory) -> None:
    good = _catalogs(tmp_path_factory)["openai"]
    table = Memo()
    conformance_problems("openai", good, table)
    assert table.computed == len(good)
    edited = _damaged("openai", good, 0, "none")
    edited[0]["function"]["description"] = "Edited."
    assert conformance_problems("openai", edited, table) == []
    assert table.computed == len(good) + 1  # the edited tool alone


def test_a_verdict_keyed_without_the_tool_object_is_caught(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The property above can fail: keyed by the dialect and the tool's name only, a damaged schema
    passes on the verdict of the tool before it."""
    good = _catalogs(tmp_path_factory)["mcp"]
    monkeypatch.setattr(
        incremental, "piece_key", lambda *parts: piece_key(parts[0], parts[1], parts[2]["name"])
    )
    table = Memo()
    conformance_problems("mcp", good, table)
    tools = _damaged("mcp", good, 0, "schema")
    assert check_catalog("mcp", tools, max_tools=None) != []
    assert conformance_problems("mcp", tools, table) == []


def test_without_a_table_the_whole_catalog_is_checked(tmp_path: Path) -> None:
    good = _damaged("gemini", _catalogs_for(tmp_path), 0, "twice")
    assert conformance_problems("gemini", good) == check_catalog("gemini", good, max_tools=None) != []


def _catalogs_for(tmp_path: Path) -> list[dict[str, Any]]:
    state = _fresh_state()
    build = build_api(_write_inputs(tmp_path, state), tmp_path / "out", cache=None)
    return build.catalogs.by_dialect()["gemini"]


def _measured(tmp_path: Path, descriptions: list[str], table: Any) -> tuple[list[Any], list[Any]]:
    state = _fresh_state()
    state["descriptions"] = descriptions
    build = build_api(_write_inputs(tmp_path, state), tmp_path / "out", cache=None)
    return report.measure(build.catalogs, table), report.measure(build.catalogs)


def test_remembered_tool_sizes_follow_the_tool_object(tmp_path: Path) -> None:
    """`toolgen.emit.build_report.measure` remembers each tool object's bytes and tokens by its content:
    after a description is lengthened, the sizes equal a measure without the table, and only the
    changed objects (one tool in four dialects) are measured again."""
    table = Memo()
    first, cold = _measured(tmp_path, ["", "", "", ""], table)
    assert first == cold
    before = table.computed
    edited, cold = _measured(tmp_path, ["A much longer description of listing the items.", "", "", ""], table)
    assert edited == cold != first
    assert table.computed == before + 4


def test_tool_sizes_keyed_without_the_object_are_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: keyed by the tool's name alone, the old sizes come back."""
    monkeypatch.setattr(
        report, "piece_key", lambda kind, tool: piece_key(kind, tool.get("function", tool)["name"])
    )
    table = Memo()
    _measured(tmp_path, ["", "", "", ""], table)
    edited, cold = _measured(tmp_path, ["A much longer description of listing the items.", "", "", ""], table)
    assert edited != cold


def _selected(tmp_path: Path, state: dict[str, Any], table: Any) -> tuple[Any, Any]:
    build = build_api(_write_inputs(tmp_path, state), tmp_path / "out", cache=None)
    remembered, fresh = build_catalogs(build.ir, remember=table), build_catalogs(build.ir)
    return (
        (remembered.tools["anthropic"], remembered.decisions["anthropic"]),
        (fresh.tools["anthropic"], fresh.decisions["anthropic"]),
    )


@settings(max_examples=examples(15), deadline=None)
@given(edits=st.lists(_edits, min_size=1, max_size=4))
def test_remembered_strict_facts_give_the_strict_choice(
    tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[Any, ...]]
) -> None:
    """Anthropic's strict choice over the whole catalog (`select_strict`) reads what it needs of each
    entry (`strict_facts`) through one table across a sequence of edits (effects, properties, hidden
    parameters, operations): each catalog and decision equals the choice computed afresh."""
    work = tmp_path_factory.mktemp("strict")
    state, table = _fresh_state(), Memo()
    for edit in [("summary", 0, "List items."), *edits]:
        _apply(state, edit)
        remembered, fresh = _selected(work, state, table)
        assert remembered == fresh


def test_strict_facts_keyed_without_the_entry_are_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The property above can fail: keyed by the tool's name alone, a tool whose schema gained an
    optional property keeps the budget count of its schema before the edit."""
    monkeypatch.setattr(
        catalogs_module, "piece_key", lambda kind, dialect, entry: piece_key(kind, entry["name"])
    )
    state, table = _fresh_state(), Memo()
    _selected(tmp_path, state, table)
    _apply(
        state, ("property", "a")
    )  # Item gains an optional property: the tools that take an Item count one more
    remembered, fresh = _selected(tmp_path, state, table)
    assert remembered != fresh
