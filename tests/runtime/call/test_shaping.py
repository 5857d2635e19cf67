"""What a read returns for the response shapes real APIs send, against a loopback server.

Every answer below is one a real spec allows (springdoc's ``*/*`` success responses, vendor and
``+json`` media types with a charset, 204 next to 200, a schema with ``properties`` but no ``type``,
binary alternatives, a closed object over the size budget, a write-only member of a closed
object), and the tool's MCP result must conform to the tool's ``outputSchema``: that is what MCP
clients check (MCP 2025-11-25, "Output Schema"). The property at the end says the same for any
response schema of a small grammar and any value valid against it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import Built, build
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import mcp_json

from toolgen.results import media_kind, result_shape, shape_body
from toolgen.runtime.call.shaping import compact_size, enforce_budget
from toolgen.runtime.serving.mcp_server import conforming, to_call_tool_result
from toolgen.runtime.serving.registry import Actor, Registry


def reader(registry: Registry) -> Actor:
    """An actor holding every scope the package's tools ask for."""
    return Actor.of("reader", {s for row in registry.policy["tools"] for s in row.get("permission") or []})


OBJ = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
    "required": ["id"],
}


def _op(op_id: str, responses: dict[str, Any]) -> dict[str, Any]:
    return {"get": {"operationId": op_id, "responses": responses}}


def _json(schema: Any, media: str = "application/json") -> dict[str, Any]:
    return {"description": "ok", "content": {media: {"schema": schema}}}


SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Shapes", "version": "1"},
    "servers": [{"url": "https://shapes.example.com"}],
    "paths": {
        "/star": _op("getStar", {"200": _json(OBJ, "*/*")}),
        "/star-list": _op("getStarList", {"200": _json({"type": "array", "items": OBJ}, "*/*")}),
        "/star-text": _op("getStarText", {"200": _json({"type": "string"}, "*/*")}),
        "/vendor": _op(
            "getVendor", {"200": _json({"type": "array", "items": OBJ}, "application/vnd.shapes.v1+json")}
        ),
        "/hal": _op("getHal", {"200": _json(OBJ, "application/hal+json")}),
        "/textjson": _op("getTextJson", {"200": _json(OBJ, "text/json")}),
        "/charset": _op("getCharset", {"200": _json(OBJ, "application/json; charset=utf-8")}),
        "/maybe": _op("getMaybe", {"200": _json(OBJ), "204": {"description": "nothing"}}),
        "/maybe-list": _op(
            "getMaybeList", {"200": _json({"type": "array", "items": OBJ}), "204": {"description": "nothing"}}
        ),
        "/nothing": _op("getNothing", {"204": {"description": "nothing"}}),
        "/typeless": _op(
            "getTypeless", {"200": _json({"properties": {"id": {"type": "string"}}, "required": ["id"]})}
        ),
        "/mixed": _op(
            "getMixed",
            {
                "200": {
                    "description": "ok",
                    "content": {
                        "application/pdf": {"schema": {"type": "string", "format": "binary"}},
                        "application/json": {"schema": OBJ},
                    },
                }
            },
        ),
        "/certificate": _op(
            "getCertificate",
            {
                "200": {
                    "description": "PDF or XML, as the request's format says",
                    "content": {
                        "application/pdf": {"example": "the certificate in PDF"},
                        "application/xml": {
                            "schema": {"type": "object", "properties": {"dlno": {"type": "string"}}}
                        },
                    },
                }
            },
        ),
        "/pdf": _op(
            "getPdf",
            {
                "200": {
                    "description": "ok",
                    "content": {"application/pdf": {"schema": {"type": "string", "format": "binary"}}},
                }
            },
        ),
        "/closed": _op(
            "getClosed",
            {
                "200": _json(
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["id"],
                        "properties": {
                            "id": {"type": "string"},
                            "notes": {"type": "string"},
                            "blob": {"type": "string"},
                            "tags": {"type": "array", "items": {"type": "string"}},
                        },
                    }
                )
            },
        ),
        "/secretive": _op(
            "getSecretive",
            {
                "200": _json(
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["id"],
                        "properties": {
                            "id": {"type": "string"},
                            "owner": {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {
                                    "login": {"type": "string"},
                                    "password": {"type": "string", "writeOnly": True},
                                },
                            },
                        },
                    }
                )
            },
        ),
    },
}

