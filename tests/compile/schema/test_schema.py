"""Tests for `toolgen.compile.schema`: OpenAPI Schema Objects -> canonical JSON Schema 2020-12, one
rule at a time ($ref, nullability, readOnly/writeOnly, allOf, keywords). The converter over whole
documents (budgets, determinism, real specs) is tested in `test_schema_documents.py`, the helpers over
converted schemas in `test_projection.py`; the documents they build are `tests.support.schema_cases`'.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.support.schema_cases import assert_self_contained, codes, conv, make_doc, schema_dicts, validates

from toolgen.compile.load import SpecDocument, load_spec
from toolgen.compile.operations import list_operations
from toolgen.compile.schema import SchemaConverter, def_name_for_pointer
from toolgen.diagnostics import DiagnosticError, DiagnosticSink
from toolgen.pointer import resolve_pointer

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
CASES = SHARED / "cases"

needs_shared = pytest.mark.skipif(not CASES.is_dir(), reason="shared/ fault cases not present")


# --- helpers ------------------------------------------------------------------------------------


def case_doc(number: str) -> SpecDocument:
    matches = sorted(CASES.glob(f"{number}-*"))
    if not matches:
        pytest.skip(f"fault case {number} not present")
    return load_spec(matches[0] / "spec.yaml")


def at(doc: SpecDocument, pointer: str) -> Any:
    return resolve_pointer(doc.data, pointer)


# --- 1. $ref ------------------------------------------------------------------------------------


def test_local_refs_are_inlined_including_into_paths_and_schema_internals(tmp_path: Path) -> None:
    paths = {
        "/v2/1-clicks": {
            "get": {
                "responses": {
                    "default": {
                        "description": "err",
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"id": {"type": "string"}, "msg": {"type": "string"}},
                                }
                            }
                        },
                    }
                }
            }
        },
        "/items/{id}": {
            "get": {
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"type": "integer"}}},
                    }
                }
            }
        },
    }
    doc = make_doc(
        tmp_path,
        {
            "A": {"type": "object", "properties": {"b": {"type": "string", "maxLength": 3}}},
            "UsesPath": {
                "$ref": "#/paths/~1v2~11-clicks/get/responses/default/content/application~1json/schema"
            },
            "UsesInternal": {"type": "array", "items": {"$ref": "#/components/schemas/A/properties/b"}},
            "UsesEncoded": {
                "$ref": "#/paths/~1items~1%7Bid%7D/get/responses/200/content/application~1json/schema"
            },
        },
        paths=paths,
    )
    assert conv(doc, "UsesPath")[0] == {
        "type": "object",
        "properties": {"id": {"type": "string"}, "msg": {"type": "string"}},
    }
    assert conv(doc, "UsesInternal")[0] == {"type": "array", "items": {"type": "string", "maxLength": 3}}
    assert conv(doc, "UsesEncoded")[0] == {"type": "integer"}


def test_external_ref_is_an_error_with_a_hint(tmp_path: Path) -> None:
    doc = make_doc(
        tmp_path,
        {"E": {"$ref": "other.yaml#/components/schemas/X"}, "H": {"$ref": "https://example.test/s.json#/X"}},
    )
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
    doc = make_doc(
        tmp_path, {"M": {"type": "object", "properties": {"x": {"$ref": "#/components/schemas/Nope"}}}}
    )
    with pytest.raises(DiagnosticError) as exc:
        conv(doc, "M")
    assert codes(exc) == ["ref-missing"]
    diag = exc.value.diagnostics[0]
    assert "#/components/schemas/Nope" in diag.message
    assert diag.location is not None and diag.location.pointer == "/components/schemas/M/properties/x/$ref"


def test_ref_chain_without_content_is_a_ref_cycle(tmp_path: Path) -> None:
    doc = make_doc(
        tmp_path,
        {
            "A": {"$ref": "#/components/schemas/B"},
            "B": {"$ref": "#/components/schemas/A"},
            "C": {"allOf": [{"$ref": "#/components/schemas/C"}], "description": "self"},
        },
        extra={},
    )
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
    target, pointer = converter.resolve(
        {"$ref": "#/components/parameters/Limit"}, "/paths/~1a/get/parameters/0"
    )
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
    nested = {
        "filter": {
            "mode": "and",
            "filters": [{"field": "a", "op": "eq", "value": "1"}, {"mode": "or", "filters": []}],
        }
    }
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
    doc = make_doc(
        tmp_path,
        {
            "Node Type": {
                "type": "object",
                "properties": {"next": {"$ref": "#/components/schemas/Node%20Type"}},
            },
            "Node_Type": {
                "type": "object",
                "properties": {
                    "next": {"$ref": "#/components/schemas/Node_Type"},
                    "other": {"$ref": "#/components/schemas/Node%20Type"},
                },
            },
        },
    )
    schema, _ = conv(doc, "Node_Type")
    names = sorted(schema["$defs"])
    assert len(names) == 2 and "Node_Type" in names
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+", n) for n in names)
    assert def_name_for_pointer("/components/schemas/Node Type") == def_name_for_pointer(
        "/components/schemas/Node Type"
    )
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
    assert role == {
        "type": "string",
        "enum": ["viewer", "editor", "admin"],
        "description": "Role granted on creation",
        "default": "viewer",
    }
    assert "$ref" not in json.dumps(schema)


def test_recursive_ref_with_siblings_keeps_ref_and_annotations(tmp_path: Path) -> None:
    doc = make_doc(
        tmp_path,
        {
            "Tree": {
                "type": "object",
                "properties": {
                    "parent": {"$ref": "#/components/schemas/Tree", "description": "the parent node"},
                    "maybe": {"allOf": [{"$ref": "#/components/schemas/Tree"}], "nullable": True},
                },
            },
        },
        version="3.1.0",
    )
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
    doc = make_doc(
        tmp_path,
        {
            "NoType": {"nullable": True, "description": "anything"},
            "Enum": {"type": "string", "enum": ["a", "b"], "nullable": True},
            "EnumNoType": {"enum": ["a", "b"], "nullable": True},
            "Union": {
                "oneOf": [{"type": "string"}, {"type": "integer"}],
                "nullable": True,
                "description": "d",
            },
            "AnyOfUnion": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": True},
            "Const": {"type": "string", "const": "x", "nullable": True},
            "NullType30": {"type": "null"},
            "Obj": {
                "type": "object",
                "properties": {"a": {"type": "string", "nullable": True, "x-extra": 1}},
            },
        },
    )
    assert conv(doc, "NoType")[0] == {"description": "anything"}  # accepts null already
    assert conv(doc, "Enum")[0] == {"type": ["string", "null"], "enum": ["a", "b", None]}
    assert conv(doc, "EnumNoType")[0] == {"enum": ["a", "b", None]}
    union = conv(doc, "Union")[0]
    assert union == {
        "anyOf": [{"oneOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "null"}],
        "description": "d",
    }
    assert conv(doc, "AnyOfUnion")[0] == {
        "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]
    }
    const = conv(doc, "Const")[0]
    assert validates(const, None) and validates(const, "x") and not validates(const, "y")
    assert conv(doc, "NullType30")[0] == {"type": "null"}
    for name in ("NoType", "Enum", "Union", "Obj"):
        assert all("nullable" not in n for n in schema_dicts(conv(doc, name)[0]))


def test_oas31_type_arrays_and_nullable_in_31(tmp_path: Path) -> None:
    doc = make_doc(
        tmp_path,
        {
            "T": {"type": ["null", "string", "integer", "string"]},
            "N": {"type": "string", "nullable": True},  # 3.0 keyword in a 3.1 document (ReadMe does this)
            "E": {"type": ["string", "null"], "enum": ["a"]},
        },
        version="3.1.0",
    )
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
    doc = make_doc(
        tmp_path,
        {
            "Id": {"type": "integer", "readOnly": True},
            "Meta": {
                "type": "object",
                "required": ["created", "note"],
                "properties": {
                    "created": {"$ref": "#/components/schemas/Id"},
                    "note": {"type": "string"},
                    "secret": {"type": "string", "writeOnly": True},
                },
            },
            "Base": {"type": "object", "properties": {"id": {"$ref": "#/components/schemas/Id"}}},
            "Thing": {
                "allOf": [
                    {"$ref": "#/components/schemas/Base"},
                    {
                        "type": "object",
                        "required": ["id", "meta"],
                        "properties": {
                            "meta": {"$ref": "#/components/schemas/Meta"},
                            "ro_via_allof": {
                                "allOf": [{"$ref": "#/components/schemas/Meta"}],
                                "readOnly": True,
                            },
                        },
                    },
                ]
            },
        },
    )
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
    assert validates(
        schema,
        {
            "name": "n",
            "campaignId": "3fa85f64-5717-4562-b3fc-2c963f66afa6",
            "budget": {"amount": 5, "currency": "EUR"},
        },
    )


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
    doc = make_doc(
        tmp_path,
        {
            "Closed": {
                "type": "object",
                "additionalProperties": False,
                "required": ["a"],
                "properties": {"a": {"type": "string"}},
            },
            "Both": {
                "allOf": [
                    {"$ref": "#/components/schemas/Closed"},
                    {"type": "object", "properties": {"b": {"type": "integer"}}},
                ]
            },
            "Described": {"allOf": [{"$ref": "#/components/schemas/Closed"}], "description": "the 3.0 idiom"},
            "Bounds": {
                "allOf": [
                    {"type": "integer", "minimum": 1, "maximum": 10, "enum": [1, 2, 3, 11]},
                    {"minimum": 2, "maximum": 20, "enum": [2, 3, 4]},
                ]
            },
            "EnumClash": {"allOf": [{"enum": ["a"]}, {"enum": ["b"]}]},
        },
    )
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
    doc = make_doc(
        tmp_path,
        {
            "K": {
                "type": "object",
                "title": "K",
                "description": "d",
                "deprecated": True,
                "discriminator": {"propertyName": "kind"},
                "xml": {"name": "k"},
                "externalDocs": {"url": "https://example.test"},
                "example": {"kind": "a"},
                "x-internal": True,
                "properties": {
                    "kind": {
                        "type": "string",
                        "default": "a",
                        "format": "slug",
                        "pattern": "^[a-z]+$",
                        "minLength": 1,
                        "maxLength": 5,
                        "examples": ["a"],
                    },
                    "n": {
                        "type": "number",
                        "minimum": 0,
                        "exclusiveMinimum": True,
                        "maximum": 10,
                        "exclusiveMaximum": False,
                        "multipleOf": 0.5,
                    },
                    "x-not-an-extension": {"type": "string"},
                    "u": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
                    "list": {"type": "array", "minItems": 1, "uniqueItems": True},
                    "file": {"type": "file"},
                    "bin": {"type": "string", "format": "binary"},
                    "any": {},
                },
            },
        },
    )
    schema = conv(doc, "K")[0]
    for dropped in ("discriminator", "xml", "externalDocs", "example", "x-internal"):
        assert dropped not in schema
    assert schema["title"] == "K" and schema["deprecated"] is True
    props = schema["properties"]
    assert props["kind"] == {
        "type": "string",
        "default": "a",
        "format": "slug",
        "pattern": "^[a-z]+$",
        "minLength": 1,
        "maxLength": 5,
    }
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
    sample = {
        "results": [
            {"metric": {"type": "numeric", "minVal": 2, "maxVal": 555}},
            {"metric": {"type": "string", "minLength": 2, "maxLength": 5}},
        ],
        "otherData": "x",
    }
    assert validates(schema, sample)
    for other in ("x", 1, None, [1], {"k": "v"}):
        assert validates(schema, {**sample, "otherData": other})


def test_boolean_schemas(tmp_path: Path) -> None:
    doc = make_doc(
        tmp_path,
        {"B": {"type": "object", "properties": {"yes": True, "no": False}, "additionalProperties": False}},
        version="3.1.0",
    )
    schema = conv(doc, "B")[0]
    assert schema["properties"] == {"yes": {}, "no": {"not": {}}}
    assert schema["additionalProperties"] is False
    assert validates(schema, {"yes": 1}) and not validates(schema, {"no": 1})


def test_bad_context_is_rejected(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {"A": {"type": "string"}})
    with pytest.raises(ValueError):
        SchemaConverter(doc, DiagnosticSink()).convert({}, "/x", "both")  # type: ignore[arg-type]


def test_invalid_schema_value_is_a_warning(tmp_path: Path) -> None:
    doc = make_doc(tmp_path, {"A": {"type": "object", "properties": {"x": "not a schema"}}})
    schema, sink = conv(doc, "A")
    assert schema["properties"]["x"] == {}
    assert [d.code for d in sink] == ["schema-invalid"]


@pytest.mark.parametrize(
    "ref", ["#/components/schemas/A~2B", "#/components/schemas/A%7E2B", "#/components/schemas/A~"]
)
def test_a_ref_with_a_bad_tilde_escape_is_refused_not_read_as_text(tmp_path: Path, ref: str) -> None:
    # RFC 6901 sections 3-4: '~' only as '~0'/'~1'; the schemas named 'A~2B' and 'A~' exist, so a lenient
    # reader would resolve the $ref to them
    doc = make_doc(
        tmp_path,
        {
            "A~2B": {"type": "integer"},
            "A~": {"type": "integer"},
            "M": {"type": "object", "properties": {"x": {"$ref": ref}}},
        },
    )
    with pytest.raises(DiagnosticError) as exc:
        conv(doc, "M")
    assert codes(exc) == ["ref-invalid"]
    diag = exc.value.diagnostics[0]
    assert "RFC 6901" in diag.message and ref in diag.message
    assert diag.hint is not None and "~0" in diag.hint and "~1" in diag.hint
    assert diag.location is not None and diag.location.pointer == "/components/schemas/M/properties/x/$ref"
    assert diag.location.file.endswith("spec.yaml")


@pytest.mark.parametrize(
    ("ref", "names"),
    [
        ("#", "the OpenAPI document itself"),
        ("#/info", "#/info"),
        ("#/info/title", "a string"),
        ("#/paths/~1items", "#/paths/~1items"),
        ("#/paths/~1items/get", "#/paths/~1items/get"),
        ("#/components/schemas", "#/components/schemas"),
        ("#/components/responses/Err", "#/components/responses/Err"),
        ("#/components/schemas/A/properties/n/maxLength", "a number"),
        # a member named `schema` that is no parameter's, header's or media type's schema
        ("#/components/responses/schema", "#/components/responses/schema"),
        ("#/info/x-a/schema", "#/info/x-a/schema"),
    ],
)
def test_a_ref_whose_target_is_not_a_schema_is_a_located_error(tmp_path: Path, ref: str, names: str) -> None:
    # read as a schema, each target would accept any value (its members are no schema keywords)
    schemas = {
        "A": {"type": "object", "properties": {"n": {"type": "string", "maxLength": 3}}},
        "M": {"type": "object", "properties": {"x": {"$ref": ref}}},
    }
    doc = make_doc(
        tmp_path,
        schemas,
        paths={"/items": {"get": {"responses": {"200": {"description": "ok"}}}}},
        extra={
            "components": {
                "schemas": schemas,
                "responses": {"Err": {"description": "failed"}, "schema": {"description": "named schema"}},
            },
            "info": {"title": "t", "version": "1", "x-a": {"schema": {"anything": True}}},
        },
    )
    with pytest.raises(DiagnosticError) as exc:
        conv(doc, "M")
    assert codes(exc) == ["ref-not-schema"]
    diag = exc.value.diagnostics[0]
    assert names in diag.message and repr(ref) in diag.message
    assert diag.hint is not None and "#/components/schemas/" in diag.hint
    assert diag.location is not None and diag.location.pointer == "/components/schemas/M/properties/x/$ref"
    assert diag.location.file.endswith("spec.yaml")


@pytest.mark.parametrize(
    "ref",
    [
        "#/components/schemas/A",
        "#/components/schemas/A/properties/n",
        "#/components/parameters/P/schema",
        "#/components/headers/H/schema",
        "#/paths/~1items/get/responses/200/content/application~1json/schema",
    ],
)
def test_a_ref_to_a_schema_anywhere_in_the_document_still_resolves(tmp_path: Path, ref: str) -> None:
    media = {"application/json": {"schema": {"type": "string", "maxLength": 3}}}
    schemas = {
        "A": {"type": "object", "properties": {"n": {"type": "string", "maxLength": 3}}},
        "M": {"type": "object", "properties": {"x": {"$ref": ref}}},
    }
    param = {"name": "p", "in": "query", "schema": {"type": "integer"}}
    doc = make_doc(
        tmp_path,
        schemas,
        paths={"/items": {"get": {"responses": {"200": {"description": "ok", "content": media}}}}},
        extra={
            "components": {
                "schemas": schemas,
                "parameters": {"P": param},
                "headers": {"H": {"schema": {"type": "integer"}}},
            }
        },
    )
    schema, _ = conv(doc, "M")
    assert schema["properties"]["x"] != {}


def test_a_path_item_ref_with_a_bad_tilde_escape_is_refused_not_read_as_text(tmp_path: Path) -> None:
    # the path item the lenient reading would find is there, under 'a~2b'
    get = {"operationId": "getA", "responses": {"200": {"description": "ok"}}}
    doc = make_doc(
        tmp_path, {}, paths={"/a": {"$ref": "#/x-paths/a~2b"}}, extra={"x-paths": {"a~2b": {"get": get}}}
    )
    with pytest.raises(DiagnosticError) as exc:
        list_operations(doc)
    assert codes(exc) == ["ref-invalid"]
    diag = exc.value.diagnostics[0]
    assert "#/x-paths/a~2b" in diag.message and "RFC 6901" in diag.message
    assert diag.location is not None and diag.location.pointer == "/paths/~1a/$ref"
