"""Dialect transforms (toolgen.dialects): canonical tool schema -> OpenAI strict / Anthropic / MCP.

Canonical inputs mirror the fault cases in the shared cases folder (05, 08, 13, 14, 15, 21, 24);
every emitted catalog also goes through the conformance checker, and jsonschema proves that
instances valid for the canonical schema stay valid for each dialect schema.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from tests.support.profiles import examples

import toolgen.dialects
from toolgen.dialects import dialect, iter_schemas, registry, resolve_local_ref, unresolved_refs
from toolgen.dialects.anthropic import anthropic_input_schema, anthropic_tool, check_anthropic_catalog
from toolgen.dialects.mcp import (
    check_mcp_catalog,
    mcp_input_schema,
    mcp_output_needs_wrap,
    mcp_output_schema,
    mcp_tool,
)
from toolgen.dialects.openai import (
    OPENAI_STRICT_FORMATS,
    check_openai_catalog,
    openai_parameters,
    openai_tool,
    schema_stats,
)

# --- canonical inputs ------------------------------------------------------------------------------

CASE15: dict[str, Any] = {  # optional fields under strict mode (query `depth` flattened next to the body members)
    "type": "object",
    "properties": {
        "depth": {"type": "string", "enum": ["basic", "advanced"], "description": "Query: extraction depth"},
        "urls": {
            "description": "One URL or a list of URLs",
            "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
        },
        "includeImages": {"type": "boolean"},
        "options": {
            "type": "object",
            "properties": {"timeoutMs": {"type": "integer"}, "userAgent": {"type": "string"}},
        },
    },
    "required": ["urls"],
    "additionalProperties": False,
}

CASE13 = {  # $ref with sibling keywords (non-recursive targets)
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/Address", "description": "Postal address used for invoices"},
        "role": {"$ref": "#/$defs/Role", "description": "Role granted on creation", "default": "viewer"},
    },
    "required": ["name", "address", "role"],
    "additionalProperties": False,
    "$defs": {
        "Address": {
            "type": "object",
            "required": ["street", "city"],
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        },
        "Role": {"type": "string", "enum": ["viewer", "editor", "admin"]},
    },
}

CASE13_RECURSIVE = {  # a recursive $ref with siblings must keep its description too
    "type": "object",
    "properties": {"node": {"$ref": "#/$defs/Node", "description": "Parent node", "default": None}},
    "required": ["node"],
    "$defs": {
        "Node": {
            "type": "object",
            "required": ["id"],
            "properties": {"id": {"type": "string"}, "parent": {"$ref": "#/$defs/Node"}},
        }
    },
}

CASE14: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "format": "uri"},
        "callback": {"type": "string", "format": "uri-reference"},
        "startedAt": {"type": "string", "format": "date-time"},
        "contact": {"type": "string", "format": "email"},
        "retries": {"type": "integer", "format": "int32"},
        "ratio": {"type": "number", "format": "double"},
        "pageId": {"type": "string", "format": "uuid"},
        "token": {"type": "string", "format": "password"},
        "host": {"type": "string", "format": "hostname"},
    },
    "required": ["url", "callback", "startedAt", "contact", "retries", "ratio", "pageId", "token"],
    "additionalProperties": False,
}

CASE05_FOLDER = {
    "type": "object",
    "properties": {"body": {"$ref": "#/$defs/Folder", "description": "The folder tree to create"}},
    "required": ["body"],
    "additionalProperties": False,
    "$defs": {
        "Folder": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Folder"}},
            },
        }
    },
}

CASE05_SEARCH = {
    "type": "object",
    "properties": {"filter": {"$ref": "#/$defs/Filter"}},
    "required": ["filter"],
    "additionalProperties": False,
    "$defs": {
        "Filter": {"oneOf": [{"$ref": "#/$defs/Comparison"}, {"$ref": "#/$defs/Compound"}]},
        "Comparison": {
            "type": "object",
            "required": ["field", "op", "value"],
            "properties": {
                "field": {"type": "string"},
                "op": {"type": "string", "enum": ["eq", "ne", "lt", "gt"]},
                "value": {"type": "string"},
            },
        },
        "Compound": {
            "type": "object",
            "required": ["mode", "filters"],
            "properties": {
                "mode": {"type": "string", "enum": ["and", "or"]},
                "filters": {"type": "array", "items": {"$ref": "#/$defs/Filter"}},
            },
        },
    },
}

CASE24_BARE = {"type": "object"}
CASE24_CLOSED = {"type": "object", "properties": {}, "additionalProperties": False}

CASE21_OUTPUT = {
    "type": "object",
    "required": ["results"],
    "properties": {
        "results": {"type": "array", "items": {"$ref": "#/$defs/ResultItem"}},
        "otherData": {},
    },
    "$defs": {
        "ResultItem": {
            "type": "object",
            "required": ["metric"],
            "properties": {
                "metric": {"oneOf": [{"$ref": "#/$defs/NumericMetric"}, {"$ref": "#/$defs/StringMetric"}]}
            },
        },
        "NumericMetric": {
            "type": "object",
            "required": ["type", "minVal", "maxVal"],
            "properties": {"type": {"const": "numeric"}, "minVal": {"type": "number"},
                           "maxVal": {"type": "number"}},
        },
        "StringMetric": {
            "type": "object",
            "required": ["type", "minLength", "maxLength"],
            "properties": {"type": {"const": "string"}, "minLength": {"type": "integer"},
                           "maxLength": {"type": "integer"}},
        },
    },
}
CASE21_SAMPLE = {
    "results": [
        {"metric": {"type": "numeric", "minVal": 2, "maxVal": 555}},
        {"metric": {"type": "string", "minLength": 2, "maxLength": 5}},
    ],
    "otherData": "x",
}

CASE08 = {  # nullable already expressed as type arrays, plus one stray OpenAPI `nullable` to convert
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "note": {"type": ["string", "null"]},
        "price": {"type": ["number", "null"], "minimum": 0},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "region": {"type": "string", "enum": ["eu", "us"], "nullable": True},
    },
    "required": ["title", "note"],
    "additionalProperties": False,
}

FREE_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "meta": {"type": "object", "description": "Arbitrary metadata"},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 10}},
        "anything": {},
    },
    "required": ["name"],
    "additionalProperties": False,
}

CONSTRAINTS = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "Subject line.", "maxLength": 200, "pattern": r"^T-\d+$"},
        "count": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20, "format": "int32"},
        "tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 5,
                 "uniqueItems": True, "examples": [["a"]]},
        "role": {"type": "string", "enum": ["viewer", "admin"], "default": "viewer", "deprecated": True},
        "id": {"type": "string", "readOnly": True, "x-internal": "yes", "$comment": "ignored"},
    },
    "required": ["title"],
    "additionalProperties": False,
}

ALL_INPUTS: dict[str, dict[str, Any]] = {
    "case15": CASE15, "case13": CASE13, "case13_recursive": CASE13_RECURSIVE, "case14": CASE14,
    "case05_folder": CASE05_FOLDER, "case05_search": CASE05_SEARCH, "case24_bare": CASE24_BARE,
    "case24_closed": CASE24_CLOSED, "case08": CASE08, "free_form": FREE_FORM, "constraints": CONSTRAINTS,
}


# --- helpers ---------------------------------------------------------------------------------------


def nodes(schema: Any) -> list[dict[str, Any]]:
    return [n for _, n in iter_schemas(schema) if isinstance(n, dict)]


def object_nodes(schema: Any) -> list[dict[str, Any]]:
    out = []
    for n in nodes(schema):
        t = n.get("type")
        if t == "object" or (isinstance(t, list) and "object" in t):
            out.append(n)
    return out


def valid(schema: dict[str, Any], instance: Any) -> bool:
    return bool(Draft202012Validator(schema).is_valid(instance))


def with_nulls(canonical: dict[str, Any], instance: Any, root: dict[str, Any] | None = None) -> Any:
    """The OpenAI-strict form of a canonical instance: absent optional members become null."""
    root = root if root is not None else canonical
    schema = canonical
    while isinstance(schema, dict) and "$ref" in schema:
        schema = resolve_local_ref(root, schema["$ref"])
    if isinstance(instance, dict) and isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        out = {}
        for name, sub in schema["properties"].items():
            out[name] = with_nulls(sub, instance[name], root) if name in instance else None
        return out
    if isinstance(instance, list) and isinstance(schema, dict) and isinstance(schema.get("items"), dict):
        return [with_nulls(schema["items"], x, root) for x in instance]
    if isinstance(schema, dict):
        for key in ("anyOf", "oneOf"):
            for branch in schema.get(key, []):
                if Draft202012Validator({**root, **branch} if "$ref" in branch else branch).is_valid(instance):
                    return with_nulls(branch, instance, root)
    return instance


def all_catalogs_conform(canonicals: dict[str, dict[str, Any]]) -> None:
    openai = [openai_tool(n, "d", c) for n, c in canonicals.items()]
    anthropic = [anthropic_tool(n, "d", c) for n, c in canonicals.items()]
    mcp = [mcp_tool(n, "d", c, None, title=None, read_only=False, destructive=False, idempotent=False)
           for n, c in canonicals.items()]
    assert check_openai_catalog(openai) == []
    assert check_anthropic_catalog(anthropic) == []
    assert check_mcp_catalog(mcp) == []


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
    assert urls == {"description": "One URL or a list of URLs", "type": ["array", "string"],
                    "items": {"type": "string"}}
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
    assert "role: default \"viewer\"" in ds.notes


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
    instance = {"filter": {"mode": "and", "filters": [{"field": "f", "op": "eq", "value": "v"},
                                                      {"mode": "or", "filters": []}]}}
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
        "type": "object", "properties": {}, "additionalProperties": False}
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
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/ResultItem"}},
                       "next_cursor": {"type": ["string", "null"]}},
        "$defs": CASE21_OUTPUT["$defs"],
    }
    schema = mcp_output_schema(page).schema
    assert unresolved_refs(schema) == []
    assert valid(schema, {"items": CASE21_SAMPLE["results"], "next_cursor": None})


def test_output_non_object_root_is_wrapped_with_defs_hoisted() -> None:
    canonical = {
        "type": "array",
        "items": {"$ref": "#/$defs/Tree"},
        "$defs": {"Tree": {"type": "object", "properties": {
            "kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}},
            "same": {"$ref": "#/items"}}}},
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
    mcp = [mcp_tool("t", "d", CASE24_BARE, canonical, title=None, read_only=True, destructive=False,
                    idempotent=True)]
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
    assert props["title"] == {"description": "Subject line. (maxLength: 200)", "type": "string",
                              "pattern": r"^T-\d+$"}
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
            "window": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                       "dependentRequired": {"a": ["b"]}},
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
        "properties": {"item": {"allOf": [
            {"$ref": "#/$defs/Base"},
            {"type": "object", "properties": {"extra": {"type": "string"}}, "required": ["extra"]},
        ], "description": "An item"}},
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
    canonical = {"type": "object", "properties": {"v": {"allOf": [{"type": "string"}, {"type": "integer"}]}},
                 "required": ["v"]}
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
        (10, "json_string", "nesting below the depth limit")]


def test_enum_limit() -> None:
    ok = {"type": "object", "properties": {"e": {"type": "integer", "enum": list(range(999))}},
          "required": ["e"]}
    assert openai_parameters(ok).strict is True
    big = {"type": "object", "properties": {"e": {"type": "integer", "enum": list(range(1001))}},
           "required": ["e"]}
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
    tool = mcp_tool("get_x", "Get.", CASE24_BARE, CASE21_OUTPUT, title="Get X", read_only=True,
                    destructive=False, idempotent=True)
    assert list(tool) == ["name", "title", "description", "inputSchema", "outputSchema", "annotations"]
    assert tool["annotations"] == {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                                   "openWorldHint": True}
    bare = mcp_tool("del_x", "Delete.", CASE15, None, title=None, read_only=False, destructive=True,
                    idempotent=False, open_world=False)
    assert "title" not in bare and "outputSchema" not in bare
    assert bare["annotations"]["openWorldHint"] is False
    assert check_mcp_catalog([tool, bare]) == []
    with pytest.raises(ValueError):
        mcp_tool("x", "d", CASE15, None, title=None, read_only=True, destructive=True, idempotent=True)


# --- property test: random canonical schemas with valid instances ----------------------------------

_NAMES = st.sampled_from(["a", "b", "c", "id", "name", "type", "items", "x_y", "page-size"])


@st.composite
def leaf(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    kind = draw(st.sampled_from(["string", "uri", "integer", "number", "boolean", "enum", "nullable", "union"]))
    if kind == "string":
        n = draw(st.integers(1, 8))
        return {"type": "string", "maxLength": n, "default": "d"}, draw(st.text(max_size=n))
    if kind == "uri":
        return {"type": "string", "format": "uri"}, "https://a.test/x"
    if kind == "integer":
        lo = draw(st.integers(-5, 5))
        return {"type": "integer", "minimum": lo, "format": "int64"}, draw(st.integers(lo, lo + 10))
    if kind == "number":
        return {"type": "number", "format": "double"}, draw(st.floats(-1e6, 1e6))
    if kind == "boolean":
        return {"type": "boolean"}, draw(st.booleans())
    if kind == "enum":
        values = draw(st.lists(st.sampled_from(["p", "q", "r", "s"]), min_size=1, max_size=4, unique=True))
        return {"type": "string", "enum": values}, draw(st.sampled_from(values))
    if kind == "nullable":
        return {"type": ["string", "null"]}, draw(st.one_of(st.none(), st.text(max_size=3)))
    schema = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "integer"}}],
              "description": "one or many"}
    return schema, draw(st.one_of(st.text(max_size=3), st.lists(st.integers(), max_size=3)))


@st.composite
def obj(draw: st.DrawFn, depth: int = 0) -> tuple[dict[str, Any], Any]:
    names = draw(st.lists(_NAMES, max_size=4, unique=True))
    props: dict[str, Any] = {}
    instance: dict[str, Any] = {}
    required: list[str] = []
    for name in names:
        choice = draw(st.integers(0, 4)) if depth < 3 else 0
        if choice == 3:
            sub, value = draw(obj(depth + 1))
        elif choice == 4:
            item_schema, _ = draw(obj(depth + 1))
            values = [draw(obj_instance(item_schema)) for _ in range(draw(st.integers(0, 2)))]
            sub, value = {"type": "array", "items": item_schema, "maxItems": 5}, values
        else:
            sub, value = draw(leaf())
        props[name] = sub
        if draw(st.booleans()):
            required.append(name)
            instance[name] = value
        elif draw(st.booleans()):
            instance[name] = value
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema, instance


@st.composite
def obj_instance(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    """A minimal valid instance of an object schema made by `obj` (required members only)."""
    out: dict[str, Any] = {}
    for name in schema["required"]:
        sub = schema["properties"][name]
        if sub.get("type") == "object":
            out[name] = draw(obj_instance(sub))
        elif sub.get("type") == "array":
            out[name] = []
        elif "enum" in sub:
            out[name] = sub["enum"][0]
        elif sub.get("type") == "string":
            out[name] = "https://a.test" if sub.get("format") == "uri" else ""
        elif sub.get("type") == ["string", "null"]:
            out[name] = None
        elif sub.get("type") in ("integer", "number"):
            out[name] = sub.get("minimum", 0)
        elif sub.get("type") == "boolean":
            out[name] = False
        else:
            out[name] = "s"
    return out


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
