"""Tests for the public helpers over converted schemas in `toolgen.compile.schema`: `object_view` (an
object schema's properties and required names), `project_schema` (a schema cut to the named fields),
`limit_depth` (a schema cut at a depth, keeping types and acceptance) and `schema_nodes` (a schema's
size in schema positions).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.schema_cases import assert_self_contained, conv, make_doc, validates

from toolgen.compile.schema import limit_depth, object_view, project_schema, schema_nodes

# --- public helpers -----------------------------------------------------------------------------


def _api(tmp_path: Path) -> dict[str, Any]:
    doc = make_doc(
        tmp_path,
        {
            "User": {
                "type": "object",
                "required": ["login", "id"],
                "properties": {
                    "login": {"type": "string"},
                    "id": {"type": "integer"},
                    "org": {
                        "type": "object",
                        "nullable": True,
                        "properties": {"name": {"type": "string"}, "url": {"type": "string"}},
                    },
                },
            },
            "Label": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "color": {"type": "string"}},
            },
            "Comment": {
                "type": "object",
                "properties": {
                    "body": {"type": "string"},
                    "replies": {"type": "array", "items": {"$ref": "#/components/schemas/Comment"}},
                    "author": {"$ref": "#/components/schemas/User"},
                },
            },
            "Issue": {
                "type": "object",
                "required": ["id", "title"],
                "properties": {
                    "id": {"type": "integer"},
                    "title": {"type": "string"},
                    "user": {"allOf": [{"$ref": "#/components/schemas/User"}], "nullable": True},
                    "labels": {"type": "array", "items": {"$ref": "#/components/schemas/Label"}},
                    "comments": {"type": "array", "items": {"$ref": "#/components/schemas/Comment"}},
                    "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
                    "owner": {"anyOf": [{"type": "string"}, {"$ref": "#/components/schemas/User"}]},
                },
            },
        },
    )
    return conv(doc, "Issue", "output")[0]


def test_object_view(tmp_path: Path) -> None:
    issue = _api(tmp_path)
    props, required = object_view(issue)  # type: ignore[misc]
    assert list(props) == ["id", "title", "user", "labels", "comments", "metadata", "owner"]
    assert required == ["id", "title"]
    assert object_view(issue["properties"]["user"]) is not None  # nullable object
    nullable_object = {"anyOf": [{"type": "object", "properties": {"a": {}}}, {"type": "null"}]}
    assert object_view(nullable_object) == ({"a": {}}, [])
    assert object_view({"type": "string"}) is None
    assert object_view({"type": "array", "items": {}}) is None
    recursive = {
        "$ref": "#/$defs/T",
        "$defs": {"T": {"type": "object", "properties": {"t": {"$ref": "#/$defs/T"}}}},
    }
    assert object_view(recursive) == ({"t": {"$ref": "#/$defs/T"}}, [])


def test_project_schema(tmp_path: Path) -> None:
    issue = _api(tmp_path)
    assert "Comment" in issue["$defs"]
    projected = project_schema(issue, ["id", "user.login", "labels.name", "metadata.env"])
    assert list(projected["properties"]) == ["id", "user", "labels", "metadata"]
    assert projected["required"] == ["id"]
    assert list(projected["properties"]["user"]["properties"]) == ["login"]
    assert projected["properties"]["user"]["type"] == ["object", "null"]
    assert projected["properties"]["user"]["required"] == ["login"]
    assert projected["properties"]["labels"]["items"]["properties"] == {"name": {"type": "string"}}
    assert projected["properties"]["metadata"]["properties"] == {"env": {"type": "string"}}
    assert "$defs" not in projected  # Comment is no longer referenced
    assert_self_contained(projected)
    assert validates(projected, {"id": 1, "user": None, "labels": [{"name": "bug"}]})
    # a union branch (string | User): the object branch is projected, the string kept
    owner = project_schema(issue, ["owner.login"])["properties"]["owner"]
    assert owner["anyOf"][0] == {"type": "string"}
    assert list(owner["anyOf"][1]["properties"]) == ["login"]
    # keeping a recursive field keeps the $defs it needs
    with_comments = project_schema(issue, ["comments.replies"])
    assert set(with_comments["$defs"]) == {"Comment"}
    assert_self_contained(with_comments)
    for bad in ("nope", "user.nope", "labels.name.x", "id.x", ""):
        with pytest.raises(KeyError) as exc:
            project_schema(issue, ["id", bad])
        assert exc.value.args[0] == bad


def test_project_schema_does_not_mutate_input(tmp_path: Path) -> None:
    issue = _api(tmp_path)
    before = json.dumps(issue, sort_keys=True)
    out = project_schema(issue, ["comments.body"])
    out["properties"]["comments"]["items"]["x"] = 1
    assert json.dumps(issue, sort_keys=True) == before


def test_limit_depth_keeps_types_and_acceptance(tmp_path: Path) -> None:
    issue = _api(tmp_path)
    cut = limit_depth(issue, 1)
    assert "$defs" not in cut  # recursion cut while walking
    user = cut["properties"]["user"]
    assert user["properties"]["org"] == {"type": ["object", "null"]}
    comments_items = cut["properties"]["comments"]["items"]
    assert comments_items == {"type": "object"}
    assert cut["properties"]["labels"]["items"] == {"type": "object"}
    zero = limit_depth(issue, 0)
    assert zero["properties"]["user"] == {"type": ["object", "null"]}
    assert zero["properties"]["owner"] == {"type": ["string", "object"]}
    assert zero["properties"]["id"] == {"type": "integer"}
    assert schema_nodes(zero) < schema_nodes(cut) < schema_nodes(issue)
    instances = [
        {"id": 1, "title": "t", "user": None, "labels": [], "comments": []},
        {
            "id": 1,
            "title": "t",
            "user": {"login": "u", "id": 2, "org": {"name": "o"}},
            "labels": [{"name": "x", "color": "red"}],
            "comments": [
                {
                    "body": "b",
                    "replies": [{"body": "c", "replies": [{"body": "d"}]}],
                    "author": {"login": "a", "id": 1, "org": None},
                }
            ],
            "metadata": {"a": "b"},
            "owner": "me",
        },
        {"id": 1, "title": "t", "owner": {"login": "x", "id": 3}},
    ]
    for depth in (0, 1, 2, 3):
        limited = limit_depth(issue, depth)
        assert_self_contained(limited)
        for instance in instances:
            assert validates(issue, instance)
            assert validates(limited, instance)
    untyped = limit_depth({"type": "object", "properties": {"a": {"properties": {"b": {}}}}}, 0)
    assert untyped["properties"]["a"] == {}  # no type: must keep accepting non-objects
    negated = limit_depth(
        {"type": "object", "properties": {"a": {"not": {"type": "object", "properties": {"b": {}}}}}}, 0
    )
    assert negated["properties"]["a"]["not"]["properties"] == {"b": {}}  # `not` is never loosened


def test_schema_nodes_counts_schema_positions_only() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"enum": [{"type": "object"}]}, "b": {"items": {}}},
        "anyOf": [{}, {}],
        "$defs": {"X": {"not": {}}},
        "default": {"properties": {"z": {}}},
    }
    assert schema_nodes(schema) == 8
