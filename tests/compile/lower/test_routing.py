"""Descriptions that route: the first line is the tool's own, then its preconditions, then the near
neighbours it is not (`toolgen.compile.lower.routing`); member descriptions are dropped from
argument schemas unless `defaults.member_descriptions` keeps them (`trim_member_descriptions`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from tests.support.build import build

from toolgen.compile.lower.text import derived_summary, trim_member_descriptions

LONG = "The long story of this member. " + "It goes on and on about many things. " * 12

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Things", "version": "1"},
    "servers": [{"url": "https://api.example.com"}],
    "paths": {
        "/things": {
            "get": {
                "operationId": "listThings",
                "summary": "List things",
                "responses": {"200": {"description": "ok"}},
            },
            "post": {
                "operationId": "createThing",
                "summary": "Create a thing",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "name": {
                                        "type": "string",
                                        "description": "Name of the thing. Shown to people.",
                                    },
                                    "address": {
                                        "type": "object",
                                        "description": "Where it is.",
                                        "properties": {
                                            "line1": {"type": "string", "description": LONG},
                                            "geo": {
                                                "type": "object",
                                                "description": "Coordinates. In degrees.",
                                                "properties": {
                                                    "lat": {"type": "number", "description": "Latitude."}
                                                },
                                            },
                                        },
                                    },
                                    "tags": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "properties": {"label": {"type": "string", "description": LONG}},
                                        },
                                    },
                                },
                            }
                        }
                    },
                },
                "responses": {"201": {"description": "created"}},
            },
        },
        "/things/{thing_id}": {
            "parameters": [
                {"name": "thing_id", "in": "path", "required": True, "schema": {"type": "string"}}
            ],
            "get": {"operationId": "getThing", "responses": {"200": {"description": "ok"}}},
            "patch": {
                "operationId": "updateThing",
                "summary": "Update a thing",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "properties": {"name": {"type": "string"}}}
                        }
                    }
                },
                "responses": {"200": {"description": "ok"}},
            },
            "delete": {
                "operationId": "deleteThing",
                "summary": "Delete a thing",
                "responses": {"204": {"description": "gone"}},
            },
        },
        "/user/starred/{owner}/{repo}": {
            "parameters": [
                {"name": "owner", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "repo", "in": "path", "required": True, "schema": {"type": "string"}},
            ],
            "put": {
                "operationId": "starRepo",
                "summary": "Star a repository",
                "responses": {"204": {"description": "starred"}},
            },
            "delete": {
                "operationId": "unstarRepo",
                "summary": "Unstar a repository",
                "responses": {"204": {"description": "unstarred"}},
            },
        },
    },
}


def _built(tmp_path: Path, body: str = 'include: [{match: "*"}]\n') -> Any:
    spec = tmp_path / "things.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    return build(tmp_path, spec, body, emit="mcp,policy")


def _descriptions(built: Any) -> dict[str, str]:
    return {t["name"]: t["description"] for t in built.json("mcp.json")}


def test_each_tool_names_its_near_neighbours_after_its_own_first_line(tmp_path: Path) -> None:
    d = _descriptions(_built(tmp_path))
    assert d["list_things"] == ("List things. Read-only. Not for one by thing_id: use get_thing.")
    # a get says "one ... by" in its first line; it names no list (that made it match requests to list)
    assert d["get_thing"] == "Get one thing by thing_id: GET /things/{thing_id}. Read-only."
    create = d["record_create_thing"]
    assert create.startswith("Create a thing. Writes (POST).")
    assert create.endswith(
        "Not for undoing it: use record_delete_thing. "
        "Not for changing an existing one: use record_update_thing."
    )
    assert d["record_update_thing"].endswith("Not for a new one: use record_create_thing.")
    assert d["record_delete_thing"].endswith("Not for undoing it: use record_create_thing.")
    # the undo of an action on the same path, both ways
    assert d["record_star_repo"].endswith("Not for undoing it: use record_unstar_repo.")
    assert d["record_unstar_repo"].endswith("Not for undoing it: use record_star_repo.")
    # a preview names its record tool and nothing else
    assert "Not for" not in d["preview_create_thing"]


def test_an_authors_own_routing_is_not_repeated(tmp_path: Path) -> None:
    body = (
        "tools:\n  list_things:\n    operation: listThings\n    effect: read\n"
        '    description: "Every thing; for one, get_thing."\n'
        "  get_thing: {operation: getThing, effect: read}\n"
        "  star: {operation: starRepo, effect: write}\n  unstar: {operation: unstarRepo, effect: write}\n"
    )
    d = _descriptions(_built(tmp_path, body))
    assert d["list_things"] == "Every thing; for one, get_thing. Read-only."
    assert d["record_star"].endswith("Not for undoing it: use record_unstar.")


def test_member_descriptions_are_dropped_and_argument_descriptions_kept(tmp_path: Path) -> None:
    built = _built(tmp_path)
    props = built.tool("mcp", "preview_create_thing")["inputSchema"]["properties"]
    assert props["name"]["description"] == "Name of the thing. Shown to people."
    assert props["address"]["description"] == "Where it is."
    assert "description" not in props["address"]["properties"]["line1"]
    assert "description" not in props["address"]["properties"]["geo"]["properties"]["lat"]
    assert "description" not in props["tags"]["items"]["properties"]["label"]


def test_member_descriptions_kept_one_level_and_cut_to_a_sentence_when_asked(tmp_path: Path) -> None:
    built = _built(tmp_path, 'defaults: {member_descriptions: true}\ninclude: [{match: "*"}]\n')
    props = built.tool("mcp", "preview_create_thing")["inputSchema"]["properties"]
    assert props["address"]["properties"]["line1"]["description"] == "The long story of this member."
    assert props["address"]["properties"]["geo"]["description"] == "Coordinates."
    assert "description" not in props["address"]["properties"]["geo"]["properties"]["lat"]
    assert props["tags"]["items"]["properties"]["label"]["description"] == "The long story of this member."


def test_derived_summary_says_the_action_in_the_paths_words() -> None:
    assert derived_summary("GET", "/ipam/vrfs/") == "List vrfs, under ipam: GET /ipam/vrfs/."
    assert (
        derived_summary("GET", "/ipam/vrfs/{id}/") == "Get one vrf by id, under ipam: GET /ipam/vrfs/{id}/."
    )
    assert (
        derived_summary("PATCH", "/dcim/devices/")
        == "Update several devices, under dcim: PATCH /dcim/devices/."
    )
    assert (
        derived_summary("POST", "/charges/{id}/capture")
        == "Capture, under charges: POST /charges/{id}/capture."
    )
    assert (
        derived_summary("DELETE", "/things/{thing_id}")
        == "Delete one thing by thing_id: DELETE /things/{thing_id}."
    )
    assert (
        derived_summary("GET", "/dcim/ip-addresses/{id}/")
        == "Get one ip address by id, under dcim: GET /dcim/ip-addresses/{id}/."
    )
    assert derived_summary("GET", "/") == "Calls GET /."
    assert derived_summary("TRACE", "/x") == "Calls TRACE /x."


_leaf = st.fixed_dictionaries(
    {"type": st.sampled_from(["string", "integer"])}, optional={"description": st.text(max_size=300)}
)
_schema = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.fixed_dictionaries(
            {
                "type": st.just("object"),
                "properties": st.dictionaries(
                    st.sampled_from(["a", "b", "description", "items"]), inner, max_size=3
                ),
            },
            optional={"description": st.text(max_size=300)},
        ),
        st.fixed_dictionaries(
            {"type": st.just("array"), "items": inner}, optional={"description": st.text(max_size=300)}
        ),
        st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=2)}),
    ),
    max_leaves=8,
)


def _strip(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: (_strip(v) if k != "properties" else {n: _strip(s) for n, s in v.items()})
            for k, v in node.items()
            if not (k == "description" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def _deepest_description(node: Any, depth: int = 0) -> int:
    if not isinstance(node, dict):
        return -1
    found = depth if isinstance(node.get("description"), str) else -1
    for key, value in node.items():
        if key == "properties":
            found = max([found, *(_deepest_description(v, depth + 1) for v in value.values())])
        elif key == "items":
            found = max(found, _deepest_description(value, depth))
        elif key == "anyOf":
            found = max([found, *(_deepest_description(v, depth) for v in value)])
    return found


@given(_schema, st.integers(min_value=0, max_value=2), st.integers(min_value=40, max_value=200))
def test_trimming_keeps_the_schema_and_only_shortens_descriptions(schema: Any, keep: int, limit: int) -> None:
    before = json.dumps(schema, sort_keys=True)
    out = trim_member_descriptions(schema, limit, keep)
    assert json.dumps(schema, sort_keys=True) == before  # a new tree: the input is unchanged
    assert _strip(out) == _strip(schema)  # only descriptions differ; property names are never touched
    assert _deepest_description(out) <= keep
    assert len(json.dumps(out, ensure_ascii=False)) <= len(json.dumps(schema, ensure_ascii=False))


def test_toolsets_made_from_paths_say_which_resources_they_hold(tmp_path: Path) -> None:
    built = _built(
        tmp_path,
        "toolsets: {user: {description: Mine., loading: eager}}\n"
        'include: [{match: "*", toolset: from_path}]\n',
    )
    toolsets = {t["name"]: t["description"] for t in built.json("policy.json")["toolsets"]}
    # things: 3 tools on /things/{thing_id} and 2 on /things; the declared toolset keeps its words
    assert toolsets == {"things": "Operations under /things. Tools for things.", "user": "Mine."}


def test_a_toolset_description_names_its_commonest_resources_within_the_limit() -> None:
    from toolgen.compile.ir import Toolset
    from toolgen.compile.lower.routing import describe_toolsets
    from toolgen.compile.lower.toolsets import TOOLSET_DESCRIPTION_MAX

    class Row:
        def __init__(self, path: str) -> None:
            self.toolset, self.composite, self.mode, self.path = "big", None, "read", path

    class FakeTool:
        def __init__(self, path: str) -> None:
            self.policy = Row(path)

    paths = [f"/x/{'r' * 30}{i}/{{id}}" for i in range(8) for _ in range(i + 1)]
    out = describe_toolsets((Toolset("big", "Big things.", "eager", "tag"),), [FakeTool(p) for p in paths])  # type: ignore[misc]
    text = out[0].description
    assert len(text) <= TOOLSET_DESCRIPTION_MAX
    assert text.startswith("Big things. Tools for " + "r" * 30 + "7, ")  # the commonest first
