"""Each catalog entry kept with the values the later stages derive from it
(`toolgen.builder.catalog_pieces`, `toolgen.emit.derived`), on the draft `toolgen init` writes for this
repository's GitHub slice: after each edit a person makes (a tool's description, an edit that rewrites
another tool's routing note, a tool removed, a tool renamed, an intent's effect, scope and approval, a
toolset, a `toolgen.yaml` setting and a dialect option, a schema many operations use), a build with the
cache writes the bytes and reports the findings of a build without it. A record planted under another
tool's key, or holding another derived value, shows in that comparison; a record of another shape is
not read."""

from __future__ import annotations

import json
import pickle
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.builder.test_remembered_tools import (
    EDITS,
    _assert_same,
    _build,
    _describe,
    _draft,
    _entry,
    _map,
    _sub,
    add_dialect_option,
    draft,
    each_edit_equals_a_build_without_the_cache,
)
from tests.support.profiles import examples

from toolgen.builder.build import ApiBuild
from toolgen.builder.cache import Cache, digest
from toolgen.builder.catalog_pieces import TOOL_VALUES, CatalogMemo, record_key
from toolgen.builder.incremental import pickled_table
from toolgen.compile.ir import Tool
from toolgen.dialects import DialectOptions
from toolgen.dialects.anthropic import ANTHROPIC_MAX_STRICT_TOOLS
from toolgen.emit import content_digest
from toolgen.emit.policy import POLICY_LINE, row_facts

__all__ = ["draft"]  # the fixture, shared with test_remembered_tools


def _rename_a_neighbour(folder: Path) -> None:
    """pulls_get renamed: pulls_list's intent is unchanged, but its routing note (``Not for one by
    pull_number: use pulls_get.``) now names pulls_fetch."""
    _sub(_map(folder), "\n  pulls_get:\n", "\n  pulls_fetch:\n")


def _no_examples(folder: Path) -> None:
    """toolgen.yaml: Anthropic's catalog without input_examples (a dialect option)."""
    add_dialect_option(folder, "anthropic: {input_examples: false}")


CASES = {**EDITS, "another tool's routing note": _rename_a_neighbour, "dialect option": _no_examples}


def _table(cache: Cache) -> tuple[str, dict[str, bytes]]:
    """The draft's catalog table (its key, and its base merged with its delta)."""
    key = CatalogMemo(cache, DialectOptions(), None, "gh").key
    base = pickled_table(cache, "catalog", key, lambda v: type(v) is bytes)
    delta = pickled_table(cache, "catalog", digest(key, "delta"), lambda v: type(v) is bytes)
    assert base or delta
    return key, base | delta


def _plant(cache: Cache, key: str, table: dict[str, bytes]) -> None:
    cache.put("catalog", key, pickle.dumps(table, protocol=5))
    cache.put("catalog", digest(key, "delta"), pickle.dumps({}, protocol=5))


def _record_key(tool: Tool, cache: Cache) -> str:
    """The key of `tool`'s record as the build finds it: by the digest the last build's tools are kept
    with (`LastTools.content_digest`: the tool an intent made, or one a routing note replaced the
    description of), else by the SHA-256 of its content (a composite)."""
    _, table = _entry(cache)
    kept = {t.name: (t, d) for tools, digests in table.values() for t, d in zip(tools, digests, strict=True)}
    content = content_digest(tool)
    base = kept.get(tool.name)
    if base is None or base[0] == tool:
        return record_key(base[1] if base is not None else content)
    assert replace(base[0], description=tool.description) == tool
    return record_key(digest("tool with a routing note 1", base[1], tool.description))


def _mcp_description(build: ApiBuild, name: str) -> str:
    return next(t.description for t in build.ir.tools if t.name == name)


@pytest.mark.parametrize("edit", list(CASES))
def test_a_build_after_an_edit_equals_a_build_without_the_cache(draft: Path, edit: str) -> None:
    cache = Cache(draft / "cache")
    first = _build(draft, cache)
    again = _build(draft, cache)
    _assert_same(again, first)
    assert again.computed["catalog"] == 0  # every entry read back, with what was derived from it
    CASES[edit](draft)
    warm = _build(draft, cache)
    _assert_same(warm, _build(draft, None))
    assert warm.computed["catalog"] < 4 * len(warm.ir.tools) or edit in ("toolgen.yaml", "dialect option")


