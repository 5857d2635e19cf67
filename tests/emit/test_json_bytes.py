"""`toolgen.emit.json_bytes` is byte-identical to the standard library's sorted, indented JSON, for any
JSON value (and for the values it leaves to the standard library)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.emit import json_bytes
from toolgen.remember import Memo

_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=40,
)


def _reference(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


@settings(max_examples=examples(400))
@given(_json)
def test_equals_the_standard_library(value: Any) -> None:
    assert json_bytes(value) == _reference(value)


@given(st.lists(st.dictionaries(st.text(max_size=3), _json, max_size=3), max_size=5))
def test_a_catalog_shaped_list_equals_the_standard_library(value: list[Any]) -> None:
    assert json_bytes(value) == _reference(value)
    assert json_bytes({"tools": value, "api": "x"}) == _reference({"tools": value, "api": "x"})


@settings(max_examples=examples(200))
@given(
    st.lists(_json, min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=12),
)
def test_shared_subtrees_equal_the_standard_library(pool: list[Any], picks: list[tuple[int, int]]) -> None:
    """The same container object reached at different depths (as the IR and the views share
    subtrees between tools) is written once and re-indented: the bytes stay the standard library's."""
    value: list[Any] = []
    for index, depth in picks:
        node = pool[index % len(pool)]
        for _ in range(depth):
            node = {"wrap": node, "s": "a\nb"}
        value.append(node)
    catalog = {"tools": [{"schema": v, "again": v} for v in value], "pool": pool}
    assert json_bytes(value) == _reference(value)
    assert json_bytes(catalog) == _reference(catalog)


def test_values_it_leaves_to_the_standard_library() -> None:
    for value in ({"a": (1, 2)}, [{"b": [(3,)]}], {"x": {"y": [1, {"z": (4,)}]}}):
        assert json_bytes(value) == _reference(value)


def test_deep_nesting_equals_the_standard_library() -> None:
    value: Any = 1
    for _ in range(900):
        value = [value]
    assert json_bytes({"deep": value}) == _reference({"deep": value})


@settings(max_examples=examples(200))
@given(st.lists(st.dictionaries(st.text(max_size=3), _json, max_size=3), max_size=5), _json)
def test_remembered_pieces_give_the_same_bytes(tools: list[Any], other: Any) -> None:
    """Each object of a list in the outer two levels goes through `remember`; a table filled by one
    document (and holding pieces of another) gives the bytes of no table at all, computing nothing again."""
    table = Memo()
    for value in (tools, {"tools": tools, "api": "x"}, [other, tools]):
        assert json_bytes(value, table) == _reference(value)
    before = table.computed
    for value in (tools, {"tools": tools, "api": "x"}, [other, tools]):
        assert json_bytes(value, table) == _reference(value)
    assert table.computed == before
    if tools and all(isinstance(t, dict) for t in tools):
        assert before >= 1


def test_equal_pieces_of_other_types_are_not_confused() -> None:
    table = Memo()
    assert json_bytes([{"a": 1}], table) == b'[\n  {\n    "a": 1\n  }\n]\n'
    assert json_bytes([{"a": True}], table) == b'[\n  {\n    "a": true\n  }\n]\n'
    assert json_bytes([{"a": 1.0}], table) == b'[\n  {\n    "a": 1.0\n  }\n]\n'
    assert table.computed == 3


def test_a_known_object_is_keyed_by_its_registered_digest_and_only_in_its_scope() -> None:
    """`known_contents`: inside the scope, the very object registered is keyed by its digest (equal
    content registered under another digest, or not at all, keys apart); outside it, by content."""
    from toolgen.emit import known_contents, piece_key

    tool = {"name": "a", "schema": {"type": "object"}}
    twin = json.loads(json.dumps(tool))
    by_content = piece_key("json", "  ", tool)
    assert piece_key("json", "  ", twin) == by_content
    with known_contents() as register:
        register(tool, "d1")
        keyed = piece_key("json", "  ", tool)
        assert keyed != by_content  # not walked: its digest stands for it
        assert piece_key("json", "  ", twin) == by_content  # an equal object that is not registered
        assert piece_key("json", "  ", [tool]) == piece_key("json", "  ", [twin])  # only a part itself
        with known_contents() as inner:
            inner(twin, "d1")
            assert piece_key("json", "  ", twin) == keyed  # the same digest: the same key
            assert piece_key("json", "  ", tool) == by_content  # the innermost scope decides
        register(twin, "d2")
        assert piece_key("json", "  ", twin) != keyed
    assert piece_key("json", "  ", tool) == by_content
    memo = Memo()  # a value remembered in the scope is found by the same digest, not by content
    with known_contents() as register:
        register(tool, "d1")
        assert json_bytes([tool], memo) == _reference([tool])
    with known_contents() as register:
        register(twin, "d1")
        assert json_bytes([twin], memo) == _reference([tool]) and memo.computed == 1


