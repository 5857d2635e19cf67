"""Swagger 2.0 input: one test per conversion rule (small inline 2.0 documents), the pointer map back
into the 2.0 text, located diagnostics, and a property over generated 2.0 documents.

The converted documents are judged by openapi-pydantic (what `toolgen.compile.load` validates with)
and, when it is installed, by openapi-spec-validator's OpenAPI 3.0 schema.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openapi_pydantic.v3.v3_0 import OpenAPI
from tests.support.profiles import examples

from toolgen.compile.load import load_spec
from toolgen.compile.swagger2 import Converted, convert_swagger2
from toolgen.diagnostics import Diagnostic, DiagnosticError, DiagnosticSink
from toolgen.pointer import join_pointer, resolve_pointer


def doc(**top: Any) -> dict[str, Any]:
    """A 2.0 document: `top` over a minimal valid one (no paths)."""
    base: dict[str, Any] = {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}}
    base.update(top)
    return base


def op_doc(operation: dict[str, Any], path: str = "/things", method: str = "post", **top: Any) -> dict[str, Any]:
    operation = {"responses": {"200": {"description": "ok"}}, **operation}
    return doc(paths={path: {method: operation}}, **top)


def convert(data: dict[str, Any]) -> Converted:
    """Convert, and prove the result is a valid OpenAPI 3.0 document whose every pointer maps back."""
    before = copy.deepcopy(data)
    converted = convert_swagger2(data, "spec.json")
    assert data == before  # pure: the input is not changed
    assert_valid_30(converted.data)
    assert_maps_back(converted, data)
    return converted


def assert_valid_30(data: dict[str, Any]) -> None:
    OpenAPI.model_validate(data)
    try:
        from openapi_spec_validator import validate
    except ImportError:  # the dev extra installs it; the check is a second opinion
        return
    validate(data)


def pointers(node: Any, at: str = "") -> list[str]:
    out = [at]
    if isinstance(node, dict):
        for key, value in node.items():
            out += pointers(value, join_pointer(at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += pointers(value, join_pointer(at, i))
    return out


def assert_maps_back(converted: Converted, source: dict[str, Any]) -> None:
    for pointer in pointers(converted.data):
        back = converted.pointers.source(pointer)
        try:
            resolve_pointer(source, back)
        except LookupError:
            raise AssertionError(f"{pointer} maps to {back}, which is not in the 2.0 document") from None


def errors(data: dict[str, Any]) -> list[Diagnostic]:
    with pytest.raises(DiagnosticError) as caught:
        convert_swagger2(data, "spec.json")
    return list(caught.value.diagnostics)


def op(converted: Converted, path: str = "/things", method: str = "post") -> dict[str, Any]:
    return converted.data["paths"][path][method]  # type: ignore[no-any-return]


# --- servers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("top", "urls"), [
    ({"host": "api.example.com", "basePath": "/v2", "schemes": ["http", "https"]},
     ["https://api.example.com/v2", "http://api.example.com/v2"]),
    ({"host": "api.example.com", "basePath": "/v2/"}, ["https://api.example.com/v2"]),
    ({"host": "localhost:8080", "schemes": ["http"]}, ["http://localhost:8080"]),
    ({"basePath": "/api"}, ["/api"]),
    ({"basePath": "/"}, ["/"]),
    ({}, None),
])
def test_host_base_path_and_schemes_become_servers(top: dict[str, Any], urls: list[str] | None) -> None:
    converted = convert(doc(**top))
    if urls is None:
        assert "servers" not in converted.data
    else:
        assert [s["url"] for s in converted.data["servers"]] == urls
    assert "host" not in converted.data and "basePath" not in converted.data and "schemes" not in converted.data


def test_an_operations_own_schemes_become_its_servers() -> None:
    converted = convert(op_doc({"schemes": ["http"]}, host="h.example", basePath="/b"))
    assert op(converted)["servers"] == [{"url": "http://h.example/b"}]
    assert converted.pointers.source("/paths/~1things/post/servers/0") == "/paths/~1things/post/schemes/0"


# --- consumes / produces and bodies -------------------------------------------------------------


BODY = {"name": "thing", "in": "body", "required": True, "description": "the thing",
        "schema": {"$ref": "#/definitions/Thing"}}
THING = {"Thing": {"type": "object", "properties": {"name": {"type": "string"}}}}


def test_body_parameter_becomes_the_request_body_for_each_consumed_media_type() -> None:
    converted = convert(op_doc({"parameters": [BODY]}, definitions=THING,
                               consumes=["application/json", "application/xml"]))
    body = op(converted)["requestBody"]
    assert body["required"] is True and body["description"] == "the thing"
    assert list(body["content"]) == ["application/json", "application/xml"]
    assert body["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Thing"}
    assert "parameters" not in op(converted)  # the only parameter was the body
    assert converted.pointers.source("/paths/~1things/post/requestBody") == "/paths/~1things/post/parameters/0"
    assert converted.pointers.source("/paths/~1things/post/requestBody/content/application~1xml") == "/consumes/1"


def test_an_optional_body_is_not_required_and_json_is_the_default_media_type() -> None:
    body = {**BODY, "required": False}
    converted = convert(op_doc({"parameters": [body]}, definitions=THING))
    request = op(converted)["requestBody"]
    assert "required" not in request and list(request["content"]) == ["application/json"]


def test_operation_consumes_and_produces_override_the_documents() -> None:
    operation = {"parameters": [BODY], "consumes": ["text/plain"], "produces": ["application/xml"],
                 "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Thing"}}}}
    converted = convert(op_doc(operation, definitions=THING, consumes=["application/json"],
                               produces=["application/json"]))
    assert list(op(converted)["requestBody"]["content"]) == ["text/plain"]
    assert list(op(converted)["responses"]["200"]["content"]) == ["application/xml"]
    assert "consumes" not in op(converted) and "consumes" not in converted.data


def test_body_examples_per_media_type_and_extensions_are_kept() -> None:
    body = {**BODY, "x-examples": {"application/json": {"name": "a"}}, "x-body-name": "thing"}
    request = op(convert(op_doc({"parameters": [body]}, definitions=THING)))["requestBody"]
    assert request["content"]["application/json"]["example"] == {"name": "a"}
    assert request["x-body-name"] == "thing"


def test_form_fields_become_an_urlencoded_object_body() -> None:
    fields = [
        {"name": "name", "in": "formData", "type": "string", "required": True, "description": "its name"},
        {"name": "tags", "in": "formData", "type": "array", "items": {"type": "string"}, "collectionFormat": "multi"},
        {"name": "size", "in": "formData", "type": "integer", "minimum": 1},
    ]
    request = op(convert(op_doc({"parameters": fields})))["requestBody"]
    assert request["required"] is True
    media = request["content"]["application/x-www-form-urlencoded"]
    assert media["schema"] == {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string", "description": "its name"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "size": {"type": "integer", "minimum": 1}}}
    assert media["encoding"] == {"tags": {"style": "form", "explode": True}}


def test_a_file_field_makes_the_body_multipart_with_a_binary_string() -> None:
    fields = [{"name": "file", "in": "formData", "type": "file", "required": True},
              {"name": "note", "in": "formData", "type": "string"}]
    converted = convert(op_doc({"parameters": fields, "consumes": ["multipart/form-data",
                                                                   "application/x-www-form-urlencoded"]}))
    content = op(converted)["requestBody"]["content"]
    assert list(content) == ["multipart/form-data"]  # a file cannot travel urlencoded
    assert content["multipart/form-data"]["schema"]["properties"]["file"] == {"type": "string", "format": "binary"}
    assert converted.pointers.source(
        "/paths/~1things/post/requestBody/content/multipart~1form-data/schema/properties/file/format") \
        == "/paths/~1things/post/parameters/0/type"


def test_path_level_parameters_are_inherited_and_overridden() -> None:
    data = doc(paths={"/things/{id}": {
        "parameters": [{"name": "id", "in": "path", "required": True, "type": "string"},
                       {"name": "note", "in": "formData", "type": "string"},
                       {"name": "q", "in": "query", "type": "string"}],
        "post": {"parameters": [{"name": "q", "in": "query", "type": "integer"}],
                 "responses": {"200": {"description": "ok"}}},
        "put": {"responses": {"200": {"description": "ok"}}},
    }})
    converted = convert(data)
    item = converted.data["paths"]["/things/{id}"]
    assert [p["name"] for p in item["parameters"]] == ["id", "q"]  # the form field left for the bodies
    assert item["post"]["parameters"] == [{"name": "q", "in": "query", "schema": {"type": "integer"}}]
    for method in ("post", "put"):
        form = item[method]["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"]
        assert form["properties"] == {"note": {"type": "string"}}


# --- components and references -----------------------------------------------------------------


def test_definitions_parameters_and_responses_become_components_with_refs_rewritten() -> None:
    data = op_doc({"parameters": [{"$ref": "#/parameters/limit"}, {"$ref": "#/parameters/payload"}],
                   "responses": {"200": {"$ref": "#/responses/Things"},
                                 "400": {"description": "bad", "schema": {"$ref": "#/definitions/Error"}}}},
                  definitions={**THING, "Error": {"type": "object", "properties": {
                      "cause": {"$ref": "#/definitions/Error"}, "things": {"type": "array",
                                                                          "items": {"$ref": "#/definitions/Thing"}}}}},
                  parameters={"limit": {"name": "limit", "in": "query", "type": "integer"},
                              "payload": {"name": "payload", "in": "body", "schema": {"$ref": "#/definitions/Thing"}}},
                  responses={"Things": {"description": "things", "schema": {"type": "array",
                                                                            "items": {"$ref": "#/definitions/Thing"}}}})
    converted = convert(data)
    components = converted.data["components"]
    assert set(components) == {"schemas", "parameters", "responses"}
    assert components["schemas"]["Error"]["properties"]["cause"] == {"$ref": "#/components/schemas/Error"}
    assert list(components["parameters"]) == ["limit"]  # a body has no 3.0 parameter component
    assert components["responses"]["Things"]["content"]["application/json"]["schema"]["items"] == \
        {"$ref": "#/components/schemas/Thing"}
    operation = op(converted)
    assert operation["parameters"] == [{"$ref": "#/components/parameters/limit"}]
    assert operation["requestBody"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Thing"}
    assert operation["responses"]["200"] == {"$ref": "#/components/responses/Things"}
    # the inlined global body: the body at the reference, its schema where the component wrote it
    assert converted.pointers.source("/paths/~1things/post/requestBody") == "/paths/~1things/post/parameters/1"
    assert converted.pointers.source("/paths/~1things/post/requestBody/content/application~1json/schema/$ref") \
        == "/parameters/payload/schema/$ref"


def test_a_global_form_field_is_inlined_into_the_body() -> None:
    converted = convert(op_doc({"parameters": [{"$ref": "#/parameters/upload"}]},
                               parameters={"upload": {"name": "upload", "in": "formData", "type": "file"}}))
    assert "components" not in converted.data or "parameters" not in converted.data["components"]
    assert op(converted)["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"] == \
        {"upload": {"type": "string", "format": "binary"}}


def test_security_definitions_become_security_schemes() -> None:
    scopes = {"read": "read things"}
    data = doc(securityDefinitions={
        "basic": {"type": "basic", "description": "user and password"},
        "key": {"type": "apiKey", "name": "X-Key", "in": "header", "x-vendor": 1},
        "implicit": {"type": "oauth2", "flow": "implicit", "authorizationUrl": "https://a/auth", "scopes": scopes},
        "password": {"type": "oauth2", "flow": "password", "tokenUrl": "https://a/token", "scopes": scopes},
        "application": {"type": "oauth2", "flow": "application", "tokenUrl": "https://a/token", "scopes": {}},
        "code": {"type": "oauth2", "flow": "accessCode", "authorizationUrl": "https://a/auth",
                 "tokenUrl": "https://a/token", "scopes": scopes},
    }, security=[{"basic": []}])
    converted = convert(data)
    schemes = converted.data["components"]["securitySchemes"]
    assert schemes["basic"] == {"type": "http", "scheme": "basic", "description": "user and password"}
    assert schemes["key"] == {"type": "apiKey", "name": "X-Key", "in": "header", "x-vendor": 1}
    assert schemes["implicit"]["flows"] == {"implicit": {"authorizationUrl": "https://a/auth", "scopes": scopes}}
    assert schemes["password"]["flows"] == {"password": {"tokenUrl": "https://a/token", "scopes": scopes}}
    assert schemes["application"]["flows"] == {"clientCredentials": {"tokenUrl": "https://a/token", "scopes": {}}}
    assert schemes["code"]["flows"] == {"authorizationCode": {"authorizationUrl": "https://a/auth",
                                                              "tokenUrl": "https://a/token", "scopes": scopes}}
    assert converted.data["security"] == [{"basic": []}]
    assert converted.pointers.source("/components/securitySchemes/code/flows/authorizationCode/tokenUrl") \
        == "/securityDefinitions/code/tokenUrl"


# --- parameters --------------------------------------------------------------------------------


@pytest.mark.parametrize(("where", "fmt", "style"), [
    ("query", None, {"style": "form", "explode": False}),  # csv is 2.0's default; form explodes in 3.0
    ("query", "csv", {"style": "form", "explode": False}),
    ("query", "ssv", {"style": "spaceDelimited", "explode": False}),
    ("query", "pipes", {"style": "pipeDelimited", "explode": False}),
    ("query", "multi", {"style": "form", "explode": True}),
    ("path", "csv", {}),  # simple, not exploded: 3.0's default for path and header
    ("header", None, {}),
])
def test_collection_format_becomes_style_and_explode(where: str, fmt: str | None, style: dict[str, Any]) -> None:
    param: dict[str, Any] = {"name": "ids", "in": where, "type": "array", "items": {"type": "integer"},
                             "required": True}
    if fmt is not None:
        param["collectionFormat"] = fmt
    path = "/things/{ids}" if where == "path" else "/things"
    converted = convert(op_doc({"parameters": [param]}, path=path, method="get"))
    out = op(converted, path, "get")["parameters"][0]
    assert {k: out[k] for k in ("style", "explode") if k in out} == style
    assert out["schema"] == {"type": "array", "items": {"type": "integer"}}
    if style:
        assert converted.pointers.source(f"/paths/{path.replace('/', '~1')}/get/parameters/0/style") == \
            f"/paths/{path.replace('/', '~1')}/get/parameters/0/" + ("collectionFormat" if fmt else "type")


def test_parameter_keywords_move_into_the_schema() -> None:
    param = {"name": "n", "in": "query", "type": "integer", "format": "int32", "minimum": 1, "maximum": 9,
             "exclusiveMaximum": True, "default": 2, "enum": [1, 2, 9], "multipleOf": 1, "x-nullable": True,
             "description": "how many", "allowEmptyValue": True, "x-example": 3, "x-internal": "yes"}
    converted = convert(op_doc({"parameters": [param]}, method="get"))
    out = op(converted, method="get")["parameters"][0]
    assert out == {"name": "n", "in": "query", "description": "how many", "allowEmptyValue": True,
                   "x-internal": "yes", "example": 3,
                   "schema": {"type": "integer", "format": "int32", "default": 2, "maximum": 9,
                              "exclusiveMaximum": True, "minimum": 1, "enum": [1, 2, 9], "multipleOf": 1,
                              "nullable": True}}
    assert converted.pointers.source("/paths/~1things/get/parameters/0/schema/nullable") == \
        "/paths/~1things/get/parameters/0/x-nullable"
    assert converted.pointers.source("/paths/~1things/get/parameters/0/example") == \
        "/paths/~1things/get/parameters/0/x-example"


def test_allow_empty_value_outside_a_query_is_dropped_with_a_located_warning() -> None:
    converted = convert(op_doc({"parameters": [{"name": "h", "in": "header", "type": "string",
                                                "allowEmptyValue": True}]}, method="get"))
    assert "allowEmptyValue" not in op(converted, method="get")["parameters"][0]
    assert [(w.code, w.location.pointer if w.location else None) for w in converted.warnings] == \
        [("swagger2-dropped", "/paths/~1things/get/parameters/0/allowEmptyValue")]


# --- responses and schemas -----------------------------------------------------------------------


def test_responses_get_content_per_produced_type_examples_and_header_schemas() -> None:
    response = {"description": "ok", "schema": {"$ref": "#/definitions/Thing"},
                "examples": {"application/json": {"name": "a"}, "text/csv": "name\na"},
                "headers": {"X-Rate": {"type": "integer", "description": "calls left"}},
                "x-cache": True}
    converted = convert(op_doc({"responses": {"200": response}}, method="get", definitions=THING,
                               produces=["application/json"]))
    out = op(converted, method="get")["responses"]["200"]
    assert out["content"]["application/json"] == {"schema": {"$ref": "#/components/schemas/Thing"},
                                                  "example": {"name": "a"}}
    assert out["content"]["text/csv"] == {"schema": {"$ref": "#/components/schemas/Thing"}, "example": "name\na"}
    assert out["headers"] == {"X-Rate": {"description": "calls left", "schema": {"type": "integer"}}}
    assert out["x-cache"] is True
    assert converted.pointers.source("/paths/~1things/get/responses/200/content/text~1csv/example") == \
        "/paths/~1things/get/responses/200/examples/text~1csv"


def test_a_file_response_is_binary_octet_stream() -> None:
    out = op(convert(op_doc({"responses": {"200": {"description": "the file", "schema": {"type": "file"}}}},
                            method="get")), method="get")["responses"]["200"]
    assert out["content"] == {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}


def test_schema_rules_x_nullable_file_discriminator_and_extensions() -> None:
    definitions = {
        "Pet": {"type": "object", "discriminator": "kind", "required": ["kind"], "x-go-type": "Pet",
                "properties": {"kind": {"type": "string"}, "owner": {"$ref": "#/definitions/Owner", "x-nullable": True},
                               "nick": {"type": "string", "x-nullable": True},
                               "tags": {"type": "array", "items": {"$ref": "#/definitions/Owner"}},
                               "extra": {"type": "object", "additionalProperties": {"$ref": "#/definitions/Owner"}}}},
        "Dog": {"allOf": [{"$ref": "#/definitions/Pet"}, {"type": "object", "properties": {"bark": {"type": "boolean"}}}]},
        "Owner": {"type": "object", "properties": {"name": {"type": "string"}}},
    }
    converted = convert(doc(definitions=definitions))
    schemas = converted.data["components"]["schemas"]
    pet = schemas["Pet"]
    assert pet["discriminator"] == {"propertyName": "kind"} and pet["x-go-type"] == "Pet"
    assert pet["properties"]["owner"] == {"allOf": [{"$ref": "#/components/schemas/Owner"}], "nullable": True}
    assert pet["properties"]["nick"] == {"type": "string", "nullable": True}
    assert pet["properties"]["tags"]["items"] == {"$ref": "#/components/schemas/Owner"}
    assert pet["properties"]["extra"]["additionalProperties"] == {"$ref": "#/components/schemas/Owner"}
    assert schemas["Dog"]["allOf"][0] == {"$ref": "#/components/schemas/Pet"}
    assert converted.pointers.source("/components/schemas/Pet/properties/owner/allOf/0/$ref") == \
        "/definitions/Pet/properties/owner/$ref"
    assert converted.pointers.source("/components/schemas/Pet/discriminator/propertyName") == \
        "/definitions/Pet/discriminator"


def test_vendor_extensions_stay_where_they_stand() -> None:
    top: dict[str, Any] = {"x-top": 4, "info": {"title": "t", "version": "1", "x-logo": {"url": "u"}}}
    data = op_doc({"x-op": 1, "parameters": [{"name": "q", "in": "query", "type": "string", "x-param": 2}],
                   "responses": {"200": {"description": "ok", "x-response": 3}}},
                  method="get", **top)
    data["paths"]["/things"]["x-item"] = 5
    converted = convert(data)
    assert converted.data["x-top"] == 4 and converted.data["info"]["x-logo"] == {"url": "u"}
    item = converted.data["paths"]["/things"]
    assert item["x-item"] == 5 and item["get"]["x-op"] == 1
    assert item["get"]["parameters"][0]["x-param"] == 2 and item["get"]["responses"]["200"]["x-response"] == 3
    # openapi-pydantic (what the loader validates with) refuses extensions among paths and among
    # responses in 3.0 too; the conversion keeps them all the same
    data["paths"]["x-paths"] = 6
    data["paths"]["/things"]["get"]["responses"]["x-responses"] = 7
    raw = convert_swagger2(data, "spec.json").data
    assert raw["paths"]["x-paths"] == 6 and raw["paths"]["/things"]["get"]["responses"]["x-responses"] == 7


# --- refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "code", "pointer"), [
    (doc(swagger="1.2"), "spec-version-unsupported", "/swagger"),
    (op_doc({"parameters": [{"name": "a", "in": "query", "type": "array", "items": {"type": "string"},
                             "collectionFormat": "tsv"}]}),
     "swagger2-unsupported", "/paths/~1things/post/parameters/0/collectionFormat"),
    (op_doc({"parameters": [{"name": "a", "in": "path", "required": True, "type": "array",
                             "items": {"type": "string"}, "collectionFormat": "pipes"}]}, path="/things/{a}"),
     "swagger2-unsupported", "/paths/~1things~1{a}/post/parameters/0/collectionFormat"),
    (op_doc({"parameters": [BODY, {"name": "f", "in": "formData", "type": "string"}]}, definitions=THING),
     "swagger2-invalid", "/paths/~1things/post/parameters/1"),
    (op_doc({"parameters": [BODY, {**BODY, "name": "other"}]}, definitions=THING),
     "swagger2-invalid", "/paths/~1things/post/parameters/1"),
    (op_doc({"parameters": [{"name": "f", "in": "query", "type": "file"}]}),
     "swagger2-invalid", "/paths/~1things/post/parameters/0/type"),
    (op_doc({"parameters": [{"$ref": "#/parameters/nothing"}]}),
     "swagger2-invalid", "/paths/~1things/post/parameters/0/$ref"),
    (op_doc({"parameters": [{"$ref": "common.yaml#/parameters/limit"}]}),
     "swagger2-invalid", "/paths/~1things/post/parameters/0/$ref"),
    (doc(securityDefinitions={"s": {"type": "oauth2", "flow": "device"}}),
     "swagger2-invalid", "/securityDefinitions/s/flow"),
    (doc(securityDefinitions={"s": {"type": "bearer"}}), "swagger2-invalid", "/securityDefinitions/s/type"),
    (doc(consumes="application/json"), "swagger2-invalid", "/consumes"),
])
def test_what_cannot_be_converted_is_one_located_error(data: dict[str, Any], code: str, pointer: str) -> None:
    found = errors(data)
    assert [(d.code, d.location.pointer if d.location else None) for d in found] == [(code, pointer)]
    assert all(d.hint for d in found)


# --- located diagnostics through the loader -----------------------------------------------------


def _write_json(tmp: Path, data: dict[str, Any]) -> Path:
    path = tmp / "spec.json"
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line)


def test_an_error_about_the_request_body_is_located_at_the_2_0_body_parameter(tmp_path: Path) -> None:
    """The 3.0 validation finds `requestBody.description` is no string; the error names the body
    parameter's `description` in the 2.0 file."""
    body = {"name": "thing", "in": "body", "description": ["not", "text"], "schema": {"type": "object"}}
    path = _write_json(tmp_path, op_doc({"parameters": [{"name": "q", "in": "query", "type": "string"}, body]}))
    with pytest.raises(DiagnosticError) as caught:
        load_spec(path, "spec.json", sink=DiagnosticSink())
    found = [d for d in caught.value.diagnostics if d.code == "spec-invalid"]
    assert found, caught.value
    location = found[0].location
    assert location is not None and location.pointer == "/paths/~1things/post/parameters/1/description"
    assert "Swagger 2.0 (read as OpenAPI 3.0)" in found[0].message
    assert (location.line, location.col) == (_line_of(path, '"description": ['), 13)


