"""The ``search_tools`` meta-tool (`toolgen.runtime.serving.search_tools.ToolSearch`) on any caller input: the
arguments of a client-run search (Chat Completions, Gemini) are whatever the model wrote, decoded by
the client, and an embedding application may pass Python values. It never raises; a refusal is
``invalid_arguments`` whose ``details.pointer`` names the offending member, as on the call path of
every other tool (`toolgen.runtime.pipeline.validate`)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.runtime import Actor, Registry
from toolgen.runtime.serving.search_tools import ToolSearch
from toolgen.search.tool import DEFAULT_LIMIT, MAX_LIMIT

GITHUB = Path(__file__).resolve().parents[3] / "generated" / "github"


@pytest.fixture(scope="module")
def searched() -> tuple[ToolSearch, Actor]:
    if not (GITHUB / "policy.json").is_file():
        pytest.skip("generated/github is not built")
    rows = json.loads((GITHUB / "policy.json").read_text(encoding="utf-8"))["tools"]
    scopes = sorted({str(s) for row in rows for s in row.get("permission") or []})
    return ToolSearch(Registry.from_dir(GITHUB, base_url="http://127.0.0.1:9")), Actor.of("admin", scopes)


@pytest.mark.parametrize(
    ("args", "pointer"),
    [
        ({"query": "list issues", "limit": math.nan}, "/limit"),
        ({"query": "list issues", "limit": math.inf}, "/limit"),
        ({"query": "list issues", 1: 2}, ""),
        ({2: "list issues"}, ""),
        ({"query": "list \ud800 issues"}, "/query"),
        ({"query": b"list issues"}, "/query"),
        ({"query": "list issues", "limit": 5, "verbose": True}, "/verbose"),
        ({"query": "list issues", "limit": True}, "/limit"),
        ({"query": "list issues", "limit": "5"}, "/limit"),
        ({"query": "list issues", "limit": 0}, "/limit"),
        ({"query": "list issues", "limit": -1}, "/limit"),
        ({"query": "list issues", "limit": 1e9}, "/limit"),
        ({"query": "list issues", "limit": 2**70}, "/limit"),
        ({"query": "list issues", "limit": 2.5}, "/limit"),
        ({"query": ""}, "/query"),
        ({"query": "x" * 501}, "/query"),
        ({"query": None}, "/query"),
        ({"limit": 3}, "/query"),
        ([], ""),
        ("list issues", ""),
    ],
)
def test_bad_input_is_refused_at_its_pointer(
    searched: tuple[ToolSearch, Actor], args: Any, pointer: str
) -> None:
    search, actor = searched
    result = search.run(args, actor)
    assert not result.ok and result.error is not None and result.error.code == "invalid_arguments"
    assert result.error.details["pointer"] == pointer, result.error.message
    assert "null is not" not in result.error.message or args == {
        "query": None
    }  # the value sent, not a conversion


@pytest.mark.parametrize("limit", [None, 5, 5.0, 1, MAX_LIMIT, float(MAX_LIMIT)])
def test_a_limit_the_contract_admits_is_answered(searched: tuple[ToolSearch, Actor], limit: Any) -> None:
    search, actor = searched
    query = "list the pull requests"
    result = search.run({"query": query, "limit": limit}, actor)
    plain = search.run({"query": query} if limit is None else {"query": query, "limit": int(limit)}, actor)
    assert result.ok and result.result is not None and plain.result is not None
    assert result.result["hits"] == plain.result["hits"]
    assert 0 < len(result.result["hits"]) <= (DEFAULT_LIMIT if limit is None else int(limit))


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | st.binary(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5) | st.integers(), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=examples(200), deadline=None)
@given(args=st.one_of(_json, st.fixed_dictionaries({"query": _json}, optional={"limit": _json, "x": _json})))
def test_search_tools_never_raises(searched: tuple[ToolSearch, Actor], args: Any) -> None:
    search, actor = searched
    result = search.run(args, actor)
    if not result.ok:
        assert result.error is not None and result.error.code == "invalid_arguments"
        assert isinstance(result.error.details["pointer"], str)
