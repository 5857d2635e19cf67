"""Dialect transforms (toolgen.dialects) beyond the fault cases: free-form objects and `{}` rewritten
for OpenAI strict mode, keywords moved into descriptions, allOf merged (or sent as a JSON string), the
limits (A.2), each provider's tool object, a property over random canonical schemas with valid
instances (semantics preserved, catalogs conform), and the registry's rank order. The canonical
inputs and checks are `tests.support.dialect_cases`'.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from tests.support.dialect_cases import (
    CASE15,
    CASE21_OUTPUT,
    CASE24_BARE,
    CONSTRAINTS,
    FREE_FORM,
    all_catalogs_conform,
    nodes,
    valid,
    with_nulls,
)
from tests.support.profiles import examples
from tests.support.schema_strategies import obj

import toolgen.dialects
from toolgen.dialects import dialect, registry
from toolgen.dialects.anthropic import anthropic_input_schema, anthropic_tool
from toolgen.dialects.mcp import check_mcp_catalog, mcp_input_schema, mcp_output_schema, mcp_tool
from toolgen.dialects.openai import check_openai_catalog, openai_parameters, openai_tool, schema_stats

# --- free-form objects and `{}` --------------------------------------------------------------------


def test_free_form_objects_are_rewritten_so_the_openai_tool_stays_strict() -> None:
    ds = openai_parameters(FREE_FORM)
    assert ds.strict is True, ds.warnings
    props = ds.schema["properties"]
    assert ds.schema["additionalProperties"] is False
    assert ds.schema["required"] == ["name", "meta", "labels", "anything"]
    # a free-form object and an unconstrained value: JSON-encoded strings, described as such
    assert props["meta"]["type"] == ["string", "null"]
    assert props["meta"]["description"].startswith("Arbitrary metadata (JSON-encoded: send a JSON object")
    assert props["anything"]["type"] == ["string", "null"]
    # a typed map: an array of {key, value} entries
    assert props["labels"]["type"] == ["array", "null"]
    entry = props["labels"]["items"]
    assert entry["required"] == ["key", "value"] and entry["additionalProperties"] is False
    assert entry["properties"]["value"] == {"type": "string", "description": "(maxLength: 10)"}
    kinds = {tuple(r["path"]): r["kind"] for r in ds.rewrites}
    assert kinds == {("meta",): "json_string", ("labels",): "map_entries", ("anything",): "json_string"}
    tool = openai_tool("t", "d", FREE_FORM)
    assert tool["function"]["strict"] is True
    assert check_openai_catalog([tool]) == []
    instance = {"name": "n", "meta": '{"a": [1]}', "labels": [{"key": "k", "value": "v"}], "anything": "[1]"}
    assert valid(ds.schema, instance)
    assert anthropic_input_schema(FREE_FORM).strict is False
    assert mcp_input_schema(FREE_FORM).schema["properties"]["anything"] == {}


# --- keywords moved into descriptions --------------------------------------------------------------


def test_constraints_move_into_descriptions_for_openai() -> None:
    ds = openai_parameters(CONSTRAINTS)
    props = ds.schema["properties"]
    # F.1: pattern, numeric bounds and minItems/maxItems are carried; the rest is described
    assert props["title"] == {
        "description": "Subject line. (maxLength: 200)",
        "type": "string",
        "pattern": r"^T-\d+$",
    }
    assert props["count"]["description"] == "(format: int32; default: 20)"
    assert props["count"]["minimum"] == 1 and props["count"]["maximum"] == 50
    assert props["tags"]["description"] == '(uniqueItems: true; examples: [["a"]])'
    assert props["tags"]["maxItems"] == 5
    assert props["tags"]["items"] == {"description": "(minLength: 1)", "type": "string"}
    assert props["role"]["description"] == '(default: "viewer"; deprecated: true)'
    assert props["id"]["description"] == "(readOnly: true)"
    assert "title: maxLength 200" in ds.notes
    assert "tags[]: minLength 1" in ds.notes
    assert not any(k in json.dumps(ds.schema) for k in ("x-internal", "$comment"))
    assert ds.strict
    assert check_openai_catalog([openai_tool("t", "d", CONSTRAINTS)]) == []


def test_anthropic_keeps_hints_but_moves_default_and_openapi_formats() -> None:
    props = anthropic_input_schema(CONSTRAINTS).schema["properties"]
    assert props["title"]["maxLength"] == 200 and props["title"]["pattern"] == r"^T-\d+$"
    assert "default" not in props["count"] and "format" not in props["count"]
    assert props["count"]["description"] == "(format: int32; default: 20)"
    mcp = mcp_input_schema(CONSTRAINTS).schema["properties"]
    assert mcp["count"]["default"] == 20 and mcp["count"]["minimum"] == 1
    assert "format" not in mcp["count"]


def test_restrictive_composition_moves_to_description() -> None:
    canonical = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "not": {"const": "x"}},
            "window": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "dependentRequired": {"a": ["b"]},
            },
        },
        "required": ["code"],
    }
    ds = openai_parameters(canonical)
    assert ds.strict, ds.warnings
    assert ds.schema["properties"]["code"]["description"] == '(not: {"const":"x"})'
    assert "dependentRequired" in ds.schema["properties"]["window"]["description"]
    assert check_openai_catalog([openai_tool("t", "d", canonical)]) == []


def test_allof_of_objects_is_merged() -> None:
    canonical = {
        "type": "object",
        "properties": {
            "item": {
                "allOf": [
                    {"$ref": "#/$defs/Base"},
                    {"type": "object", "properties": {"extra": {"type": "string"}}, "required": ["extra"]},
                ],
                "description": "An item",
            }
        },
        "required": ["item"],
        "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
    }
    ds = openai_parameters(canonical)
    assert ds.strict, ds.warnings
    item = ds.schema["properties"]["item"]
    assert item["description"] == "An item"
    assert item["required"] == ["id", "extra"] and item["additionalProperties"] is False
    assert valid(ds.schema, {"item": {"id": "1", "extra": "e"}})
    # Anthropic closes objects, but never allOf members (that would reject the other part's members)
    anthropic = anthropic_input_schema(canonical).schema
    assert anthropic["additionalProperties"] is False
    assert "additionalProperties" not in anthropic["$defs"]["Base"]
    for fn in (anthropic_input_schema, mcp_input_schema):
        assert valid(fn(canonical).schema, {"item": {"id": "1", "extra": "e"}})


def test_unmergeable_allof_becomes_a_json_string() -> None:
    canonical = {
        "type": "object",
        "properties": {"v": {"allOf": [{"type": "string"}, {"type": "integer"}]}},
        "required": ["v"],
    }
    ds = openai_parameters(canonical)
    assert ds.strict is True
    assert ds.schema["properties"]["v"]["type"] == "string"
    assert [r["kind"] for r in ds.rewrites] == ["json_string"]


# --- limits (A.2) ----------------------------------------------------------------------------------


def _nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "object", "properties": {"x": node}, "required": ["x"]}
    return node


def test_depth_limit() -> None:
    assert openai_parameters(_nested(10)).strict is True
    assert not openai_parameters(_nested(10)).rewrites
    ds = openai_parameters(_nested(11))
    assert ds.strict is True
    assert schema_stats(ds.schema).max_depth == 10
    assert [(len(r["path"]), r["kind"], r["reason"]) for r in ds.rewrites] == [
        (10, "json_string", "nesting below the depth limit")
    ]


def test_enum_limit() -> None:
    ok = {
        "type": "object",
        "properties": {"e": {"type": "integer", "enum": list(range(999))}},
        "required": ["e"],
    }
    assert openai_parameters(ok).strict is True
    big = {
        "type": "object",
        "properties": {"e": {"type": "integer", "enum": list(range(1001))}},
        "required": ["e"],
    }
    assert openai_parameters(big).strict is False


# --- tool objects ----------------------------------------------------------------------------------


def test_openai_tool_shape() -> None:
    tool = openai_tool("extractWebPage", "Extract.", CASE15)
    assert list(tool) == ["type", "function"]
    assert list(tool["function"]) == ["name", "description", "parameters", "strict"]
    assert tool["function"]["strict"] is True


def test_anthropic_tool_shape() -> None:
    assert list(anthropic_tool("a", "b", CASE15)) == ["name", "description", "input_schema"]


def test_mcp_tool_shape_and_annotations() -> None:
    tool = mcp_tool(
        "get_x",
        "Get.",
        CASE24_BARE,
        CASE21_OUTPUT,
        title="Get X",
        read_only=True,
        destructive=False,
        idempotent=True,
    )
    assert list(tool) == ["name", "title", "description", "inputSchema", "outputSchema", "annotations"]
    assert tool["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    bare = mcp_tool(
        "del_x",
        "Delete.",
        CASE15,
        None,
        title=None,
        read_only=False,
        destructive=True,
        idempotent=False,
        open_world=False,
    )
    assert "title" not in bare and "outputSchema" not in bare
    assert bare["annotations"]["openWorldHint"] is False
    assert check_mcp_catalog([tool, bare]) == []
    with pytest.raises(ValueError):
        mcp_tool("x", "d", CASE15, None, title=None, read_only=True, destructive=True, idempotent=True)


# --- property test: random canonical schemas with valid instances (tests.support.schema_strategies) --


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj())
def test_property_semantics_preserved_and_catalogs_conform(pair: tuple[dict[str, Any], Any]) -> None:
    canonical, instance = pair
    before = copy.deepcopy(canonical)
    assert valid(canonical, instance)
    oa = openai_parameters(canonical)
    assert oa.strict, oa.warnings
    assert valid(oa.schema, with_nulls(canonical, instance))
    assert valid(anthropic_input_schema(canonical).schema, instance)
    assert valid(mcp_input_schema(canonical).schema, instance)
    assert valid(mcp_output_schema(canonical).schema, instance)
    assert canonical == before
    all_catalogs_conform({"t": canonical})


def test_optional_const_and_ref_members_widen_correctly() -> None:
    canonical = {
        "type": "object",
        "properties": {
            "kind": {"const": "numeric"},
            "fixed": {"const": "always"},
            "mixed": {"type": "string", "anyOf": [{"enum": ["a"]}, {"enum": ["b"]}]},
            "tree": {"$ref": "#/$defs/T"},
        },
        "required": ["fixed"],
        "$defs": {"T": {"type": "object", "properties": {"sub": {"$ref": "#/$defs/T"}}}},
    }
    ds = openai_parameters(canonical)
    props = ds.schema["properties"]
    assert props["kind"] == {"enum": ["numeric", None]}
    assert props["fixed"] == {"const": "always"}
    assert valid(props["mixed"], None) and valid(props["mixed"], "a") and not valid(props["mixed"], "c")
    assert props["tree"] == {"anyOf": [{"$ref": "#/$defs/T"}, {"type": "null"}]}
    assert check_openai_catalog([openai_tool("t", "d", canonical)]) == []


def test_openapi_nullable_on_ref_becomes_null_union_everywhere() -> None:
    canonical = {
        "type": "object",
        "properties": {"addr": {"$ref": "#/$defs/A", "nullable": True, "description": "Address"}},
        "required": ["addr"],
        "$defs": {"A": {"type": "object", "properties": {"s": {"type": "string"}}, "required": ["s"]}},
    }
    for fn in (openai_parameters, anthropic_input_schema, mcp_input_schema):
        schema = fn(canonical).schema
        assert not any("nullable" in n for n in nodes(schema))
        addr = schema["properties"]["addr"]
        assert valid({**schema, "properties": {"addr": addr}}, {"addr": None}), fn.__name__
        assert valid(schema, {"addr": {"s": "x"}})
    assert "Address" in json.dumps(openai_parameters(canonical).schema["properties"]["addr"])


def test_every_dialect_module_is_registered_in_rank_order() -> None:
    """A provider is one module of toolgen.dialects that exports `DIALECT`; the registry finds it."""
    package = Path(toolgen.dialects.__file__).parent
    modules = sorted(p.stem for p in package.glob("*.py") if not p.stem.startswith("_"))
    assert sorted(registry()) == modules
    assert list(registry()) == ["openai", "anthropic", "mcp", "gemini"]  # the order of catalogs and REPORT.md
    with pytest.raises(ValueError):
        dialect("cohere")
