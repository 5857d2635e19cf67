"""Swagger 2.0 input: one test per conversion rule (small inline 2.0 documents: servers, bodies,
components and references, parameters, responses and schemas, refusals), each converted document
proved valid OpenAPI 3.0 with every pointer mapping back into the 2.0 input
(`tests.support.swagger2_docs.convert`). Located diagnostics, the property over generated 2.0
documents and the end-to-end runs are in `test_swagger2_located.py`.
"""

from __future__ import annotations

from typing import Any

import pytest
from tests.support.swagger2_docs import BODY, THING, convert, doc, op_doc

from toolgen.compile.swagger2 import Converted, convert_swagger2
from toolgen.diagnostics import Diagnostic, DiagnosticError


def errors(data: dict[str, Any]) -> list[Diagnostic]:
    with pytest.raises(DiagnosticError) as caught:
        convert_swagger2(data, "spec.json")
    return list(caught.value.diagnostics)


def op(converted: Converted, path: str = "/things", method: str = "post") -> dict[str, Any]:
    return converted.data["paths"][path][method]  # type: ignore[no-any-return]


# --- servers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("top", "urls"),
    [
        (
            {"host": "api.example.com", "basePath": "/v2", "schemes": ["http", "https"]},
            ["https://api.example.com/v2", "http://api.example.com/v2"],
        ),
        ({"host": "api.example.com", "basePath": "/v2/"}, ["https://api.example.com/v2"]),
        ({"host": "localhost:8080", "schemes": ["http"]}, ["http://localhost:8080"]),
        ({"basePath": "/api"}, ["/api"]),
        ({"basePath": "/"}, ["/"]),
        ({}, None),
    ],
)
def test_host_base_path_and_schemes_become_servers(top: dict[str, Any], urls: list[str] | None) -> None:
    converted = convert(doc(**top))
    if urls is None:
        assert "servers" not in converted.data
    else:
        assert [s["url"] for s in converted.data["servers"]] == urls
    assert (
        "host" not in converted.data and "basePath" not in converted.data and "schemes" not in converted.data
    )


def test_an_operations_own_schemes_become_its_servers() -> None:
    converted = convert(op_doc({"schemes": ["http"]}, host="h.example", basePath="/b"))
    assert op(converted)["servers"] == [{"url": "http://h.example/b"}]
    assert converted.pointers.source("/paths/~1things/post/servers/0") == "/paths/~1things/post/schemes/0"


def test_body_parameter_becomes_the_request_body_for_each_consumed_media_type() -> None:
    converted = convert(
        op_doc({"parameters": [BODY]}, definitions=THING, consumes=["application/json", "application/xml"])
    )
    body = op(converted)["requestBody"]
    assert body["required"] is True and body["description"] == "the thing"
    assert list(body["content"]) == ["application/json", "application/xml"]
    assert body["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Thing"}
    assert "parameters" not in op(converted)  # the only parameter was the body
    assert (
        converted.pointers.source("/paths/~1things/post/requestBody") == "/paths/~1things/post/parameters/0"
    )
    assert (
        converted.pointers.source("/paths/~1things/post/requestBody/content/application~1xml")
        == "/consumes/1"
    )


def test_an_optional_body_is_not_required_and_json_is_the_default_media_type() -> None:
    body = {**BODY, "required": False}
    converted = convert(op_doc({"parameters": [body]}, definitions=THING))
    request = op(converted)["requestBody"]
    assert "required" not in request and list(request["content"]) == ["application/json"]


def test_operation_consumes_and_produces_override_the_documents() -> None:
    operation = {
        "parameters": [BODY],
        "consumes": ["text/plain"],
        "produces": ["application/xml"],
        "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Thing"}}},
    }
    converted = convert(
        op_doc(operation, definitions=THING, consumes=["application/json"], produces=["application/json"])
    )
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
        {
            "name": "tags",
            "in": "formData",
            "type": "array",
            "items": {"type": "string"},
            "collectionFormat": "multi",
        },
        {"name": "size", "in": "formData", "type": "integer", "minimum": 1},
    ]
    request = op(convert(op_doc({"parameters": fields})))["requestBody"]
    assert request["required"] is True
    media = request["content"]["application/x-www-form-urlencoded"]
    assert media["schema"] == {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "description": "its name"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "size": {"type": "integer", "minimum": 1},
        },
    }
    assert media["encoding"] == {"tags": {"style": "form", "explode": True}}


