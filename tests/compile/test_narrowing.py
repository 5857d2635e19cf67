"""Argument narrowing (`args` in the intent map): the subset proof must never accept a narrowed schema
that lets through a value the spec's schema rejects; bad entries are located errors; the runtime
validates against the narrowed schema; POLICY.md and policy.json show the narrowing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from tests.support.build import REPO, build
from tests.support.profiles import examples

from toolgen.compile.narrowing import narrowed_schema_problem, subset_problems

TICKETS = REPO / "specs" / "tickets.yaml"


def valid(schema: Any, value: Any) -> bool:
    return bool(
        Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).is_valid(value)
    )


# --- the proof, case by case -------------------------------------------------------------------------

TITLE = {"anyOf": [{"oneOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "null"}]}
LABELS = {
    "type": "array",
    "items": {
        "oneOf": [
            {"type": "string"},
            {"type": "object", "properties": {"name": {"type": "string"}, "id": {"type": "integer"}}},
        ]
    },
}


@pytest.mark.parametrize(
    "narrow, canonical",
    [
        ({"type": "string"}, TITLE),
        ({"type": ["string", "null"]}, TITLE),
        ({"type": "integer", "minimum": 0}, TITLE),
        ({"type": "array", "items": {"type": "string", "minLength": 1}}, LABELS),
        (
            {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                    "additionalProperties": False,
                },
            },
            LABELS,
        ),
        ({"enum": ["open", "closed"]}, {"type": "string", "enum": ["open", "closed", "all"]}),
        ({"const": 3}, {"type": "integer", "minimum": 1, "maximum": 5}),
        ({"type": "integer", "minimum": 2, "maximum": 4}, {"type": "integer", "minimum": 1, "maximum": 5}),
        (
            {"type": "integer", "exclusiveMinimum": 0},
            {"type": "number", "minimum": 1},
        ),  # integers > 0 are >= 1? no
        ({"type": "integer", "multipleOf": 6}, {"type": "integer", "multipleOf": 3}),
        ({"type": "integer"}, {"type": "number", "multipleOf": 1}),
        (
            {"type": "string", "maxLength": 10, "pattern": "^a"},
            {"type": "string", "maxLength": 20, "pattern": "^a"},
        ),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]},
            {"type": "object", "properties": {"a": {"type": ["string", "null"]}}, "required": ["a"]},
        ),
        (
            {"type": "object", "additionalProperties": False},
            {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
        ),
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, TITLE),
        ({"type": "string"}, {"$ref": "#/$defs/s", "$defs": {"s": {"type": "string"}}}),
    ],
)
def test_proved_narrowings(narrow: dict[str, Any], canonical: dict[str, Any]) -> None:
    if narrow.get("exclusiveMinimum") == 0:  # integers > 0 are >= 1, but the proof does not reason so
        assert subset_problems(narrow, canonical)
        return
    assert subset_problems(narrow, canonical) == []


@pytest.mark.parametrize(
    "narrow, canonical, pointer, words",
    [
        ({"type": "number"}, {"type": "integer"}, "/type", "type 'number'"),
        ({"type": "string"}, {"type": "string", "enum": ["a"]}, "", "enumeration"),
        ({"enum": ["open", "reopen"]}, {"type": "string", "enum": ["open", "closed"]}, "/enum/1", '"reopen"'),
        ({"type": "string", "maxLength": 30}, {"type": "string", "maxLength": 20}, "", "maxLength 20"),
        ({"type": "string"}, {"type": "string", "minLength": 1}, "", "minLength 1"),
        ({"type": "string"}, {"type": "string", "pattern": "^a"}, "", "pattern"),
        ({"type": "string"}, {"type": "string", "format": "email"}, "", "format"),
        (
            {"type": "integer", "minimum": 0},
            {"type": "integer", "exclusiveMinimum": 0},
            "",
            "exclusiveMinimum",
        ),
        ({"type": "integer", "multipleOf": 4}, {"type": "integer", "multipleOf": 3}, "", "multipleOf"),
        ({"type": "array"}, {"type": "array", "items": {"type": "string"}}, "/items", "any value"),
        ({"type": "array", "items": {"type": "integer"}}, LABELS, "/items/type", "any branch"),
        (
            {"type": "array", "items": {"type": "string"}},
            {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "",
            "uniqueItems",
        ),
        ({"type": "object"}, {"type": "object", "required": ["a"]}, "/required", "'a'"),
        (
            {"type": "object", "properties": {"x": {"type": "string"}}},
            {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
            "/properties/x",
            "accepts nothing",
        ),
        (
            {"type": "object"},
            {"type": "object", "properties": {"a": {"type": "string"}}},
            "/additionalProperties",
            "any value",
        ),
        (
            {"type": "number"},
            {"oneOf": [{"type": "number"}, {"type": "integer"}]},
            "",
            "more than one branch",
        ),
        ({"type": "string"}, {"type": "string", "not": {"const": "x"}}, "", "`not`"),
        (
            {"type": "object"},
            {"type": "object", "patternProperties": {"^a": {"type": "string"}}},
            "",
            "patternProperties",
        ),
        ({"description": "anything"}, {"type": "string"}, "", "`type`"),
        ({"$ref": "#/$defs/x"}, {"type": "string"}, "/$ref", "$ref"),
        ({"type": "string"}, False, "", "accepts nothing"),
    ],
)
def test_unproved_narrowings_say_where(narrow: Any, canonical: Any, pointer: str, words: str) -> None:
    problems = subset_problems(narrow, canonical)
    assert problems, f"{narrow} was accepted as a subset of {canonical}"
    assert problems[0].pointer == pointer and words in problems[0].message, problems[0]
    assert problems[0].hint


def test_hostile_inputs_never_raise() -> None:
    deep: dict[str, Any] = {"type": "array", "items": {}}
    cur = deep
    for _ in range(200):
        cur["items"] = {"type": "array", "items": {}}
        cur = cur["items"]
    canonical: dict[str, Any] = {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}  # a ref cycle
    for narrow, canon in (
        (deep, deep),
        ({"type": "string"}, canonical),
        ({"type": "string"}, {"$ref": "http://x"}),
        ({"type": "string"}, {"$ref": "#/nowhere"}),
        ({"type": 3}, {"type": "string"}),
        ({"type": "integer", "minimum": "1"}, {"type": "integer", "minimum": 0}),
        ({"enum": "ab"}, {"type": "string"}),
        ([], {"type": "string"}),
    ):
        problems = subset_problems(narrow, canon)
        assert isinstance(problems, list)
    assert subset_problems({"type": "string"}, canonical)  # a ref cycle proves nothing
    assert narrowed_schema_problem({"type": 3}) is not None
    assert narrowed_schema_problem({"items": {"$ref": "#"}}) is not None
    assert narrowed_schema_problem("string") is not None
    assert narrowed_schema_problem({"type": "string", "maxLength": 3}) is None


def test_large_enums_are_checked_quickly() -> None:
    import time

    values = [f"v{i}" for i in range(20_000)]
    start = time.perf_counter()
    assert subset_problems({"enum": values}, {"type": "string", "enum": [*values, "w"]}) == []
    assert subset_problems({"enum": values}, {"type": "string", "maxLength": 8}) == []
    assert (
        subset_problems({"enum": [*values, "x"]}, {"type": "string", "enum": values})[0].pointer
        == "/enum/20000"
    )
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize(
    "narrow, canonical, ok",
    [
        (
            {"enum": [1.0, 2]},
            {"type": "integer", "enum": [1, 2]},
            True,
        ),  # 1.0 is the integer 1 in JSON Schema
        ({"enum": [True]}, {"type": "integer", "enum": [1]}, False),  # true is not 1
        ({"enum": [1.5]}, {"type": "integer", "enum": [1.5]}, False),  # not an integer
        ({"enum": [3]}, {"type": "number", "enum": [3.0]}, True),
        ({"enum": [{"a": [1]}]}, {"enum": [{"a": [1.0]}]}, True),
    ],
)
def test_enum_equality_follows_json_schema(narrow: Any, canonical: Any, ok: bool) -> None:
    assert (subset_problems(narrow, canonical) == []) is ok


# --- the proof, property-based -------------------------------------------------------------------------

_INT = st.integers(-5, 5)
_STR = st.text(alphabet="ab", max_size=3)


@st.composite
def leaf_schemas(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["string", "integer", "number", "boolean", "null", "multi", "enum"]))
    if kind == "enum":
        return {
            "enum": draw(st.lists(st.one_of(_STR, _INT, st.none()), min_size=1, max_size=4, unique_by=repr))
        }
    if kind == "multi":
        return {
            "type": draw(
                st.lists(
                    st.sampled_from(["string", "integer", "null", "boolean"]),
                    min_size=1,
                    max_size=3,
                    unique=True,
                )
            )
        }
    out: dict[str, Any] = {"type": kind}
    if kind == "string":
        if draw(st.booleans()):
            out["minLength"] = draw(st.integers(0, 2))
        if draw(st.booleans()):
            out["maxLength"] = draw(st.integers(0, 3))
    if kind in ("integer", "number"):
        for key in draw(
            st.sets(
                st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]),
                max_size=2,
            )
        ):
            out[key] = draw(st.integers(1, 3)) if key == "multipleOf" else draw(_INT)
    return out


def schemas() -> st.SearchStrategy[dict[str, Any]]:
    def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        arrays = st.builds(
            lambda items, lo, unique: {
                "type": "array",
                "items": items,
                **({"minItems": lo} if lo else {}),
                **({"uniqueItems": True} if unique else {}),
            },
            children,
            st.integers(0, 2),
            st.booleans(),
        )
        objects = st.builds(
            lambda props, req, closed: {
                "type": "object",
                "properties": props,
                "required": sorted(k for k in props if k in req),
                **({"additionalProperties": False} if closed else {}),
            },
            st.dictionaries(st.sampled_from(["a", "b", "c"]), children, max_size=3),
            st.sets(st.sampled_from(["a", "b", "c"])),
            st.booleans(),
        )
        unions = st.builds(
            lambda key, branches: {key: branches},
            st.sampled_from(["anyOf", "oneOf"]),
            st.lists(children, min_size=1, max_size=3),
        )
        return st.one_of(arrays, objects, unions)

    return st.recursive(leaf_schemas(), extend, max_leaves=6)


@st.composite
def values_for(draw: st.DrawFn, schema: Any, depth: int = 0) -> Any:
    """A value shaped by `schema` (often, not always, valid under it: the test filters)."""
    if not isinstance(schema, dict) or depth > 6:
        return draw(st.one_of(st.none(), _INT, _STR))
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return draw(st.sampled_from(schema["enum"]))
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return draw(values_for(draw(st.sampled_from(schema[key])), depth + 1))
    types = schema.get("type", ["string", "integer", "null"])
    t = draw(st.sampled_from(types if isinstance(types, list) else [types]))
    if t == "string":
        return draw(
            st.text(
                alphabet="ab",
                min_size=schema.get("minLength", 0),
                max_size=max(schema.get("minLength", 0), schema.get("maxLength", 4)),
            )
        )
    if t in ("integer", "number"):
        lo = max(schema.get("minimum", -8), schema.get("exclusiveMinimum", -9) + 1)
        hi = min(schema.get("maximum", 8), schema.get("exclusiveMaximum", 9) - 1)
        n = draw(st.integers(min(lo, hi), max(lo, hi)))
        step = schema.get("multipleOf", 1)
        value = n - n % step if isinstance(step, int) and step > 0 else n
        return value + 0.5 if t == "number" and draw(st.booleans()) else value
    if t == "boolean":
        return draw(st.booleans())
    if t == "array":
        items = draw(
            st.lists(
                values_for(schema.get("items", {}), depth + 1),
                min_size=schema.get("minItems", 0),
                max_size=schema.get("minItems", 0) + 2,
            )
        )
        return items
    if t == "object":
        props = schema.get("properties", {})
        out = {}
        for name, sub in props.items():
            if name in schema.get("required", []) or draw(st.booleans()):
                out[name] = draw(values_for(sub, depth + 1))
        if schema.get("additionalProperties") is not False and draw(st.booleans()):
            out["z"] = draw(st.one_of(_INT, _STR))
        return out
    return None


@st.composite
def narrowings(draw: st.DrawFn, canonical: dict[str, Any]) -> dict[str, Any]:
    """A candidate narrowing of `canonical`: a branch of it, a tightened copy, an enum of values shaped
    like it, or an unrelated schema (so the checker also sees wider candidates)."""
    kind = draw(st.sampled_from(["same", "branch", "tighten", "enum", "random", "mutate", "mutate"]))
    if kind == "mutate":
        return draw(mutated(canonical))
    if kind == "branch":
        for key in ("anyOf", "oneOf"):
            if isinstance(canonical.get(key), list):
                return dict(draw(st.sampled_from(canonical[key])))
    if kind == "tighten":
        out = dict(canonical)
        if out.get("type") == "string":
            out["maxLength"] = min(out.get("maxLength", 3), draw(st.integers(0, 3)))
        elif out.get("type") in ("integer", "number"):
            out["minimum"] = max(out.get("minimum", -5), draw(_INT))
        elif out.get("type") == "object":
            out["additionalProperties"] = False
            out["required"] = sorted(
                set(out.get("required", [])) | set(draw(st.sets(st.sampled_from(["a", "b"]))))
            )
        return out
    if kind == "enum":
        return {"enum": draw(st.lists(values_for(canonical), min_size=1, max_size=3, unique_by=repr))}
    if kind == "random":
        return draw(schemas())
    return dict(canonical)


_DROPPABLE = (
    "minItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "required",
    "additionalProperties",
    "items",
    "enum",
)


@st.composite
def mutated(draw: st.DrawFn, schema: Any, depth: int = 0) -> Any:
    """`schema` with one change somewhere inside: a keyword dropped (wider), a bound moved either way,
    a type swapped, or a child mutated the same way."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    children = (
        [("properties", k) for k in (out.get("properties") or {})]
        + ([("items", None)] if isinstance(out.get("items"), dict) else [])
        + [(key, i) for key in ("anyOf", "oneOf") for i in range(len(out.get(key) or []))]
    )
    if children and depth < 5 and draw(st.booleans()):
        key, index = draw(st.sampled_from(children))
        if key == "properties":
            out["properties"] = {
                **out["properties"],
                index: draw(mutated(out["properties"][index], depth + 1)),
            }
        elif key == "items":
            out["items"] = draw(mutated(out["items"], depth + 1))
        else:
            branches = list(out[key])
            branches[index] = draw(mutated(branches[index], depth + 1))
            out[key] = branches
        return out
    change = draw(st.sampled_from(["drop", "bound", "type"]))
    present = [k for k in _DROPPABLE if k in out]
    if change == "drop" and present:
        del out[draw(st.sampled_from(present))]
    elif change == "bound":
        key = draw(
            st.sampled_from(["minItems", "maxLength", "minLength", "minimum", "maximum", "multipleOf"])
        )
        out[key] = draw(st.integers(1, 3) if key in ("multipleOf",) else st.integers(0, 3))
    else:
        out["type"] = draw(st.sampled_from(["string", "integer", "number", "null", "array", "object"]))
    return out


