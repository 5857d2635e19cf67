"""Swagger 2.0 input, where a converted document leads back to: diagnostics located in the 2.0 text
(JSON and YAML, conversion, schema and build errors), a property over generated 2.0 documents (every
converted pointer maps back; a malformed document converts or is refused at an existing pointer), and
end to end (a 2.0 API built and called against a loopback server, the real Petstore).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openapi_pydantic.v3.v3_0 import OpenAPI
from tests.support.profiles import examples
from tests.support.swagger2_docs import BODY, assert_maps_back, convert, op_doc

from toolgen.compile.load import load_spec
from toolgen.compile.swagger2 import convert_swagger2
from toolgen.diagnostics import Diagnostic, DiagnosticError, DiagnosticSink
from toolgen.pointer import resolve_pointer

# --- located diagnostics through the loader -----------------------------------------------------


def _write_json(tmp: Path, data: dict[str, Any]) -> Path:
    path = tmp / "spec.json"
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def _line_of(path: Path, needle: str) -> int:
    return next(
        i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line
    )


def test_an_error_about_the_request_body_is_located_at_the_2_0_body_parameter(tmp_path: Path) -> None:
    """The 3.0 validation finds `requestBody.description` is no string; the error names the body
    parameter's `description` in the 2.0 file."""
    body = {"name": "thing", "in": "body", "description": ["not", "text"], "schema": {"type": "object"}}
    path = _write_json(
        tmp_path, op_doc({"parameters": [{"name": "q", "in": "query", "type": "string"}, body]})
    )
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
    path.write_text(
        """swagger: '2.0'
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
""",
        encoding="utf-8",
    )
    with pytest.raises(DiagnosticError) as caught:
        load_spec(path, "spec.yaml")
    [diagnostic] = caught.value.diagnostics
    assert diagnostic.render().startswith(
        "spec.yaml:11:11 (#/paths/~1things/get/parameters/0/collectionFormat): error[swagger2-unsupported]"
    )


def test_a_schema_warning_is_located_in_the_2_0_definitions(tmp_path: Path) -> None:
    path = _write_json(
        tmp_path,
        op_doc(
            {"responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Thing"}}}},
            method="get",
            definitions={
                "Thing": {"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}}
            },
        ),
    )
    sink = DiagnosticSink()
    doc_ = load_spec(path, "spec.json", sink=sink)
    assert doc_.swagger == "2.0" and doc_.openapi == "3.0.3"
    [warning] = doc_.fill_locations(sink.items)
    assert warning.code == "spec-schema-invalid" and warning.location is not None
    assert warning.location.pointer == "/definitions/Thing/properties/n/minimum"
    assert warning.location.line == _line_of(path, '"minimum": "zero"')
    # a later stage's pointer into the converted document lands on the 2.0 text too
    where = doc_.locate_now("/paths/~1things/get/responses/200/content/application~1json/schema")
    assert (where.pointer, where.line) == (
        "/paths/~1things/get/responses/200/schema",
        _line_of(path, '"schema": {'),
    )


def test_a_build_error_names_the_2_0_file_line_and_pointer(tmp_path: Path) -> None:
    from tests.support.build import build

    path = _write_json(
        tmp_path,
        op_doc(
            {
                "parameters": [
                    {"name": "a", "in": "formData", "type": "string"},
                    {**BODY, "schema": {"type": "object"}},
                ]
            }
        ),
    )
    built = build(tmp_path, path, expect=2)
    line = _line_of(path, '"name": "a"') - 1  # the field's `{`
    col = path.read_text(encoding="utf-8").splitlines()[line - 1].index("{") + 1
    assert (
        f"spec.json:{line}:{col} (#/paths/~1things/post/parameters/0): error[swagger2-invalid]"
        in built.result.output
    )
    assert not (tmp_path / "out").exists()


# --- the property -------------------------------------------------------------------------------

_NAMES = st.sampled_from(["a", "b", "id", "x/y", "t~n"])
_SCALAR_TYPES = st.sampled_from(["string", "integer", "number", "boolean"])