def test_a_file_field_makes_the_body_multipart_with_a_binary_string() -> None:
    fields = [
        {"name": "file", "in": "formData", "type": "file", "required": True},
        {"name": "note", "in": "formData", "type": "string"},
    ]
    converted = convert(
        op_doc(
            {"parameters": fields, "consumes": ["multipart/form-data", "application/x-www-form-urlencoded"]}
        )
    )
    content = op(converted)["requestBody"]["content"]
    assert list(content) == ["multipart/form-data"]  # a file cannot travel urlencoded
    assert content["multipart/form-data"]["schema"]["properties"]["file"] == {
        "type": "string",
        "format": "binary",
    }
    assert (
        converted.pointers.source(
            "/paths/~1things/post/requestBody/content/multipart~1form-data/schema/properties/file/format"
        )
        == "/paths/~1things/post/parameters/0/type"
    )


def test_path_level_parameters_are_inherited_and_overridden() -> None:
    data = doc(
        paths={
            "/things/{id}": {
                "parameters": [
                    {"name": "id", "in": "path", "required": True, "type": "string"},
                    {"name": "note", "in": "formData", "type": "string"},
                    {"name": "q", "in": "query", "type": "string"},
                ],
                "post": {
                    "parameters": [{"name": "q", "in": "query", "type": "integer"}],
                    "responses": {"200": {"description": "ok"}},
                },
                "put": {"responses": {"200": {"description": "ok"}}},
            }
        }
    )
    converted = convert(data)
    item = converted.data["paths"]["/things/{id}"]
    assert [p["name"] for p in item["parameters"]] == ["id", "q"]  # the form field left for the bodies
    assert item["post"]["parameters"] == [{"name": "q", "in": "query", "schema": {"type": "integer"}}]
    for method in ("post", "put"):
        form = item[method]["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"]
        assert form["properties"] == {"note": {"type": "string"}}


# --- components and references -----------------------------------------------------------------


def test_definitions_parameters_and_responses_become_components_with_refs_rewritten() -> None:
    data = op_doc(
        {
            "parameters": [{"$ref": "#/parameters/limit"}, {"$ref": "#/parameters/payload"}],
            "responses": {
                "200": {"$ref": "#/responses/Things"},
                "400": {"description": "bad", "schema": {"$ref": "#/definitions/Error"}},
            },
        },
        definitions={
            **THING,
            "Error": {
                "type": "object",
                "properties": {
                    "cause": {"$ref": "#/definitions/Error"},
                    "things": {"type": "array", "items": {"$ref": "#/definitions/Thing"}},
                },
            },
        },
        parameters={
            "limit": {"name": "limit", "in": "query", "type": "integer"},
            "payload": {"name": "payload", "in": "body", "schema": {"$ref": "#/definitions/Thing"}},
        },
        responses={
            "Things": {
                "description": "things",
                "schema": {"type": "array", "items": {"$ref": "#/definitions/Thing"}},
            }
        },
    )
    converted = convert(data)
    components = converted.data["components"]
    assert set(components) == {"schemas", "parameters", "responses"}
    assert components["schemas"]["Error"]["properties"]["cause"] == {"$ref": "#/components/schemas/Error"}
    assert list(components["parameters"]) == ["limit"]  # a body has no 3.0 parameter component
    assert components["responses"]["Things"]["content"]["application/json"]["schema"]["items"] == {
        "$ref": "#/components/schemas/Thing"
    }
    operation = op(converted)
    assert operation["parameters"] == [{"$ref": "#/components/parameters/limit"}]
    assert operation["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Thing"
    }
    assert operation["responses"]["200"] == {"$ref": "#/components/responses/Things"}
    # the inlined global body: the body at the reference, its schema where the component wrote it
    assert (
        converted.pointers.source("/paths/~1things/post/requestBody") == "/paths/~1things/post/parameters/1"
    )
    assert (
        converted.pointers.source("/paths/~1things/post/requestBody/content/application~1json/schema/$ref")
        == "/parameters/payload/schema/$ref"
    )


