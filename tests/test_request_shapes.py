"""The build side of request shapes: what the build says about input schemas the spec gets wrong
(located, with a remedy), and that it never emits an input schema no value satisfies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from tests.support.build import REAL, build, run

from toolgen.compile.schema.satisfiable import repair

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Wrong", "version": "1"},
    "paths": {
        "/x": {
            "post": {
                "operationId": "postX",
                "summary": "Post an x.",
                "parameters": [{"name": "kind", "in": "query", "schema": {"type": "string", "enum": [1, 2]}}],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "additionalProperties": False,
                                "required": ["a", "b"],
                                "properties": {"a": {"type": "string"}},
                            }
                        }
                    },
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/playlists": {
            "post": {
                "operationId": "createPlaylist",
                "summary": "Create a playlist.",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {"name": {"type": "string"}, "public": {"type": "boolean"}},
                            }
                        }
                    }
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/things": {
            "get": {
                "operationId": "listThings",
                "summary": "List things.",
                "parameters": [
                    {"name": "page", "in": "query", "schema": {"type": "integer"}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 500}},
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {"schema": {"type": "array", "items": {"type": "object"}}}
                        },
                    }
                },
            }
        },
    },
}


def _build(tmp_path: Path, monkeypatch: Any, spec: dict[str, Any] = SPEC) -> tuple[Any, list[dict[str, Any]]]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wrong.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    (tmp_path / "api.yaml").write_text(
        'toolgen: 1\nspec: wrong.yaml\napi: {name: wrong}\ninclude: [{match: "*", approval: never}]\n',
        encoding="utf-8",
    )
    result = run("build", "api.yaml", "--out", "out", "--emit", "mcp,policy")
    assert result.exit_code == 0, result.output
    findings = json.loads(run("lint", "api.yaml", "--format", "json").stdout)["findings"]
    return result, findings


def test_unsatisfiable_input_schemas_are_reported_located_and_repaired(
    tmp_path: Path, monkeypatch: Any
) -> None:
    result, findings = _build(tmp_path, monkeypatch)
    unsat = {f["location"]["pointer"]: f for f in findings if f["code"] == "schema-unsatisfiable"}
    enum_at = "/paths/~1x/post/parameters/0/schema/type"
    required_at = "/paths/~1x/post/requestBody/content/application~1json/schema/required"
    assert set(unsat) == {enum_at, required_at}
    for pointer, finding in unsat.items():
        assert finding["severity"] == "warning" and finding["hint"]
        assert finding["location"]["file"] == "wrong.yaml" and finding["location"]["line"] >= 1
        assert f"(#{pointer})" in result.stderr  # the build prints the same finding, located
    tools = {t["name"]: t for t in json.loads((tmp_path / "out" / "mcp.json").read_text())}
    schema = tools["preview_post_x"]["inputSchema"]
    jsonschema.validate({"kind": 1, "a": "x", "b": None}, schema, cls=jsonschema.Draft202012Validator)


def test_required_members_of_an_optional_body_are_flagged(tmp_path: Path, monkeypatch: Any) -> None:
    result, findings = _build(tmp_path, monkeypatch)
    flagged = [f for f in findings if f["code"] == "body-required-absent"]
    assert [f["location"]["pointer"] for f in flagged] == ["/paths/~1playlists/post/requestBody"]
    assert "name" in flagged[0]["message"] and "required: true" in flagged[0]["hint"]
    assert "warning[body-required-absent]" in result.stderr


def test_page_size_bounds_that_leave_no_size_are_not_paged_with_a_reason(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """`limit` must be at least 500, above the default `max_page_size` (100): the detected paging
    is dropped with a note that says why, and the tool takes `page` and `limit` as the API does."""
    _, findings = _build(tmp_path, monkeypatch)
    notes = [f for f in findings if f["code"] == "pagination-not-detected"]
    assert len(notes) == 1 and "500" in notes[0]["message"]
    tools = {t["name"]: t for t in json.loads((tmp_path / "out" / "mcp.json").read_text())}
    assert tools["list_things"]["inputSchema"]["properties"]["limit"]["minimum"] == 500


def test_an_enum_of_scalars_on_an_array_is_the_items_enum() -> None:
    node: dict[str, Any] = {"type": "array", "items": {"type": "string"}, "enum": ["live", "promotions"]}
    assert [p.keyword for p in repair(node)] == ["enum"]
    assert node == {"type": "array", "items": {"type": "string", "enum": ["live", "promotions"]}}
    jsonschema.validate(["live"], node)


SCALARS = (
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2, allow_nan=False) | st.text(max_size=2)
)
TYPES = st.lists(
    st.sampled_from(["string", "integer", "number", "boolean", "null"]), min_size=1, max_size=2, unique=True
)


@given(types=TYPES, values=st.lists(SCALARS, min_size=1, max_size=4, unique_by=lambda v: (type(v), v)))
def test_a_repaired_enum_admits_a_value_and_a_silent_one_was_satisfiable(
    types: list[str], values: list[Any]
) -> None:
    """For any `type` and `enum`: after `repair`, some non-null enum value is valid against the
    schema (when the enum has one); and `repair` reports nothing only when every value already fit."""
    node: dict[str, Any] = {"type": types[0] if len(types) == 1 else types, "enum": list(values)}
    validator = jsonschema.Draft202012Validator({"type": node["type"]})
    fitted = all(v is None or validator.is_valid(v) for v in values)
    problems = repair(node)
    assert (problems == []) == fitted
    if any(v is not None for v in values):
        repaired = jsonschema.Draft202012Validator(node)
        assert any(repaired.is_valid(v) for v in node["enum"] if v is not None), node


@pytest.mark.skipif(not (REAL / "spotify.json").is_file(), reason="../shared/specs/real is not available")
def test_spotify_create_playlist_asks_for_name_once_the_body_is_sent(tmp_path: Path) -> None:
    """Spotify's create-playlist body has no `required: true`, yet its schema requires `name`."""
    built = build(
        tmp_path,
        REAL / "spotify.json",
        'include: [{match: "POST /users/{user_id}/playlists"}]\n',
        emit="mcp,policy",
    )
    schema = built.tool("mcp", "preview_create_playlist")["inputSchema"]
    assert "name" not in schema["required"]
    assert all(deps == ["name"] for deps in schema["dependentRequired"].values())
    assert set(schema["dependentRequired"]) == {"public", "collaborative", "description"}
    jsonschema.validate({"user_id": "u"}, schema, cls=jsonschema.Draft202012Validator)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"user_id": "u", "public": True}, schema, cls=jsonschema.Draft202012Validator)


