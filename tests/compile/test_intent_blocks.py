"""`toolgen.compile.intent_blocks`: an intent map's tree assembled from its tools' blocks is the tree
ruamel.yaml's round trip gives for the whole text (the same keys in the same order, the same plain
values, every key and item at the same line and column), or nothing, and the whole text is parsed;
never a tree where the whole text's parse fails or reads otherwise. Over texts made of the YAML that
could make a block read differently alone (quoted and flow values running on, anchors and aliases
across blocks, merge keys, block scalars, tabs, directives, comments and keys at odd indents), over
edits of a block, and over `toolgen init`'s drafts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import REAL, run
from tests.support.profiles import examples
from tests.test_draft_build_loop import draft_spec

from toolgen.compile import intent
from toolgen.compile.intent import load_intent_map
from toolgen.compile.intent_blocks import load_blocks
from toolgen.remember import Memo
from toolgen.yaml_text import plain_yaml


def _parse(text: str) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="rt").load(text)


def _shape(node: Any) -> Any:
    """Everything toolgen reads of a tree: keys in order with their positions, items with theirs,
    plain values."""
    if isinstance(node, dict):
        lc: Any = getattr(node, "lc")  # noqa: B009 - ruamel's own attribute, and `LocatedMap`'s
        return ("m", [(k, tuple(lc.key(k)), _shape(v)) for k, v in node.items()])
    if isinstance(node, list):
        items: Any = getattr(node, "lc")  # noqa: B009
        return ("s", [(tuple(items.item(i)), _shape(v)) for i, v in enumerate(node)])
    return ("v", type(plain_yaml(node)).__name__, plain_yaml(node))


def _agree(text: str, memo: Memo | None = None) -> Any:
    """`load_blocks` of `text` is None or the whole parse's tree; returns the tree (None: not split)."""
    try:
        whole = _parse(text)
    except Exception:  # noqa: BLE001 - ruamel raises several unrelated error types
        whole = Exception
    assembled = load_blocks(text, _parse, memo if memo is not None else Memo())
    if assembled is None:
        return None
    assert whole is not Exception, "assembled a tree from a text the whole parse refuses"
    assert _shape(assembled) == _shape(whole)
    return assembled


#: entries of a tool's mapping, each valid YAML at its place; some read differently alone (an alias to
#: another block's anchor, a merge key) or hold a line that looks like a block's start (in quotes, in a
#: flow collection)
_ENTRIES = (
    "    operation: getItem",
    "    effect: read",
    "    description: plain words here",
    "    fields: [a, b]",
    "    list:\n    - one\n    - two\n    -   - nested",
    "    block: |\n      text of a block\n\n      more",
    "    keep: |+\n      kept\n\n",
    "    folded: >-\n      folded\n      text",
    "  # a comment",
    "# a comment at column 0",
    "",
    "    number: 0o17",
    "    yes_or_no: yes",
    "    null_value: ~",
    "    float: 1e3",
    '    uni: "é\\u00e9"',
    "    output: {fields: [id, name]}",
    "    empty:",
    '    quoted: "runs on\n  tool_q: inside the quotes"',
    "    single: 'runs on\n  tool_s: inside'",
    "    flow: {fields: [id,\n  tool_f: 1]}",
    "    anchor: &shared {a: 1}\n    alias: *shared",
    "    scalar: &s word\n    again: *s",
    "    crossref: *shared",
    "    <<: {merged: 1}",
    "    when: 2001-12-14",
    "    set: !!set {a, b}",
    "    omap: !!omap [a: 1]",
    "    tagged: !custom value",
    "    1: integer key",
    "    ? complex\n    : value",
    '    esc: "\\ud800"',
    "    deep: [[[[1]]]]",
    "    tab:\tvalue",
)
#: lines that are not entries: most make the text invalid YAML, or move what follows
_LINES = (
    "\tindented by a tab",
    " one_space: 1",
    "  ? k",
    "  : v",
    "---",
    "...",
    "%YAML 1.1",
    "tools:",
    "  tools:",
    "x: top level",
    "      - under a scalar",
    "  bare_key_no_colon",
    '  "quoted": key',
    "    dup: 1",
    "    dup: 1",
)
_FRAGMENTS = _ENTRIES + _LINES
_body = st.one_of(
    st.lists(st.sampled_from(_ENTRIES), unique=True, max_size=5),
    st.lists(st.sampled_from(_ENTRIES), unique=True, max_size=5),
    st.lists(st.sampled_from(_FRAGMENTS), max_size=5),
)
_block = st.tuples(
    st.sampled_from(["tool_a", "tool_b", "tool_c", "get-x", "x.y", "tool_a"]),
    st.sampled_from(["", "", "", "", " {operation: op}", " &anchor", " *shared", " # note", " null"]),
    _body,
)
_head = st.lists(
    st.sampled_from(
        (
            "toolgen: 1",
            "spec: spec.yaml",
            "api: {name: x}",
            "# head",
            "",
            "defaults: &d",
            "  timeout_ms: 5",
            "toolgen: 1",
            "spec: spec.yaml",
            "%YAML 1.2",
            "---",
        )
    ),
    max_size=3,
    unique=True,
)
_tail = st.lists(
    st.sampled_from(
        (
            "include: []",
            "toolsets: {a: {}}",
            "composites: *d",
            "# tail",
            "",
            "  trailing: indented",
            "extra: [1,",
            "  2]",
            "include: []",
            "# tail",
        )
    ),
    max_size=3,
)