@st.composite
def _schemas(draw: st.DrawFn, depth: int = 2) -> dict[str, Any]:
    kind = draw(
        st.sampled_from(["scalar", "ref", "array", "object", "allOf", "file"] if depth else ["scalar", "ref"])
    )
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
        schema = {
            "type": "object",
            "properties": draw(st.dictionaries(_NAMES, _schemas(depth - 1), max_size=2)),
        }
        if draw(st.booleans()):
            schema["additionalProperties"] = draw(_schemas(depth - 1))
    if draw(st.booleans()):
        schema["x-nullable"] = True
    if draw(st.booleans()):
        schema["x-tag"] = draw(st.integers(0, 3))
    return schema


@st.composite
def _params(draw: st.DrawFn, path_params: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"name": p, "in": "path", "required": True, "type": "string"} for p in path_params
    ]
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
        out.append(
            {"name": "body", "in": "body", "required": draw(st.booleans()), "schema": draw(_schemas())}
        )
    elif body_kind == "global-body":
        out.append({"$ref": "#/parameters/payload"})
    elif body_kind == "form":
        for name in draw(st.lists(_NAMES, min_size=1, max_size=3, unique=True)):
            field: dict[str, Any] = {
                "name": name,
                "in": "formData",
                "type": draw(st.sampled_from(["string", "integer", "file"])),
                "required": draw(st.booleans()),
            }
            out.append(field)
    return out


@st.composite
def _responses(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for code in draw(
        st.lists(st.sampled_from(["200", "201", "404", "default"]), min_size=1, max_size=3, unique=True)
    ):
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
        data["schemes"] = draw(
            st.lists(st.sampled_from(["http", "https"]), min_size=1, max_size=2, unique=True)
        )
    for key in ("consumes", "produces"):
        if draw(st.booleans()):
            data[key] = draw(
                st.lists(
                    st.sampled_from(
                        [
                            "application/json",
                            "application/xml",
                            "multipart/form-data",
                            "application/x-www-form-urlencoded",
                        ]
                    ),
                    max_size=2,
                    unique=True,
                )
            )
    paths: dict[str, Any] = {}
    for path in draw(
        st.lists(st.sampled_from(["/a", "/a/{id}", "/b~c/{id}/d"]), min_size=1, max_size=2, unique=True)
    ):
        path_params = ["id"] if "{id}" in path else []
        item: dict[str, Any] = {}
        for i, method in enumerate(
            draw(
                st.lists(
                    st.sampled_from(["get", "post", "put", "delete"]), min_size=1, max_size=2, unique=True
                )
            )
        ):
            operation: dict[str, Any] = {
                "operationId": f"{method}{len(paths)}{i}",
                "parameters": draw(_params(path_params)),
                "responses": draw(_responses()),
            }
            if draw(st.booleans()):
                operation["consumes"] = ["application/json"]
            if draw(st.booleans()):
                operation["security"] = [{"key": []}]
            item[method] = operation
        paths[path] = item
    data["paths"] = paths
    data["definitions"] = {
        "A": draw(_schemas()),
        "B": {"type": "object", "discriminator": "kind", "properties": {"kind": {"type": "string"}}},
    }
    data["parameters"] = {
        "limit": {"name": "limit", "in": "query", "type": "integer"},
        "payload": {"name": "payload", "in": "body", "schema": {"$ref": "#/definitions/B"}},
    }
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


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["", "a", "file", "body"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "in",
                    "name",
                    "schema",
                    "$ref",
                    "items",
                    "parameters",
                    "responses",
                    "get",
                    "x-a",
                    "collectionFormat",
                    "flow",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=examples(150), deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "paths",
                "definitions",
                "parameters",
                "responses",
                "securityDefinitions",
                "host",
                "basePath",
                "schemes",
                "consumes",
            ]
        ),
        _JSON,
        max_size=5,
    )
)
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
        spec.write_text(
            f"""swagger: '2.0'
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
""",
            encoding="utf-8",
        )
        built = build(
            tmp_path,
            spec,
            """auth:
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
""",
        )
        assert built.json("policy.json")["base_url"] == server.base_url + "/api/v2"
        server.reply("GET", "/pets$", body=[{"name": "Rex", "nickname": None}])
        actor = Actor.of("a", scopes=["pets:read", "pets:write"])
        with Registry.from_dir(
            built.out,
            credentials=StaticCredentials({"PETS_KEY": "k1"}),
            receipts=MemoryReceiptStore(),
            cursor_key=b"k" * 32,
        ) as reg:
            listed = reg.call(
                "list_pets",
                {"ownerId": 7, "tags": ["a", "b"], "status": ["x", "y"], "kinds": ["cat", "dog"], "limit": 5},
                actor=actor,
            )
            assert listed.ok, listed.to_json()
            sent = server.last
            assert (sent.method, sent.path) == ("GET", "/api/v2/owners/7/pets")
            assert sent.query == [
                ("tags", "a,b"),
                ("status", "x"),
                ("status", "y"),
                ("kinds", "cat|dog"),
                ("limit", "5"),
            ]
            assert sent.header("X-Api-Key") == "k1"
            too_many = reg.call("list_pets", {"ownerId": 7, "limit": 51}, actor=actor)
            assert (
                not too_many.ok and too_many.error is not None and too_many.error.code == "invalid_arguments"
            )
            preview = reg.call("preview_add_pet", {"ownerId": 7, "name": "Rex"}, actor=actor)
            assert preview.ok and preview.result is not None, preview.to_json()
            request = preview.result["request"]
            assert request["method"] == "POST" and request["url"] == server.base_url + "/api/v2/owners/7/pets"
            assert request["body"] == {"name": "Rex"}
            added = reg.call(
                "record_add_pet", {"ownerId": 7, "name": "Rex", "action_id": "add-1"}, actor=actor
            )
            assert added.ok, added.to_json()
            assert (server.last.method, server.last.path, server.last.json()) == (
                "POST",
                "/api/v2/owners/7/pets",
                {"name": "Rex"},
            )
            assert server.last.header("Content-Type") == "application/json"
            tagged = reg.call(
                "record_tag_pet",
                {
                    "ownerId": 7,
                    "petName": "Rex",
                    "note": "good dog",
                    "labels": ["a", "b"],
                    "action_id": "tag-1",
                },
                actor=actor,
            )
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
    assert upload["content"]["multipart/form-data"]["schema"]["properties"]["file"] == {
        "type": "string",
        "format": "binary",
        "description": "file to upload",
    }
    assert converted.data["paths"]["/pet/findByStatus"]["get"]["parameters"][0]["explode"] is True