def test_a_routing_note_rewritten_by_another_intent_is_another_record(draft: Path) -> None:
    """The list tool's intent did not change, and its tools were taken whole from the last build; its
    final description did (the note names the renamed tool), so its entries are made again."""
    cache = Cache(draft / "cache")
    before = _build(draft, cache)
    _rename_a_neighbour(draft)
    after = _build(draft, cache)
    old, new = (_mcp_description(b, "pulls_list") for b in (before, after))
    assert old.endswith("use pulls_get.") and new.endswith("use pulls_fetch.")
    assert after.computed["tools"] < before.computed["tools"]  # the list tool's intent was taken whole
    assert after.computed["catalog"] >= 8  # the renamed get's and the list's entries, in four dialects
    _assert_same(after, _build(draft, None))


def test_a_stale_record_would_show_in_the_comparison(draft: Path) -> None:
    """The comparison can fail: the records of issues_get made before its description was given,
    planted under the keys of the described tool (a key that left the description out), come back
    with their entries and derived values, and the files differ from a build without the cache."""
    cache = Cache(draft / "cache")
    before = _build(draft, cache)
    _, table = _table(cache)
    _describe(draft)
    described = _build(draft, None)
    key, _ = _table(cache)
    old = next(t for t in before.ir.tools if t.name == "issues_get")
    new = next(t for t in described.ir.tools if t.name == "issues_get")
    made = record_key(content_digest(new))  # the next build makes it anew
    _plant(cache, key, table | {made: table[_record_key(old, cache)]})
    warm = _build(draft, cache)
    assert warm.files != described.files


def test_a_derived_value_is_what_the_build_writes(draft: Path) -> None:
    """The values kept with an entry are used, not recomputed: a record whose indented JSON was changed
    (by hand: the build never writes one) makes mcp.json differ. So the key that names them must be
    right, which the other tests show."""
    cache = Cache(draft / "cache")
    first = _build(draft, cache)
    key, table = _table(cache)
    tool = next(t for t in first.ir.tools if t.name == "issues_get")
    entries, derived = pickle.loads(table[_record_key(tool, cache)])
    record = derived["mcp"]
    (json_key,) = [k for k in record if k.startswith("json ")]
    record[json_key] = record[json_key].replace(b"issues_get", b"issues_got")
    _plant(cache, key, table | {_record_key(tool, cache): pickle.dumps((entries, derived), protocol=5)})
    warm = _build(draft, cache)
    assert warm.files["mcp.json"] != first.files["mcp.json"]
    assert b'"issues_got"' in warm.files["mcp.json"]


@pytest.mark.parametrize(
    "payload",
    [
        lambda entries, derived: pickle.dumps(entries, protocol=5),  # no values beside the entries
        lambda entries, derived: pickle.dumps((entries, {"mcp": {"o200k-object": [1, 2]}}), protocol=5),
        lambda entries, derived: pickle.dumps((entries, derived, None), protocol=5),
        lambda entries, derived: pickle.dumps(({"mcp": "entry"}, derived), protocol=5),
        lambda entries, derived: pickle.dumps((entries, derived), protocol=5)[:-9],  # truncated
    ],
    ids=["entries alone", "a list kept", "a triple", "no entry in it", "truncated"],
)
def test_a_record_of_another_shape_is_not_read(draft: Path, payload: Any) -> None:
    cache = Cache(draft / "cache")
    first = _build(draft, cache)
    key, table = _table(cache)
    planted = {k: payload(*pickle.loads(v)) for k, v in table.items()}
    _plant(cache, key, planted)
    warm = _build(draft, cache)
    assert warm.computed["catalog"] == 4 * len(warm.ir.tools)  # every entry made again
    _assert_same(warm, first)


def test_each_record_keeps_what_the_stages_derived_from_its_entry(draft: Path) -> None:
    """After a build, the records of the plain catalogs hold each tool's sizes, conformance verdict and
    indented JSON (written back although the entry was read, not made: `PieceTable.save` writes a
    record whose value changed under the same key)."""
    cache = Cache(draft / "cache")
    _build(draft, cache)
    _, table = _table(cache)
    lacking = []
    for payload in table.values():
        entries, derived = pickle.loads(payload)
        assert set(entries) == {"openai", "anthropic", "gemini", "mcp"}
        assert set(derived) == {*entries, TOOL_VALUES}
        del derived[TOOL_VALUES]  # the values derived from the IR tool itself: the next test
        for record in derived.values():
            assert record
            if not {"o200k-object", "json"} <= {name.split(" ")[0] for name in record}:
                lacking.append(record)
    # an entry Anthropic's budget made strict is another object (keyed by its content, not kept here)
    assert len(lacking) <= ANTHROPIC_MAX_STRICT_TOOLS
    assert all(list(record) == ["select-facts 1 anthropic"] for record in lacking)