def test_a_global_form_field_is_inlined_into_the_body() -> None:
    converted = convert(
        op_doc(
            {"parameters": [{"$ref": "#/parameters/upload"}]},
            parameters={"upload": {"name": "upload", "in": "formData", "type": "file"}},
        )
    )
    assert "components" not in converted.data or "parameters" not in converted.data["components"]
    assert op(converted)["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"] == {
        "upload": {"type": "string", "format": "binary"}
    }


def test_security_definitions_become_security_schemes() -> None:
    scopes = {"read": "read things"}
    data = doc(
        securityDefinitions={
            "basic": {"type": "basic", "description": "user and password"},
            "key": {"type": "apiKey", "name": "X-Key", "in": "header", "x-vendor": 1},
            "implicit": {
                "type": "oauth2",
                "flow": "implicit",
                "authorizationUrl": "https://a/auth",
                "scopes": scopes,
            },
            "password": {
                "type": "oauth2",
                "flow": "password",
                "tokenUrl": "https://a/token",
                "scopes": scopes,
            },
            "application": {
                "type": "oauth2",
                "flow": "application",
                "tokenUrl": "https://a/token",
                "scopes": {},
            },
            "code": {
                "type": "oauth2",
                "flow": "accessCode",
                "authorizationUrl": "https://a/auth",
                "tokenUrl": "https://a/token",
                "scopes": scopes,
            },
        },
        security=[{"basic": []}],
    )
    converted = convert(data)
    schemes = converted.data["components"]["securitySchemes"]
    assert schemes["basic"] == {"type": "http", "scheme": "basic", "description": "user and password"}
    assert schemes["key"] == {"type": "apiKey", "name": "X-Key", "in": "header", "x-vendor": 1}
    assert schemes["implicit"]["flows"] == {
        "implicit": {"authorizationUrl": "https://a/auth", "scopes": scopes}
    }
    assert schemes["password"]["flows"] == {"password": {"tokenUrl": "https://a/token", "scopes": scopes}}
    assert schemes["application"]["flows"] == {
        "clientCredentials": {"tokenUrl": "https://a/token", "scopes": {}}
    }
    assert schemes["code"]["flows"] == {
        "authorizationCode": {
            "authorizationUrl": "https://a/auth",
            "tokenUrl": "https://a/token",
            "scopes": scopes,
        }
    }
    assert converted.data["security"] == [{"basic": []}]
    assert (
        converted.pointers.source("/components/securitySchemes/code/flows/authorizationCode/tokenUrl")
        == "/securityDefinitions/code/tokenUrl"
    )


# --- parameters --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "fmt", "style"),
    [
        ("query", None, {"style": "form", "explode": False}),  # csv is 2.0's default; form explodes in 3.0
        ("query", "csv", {"style": "form", "explode": False}),
        ("query", "ssv", {"style": "spaceDelimited", "explode": False}),
        ("query", "pipes", {"style": "pipeDelimited", "explode": False}),
        ("query", "multi", {"style": "form", "explode": True}),
        ("path", "csv", {}),  # simple, not exploded: 3.0's default for path and header
        ("header", None, {}),
    ],
)
def test_collection_format_becomes_style_and_explode(
    where: str, fmt: str | None, style: dict[str, Any]
) -> None:
    param: dict[str, Any] = {
        "name": "ids",
        "in": where,
        "type": "array",
        "items": {"type": "integer"},
        "required": True,
    }
    if fmt is not None:
        param["collectionFormat"] = fmt
    path = "/things/{ids}" if where == "path" else "/things"
    converted = convert(op_doc({"parameters": [param]}, path=path, method="get"))
    out = op(converted, path, "get")["parameters"][0]
    assert {k: out[k] for k in ("style", "explode") if k in out} == style
    assert out["schema"] == {"type": "array", "items": {"type": "integer"}}
    if style:
        assert converted.pointers.source(
            f"/paths/{path.replace('/', '~1')}/get/parameters/0/style"
        ) == f"/paths/{path.replace('/', '~1')}/get/parameters/0/" + ("collectionFormat" if fmt else "type")


