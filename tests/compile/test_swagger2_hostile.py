"""Hostile Swagger 2.0 input: every malformed document is refused with located errors (never an
internal error), and nothing a 2.0 document does not mean reaches the converted one."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.compile.load import MAX_DEPTH, _shallow, checked_tree, load_spec
from toolgen.compile.swagger2 import convert_swagger2
from toolgen.diagnostics import Diagnostic, DiagnosticError, DiagnosticSink
from toolgen.pointer import ref_to_pointer, resolve_pointer


def doc(**top: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}}
    base.update(top)
    return base


def op_doc(
    operation: dict[str, Any], path: str = "/things", method: str = "post", **top: Any
) -> dict[str, Any]:
    return doc(paths={path: {method: {"responses": {"200": {"description": "ok"}}, **operation}}}, **top)


def refused(data: dict[str, Any]) -> list[tuple[str, str | None]]:
    """(code, 2.0 pointer) of each error; each pointer names a value of the document."""
    with pytest.raises(DiagnosticError) as caught:
        convert_swagger2(data, "spec.json")
    found = caught.value.diagnostics
    for d in found:
        assert d.hint and d.location is not None and d.location.pointer is not None
        resolve_pointer(data, d.location.pointer)
    return [(d.code, d.location.pointer if d.location else None) for d in found]


ARRAY = {"name": "a", "in": "query", "type": "array", "items": {"type": "string"}}


@pytest.mark.parametrize("fmt", [["csv"], {"csv": 1}, 3, None])
def test_a_collection_format_that_is_no_string_is_refused(fmt: Any) -> None:
    data = op_doc({"parameters": [{**ARRAY, "collectionFormat": fmt}]})
    assert refused(data) == [("swagger2-invalid", "/paths/~1things/post/parameters/0/collectionFormat")]


@pytest.mark.parametrize("flow", [["implicit"], {"implicit": {}}, 1])
def test_an_oauth2_flow_that_is_no_string_is_refused(flow: Any) -> None:
    data = doc(
        securityDefinitions={"o": {"type": "oauth2", "flow": flow, "authorizationUrl": "https://a.example"}}
    )
    assert refused(data) == [("swagger2-invalid", "/securityDefinitions/o/flow")]


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("servers", [{"url": "https://elsewhere.example"}]),
        ("openapi", "3.0.0"),
        ("openapi", "3.1.0"),
        ("components", {"schemas": {"X": {"type": "string"}}}),
        ("webhooks", {}),
        ("basepath", "/v1"),
    ],
)
def test_a_key_that_is_not_swagger_2_0_is_refused_not_read_as_openapi_3(key: str, value: Any) -> None:
    data = doc(host="api.example.com", **{key: value})
    assert refused(data) == [("swagger2-invalid", "/" + key)]


@pytest.mark.parametrize("key", ["definitions", "parameters", "responses", "securityDefinitions"])
def test_a_component_group_that_is_no_mapping_is_refused(key: str) -> None:
    assert refused(doc(**{key: ["x"]})) == [("swagger2-invalid", "/" + key)]


@pytest.mark.parametrize(
    "host",
    [
        "https://api.example.com",
        "api.example.com/v2",
        "api.example.com?x=1",
        "",
        "api example.com",
        "user:pw@api.example.com",
        "{region}.example.com",
        "api.example.com:http",
    ],
)
def test_a_host_that_is_more_than_a_host_and_port_is_refused(host: str) -> None:
    assert refused(doc(host=host, basePath="/v1")) == [("swagger2-invalid", "/host")]


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("api.example.com:8443", "https://api.example.com:8443/v1"),
        ("127.0.0.1:80", "https://127.0.0.1:80/v1"),
        ("[::1]:8080", "https://[::1]:8080/v1"),
        ("bücher.example", "https://bücher.example/v1"),
    ],
)
def test_a_host_with_a_port_or_an_address_is_kept(host: str, url: str) -> None:
    assert convert_swagger2(doc(host=host, basePath="/v1"), "s").data["servers"] == [{"url": url}]


@pytest.mark.parametrize("base", ["/v1?key=1", "/v1#top"])
def test_a_base_path_with_a_query_or_fragment_is_refused(base: str) -> None:
    assert refused(doc(host="api.example.com", basePath=base)) == [("swagger2-invalid", "/basePath")]


@pytest.mark.parametrize(
    ("schemes", "urls"),
    [
        (["wss", "http"], ["http://a.example"]),
        (["ws", "HTTPS", "http"], ["https://a.example", "http://a.example"]),
        (["Http"], ["http://a.example"]),
    ],
)
def test_only_http_schemes_become_servers_https_first(schemes: list[str], urls: list[str]) -> None:
    data = doc(host="a.example", schemes=schemes)
    converted = convert_swagger2(data, "s")
    assert [s["url"] for s in converted.data["servers"]] == urls
    for i, url in enumerate(urls):  # each server is located at the scheme it came from
        assert resolve_pointer(data, converted.pointers.source(f"/servers/{i}")).lower() == url.split(":")[0]


@pytest.mark.parametrize("schemes", [["ws"], ["wss", "ws"], ["ftp"]])
def test_schemes_without_http_are_refused(schemes: list[str]) -> None:
    assert refused(doc(host="a.example", schemes=schemes)) == [("swagger2-unsupported", "/schemes")]


@pytest.mark.parametrize(
    ("scheme", "pointer"),
    [
        ({"type": "apiKey", "in": "header"}, "/securityDefinitions/k"),
        ({"type": "apiKey", "name": "", "in": "header"}, "/securityDefinitions/k/name"),
        ({"type": "apiKey", "name": "key", "in": "body"}, "/securityDefinitions/k/in"),
        ({"type": "apiKey", "name": "key", "in": "cookie"}, "/securityDefinitions/k/in"),
        ({"type": "apiKey", "name": "key"}, "/securityDefinitions/k"),
    ],
)
def test_an_api_key_without_a_name_or_a_2_0_location_is_refused(scheme: dict[str, Any], pointer: str) -> None:
    """Swagger 2.0 Security Scheme Object: an apiKey's `name` is required and `in` is query or header."""
    assert refused(doc(securityDefinitions={"k": scheme})) == [("swagger2-invalid", pointer)]