def test_messages_name_the_2_0_pointers(tmp_path: Path) -> None:
    """A diagnostic that prints a pointer in its message prints the 2.0 one, as its location does:
    a `$ref` to a missing definition and an allOf whose definitions conflict."""
    from toolgen.compile.lower import operation_response
    from toolgen.compile.operations import list_operations
    from toolgen.compile.schema import SchemaConverter

    def response_error(definitions: dict[str, Any], schema: dict[str, Any]) -> Diagnostic:
        path = _write_json(
            tmp_path,
            op_doc(
                {"responses": {"200": {"description": "ok", "schema": schema}}},
                method="get",
                definitions=definitions,
            ),
        )
        loaded = load_spec(path, "spec.json", sink=DiagnosticSink())
        with pytest.raises(DiagnosticError) as caught:
            operation_response(loaded, SchemaConverter(loaded, DiagnosticSink()), list_operations(loaded)[0])
        return caught.value.diagnostics[0]

    missing = response_error({"Thing": {"type": "object"}}, {"$ref": "#/definitions/Thing/properties/gone"})
    assert missing.code == "ref-missing"
    assert "#/definitions/Thing/properties/gone does not exist" in missing.message
    assert "components" not in missing.message
    conflict = response_error(
        {"A": {"type": "string"}, "B": {"type": "integer"}},
        {"allOf": [{"$ref": "#/definitions/A"}, {"$ref": "#/definitions/B"}]},
    )
    assert conflict.code == "schema-allof-conflict"
    assert "at #/definitions/A vs" in conflict.message and "at #/definitions/B" in conflict.message
    assert conflict.location is not None and conflict.location.pointer == "/definitions/B"
