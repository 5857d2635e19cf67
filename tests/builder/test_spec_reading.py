"""A JSON spec read through the build cache (`toolgen.compile.load._json_tree`), against inputs drawn at
random and the refusals a spec can meet: a build whose spec did not change reads its tree back from the
cache's `spec` table (`marshal` bytes) and never decodes its text, yet gets the document a build without
the cache gets: the same tree (types, values and member order), the same `content_key`, the same text
when a stage asks for it, and the same located errors (`tests/builder/test_spec_tree_cache.py` holds the
examples)."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.builder.cache import Cache
from toolgen.builder.incremental import Pieces
from toolgen.compile.load import SpecDocument, load_spec
from toolgen.diagnostics import DiagnosticError, DiagnosticSink


def _typed(value: Any) -> Any:
    """`value` with each node's exact type beside it, dict members in their order (``1`` and ``1.0``,
    ``True`` and ``1``, and two orders of one dict all differ)."""
    if type(value) is dict:
        return ("dict", [(k, _typed(v)) for k, v in value.items()])
    if type(value) is list:
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, value)


def _load(path: Path, cache: Cache | None) -> SpecDocument:
    """`load_spec` of `path` with the cache's spec table as a build opens it (read when made, saved
    after), or without the cache."""
    if cache is None:
        return load_spec(path, path.name, sink=DiagnosticSink())
    table = Pieces(cache, "spec", "api t")
    try:
        return load_spec(path, path.name, sink=DiagnosticSink(), remember=table)
    finally:
        table.save()


def _spec(extra: Any) -> dict[str, Any]:
    return {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}, "x-data": extra}


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=25,
)


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tree=JSON, ascii_only=st.booleans(), bom=st.booleans())
def test_the_tree_read_back_is_the_tree_parsed(
    tmp_path_factory: pytest.TempPathFactory, tree: Any, ascii_only: bool, bom: bool
) -> None:
    folder = tmp_path_factory.mktemp("spec")
    path = folder / "api.json"
    text = json.dumps(_spec(tree), ensure_ascii=ascii_only, indent=1)
    path.write_bytes((codecs.BOM_UTF8 if bom else b"") + text.encode("utf-8"))
    cache = Cache(folder / "cache")
    plain = _load(path, None)
    first = _load(path, cache)  # parses, and keeps the tree
    again = _load(path, cache)  # reads it back
    assert type(again.source) is bytes  # the text was not decoded
    for doc in (first, again):
        assert _typed(doc.data) == _typed(plain.data)
        assert doc.content_key == plain.content_key
    assert again.text == plain.text == text
    assert again.content_key == plain.content_key  # the same once decoded


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("not UTF-8", b'{"openapi": "3.1.0", "info": {"title": "\xff"}}'),
        ("a trailing comma", b'{"openapi": "3.1.0",\n "info": {"title": "t", "version": "1"},\n}'),
        ("a syntax error", b'{"openapi": "3.1.0" "info": {}}'),
        ("a number too long", b'{"openapi": "3.1.0", "x": ' + b"9" * 5000 + b"}"),
        ("too deep", b'{"openapi": "3.1.0", "x": ' + b"[" * 3000 + b"]" * 3000 + b"}"),
        (
            "a lone surrogate escape",
            b'{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {},\n "x": "\\ud800"}',
        ),
        ("a list", b"[1, 2]"),
    ],
)
def test_an_error_is_the_error_a_build_without_the_cache_reports(
    tmp_path: Path, name: str, content: bytes
) -> None:
    path = tmp_path / "api.json"
    path.write_bytes(content)
    with pytest.raises(DiagnosticError) as plain:
        _load(path, None)
    cache = Cache(tmp_path / "cache")
    for _ in range(2):  # as the first build and as the next
        with pytest.raises(DiagnosticError) as cached:
            _load(path, cache)
        assert [d.render() for d in cached.value.diagnostics] == [
            d.render() for d in plain.value.diagnostics
        ], name