MAP = """\
include: [{match: "*"}]
tools:
  get_closed:
    operation: getClosed
    effect: read
    output: {max_bytes: 400}
"""


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("shapes")
    spec = tmp / "shapes.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    return build(tmp, spec, MAP, name="shapes", emit="mcp,policy")


@pytest.fixture(scope="module")
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


def _tool(built: Built, op_id: str) -> str:
    rows = [r for r in built.rows_for(op_id) if r["mode"] == "read"]
    assert len(rows) == 1, rows
    return str(rows[0]["tool"])


def _call(
    built: Built, srv: RecordingServer, op_id: str, path: str, body: Any, ctype: str, status: int = 200
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(MCP structuredContent, outputSchema) of one call answered with `body` (bytes as is)."""
    srv.reply("GET", f"^{path}$", status, body, content_type=ctype)
    registry = Registry.from_dir(built.out, base_url=srv.base_url)
    try:
        tool = _tool(built, op_id)
        result = conforming(registry, registry.call(tool, {}, actor=reader(registry)))
        mcp = to_call_tool_result(result)
        assert result.ok and not mcp.is_error, result.error
        schema = registry.specs[tool].output_schema
        assert schema is not None
        return dict(mcp.structured_content), schema
    finally:
        registry.close()


def _valid(schema: dict[str, Any], value: Any) -> bool:
    return bool(jsonschema_rs.Draft202012Validator(schema, validate_formats=True).is_valid(value))


@pytest.mark.parametrize(
    ("op_id", "path", "ctype"),
    [
        ("getStar", "/star", "*/*"),
        ("getStar", "/star", "application/json"),
        ("getStar", "/star", "text/plain;charset=UTF-8"),
        ("getStar", "/star", ""),
        ("getHal", "/hal", "application/hal+json"),
        ("getTextJson", "/textjson", "text/json; charset=utf-8"),
        ("getCharset", "/charset", "application/json; charset=utf-8"),
    ],
)
def test_a_json_object_answer_is_read_as_json_whatever_json_media_type_the_spec_declares(
    shapes: Built, server: RecordingServer, op_id: str, path: str, ctype: str
) -> None:
    content, schema = _call(
        shapes, server, op_id, path, json.dumps({"id": "a1", "name": "A"}).encode(), ctype
    )
    assert content == {"id": "a1", "name": "A"}
    assert schema["type"] == "object" and "id" in schema["properties"]
    assert _valid(schema, content)


def test_a_json_array_answer_of_a_vendor_or_wildcard_type_is_a_list_result(
    shapes: Built, server: RecordingServer
) -> None:
    items = [{"id": "a1"}, {"id": "a2", "name": "B"}]
    for op_id, path, ctype in (
        ("getVendor", "/vendor", "application/vnd.shapes.v1+json; charset=utf-8"),
        ("getStarList", "/star-list", "*/*"),
    ):
        content, schema = _call(shapes, server, op_id, path, json.dumps(items).encode(), ctype)
        assert content == {"result": items}
        assert schema["properties"]["result"]["type"] == "array"


def test_a_wildcard_without_a_structured_schema_returns_json_or_text(
    shapes: Built, server: RecordingServer
) -> None:
    content, _ = _call(shapes, server, "getStarText", "/star-text", b'{"id": "x"}', "*/*")
    assert content == {"result": {"id": "x"}}
    content, _ = _call(shapes, server, "getStarText", "/star-text", b"plain words", "text/plain")
    assert content == {"result": "plain words"}


@pytest.mark.parametrize(("op_id", "path"), [("getMaybe", "/maybe"), ("getMaybeList", "/maybe-list")])
def test_an_empty_answer_where_the_spec_allows_one_is_a_null_result(
    shapes: Built, server: RecordingServer, op_id: str, path: str
) -> None:
    content, schema = _call(shapes, server, op_id, path, None, "application/json", status=204)
    assert content == {"result": None}
    full = [{"id": "a"}] if op_id == "getMaybeList" else {"id": "a"}
    content, _ = _call(shapes, server, op_id, path, json.dumps(full).encode(), "application/json")
    assert content == {"result": full} and _valid(schema, content)
    content, _ = _call(shapes, server, op_id, path, b"null", "application/json")
    assert content == {"result": None}


def test_an_operation_without_a_body_returns_its_status(shapes: Built, server: RecordingServer) -> None:
    content, schema = _call(shapes, server, "getNothing", "/nothing", None, "application/json", status=204)
    assert content == {"status": 204}
    assert schema["required"] == ["status"]


def test_a_schema_with_properties_but_no_type_is_an_object_root_in_build_and_runtime(
    shapes: Built, server: RecordingServer
) -> None:
    content, schema = _call(
        shapes, server, "getTypeless", "/typeless", json.dumps({"id": "t"}).encode(), "application/json"
    )
    assert content == {"id": "t"}
    assert schema["type"] == "object" and "result" not in schema["properties"]
    row = shapes.row(_tool(shapes, "getTypeless"))
    assert row["output"]["shape"] == "object"


def test_json_next_to_binary_asks_for_json(shapes: Built, server: RecordingServer) -> None:
    content, _ = _call(
        shapes, server, "getMixed", "/mixed", json.dumps({"id": "m"}).encode(), "application/json"
    )
    assert content == {"id": "m"}
    assert server.last.header("Accept") == "application/json"


@pytest.mark.parametrize(
    ("body", "ctype", "expected"),
    [
        (
            b"%PDF-1.7 \x00\x01",
            "application/pdf",
            {"result": {"content_type": "application/pdf", "bytes": 11}},
        ),
        (
            b"<DrivingLicense><dlno>TN01</dlno></DrivingLicense>",
            "application/xml; charset=utf-8",
            {"result": "<DrivingLicense><dlno>TN01</dlno></DrivingLicense>"},
        ),
    ],
)
def test_text_or_binary_whichever_the_api_picks_fits_the_output_schema(
    shapes: Built, server: RecordingServer, body: bytes, ctype: str, expected: dict[str, Any]
) -> None:
    """apisetu.gov.in's certificates: ``application/pdf`` (no schema) or ``application/xml``, picked by
    a field of the request, not by ``Accept``. Either answer is what the output schema describes."""
    content, schema = _call(shapes, server, "getCertificate", "/certificate", body, ctype)
    assert content == expected
    assert _valid(schema, content)
    assert server.last.header("Accept") == "application/xml, application/pdf;q=0.5"
    assert shapes.row(_tool(shapes, "getCertificate"))["output"]["shape"] == "result"


def test_a_binary_answer_is_summarised_as_its_schema_says(shapes: Built, server: RecordingServer) -> None:
    content, schema = _call(shapes, server, "getPdf", "/pdf", b"%PDF-1.7 \x00\x01", "application/pdf")
    assert content == {"content_type": "application/pdf", "bytes": 11}
    assert _valid(schema, content)


def test_an_oversized_closed_object_is_cut_not_emptied_and_still_conforms(
    shapes: Built, server: RecordingServer
) -> None:
    answer = {"id": "c1", "notes": "short note", "blob": "x" * 5000, "tags": ["t"] * 30}
    content, schema = _call(
        shapes, server, "getClosed", "/closed", json.dumps(answer).encode(), "application/json"
    )
    assert schema.get("additionalProperties") is False and "_truncated" in schema["properties"]
    assert content["id"] == "c1" and content["notes"] == "short note"
    assert content["_truncated"]["original_bytes"] == compact_size(answer)
    assert compact_size(content) <= 400
    assert _valid(schema, content)


def test_a_single_object_over_the_budget_keeps_what_fits_and_names_what_it_dropped() -> None:
    big = {"id": "k", "a": list(range(2000)), "b": {"deep": list(range(2000))}, "c": "x" * 10}
    out, _ = enforce_budget(big, 200, keep={"id"})
    assert out["id"] == "k" and out["c"] == "x" * 10
    assert compact_size(out) <= 200
    assert set(out["_truncated"].get("omitted_members", [])) | set(out) >= {"a", "b"}
    assert "b" in out["_truncated"]["omitted_members"]


def test_a_write_only_member_of_a_closed_object_does_not_fail_the_answer(
    shapes: Built, server: RecordingServer
) -> None:
    answer = {"id": "s", "owner": {"login": "ann", "password": "hunter2"}}
    content, schema = _call(
        shapes, server, "getSecretive", "/secretive", json.dumps(answer).encode(), "application/json"
    )
    assert "password" not in schema["properties"]["owner"]["properties"]  # not an output member
    assert content["id"] == "s" and _valid(schema, content)


def test_an_error_result_carries_no_structured_content(shapes: Built, server: RecordingServer) -> None:
    server.reply("GET", "^/star$", 200, b"<html>login</html>", content_type="text/html")
    registry = Registry.from_dir(shapes.out, base_url=server.base_url)
    try:
        result = registry.call(_tool(shapes, "getStar"), {}, actor=reader(registry))
        # a login page is a success the runtime cannot read: a warning, which MCP cannot carry beside a
        # structured result, so the server sends it as an output_invalid error saying the call succeeded
        served = conforming(registry, result)
    finally:
        registry.close()
    assert result.ok and result.warnings, result.to_json()
    mcp = to_call_tool_result(served)
    assert mcp.is_error and mcp.structured_content is None
    assert mcp_json(mcp)["error"]["code"] == "output_invalid"
    assert mcp_json(mcp)["error"]["details"]["call_succeeded"] is True


def test_media_kinds() -> None:
    assert [
        media_kind(m)
        for m in (
            "application/json",
            "application/vnd.a.v1+json; charset=utf-8",
            "application/hal+json",
            "text/json",
            "*/*",
            "application/*",
            None,
            "text/plain",
            "application/xml",
            "application/pdf",
        )
    ] == ["json", "json", "json", "json", "any", "any", "any", "text", "text", "binary"]


def test_the_build_warns_where_it_guesses_the_media_type(shapes: Built) -> None:
    lines = [line for line in shapes.result.output.splitlines() if "response-media-" in line]
    assert any(
        "warning[response-media-assumed-json]" in line
        and "/paths/~1star/get/responses/200/content/*~1*" in line
        and "shapes.json:" in line
        for line in lines
    ), lines
    assert any("warning[response-media-unknown]" in line and "~1star-text" in line for line in lines), lines


# --------------------------------------------------------------------------------------------------
# the property: any value the spec's response schema admits conforms to the tool's outputSchema

_LEAVES = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer"},
        {"type": "boolean"},
        {"type": "number"},
        {"type": "string", "format": "date-time"},
    ]
)


def _schema_of(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    def obj(
        props: dict[str, dict[str, Any]], required: list[str], closed: bool, typed: bool, write_only: bool
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"properties": dict(props)}
        if typed:
            out["type"] = "object"
        if required:
            out["required"] = sorted(set(required) & set(props)) or [min(props)]
        if closed:
            out["additionalProperties"] = False
        if write_only:
            out["properties"]["secret"] = {"type": "string", "writeOnly": True}
        return out

    names = st.sampled_from(["id", "name", "items", "result", "status", "count"])
    return st.one_of(
        st.builds(
            obj,
            st.dictionaries(names, children, min_size=1, max_size=3),
            st.lists(names, max_size=2),
            st.booleans(),
            st.booleans(),
            st.booleans(),
        ),
        st.builds(lambda s: {"type": "array", "items": s}, children),
        st.builds(lambda s: {**s, "nullable": True}, children),
    )


SCHEMAS = st.recursive(_LEAVES, _schema_of, max_leaves=6)


def _values(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    base: st.SearchStrategy[Any]
    if "properties" in schema:
        props = schema["properties"]
        required = [k for k in schema.get("required", []) if k in props]
        base = st.fixed_dictionaries(
            {k: _values(props[k]) for k in required},
            optional={k: _values(v) for k, v in props.items() if k not in required},
        )
    elif schema.get("type") == "array":
        base = st.lists(_values(schema["items"]), max_size=3)
    elif schema.get("format") == "date-time":
        base = st.just("2024-05-01T12:00:00Z")
    else:
        base = {
            "string": st.text(max_size=8),
            "integer": st.integers(-(2**40), 2**40),
            "boolean": st.booleans(),
            "number": st.integers(-1000, 1000),
        }[schema["type"]]
    # OpenAPI 3.0.3: `nullable` adds null only to an explicitly given `type`
    return st.one_of(st.none(), base) if schema.get("nullable") and "type" in schema else base


@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    data=st.data(),
    schema=SCHEMAS,
    media=st.sampled_from(["application/json", "*/*", "application/vnd.x.v2+json"]),
    empty=st.booleans(),
)
def test_any_value_the_response_schema_admits_conforms_to_the_output_schema(
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    schema: dict[str, Any],
    media: str,
    empty: bool,
) -> None:
    responses: dict[str, Any] = {"200": _json(schema, media)}
    if empty:
        responses["204"] = {"description": "nothing"}
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "P", "version": "1"},
        "servers": [{"url": "https://p.example.com"}],
        "paths": {"/thing": _op("getThing", responses)},
    }
    tmp = tmp_path_factory.mktemp("prop")
    path = tmp / "p.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    built = build(tmp, path, 'include: [{match: "*"}]\n', name="p", emit="mcp,policy")
    with RecordingServer() as srv:
        registry = Registry.from_dir(built.out, base_url=srv.base_url)
        try:
            tool = _tool(built, "getThing")
            output_schema = registry.specs[tool].output_schema
            assert output_schema is not None
            validator = jsonschema_rs.Draft202012Validator(output_schema, validate_formats=True)
            answers: list[tuple[int, Any]] = [(200, data.draw(_values(schema))) for _ in range(3)]
            if empty:
                answers.append((204, None))
            for status, value in answers:
                body = None if status == 204 else json.dumps(value).encode()
                srv.reply("GET", "^/thing$", status, body, content_type="*/*" if media == "*/*" else media)
                result = conforming(registry, registry.call(tool, {}, actor=reader(registry)))
                assert result.ok, (schema, value, result.error)
                assert validator.is_valid(result.result), (schema, value, result.result)
        finally:
            registry.close()


def test_the_shape_rule_is_one_function_for_build_and_runtime() -> None:
    for schema, body, expected in (
        ({"type": "object"}, {"a": 1}, {"a": 1}),
        ({"properties": {"a": {}}}, {"a": 1}, {"result": {"a": 1}}),
        ({"type": ["object", "null"]}, None, {"result": None}),
        ({"type": "array"}, [1], {"result": [1]}),
        (None, None, {"status": 204}),
    ):
        assert shape_body(body, result_shape(schema), 204) == expected


def test_lint_reports_the_media_guess_at_the_same_place_with_the_same_severity(shapes: Built) -> None:
    from tests.support.build import run

    linted = run("lint", str(shapes.out.parent / "shapes.yaml"))
    built = {line for line in shapes.result.output.splitlines() if "response-media-" in line}
    found = {line for line in linted.output.splitlines() if "response-media-" in line}
    assert built and built == found, (built, found)
