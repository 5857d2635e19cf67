"""The dialect views' simplification (`toolgen.dialects._simplify`) must accept exactly the values the
view accepted before it: every rewrite is tried against values valid and invalid under either side."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from tests.support.profiles import examples

from toolgen.dialects._simplify import repeats_name, simplify_schema
from toolgen.dialects.mcp import PREVIEW_OUTPUT_SCHEMA, mcp_input_schema


def valid(schema: Any, value: Any) -> bool:
    return bool(
        Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).is_valid(value)
    )


JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.sampled_from([0.5, -1.5, 2.0]),
        st.text(alphabet="ab", max_size=4),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=3),
    ),
    max_leaves=6,
)

TYPES = ["string", "integer", "number", "boolean", "null", "array", "object"]


@st.composite
def leaf(draw: st.DrawFn) -> dict[str, Any]:
    t = draw(
        st.one_of(
            st.sampled_from(TYPES), st.lists(st.sampled_from(TYPES), min_size=1, max_size=3, unique=True)
        )
    )
    out: dict[str, Any] = {"type": t}
    types = t if isinstance(t, list) else [t]
    if "string" in types and draw(st.booleans()):
        out["maxLength"] = draw(st.integers(0, 3))
    if ("integer" in types or "number" in types) and draw(st.booleans()):
        out["minimum"] = draw(st.integers(-2, 2))
    if "array" in types and draw(st.booleans()):
        out["items"] = {"type": draw(st.sampled_from(TYPES))}
    if "object" in types and draw(st.booleans()):
        out["properties"] = {
            "a": {
                "type": draw(st.sampled_from(TYPES)),
                "description": draw(st.sampled_from(["a", "A.", "the a"])),
            }
        }
        if draw(st.booleans()):
            out["required"] = ["a"]
    if draw(st.booleans()):
        out["enum"] = draw(st.lists(JSON_VALUES, min_size=1, max_size=3, unique_by=json.dumps))
    if draw(st.integers(0, 3)) == 0:
        out = {"type": out["type"]}  # bare types are what the collapses act on
    return out


SCHEMAS = st.recursive(
    leaf(),
    lambda children: st.one_of(
        st.builds(
            lambda key, bs, desc: {key: bs, **({"description": desc} if desc else {})},
            st.sampled_from(["anyOf", "oneOf"]),
            st.lists(children, min_size=1, max_size=3),
            st.sampled_from([None, "d"]),
        ),
        st.builds(
            lambda props: {"type": "object", "properties": props},
            st.dictionaries(st.sampled_from(["a", "b"]), children, max_size=2),
        ),
        st.builds(lambda items: {"type": "array", "items": items}, children),
    ),
    max_leaves=8,
)


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMAS, st.lists(JSON_VALUES, min_size=8, max_size=8), st.booleans())
def test_simplified_view_accepts_exactly_the_same_values(
    schema: dict[str, Any], values: list[Any], multi: bool
) -> None:
    simple = simplify_schema(schema, multi_type=multi)
    for value in values:
        assert valid(simple, value) == valid(schema, value), (value, schema, simple)


SMALL_TYPES = ["string", "integer", "number", "null"]


@st.composite
def small_branch(draw: st.DrawFn) -> dict[str, Any]:
    t = draw(
        st.one_of(
            st.sampled_from(SMALL_TYPES),
            st.lists(st.sampled_from(SMALL_TYPES), min_size=1, max_size=2, unique=True),
        )
    )
    out: dict[str, Any] = {"type": t}
    extra = draw(st.sampled_from([None, "maxLength", "minimum", "enum", "description"]))
    if extra == "maxLength":
        out["maxLength"] = 1
    elif extra == "minimum":
        out["minimum"] = 1
    elif extra == "enum":
        out["enum"] = draw(
            st.lists(st.sampled_from(["a", "ab", 1, 2, 1.5, None]), min_size=1, max_size=2, unique=True)
        )
    elif extra == "description":
        out["description"] = "x"
    return out


@st.composite
def unions(draw: st.DrawFn) -> dict[str, Any]:
    branches = draw(
        st.lists(
            st.one_of(
                small_branch(),
                st.builds(lambda bs: {"anyOf": bs}, st.lists(small_branch(), min_size=1, max_size=2)),
            ),
            min_size=1,
            max_size=3,
        )
    )
    out: dict[str, Any] = {draw(st.sampled_from(["anyOf", "oneOf"])): branches}
    sibling = draw(st.sampled_from([None, "type", "enum", "description", "maxLength"]))
    if sibling == "type":
        out["type"] = draw(st.sampled_from(SMALL_TYPES))
    elif sibling == "enum":
        out["enum"] = ["a", 1, None]
    elif sibling == "description":
        out["description"] = "d"
    elif sibling == "maxLength":
        out["maxLength"] = 1
    return out


@settings(max_examples=examples(800), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(unions(), st.booleans())
def test_simplified_unions_accept_exactly_the_same_values(schema: dict[str, Any], multi: bool) -> None:
    simple = simplify_schema(schema, multi_type=multi)
    values: tuple[Any, ...] = (None, "a", "ab", "abc", 0, 1, 2, 1.5, -1, True, [], {})
    for value in values:
        assert valid(simple, value) == valid(schema, value), (value, schema, simple)


@pytest.mark.parametrize(
    "schema, expected",
    [
        (
            {
                "anyOf": [{"oneOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "null"}],
                "description": "d",
            },
            {"description": "d", "type": ["string", "integer", "null"]},
        ),
        (
            {"anyOf": [{"type": "string", "maxLength": 3, "enum": ["a"]}, {"type": "null"}]},
            {"type": ["string", "null"], "maxLength": 3, "enum": ["a", None]},
        ),
        (
            {"oneOf": [{"type": "string"}, {"type": "object", "properties": {"name": {"type": "string"}}}]},
            {"type": ["object", "string"], "properties": {"name": {"type": "string"}}},
        ),
    ],
)
def test_collapses(schema: dict[str, Any], expected: dict[str, Any]) -> None:
    assert simplify_schema(schema) == expected


@pytest.mark.parametrize(
    "schema",
    [
        {"oneOf": [{"type": "number"}, {"type": "integer"}]},  # overlapping: oneOf rejects integers
        {
            "anyOf": [{"type": "string", "maxLength": 1}, {"type": "string"}]
        },  # the bare branch widens the other
        {"anyOf": [{"type": "integer", "minimum": 3}, {"type": "number"}]},  # integer is a number
        {"anyOf": [{"type": "string"}, {"type": "null"}], "type": "string"},  # a sibling type intersects
        {"anyOf": [{"type": "string", "const": "x"}, {"type": "null"}]},
        {"anyOf": [{"type": "string", "description": "s"}, {"type": "null"}], "description": "d"},
    ],
)
def test_unsafe_shapes_are_left_alone(schema: dict[str, Any]) -> None:
    simple = simplify_schema(schema)
    assert "anyOf" in simple or "oneOf" in simple, simple


def test_multi_type_arrays_only_where_the_dialect_takes_them() -> None:
    schema = {"anyOf": [{"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "null"}]}
    assert simplify_schema(schema, multi_type=False) == {
        "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]
    }
    assert simplify_schema({"anyOf": [{"type": "string"}, {"type": "null"}]}, multi_type=False) == {
        "type": ["string", "null"]
    }


def test_refs_into_moved_nodes_keep_the_structure() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"anyOf": [{"anyOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "null"}]},
            "b": {"$ref": "#/properties/a/anyOf/0"},
        },
    }
    assert simplify_schema(schema) == schema
    defs = {
        "type": "object",
        "properties": {"b": {"$ref": "#/$defs/x"}},
        "$defs": {"x": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
    }
    assert simplify_schema(defs)["$defs"]["x"] == {"type": ["string", "null"]}


@pytest.mark.parametrize(
    "name, description, repeats",
    [
        ("title", "Title", True),
        ("page_size", "Page size.", True),
        ("dry-run", "dry run", True),
        ("title", "The title of the issue.", False),
        ("x", "", False),
        ("", "", False),
        ("id", None, False),
    ],
)
def test_name_only_descriptions(name: str, description: Any, repeats: bool) -> None:
    assert repeats_name(name, description) is repeats


def test_name_only_description_dropped_in_mcp_view_only_for_properties() -> None:
    canonical = {
        "type": "object",
        "description": "Object",
        "properties": {
            "state": {"type": "string", "description": "State."},
            "body": {"type": "string", "description": "Text."},
        },
    }
    view = mcp_input_schema(canonical).schema
    assert "description" not in view["properties"]["state"]
    assert view["properties"]["body"]["description"] == "Text."
    assert view["description"] == "Object"


def test_preview_output_schema_is_minimal_and_admits_every_preview_result() -> None:
    from toolgen.compile.lower.tools import _preview_output_schema

    canonical = _preview_output_schema()
    result = {
        "preview_id": "p1",
        "request": {"method": "POST"},
        "effect": "write",
        "approval_required": True,
        "record_tool": "record_x",
        "side_effects": "writes",
    }
    assert valid(canonical, result) and valid(PREVIEW_OUTPUT_SCHEMA, result)
    assert set(PREVIEW_OUTPUT_SCHEMA["required"]) <= set(canonical["required"])
    assert not valid(PREVIEW_OUTPUT_SCHEMA, {"request": {}})


def test_descriptions_only_mode_keeps_the_structure() -> None:
    schema = {
        "type": "object",
        "properties": {
            "state": {"description": "state", "anyOf": [{"anyOf": [{"type": "string"}]}, {"type": "null"}]}
        },
    }
    simple = simplify_schema(schema, multi_type=False, structural=False)
    assert simple["properties"]["state"] == {"anyOf": [{"anyOf": [{"type": "string"}]}, {"type": "null"}]}


# --- the same on the schemas of real builds ---------------------------------------------------------------


def _shaped(schema: Any, root: Any, rng: Any, depth: int = 0) -> Any:  # noqa: PLR0911
    """A value shaped by `schema` (refs followed within `root`), with random slips so both valid and
    invalid values come out."""
    from toolgen.dialects import resolve_local_ref

    if rng.random() < 0.08 or depth > 8 or not isinstance(schema, dict):
        return rng.choice([None, "", "x" * rng.randint(1, 30), 0, -1, 2**40, 1.5, True, [], {}])
    if "$ref" in schema:
        try:
            return _shaped(resolve_local_ref(root, schema["$ref"]), root, rng, depth + 1)
        except Exception:  # noqa: BLE001 - an unresolvable ref: any value
            return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _shaped(rng.choice(schema[key]), root, rng, depth + 1)
    t = schema.get("type", "string")
    t = rng.choice(t) if isinstance(t, list) and t else t
    if t == "object":
        props = schema.get("properties") or {}
        return {
            k: _shaped(v, root, rng, depth + 1)
            for k, v in props.items()
            if k in (schema.get("required") or []) or rng.random() < 0.5
        }
    if t == "array":
        return [_shaped(schema.get("items", {}), root, rng, depth + 1) for _ in range(rng.randint(0, 2))]
    if t in ("integer", "number"):
        return rng.choice([0, 1, 7, -3, 100]) + (0.5 if t == "number" and rng.random() < 0.3 else 0)
    if t == "boolean":
        return rng.random() < 0.5
    if t == "null":
        return None
    return rng.choice(["a", "2024-01-01T00:00:00Z", "a@b.co", "x" * 300, "https://x.y"])


def _views_accept_the_same(tools: Any, rng: Any, samples: int, label: str) -> int:
    """For every tool schema the MCP view simplifies, `samples` values shaped like either view are
    accepted by both views or by neither; returns how many schemas were compared."""
    import jsonschema_rs

    from toolgen.dialects.mcp import _mcp_light

    compared = 0
    for tool in tools:
        for canonical in (tool.input_schema, tool.output_schema):
            before, _ = _mcp_light(canonical, simplify=False)
            after, _ = _mcp_light(canonical)
            if before == after:
                continue
            v_before = jsonschema_rs.Draft202012Validator(before)
            v_after = jsonschema_rs.Draft202012Validator(after)
            for _ in range(samples):
                value = _shaped(before if rng.random() < 0.5 else after, before, rng)
                assert v_before.is_valid(value) == v_after.is_valid(value), (label, tool.name, value)
            compared += 1
    return compared


@pytest.mark.parametrize("api", ["tickets", "github", "stripe"])
def test_committed_apis_views_accept_the_same_values_before_and_after(api: str, tmp_path: Any) -> None:
    import random

    from tests.support.build import REPO

    from toolgen.builder.build import build_api

    built = build_api(
        REPO / "intent_maps" / f"{api}.yaml", tmp_path, emit=("mcp",), base=REPO, run_lint=False
    )
    compared = _views_accept_the_same(built.ir.tools, random.Random(13), 300, api)
    assert compared > 0 or api == "tickets"


REAL_SPECS = [
    "adyen-checkout.json",
    "asana.json",
    "box.json",
    "digitalocean.json",
    "github-api.github.com.json",
    "listennotes.json",
    "notion.json",
    "slack.json",
    "spotify.json",
    "stripe.json",
    "twilio-api.json",
    "vercel.json",
]


@pytest.mark.slow
@pytest.mark.parametrize("spec", REAL_SPECS)
def test_real_spec_views_accept_the_same_values_before_and_after(spec: str, tmp_path: Any) -> None:
    import random

    from tests.support.build import REAL

    from toolgen.builder.build import build_api

    if not (REAL / spec).exists():
        pytest.skip("../shared/specs/real is not available")
    intent = tmp_path / "all.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(REAL / spec))}\napi: {{name: all}}\ninclude: [{{match: '*'}}]\n",
        encoding="utf-8",
    )
    built = build_api(intent, tmp_path / "out", emit=("mcp",), base=tmp_path, run_lint=False)
    _views_accept_the_same(built.ir.tools, random.Random(spec), 40, spec)