def test_each_record_keeps_what_the_stages_derived_from_its_tool(draft: Path) -> None:
    """Beside its entries, each record holds what the stages derived from the IR tool itself
    (`TOOL_VALUES`): its policy row's line in POLICY.md, the line the build without the cache writes;
    a row with argument rewrites is not the tool's own and has none. The members a tool's own row is
    grouped by in the search index, read from the row without making its JSON (`row_facts`), are its
    JSON's."""
    cache = Cache(draft / "cache")
    build = _build(draft, cache)
    _, table = _table(cache)
    policy = json.loads(build.files["policy.json"])["tools"]
    lines = build.files["POLICY.md"].decode("utf-8").splitlines()
    rewritten = [t for t in build.ir.tools if t.name in build.catalogs.rewrites]
    for tool, row in zip(build.ir.tools, policy, strict=True):
        values = pickle.loads(table[_record_key(tool, cache)])[1][TOOL_VALUES]
        assert row_facts(tool.policy) == tuple(
            (k, tool.policy.to_json()[k]) for k, _ in row_facts(tool.policy)
        )
        if tool in rewritten:
            assert values == {} and row != tool.policy.to_json()
            continue
        assert row == tool.policy.to_json()
        assert set(values) == {POLICY_LINE} and values[POLICY_LINE] in lines
        assert values[POLICY_LINE].startswith(f"| `{tool.name}`")
    assert 0 < len(rewritten) < len(build.ir.tools) / 4  # both kinds of row are checked


def test_a_policy_line_kept_with_the_tool_is_what_the_build_writes(draft: Path) -> None:
    """The POLICY.md line kept with the tool is used, not recomputed: a record whose line was changed by
    hand makes POLICY.md differ, and nothing else."""
    cache = Cache(draft / "cache")
    first = _build(draft, cache)
    key, table = _table(cache)
    tool = next(t for t in first.ir.tools if t.name == "issues_get")
    entries, derived = pickle.loads(table[_record_key(tool, cache)])
    values = derived[TOOL_VALUES]
    values[POLICY_LINE] = values[POLICY_LINE].replace("issues_get", "issues_got")
    _plant(cache, key, table | {_record_key(tool, cache): pickle.dumps((entries, derived), protocol=5)})
    warm = _build(draft, cache)
    assert [f for f in first.files if warm.files[f] != first.files[f]] == ["POLICY.md"]


def test_the_anthropic_check_with_tool_search_says_what_the_whole_check_says() -> None:
    """`anthropic_search_problems` gives `check_anthropic_catalog`'s verdict, the limit included, with
    each tool's verdict remembered."""
    from toolgen.builder.incremental import anthropic_search_problems
    from toolgen.dialects.anthropic import check_anthropic_catalog
    from toolgen.remember import Memo

    search: dict[str, Any] = {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}
    tools: list[dict[str, Any]] = [
        {"name": f"t{i}", "description": "d", "input_schema": {"type": "object"}, "defer_loading": True}
        for i in range(3)
    ]
    bad = [*tools, {"name": "t0", "description": "d", "input_schema": {"type": "string"}}]
    memo = Memo()
    cases: list[tuple[list[dict[str, Any]], int]] = [
        ([search, *tools], 10),
        ([search, *tools], 3),
        ([search, *bad], 10),
        (tools, 10),
    ]
    for catalog, limit in cases:
        whole = check_anthropic_catalog(catalog, max_search_tools=limit)
        assert anthropic_search_problems(catalog, limit, memo) == whole
        assert anthropic_search_problems(catalog, limit, memo) == whole  # the verdicts read back
    assert check_anthropic_catalog([search, *tools], max_search_tools=3)  # the limit is checked


@pytest.mark.long
@settings(
    max_examples=examples(3),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.sampled_from(list(CASES)), min_size=2, max_size=3, unique=True))
def test_sequences_of_edits_equal_builds_without_the_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, edits: list[str]
) -> None:
    """Any order of the edits above, each build with the records of the builds before it."""
    each_edit_equals_a_build_without_the_cache(
        _draft(tmp_path_factory.mktemp("draft"), monkeypatch), [CASES[edit] for edit in edits]
    )