def test_parameter_keywords_move_into_the_schema() -> None:
    param = {
        "name": "n",
        "in": "query",
        "type": "integer",
        "format": "int32",
        "minimum": 1,
        "maximum": 9,
        "exclusiveMaximum": True,
        "default": 2,
        "enum": [1, 2, 9],
        "multipleOf": 1,
        "x-nullable": True,
        "description": "how many",
        "allowEmptyValue": True,
        "x-example": 3,
        "x-internal": "yes",
    }
    converted = convert(op_doc({"parameters": [param]}, method="get"))
    out = op(converted, method="get")["parameters"][0]
    assert out == {
        "name": "n",
        "in": "query",
        "description": "how many",
        "allowEmptyValue": True,
        "x-internal": "yes",
        "example": 3,
        "schema": {
            "type": "integer",
            "format": "int32",
            "default": 2,
            "maximum": 9,
            "exclusiveMaximum": True,
            "minimum": 1,
            "enum": [1, 2, 9],
            "multipleOf": 1,
            "nullable": True,
        },
    }
    assert (
        converted.pointers.source("/paths/~1things/get/parameters/0/schema/nullable")
        == "/paths/~1things/get/parameters/0/x-nullable"
    )
    assert (
        converted.pointers.source("/paths/~1things/get/parameters/0/example")
        == "/paths/~1things/get/parameters/0/x-example"
    )


def test_allow_empty_value_outside_a_query_is_dropped_with_a_located_warning() -> None:
    converted = convert(
        op_doc(
            {"parameters": [{"name": "h", "in": "header", "type": "string", "allowEmptyValue": True}]},
            method="get",
        )
    )
    assert "allowEmptyValue" not in op(converted, method="get")["parameters"][0]
    assert [(w.code, w.location.pointer if w.location else None) for w in converted.warnings] == [
        ("swagger2-dropped", "/paths/~1things/get/parameters/0/allowEmptyValue")
    ]


# --- responses and schemas -----------------------------------------------------------------------


def test_responses_get_content_per_produced_type_examples_and_header_schemas() -> None:
    response = {
        "description": "ok",
        "schema": {"$ref": "#/definitions/Thing"},
        "examples": {"application/json": {"name": "a"}, "text/csv": "name\na"},
        "headers": {"X-Rate": {"type": "integer", "description": "calls left"}},
        "x-cache": True,
    }
    converted = convert(
        op_doc(
            {"responses": {"200": response}}, method="get", definitions=THING, produces=["application/json"]
        )
    )
    out = op(converted, method="get")["responses"]["200"]
    assert out["content"]["application/json"] == {
        "schema": {"$ref": "#/components/schemas/Thing"},
        "example": {"name": "a"},
    }
    assert out["content"]["text/csv"] == {
        "schema": {"$ref": "#/components/schemas/Thing"},
        "example": "name\na",
    }
    assert out["headers"] == {"X-Rate": {"description": "calls left", "schema": {"type": "integer"}}}
    assert out["x-cache"] is True
    assert (
        converted.pointers.source("/paths/~1things/get/responses/200/content/text~1csv/example")
        == "/paths/~1things/get/responses/200/examples/text~1csv"
    )


def test_a_file_response_is_binary_octet_stream() -> None:
    out = op(
        convert(
            op_doc(
                {"responses": {"200": {"description": "the file", "schema": {"type": "file"}}}}, method="get"
            )
        ),
        method="get",
    )["responses"]["200"]
    assert out["content"] == {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}