THING = {"type": "object", "properties": {"name": {"type": "string"}}}


@pytest.mark.parametrize("ref", ["#%2Fparameters%2Flimit", "#/parameters%2Flimit", "#/param%65ters/limit"])
def test_a_percent_encoded_parameter_ref_names_the_component(ref: str) -> None:
    data = op_doc(
        {"parameters": [{"$ref": ref}]},
        parameters={"limit": {"name": "limit", "in": "query", "type": "integer"}},
    )
    converted = convert_swagger2(data, "s").data
    [param] = converted["paths"]["/things"]["post"]["parameters"]
    target = ref_to_pointer(param["$ref"])
    assert target is not None and resolve_pointer(converted, target)["name"] == "limit"


@pytest.mark.parametrize(
    ("name", "ref"),
    [
        ("a%41", "#%2Fdefinitions%2Fa%2541"),
        ("a b", "#%2Fdefinitions/a%20b"),
        ("a/b", "#%2Fdefinitions%2Fa~1b"),
    ],
)
def test_a_percent_encoded_schema_ref_names_the_schema(name: str, ref: str) -> None:
    data = op_doc(
        {"parameters": [{"name": "b", "in": "body", "schema": {"$ref": ref}}]},
        definitions={name: copy.deepcopy(THING)},
    )
    converted = convert_swagger2(data, "s").data
    schema_ref = converted["paths"]["/things"]["post"]["requestBody"]["content"]["application/json"][
        "schema"
    ]["$ref"]
    target = ref_to_pointer(schema_ref)
    assert target == "/components/schemas/" + name.replace("~", "~0").replace("/", "~1")
    assert resolve_pointer(converted, target) == THING


# --- the text itself: aliases, depth, numbers (every reader of a spec goes through load) ----------

HEAD = "swagger: '2.0'\ninfo: {title: t, version: '1'}\npaths: {}\n"


def load_error(tmp_path: Path, name: str, text: str) -> Diagnostic:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DiagnosticError) as caught:
        load_spec(path, name, sink=DiagnosticSink())
    [found] = caught.value.diagnostics
    assert found.hint and found.location is not None and found.location.file == name
    return found


