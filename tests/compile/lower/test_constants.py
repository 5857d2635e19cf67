"""Constants of an operation: a required parameter or body member whose schema admits exactly one
value (an ``enum`` of one, a ``const``, through ``$ref``/``allOf``) is sent by the runtime and never
asked of the model. The shapes are AWS's (about an eighth of the real corpus): the JSON protocol's
``X-Amz-Target`` header, the query protocol's ``Action`` and ``Version``, and path keys that carry
a ``#fragment`` to stay distinct (``/#Action=AddRoleToDBCluster``), which must never reach the wire."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import Built, build
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer

from toolgen.compile.lower.constants import single_value
from toolgen.runtime import Actor, Registry
from toolgen.runtime.stores import MemoryReceiptStore

TARGET = "Insightsv20180227.DescribeKeys"


def _query_op(action: str, extra: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "operationId": action,
        "parameters": [
            {
                "name": "Action",
                "in": "query",
                "required": True,
                "schema": {"type": "string", "enum": [action]},
            },
            {
                "name": "Version",
                "in": "query",
                "required": True,
                "schema": {"type": "string", "enum": ["2014-10-31"]},
            },
            *extra,
        ],
        "responses": {"200": {"description": "ok"}},
    }


SPEC: dict[str, Any] = {
    "openapi": "3.0.0",
    "info": {"title": "aws-shaped", "version": "1"},
    "paths": {
        f"/#X-Amz-Target={TARGET}": {
            "post": {
                "operationId": "DescribeKeys",
                "parameters": [
                    {
                        "name": "X-Amz-Target",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string", "enum": [TARGET]},
                    },
                    {"name": "MaxResults", "in": "query", "required": False, "schema": {"type": "string"}},
                    # optional and single-valued: sending it or not means different things, so it stays
                    {
                        "name": "Verbose",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string", "enum": ["yes"]},
                    },
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/DescribeKeysRequest"}}
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/#Action=AddRoleToDBCluster": {
            "get": _query_op(
                "AddRoleToDBCluster",
                [
                    {
                        "name": "DBClusterIdentifier",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string"},
                    }
                ],
            ),
        },
        "/ping": {
            "put": {
                "operationId": "Ping",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"const": ["ping"]}}},
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/v/{version}/things": {
            "get": {
                "operationId": "ListThings",
                "parameters": [
                    {
                        "name": "version",
                        "in": "path",
                        "required": True,
                        "schema": {"$ref": "#/components/schemas/Version"},
                    }
                ],
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
    "components": {
        "schemas": {
            "Version": {"type": "string", "enum": ["v1"]},
            "Kind": {"type": "string", "enum": ["metric"]},
            "DescribeKeysRequest": {
                "type": "object",
                "required": ["Identifier", "Kind", "Mode"],
                "properties": {
                    "Identifier": {"type": "string"},
                    "Kind": {
                        "allOf": [{"$ref": "#/components/schemas/Kind"}],
                        "description": "always metric",
                    },
                    "Mode": {"type": "integer", "const": 2},
                    "Note": {"type": "string", "enum": ["x"]},
                },
            },
        }
    },
}

MAP = """tools:
  describe_keys:
    operation: DescribeKeys
    effect: write
    permission: pi:write
    approval: never
    idempotency: {key: action_id, send_as: none}
  add_role:
    operation: AddRoleToDBCluster
    effect: read
    permission: rds:read
  list_things:
    operation: ListThings
    effect: read
    permission: t:read
  ping:
    operation: Ping
    effect: write
    permission: pi:write
    approval: never
    idempotency: {key: action_id, send_as: none}
