"""The requests the runtime sends are the requests the spec asks for.

A hand-made spec reproduces shapes real APIs have (checked against a validating mock server, Stoplight
Prism): a required ``page`` parameter, bounded page sizes, free-form and empty required bodies, an
array body offered as JSON (``*/*``) and multipart, an optional body whose schema requires a member
(Spotify's create-playlist), a ``format: byte`` member, required ``Content-Type``/``Accept`` header
parameters on a request without a body (VTEX), a required `Accept` naming a type the answer lacks, a
required multipart body of optional parts (SureVoIP), a required `User-Agent` (bunq), a required header whose default is empty (Ticketmaster). Its tools are built, called through the
runtime against a recording loopback server, and every recorded request is judged against the spec
(`tests.support.spec_judge`), as Prism judges it. A hypothesis property states the invariant: any
arguments valid against a tool's input schema give a request the spec accepts.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.records import call_record
from tests.support.spec_judge import violations

from toolgen.cli import main
from toolgen.policy.format import from_json
from toolgen.runtime import Actor, MemoryReceiptStore, Registry
from toolgen.runtime.call.nulls import normalise_nulls
from toolgen.runtime.call.request import USER_AGENT, build_request
from toolgen.runtime.errors import ToolError

ITEMS = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object"}}}}
OK = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
LIST = {"200": {"description": "ok", "content": {"application/json": {"schema": ITEMS}}}}


def _post(op_id: str, body: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"post": {"operationId": op_id, "summary": op_id, "requestBody": body, "responses": OK, **extra}}


SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Shapes", "version": "1"},
    "paths": {
        "/things": {
            "get": {
                "operationId": "listThings",
                "summary": "List things.",
                "responses": LIST,
                "parameters": [
                    {
                        "name": "page",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "integer", "minimum": 1},
                    },
                    {
                        "name": "per_page",
                        "in": "query",
                        "schema": {"type": "integer", "minimum": 5, "maximum": 50},
                    },
                ],
            }
        },
        "/zero": {
            "get": {
                "operationId": "listZero",
                "summary": "List from page 0.",
                "responses": LIST,
                "parameters": [
                    {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 0, "default": 0}}
                ],
            }
        },
        "/status": {
            "get": {
                "operationId": "getStatus",
                "summary": "Status.",
                "responses": OK,
                "parameters": [
                    {
                        "name": "Content-Type",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string", "default": "application/json; charset=utf-8"},
                    },
                    {
                        "name": "Accept",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string", "enum": ["application/vnd.shapes+json"]},
                    },
                ],
            }
        },
        "/agent": {
            "get": {
                "operationId": "getAgent",
                "summary": "Agent.",
                "responses": OK,
                "parameters": [
                    {"name": "User-Agent", "in": "header", "required": True, "schema": {"type": "string"}}
                ],
            }
        },
        "/agent/app": {
            "get": {
                "operationId": "getAgentApp",
                "summary": "Agent app.",
                "responses": OK,
                "parameters": [
                    {
                        "name": "User-Agent",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string", "example": "shapes-client/1.0"},
                    }
                ],
            }
        },
        "/agent/named": {
            "get": {
                "operationId": "getAgentNamed",
                "summary": "Agent named.",
                "responses": OK,
                "parameters": [
                    {
                        "name": "User-Agent",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string"},
                        "examples": {"app": {"value": "named-client/3"}},
                    }
                ],
            }
        },
        "/agent/pinned": {
            "get": {
                "operationId": "getAgentPinned",
                "summary": "Agent pinned.",
                "responses": OK,
                "parameters": [
                    {
                        "name": "User-Agent",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string", "pattern": "^[a-z-]+/[0-9]+$"},
                    }
                ],
            }
        },
        "/structure": {
            "get": {
                "operationId": "getStructure",
                "summary": "Structure.",
                "responses": OK,
                "parameters": [
                    {
                        "name": "Accept",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string", "default": "application/vnd.shapes.v10+json"},
                    }
                ],
            }
        },
        "/traced": {
            "get": {
                "operationId": "getTraced",
                "summary": "Traced.",
                "responses": OK,
                "parameters": [
                    {
                        "name": "X-Correlation-Id",
                        "in": "header",
                        "required": True,
                        "schema": {"type": "string", "default": ""},
                    }
                ],
            }
        },
        "/free": _post(
            "postFree", {"required": True, "content": {"application/json": {"schema": {"type": "object"}}}}
        ),
        "/anything": _post(
            "postAnything", {"required": True, "content": {"application/json": {"schema": {}}}}
        ),
        "/empty": _post(
            "postEmpty",
            {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {"type": "object", "properties": {}, "additionalProperties": False}
                    }
                },
            },
        ),
        "/tags": _post(
            "postTags",
            {
                "required": True,
                "content": {
                    "multipart/form-data": {"schema": {"type": "array", "items": {"type": "string"}}},
                    "*/*": {"schema": {"type": "array", "items": {"type": "string"}}},
                },
            },
        ),
        "/users/{user_id}/playlists": {
            "parameters": [{"name": "user_id", "in": "path", "required": True, "schema": {"type": "string"}}],
            **_post(
                "createPlaylist",
                {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "public": {"type": "boolean"},
                                    "description": {"type": "string"},
                                },
                            }
                        }
                    }
                },
            ),
        },
        "/announcements": _post(
            "postAnnouncement",
            {
                "required": True,
                "content": {
                    "multipart/form-data": {
                        "schema": {"type": "object", "properties": {"description": {"type": "string"}}}
                    }
                },
            },
        ),
        "/options": _post(
            "postOptions",
            {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {"type": "object", "properties": {"verbose": {"type": "boolean"}}}
                    }
                },
            },
        ),
        "/episodes": {
            "put": {
                "operationId": "saveEpisodes",
                "summary": "Save episodes.",
                "responses": OK,
                "parameters": [
                    {
                        "name": "tags",
                        "in": "query",
                        "required": True,
                        "explode": False,
                        "schema": {"type": "array", "items": {"type": "string"}},
                    }
                ],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "additionalProperties": True,
                                "required": ["uris"],
                                "properties": {"ids": {"type": "array", "items": {"type": "string"}}},
                            }
                        }
                    }
                },
            }
        },
        "/blobs": _post(
            "putBlob",
            {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "required": ["data"],
                            "properties": {"data": {"type": "string", "format": "byte"}},
                        }
                    }
                },
            },
        ),
    },
}
INTENT = (
    "toolgen: 1\nspec: shapes.yaml\napi: {name: shapes}\n"
    "tools:\n  get_agent_pinned: {operation: getAgentPinned, effect: read, fixed: {User-Agent: my-agent/2}}\n"
    'include: [{match: "*", approval: never}]\n'
)
ACTOR = Actor.of("t", ["shapes:read", "shapes:write"])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shapes")
    (root / "shapes.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False), encoding="utf-8")
    (root / "api.yaml").write_text(INTENT, encoding="utf-8")
    result = CliRunner().invoke(
        main, ["build", str(root / "api.yaml"), "--out", str(root / "out"), "-q", "--emit", "mcp,policy"]
    )
    assert result.exit_code == 0, result.output
    return root / "out"


@pytest.fixture
def reg(built: Path, recorder: RecordingServer) -> Iterator[Registry]:
    registry = Registry.from_dir(built, base_url=recorder.base_url, receipts=MemoryReceiptStore())
    yield registry
    registry.close()


def _tool(reg: Registry, operation_id: str) -> str:
    return next(
        name
        for name, spec in reg.specs.items()
        if spec.row.operation_id == operation_id and spec.row.mode in ("read", "record")
    )


def _call(reg: Registry, recorder: RecordingServer, operation_id: str, args: dict[str, Any]) -> Any:
    tool = _tool(reg, operation_id)
    idem = reg.row_json(tool).get("idempotency")
    if idem:  # a write: a fresh idempotency key per call
        args = {**args, idem["arg"]: uuid.uuid4().hex}
    result = call_record(reg, tool, args, actor=ACTOR)
    assert result.ok, result.to_json()
    return result


def _judged(recorder: RecordingServer, template: str) -> list[str]:
    last = recorder.last
    url = "http://x" + last.path + ("?" + last.raw_query if last.raw_query else "")
    return violations(SPEC, last.method, template, url, last.headers, last.body)


def test_first_page_sends_the_required_page_and_the_next_counts_from_it(
    reg: Registry, recorder: RecordingServer
) -> None:
    recorder.reply("GET", r"^/things$", body={"items": [{}] * 20})
    first = _call(reg, recorder, "listThings", {})
    assert ("page", "1") in recorder.last.query and ("per_page", "20") in recorder.last.query
    assert _judged(recorder, "/things") == []
    _call(reg, recorder, "listThings", {"cursor": first.result["next_cursor"]})
    assert ("page", "2") in recorder.last.query


def test_page_size_keeps_the_limit_parameter_bounds(reg: Registry, recorder: RecordingServer) -> None:
    schema = reg.specs[_tool(reg, "listThings")].input_schema["properties"]["page_size"]
    assert (schema["minimum"], schema["maximum"]) == (5, 50)
    refused = reg.call(_tool(reg, "listThings"), {"page_size": 2}, actor=ACTOR)
    assert refused.error is not None and refused.error.code == "invalid_arguments"
    assert not recorder.requests
    _call(reg, recorder, "listThings", {"page_size": 5})
    assert ("per_page", "5") in recorder.last.query and _judged(recorder, "/things") == []


def test_an_optional_page_from_zero_is_left_to_the_api_and_counted_from_zero(
    reg: Registry, recorder: RecordingServer
) -> None:
    recorder.reply("GET", r"^/zero$", body={"items": [{}] * 20})
    first = _call(reg, recorder, "listZero", {})
    assert [k for k, _ in recorder.last.query] == []
    _call(reg, recorder, "listZero", {"cursor": first.result["next_cursor"]})
    assert recorder.last.query == [("page", "1")]


def test_required_content_type_and_accept_headers_are_sent(reg: Registry, recorder: RecordingServer) -> None:
    _call(reg, recorder, "getStatus", {})
    assert recorder.last.header("Content-Type") == "application/json; charset=utf-8"
    assert recorder.last.header("Accept") == "application/vnd.shapes+json"
    assert _judged(recorder, "/status") == []


@pytest.mark.parametrize(
    "operation_id,template,agent",
    [
        ("getAgent", "/agent", USER_AGENT),  # bunq: required, no value stated: the runtime's own
        ("getAgentApp", "/agent/app", "shapes-client/1.0"),  # the schema's example
        ("getAgentNamed", "/agent/named", "named-client/3"),  # the parameter's first named example
        ("getAgentPinned", "/agent/pinned", "my-agent/2"),  # the intent map's `fixed:`
        ("getStatus", "/status", USER_AGENT),  # no User-Agent parameter: the runtime's own all the same
    ],
)
def test_a_user_agent_is_always_sent_and_never_an_argument(
    reg: Registry, recorder: RecordingServer, operation_id: str, template: str, agent: str
) -> None:
    tool = _tool(reg, operation_id)
    assert not any("agent" in name.lower() for name in reg.specs[tool].input_schema.get("properties", {}))
    _call(reg, recorder, operation_id, {})
    assert recorder.last.header("User-Agent") == agent
    assert _judged(recorder, template) == []


def test_a_fixed_user_agent_the_parameter_refuses_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "shapes.yaml").write_text(yaml.safe_dump(SPEC, sort_keys=False), encoding="utf-8")
    (tmp_path / "api.yaml").write_text(INTENT.replace("my-agent/2", "My Agent 2"), encoding="utf-8")
    result = CliRunner().invoke(
        main, ["build", str(tmp_path / "api.yaml"), "--out", str(tmp_path / "out"), "-q"]
    )
    assert (
        result.exit_code == 2 and "error[fixed-invalid]" in result.output and "api.yaml:5:" in result.output
    ), result.output
    assert not (tmp_path / "out").exists()


def test_a_required_accept_the_answer_does_not_offer_also_names_one_it_does(
    reg: Registry, recorder: RecordingServer
) -> None:
    """VTEX asks for ``Accept: application/vnd.vtex.ds.v10+json`` (any string allowed) and answers
    ``application/json``: a negotiating server (Prism: 406) finds no type it has in the stated one
    alone. An Accept limited to an enum keeps its value (`getStatus` above)."""
    _call(reg, recorder, "getStructure", {})
    assert recorder.last.header("Accept") == "application/vnd.shapes.v10+json, application/json"
    assert _judged(recorder, "/structure") == []


def test_a_required_header_is_never_sent_empty(reg: Registry, recorder: RecordingServer) -> None:
    """Ticketmaster's required TMPS-Correlation-Id defaults to "": sent empty, Prism (like many servers
    and proxies) takes the header as missing."""
    tool = _tool(reg, "getTraced")
    schema = reg.specs[tool].input_schema["properties"]["X_Correlation_Id"]
    assert schema["minLength"] == 1 and "default" not in schema
    refused = reg.call(tool, {"X_Correlation_Id": ""}, actor=ACTOR)
    assert refused.error is not None and refused.error.code == "invalid_arguments" and not recorder.requests
    _call(reg, recorder, "getTraced", {"X_Correlation_Id": "c-1"})
    assert recorder.last.header("X-Correlation-Id") == "c-1" and _judged(recorder, "/traced") == []


@pytest.mark.parametrize(
    "operation_id,template,args,sent",
    [
        ("postFree", "/free", {"body": {"a": 1}}, {"a": 1}),
        ("postAnything", "/anything", {"body": [1, "x"]}, [1, "x"]),
        ("postEmpty", "/empty", {}, {}),
        (
            "postOptions",
            "/options",
            {},
            {},
        ),  # a required body with optional members only: {} when none is given
    ],
)
def test_a_required_free_form_body_is_an_argument_and_is_sent(
    reg: Registry,
    recorder: RecordingServer,
    operation_id: str,
    template: str,
    args: dict[str, Any],
    sent: Any,
) -> None:
    spec = reg.specs[_tool(reg, operation_id)]
    assert ("body" in spec.input_schema.get("required", [])) == ("body" in args)
    _call(reg, recorder, operation_id, args)
    assert recorder.last.json() == sent
    assert _judged(recorder, template) == []


def test_a_required_multipart_body_of_optional_parts_is_sent_without_parts(
    reg: Registry, recorder: RecordingServer
) -> None:
    """SureVoIP's upload: a required multipart body whose parts are all optional; with none given it
    is still sent (a closing boundary), as the spec requires a body."""
    _call(reg, recorder, "postAnnouncement", {})
    assert (recorder.last.header("Content-Type") or "").startswith("multipart/form-data; boundary=")
    assert recorder.last.body.endswith(b"--\r\n") and b"Content-Disposition" not in recorder.last.body
    _call(reg, recorder, "postAnnouncement", {"description": "hello"})
    assert b'name="description"' in recorder.last.body


def test_an_array_body_offered_as_json_is_sent_as_json(reg: Registry, recorder: RecordingServer) -> None:
    _call(reg, recorder, "postTags", {"body": ["a", "b"]})
    assert recorder.last.header("Content-Type") == "application/json"
    assert recorder.last.json() == ["a", "b"]
    assert _judged(recorder, "/tags") == []


def test_required_members_of_an_optional_body_are_required_once_the_body_is_sent(
    reg: Registry, recorder: RecordingServer
) -> None:
    tool = _tool(reg, "createPlaylist")
    schema = reg.specs[tool].input_schema
    assert "name" not in schema["required"]
    assert schema["dependentRequired"] == {"public": ["name"], "description": ["name"]}
    refused = reg.call(tool, {"user_id": "u", "public": True, "action_id": "k"}, actor=ACTOR)
    assert refused.error is not None and refused.error.code == "invalid_arguments"
    _call(reg, recorder, "createPlaylist", {"user_id": "u", "public": True, "name": "n"})
    assert _judged(recorder, "/users/{user_id}/playlists") == []
    _call(reg, recorder, "createPlaylist", {"user_id": "u"})  # no member at all: no body, as the spec allows
    assert recorder.last.body == b"" and _judged(recorder, "/users/{user_id}/playlists") == []


def test_an_undeclared_required_member_is_an_argument_and_a_required_array_has_a_value(
    reg: Registry, recorder: RecordingServer
) -> None:
    """Spotify's save-episodes body requires `uris` without declaring it (the object admits any
    member); `type` of its search is a required array, which an empty list would leave off the wire."""
    tool = _tool(reg, "saveEpisodes")
    schema = reg.specs[tool].input_schema
    assert "uris" in schema["properties"] and schema["dependentRequired"]["ids"] == ["uris"]
    assert schema["properties"]["tags"]["minItems"] == 1
    _call(reg, recorder, "saveEpisodes", {"tags": ["a"], "ids": ["1"], "uris": ["u:1"]})
    assert recorder.last.json() == {"ids": ["1"], "uris": ["u:1"]}
    assert _judged(recorder, "/episodes") == []


def test_a_byte_member_must_be_base64(reg: Registry, recorder: RecordingServer) -> None:
    tool = _tool(reg, "putBlob")
    data = reg.specs[tool].input_schema["properties"]["data"]
    assert data["contentEncoding"] == "base64" and "pattern" in data
    refused = reg.call(tool, {"data": "not base64!", "action_id": "k"}, actor=ACTOR)
    assert refused.error is not None and refused.error.code == "invalid_arguments"
    _call(reg, recorder, "putBlob", {"data": base64.b64encode(b"\x00\xffhi").decode()})
    assert _judged(recorder, "/blobs") == []


# --- the property: valid arguments, valid request --------------------------------------------------

JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids, max_size=3),
    max_leaves=6,
)


def _values(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values for the schema shapes the spec above yields (anything else: any JSON value)."""
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else list(kind or [])
    strategies: list[st.SearchStrategy[Any]] = []
    if "null" in kinds:
        strategies.append(st.none())
    if "string" in kinds:
        strategies.append(
            st.binary(max_size=6).map(lambda b: base64.b64encode(b).decode())
            if schema.get("contentEncoding") == "base64"
            else st.text(min_size=1, max_size=6)
        )
    if "integer" in kinds:
        strategies.append(st.integers(schema.get("minimum", -10), schema.get("maximum", 10**6)))
    if "boolean" in kinds:
        strategies.append(st.booleans())
    if "array" in kinds:
        strategies.append(st.lists(_values(schema.get("items", {})), max_size=3))
    if "object" in kinds:
        strategies.append(st.dictionaries(st.text(min_size=1, max_size=3), JSON_VALUE, max_size=3))
    return st.one_of(strategies) if strategies else JSON_VALUE