def test_a_billion_laughs_document_is_refused_without_expanding_it(tmp_path: Path) -> None:
    lines = ["x-a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"x-a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    found = load_error(tmp_path, "spec.yaml", HEAD + "\n".join(lines) + "\n")
    assert found.code == "spec-alias-expansion"


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    found = load_error(tmp_path, "spec.yaml", HEAD + "x-loop: &loop [1, *loop]\n")
    assert found.code == "spec-alias-cycle" and found.location is not None
    assert found.location.pointer == "/x-loop/1"


def test_shared_aliases_within_bounds_still_load(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(HEAD + "x-a: &a {type: string}\nx-b: [*a, *a, *a]\n", encoding="utf-8")
    assert load_spec(path, "spec.yaml").data["x-b"] == [{"type": "string"}] * 3


@pytest.mark.parametrize("levels", [201, 10_000])
def test_a_document_nested_too_deep_is_refused_at_a_location(tmp_path: Path, levels: int) -> None:
    schema = '{"items": ' * levels + "{}" + "}" * levels
    text = (
        '{"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}, "definitions": {"D": '
        + schema
        + "}}"
    )
    found = load_error(tmp_path, "spec.json", text)
    assert found.code == "spec-too-deep"
    loc = found.location
    assert loc is not None and (loc.line is not None or loc.pointer is not None)


def test_a_yaml_document_nested_too_deep_is_refused(tmp_path: Path) -> None:
    text = HEAD + "definitions:\n  D: " + "[" * 300 + "]" * 300 + "\n"
    assert load_error(tmp_path, "spec.yaml", text).code == "spec-too-deep"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "spec.json",
            '{"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}, "x-n": '
            + "9" * 5000
            + "}",
        ),
        ("spec.yaml", HEAD + "x-n: " + "9" * 5000 + "\n"),
    ],
)
def test_a_number_too_long_to_read_is_refused_at_its_first_digit(
    tmp_path: Path, name: str, text: str
) -> None:
    found = load_error(tmp_path, name, text)
    assert found.code == "spec-number-too-long"
    assert found.location is not None and found.location.line is not None
    line = text.splitlines()[found.location.line - 1]
    assert found.location.col is not None and line[found.location.col - 1 :].startswith("9" * 100)


def test_a_long_digit_string_is_still_text(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(HEAD + "x-n: '" + "9" * 5000 + "'\n", encoding="utf-8")
    assert load_spec(path, "spec.yaml").data["x-n"] == "9" * 5000


def test_a_parameter_ref_chain_that_ends_at_a_body_becomes_the_request_body() -> None:
    body = {"name": "thing", "in": "body", "required": True, "schema": copy.deepcopy(THING)}
    data = op_doc(
        {"parameters": [{"$ref": "#/parameters/Alias"}]},
        parameters={
            "Alias": {"$ref": "#/parameters/Again"},
            "Again": {"$ref": "#/parameters/Thing"},
            "Thing": body,
        },
    )
    converted = convert_swagger2(data, "s")
    operation = converted.data["paths"]["/things"]["post"]
    assert "parameters" not in operation
    assert operation["requestBody"]["required"] is True
    assert operation["requestBody"]["content"]["application/json"]["schema"] == THING
    assert "components" not in converted.data or "parameters" not in converted.data["components"]
    assert (
        converted.pointers.source("/paths/~1things/post/requestBody/content/application~1json/schema")
        == "/parameters/Thing/schema"
    )


def test_a_parameter_ref_chain_to_a_query_parameter_stays_a_reference() -> None:
    data = op_doc(
        {"parameters": [{"$ref": "#/parameters/Alias"}]},
        parameters={
            "Alias": {"$ref": "#/parameters/limit"},
            "limit": {"name": "limit", "in": "query", "type": "integer"},
        },
    )
    converted = convert_swagger2(data, "s").data
    assert converted["paths"]["/things"]["post"]["parameters"] == [{"$ref": "#/components/parameters/Alias"}]
    assert converted["components"]["parameters"]["Alias"] == {"$ref": "#/components/parameters/limit"}
    assert converted["components"]["parameters"]["limit"]["schema"] == {"type": "integer"}


def test_a_parameter_ref_loop_is_left_to_the_reference_checks() -> None:
    data = op_doc(
        {"parameters": [{"$ref": "#/parameters/A"}]},
        parameters={"A": {"$ref": "#/parameters/B"}, "B": {"$ref": "#/parameters/A"}},
    )
    converted = convert_swagger2(data, "s").data
    assert converted["paths"]["/things"]["post"]["parameters"] == [{"$ref": "#/components/parameters/A"}]


# --- any JSON value in any 2.0 keyword position: converted or refused, never an internal error ----

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.sampled_from(
        [
            "",
            "csv",
            "multi",
            "body",
            "formData",
            "query",
            "header",
            "file",
            "array",
            "implicit",
            "apiKey",
            "oauth2",
            "#/parameters/p",
            "#/definitions/D",
            "#/responses/r",
            "#%2Fparameters%2Fp",
            "https",
            "ws",
        ]
    ),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["$ref", "in", "type", "name"]), inner, max_size=3)
    ),
    max_leaves=6,
)