def test_a_conversion_error_is_located_in_yaml(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text("""swagger: '2.0'
info: {title: t, version: '1'}
paths:
  /things:
    get:
      parameters:
        - name: ids
          in: query
          type: array
          items: {type: string}
          collectionFormat: tsv
      responses: {'200': {description: ok}}
""", encoding="utf-8")
    with pytest.raises(DiagnosticError) as caught:
        load_spec(path, "spec.yaml")
    [diagnostic] = caught.value.diagnostics
    assert diagnostic.render().startswith(
        "spec.yaml:11:11 (#/paths/~1things/get/parameters/0/collectionFormat): error[swagger2-unsupported]")


def test_a_schema_warning_is_located_in_the_2_0_definitions(tmp_path: Path) -> None:
    path = _write_json(tmp_path, op_doc({"responses": {"200": {"description": "ok", "schema": {
        "$ref": "#/definitions/Thing"}}}}, method="get", definitions={
            "Thing": {"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}}}))
    sink = DiagnosticSink()
    doc_ = load_spec(path, "spec.json", sink=sink)
    assert doc_.swagger == "2.0" and doc_.openapi == "3.0.3"
    [warning] = doc_.fill_locations(sink.items)
    assert warning.code == "spec-schema-invalid" and warning.location is not None
    assert warning.location.pointer == "/definitions/Thing/properties/n/minimum"
    assert warning.location.line == _line_of(path, '"minimum": "zero"')
    # a later stage's pointer into the converted document lands on the 2.0 text too
    where = doc_.locate_now("/paths/~1things/get/responses/200/content/application~1json/schema")
    assert (where.pointer, where.line) == ("/paths/~1things/get/responses/200/schema", _line_of(path, '"schema": {'))


def test_a_build_error_names_the_2_0_file_line_and_pointer(tmp_path: Path) -> None:
    from tests.support.build import build

    path = _write_json(tmp_path, op_doc({"parameters": [
        {"name": "a", "in": "formData", "type": "string"}, {**BODY, "schema": {"type": "object"}}]}))
    built = build(tmp_path, path, expect=2)
    line = _line_of(path, '"name": "a"') - 1  # the field's `{`
    col = path.read_text(encoding="utf-8").splitlines()[line - 1].index("{") + 1
    assert f"spec.json:{line}:{col} (#/paths/~1things/post/parameters/0): error[swagger2-invalid]" \
        in built.result.output
    assert not (tmp_path / "out").exists()


# --- the property -------------------------------------------------------------------------------

_NAMES = st.sampled_from(["a", "b", "id", "x/y", "t~n"])
_SCALAR_TYPES = st.sampled_from(["string", "integer", "number", "boolean"])


@st.composite
def _schemas(draw: st.DrawFn, depth: int = 2) -> dict[str, Any]:
    kind = draw(st.sampled_from(["scalar", "ref", "array", "object", "allOf", "file"] if depth else ["scalar", "ref"]))
    schema: dict[str, Any]
    if kind == "scalar":
        schema = {"type": draw(_SCALAR_TYPES)}
    elif kind == "ref":
        schema = {"$ref": "#/definitions/" + draw(st.sampled_from(["A", "B"]))}
    elif kind == "file":
        schema = {"type": "file"}
    elif kind == "array":
        schema = {"type": "array", "items": draw(_schemas(depth - 1))}
    elif kind == "allOf":
        schema = {"allOf": draw(st.lists(_schemas(depth - 1), min_size=1, max_size=2))}
    else:
        schema = {"type": "object", "properties": draw(st.dictionaries(_NAMES, _schemas(depth - 1), max_size=2))}
        if draw(st.booleans()):
            schema["additionalProperties"] = draw(_schemas(depth - 1))
    if draw(st.booleans()):
        schema["x-nullable"] = True
    if draw(st.booleans()):
        schema["x-tag"] = draw(st.integers(0, 3))
    return schema


@st.composite
def _params(draw: st.DrawFn, path_params: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"name": p, "in": "path", "required": True, "type": "string"} for p in path_params]
    body_kind = draw(st.sampled_from(["none", "body", "form", "global-body"]))
    for name in draw(st.lists(_NAMES, max_size=3, unique=True)):
        where = draw(st.sampled_from(["query", "header"]))
        param: dict[str, Any] = {"name": name, "in": where, "type": draw(_SCALAR_TYPES)}
        if draw(st.booleans()):
            param.update(type="array", items={"type": "string"})
            if where == "query":
                param["collectionFormat"] = draw(st.sampled_from(["csv", "ssv", "pipes", "multi"]))
        if where == "query" and draw(st.booleans()):
            param["allowEmptyValue"] = True
        out.append(param)
    if draw(st.booleans()):
        out.append({"$ref": "#/parameters/limit"})
    if body_kind == "body":
        out.append({"name": "body", "in": "body", "required": draw(st.booleans()), "schema": draw(_schemas())})
    elif body_kind == "global-body":
        out.append({"$ref": "#/parameters/payload"})
    elif body_kind == "form":
        for name in draw(st.lists(_NAMES, min_size=1, max_size=3, unique=True)):
            field: dict[str, Any] = {"name": name, "in": "formData", "type": draw(st.sampled_from(
                ["string", "integer", "file"])), "required": draw(st.booleans())}
            out.append(field)
    return out


@st.composite
def _responses(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for code in draw(st.lists(st.sampled_from(["200", "201", "404", "default"]), min_size=1, max_size=3, unique=True)):
        if draw(st.integers(0, 4)) == 0:
            out[code] = {"$ref": "#/responses/Error"}
            continue
        response: dict[str, Any] = {"description": "r"}
        if draw(st.booleans()):
            response["schema"] = draw(_schemas())
        if draw(st.booleans()):
            response["examples"] = {draw(st.sampled_from(["application/json", "text/plain"])): {"v": 1}}
        if draw(st.booleans()):
            response["headers"] = {"X-N": {"type": "integer"}}
        out[code] = response
    return out


@st.composite
def swagger2_docs(draw: st.DrawFn) -> dict[str, Any]:
    data: dict[str, Any] = {"swagger": "2.0", "info": {"title": "t", "version": "1"}}
    if draw(st.booleans()):
        data["host"] = "api.example.com"
    if draw(st.booleans()):
        data["basePath"] = "/v1"
    if draw(st.booleans()):
        data["schemes"] = draw(st.lists(st.sampled_from(["http", "https"]), min_size=1, max_size=2, unique=True))
    for key in ("consumes", "produces"):
        if draw(st.booleans()):
            data[key] = draw(st.lists(st.sampled_from(
                ["application/json", "application/xml", "multipart/form-data", "application/x-www-form-urlencoded"]),
                max_size=2, unique=True))
    paths: dict[str, Any] = {}
    for path in draw(st.lists(st.sampled_from(["/a", "/a/{id}", "/b~c/{id}/d"]), min_size=1, max_size=2, unique=True)):
        path_params = ["id"] if "{id}" in path else []
        item: dict[str, Any] = {}
        for i, method in enumerate(draw(st.lists(st.sampled_from(["get", "post", "put", "delete"]), min_size=1,
                                                 max_size=2, unique=True))):
            operation: dict[str, Any] = {"operationId": f"{method}{len(paths)}{i}",
                                         "parameters": draw(_params(path_params)), "responses": draw(_responses())}
            if draw(st.booleans()):
                operation["consumes"] = ["application/json"]
            if draw(st.booleans()):
                operation["security"] = [{"key": []}]
            item[method] = operation
        paths[path] = item
    data["paths"] = paths
    data["definitions"] = {"A": draw(_schemas()), "B": {"type": "object", "discriminator": "kind",
                                                        "properties": {"kind": {"type": "string"}}}}
    data["parameters"] = {"limit": {"name": "limit", "in": "query", "type": "integer"},
                          "payload": {"name": "payload", "in": "body", "schema": {"$ref": "#/definitions/B"}}}
    data["responses"] = {"Error": {"description": "error", "schema": {"$ref": "#/definitions/B"}}}
    data["securityDefinitions"] = {"key": {"type": "apiKey", "name": "k", "in": "header"}}
    return data


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(swagger2_docs())
def test_every_converted_pointer_maps_back_to_the_2_0_document(data: dict[str, Any]) -> None:
    try:
        converted = convert_swagger2(data, "spec.json")
    except DiagnosticError as exc:  # a generated operation with a body and form fields is refused ...
        for d in exc.diagnostics:  # ... at a pointer that exists
            assert d.location is not None and d.location.pointer is not None
            resolve_pointer(data, d.location.pointer)
        return
    assert_maps_back(converted, data)
    OpenAPI.model_validate(converted.data)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "a", "file", "body"]),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                         st.sampled_from(["type", "in", "name", "schema", "$ref", "items", "parameters",
                                          "responses", "get", "x-a", "collectionFormat", "flow"]), inner, max_size=4),
                     max_leaves=12)


@settings(max_examples=examples(150), deadline=None)
@given(st.dictionaries(st.sampled_from(["paths", "definitions", "parameters", "responses", "securityDefinitions",
                                        "host", "basePath", "schemes", "consumes"]), _JSON, max_size=5))
def test_any_malformed_document_converts_or_is_refused_at_an_existing_pointer(top: dict[str, Any]) -> None:
    data = {"swagger": "2.0", **top}
    try:
        converted = convert_swagger2(data, "spec.json")
    except DiagnosticError as exc:
        for d in exc.diagnostics:
            assert d.location is not None and d.location.pointer is not None
            resolve_pointer(data, d.location.pointer)
        return
    assert_maps_back(converted, data)


# --- end to end -----------------------------------------------------------------------------------


def test_a_swagger2_api_is_built_and_called_against_a_loopback_server(tmp_path: Path) -> None:
    """host + basePath become the base URL, collectionFormat the query encoding, a global parameter
    and a global body the request; a real server receives the calls."""
    from tests.support.build import build
    from tests.support.recording_server import RecordingServer

    from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials

    with RecordingServer() as server:
        host = server.base_url.removeprefix("http://")
        spec = tmp_path / "pets.yaml"
        spec.write_text(f"""swagger: '2.0'
info: {{title: Pets, version: '1'}}
host: '{host}'
basePath: /api/v2
schemes: [http]
produces: [application/json]
securityDefinitions:
  key: {{type: apiKey, name: X-Api-Key, in: header}}
security: [{{key: []}}]
paths:
  /owners/{{ownerId}}/pets:
    parameters:
      - {{name: ownerId, in: path, required: true, type: integer}}
    get:
      operationId: listPets
      parameters:
        - {{name: tags, in: query, type: array, items: {{type: string}}}}
        - {{name: status, in: query, type: array, items: {{type: string}}, collectionFormat: multi}}
        - {{name: kinds, in: query, type: array, items: {{type: string}}, collectionFormat: pipes}}
        - $ref: '#/parameters/limit'
      responses:
        '200': {{description: the pets, schema: {{type: array, items: {{$ref: '#/definitions/Pet'}}}}}}
    post:
      operationId: addPet
      parameters:
        - $ref: '#/parameters/newPet'
      responses:
        '201': {{description: added, schema: {{$ref: '#/definitions/Pet'}}}}
  /owners/{{ownerId}}/pets/{{petName}}:
    put:
      operationId: tagPet
      consumes: [application/x-www-form-urlencoded]
      parameters:
        - {{name: ownerId, in: path, required: true, type: integer}}
        - {{name: petName, in: path, required: true, type: string}}
        - {{name: note, in: formData, type: string, required: true}}
        - {{name: labels, in: formData, type: array, items: {{type: string}}}}
      responses:
        '204': {{description: tagged}}
parameters:
  limit: {{name: limit, in: query, type: integer, maximum: 50}}
  newPet: {{name: pet, in: body, required: true, schema: {{$ref: '#/definitions/Pet'}}}}
definitions:
  Pet:
    type: object
    required: [name]
    properties:
      name: {{type: string}}
      nickname: {{type: string, x-nullable: true}}
""", encoding="utf-8")
        built = build(tmp_path, spec, """auth:
  key: {secret: PETS_KEY}
tools:
  list_pets:
    operation: listPets
    effect: read
    permission: pets:read
  add_pet:
    operation: addPet
    effect: write
    permission: pets:write
    approval: never
    idempotency: {key: action_id, send_as: none}
  tag_pet:
    operation: tagPet
    effect: write
    permission: pets:write
    approval: never
    idempotency: {key: action_id, send_as: none}
""")
        assert built.json("policy.json")["base_url"] == server.base_url + "/api/v2"
        server.reply("GET", "/pets$", body=[{"name": "Rex", "nickname": None}])
        actor = Actor.of("a", scopes=["pets:read", "pets:write"])
        with Registry.from_dir(built.out, credentials=StaticCredentials({"PETS_KEY": "k1"}),
                               receipts=MemoryReceiptStore(), cursor_key=b"k" * 32) as reg:
            listed = reg.call("list_pets", {"ownerId": 7, "tags": ["a", "b"], "status": ["x", "y"],
                                            "kinds": ["cat", "dog"], "limit": 5}, actor=actor)
            assert listed.ok, listed.to_json()
            sent = server.last
            assert (sent.method, sent.path) == ("GET", "/api/v2/owners/7/pets")
            assert sent.query == [("tags", "a,b"), ("status", "x"), ("status", "y"), ("kinds", "cat|dog"),
                                  ("limit", "5")]
            assert sent.header("X-Api-Key") == "k1"
            too_many = reg.call("list_pets", {"ownerId": 7, "limit": 51}, actor=actor)
            assert not too_many.ok and too_many.error is not None and too_many.error.code == "invalid_arguments"
            preview = reg.call("preview_add_pet", {"ownerId": 7, "name": "Rex"}, actor=actor)
            assert preview.ok and preview.result is not None, preview.to_json()
            request = preview.result["request"]
            assert request["method"] == "POST" and request["url"] == server.base_url + "/api/v2/owners/7/pets"
            assert request["body"] == {"name": "Rex"}
            added = reg.call("record_add_pet", {"ownerId": 7, "name": "Rex", "action_id": "add-1"}, actor=actor)
            assert added.ok, added.to_json()
            assert (server.last.method, server.last.path, server.last.json()) == \
                ("POST", "/api/v2/owners/7/pets", {"name": "Rex"})
            assert server.last.header("Content-Type") == "application/json"
            tagged = reg.call("record_tag_pet", {"ownerId": 7, "petName": "Rex", "note": "good dog",
                                                 "labels": ["a", "b"], "action_id": "tag-1"}, actor=actor)
            assert tagged.ok, tagged.to_json()
            assert (server.last.method, server.last.path) == ("PUT", "/api/v2/owners/7/pets/Rex")
            assert server.last.header("Content-Type") == "application/x-www-form-urlencoded"
            assert server.last.form() == [("note", "good dog"), ("labels", "a,b")]


def test_the_real_petstore_converts_to_valid_openapi_3_and_maps_back() -> None:
    from tests.support.build import REAL

    path = REAL / "petstore-swagger2.json"
    if not path.exists():
        pytest.skip("../shared/specs/real is not available")
    source = json.loads(path.read_text(encoding="utf-8"))
    converted = convert(source)
    assert converted.warnings == ()
    upload = converted.data["paths"]["/pet/{petId}/uploadImage"]["post"]["requestBody"]
    assert upload["content"]["multipart/form-data"]["schema"]["properties"]["file"] == \
        {"type": "string", "format": "binary", "description": "file to upload"}
    assert converted.data["paths"]["/pet/findByStatus"]["get"]["parameters"][0]["explode"] is True


def test_messages_name_the_2_0_pointers(tmp_path: Path) -> None:
    """A diagnostic that prints a pointer in its message prints the 2.0 one, as its location does:
    a `$ref` to a missing definition and an allOf whose definitions conflict."""
    from toolgen.compile.lower import operation_response
    from toolgen.compile.operations import list_operations
    from toolgen.compile.schema import SchemaConverter

    def response_error(definitions: dict[str, Any], schema: dict[str, Any]) -> Diagnostic:
        path = _write_json(tmp_path, op_doc({"responses": {"200": {"description": "ok", "schema": schema}}},
                                            method="get", definitions=definitions))
        loaded = load_spec(path, "spec.json", sink=DiagnosticSink())
        with pytest.raises(DiagnosticError) as caught:
            operation_response(loaded, SchemaConverter(loaded, DiagnosticSink()), list_operations(loaded)[0])
        return caught.value.diagnostics[0]

    missing = response_error({"Thing": {"type": "object"}}, {"$ref": "#/definitions/Thing/properties/gone"})
    assert missing.code == "ref-missing"
    assert "#/definitions/Thing/properties/gone does not exist" in missing.message
    assert "components" not in missing.message
    conflict = response_error({"A": {"type": "string"}, "B": {"type": "integer"}},
                              {"allOf": [{"$ref": "#/definitions/A"}, {"$ref": "#/definitions/B"}]})
    assert conflict.code == "schema-allof-conflict"
    assert "at #/definitions/A vs" in conflict.message and "at #/definitions/B" in conflict.message
    assert conflict.location is not None and conflict.location.pointer == "/definitions/B"
