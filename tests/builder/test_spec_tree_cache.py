"""A JSON spec's parsed tree is kept in the build cache by the SHA-256 of the file's bytes
(`toolgen.compile.load._read`), and its text is decoded only when a later stage reads it: a build
whose spec did not change neither decodes nor parses it, writes the bytes of a build without the
cache, and an edited spec is parsed again."""

from __future__ import annotations

import hashlib
import json
import marshal
from pathlib import Path
from typing import Any

import pytest
from tests.builder.test_cache import _build, _fresh_state, _tree, _write_inputs

from toolgen.builder.cache import Cache
from toolgen.builder.incremental import Pieces
from toolgen.compile import load
from toolgen.compile.load import load_spec
from toolgen.diagnostics import DiagnosticError
from toolgen.remember import Memo

_SPEC = {
    "openapi": "3.1.0",
    "info": {"title": "Shells \U0001fab2 and more", "version": "1"},  # a character outside the BMP
    "paths": {"/a": {"get": {"operationId": "getA", "responses": {"200": {"description": "ok"}}}}},
}


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files `_read` decodes and parses from now on."""
    seen: list[str] = []
    real = load._parsed

    def parsed(path: Path, *args: Any) -> Any:
        seen.append(path.name)
        return real(path, *args)

    monkeypatch.setattr(load, "_parsed", parsed)
    return seen


def test_an_unchanged_spec_is_not_parsed_again(
    cache_on: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = _fresh_state()
    intent = _write_inputs(tmp_path, state)
    out = tmp_path / "out"
    parses = _parses(monkeypatch)
    assert _build(intent, out) == 0
    assert parses == ["items.json"]
    parses.clear()
    state["descriptions"][0] = "Every item there is."  # the intent map only
    _write_inputs(tmp_path, state)
    assert _build(intent, out) == 0
    assert parses == []
    assert _build(intent, tmp_path / "cold", "--no-cache") == 0
    assert _tree(out) == _tree(tmp_path / "cold")
    parses.clear()
    before = _tree(out)
    state["summaries"][1] = "Fetch the one item."  # the spec: parsed again, and the edit is built
    _write_inputs(tmp_path, state)
    assert _build(intent, out) == 0
    assert parses == ["items.json"]
    assert _build(intent, tmp_path / "cold", "--no-cache") == 0
    assert _tree(out) == _tree(tmp_path / "cold")
    assert _tree(out) != before


@pytest.mark.parametrize("bom", ["", "\ufeff"])
def test_a_kept_tree_is_the_parsed_tree_and_each_reading_is_its_own(tmp_path: Path, bom: str) -> None:
    path = tmp_path / "spec.json"
    text = bom + json.dumps(_SPEC, indent=1, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    cold = load_spec(path)
    pieces = Pieces(Cache(tmp_path / "cache"), "spec")
    first = load_spec(path, remember=pieces)
    pieces.save()
    again = Pieces(Cache(tmp_path / "cache"), "spec")
    second = load_spec(path, remember=again)
    assert again.computed == 0  # read back
    assert isinstance(second.source, bytes)  # not decoded yet
    for doc in (first, second):
        assert doc.data == cold.data
        assert doc.content_key == cold.content_key
        assert doc.locate("/info/title") == cold.locate("/info/title")
        assert doc.text == cold.text == text.removeprefix("\ufeff")
    second.data["info"]["title"] = "changed"  # a later stage's change reaches no other reading
    assert load_spec(path, remember=again).data == cold.data


def test_the_bytes_of_another_spec_are_another_tree(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    pieces = Pieces(Cache(tmp_path / "cache"), "spec")
    path.write_text(json.dumps(_SPEC), encoding="utf-8")
    assert load_spec(path, remember=pieces).data == _SPEC
    edited = {**_SPEC, "info": {"title": "Another", "version": "1"}}
    path.write_text(json.dumps(edited), encoding="utf-8")
    assert load_spec(path, remember=pieces).data == edited


@pytest.mark.parametrize(
    "text",
    [
        json.dumps({**_SPEC, "info": {"title": "\\ud800", "version": "1"}}),  # a backslash, then text
        json.dumps({**_SPEC, "info": {"title": "\ud800", "version": "1"}}),  # an unpaired surrogate
        '{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {},}',
        "\xff{}",
    ],
)
def test_a_spec_reads_alike_with_its_tree_kept_or_not(tmp_path: Path, text: str) -> None:
    """Read from its bytes (a surrogate escape looked for in the bytes, the text decoded for an
    error's location), a document loads, or is refused with the diagnostics, as without the cache."""
    path = tmp_path / "spec.json"
    path.write_bytes(text.encode("utf-8", "surrogatepass").replace(b"\xc3\xbf", b"\xff"))

    def outcome(**kwargs: Any) -> Any:
        try:
            return load_spec(path, **kwargs).data
        except DiagnosticError as exc:
            return [d.render() for d in exc.diagnostics]

    pieces = Pieces(Cache(tmp_path / "cache"), "spec")
    assert outcome(remember=pieces) == outcome() == outcome(remember=pieces)


@pytest.mark.parametrize("planted", [b"", b"not marshal", marshal.dumps({"openapi": "3.1.0"})[:-3]])
def test_a_kept_tree_that_does_not_read_back_is_parsed_again(tmp_path: Path, planted: bytes) -> None:
    """An entry under the tree's key that is no `marshal` of a tree (cut short, another format) is
    not believed: the file is parsed again."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(_SPEC), encoding="utf-8")
    memo = Memo()
    memo.values[f"{hashlib.sha256(path.read_bytes()).hexdigest()} json tree 2"] = planted
    assert load_spec(path, remember=memo).data == _SPEC
