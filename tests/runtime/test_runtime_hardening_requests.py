"""Runtime hardening, round 2: how arguments become the request, attacked over real loopback servers.

- a JSON-string argument naming a member twice is refused, by the call and by dialect decoding;
- a map key the form wire cannot carry is refused, and one map in any order is one preview;
- a union member is sent as the branch the validator chose, and dropping nulls never moves a value to
  another branch;
- hop-by-hop, framing and cookie header parameters are dropped at build with a located warning, and a
  cookie parameter is previewed as sent while a credential cookie stays hidden.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.policy_rows import typed_row
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import error_code

from toolgen.runtime import Actor, Registry, StaticCredentials

# -- dialect decoding ---------------------------------------------------------------------------------

STRIPE = Path(__file__).resolve().parents[2] / "generated" / "stripe"
CUSTOMER_PREVIEW = "preview_update_customer"


@pytest.fixture
def stripe(recorder: RecordingServer) -> Iterator[Registry]:
    if not (STRIPE / "policy.json").is_file():
        pytest.skip("generated/stripe not built")
    reg = Registry.from_dir(
        STRIPE,
        base_url=recorder.base_url,
        credentials=StaticCredentials({"STRIPE_SECRET_KEY": "sk_test_dummy"}),
        cursor_key=b"c" * 32,
    )
    yield reg
    reg.close()


def _preview(reg: Registry, args: dict[str, Any], dialect: str | None) -> Any:
    return reg.call(
        CUSTOMER_PREVIEW,
        args,
        actor=Actor.of("t", reg.row_json(CUSTOMER_PREVIEW)["permission"]),
        dialect=dialect,
    )


def test_a_json_string_argument_naming_a_member_twice_is_refused(stripe: Registry) -> None:
    dup = _preview(stripe, {"customer": "cus_1", "metadata": '{"tier": "gold", "tier": "free"}'}, "gemini")
    assert error_code(dup) == "invalid_arguments", dup.to_json()
    assert dup.error is not None and dup.error.details["pointer"] == "/metadata"  # refused, never merged
    entries = [{"key": "tier", "value": "gold"}, {"key": "tier", "value": "free"}]
    twice = _preview(stripe, {"customer": "cus_1", "metadata": entries}, "openai")
    assert error_code(twice) == "invalid_arguments"


def test_decoding_refuses_a_json_string_naming_a_member_twice() -> None:
    from toolgen.dialects.gemini import gemini_parameters
    from toolgen.runtime.call.dialect_args import compile_rewrites, decode_arguments
    from toolgen.runtime.errors import ToolError

    schema = {
        "type": "object",
        "properties": {"free": {"type": "object"}, "rows": {"type": "array", "items": {}}},
        "additionalProperties": False,
    }
    rewrites = compile_rewrites(gemini_parameters(schema).rewrites)
    assert decode_arguments({"free": '{"a": {"b": 1, "c": 2}}'}, rewrites) == {
        "free": {"a": {"b": 1, "c": 2}}
    }
    for sent, pointer in (
        ({"free": '{"x": 1, "x": 2}'}, "/free"),
        ({"free": '{"a": {"b": 1, "b": 1}}'}, "/free"),
        ({"rows": ['{"k": 1, "k": 1}']}, "/rows/0"),
    ):
        with pytest.raises(ToolError) as err:
            decode_arguments(sent, rewrites)
        assert err.value.details["pointer"] == pointer and "twice" in err.value.message


@pytest.mark.parametrize("key", ["", "0", "12", "[x]"])
@pytest.mark.parametrize("dialect", [None, "openai", "gemini"])
def test_a_map_key_the_form_wire_cannot_carry_is_refused(
    stripe: Registry, recorder: RecordingServer, key: str, dialect: str | None
) -> None:
    metadata: Any = {key: "v"}
    if dialect == "openai":
        metadata = [{"key": key, "value": "v"}]
    elif dialect == "gemini":
        metadata = json.dumps({key: "v"})
    res = _preview(stripe, {"customer": "cus_1", "metadata": metadata}, dialect)
    assert error_code(res) == "invalid_arguments", res.to_json()
    assert res.error is not None and res.error.details["pointer"].startswith("/metadata")
    assert not recorder.requests


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    metadata=st.dictionaries(
        st.text("abcxyz_-", min_size=1, max_size=6), st.text("uv w", max_size=4), min_size=2, max_size=5
    ),
    data=st.data(),
)
def test_one_map_in_any_order_is_one_preview(stripe: Registry, metadata: dict[str, str], data: Any) -> None:
    order = data.draw(st.permutations(sorted(metadata)))
    shuffled = {k: metadata[k] for k in order}
    ids = set()
    for dialect, sent in (
        (None, metadata),
        (None, shuffled),
        ("openai", [{"key": k, "value": v} for k, v in shuffled.items()]),
        ("gemini", json.dumps(shuffled)),
    ):
        res = _preview(stripe, {"customer": "cus_1", "metadata": sent}, dialect)
        assert res.ok and res.result is not None, res.to_json()
        ids.add(res.result["preview_id"])
    assert len(ids) == 1


# -- unions: the validator decides the branch -------------------------------------------------------------

UNION_SPEC = {
    "openapi": "3.1.0",
    "info": {"title": "U", "version": "1"},
    "servers": [{"url": "https://api.example.com"}],
    "paths": {
        "/things": {
            "post": {
                "operationId": "createThing",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["x"],
                                "properties": {
                                    "x": {
                                        "oneOf": [
                                            {
                                                "type": "object",
                                                "properties": {"a": {"type": "string"}},
                                                "additionalProperties": False,
                                            },
                                            {
                                                "type": "object",
                                                "required": ["b"],
                                                "properties": {
                                                    "b": {"type": ["string", "null"]},
                                                    "c": {"type": "string"},
                                                },
                                                "additionalProperties": False,
                                            },
                                        ]
                                    }
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        }
    },
}


@pytest.mark.parametrize(
    "sent,wire",
    [
        ({"b": None}, {"b": None}),  # branch 2: b is required and nullable, so its null is the value
        ({"b": None, "c": None}, {"b": None}),  # c is optional in branch 2: its null means "leave it out"
        ({"a": None}, {}),  # branch 1: a is optional, its null means "leave it out"
        ({"a": "s"}, {"a": "s"}),
        ({"b": "t"}, {"b": "t"}),
    ],
)
def test_a_union_member_is_sent_as_the_branch_the_validator_chose(
    tmp_path: Path, recorder: RecordingServer, sent: dict[str, Any], wire: dict[str, Any]
) -> None:
    from tests.support.build import build

    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(UNION_SPEC), encoding="utf-8")
    built = build(tmp_path, spec)
    reg = Registry(
        built.json("policy.json"), built.json("mcp.json"), base_url=recorder.base_url, cursor_key=b"k" * 32
    )
    actor = Actor.of("t", reg.row_json("record_create_thing")["permission"])
    with reg:
        shown = reg.call("preview_create_thing", {"x": sent}, actor=actor)
        assert shown.ok and shown.result is not None, shown.to_json()
        assert shown.result["request"]["body"] == {"x": wire}
        pid = shown.result["preview_id"]
        done = reg.call(
            "record_create_thing", {"preview_id": pid, "action_id": "a-1"}, actor=actor, approval=pid
        )
        assert done.ok, done.to_json()
    assert recorder.last.json() == {"x": wire}


UNION_INPUT = {
    "type": "object",
    "required": ["x"],
    "additionalProperties": False,
    "properties": {
        "x": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"a": {"type": "string"}, "n": {"type": ["integer", "null"]}},
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "required": ["b"],
                    "properties": {"b": {"type": ["string", "null"]}, "c": {"type": "string"}},
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "required": ["n"],
                    "properties": {"n": {"type": "null"}, "d": {"type": "boolean"}},
                    "additionalProperties": False,
                },
            ]
        }
    },
}


@settings(max_examples=examples(300), deadline=None)
@given(
    x=st.dictionaries(
        st.sampled_from("abcdn"), st.one_of(st.none(), st.just("s"), st.just(1), st.just(True)), max_size=4
    )
)
def test_dropping_nulls_never_moves_a_value_to_another_branch(x: dict[str, Any]) -> None:
    import jsonschema_rs

    from toolgen.runtime.call.nulls import normalise_nulls

    branches = UNION_INPUT["properties"]["x"]["anyOf"]  # type: ignore[index]
    fits = [i for i, b in enumerate(branches) if jsonschema_rs.Draft202012Validator(b).is_valid(x)]
    sent = normalise_nulls({"x": x}, UNION_INPUT)["x"]
    if fits:  # a valid value: what is sent is valid, and valid under a branch the value was valid under
        after = [i for i, b in enumerate(branches) if jsonschema_rs.Draft202012Validator(b).is_valid(sent)]
        assert set(after) & set(fits), (x, sent, fits, after)
        assert all(sent.get(k, "absent") == v for k, v in x.items() if v is not None)


# -- header parameters that are never arguments ---------------------------------------------------------------

HEADERS_SPEC = """openapi: 3.1.0
info: {title: H, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /reports:
    get:
      operationId: listReports
      parameters:
        - {name: Transfer-Encoding, in: header, schema: {type: string}}
        - {name: Connection, in: header, required: true, schema: {type: string}}
        - {name: Keep-Alive, in: header, schema: {type: string}}
        - {name: TE, in: header, schema: {type: string}}
        - {name: Cookie, in: header, schema: {type: string}}
        - {name: X-Trace, in: header, schema: {type: string}}
        - {name: theme, in: cookie, schema: {type: string}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
"""


def test_hop_by_hop_framing_and_cookie_headers_are_dropped_at_build_with_a_located_warning(
    tmp_path: Path, recorder: RecordingServer
) -> None:
    from tests.support.build import build

    spec = tmp_path / "spec.yaml"
    spec.write_text(HEADERS_SPEC, encoding="utf-8")
    built = build(tmp_path, spec)
    schema = built.tool("mcp", "list_reports")["inputSchema"]
    assert sorted(schema["properties"]) == ["X_Trace", "theme"], schema
    report = built.result.output + (built.out / "REPORT.md").read_text(encoding="utf-8")
    for name, line in (
        ("Transfer-Encoding", 9),
        ("Connection", 10),
        ("Keep-Alive", 11),
        ("TE", 12),
        ("Cookie", 13),
    ):
        assert f"header parameter {name!r}" in report, name
        assert f"spec.yaml:{line}:" in report, (name, line)
    assert "header-reserved" in report and "'X-Trace'" not in report

    reg = Registry(
        built.json("policy.json"), built.json("mcp.json"), base_url=recorder.base_url, cursor_key=b"k" * 32
    )
    with reg:
        res = reg.call(
            "list_reports",
            {
                "X_Trace": "t-1",
                "theme": "dark",
                "Transfer_Encoding": "chunked",
                "connection": "keep-alive, x-trace",
            },
            actor=Actor.of("t", reg.row_json("list_reports")["permission"]),
        )
        assert error_code(res) == "invalid_arguments"  # not arguments: the closed schema refuses them
        ok = reg.call(
            "list_reports",
            {"X_Trace": "t-1", "theme": "dark"},
            actor=Actor.of("t", reg.row_json("list_reports")["permission"]),
        )
        assert ok.ok, ok.to_json()
    sent = recorder.last
    assert sent.header("Cookie") == "theme=dark" and sent.header("X-Trace") == "t-1"
    assert sent.header("Transfer-Encoding") is None and sent.body == b""
    assert (sent.header("Connection") or "").lower() in ("", "keep-alive", "close")


def test_a_cookie_parameter_is_previewed_as_sent_and_a_credential_cookie_stays_hidden() -> None:
    from toolgen.runtime.call.credentials import Injected
    from toolgen.runtime.call.request import build_request

    row = {
        "operation": {"method": "POST", "path": "/reports"},
        "request": {
            "encoding": "none",
            "bindings": [
                {"arg": "theme", "in": "cookie", "name": "theme", "required": False, "null": "omit"}
            ],
        },
    }
    built = build_request(typed_row(row), {"theme": "dark"}, base_url="https://api.test")
    assert built.display()["headers"]["Cookie"] == "theme=dark"  # what the approver approves
    wire = built.with_credentials(Injected(cookies={"sid": "s3cr3t"}, secret_values=["s3cr3t"]))
    assert ("Cookie", "theme=dark; sid=s3cr3t") in wire.headers
    assert wire.display()["headers"]["Cookie"] == "[redacted]"
    smuggle = dict(
        row,
        request={
            "encoding": "none",
            "bindings": [
                {"arg": "te", "in": "header", "name": "Transfer-Encoding", "required": False, "null": "omit"}
            ],
        },
    )
    with pytest.raises(ValueError):  # an old policy.json holding one: refused, nothing built
        build_request(typed_row(smuggle), {"te": "chunked"}, base_url="https://api.test")
