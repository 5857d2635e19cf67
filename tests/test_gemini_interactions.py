"""gemini.interactions.json: Gemini's Interactions API ``tools`` (google-genai's
``interactions.ToolParam``): every function with JSON Schema ``parameters`` made from the Gemini
declaration (so a call decodes with the Gemini rewrites), deferred ones marked ``defer_loading`` and a
client-run ``tool_search`` entry; checked by toolgen's rules and the official SDK types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.benchmarks import benchmark_module
from tests.support.build import REPO, build, run
from tests.support.profiles import examples

from toolgen.dialects._interactions import check_interactions_catalog, json_schema_of
from toolgen.dialects.gemini import gemini_parameters
from toolgen.search.tool import SEARCH_TOOL_NAME

GITHUB = REPO / "specs" / "github.slice.json"
DEFERRED = (
    "toolsets: {issues: {description: Triage issues., loading: eager}}\n"
    'include: [{match: "tag:issues", toolset: issues}, {match: "*", toolset: from_tag, loading: deferred}]\n'
)


def _corpuslib() -> Any:
    return benchmark_module("corpuslib")


@pytest.fixture(scope="module")
def deferred(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build(tmp_path_factory.mktemp("interactions"), GITHUB, DEFERRED, emit="gemini,policy")


def test_every_function_then_a_client_run_search(deferred: Any) -> None:
    catalog = deferred.json("gemini.interactions.json")
    declarations = {d["name"]: d for d in deferred.json("gemini.json")}
    rows = {r["tool"]: r for r in deferred.json("policy.json")["tools"]}
    functions = [e for e in catalog if e["type"] == "function"]
    assert [f["name"] for f in functions] == list(declarations)
    for f in functions:
        assert f["parameters"] == json_schema_of(declarations[f["name"]])
        assert f.get("defer_loading", False) is (rows[f["name"]]["loading"] == "deferred")
    search = catalog[-1]
    assert (search["type"], search["execution"], search["name"]) == (
        "tool_search",
        "client",
        SEARCH_TOOL_NAME,
    )
    assert search["parameters"]["required"] == ["query"]
    assert check_interactions_catalog(catalog) == []


def test_the_catalogs_pass_the_sdk_type(deferred: Any) -> None:
    pytest.importorskip("google.genai")
    for name in ("gemini.interactions.json",):
        result = _corpuslib().check_catalog("gemini.interactions", deferred.json(name))
        assert result.failures == [] and result.entries > 20
    for api in ("tickets", "github", "stripe"):
        catalog = json.loads(
            (REPO / "generated" / api / "gemini.interactions.json").read_text(encoding="utf-8")
        )
        assert _corpuslib().check_catalog("gemini.interactions", catalog).failures == [], api


def test_the_sdk_check_catches_what_the_sdk_type_lacks() -> None:
    pytest.importorskip("google.genai")
    lib = _corpuslib()
    good = {"type": "function", "name": "f", "parameters": {"type": "object", "properties": {}}}
    assert lib.check_catalog("gemini.interactions", [good]).failures == []
    assert lib.check_catalog("gemini.interactions", [{**good, "parametersJsonSchema": {}}]).failures


def test_without_deferred_tools_no_search_entry(tmp_path: Path) -> None:
    built = build(tmp_path, GITHUB, 'include: [{match: "tag:issues"}]\n', emit="gemini,policy")
    catalog = built.json("gemini.interactions.json")
    assert all(e["type"] == "function" and "defer_loading" not in e for e in catalog)


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        (
            lambda c: c.append(
                {"type": "tool_search", "execution": "client", "name": "s2", "parameters": {"type": "object"}}
            ),
            "F.3-interactions-search",
        ),
        (lambda c: c.pop(), "F.3-interactions-search"),  # deferred functions, no search
        (lambda c: c[0].update(parametersJsonSchema={}), "F.3-interactions-shape"),
        (lambda c: c[0].update(name="bad name"), "F.3-interactions-name"),
        (lambda c: c[1].update(name=c[0]["name"]), "F.3-interactions-name"),
        (lambda c: c[0]["parameters"].update(nullable=True), "F.3-interactions-nullable"),
        (lambda c: c[0].update(parameters={"type": "string"}), "F.3-interactions-parameters"),
        (lambda c: c[-1].update(execution="server"), "F.3-interactions-search"),
        (lambda c: c[0].update(defer_loading="yes"), "F.3-interactions-defer"),
    ],
)
def test_the_check_refuses(deferred: Any, change: Any, rule: str) -> None:
    catalog = deferred.json("gemini.interactions.json")
    change(catalog)
    assert rule in {v.rule for v in check_interactions_catalog(catalog)}


SCALARS = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer", "minimum": 1},
        {"type": ["string", "null"]},
        {"type": "string", "enum": ["a", "b"]},
        {"type": "integer", "enum": [1, 2]},
        {"type": "string", "format": "date-time"},
        {"type": "boolean"},
        {"type": "array", "items": {"type": "number"}},
    ]
)
SCHEMAS = st.recursive(
    SCALARS,
    lambda inner: st.builds(
        lambda props, req: {"type": "object", "properties": props, "required": sorted(set(req) & set(props))},
        st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), inner, max_size=3),
        st.lists(st.sampled_from(["a", "b", "c"])),
    ),
    max_leaves=6,
)


@settings(max_examples=examples(100), deadline=None)
@given(props=st.dictionaries(st.sampled_from(["x", "y", "z"]), SCHEMAS, max_size=3))
def test_the_json_schema_of_any_declaration_is_valid_and_keeps_its_shape(props: dict[str, Any]) -> None:
    """Whatever the canonical arguments, the Gemini view written as JSON Schema is valid 2020-12, passes
    the Interactions check, and has the view's properties and required lists at every level."""
    canonical = {
        "type": "object",
        "properties": props,
        "required": sorted(props)[:1],
        "additionalProperties": False,
    }
    declaration = {"name": "t", "description": "d", "parameters": gemini_parameters(canonical).schema}
    schema = json_schema_of(declaration)
    jsonschema.Draft202012Validator.check_schema(schema)
    entry = {"type": "function", "name": "t", "description": "d", "parameters": schema}
    assert check_interactions_catalog([entry]) == []

    def shape(node: Any) -> Any:
        if not isinstance(node, dict):
            return None
        return (
            sorted(node.get("properties", {})),
            node.get("required"),
            {k: shape(v) for k, v in node.get("properties", {}).items()},
            shape(node.get("items")),
        )

    assert shape(schema) == shape(declaration["parameters"])


def test_toolgen_catalog_cuts_it_to_the_callers_scopes() -> None:
    """A host sends an Interactions client only what its caller may use; the search entry stays."""
    printed = run(
        "catalog",
        str(REPO / "generated" / "github"),
        "--dialect",
        "gemini.interactions",
        "--scopes",
        "issues:read",
    )
    assert printed.exit_code == 0, printed.output
    names = [e["name"] for e in json.loads(printed.output)]
    assert names[-1] == SEARCH_TOOL_NAME and "list_issues" in names
    assert not any(n.startswith(("preview_", "record_")) for n in names)  # issues:write not held
    nothing = json.loads(
        run(
            "catalog", str(REPO / "generated" / "github"), "--dialect", "gemini.interactions", "--scopes", ""
        ).output
    )
    assert [e["name"] for e in nothing] == [SEARCH_TOOL_NAME]
