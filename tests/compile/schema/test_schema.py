"""Tests for `toolgen.compile.schema`: OpenAPI Schema Objects -> canonical JSON Schema 2020-12."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from toolgen.compile.load import SpecDocument, load_spec, read_structured
from toolgen.compile.schema import (
    SchemaBudget,
    SchemaConverter,
    def_name_for_pointer,
    limit_depth,
    object_view,
    project_schema,
    schema_nodes,
)
from toolgen.diagnostics import DiagnosticError, DiagnosticSink
from toolgen.pointer import join_pointer, resolve_pointer

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
CASES = SHARED / "cases"
REAL = SHARED / "specs" / "real"

needs_shared = pytest.mark.skipif(not CASES.is_dir(), reason="shared/ fault cases not present")
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="shared/ real specs not present")


# --- helpers ------------------------------------------------------------------------------------


def case_doc(number: str) -> SpecDocument:
    matches = sorted(CASES.glob(f"{number}-*"))
    if not matches:
        pytest.skip(f"fault case {number} not present")
    return load_spec(matches[0] / "spec.yaml")


def make_doc(tmp_path: Path, schemas: dict[str, Any], version: str = "3.0.3",
             paths: dict[str, Any] | None = None, extra: dict[str, Any] | None = None) -> SpecDocument:
    data: dict[str, Any] = {
        "openapi": version,
        "info": {"title": "t", "version": "1"},
        "paths": paths or {},
        "components": {"schemas": schemas},
    }
    if extra:
        data.update(extra)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_spec(path, sink=DiagnosticSink())


def conv(doc: SpecDocument, name: str, context: str = "input",
         **kw: Any) -> tuple[dict[str, Any], DiagnosticSink]:
    sink = DiagnosticSink()
    converter = SchemaConverter(doc, sink, **kw)
    return converter.convert({"$ref": f"#/components/schemas/{name}"}, "/x", context), sink  # type: ignore[arg-type]


def at(doc: SpecDocument, pointer: str) -> Any:
    return resolve_pointer(doc.data, pointer)


def walk(node: Any) -> Iterator[Any]:
    yield node
    if isinstance(node, dict):
        for v in node.values():
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


def schema_dicts(node: Any) -> Iterator[dict[str, Any]]:
    """Schema nodes only (not enum/default/const values)."""
    if not isinstance(node, dict):
        return
    yield node
    for key, value in node.items():
        if key in ("properties", "patternProperties", "$defs", "dependentSchemas") \
                and isinstance(value, dict):
            for v in value.values():
                yield from schema_dicts(v)
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            for v in value:
                yield from schema_dicts(v)
        elif key in ("items", "additionalProperties", "not", "contains", "propertyNames",
                     "if", "then", "else"):
            yield from schema_dicts(value)


def assert_self_contained(schema: dict[str, Any]) -> None:
    """Valid 2020-12 and every $ref resolves inside the schema itself."""
    Draft202012Validator.check_schema(schema)
    for node in walk(schema):
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            assert ref.startswith("#"), ref
            resolve_pointer(schema, ref[1:])


def validates(schema: dict[str, Any], instance: Any) -> bool:
    return bool(Draft202012Validator(schema).is_valid(instance))


def codes(exc: pytest.ExceptionInfo[DiagnosticError]) -> list[str]:
    return [d.code for d in exc.value.diagnostics]


# --- 1. $ref ------------------------------------------------------------------------------------


def test_local_refs_are_inlined_including_into_paths_and_schema_internals(tmp_path: Path) -> None:
    paths = {
        "/v2/1-clicks": {"get": {"responses": {"default": {
            "description": "err",
            "content": {"application/json": {"schema": {
                "type": "object", "properties": {"id": {"type": "string"}, "msg": {"type": "string"}}}}}}}}},
        "/items/{id}": {"get": {"responses": {"200": {
            "description": "ok", "content": {"application/json": {"schema": {"type": "integer"}}}}}}},
    }
    doc = make_doc(tmp_path, {
        "A": {"type": "object", "properties": {"b": {"type": "string", "maxLength": 3}}},
        "UsesPath": {"$ref": "#/paths/~1v2~11-clicks/get/responses/default/content/application~1json/schema"},
        "UsesInternal": {"type": "array", "items": {"$ref": "#/components/schemas/A/properties/b"}},
        "UsesEncoded": {
            "$ref": "#/paths/~1items~1%7Bid%7D/get/responses/200/content/application~1json/schema"},
    }, paths=paths)
    assert conv(doc, "UsesPath")[0] == {
        "type": "object", "properties": {"id": {"type": "string"}, "msg": {"type": "string"}}}
    assert conv(doc, "UsesInternal")[0] == {"type": "array", "items": {"type": "string", "maxLength": 3}}
    assert conv(doc, "UsesEncoded")[0] == {"type": "integer"}


def test_external_ref_is_an_error_with_a_hint(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {"E": {"$ref": "other.yaml#/components/schemas/X"},
                              "H": {"$ref": "https://example.test/s.json#/X"}})
    for name in ("E", "H"):
        with pytest.raises(DiagnosticError) as exc:
            conv(doc, name)
        assert codes(exc) == ["ref-external"]
        diag = exc.value.diagnostics[0]
        assert diag.hint and "bundle" in diag.hint
        assert diag.location is not None and diag.location.pointer == f"/components/schemas/{name}/$ref"
    with pytest.raises(DiagnosticError) as exc:
        conv(doc, "E", allow_external_refs=True)
    assert codes(exc) == ["ref-external"] and "not implemented" in exc.value.diagnostics[0].message


def test_missing_ref_names_the_pointer(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {"M": {"type": "object", "properties": {
        "x": {"$ref": "#/components/schemas/Nope"}}}})
    with pytest.raises(DiagnosticError) as exc:
        conv(doc, "M")
    assert codes(exc) == ["ref-missing"]
    diag = exc.value.diagnostics[0]
    assert "#/components/schemas/Nope" in diag.message
    assert diag.location is not None and diag.location.pointer == "/components/schemas/M/properties/x/$ref"


def test_ref_chain_without_content_is_a_ref_cycle(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {"A": {"$ref": "#/components/schemas/B"},
                              "B": {"$ref": "#/components/schemas/A"},
                              "C": {"allOf": [{"$ref": "#/components/schemas/C"}], "description": "self"}},
                   extra={})
    sink = DiagnosticSink()
    converter = SchemaConverter(doc, sink)
    with pytest.raises(DiagnosticError) as exc:
        converter.convert({"$ref": "#/components/schemas/A"}, "/x", "input")
    assert codes(exc) == ["ref-cycle"]
    assert "A -> B -> A" in exc.value.diagnostics[0].message
    with pytest.raises(DiagnosticError) as exc:
        converter.convert({"$ref": "#/components/schemas/C"}, "/x", "input")
    assert codes(exc) == ["ref-cycle"]
    # resolve() on a looping chain of any OpenAPI object
    with pytest.raises(DiagnosticError) as exc:
        converter.resolve({"$ref": "#/components/schemas/A"}, "/paths/x")
    assert codes(exc) == ["ref-cycle"]
    assert exc.value.diagnostics[0].location is not None
    assert exc.value.diagnostics[0].location.pointer == "/paths/x/$ref"


def test_resolve_follows_chains_for_any_openapi_object(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {}, extra={})
    doc.data["components"]["parameters"] = {
        "Limit": {"$ref": "#/components/parameters/RealLimit"},
        "RealLimit": {"name": "limit", "in": "query", "schema": {"type": "integer"}},
    }
    converter = SchemaConverter(doc, DiagnosticSink())
    target, pointer = converter.resolve({"$ref": "#/components/parameters/Limit"},
                                        "/paths/~1a/get/parameters/0")
    assert pointer == "/components/parameters/RealLimit" and target["name"] == "limit"
    plain = {"name": "x"}
    assert converter.resolve(plain, "/p") == (plain, "/p")
    with pytest.raises(DiagnosticError) as exc:
        converter.resolve({"$ref": "#/components/parameters/Gone"}, "/p")
    assert codes(exc) == ["ref-missing"]


@needs_shared
def test_recursive_schemas_become_defs_and_validate_at_depth_three() -> None:
    doc = case_doc("05")
    sink = DiagnosticSink()
    converter = SchemaConverter(doc, sink)
    body_ptr = "/paths/~1folders/post/requestBody/content/application~1json/schema"
    folder = converter.convert(at(doc, body_ptr), body_ptr, "input")
    assert folder["type"] == "object"  # root inlined one level, not a bare $ref
    assert set(folder["$defs"]) == {"Folder"}
    assert folder["properties"]["children"]["items"] == {"$ref": "#/$defs/Folder"}
    assert_self_contained(folder)
    deep = {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}
    assert validates(folder, deep)
    # the recursion kept its constraints (a child without `name` is rejected)
    assert not validates(folder, {"name": "a", "children": [{"children": []}]})

    search_ptr = "/paths/~1search/post/requestBody/content/application~1json/schema"
    search = converter.convert(at(doc, search_ptr), search_ptr, "input")
    assert_self_contained(search)
    assert set(search["$defs"]) == {"Filter", "Compound"}
    assert "oneOf" in search["$defs"]["Filter"]  # canonical keeps oneOf
    nested = {"filter": {"mode": "and", "filters": [{"field": "a", "op": "eq", "value": "1"},
                                                    {"mode": "or", "filters": []}]}}
    assert validates(search, nested)
    bad_op = {"field": "a", "op": "bad", "value": "1"}
    assert not validates(search, {"filter": {"mode": "and", "filters": [bad_op]}})

    # converting again, and in the other context, reports each cycle once
    converter.convert(at(doc, body_ptr), body_ptr, "output")
    converter.convert(at(doc, search_ptr), search_ptr, "input")
    cycles = [d for d in sink if d.code == "schema-cycle"]
    assert len(cycles) == 2 and all(d.severity == "info" for d in cycles)
    messages = sorted(d.message for d in cycles)
    assert "Filter -> Compound -> Filter" in messages[0]
    assert "#/components/schemas/Filter" in messages[0] and "#/components/schemas/Compound" in messages[0]
    assert "Folder -> Folder" in messages[1] and "#/components/schemas/Folder" in messages[1]


def test_def_names_are_sanitised_unique_and_deterministic(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {
        "Node Type": {"type": "object", "properties": {"next": {"$ref": "#/components/schemas/Node%20Type"}}},
        "Node_Type": {"type": "object", "properties": {
            "next": {"$ref": "#/components/schemas/Node_Type"},
            "other": {"$ref": "#/components/schemas/Node%20Type"}}},
    })
    schema, _ = conv(doc, "Node_Type")
    names = sorted(schema["$defs"])
    assert len(names) == 2 and "Node_Type" in names
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+", n) for n in names)
    assert def_name_for_pointer("/components/schemas/Node Type") == def_name_for_pointer(
        "/components/schemas/Node Type")
    assert_self_contained(schema)


@needs_shared
def test_ref_siblings_merge_into_the_inlined_target() -> None:
    doc = case_doc("13")
    ptr = "/paths/~1users/post/requestBody/content/application~1json/schema"
    schema = SchemaConverter(doc, DiagnosticSink()).convert(at(doc, ptr), ptr, "input")
    address = schema["properties"]["address"]
    assert address["description"] == "Postal address used for invoices"
    assert address["required"] == ["street", "city"] and address["type"] == "object"
    role = schema["properties"]["role"]
    assert role == {"type": "string", "enum": ["viewer", "editor", "admin"],
                    "description": "Role granted on creation", "default": "viewer"}
    assert "$ref" not in json.dumps(schema)


def test_recursive_ref_with_siblings_keeps_ref_and_annotations(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {
        "Tree": {"type": "object", "properties": {
            "parent": {"$ref": "#/components/schemas/Tree", "description": "the parent node"},
            "maybe": {"allOf": [{"$ref": "#/components/schemas/Tree"}], "nullable": True},
        }},
    }, version="3.1.0")
    schema, _ = conv(doc, "Tree")
    assert schema["properties"]["parent"] == {"$ref": "#/$defs/Tree", "description": "the parent node"}
    assert schema["properties"]["maybe"] == {"anyOf": [{"$ref": "#/$defs/Tree"}, {"type": "null"}]}
    assert_self_contained(schema)
    assert validates(schema, {"parent": {"parent": {}}, "maybe": None})


# --- 2. nullability -----------------------------------------------------------------------------


@needs_shared
def test_nullable_oas30_becomes_null_types() -> None:
    doc = case_doc("08")
    converter = SchemaConverter(doc, DiagnosticSink())
    body_ptr = "/paths/~1items/post/requestBody/content/application~1json/schema"
    body = converter.convert(at(doc, body_ptr), body_ptr, "input")
    props = body["properties"]
    assert props["title"] == {"type": "string"}
    assert props["note"]["type"] == ["string", "null"]
    assert props["price"]["type"] == ["number", "null"]
    assert props["tags"] == {"type": ["array", "null"], "items": {"type": "string"}}
    assert validates(body, {"title": "t", "note": None, "price": None, "tags": None})
    assert not validates(body, {"title": None, "note": None})
    region_ptr = "/paths/~1items/post/parameters/0/schema"
    assert converter.convert(at(doc, region_ptr), region_ptr, "input") == {"type": ["string", "null"]}
    out_ptr = "/paths/~1items/post/responses/201/content/application~1json/schema"
    out = converter.convert(at(doc, out_ptr), out_ptr, "output")
    assert validates(out, {"id": "x", "price": None})
    assert all("nullable" not in node for node in schema_dicts(body))


def test_nullable_variants(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {
        "NoType": {"nullable": True, "description": "anything"},
        "Enum": {"type": "string", "enum": ["a", "b"], "nullable": True},
        "EnumNoType": {"enum": ["a", "b"], "nullable": True},
        "Union": {"oneOf": [{"type": "string"}, {"type": "integer"}], "nullable": True, "description": "d"},
        "AnyOfUnion": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": True},
        "Const": {"type": "string", "const": "x", "nullable": True},
        "NullType30": {"type": "null"},
        "Obj": {"type": "object", "properties": {"a": {"type": "string", "nullable": True,
                                                       "x-extra": 1}}},
    })
    assert conv(doc, "NoType")[0] == {"description": "anything"}  # accepts null already
    assert conv(doc, "Enum")[0] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    assert conv(doc, "EnumNoType")[0] == {"enum": ["a", "b", None]}
    union = conv(doc, "Union")[0]
    assert union == {"anyOf": [{"oneOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "null"}],
                     "description": "d"}
    assert conv(doc, "AnyOfUnion")[0] == {
        "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}
    const = conv(doc, "Const")[0]
    assert validates(const, None) and validates(const, "x") and not validates(const, "y")
    assert conv(doc, "NullType30")[0] == {"type": "null"}
    for name in ("NoType", "Enum", "Union", "Obj"):
        assert all("nullable" not in n for n in schema_dicts(conv(doc, name)[0]))


def test_oas31_type_arrays_and_nullable_in_31(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {
        "T": {"type": ["null", "string", "integer", "string"]},
        "N": {"type": "string", "nullable": True},  # 3.0 keyword in a 3.1 document (ReadMe does this)
        "E": {"type": ["string", "null"], "enum": ["a"]},
    }, version="3.1.0")
    assert conv(doc, "T")[0] == {"type": ["string", "integer", "null"]}
    assert conv(doc, "N")[0] == {"type": ["string", "null"]}
    assert conv(doc, "E")[0] == {"type": ["string", "null"], "enum": ["a", None]}


# --- 3. readOnly / writeOnly --------------------------------------------------------------------


@needs_shared
def test_read_only_and_write_only_by_context() -> None:
    doc = case_doc("19")
    converter = SchemaConverter(doc, DiagnosticSink())
    body_ptr = "/paths/~1projects~1{projectId}/patch/requestBody/content/application~1json/schema"
    out_ptr = "/paths/~1projects~1{projectId}/get/responses/200/content/application~1json/schema"
    # same component, both contexts, interleaved: the cache is per context
    for _ in range(2):
        body = converter.convert(at(doc, body_ptr), body_ptr, "input")
        assert list(body["properties"]) == ["name", "webhookSecret"]
        assert body["required"] == ["name"]
        out = converter.convert(at(doc, out_ptr), out_ptr, "output")
        assert list(out["properties"]) == ["id", "senderId", "createdAt", "name"]
        assert out["required"] == ["id", "name", "senderId"]
    assert "readOnly" not in json.dumps(body) and "writeOnly" not in json.dumps(out)


def test_read_only_nested_through_refs_and_allof(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {
        "Id": {"type": "integer", "readOnly": True},
        "Meta": {"type": "object", "required": ["created", "note"], "properties": {
            "created": {"$ref": "#/components/schemas/Id"},
            "note": {"type": "string"},
            "secret": {"type": "string", "writeOnly": True}}},
        "Base": {"type": "object", "properties": {"id": {"$ref": "#/components/schemas/Id"}}},
        "Thing": {"allOf": [
            {"$ref": "#/components/schemas/Base"},
            {"type": "object", "required": ["id", "meta"], "properties": {
                "meta": {"$ref": "#/components/schemas/Meta"},
                "ro_via_allof": {"allOf": [{"$ref": "#/components/schemas/Meta"}], "readOnly": True}}}]},
    })
    thing_in = conv(doc, "Thing", "input")[0]
    assert list(thing_in["properties"]) == ["meta"]
    assert thing_in["required"] == ["meta"]  # `id` was required by the other branch: dropped too
    assert list(thing_in["properties"]["meta"]["properties"]) == ["note", "secret"]
    assert thing_in["properties"]["meta"]["required"] == ["note"]
    thing_out = conv(doc, "Thing", "output")[0]
    assert list(thing_out["properties"]) == ["id", "meta", "ro_via_allof"]
    assert list(thing_out["properties"]["meta"]["properties"]) == ["created", "note"]


# --- 4. allOf ------------------------------------------------------------------------------------


@needs_shared
def test_allof_body_is_merged() -> None:
    doc = case_doc("11")
    ptr = "/paths/~1accounts~1{accountId}~1drafts~1ad-sets/post/requestBody/content/application~1json/schema"
    schema = SchemaConverter(doc, DiagnosticSink()).convert(at(doc, ptr), ptr, "input")
    assert "allOf" not in schema
    assert list(schema["properties"]) == ["name", "notes", "campaignId", "budget"]
    assert schema["required"] == ["name", "campaignId", "budget"]
    assert validates(schema, {"name": "n", "campaignId": "3fa85f64-5717-4562-b3fc-2c963f66afa6",
                              "budget": {"amount": 5, "currency": "EUR"}})


@needs_shared
def test_allof_conflict_names_both_pointers_and_types() -> None:
    doc = case_doc("11")
    ptr = "/paths/~1accounts~1{accountId}~1drafts~1conflict/post/requestBody/content/application~1json/schema"
    with pytest.raises(DiagnosticError) as exc:
        SchemaConverter(doc, DiagnosticSink()).convert(at(doc, ptr), ptr, "input")
    assert codes(exc) == ["schema-allof-conflict"]
    message = exc.value.diagnostics[0].message
    assert "#/components/schemas/DraftBase/properties/name" in message
    assert f"#{ptr}/allOf/1/properties/name" in message
    assert "string" in message and "integer" in message
    filled = doc.fill_locations(exc.value.diagnostics)  # line/col are resolved in one batch
    assert filled[0].location is not None and filled[0].location.line is not None


def test_allof_additional_properties_false_does_not_forbid_other_branch(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {
        "Closed": {"type": "object", "additionalProperties": False, "required": ["a"],
                   "properties": {"a": {"type": "string"}}},
        "Both": {"allOf": [{"$ref": "#/components/schemas/Closed"},
                           {"type": "object", "properties": {"b": {"type": "integer"}}}]},
        "Described": {"allOf": [{"$ref": "#/components/schemas/Closed"}], "description": "the 3.0 idiom"},
        "Bounds": {"allOf": [{"type": "integer", "minimum": 1, "maximum": 10, "enum": [1, 2, 3, 11]},
                             {"minimum": 2, "maximum": 20, "enum": [2, 3, 4]}]},
        "EnumClash": {"allOf": [{"enum": ["a"]}, {"enum": ["b"]}]},
    })
    both = conv(doc, "Both")[0]
    assert validates(both, {"a": "x", "b": 1})
    assert not validates(both, {"a": "x", "c": 1})  # merged object is closed over the union
    assert both["additionalProperties"] is False and "allOf" not in both
    described = conv(doc, "Described")[0]
    assert described["description"] == "the 3.0 idiom" and described["required"] == ["a"]
    assert conv(doc, "Bounds")[0] == {"type": "integer", "minimum": 2, "maximum": 10, "enum": [2, 3]}
    with pytest.raises(DiagnosticError) as exc:
        conv(doc, "EnumClash")
    assert codes(exc) == ["schema-allof-conflict"]


# --- 5-7. keywords ------------------------------------------------------------------------------


def test_keywords_dropped_kept_and_converted(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {
        "K": {
            "type": "object", "title": "K", "description": "d", "deprecated": True,
            "discriminator": {"propertyName": "kind"}, "xml": {"name": "k"},
            "externalDocs": {"url": "https://example.test"}, "example": {"kind": "a"}, "x-internal": True,
            "properties": {
                "kind": {"type": "string", "default": "a", "format": "slug", "pattern": "^[a-z]+$",
                         "minLength": 1, "maxLength": 5, "examples": ["a"]},
                "n": {"type": "number", "minimum": 0, "exclusiveMinimum": True,
                      "maximum": 10, "exclusiveMaximum": False, "multipleOf": 0.5},
                "x-not-an-extension": {"type": "string"},
                "u": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                "list": {"type": "array", "minItems": 1, "uniqueItems": True},
                "file": {"type": "file"},
                "bin": {"type": "string", "format": "binary"},
                "any": {},
            },
        },
    })
    schema = conv(doc, "K")[0]
    for dropped in ("discriminator", "xml", "externalDocs", "example", "x-internal"):
        assert dropped not in schema
    assert schema["title"] == "K" and schema["deprecated"] is True
    props = schema["properties"]
    assert props["kind"] == {"type": "string", "default": "a", "format": "slug", "pattern": "^[a-z]+$",
                             "minLength": 1, "maxLength": 5}
    assert props["n"] == {"type": "number", "exclusiveMinimum": 0, "maximum": 10, "multipleOf": 0.5}
    assert "x-not-an-extension" in props  # a property *named* x-... is not an extension
    assert props["u"] == {"oneOf": [{"type": "string"}, {"type": "integer"}]}
    assert props["list"] == {"type": "array", "minItems": 1, "uniqueItems": True, "items": {}}
    assert props["file"] == {"type": "string", "format": "binary"}
    assert props["bin"] == {"type": "string", "format": "binary"}
    assert props["any"] == {}
    assert not validates(schema, {"n": 0}) and validates(schema, {"n": 0.5})


def test_enum_dedup_compares_by_type_and_value(tmp_path: Path) -> None:
    values = [1, 1.0, True, "1", True, None, 1, {"a": 1}, {"a": 1.0}, False, 0]
    doc = make_doc(tmp_path, {"E": {"enum": values}})
    assert conv(doc, "E")[0] == {"enum": [1, True, "1", None, {"a": 1}, False, 0]}


@needs_shared
def test_refs_through_oneof_and_empty_schema_stays_any() -> None:
    doc = case_doc("21")
    ptr = "/paths/~1profiles/post/responses/200/content/application~1json/schema"
    schema = SchemaConverter(doc, DiagnosticSink()).convert(at(doc, ptr), ptr, "output")
    assert_self_contained(schema)
    assert schema["type"] == "object"
    assert schema["properties"]["otherData"] == {}
    sample = {"results": [{"metric": {"type": "numeric", "minVal": 2, "maxVal": 555}},
                          {"metric": {"type": "string", "minLength": 2, "maxLength": 5}}], "otherData": "x"}
    assert validates(schema, sample)
    for other in ("x", 1, None, [1], {"k": "v"}):
        assert validates(schema, {**sample, "otherData": other})


def test_boolean_schemas(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {"B": {"type": "object", "properties": {"yes": True, "no": False},
                                    "additionalProperties": False}}, version="3.1.0")
    schema = conv(doc, "B")[0]
    assert schema["properties"] == {"yes": {}, "no": {"not": {}}}
    assert schema["additionalProperties"] is False
    assert validates(schema, {"yes": 1}) and not validates(schema, {"no": 1})


# --- 8. budgets ---------------------------------------------------------------------------------


def test_exponential_inlining_is_rejected_quickly(tmp_path: Path) -> None:
    schemas: dict[str, Any] = {f"L{i}": {"anyOf": [{"$ref": f"#/components/schemas/L{i + 1}"},
                                                   {"$ref": f"#/components/schemas/L{i + 1}"}]}
                               for i in range(30)}
    schemas["L30"] = {"type": "string"}
    doc = make_doc(tmp_path, schemas)
    with pytest.raises(DiagnosticError) as exc:  # counted, not expanded: 2**31 nodes would never finish
        conv(doc, "L0")
    assert codes(exc) == ["schema-too-large"]
    diag = exc.value.diagnostics[0]
    assert "2,147,483,647" in diag.message and "20,000" in diag.message  # the count and the budget
    assert diag.hint == "project the output (output.fields) or raise budgets.max_schema_nodes"
    # within budget, the same converter still works and counts agree with schema_nodes()
    small = SchemaConverter(doc, DiagnosticSink(), SchemaBudget(max_nodes=100))
    result = small.convert({"$ref": "#/components/schemas/L25"}, "/x", "input")
    assert schema_nodes(result) == 63


def test_depth_budget(tmp_path: Path) -> None:
    schemas: dict[str, Any] = {f"D{i}": {"type": "object", "properties": {
        "next": {"$ref": f"#/components/schemas/D{i + 1}"}}} for i in range(80)}
    schemas["D80"] = {"type": "string"}
    doc = make_doc(tmp_path, schemas)
    with pytest.raises(DiagnosticError) as exc:
        conv(doc, "D0")
    assert codes(exc) == ["schema-too-large"] and "64" in exc.value.diagnostics[0].message
    deep = conv(doc, "D50")[0]  # 31 levels: fine
    assert schema_nodes(deep) == 31
    converter = SchemaConverter(doc, DiagnosticSink(), SchemaBudget(max_depth=10))
    converter.convert({"$ref": "#/components/schemas/D71"}, "/x", "input")  # 10 levels: fine
    with pytest.raises(DiagnosticError):
        converter.convert({"$ref": "#/components/schemas/D69"}, "/x", "input")  # 12 levels (cached parts)


# --- 9-10. determinism, freshness ---------------------------------------------------------------


_DETERMINISM_SCRIPT = """
import json, sys
from pathlib import Path
from toolgen.compile.load import load_spec
from toolgen.diagnostics import DiagnosticSink
from toolgen.compile.schema import SchemaConverter
doc = load_spec(Path(sys.argv[1]))
sink = DiagnosticSink()
c = SchemaConverter(doc, sink)
out = [c.convert({"$ref": "#/components/schemas/" + n}, "/x", ctx)
       for n in sorted(doc.data["components"]["schemas"]) for ctx in ("input", "output")]
