"""Dialect transforms (toolgen.dialects): canonical tool schema -> OpenAI strict / Anthropic / MCP.

Canonical inputs (`tests.support.dialect_cases`) mirror the fault cases in the shared cases folder
(05, 08, 13, 14, 15, 21, 24); every emitted catalog also goes through the conformance checker, and
jsonschema proves that instances valid for the canonical schema stay valid for each dialect schema.
The rewrites beyond the fault cases, the tool objects and the property are in
`test_dialect_rewrites.py`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.support.dialect_cases import (
    ALL_INPUTS,
    CASE05_FOLDER,
    CASE05_SEARCH,
    CASE08,
    CASE13,
    CASE13_RECURSIVE,
    CASE14,
    CASE15,
    CASE21_OUTPUT,
    CASE21_SAMPLE,
    CASE24_BARE,
    CASE24_CLOSED,
    all_catalogs_conform,
    nodes,
    object_nodes,
    valid,
    with_nulls,
)

from toolgen.dialects import unresolved_refs
from toolgen.dialects.anthropic import anthropic_input_schema, anthropic_tool
from toolgen.dialects.mcp import (
    check_mcp_catalog,
    mcp_input_schema,
    mcp_output_needs_wrap,
    mcp_output_schema,
    mcp_tool,
)
from toolgen.dialects.openai import OPENAI_STRICT_FORMATS, openai_parameters, openai_tool

# --- every fixture: conformance, purity, determinism -----------------------------------------------


def test_every_fixture_conforms_in_every_dialect() -> None:
    all_catalogs_conform(ALL_INPUTS)


@pytest.mark.parametrize("name", sorted(ALL_INPUTS))
def test_transforms_do_not_mutate_and_are_deterministic(name: str) -> None:
    canonical = ALL_INPUTS[name]
    before = copy.deepcopy(canonical)
    for fn in (openai_parameters, anthropic_input_schema, mcp_input_schema, mcp_output_schema):
        first = fn(canonical)
        second = fn(copy.deepcopy(canonical))
        assert canonical == before
        assert json.dumps(first.schema) == json.dumps(second.schema)  # same key order too
        assert first == second
        # the views are copy on write (they may share unchanged subtrees with `canonical`, see
        # tests/test_catalog_sharing.py): computing them never mutates it
        assert json.dumps(canonical) == json.dumps(before)


@pytest.mark.parametrize("name", sorted(ALL_INPUTS))
def test_dialect_schemas_are_valid_2020_12_and_self_contained(name: str) -> None:
    for fn in (openai_parameters, anthropic_input_schema, mcp_input_schema, mcp_output_schema):
        out = fn(ALL_INPUTS[name]).schema
        Draft202012Validator.check_schema(out)
        assert unresolved_refs(out) == []
        assert not any("nullable" in n for n in nodes(out))


# --- case 15: optional fields in OpenAI strict mode ------------------------------------------------


def test_case15_openai_every_object_closed_and_fully_required() -> None:
    ds = openai_parameters(CASE15)
    assert ds.strict and ds.warnings == ()
    objs = object_nodes(ds.schema)
    assert len(objs) == 2  # root and options
    for obj in objs:
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])


def test_case15_openai_optional_members_admit_null_required_do_not() -> None:
    props = openai_parameters(CASE15).schema["properties"]
    for name in ("depth", "includeImages", "options"):
        assert valid(props[name], None), name
    for name in ("timeoutMs", "userAgent"):
        assert valid(props["options"]["properties"][name], None), name
    assert not valid(props["urls"], None)


def test_case15_openai_oneof_becomes_anyof_not_at_root() -> None:
    schema = openai_parameters(CASE15).schema
    assert "anyOf" not in schema
    urls = schema["properties"]["urls"]
    assert urls["anyOf"] == [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
    assert urls["description"] == "One URL or a list of URLs"
    assert not any("oneOf" in n for n in nodes(schema))


def test_case15_openai_enum_widened_with_null_contains_null() -> None:
    depth = openai_parameters(CASE15).schema["properties"]["depth"]
    assert depth["type"] == ["string", "null"]
    assert depth["enum"] == ["basic", "advanced", None]
    assert depth["description"] == "Query: extraction depth"


def test_case15_anthropic_and_mcp_keep_original_optionality() -> None:
    for fn in (anthropic_input_schema, mcp_input_schema):
        schema = fn(CASE15).schema
        assert schema["required"] == ["urls"]
        assert "required" not in schema["properties"]["options"]
        assert not valid(schema["properties"]["depth"], None)
        assert not valid(schema["properties"]["includeImages"], None)
    assert "anyOf" in anthropic_input_schema(CASE15).schema["properties"]["urls"]
    # MCP: the canonical oneOf of disjoint types collapses to one type array, accepting the same values
    urls = mcp_input_schema(CASE15).schema["properties"]["urls"]
    assert urls == {
        "description": "One URL or a list of URLs",
        "type": ["array", "string"],
        "items": {"type": "string"},
    }
    for instance in ("https://a", ["https://a"], [], 3, None, [3], {"u": 1}):
        assert valid(urls, instance) == valid(CASE15["properties"]["urls"], instance)


@pytest.mark.parametrize(
    "instance",
    [
        {"urls": "https://a.test"},
        {"urls": ["https://a.test", "https://b.test"], "depth": "basic"},
        {"urls": "x", "includeImages": True, "options": {}},
        {"urls": "x", "options": {"timeoutMs": 5, "userAgent": "ua"}},
        {"urls": "x", "options": {"userAgent": "ua"}, "depth": "advanced"},
    ],
)
def test_case15_semantic_preservation(instance: dict[str, Any]) -> None:
    assert valid(CASE15, instance)
    assert valid(openai_parameters(CASE15).schema, with_nulls(CASE15, instance))
    assert valid(anthropic_input_schema(CASE15).schema, instance)
    assert valid(mcp_input_schema(CASE15).schema, instance)


def test_case15_openai_rejects_what_strict_should_reject() -> None:
    schema = openai_parameters(CASE15).schema
    full = {"urls": "x", "depth": None, "includeImages": None, "options": None}
    assert valid(schema, full)
    assert not valid(schema, {"urls": "x"})  # every key is required
    assert not valid(schema, {**full, "extra": 1})  # closed object
    assert not valid(schema, {**full, "depth": "deep"})  # enum kept


# --- case 13: $ref with sibling keywords -----------------------------------------------------------


def test_case13_openai_no_ref_with_siblings_and_descriptions_survive() -> None:
    ds = openai_parameters(CASE13)
    schema = ds.schema
    assert ds.strict
    for n in nodes(schema):
        if "$ref" in n:
            assert list(n) == ["$ref"]
    assert "$defs" not in schema  # non-recursive refs are inlined
    address = schema["properties"]["address"]
    assert address["description"] == "Postal address used for invoices"
    assert address["additionalProperties"] is False
    assert address["required"] == ["street", "city"]
    role = schema["properties"]["role"]
    assert role["description"] == 'Role granted on creation (default: "viewer")'
    assert role["enum"] == ["viewer", "editor", "admin"]
    assert 'role: default "viewer"' in ds.notes


def test_case13_no_default_key_in_openai_or_anthropic() -> None:
    for fn in (openai_parameters, anthropic_input_schema):
        schema = fn(CASE13).schema
        assert not any("default" in n for n in nodes(schema))
        assert "viewer" in json.dumps(schema)


def test_case13_mcp_refs_resolve_and_keep_siblings() -> None:
    schema = mcp_input_schema(CASE13).schema
    assert unresolved_refs(schema) == []
    assert schema["properties"]["address"]["description"] == "Postal address used for invoices"
    assert schema["properties"]["role"]["default"] == "viewer"  # 2020-12 annotation, the runtime's view
    instance = {"name": "n", "address": {"street": "s", "city": "c"}, "role": "admin"}
    for fn in (openai_parameters, anthropic_input_schema, mcp_input_schema):
        assert valid(fn(CASE13).schema, instance)
    assert not valid(openai_parameters(CASE13).schema, {**instance, "role": "root"})


def test_case13_recursive_ref_with_siblings_is_wrapped_in_anyof() -> None:
    ds = openai_parameters(CASE13_RECURSIVE)
    assert ds.strict, ds.warnings
    node = ds.schema["properties"]["node"]
    assert node == {"description": "Parent node (default: null)", "anyOf": [{"$ref": "#/$defs/Node"}]}
    parent = ds.schema["$defs"]["Node"]["properties"]["parent"]
    assert parent == {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}
    assert valid(ds.schema, {"node": {"id": "a", "parent": {"id": "b", "parent": None}}})


# --- case 14: formats ------------------------------------------------------------------------------


def test_case14_openai_formats() -> None:
    ds = openai_parameters(CASE14)
    props = ds.schema["properties"]
    for n in nodes(ds.schema):
        if "format" in n:
            assert n["format"] in OPENAI_STRICT_FORMATS
            assert n["type"] in ("string", ["string", "null"])
    for name in ("url", "callback", "token", "retries", "ratio"):
        assert "format" not in props[name], name
    assert {props[n]["format"] for n in ("startedAt", "contact", "pageId")} == {"date-time", "email", "uuid"}
    assert props["host"]["format"] == "hostname"
    assert props["url"]["description"] == "(format: uri)"
    assert props["callback"]["description"] == "(format: uri-reference)"
    assert props["token"]["description"] == "(format: password)"
    assert props["retries"]["description"] == "(format: int32)"
    assert props["ratio"]["description"] == "(format: double)"
    assert "url: format uri" in ds.notes


def test_case14_anthropic_formats() -> None:
    props = anthropic_input_schema(CASE14).schema["properties"]
    assert props["url"]["format"] == "uri"
    for name in ("callback", "token", "retries", "ratio"):
        assert "format" not in props[name]
        assert f"(format: {CASE14['properties'][name]['format']})" in props[name]["description"]


def test_case14_mcp_formats() -> None:
    props = mcp_input_schema(CASE14).schema["properties"]
    assert props["url"]["format"] == "uri"
    assert props["callback"]["format"] == "uri-reference"
    for name in ("token", "retries", "ratio"):
        assert "format" not in props[name]
        assert f"(format: {CASE14['properties'][name]['format']})" in props[name]["description"]


# --- case 05: recursion ----------------------------------------------------------------------------


def test_case05_openai_keeps_recursion_strict() -> None:
    for canonical in (CASE05_FOLDER, CASE05_SEARCH):
        ds = openai_parameters(canonical)
        assert ds.strict, ds.warnings
        schema = ds.schema
        assert schema["type"] == "object" and "anyOf" not in schema
        assert schema["$defs"]
        for obj in object_nodes(schema["$defs"]):
            assert obj["additionalProperties"] is False
            assert obj["required"] == list(obj["properties"])
        assert not any("oneOf" in n for n in nodes(schema))
    search = openai_parameters(CASE05_SEARCH).schema
    assert set(search["$defs"]) == {"Filter", "Compound"}  # Comparison is not recursive: inlined
    assert len(search["$defs"]["Filter"]["anyOf"]) == 2
    instance = {
        "filter": {
            "mode": "and",
            "filters": [{"field": "f", "op": "eq", "value": "v"}, {"mode": "or", "filters": []}],
        }
    }
    assert valid(CASE05_SEARCH, instance)
    assert valid(search, instance)


def test_case05_openai_deep_instance() -> None:
    schema = openai_parameters(CASE05_FOLDER).schema
    deep = {"body": {"name": "a", "children": [{"name": "b", "children": [{"name": "c", "children": None}]}]}}
    assert valid(schema, deep)
    assert not valid(schema, {"body": {"name": "a"}})


def test_case05_anthropic_strict_disabled_naming_defs() -> None:
    ds = anthropic_input_schema(CASE05_SEARCH)
    assert ds.strict is False
    assert any("#/$defs/Filter" in w and "anthropic strict disabled" in w for w in ds.warnings)
    assert any("#/$defs/Compound" in w for w in ds.warnings)
    folder = anthropic_input_schema(CASE05_FOLDER)
    assert folder.strict is False
    assert "recursive schema (#/$defs/Folder): anthropic strict disabled" in folder.warnings
    assert "strict" not in anthropic_tool("createFolderTree", "d", CASE05_FOLDER)
    assert anthropic_input_schema(CASE15).strict is True


def test_case05_mcp_recursion_kept() -> None:
    schema = mcp_input_schema(CASE05_FOLDER).schema
    Draft202012Validator.check_schema(schema)
    assert unresolved_refs(schema) == []
    tree = {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}
    assert valid(schema, {"body": tree})
    assert not valid(schema, {"body": {"name": "a", "children": [{"children": []}]}})


# --- case 24: no parameters ------------------------------------------------------------------------


@pytest.mark.parametrize("canonical", [CASE24_BARE, CASE24_CLOSED])
def test_case24_empty_parameter_objects(canonical: dict[str, Any]) -> None:
    ds = openai_parameters(canonical)
    assert ds.schema == {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    assert ds.strict
    assert anthropic_input_schema(canonical).schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert mcp_input_schema(canonical).schema == {"type": "object", "additionalProperties": False}
    tool = openai_tool("getHealth", "Health.", canonical)
    assert tool["function"]["strict"] is True


# --- case 21: output schemas -----------------------------------------------------------------------


def test_case21_output_refs_resolve_and_sample_validates() -> None:
    ds = mcp_output_schema(CASE21_OUTPUT)
    schema = ds.schema
    assert schema["type"] == "object"
    assert unresolved_refs(schema) == []
    assert schema["properties"]["otherData"] == {}
    assert valid(schema, CASE21_SAMPLE)
    for other in ("x", 1, None, [1], {"a": 1}):
        assert valid(schema, {**CASE21_SAMPLE, "otherData": other})
    assert not mcp_output_needs_wrap(schema)


def test_case21_paginated_wrapper_keeps_defs() -> None:
    page = {
        "type": "object",
        "required": ["items", "next_cursor"],
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/ResultItem"}},
            "next_cursor": {"type": ["string", "null"]},
        },
        "$defs": CASE21_OUTPUT["$defs"],
    }
    schema = mcp_output_schema(page).schema
    assert unresolved_refs(schema) == []
    assert valid(schema, {"items": CASE21_SAMPLE["results"], "next_cursor": None})


def test_output_non_object_root_is_wrapped_with_defs_hoisted() -> None:
    canonical = {
        "type": "array",
        "items": {"$ref": "#/$defs/Tree"},
        "$defs": {
            "Tree": {
                "type": "object",
                "properties": {
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
                    "same": {"$ref": "#/items"},
                },
            }
        },
    }
    ds = mcp_output_schema(canonical)
    assert mcp_output_needs_wrap(canonical)
    schema = ds.schema
    assert schema["type"] == "object" and schema["required"] == ["result"]
    assert "$defs" in schema and "$defs" not in schema["properties"]["result"]
    assert unresolved_refs(schema) == []
    assert any("wrapped" in n for n in ds.notes)
    value = [{"kids": [{"kids": []}], "same": {"kids": []}}]
    assert valid(canonical, value)
    assert valid(schema, {"result": value})
    assert not valid(schema, value)
    mcp = [
        mcp_tool(
            "t", "d", CASE24_BARE, canonical, title=None, read_only=True, destructive=False, idempotent=True
        )
    ]
    assert check_mcp_catalog(mcp) == []


def test_output_root_self_reference_is_repointed() -> None:
    canonical = {"type": ["object", "null"], "properties": {"next": {"$ref": "#"}}}
    schema = mcp_output_schema(canonical).schema
    assert schema["properties"]["result"]["properties"]["next"] == {"$ref": "#/properties/result"}
    assert valid(schema, {"result": {"next": {"next": None}}})


# --- case 08: nullable -----------------------------------------------------------------------------


def test_case08_nullable_inputs() -> None:
    oa = openai_parameters(CASE08).schema["properties"]
    assert oa["title"]["type"] == "string"
    for name in ("note", "price", "tags", "region"):
        assert valid(oa[name], None), name
    assert oa["region"]["enum"] == ["eu", "us", None]
    assert oa["note"] == {"type": ["string", "null"]}  # required nullable: unchanged, not double-widened
    assert oa["tags"]["anyOf"].count({"type": "null"}) == 1
    for fn in (mcp_input_schema, anthropic_input_schema):
        props = fn(CASE08).schema["properties"]
        for name in ("note", "price", "tags", "region"):
            assert valid(props[name], None), (fn.__name__, name)
    mcp = mcp_input_schema(CASE08).schema
    assert valid(mcp, {"title": "t", "note": None})
    assert not valid(mcp, {"title": "t"})
