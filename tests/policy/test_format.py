"""The policy table format (`toolgen.policy.format`): typed rows round-trip through ``policy.json``
exactly, every committed ``generated/*/policy.json`` is what `to_json` writes back byte for byte, and a
malformed or wrong-version file is refused with the JSON pointer of the bad member and what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.emit import json_bytes
from toolgen.policy.format import (
    FORMAT_VERSION,
    ArgBinding,
    ArgLocation,
    AuthBinding,
    BodyEncoding,
    FixedValue,
    Idempotency,
    Loading,
    NarrowedArg,
    NullMeans,
    OutputPolicy,
    Pagination,
    PaginationStyle,
    PolicyFormatError,
    PolicyRow,
    PolicyTable,
    Retry,
    Toolset,
    from_json,
    read_policy,
)
from toolgen.policy.members import (
    MAX_ATTEMPTS,
    MAX_BACKOFF_MS,
    MAX_DEADLINE_MS,
    MAX_PAGE_SIZE,
    MAX_PREVIEW_TTL_S,
    MAX_TIMEOUT_MS,
)
from toolgen.results import ResponseBody, Shape

REPO = Path(__file__).resolve().parents[2]
COMMITTED = sorted((REPO / "generated").glob("*/policy.json"))

names = st.text(st.characters(codec="utf-8"), max_size=12)
opt_names = st.none() | names
small = st.integers(min_value=-(2**40), max_value=2**40)
json_leaf = st.none() | st.booleans() | small | names
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
    max_leaves=8,
)


def _lit(kind: Any) -> st.SearchStrategy[Any]:
    return st.sampled_from(get_args(kind))


bindings = st.builds(
    ArgBinding,
    names,
    _lit(ArgLocation),
    names,
    st.booleans(),
    _lit(NullMeans),
    opt_names,
    st.none() | st.booleans(),
    opt_names,
)
fixed = st.builds(FixedValue, _lit(ArgLocation), names, json_value, names)
auths = st.builds(
    AuthBinding,
    names,
    names,
    st.sampled_from(["header", "query", "cookie"]),
    names,
    names,
    st.tuples(names) | st.just(()),
)
idempotency = st.none() | st.builds(
    Idempotency, names, st.sampled_from(["header", "query", "body", "none"]), opt_names, st.booleans()
)
#: (least, default, greatest) page sizes, as the build writes them: 1 <= least <= default <= greatest <= 1000
page_sizes = st.lists(st.integers(min_value=1, max_value=MAX_PAGE_SIZE), min_size=3, max_size=3).map(sorted)
pagination = st.none() | page_sizes.flatmap(
    lambda sizes: st.builds(
        Pagination,
        _lit(PaginationStyle),
        names,
        opt_names,
        opt_names,
        opt_names,
        opt_names,
        opt_names,
        st.just(sizes[1]),
        st.just(sizes[2]),
        st.just(sizes[0]),
        st.none() | small,
        st.booleans(),
        names,
        names,
    )
)
positive = st.integers(min_value=1, max_value=2**40)
retry = st.builds(
    Retry,
    st.integers(min_value=1, max_value=MAX_ATTEMPTS),
    st.integers(min_value=0, max_value=MAX_BACKOFF_MS),
    st.integers(min_value=1, max_value=MAX_DEADLINE_MS),
    st.lists(st.sampled_from(["timeout", "429", "502", "503", "504"]), max_size=3).map(tuple),
)
output = st.builds(
    OutputPolicy,
    st.lists(names, max_size=3).map(tuple),
    positive,
    st.lists(names, max_size=2).map(tuple),
    st.sampled_from(["strict", "warn", "off"]),
    _lit(Shape),
    _lit(ResponseBody),
    opt_names,
)
narrowed = st.builds(
    NarrowedArg, names, st.none() | st.dictionaries(names, json_value, max_size=3), opt_names, st.booleans()
)
rewrite = st.dictionaries(names, json_value, max_size=3).map(lambda d: {**d, "kind": "rename"})
rewrites = st.dictionaries(
    st.sampled_from(["openai", "anthropic", "gemini", "mcp"]),
    st.lists(rewrite, max_size=2).map(tuple),
    max_size=2,
)


@st.composite
def rows(draw: st.DrawFn) -> PolicyRow:
    mode: Literal["read", "preview", "record"] = draw(st.sampled_from(["read", "preview", "record"]))
    record = mode == "record"
    arguments: Literal["preview", "full"] | None = (
        draw(st.sampled_from(["preview", "full"])) if record else None
    )
    return PolicyRow(
        tool=draw(names),
        mode=mode,
        effect=draw(st.sampled_from(["write", "destructive"])) if record else "read",
        operation_id=draw(names),
        method=draw(names),
        path=draw(names),
        permission=tuple(draw(st.lists(names, max_size=3))),
        approval=draw(st.sampled_from(["never", "required"])) if record else "never",
        idempotency=draw(idempotency),
        retry=draw(retry),
        timeout_ms=draw(st.integers(min_value=1, max_value=MAX_TIMEOUT_MS)),
        pagination=draw(pagination),
        output=draw(output),
        auth=tuple(draw(st.lists(auths, max_size=2))),
        body_encoding=draw(_lit(BodyEncoding)),
        body_content_type=draw(opt_names),
        bindings=tuple(draw(st.lists(bindings, max_size=3))),
        fixed=tuple(draw(st.lists(fixed, max_size=2))),
        pair=draw(opt_names),
        intent=draw(names),
        success_status=tuple(draw(st.lists(small, max_size=3))),
        record_arguments=arguments,
        preview_ttl_s=draw(st.none() | st.integers(min_value=1, max_value=MAX_PREVIEW_TTL_S))
        if record
        else None,
        narrowed=tuple(draw(st.lists(narrowed, max_size=2))),
        toolset=draw(opt_names),
        loading=draw(_lit(Loading)),
        keywords=tuple(draw(st.lists(names, max_size=2))),
        dialect_rewrites=draw(rewrites),
    )


@st.composite
def tables(draw: st.DrawFn) -> PolicyTable:
    drawn = draw(st.lists(rows(), max_size=4, unique_by=lambda r: r.tool))
    toolsets = draw(
        st.lists(
            st.builds(Toolset, names, names, _lit(Loading), st.sampled_from(["declared", "tag", "path"])),
            max_size=2,
        )
    )
    return PolicyTable(
        draw(names), draw(names), draw(names), draw(names), draw(names), tuple(drawn), tuple(toolsets)
    )


@settings(max_examples=examples(150), deadline=None)
@given(tables())
def test_typed_table_round_trips_through_json(table: PolicyTable) -> None:
    text = json_bytes(table.to_json())
    back = from_json(json.loads(text))
    assert back == table
    assert json_bytes(back.to_json()) == text


@pytest.mark.skipif(not COMMITTED, reason="no generated/ in this tree (run `toolgen build`)")
@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.parent.name)
def test_committed_policy_json_round_trips_byte_identically(path: Path) -> None:
    raw = path.read_bytes()
    table = from_json(json.loads(raw), str(path.relative_to(REPO)))
    assert table.format == FORMAT_VERSION and table.tools
    assert json_bytes(table.to_json()) == raw


def _tickets() -> dict[str, Any]:
    path = REPO / "generated" / "tickets" / "policy.json"
    if not path.is_file():
        pytest.skip("generated/tickets is not built")
    value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return value


def _error(value: Any) -> PolicyFormatError:
    with pytest.raises(PolicyFormatError) as caught:
        from_json(value, "generated/tickets/policy.json")
    return caught.value


def test_wrong_version_is_refused_at_format() -> None:
    policy = _tickets()
    policy["format"] = FORMAT_VERSION + 1
    error = _error(policy)
    assert error.pointer == "/format" and f"format {FORMAT_VERSION + 1}" in error.message
    assert "toolgen build" in error.hint
    assert str(error).startswith("generated/tickets/policy.json#/format: ")
    assert isinstance(error, ValueError)
    diagnostic = error.diagnostic()
    assert diagnostic.location is not None and diagnostic.location.pointer == "/format"
    assert diagnostic.severity == "error" and diagnostic.hint == error.hint
    del policy["format"]
    assert _error(policy).pointer == "/format"


@pytest.mark.parametrize(
    ("edit", "pointer", "words"),
    [
        (
            lambda p: p["tools"][2].__setitem__("mode", "write"),
            "/tools/2/mode",
            "not one of read, preview, record",
        ),
        (
            lambda p: p["tools"][0]["operation"].pop("path"),
            "/tools/0/operation/path",
            "required member 'path'",
        ),
        (
            lambda p: p["tools"][1].__setitem__("timeout_ms", "5s"),
            "/tools/1/timeout_ms",
            "expected an integer",
        ),
        (
            lambda p: p["tools"][1].__setitem__("timeout_ms", True),
            "/tools/1/timeout_ms",
            "expected an integer",
        ),
        (
            lambda p: p["tools"][0]["request"]["bindings"][0].__setitem__("in", "body/x"),
            "/tools/0/request/bindings/0/in",
            "not one of path",
        ),
        (
            lambda p: p["tools"][0].__setitem__("permission", "ticket:read"),
            "/tools/0/permission",
            "expected an array",
        ),
        (lambda p: p["tools"][3].__setitem__("tool", p["tools"][2]["tool"]), "/tools/3/tool", "second row"),
        (lambda p: p.__setitem__("tools", {}), "/tools", "expected an array"),
        (
            lambda p: p["tools"][0].__setitem__("dialect_rewrites", {"openai": [{"path": []}]}),
            "/tools/0/dialect_rewrites/openai/0/kind",
            "required member 'kind'",
        ),
    ],
    ids=["mode", "missing", "type", "bool-is-not-int", "binding", "array", "duplicate", "tools", "rewrite"],
)
def test_malformed_member_is_located(edit: Any, pointer: str, words: str) -> None:
    policy = _tickets()
    edit(policy)
    error = _error(policy)
    assert error.pointer == pointer, error
    assert words in error.message, error
    assert error.hint


def test_a_read_row_with_a_record_object_is_refused() -> None:
    policy = _tickets()
    row = next(i for i, r in enumerate(policy["tools"]) if r["mode"] == "read")
    policy["tools"][row]["record"] = {"arguments": "full", "preview_ttl_s": None}
    assert _error(policy).pointer == f"/tools/{row}/record"


def test_no_member_is_read_as_a_default() -> None:
    """Every member is written on every object, so a missing one is refused, never read as the value
    that allows more (a record row without ``record``, an output without ``redact``)."""
    for key in ("record", "narrowed", "toolset", "loading", "keywords", "dialect_rewrites", "intent", "pair"):
        policy = _tickets()
        row = next(i for i, r in enumerate(policy["tools"]) if r["mode"] == "record")
        del policy["tools"][row][key]
        error = _error(policy)
        assert error.pointer == f"/tools/{row}/{key}" and "missing" in error.message, error
    policy = _tickets()
    del policy["tools"][0]["output"]["redact"]
    assert _error(policy).pointer == "/tools/0/output/redact"


def test_an_unknown_member_is_refused_at_its_pointer() -> None:
    policy = _tickets()
    policy["tools"][1]["request"]["bindings"][0]["hidden"] = True
    error = _error(policy)
    assert (
        error.pointer == "/tools/1/request/bindings/0/hidden" and "unknown member 'hidden'" in error.message
    )


def test_read_policy_locates_a_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "policy.json"
    path.write_text('{"format": 1,\n "tools": [}', encoding="utf-8")
    with pytest.raises(PolicyFormatError) as caught:
        read_policy(path, "out/policy.json")
    assert caught.value.pointer == "" and "line 2 column" in caught.value.message
    assert str(caught.value).startswith("out/policy.json#: not JSON")
    if COMMITTED:
        assert read_policy(COMMITTED[0]).to_json() == json.loads(COMMITTED[0].read_text(encoding="utf-8"))


def test_not_an_object_is_located_at_the_root() -> None:
    error = _error([1, 2])
    assert error.pointer == "" and "expected an object, found an array" in error.message


def test_lowering_builds_the_format_own_rows() -> None:
    """The IR re-exports the format's types: the rows lowering builds are the rows policy.json is
    written from, so no second definition of a policy field exists."""
    from toolgen.compile import ir

    assert ir.PolicyRow is PolicyRow and ir.Toolset is Toolset and ir.Pagination is Pagination