print(json.dumps([out, [d.render() for d in sink]]))
"""


def test_output_is_independent_of_hash_seed(tmp_path: Path) -> None:
    schemas: dict[str, Any] = {}
    for i in range(12):  # a web of cycles
        schemas[f"N{i}"] = {"type": "object", "properties": {
            f"p{j}": {"$ref": f"#/components/schemas/N{(i * 7 + j) % 12}"} for j in range(3)}}
    schemas["Leaf"] = {"type": "object", "properties": {"n": {"$ref": "#/components/schemas/N3"}}}
    make_doc(tmp_path, schemas)
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", _DETERMINISM_SCRIPT, str(tmp_path / "spec.yaml")],
                              capture_output=True, text=True, env=env, check=True)
        outputs.add(proc.stdout)
    assert len(outputs) == 1
    result = json.loads(outputs.pop())
    assert len(result[1]) == 1 and "schema-cycle" in result[1][0]  # one group, reported once


def test_results_are_fresh_and_the_document_is_untouched(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {
        "Tag": {"type": "object", "properties": {"name": {"type": "string", "enum": ["a"]}}},
        "Post": {"type": "object", "properties": {
            "tags": {"type": "array", "items": {"$ref": "#/components/schemas/Tag"}},
            "main": {"$ref": "#/components/schemas/Tag"},
            "replies": {"type": "array", "items": {"$ref": "#/components/schemas/Post"}}}},
    })
    before = json.dumps(doc.data, sort_keys=True)
    converter = SchemaConverter(doc, DiagnosticSink())
    first = converter.convert({"$ref": "#/components/schemas/Post"}, "/x", "input")
    expected = json.dumps(first, sort_keys=True)
    ids = [id(n) for n in walk(first) if isinstance(n, (dict, list))]
    assert len(ids) == len(set(ids))  # a tree: no shared sub-objects inside one result
    for node in walk(first):  # vandalise the result
        if isinstance(node, dict):
            node["vandal"] = True
        elif isinstance(node, list):
            node.append("vandal")
    second = converter.convert({"$ref": "#/components/schemas/Post"}, "/x", "input")
    assert json.dumps(second, sort_keys=True) == expected
    assert not {id(n) for n in walk(second)} & {id(n) for n in walk(first) if isinstance(n, (dict, list))}
    assert json.dumps(doc.data, sort_keys=True) == before


# --- public helpers -----------------------------------------------------------------------------


def _api(tmp_path: Path) -> dict[str, Any]:
    doc = make_doc(tmp_path, {
        "User": {"type": "object", "required": ["login", "id"], "properties": {
            "login": {"type": "string"}, "id": {"type": "integer"},
            "org": {"type": "object", "nullable": True, "properties": {"name": {"type": "string"},
                                                                      "url": {"type": "string"}}}}},
        "Label": {"type": "object", "properties": {"name": {"type": "string"}, "color": {"type": "string"}}},
        "Comment": {"type": "object", "properties": {
            "body": {"type": "string"},
            "replies": {"type": "array", "items": {"$ref": "#/components/schemas/Comment"}},
            "author": {"$ref": "#/components/schemas/User"}}},
        "Issue": {"type": "object", "required": ["id", "title"], "properties": {
            "id": {"type": "integer"}, "title": {"type": "string"},
            "user": {"allOf": [{"$ref": "#/components/schemas/User"}], "nullable": True},
            "labels": {"type": "array", "items": {"$ref": "#/components/schemas/Label"}},
            "comments": {"type": "array", "items": {"$ref": "#/components/schemas/Comment"}},
            "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
            "owner": {"anyOf": [{"type": "string"}, {"$ref": "#/components/schemas/User"}]}}},
    })
    return conv(doc, "Issue", "output")[0]


def test_object_view(tmp_path: Path) -> None:
    issue = _api(tmp_path)
    props, required = object_view(issue)  # type: ignore[misc]
    assert list(props) == ["id", "title", "user", "labels", "comments", "metadata", "owner"]
    assert required == ["id", "title"]
    assert object_view(issue["properties"]["user"]) is not None  # nullable object
    nullable_object = {"anyOf": [{"type": "object", "properties": {"a": {}}}, {"type": "null"}]}
    assert object_view(nullable_object) == ({"a": {}}, [])
    assert object_view({"type": "string"}) is None
    assert object_view({"type": "array", "items": {}}) is None
    recursive = {"$ref": "#/$defs/T",
                 "$defs": {"T": {"type": "object", "properties": {"t": {"$ref": "#/$defs/T"}}}}}
    assert object_view(recursive) == ({"t": {"$ref": "#/$defs/T"}}, [])


def test_project_schema(tmp_path: Path) -> None:
    issue = _api(tmp_path)
    assert "Comment" in issue["$defs"]
    projected = project_schema(issue, ["id", "user.login", "labels.name", "metadata.env"])
    assert list(projected["properties"]) == ["id", "user", "labels", "metadata"]
    assert projected["required"] == ["id"]
    assert list(projected["properties"]["user"]["properties"]) == ["login"]
    assert projected["properties"]["user"]["type"] == ["object", "null"]
    assert projected["properties"]["user"]["required"] == ["login"]
    assert projected["properties"]["labels"]["items"]["properties"] == {"name": {"type": "string"}}
    assert projected["properties"]["metadata"]["properties"] == {"env": {"type": "string"}}
    assert "$defs" not in projected  # Comment is no longer referenced
    assert_self_contained(projected)
    assert validates(projected, {"id": 1, "user": None, "labels": [{"name": "bug"}]})
    # a union branch (string | User): the object branch is projected, the string kept
    owner = project_schema(issue, ["owner.login"])["properties"]["owner"]
    assert owner["anyOf"][0] == {"type": "string"}
    assert list(owner["anyOf"][1]["properties"]) == ["login"]
    # keeping a recursive field keeps the $defs it needs
    with_comments = project_schema(issue, ["comments.replies"])
    assert set(with_comments["$defs"]) == {"Comment"}
    assert_self_contained(with_comments)
    for bad in ("nope", "user.nope", "labels.name.x", "id.x", ""):
        with pytest.raises(KeyError) as exc:
            project_schema(issue, ["id", bad])
        assert exc.value.args[0] == bad


def test_project_schema_does_not_mutate_input(tmp_path: Path) -> None:
    issue = _api(tmp_path)
    before = json.dumps(issue, sort_keys=True)
    out = project_schema(issue, ["comments.body"])
    out["properties"]["comments"]["items"]["x"] = 1
    assert json.dumps(issue, sort_keys=True) == before


def test_limit_depth_keeps_types_and_acceptance(tmp_path: Path) -> None:
    issue = _api(tmp_path)
    cut = limit_depth(issue, 1)
    assert "$defs" not in cut  # recursion cut while walking
    user = cut["properties"]["user"]
    assert user["properties"]["org"] == {"type": ["object", "null"]}
    comments_items = cut["properties"]["comments"]["items"]
    assert comments_items == {"type": "object"}
    assert cut["properties"]["labels"]["items"] == {"type": "object"}
    zero = limit_depth(issue, 0)
    assert zero["properties"]["user"] == {"type": ["object", "null"]}
    assert zero["properties"]["owner"] == {"type": ["string", "object"]}
    assert zero["properties"]["id"] == {"type": "integer"}
    assert schema_nodes(zero) < schema_nodes(cut) < schema_nodes(issue)
    instances = [
        {"id": 1, "title": "t", "user": None, "labels": [], "comments": []},
        {"id": 1, "title": "t", "user": {"login": "u", "id": 2, "org": {"name": "o"}},
         "labels": [{"name": "x", "color": "red"}],
         "comments": [{"body": "b", "replies": [{"body": "c", "replies": [{"body": "d"}]}],
                       "author": {"login": "a", "id": 1, "org": None}}],
         "metadata": {"a": "b"}, "owner": "me"},
        {"id": 1, "title": "t", "owner": {"login": "x", "id": 3}},
    ]
    for depth in (0, 1, 2, 3):
        limited = limit_depth(issue, depth)
        assert_self_contained(limited)
        for instance in instances:
            assert validates(issue, instance)
            assert validates(limited, instance)
    untyped = limit_depth({"type": "object", "properties": {"a": {"properties": {"b": {}}}}}, 0)
    assert untyped["properties"]["a"] == {}  # no type: must keep accepting non-objects
    negated = limit_depth({"type": "object", "properties": {"a": {"not": {"type": "object",
                                                                          "properties": {"b": {}}}}}}, 0)
    assert negated["properties"]["a"]["not"]["properties"] == {"b": {}}  # `not` is never loosened


def test_schema_nodes_counts_schema_positions_only() -> None:
    schema = {"type": "object", "properties": {"a": {"enum": [{"type": "object"}]}, "b": {"items": {}}},
              "anyOf": [{}, {}], "$defs": {"X": {"not": {}}}, "default": {"properties": {"z": {}}}}
    assert schema_nodes(schema) == 8


# --- real specs ---------------------------------------------------------------------------------


HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def load_real(name: str) -> SpecDocument:
    path = REAL / name
    if not path.is_file():
        pytest.skip(f"{name} not present")
    try:
        return load_spec(path, sink=DiagnosticSink())
    except DiagnosticError as exc:
        # vercel.json trips a load-stage validation error on a request body whose schema has a
        # boolean property schema; the schema stage only needs the raw data.
        assert all(d.code == "spec-invalid" for d in exc.diagnostics)
        text, data, fmt = read_structured(path, name)
        version = "3.1" if str(data["openapi"]).startswith("3.1") else "3.0"
        return SpecDocument(path, name, text, data, fmt, version, data["openapi"])  # type: ignore[arg-type]


def operation_schemas(doc: SpecDocument, converter: SchemaConverter) -> Iterator[tuple[Any, str, str]]:
    """(schema, pointer, context) of every request body, parameter and 2xx response."""
    for path, item in doc.data.get("paths", {}).items():
        if not isinstance(item, dict):
            continue
        for method, op in item.items():
            if method not in HTTP_METHODS or not isinstance(op, dict):
                continue
            op_ptr = join_pointer("/paths", path, method)
            if "requestBody" in op:
                body, body_ptr = converter.resolve(op["requestBody"], join_pointer(op_ptr, "requestBody"))
                for media, node in (body.get("content") or {}).items():
                    if isinstance(node, dict) and "schema" in node:
                        yield node["schema"], join_pointer(body_ptr, "content", media, "schema"), "input"
            for i, param in enumerate(op.get("parameters") or []):
                param, param_ptr = converter.resolve(param, join_pointer(op_ptr, "parameters", i))
                if "schema" in param:
                    yield param["schema"], join_pointer(param_ptr, "schema"), "input"
            for code, response in (op.get("responses") or {}).items():
                if not str(code).startswith("2"):
                    continue
                response, resp_ptr = converter.resolve(response, join_pointer(op_ptr, "responses", code))
                for media, node in (response.get("content") or {}).items():
                    if isinstance(node, dict) and "schema" in node:
                        yield node["schema"], join_pointer(resp_ptr, "content", media, "schema"), "output"


def assert_refs_local(schema: dict[str, Any]) -> None:
    defs = schema.get("$defs", {})
    for node in walk(schema):
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            assert ref.startswith("#/$defs/") and ref[len("#/$defs/"):] in defs, ref


@needs_real
@pytest.mark.slow
@pytest.mark.parametrize("name", ["digitalocean.json", "vercel.json", "readme-api.json", "blockfrost.yaml",
                                  "stripe.json"])
def test_real_specs_convert_to_valid_self_contained_schemas(name: str) -> None:
    doc = load_real(name)
    sink = DiagnosticSink()
    converter = SchemaConverter(doc, sink)
    results: list[dict[str, Any]] = []
    failures: list[str] = []
    for node, pointer, context in operation_schemas(doc, converter):
        try:
            results.append(converter.convert(node, pointer, context))  # type: ignore[arg-type]
        except DiagnosticError as exc:
            failures.append(exc.diagnostics[0].code)
    assert results and len(failures) <= len(results) // 20, failures[:10]
    distinct = {json.dumps(r, sort_keys=True): r for r in results}
    for schema in distinct.values():
        assert_refs_local(schema)
        assert all("nullable" not in n for n in schema_dicts(schema))
    if name == "stripe.json":  # large schemas: the Rust meta-check for all, the Python one for a sample
        import jsonschema_rs
        for schema in distinct.values():
            assert jsonschema_rs.meta.is_valid(schema)
        sample = sorted(distinct.values(), key=schema_nodes)
        for schema in sample[:: max(1, len(sample) // 15)]:
            Draft202012Validator.check_schema(schema)
    else:
        for schema in distinct.values():
            Draft202012Validator.check_schema(schema)
    if name in ("vercel.json", "stripe.json"):
        assert any(d.code == "schema-cycle" for d in sink)


@needs_real
def test_readme_31_nullable_and_digitalocean_path_refs() -> None:
    readme = load_real("readme-api.json")
    converter = SchemaConverter(readme, DiagnosticSink())
    seen_null = False
    for node, pointer, context in operation_schemas(readme, converter):
        if "nullable" in json.dumps(node):
            schema = converter.convert(node, pointer, context)  # type: ignore[arg-type]
            assert "nullable" not in json.dumps(schema)
            seen_null = seen_null or '"null"' in json.dumps(schema)
    assert seen_null
    ocean = load_real("digitalocean.json")
    path_refs = 0
    converter = SchemaConverter(ocean, DiagnosticSink())
    for node, pointer, context in operation_schemas(ocean, converter):
        if "#/paths/" in json.dumps(node):
            path_refs += 1
            schema = converter.convert(node, pointer, context)  # type: ignore[arg-type]
            assert "$ref" not in json.dumps(schema)
    assert path_refs > 0


@needs_real
def test_stripe_cycle_groups_match_the_spec() -> None:
    doc = load_real("stripe.json")
    sink = DiagnosticSink()
    converter = SchemaConverter(doc, sink)
    names = sorted(doc.data["components"]["schemas"])
    groups = {converter._scc("/components/schemas/" + n) for n in names}
    recursive = [g for g in groups if g.recursive]
    assert sum(len(g.members) for g in recursive) == 86
    assert max(len(g.members) for g in recursive) == 65
    schema = converter.convert({"$ref": "#/components/schemas/charge"}, "/components/schemas/charge",
                               "output")
    assert_refs_local(schema)
    big = [d for d in sink if d.code == "schema-cycle" and "group of 65" in d.message]
    assert len(big) == 1


@needs_real
@pytest.mark.slow
def test_every_operation_schema_of_github_and_stripe_converts() -> None:
    """Every request and response schema of the two largest real specs converts or fails with a located
    diagnostic, never another exception (speed is measured by benchmarks/sweep.py, not here)."""
    for name, expected in (("github-api.github.com.json", 1000), ("stripe.json", 400)):
        doc = load_real(name)
        converter = SchemaConverter(doc, DiagnosticSink())
        converted = 0
        for node, pointer, context in operation_schemas(doc, converter):
            try:
                converter.convert(node, pointer, context)  # type: ignore[arg-type]
                converted += 1
            except DiagnosticError as exc:
                assert all(d.location is not None for d in exc.diagnostics)
        assert converted > expected, (name, converted)


def test_bad_context_is_rejected(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {"A": {"type": "string"}})
    with pytest.raises(ValueError):
        SchemaConverter(doc, DiagnosticSink()).convert({}, "/x", "both")  # type: ignore[arg-type]


def test_invalid_schema_value_is_a_warning(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {"A": {"type": "object", "properties": {"x": "not a schema"}}})
    schema, sink = conv(doc, "A")
    assert schema["properties"]["x"] == {}
    assert [d.code for d in sink] == ["schema-invalid"]