def test_schema_rules_x_nullable_file_discriminator_and_extensions() -> None:
    definitions = {
        "Pet": {
            "type": "object",
            "discriminator": "kind",
            "required": ["kind"],
            "x-go-type": "Pet",
            "properties": {
                "kind": {"type": "string"},
                "owner": {"$ref": "#/definitions/Owner", "x-nullable": True},
                "nick": {"type": "string", "x-nullable": True},
                "tags": {"type": "array", "items": {"$ref": "#/definitions/Owner"}},
                "extra": {"type": "object", "additionalProperties": {"$ref": "#/definitions/Owner"}},
            },
        },
        "Dog": {
            "allOf": [
                {"$ref": "#/definitions/Pet"},
                {"type": "object", "properties": {"bark": {"type": "boolean"}}},
            ]
        },
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
    assert (
        converted.pointers.source("/components/schemas/Pet/properties/owner/allOf/0/$ref")
        == "/definitions/Pet/properties/owner/$ref"
    )
    assert (
        converted.pointers.source("/components/schemas/Pet/discriminator/propertyName")
        == "/definitions/Pet/discriminator"
    )


def test_vendor_extensions_stay_where_they_stand() -> None:
    top: dict[str, Any] = {"x-top": 4, "info": {"title": "t", "version": "1", "x-logo": {"url": "u"}}}
    data = op_doc(
        {
            "x-op": 1,
            "parameters": [{"name": "q", "in": "query", "type": "string", "x-param": 2}],
            "responses": {"200": {"description": "ok", "x-response": 3}},
        },
        method="get",
        **top,
    )
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


@pytest.mark.parametrize(
    ("data", "code", "pointer"),
    [
        (doc(swagger="1.2"), "spec-version-unsupported", "/swagger"),
        (
            op_doc(
                {
                    "parameters": [
                        {
                            "name": "a",
                            "in": "query",
                            "type": "array",
                            "items": {"type": "string"},
                            "collectionFormat": "tsv",
                        }
                    ]
                }
            ),
            "swagger2-unsupported",
            "/paths/~1things/post/parameters/0/collectionFormat",
        ),
        (
            op_doc(
                {
                    "parameters": [
                        {
                            "name": "a",
                            "in": "path",
                            "required": True,
                            "type": "array",
                            "items": {"type": "string"},
                            "collectionFormat": "pipes",
                        }
                    ]
                },
                path="/things/{a}",
            ),
            "swagger2-unsupported",
            "/paths/~1things~1{a}/post/parameters/0/collectionFormat",
        ),
        (
            op_doc(
                {"parameters": [BODY, {"name": "f", "in": "formData", "type": "string"}]}, definitions=THING
            ),
            "swagger2-invalid",
            "/paths/~1things/post/parameters/1",
        ),
        (
            op_doc({"parameters": [BODY, {**BODY, "name": "other"}]}, definitions=THING),
            "swagger2-invalid",
            "/paths/~1things/post/parameters/1",
        ),
        (
            op_doc({"parameters": [{"name": "f", "in": "query", "type": "file"}]}),
            "swagger2-invalid",
            "/paths/~1things/post/parameters/0/type",
        ),
        (
            op_doc({"parameters": [{"$ref": "#/parameters/nothing"}]}),
            "swagger2-invalid",
            "/paths/~1things/post/parameters/0/$ref",
        ),
        (
            op_doc({"parameters": [{"$ref": "common.yaml#/parameters/limit"}]}),
            "swagger2-invalid",
            "/paths/~1things/post/parameters/0/$ref",
        ),
        (
            doc(securityDefinitions={"s": {"type": "oauth2", "flow": "device"}}),
            "swagger2-invalid",
            "/securityDefinitions/s/flow",
        ),
        (
            doc(securityDefinitions={"s": {"type": "bearer"}}),
            "swagger2-invalid",
            "/securityDefinitions/s/type",
        ),
        (doc(consumes="application/json"), "swagger2-invalid", "/consumes"),
    ],
)
def test_what_cannot_be_converted_is_one_located_error(data: dict[str, Any], code: str, pointer: str) -> None:
    found = errors(data)
    assert [(d.code, d.location.pointer if d.location else None) for d in found] == [(code, pointer)]
    assert all(d.hint for d in found)