CONTAINERS = st.lists(st.integers(-3, 3) | st.text(max_size=2), max_size=3) | st.dictionaries(
    st.text(max_size=2), st.integers(-3, 3), max_size=2
)


@given(types=TYPES, values=st.lists(CONTAINERS, min_size=1, max_size=3, unique_by=json.dumps))
def test_an_enum_of_arrays_or_objects_under_a_scalar_type_becomes_a_complete_schema(
    types: list[str], values: list[Any]
) -> None:
    """`{"type": "integer", "enum": [[1], [2]]}` (a real spec's parameter): after `repair` the node
    takes the values' types, an array type gets `items` (every dialect requires them) and every
    enum value validates (the build once stopped with an internal error on this shape)."""
    node: dict[str, Any] = {"type": types[0] if len(types) == 1 else types, "enum": list(values)}
    repair(node)
    if "array" in (node["type"] if isinstance(node["type"], list) else [node["type"]]):
        assert isinstance(node.get("items"), dict)
    repaired = jsonschema.Draft202012Validator(node)
    assert all(repaired.is_valid(v) for v in node["enum"]), node


def test_a_pattern_the_runtime_cannot_compile_is_dropped_located_and_the_package_loads(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """`a{,2}` compiles in Python but not as ECMA-262 (the runtime validator's syntax); a real spec's
    parameter pattern of that form once made the generated package fail to load in the runtime."""
    from toolgen.runtime import Registry

    spec = json.loads(json.dumps(SPEC))
    spec["paths"]["/things"]["get"]["parameters"].append(
        {"name": "tag", "in": "query", "schema": {"type": "string", "pattern": "^x{,2}$"}}
    )
    result, _ = _build(tmp_path, monkeypatch, spec)
    assert "pattern" in result.output and "/parameters/2/schema" in result.output, result.output
    policy = json.loads((tmp_path / "out" / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((tmp_path / "out" / "mcp.json").read_text(encoding="utf-8"))
    tag = next(t for t in catalog if t["name"] == "list_things")["inputSchema"]["properties"]["tag"]
    assert "pattern" not in tag
    Registry(policy, catalog).close()  # every tool's schema compiles for the runtime