@st.composite
def _arguments(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    required = set(schema.get("required", []))
    out = {}
    for name, sub in schema.get("properties", {}).items():
        if name in required or draw(st.booleans()):
            out[name] = draw(_values(sub))
    return out


NON_PAGED = [
    "postFree",
    "postAnything",
    "postEmpty",
    "postOptions",
    "postTags",
    "createPlaylist",
    "putBlob",
    "saveEpisodes",
]
TEMPLATES = {
    op[m]["operationId"]: path for path, op in SPEC["paths"].items() for m in ("post", "put") if m in op
}


@pytest.mark.parametrize("operation_id", NON_PAGED)
@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_valid_arguments_give_a_request_the_spec_accepts(
    built: Path, operation_id: str, data: st.DataObject
) -> None:
    catalog = {t["name"]: t for t in json.loads((built / "mcp.json").read_text(encoding="utf-8"))}
    rows = json.loads((built / "policy.json").read_text(encoding="utf-8"))["tools"]
    row = next(r for r in rows if r["operation"]["id"] == operation_id and r["mode"] == "preview")
    schema = catalog[row["tool"]]["inputSchema"]
    args = normalise_nulls(
        data.draw(_arguments(schema)), schema, set()
    )  # as the runtime: nulls, then validation
    assume(jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).is_valid(args))
    try:
        request = build_request(
            from_json(json.loads((built / "policy.json").read_text(encoding="utf-8"))).row(row["tool"]),  # type: ignore[arg-type]
            args,
            base_url="http://api.test",
        )
    except ToolError as refused:  # a path value of "", "." or "..": refused on purpose (HTTP collapses it)
        pointer = refused.details.get("pointer", "")
        assert refused.code == "invalid_arguments" and args[pointer.lstrip("/")] in ("", ".", ".."), refused
        return
    problems = violations(
        SPEC, request.method, TEMPLATES[operation_id], request.url, dict(request.headers), request.content
    )
    assert problems == [], (args, request.url, request.content)