def _hostile_doc(values: dict[str, Any]) -> dict[str, Any]:
    param = {
        "name": values["name"],
        "in": values["in"],
        "type": values["type"],
        "items": {"type": "string"},
        "collectionFormat": values["collectionFormat"],
    }
    return doc(
        host=values["host"],
        schemes=values["schemes"],
        basePath=values["basePath"],
        parameters={"p": {"name": "p", "in": values["in"], "type": "string"}},
        definitions={
            "D": {
                "type": "object",
                "discriminator": values["discriminator"],
                "x-nullable": values["x-nullable"],
            }
        },
        responses={"r": {"description": "r", "schema": {"$ref": values["$ref"]}}},
        securityDefinitions={
            "s": {
                "type": values["security"],
                "flow": values["flow"],
                "name": values["name"],
                "in": values["in"],
            }
        },
        paths={
            "/t/{a}": {
                "parameters": [{"$ref": values["$ref"]}],
                "post": {
                    "parameters": [param, {"$ref": values["$ref"]}],
                    "consumes": values["consumes"],
                    "responses": {"200": {"$ref": values["$ref"]}},
                },
            }
        },
    )


KEYS = [
    "name",
    "in",
    "type",
    "collectionFormat",
    "host",
    "schemes",
    "basePath",
    "discriminator",
    "x-nullable",
    "$ref",
    "security",
    "flow",
    "consumes",
]


#: the values each keyword is meant to hold, drawn half the time, so that the others meet a valid context
LIKELY: dict[str, list[Any]] = {
    "type": ["array", "string", "file"],
    "in": ["query", "header", "path", "formData", "body"],
    "security": ["oauth2", "apiKey", "basic"],
    "host": ["api.example.com"],
    "schemes": [["https"]],
}


@settings(max_examples=examples(300), deadline=None)
@given(
    st.fixed_dictionaries(
        {k: st.sampled_from(LIKELY[k]) | JSON_VALUES if k in LIKELY else JSON_VALUES for k in KEYS}
    )
)
def test_any_value_in_a_2_0_keyword_converts_or_is_refused_at_an_existing_pointer(
    values: dict[str, Any],
) -> None:
    data = _hostile_doc(values)
    try:
        convert_swagger2(data, "spec.json")
    except DiagnosticError as exc:
        for d in exc.diagnostics:
            assert d.hint and d.location is not None and d.location.pointer is not None
            resolve_pointer(data, d.location.pointer)


@pytest.mark.parametrize("levels", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2])
@pytest.mark.parametrize("kind", ["list", "dict", "mixed"])
def test_the_json_depth_check_agrees_with_the_located_one(levels: int, kind: str) -> None:
    """JSON documents are proven shallow by a walk over their containers only (`_shallow`); it must
    refuse exactly what the located check (`checked_tree`) refuses, at the boundary."""
    root: Any = [] if kind == "list" else {}
    node = root
    for i in range(levels):
        child: Any = [] if kind == "list" or (kind == "mixed" and i % 2) else {}
        if isinstance(node, list):
            node.append(child)
        else:
            node["k"] = child
        node = child
    node_scalar = [1] if isinstance(node, list) else {"leaf": 1}  # a scalar one level deeper is never refused
    if isinstance(node, list):
        node.extend(node_scalar)
    else:
        node.update(node_scalar)
    try:
        checked_tree(root, "", "spec.json")
        located = True
    except DiagnosticError:
        located = False
    assert _shallow(root) is located
    assert located is (levels <= MAX_DEPTH)