@settings(max_examples=examples(800), deadline=None)
@given(
    head=_head,
    blocks=st.lists(_block, min_size=1, max_size=5),
    tail=_tail,
    between=st.sampled_from(["", "\n", "\n  # under tools\n"]),
)
def test_an_assembled_tree_is_the_whole_texts_tree(
    head: list[str], blocks: list[tuple[str, str, list[str]]], tail: list[str], between: str
) -> None:
    text = "\n".join([*head, "tools:" + between.rstrip("\n")]) + "\n"
    for name, after, lines in blocks:
        text += "\n".join([f"  {name}:{after}", *lines]) + "\n"
    text += "\n".join(tail) + ("\n" if tail else "")
    _agree(text)


@settings(max_examples=examples(100), deadline=None)
@given(
    blocks=st.lists(
        st.lists(st.sampled_from(_ENTRIES[:18]), unique=True, max_size=4), min_size=2, max_size=5
    ),
    edit=st.integers(0, 4),
    fragment=st.sampled_from(_FRAGMENTS),
)
def test_an_edited_block_is_read_again_and_the_others_are_remembered(
    blocks: list[list[str]], edit: int, fragment: str
) -> None:
    def text_of(parts: list[list[str]]) -> str:
        return (
            "toolgen: 1\ntools:\n"
            + "".join("\n".join([f"  tool_{i}:", *lines]) + "\n" for i, lines in enumerate(parts))
            + "include: []\n"
        )

    memo = Memo()
    _agree(text_of(blocks), memo)
    before = memo.computed
    edited = [list(lines) for lines in blocks]
    edited[edit % len(edited)].append(fragment)
    if _agree(text_of(edited), memo) is not None and before:
        # the edited block was read, and the skeleton (its blank lines for the tools moved the tail)
        assert memo.computed - before <= 2


def test_an_edit_that_keeps_the_lines_reads_the_edited_block_alone() -> None:
    """A tool's line replaced (a new description) leaves the skeleton's text as it was: its reading
    is remembered, and the one text parsed again is the edited block."""
    head = "toolgen: 1\nspec: spec.yaml\ndefaults: {timeout_ms: 5}\ntools:\n"
    tail = "toolsets:\n  a: {description: first}\ninclude: []\n"
    body = "".join(f"  tool_{i}:\n    operation: op{i}\n    description: text {i}\n" for i in range(3))
    parsed: list[str] = []

    def parse(text: str) -> Any:
        parsed.append(text)
        return _parse(text)

    memo = Memo()
    assert load_blocks(head + body + tail, parse, memo) is not None
    assert len(parsed) == 4  # the skeleton and three blocks
    parsed.clear()
    edited = head + body.replace("text 1", "another text") + tail
    tree = load_blocks(edited, parse, memo)
    assert tree is not None
    assert parsed == ["  tool_1:\n    operation: op1\n    description: another text\n"]
    assert _shape(tree) == _shape(_parse(edited))
    # each reading is a tree of its own: changing one leaves the next reading as the text says
    tree["toolsets"]["a"]["description"] = "changed"
    tree["defaults"]["timeout_ms"] = 6
    assert _shape(load_blocks(edited, parse, memo)) == _shape(_parse(edited))


def test_a_skeleton_that_shares_a_container_is_parsed_each_time() -> None:
    """An alias to a mapping in the skeleton (``defaults: &d`` ... ``composites: *d``) is one object
    in ruamel's tree: its reading is not remembered, and the skeleton is parsed again."""
    text = "defaults: &d {timeout_ms: 5}\ntools:\n  tool_a:\n    operation: op\ncomposites: *d\n"
    parsed: list[str] = []

    def parse(part: str) -> Any:
        parsed.append(part)
        return _parse(part)

    memo = Memo()
    for _ in range(2):
        assert _shape(load_blocks(text, parse, memo)) == _shape(_parse(text))
    assert len([p for p in parsed if p.startswith("defaults")]) == 3  # read, then parsed twice


def test_a_draft_is_read_from_its_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "spec.json").write_text(json.dumps(draft_spec()), encoding="utf-8")
    assert run("init", "spec.json", "--name", "widgets").exit_code == 0
    text = (tmp_path / "intent_maps" / "widgets.yaml").read_text(encoding="utf-8")
    memo = Memo()
    assert _agree(text, memo) is not None and memo.computed == 17  # the skeleton and 16 blocks
    whole = load_intent_map(tmp_path / "intent_maps" / "widgets.yaml")
    monkeypatch.setattr(intent, "_LAST_LOADED", {})  # not the last map kept: read again, from the blocks
    blocks = load_intent_map(tmp_path / "intent_maps" / "widgets.yaml", remember=Memo())
    assert blocks is not whole
    assert blocks.model == whole.model
    for key in whole.model.tools:
        assert blocks.locate("tools", key, "operation") == whole.locate("tools", key, "operation")


@pytest.mark.slow
@pytest.mark.skipif(
    not (REAL / "github-api.github.com.json").is_file(), reason="../shared/specs/real is not available"
)
def test_the_github_draft_is_read_from_its_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert (
        run(
            "init",
            str(REAL / "github-api.github.com.json"),
            "--name",
            "github",
            "--no-project",
            "--out",
            "github.yaml",
        ).exit_code
        == 0
    )
    memo = Memo()
    assert _agree((tmp_path / "github.yaml").read_text(encoding="utf-8"), memo) is not None
    assert memo.computed > 1200  # one block per intent (1,223; 1,807 tools with previews and records)


def test_a_block_scalar_that_keeps_its_line_breaks_is_read_with_the_whole_text() -> None:
    # `|+` keeps the blank lines after it: in the whole text they follow the block, alone they do not
    text = "tools:\n  tool_a:\n    operation: getItem\n    keep: |+\n      kept\n\n\n"
    assert load_blocks(text, _parse, Memo()) is None
    assert _agree(text.replace("|+", "|")) is not None