@pytest.mark.long
@settings(
    max_examples=examples(400),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_accepted_narrowing_admits_only_canonical_values(data: st.DataObject) -> None:
    canonical = data.draw(schemas(), label="canonical")
    narrow = data.draw(narrowings(canonical), label="narrow")
    if subset_problems(narrow, canonical):
        return
    for _ in range(12):
        value = data.draw(values_for(narrow), label="value")
        if valid(narrow, value):
            assert valid(canonical, value), f"{value!r} passes {narrow} but not {canonical}"


def test_the_generator_reaches_valid_values() -> None:
    """The property above only means something if `values_for` produces values the schema accepts."""
    seen: list[bool] = []

    @settings(max_examples=examples(200), deadline=None)
    @given(st.data())
    def probe(data: st.DataObject) -> None:
        schema = data.draw(schemas())
        seen.append(valid(schema, data.draw(values_for(schema))))

    probe()
    assert sum(seen) > len(seen) // 3


# --- the build: located errors, enforcement, review surfaces -----------------------------------------

LIST = "tools:\n  list_tickets:\n    operation: listTickets\n    effect: read\n"


def test_narrowed_argument_is_the_catalog_schema_and_in_policy(tmp_path: Path) -> None:
    built = build(
        tmp_path,
        TICKETS,
        LIST + "    args:\n      status:\n        schema: {type: string, enum: [open, pending]}\n"
        "        description: Open or pending tickets only.\n",
    )
    status = built.tool("mcp", "list_tickets")["inputSchema"]["properties"]["status"]
    assert status == {
        "type": "string",
        "enum": ["open", "pending"],
        "description": "Open or pending tickets only.",
    }
    openai = built.tool("openai", "list_tickets")["function"]["parameters"]["properties"]["status"]
    assert "closed" not in openai["enum"]
    row = built.row("list_tickets")
    assert row["narrowed"] == [
        {
            "arg": "status",
            "schema": {"type": "string", "enum": ["open", "pending"]},
            "description": "Open or pending tickets only.",
            "hidden": False,
        }
    ]
    policy_md = (built.out / "POLICY.md").read_text(encoding="utf-8")
    assert "## Arguments narrowed by the intent map" in policy_md and '"enum":["open","pending"]' in policy_md


def test_hidden_argument_is_gone_and_never_sent(tmp_path: Path) -> None:
    built = build(tmp_path, TICKETS, LIST + "    args:\n      status: {hide: true}\n")
    assert "status" not in built.tool("mcp", "list_tickets")["inputSchema"]["properties"]
    assert all(b["arg"] != "status" for b in built.row("list_tickets")["request"]["bindings"])
    assert built.row("list_tickets")["narrowed"][0]["hidden"] is True


@pytest.mark.parametrize(
    "args, code, line_col, words",
    [
        (
            "      status:\n        schema: {type: string, enum: [open, reopened]}\n",
            "arg-narrowing-unproved",
            "api.yaml:10:",
            "#/enum/1",
        ),
        (
            "      limit:\n        schema:\n          type: number\n",
            "arg-narrowing-unproved",
            "api.yaml:11:11",
            "#/type",
        ),
        ("      stauts: {description: x}\n", "arg-unknown", "api.yaml:9:7", "did you mean `status`"),
        ("      status: {hide: true, description: x}\n", "arg-hidden-narrowed", "api.yaml:9:7", "hides"),
        (
            "      status: {schema: {type: string, maxLength: -1}}\n",
            "arg-narrowing-unproved",
            "api.yaml:9:",
            "valid JSON",
        ),
        ("      status: {schema: {$ref: '#/x'}}\n", "arg-narrowing-unproved", "api.yaml:9:", "$ref"),
        ("      status: {shema: {type: string}}\n", "intent-invalid", "api.yaml:9:", "did you mean `schema`"),
    ],
)
def test_bad_args_entry_is_a_located_error(
    tmp_path: Path, args: str, code: str, line_col: str, words: str
) -> None:
    built = build(tmp_path, TICKETS, LIST + "    args:\n" + args, expect=2)
    output = built.result.output
    assert f"error[{code}]" in output and line_col in output and words in output, output
    assert not (tmp_path / "out").exists()


def test_hiding_a_required_argument_is_an_error(tmp_path: Path) -> None:
    body = "tools:\n  get_ticket:\n    operation: getTicket\n    effect: read\n    args:\n      ticket_id: {hide: true}\n"
    built = build(tmp_path, TICKETS, body, expect=2)
    assert "error[hide-required]" in built.result.output and "api.yaml:9:" in built.result.output


def test_runtime_validates_against_the_narrowed_schema(tmp_path: Path) -> None:
    from tests.support.recording_server import RecordingServer

    from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials

    built = build(
        tmp_path,
        TICKETS,
        LIST + "    permission: ticket:read\n    args:\n      status:\n"
        "        schema: {type: string, enum: [open, pending]}\n",
    )
    policy = built.json("policy.json")
    with RecordingServer() as server:
        policy["base_url"] = server.base_url
        server.reply("GET", "/tickets", body={"data": [], "has_more": False})
        reg = Registry(
            policy,
            built.json("mcp.json"),
            credentials=StaticCredentials({"API_TOKEN": "t"}),
            receipts=MemoryReceiptStore(),
            cursor_key=b"k" * 32,
        )
        actor = Actor.of("a", scopes=["ticket:read"])
        refused = reg.call("list_tickets", {"status": "closed"}, actor=actor)  # valid for the spec, not here
        assert not refused.ok and refused.error is not None and refused.error.code == "invalid_arguments"
        assert server.requests == []
        sent = reg.call("list_tickets", {"status": "open"}, actor=actor)
        assert sent.ok, sent.error
        assert len(server.requests) == 1 and dict(server.last.query).get("status") == "open"


def test_github_map_narrows_labels_to_plain_names() -> None:
    mcp = json.loads((REPO / "generated" / "github" / "mcp.json").read_text(encoding="utf-8"))
    tools = {t["name"]: t for t in mcp}
    for name in ("preview_update_issue", "preview_create_issue", "record_add_issue_labels"):
        labels = tools[name]["inputSchema"]["properties"]["labels"]
        assert labels["items"] == {"type": "string", "minLength": 1}, name


def test_narrowing_makes_a_second_intent_of_one_operation_a_specialisation(tmp_path: Path) -> None:
    from tests.support.build import run

    def lint(extra: str) -> str:
        intent = tmp_path / "m.yaml"
        intent.write_text(
            f"toolgen: 1\nspec: {json.dumps(str(TICKETS))}\napi: {{name: m}}\n"
            + LIST
            + "  list_open_tickets:\n    operation: listTickets\n    effect: read\n"
            + extra,
            encoding="utf-8",
        )
        return run("lint", str(intent), "--format", "json").output

    assert "operation-mapped-twice" in lint("")
    assert "operation-mapped-twice" not in lint("    args:\n      status: {schema: {enum: [open]}}\n")
