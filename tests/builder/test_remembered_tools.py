"""The last build's tools taken whole (`toolgen.compile.lower.remembered_tools`, kept by
`toolgen.builder.incremental.LastTools`), on the draft `toolgen init` writes for this repository's GitHub
slice: after each edit a person makes to it (a tool's description, a tool removed, a tool renamed, an
intent's effect, scope and approval, a toolset, a `toolgen.yaml` setting, a schema many operations
use), a build with the cache writes the bytes and reports the findings of a build without it, having
made again only the tools the edit reached. A remembered entry that no longer holds what its key
says is caught (the placement), or shows in the comparison (a stale one); a foreign one is ignored."""

from __future__ import annotations

import pickle
import re
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import REPO, run
from tests.support.profiles import examples

from toolgen.builder.build import ApiBuild, build_project
from toolgen.builder.cache import Cache, digest
from toolgen.builder.incremental import LastTools
from toolgen.builder.project import load_project
from toolgen.compile.ir import Tool
from toolgen.emit import content_digest

Edit = Callable[[Path], None]
#: the intents of the draft (`tools:`)
INTENTS = 16


def _draft(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`toolgen init`'s draft of the GitHub slice in `folder`, as a project."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder / "home-cache"))  # the user's MAC key, made fresh
    shutil.copy(REPO / "specs" / "github.slice.json", folder / "github.slice.json")
    monkeypatch.chdir(folder)
    result = run("init", "github.slice.json", "--name", "gh")
    assert result.exit_code == 0, result.output
    return folder


@pytest.fixture
def draft(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _draft(tmp_path, monkeypatch)


def _build(folder: Path, cache: Cache | None) -> ApiBuild:
    _, builds = build_project(load_project(folder / "toolgen.yaml"), cache=cache)
    (build,) = builds
    return build


def _assert_same(warm: ApiBuild, cold: ApiBuild) -> None:
    assert warm.files == cold.files
    assert [d.render() for d in warm.diagnostics] == [d.render() for d in cold.diagnostics]


def _map(folder: Path) -> Path:
    return folder / "intent_maps" / "gh.yaml"


def _sub(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _describe(folder: Path) -> None:
    _sub(
        _map(folder),
        "    operation: issues/get\n",
        '    operation: issues/get\n    description: "One issue."\n',
    )


def _remove(folder: Path) -> None:
    text = _map(folder).read_text(encoding="utf-8")
    block = re.search(r"\n  issues_lock:\n(    .*\n)+", text)
    assert block is not None
    _map(folder).write_text(text.replace(block.group(0), "\n", 1), encoding="utf-8")


def _rename(folder: Path) -> None:
    _sub(_map(folder), "\n  issues_get:\n", "\n  issues_fetch:\n")


def _intent(folder: Path) -> None:
    """issues_create: a destructive effect, another scope, no approval."""
    text = _map(folder).read_text(encoding="utf-8")
    start = text.index("\n  issues_create:\n")
    end = text.index("\n\n", start)
    block = (
        text[start:end]
        .replace("effect: write", "effect: destructive")
        .replace("permission: gh:write", "permission: [gh:write, issues:admin]")
        .replace("approval: required", "approval: never")
    )
    _map(folder).write_text(text[:start] + block + text[end:], encoding="utf-8")


def _toolsets(folder: Path) -> None:
    """The search tool moves to the repos toolset, and the pulls toolset is deferred."""
    _sub(_map(folder), "    toolset: search\n", "    toolset: repos\n")
    _sub(
        _map(folder),
        'Tools for pulls, merge.", loading: eager}',
        'Tools for pulls, merge.", loading: deferred}',
    )


def add_dialect_option(folder: Path, option: str) -> None:
    """toolgen.yaml: `option` (``"gemini: {...}"``) under `dialects`, beside those an earlier edit set
    there (one `dialects` key: YAML refuses a key written twice)."""
    path = folder / "toolgen.yaml"
    text = path.read_text(encoding="utf-8")
    if "\ndialects: {" in text:
        path.write_text(text.replace("\ndialects: {", "\ndialects: {" + option + ", ", 1), encoding="utf-8")
    else:
        path.write_text(text + "dialects: {" + option + "}\n", encoding="utf-8")


def _setting(folder: Path) -> None:
    """toolgen.yaml: Gemini's parameters as JSON Schema, and a lint rule turned off."""
    add_dialect_option(folder, "gemini: {parameters: json_schema}")
    with (folder / "toolgen.yaml").open("a", encoding="utf-8") as fh:
        fh.write("lint: {severity: {catalog-too-many-tokens: off}}\n")


def _spec(folder: Path) -> None:
    """A description and a property added to `simple-user`, which many operations' answers reach."""
    _sub(
        folder / "github.slice.json",
        '"simple-user": {',
        '"simple-user": {"description": "A GitHub user (edited).", "x-edited": true,',
    )


EDITS: dict[str, Edit] = {
    "description": _describe,
    "removal": _remove,
    "rename": _rename,
    "effect, scope, approval": _intent,
    "toolsets": _toolsets,
    "toolgen.yaml": _setting,
    "spec": _spec,
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_build_after_an_edit_equals_a_build_without_the_cache(draft: Path, edit: str) -> None:
    cache = Cache(draft / "cache")
    first = _build(draft, cache)
    assert first.computed["tools"] == INTENTS  # every intent of the draft, made once
    again = _build(draft, cache)
    _assert_same(again, first)
    assert again.computed["tools"] < first.computed["tools"]  # the others were taken whole
    EDITS[edit](draft)
    warm = _build(draft, cache)
    _assert_same(warm, _build(draft, None))


def test_one_description_makes_one_intent_again(draft: Path) -> None:
    cache = Cache(draft / "cache")
    _build(draft, cache)
    settled = _build(draft, cache).computed["tools"]  # those that report something, every time
    _describe(draft)
    assert _build(draft, cache).computed["tools"] == settled + 1


def _entry(cache: Cache) -> tuple[LastTools, dict[str, tuple[Any, ...]]]:
    """The draft's `LastTools` and the table its entry holds (intent key -> (tools, their digests))."""
    last = LastTools(cache, "gh")
    found = cache.get(LastTools.kind, last.key)
    assert found is not None
    return last, pickle.loads(found)


def test_tools_placed_otherwise_are_made_again(draft: Path) -> None:
    """A remembered entry whose policy rows hold another toolset than `place` gives now (what an
    earlier tool's toolset would change) is not taken: the build equals one without the cache."""
    cache = Cache(draft / "cache")
    _build(draft, cache)
    last, table = _entry(cache)
    assert table
    moved = {
        key: (tuple(replace(t, policy=replace(t.policy, toolset="elsewhere")) for t in tools), digests)
        for key, (tools, digests) in table.items()
    }
    cache.put(LastTools.kind, last.key, pickle.dumps(moved, protocol=5))
    warm = _build(draft, cache)
    assert warm.computed["tools"] == INTENTS
    _assert_same(warm, _build(draft, None))


def test_a_stale_entry_would_show_in_the_comparison(draft: Path) -> None:
    """The comparison these tests make can fail: the tools of issues_get remembered before its
    description was given, put under the key of the described intent (a key that left the
    description out), come back, and the build differs from one without the cache."""
    cache = Cache(draft / "cache")
    _build(draft, cache)
    last, before = _entry(cache)
    _describe(draft)
    _build(draft, cache)
    _, after = _entry(cache)
    (new_key,) = set(after) - set(before)
    (old_key,) = set(before) - set(after)
    stale = dict(after)
    stale[new_key] = before[old_key]
    cache.put(LastTools.kind, last.key, pickle.dumps(stale, protocol=5))
    warm = _build(draft, cache)
    assert warm.files != _build(draft, None).files


def test_each_tool_is_kept_with_the_digest_of_its_content(draft: Path) -> None:
    """The entry keeps each tool with the SHA-256 of its `content_pickle`: the tools the first build
    made, and after an edit those taken whole beside the one made again."""
    cache = Cache(draft / "cache")
    _build(draft, cache)
    _describe(draft)
    _build(draft, cache)
    _, table = _entry(cache)
    pairs = [
        (tool, known) for tools, digests in table.values() for tool, known in zip(tools, digests, strict=True)
    ]
    assert len(pairs) >= INTENTS
    assert all(known == content_digest(tool) for tool, known in pairs)


def test_the_catalog_records_are_keyed_by_what_names_each_tools_content(
    draft: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The digest the lowering gives each final tool (`LastTools.content_digest`) is the SHA-256 of
    its content when the tool is the one an intent made or took, and names the kept tool and the new
    description when a routing note replaced the description alone; a composite is digested by the
    catalog records themselves (None)."""
    given: list[tuple[LastTools, Tool, str | None]] = []
    real = LastTools.content_digest

    def spy(self: LastTools, tool: Tool) -> str | None:
        found = real(self, tool)
        given.append((self, tool, found))
        return found

    monkeypatch.setattr(LastTools, "content_digest", spy)
    cache = Cache(draft / "cache")
    _build(draft, cache)
    _describe(draft)
    warm = _build(draft, cache)
    _assert_same(warm, _build(draft, None))
    _, table = _entry(cache)
    kept = {
        tool.name: (tool, known)
        for tools, digests in table.values()
        for tool, known in zip(tools, digests, strict=True)
    }
    asked = [(tool, found) for _, tool, found in given[-len(warm.ir.tools) :]]
    assert {tool.name for tool, _ in asked} == {tool.name for tool in warm.ir.tools}
    noted = 0
    for tool, found in asked:
        content = content_digest(tool)
        if tool.name not in kept:
            assert found is None
        elif found == content:
            assert kept[tool.name][1] == content
        else:
            base, known = kept[tool.name]
            assert base.description != tool.description
            assert replace(base, description=tool.description) == tool
            assert found == digest("tool with a routing note 1", known, tool.description)
            noted += 1
    assert noted > 0  # the draft has tools whose description a routing note extends


def test_a_digest_that_names_another_tool_would_show_in_the_comparison(draft: Path) -> None:
    """The digests are what the catalog records are found by: kept with each other tool's (a
    rotation), the records of other tools come back and the build differs from one without the
    cache, or breaks its catalogs' rules (so the comparisons above can fail)."""
    cache = Cache(draft / "cache")
    _build(draft, cache)
    last, table = _entry(cache)
    keys = list(table)
    rotated = {
        key: (table[key][0], table[keys[i - 1]][1][: len(table[key][0])]) for i, key in enumerate(keys)
    }
    rotated = {k: v for k, v in rotated.items() if len(v[0]) == len(v[1])}
    assert len(rotated) > INTENTS // 2
    cache.put(LastTools.kind, last.key, pickle.dumps(rotated, protocol=5))
    try:
        warm = _build(draft, cache)
    except RuntimeError as exc:  # other tools' entries: names twice, caught by the conformance check
        assert "breaks dialect rules" in str(exc)
    else:
        assert warm.files != _build(draft, None).files


@pytest.mark.parametrize(
    "shape",
    ["tools without digests", "one digest too few", "a digest too short", "a digest not a string"],
)
def test_an_entry_of_another_format_is_ignored(draft: Path, shape: str) -> None:
    cache = Cache(draft / "cache")
    _build(draft, cache)
    last, table = _entry(cache)
    changed: Callable[[tuple[Tool, ...], tuple[str, ...]], Any] = {
        "tools without digests": lambda tools, digests: tools,
        "one digest too few": lambda tools, digests: (tools, digests[:-1]),
        "a digest too short": lambda tools, digests: (tools, tuple(d[:-1] for d in digests)),
        "a digest not a string": lambda tools, digests: (tools, tuple(d.encode() for d in digests)),
    }[shape]
    cache.put(
        LastTools.kind,
        last.key,
        pickle.dumps({key: changed(*value) for key, value in table.items()}, protocol=5),
    )
    warm = _build(draft, cache)
    assert warm.computed["tools"] == INTENTS
    _assert_same(warm, _build(draft, None))


@pytest.mark.parametrize(
    "payload",
    [
        pickle.dumps(["not", "a", "table"], protocol=5),
        pickle.dumps({"key": ("not a tool",)}, protocol=5),
        pickle.dumps({"key": ()}, protocol=5),
        pickle.dumps({"key": ((), ())}, protocol=5),
        b"\x80\x05truncated",
    ],
)
def test_a_foreign_entry_is_ignored(draft: Path, payload: bytes) -> None:
    cache = Cache(draft / "cache")
    _build(draft, cache)
    last, _ = _entry(cache)
    cache.put(LastTools.kind, last.key, payload)
    warm = _build(draft, cache)
    assert warm.computed["tools"] == INTENTS
    _assert_same(warm, _build(draft, None))


@pytest.mark.long
@settings(
    max_examples=examples(3),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.sampled_from(list(EDITS)), min_size=2, max_size=3, unique=True))
def test_sequences_of_edits_equal_builds_without_the_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, edits: list[str]
) -> None:
    each_edit_equals_a_build_without_the_cache(
        _draft(tmp_path_factory.mktemp("draft"), monkeypatch), [EDITS[edit] for edit in edits]
    )


def each_edit_equals_a_build_without_the_cache(folder: Path, edits: list[Edit]) -> None:
    """Build `folder` with a cache of its own, then make each edit in turn, each build with the cache
    of the builds before it equal to one without it (`_assert_same`)."""
    cache = Cache(folder / "cache")
    _build(folder, cache)
    for edit in edits:
        edit(folder)
        _assert_same(_build(folder, cache), _build(folder, None))