"""

ACTOR = Actor.of("t", ("pi:write", "rds:read", "t:read"))


def _spec(tmp: Path, spec: dict[str, Any] = SPEC) -> Path:
    path = tmp / "aws.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("constants")
    return build(tmp, _spec(tmp), MAP)


@pytest.fixture
def recorder() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


def _registry(built: Built, recorder: RecordingServer) -> Registry:
    return Registry.from_dir(
        built.out, base_url=recorder.base_url, receipts=MemoryReceiptStore(), cursor_key=b"c" * 32
    )


def test_the_model_is_never_asked_for_a_constant(built: Built) -> None:
    for name, absent, present in [
        (
            "preview_describe_keys",
            {"X_Amz_Target", "Kind", "Mode"},
            {"Identifier", "MaxResults", "Verbose", "Note"},
        ),
        ("add_role", {"Action", "Version"}, {"DBClusterIdentifier"}),
        ("list_things", {"version"}, set()),
        ("record_ping", {"body"}, {"action_id"}),
    ]:
        schema = built.tool("mcp", name)["inputSchema"]
        props = set(schema.get("properties", {}))
        assert not absent & props and present <= props, (name, props)
    assert set(built.tool("mcp", "preview_describe_keys")["inputSchema"]["required"]) == {"Identifier"}
    assert built.tool("mcp", "add_role")["inputSchema"]["required"] == ["DBClusterIdentifier"]


def test_policy_names_each_constant_and_the_schema_it_came_from(built: Built) -> None:
    fixed = {f["name"]: f for f in built.row("add_role")["request"]["fixed"]}
    assert fixed["Action"]["value"] == "AddRoleToDBCluster" and fixed["Action"]["in"] == "query"
    assert fixed["Version"]["source"] == "#/paths/~1#Action=AddRoleToDBCluster/get/parameters/1/schema"
    body = {f["name"]: f["value"] for f in built.row("record_describe_keys")["request"]["fixed"]}
    assert body == {"X-Amz-Target": TARGET, "Kind": "metric", "Mode": 2}
    policy_md = (built.out / "POLICY.md").read_text(encoding="utf-8")
    assert (
        "| (fixed) | query | `Action` | always | value `'AddRoleToDBCluster'`, the only value the spec admits"
        in policy_md
    )


def test_the_preview_and_the_wire_carry_the_constants(built: Built, recorder: RecordingServer) -> None:
    with _registry(built, recorder) as reg:
        preview = reg.call("preview_describe_keys", {"Identifier": "db-1"}, actor=ACTOR)
        assert preview.ok and preview.result is not None, preview.to_json()
        request = preview.result["request"]
        assert "#" not in json.dumps(request["url"])
        assert (
            [v for k, v in request["headers"].items() if k.lower() == "x-amz-target"] == [TARGET]
            if isinstance(request["headers"], dict)
            else [v for k, v in request["headers"] if k.lower() == "x-amz-target"]
        )
        done = reg.call("record_describe_keys", {"Identifier": "db-1", "action_id": "a-1"}, actor=ACTOR)
        assert done.ok, done.to_json()
        sent = recorder.last
        assert (sent.method, sent.path, sent.raw_query) == ("POST", "/", "")
        assert sent.header("X-Amz-Target") == TARGET
        assert sent.json() == {"Identifier": "db-1", "Kind": "metric", "Mode": 2}

        assert reg.call("add_role", {"DBClusterIdentifier": "c-1"}, actor=ACTOR).ok
        sent = recorder.last
        assert (sent.method, sent.path) == ("GET", "/")
        assert sorted(sent.query) == [
            ("Action", "AddRoleToDBCluster"),
            ("DBClusterIdentifier", "c-1"),
            ("Version", "2014-10-31"),
        ]

        assert reg.call("list_things", {}, actor=ACTOR).ok
        assert recorder.last.path == "/v/v1/things"

        assert reg.call("record_ping", {"action_id": "p-1"}, actor=ACTOR).ok
        assert (recorder.last.method, recorder.last.path, recorder.last.json()) == ("PUT", "/ping", ["ping"])


def test_a_constant_passed_by_the_model_is_refused(built: Built, recorder: RecordingServer) -> None:
    with _registry(built, recorder) as reg:
        result = reg.call(
            "add_role", {"DBClusterIdentifier": "c-1", "Action": "DeleteDBCluster"}, actor=ACTOR
        )
        assert not result.ok and result.error is not None and result.error.code == "invalid_arguments"
    assert recorder.requests == []


def test_an_intent_fixed_value_agrees_or_is_a_located_error(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    same = build(
        tmp_path,
        spec,
        MAP.replace("    permission: t:read\n", "    permission: t:read\n    fixed: {version: v1}\n"),
    )
    assert same.row("list_things")["request"]["fixed"] == [
        {"in": "path", "name": "version", "value": "v1", "source": ""}
    ]
    wrong = tmp_path / "w"
    wrong.mkdir()
    bad = build(
        wrong,
        spec,
        MAP.replace(
            "    permission: rds:read\n", "    permission: rds:read\n    fixed: {Version: '2013-01-01'}\n"
        ),
        expect=2,
    )
    assert (
        "error[fixed-invalid]" in bad.result.output
        and "api.yaml:15:13 (#/tools/add_role/fixed/Version)" in bad.result.output
    ), bad.result.output


def test_an_intent_fixed_value_wins_and_is_not_marked_as_the_specs(tmp_path: Path) -> None:
    built = build(
        tmp_path,
        _spec(tmp_path),
        MAP.replace(
            "    permission: rds:read\n",
            "    permission: rds:read\n    fixed: {'query:Version': '2014-10-31'}\n"
            "    args: {Action: {description: ignored}}\n",
        ),
    )
    fixed = {f["name"]: f for f in built.row("add_role")["request"]["fixed"]}
    assert fixed["Version"] == {"in": "query", "name": "Version", "value": "2014-10-31", "source": ""}
    assert "source" in fixed["Action"]


@pytest.mark.parametrize(
    "schema, expected",
    [
        ({"enum": ["a"]}, ("a",)),
        ({"const": None}, (None,)),
        ({"type": "integer", "const": 2}, (2,)),
        ({"allOf": [{"type": "string"}, {"$ref": "#/$defs/k"}], "$defs": {"k": {"enum": ["m"]}}}, ("m",)),
        ({"enum": ["a", "b"]}, None),
        ({"type": "string"}, None),
        ({"type": "integer", "enum": ["a"]}, None),  # unsatisfiable: not a constant
        ({"anyOf": [{"enum": ["a"]}, {"type": "null"}]}, None),
    ],
)
def test_single_value(schema: dict[str, Any], expected: tuple[Any] | None) -> None:
    assert single_value(schema) == expected


_VALUES = st.one_of(st.text(max_size=5), st.integers(), st.booleans())
_PARAM_SCHEMAS = st.one_of(
    st.builds(lambda v: {"type": "string", "enum": [v]}, st.text(min_size=1, max_size=5)),
    st.builds(lambda vs: {"enum": vs}, st.lists(_VALUES, min_size=1, max_size=3, unique_by=repr)),
    st.just({"type": "string"}),
    st.builds(lambda v: {"type": "integer", "enum": [v]}, st.integers()),
)


@settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.sampled_from(["query", "header", "path"]), st.booleans(), _PARAM_SCHEMAS),
        min_size=1,
        max_size=4,
    )
)
def test_no_required_input_property_admits_exactly_one_value(
    tmp_path_factory: pytest.TempPathFactory, params: list[tuple[str, bool, dict[str, Any]]]
) -> None:
    tmp = tmp_path_factory.mktemp("prop")
    parameters = [
        {"name": f"p{i}", "in": where, "required": required or where == "path", "schema": schema}
        for i, (where, required, schema) in enumerate(params)
    ]
    path = "/x" + "".join(f"/{{p{i}}}" for i, (where, _, _) in enumerate(params) if where == "path")
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "t", "version": "1"},
        "paths": {
            path: {
                "get": {
                    "operationId": "op",
                    "parameters": parameters,
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }
    built = build(tmp, _spec(tmp, spec), "tools:\n  op: {operation: op, effect: read}\n", emit="mcp,policy")
    schema = built.tool("mcp", "op")["inputSchema"]
    for name in schema.get("required", []):
        assert single_value(schema["properties"][name]) is None, (name, schema)
    fixed = {f["name"] for f in built.row("op")["request"]["fixed"]}
    for p in parameters:
        if p["required"] and single_value(p["schema"]) is not None:
            assert p["name"] in fixed