def test_a_raw_table_keeps_bytes_as_they_are(tmp_path: Path) -> None:
    """The build's JSON table keeps each piece's bytes unpickled (`toolgen.builder.incremental.Pieces` with
    `raw`): what a later build reads back is the bytes computed, and a value that is not bytes is
    refused (it could not come back as it went in)."""
    from toolgen.builder.cache import Cache
    from toolgen.builder.incremental import Pieces

    cache = Cache(tmp_path / "cache")
    first = Pieces(cache, "json", "api t", raw=True)
    assert first("a", lambda: b'{\n  "a": 1\n}') == b'{\n  "a": 1\n}' and first.computed == 1
    with pytest.raises(TypeError):
        first("b", lambda: "text")
    first.save()
    again = Pieces(cache, "json", "api t", raw=True)
    assert again("a", lambda: b"recomputed") == b'{\n  "a": 1\n}' and again.computed == 0
    pickled = Pieces(cache, "json", "api t")  # a table of pickled values is another table
    assert pickled("a", lambda: b"computed") == b"computed"


def test_a_value_derived_from_a_known_object_is_kept_in_its_record_and_only_for_it() -> None:
    """`derived`: outside a scope, or for an object without a record (an equal one included), the
    value is computed each time (or found the other way given); with a record (`keep_derived`), it is
    computed once, kept under its name, and read back; a mutable value is refused (it would be shared
    by every use)."""
    from toolgen.emit import derived, keep_derived, known_contents

    calls: list[str] = []

    def compute(value: Any) -> Any:
        calls.append("x")
        return value

    tool = {"name": "a"}
    twin = {"name": "a"}
    assert derived(tool, "size", lambda: compute(1)) == 1 and len(calls) == 1
    record: dict[str, Any] = {}
    with known_contents() as register:
        register(tool, "d1")
        keep_derived(tool, record)
        assert derived(tool, "size", lambda: compute(2)) == 2
        assert derived(tool, "size", lambda: compute(3)) == 2  # read back
        assert derived(tool, "json", lambda: compute(b"{}")) == b"{}"  # another name, another value
        assert derived(twin, "size", lambda: compute(4)) == 4  # an equal object has no record
        with pytest.raises(TypeError, match="immutable"):
            derived(tool, "rows", lambda: compute([1]))
    assert record == {"size": 2, "json": b"{}"}
    assert derived(tool, "size", lambda: compute(5)) == 5  # the scope is over
    assert derived(tool, "size", lambda: compute(8), lambda: 9) == 9  # no record: the other way
    with known_contents():  # a record in an outer scope is not this scope's
        assert derived(tool, "size", lambda: compute(6)) == 6
    assert len(calls) == 7


def test_a_value_made_from_a_known_object_is_keyed_by_its_digest() -> None:
    """`known_from`: an object made from a known object (a policy row's JSON from its tool) is keyed by
    that object's digest and the name given (another name: another key); outside a scope, or made from
    an object not known, nothing is said; `has_record` tells an object with a record (`keep_derived`)."""
    from toolgen.emit import has_record, keep_derived, known_contents, known_from, piece_key

    tool = ("tool", 1)
    row = {"tool": "a", "mode": "read"}
    twin = {"tool": "a", "mode": "read"}
    by_content = piece_key("doc", row)
    assert not known_from(row, tool, "row 1") and not has_record(tool)
    with known_contents() as register:
        assert not known_from(row, tool, "row 1") and piece_key("doc", row) == by_content
        register(tool, "d1")
        assert not has_record(tool)
        keep_derived(tool, {})
        assert has_record(tool) and not has_record(row)
        assert known_from(row, tool, "row 1")
        keyed = piece_key("doc", row)
        assert keyed != by_content and piece_key("doc", twin) == by_content
        assert known_from(twin, tool, "row 2") and piece_key("doc", twin) not in (keyed, by_content)
        assert known_from(twin, tool, "row 1") and piece_key("doc", twin) == keyed
    assert piece_key("doc", row) == by_content


def test_a_lazy_object_is_made_only_for_a_member_it_does_not_know() -> None:
    """`LazyJson`: its facts are answered without making it (a maker that fails shows it); any other
    member, its length or its keys make it, once; `json_bytes` writes it as the dict it holds, member by
    member or through the standard library's path, with or without a memo."""
    from toolgen.emit import LazyJson

    def fail() -> dict[str, Any]:
        raise AssertionError("made")

    unmade = LazyJson(fail, (("tool", "a"), ("toolset", None)))
    assert unmade["tool"] == "a" and unmade.get("toolset") is None
    with pytest.raises(AssertionError, match="made"):
        unmade["mode"]
    with pytest.raises(TypeError, match="list"):
        LazyJson(lambda: [1], ())["tool"]  # type: ignore[arg-type,return-value]
    row = {"tool": "a", "mode": "read", "request": {"schema": {"type": "object"}, "n": [1, 2.5, None]}}
    calls: list[int] = []

    def make() -> dict[str, Any]:
        calls.append(1)
        made: dict[str, Any] = json.loads(json.dumps(row))
        return made

    lazy = LazyJson(make, (("tool", "a"),))
    assert dict(lazy) == row and len(lazy) == 3 and lazy.value() is lazy.value() and len(calls) == 1
    assert LazyJson(fail, (), row).value() is row  # given made
    for rows in ([lazy], [lazy, {"t": (1, 2)}]):  # the second takes the standard library's path
        plain = [row, *rows[1:]]
        assert json_bytes(rows) == _reference(plain)
        assert json_bytes({"tools": rows}, Memo()) == _reference({"tools": plain})
