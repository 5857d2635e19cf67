"""Conformance checks (`check_*_catalog` of toolgen.dialects.openai, .anthropic, .mcp): each rule is shown to fire on a deliberately broken
catalog, so removing a rule check makes a test here fail. Baseline catalogs come from the dialect
transforms and must have no violations."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from toolgen.dialects import Violation, check_catalog
from toolgen.dialects.anthropic import anthropic_tool, check_anthropic_catalog
from toolgen.dialects.mcp import check_mcp_catalog, mcp_tool
from toolgen.dialects.openai import check_openai_catalog, openai_tool

CANONICAL = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 20, "description": "Title"},
        "when": {"type": "string", "format": "date-time"},
        "kind": {"type": "string", "enum": ["a", "b"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "child": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        "tree": {"$ref": "#/$defs/Tree"},
    },
    "required": ["title"],
    "additionalProperties": False,
    "$defs": {
        "Tree": {
            "type": "object",
            "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
        }
    },
}
OUTPUT = {"type": "object", "properties": {"id": {"type": "string"}, "any": {}}}

Tools = list[dict[str, Any]]
Mutator = Callable[[Tools], None]


def openai_catalog() -> Tools:
    return [
        openai_tool("create_item", "Create.", CANONICAL),
        openai_tool("ping", "Ping.", {"type": "object"}),
    ]


def anthropic_catalog() -> Tools:
    return [
        anthropic_tool("create_item", "Create.", CANONICAL),
        anthropic_tool("ping", "Ping.", {"type": "object"}),
    ]


def mcp_catalog() -> Tools:
    return [
        mcp_tool(
            "create_item",
            "Create.",
            CANONICAL,
            OUTPUT,
            title="Create item",
            read_only=False,
            destructive=False,
            idempotent=False,
        ),
        mcp_tool(
            "ping",
            "Ping.",
            {"type": "object"},
            None,
            title=None,
            read_only=True,
            destructive=False,
            idempotent=True,
        ),
    ]


def rules(violations: list[Violation]) -> set[str]:
    return {v.rule for v in violations}


def test_baselines_conform() -> None:
    assert check_openai_catalog(openai_catalog()) == []
    assert openai_catalog()[0]["function"]["strict"] is True
    assert check_anthropic_catalog(anthropic_catalog()) == []
    assert check_mcp_catalog(mcp_catalog()) == []
    for dialect, cat in (
        ("openai", openai_catalog()),
        ("anthropic", anthropic_catalog()),
        ("mcp", mcp_catalog()),
    ):
        assert check_catalog(dialect, cat) == []


def test_unknown_dialect() -> None:
    with pytest.raises(ValueError):
        check_catalog("cohere", [])


# --- OpenAI ----------------------------------------------------------------------------------------


def _params(tools: Tools, i: int = 0) -> dict[str, Any]:
    return tools[i]["function"]["parameters"]  # type: ignore[no-any-return]


def _set_name(name: str) -> Mutator:
    def mutate(tools: Tools) -> None:
        tools[0]["function"]["name"] = name

    return mutate


OPENAI_BREAKAGES: list[tuple[str, Mutator, str]] = [
    ("dot in name", _set_name("items.create"), "A.1-name"),
    ("65-char name", _set_name("x" * 65), "A.1-name"),
    ("empty name", _set_name(""), "A.1-name"),
    ("duplicate name", _set_name("ping"), "A.1-name-unique"),
    ("not a function tool", lambda t: t[0].update(type="custom"), "A.1-shape"),
    ("strict omitted", lambda t: t[0]["function"].pop("strict"), "A.1-strict-explicit"),
    ("root not object", lambda t: _params(t).update(type=["object", "null"]), "A.2-root-object"),
    (
        "root anyOf",
        lambda t: _params(t).update(
            anyOf=[{"type": "object", "properties": {}, "required": [], "additionalProperties": False}]
        ),
        "A.2-root-anyOf",
    ),
    (
        "nested object open",
        lambda t: _params(t)["properties"]["child"].pop("additionalProperties"),
        "A.2-additionalProperties",
    ),
    (
        "$defs object open",
        lambda t: _params(t)["$defs"]["Tree"].update(additionalProperties=True),
        "A.2-additionalProperties",
    ),
    ("required incomplete", lambda t: _params(t)["required"].remove("kind"), "A.2-required"),
    ("required extra", lambda t: _params(t)["properties"]["child"]["required"].append("zzz"), "A.2-required"),
    (
        "object without properties",
        lambda t: _params(t)["properties"]["child"].pop("properties"),
        "A.1-object-properties",
    ),
    (
        "oneOf",
        lambda t: (
            _params(t)["properties"].update(u={"oneOf": [{"type": "string"}, {"type": "integer"}]})
            or _params(t)["required"].append("u")
        ),
        "A.2-composition",
    ),
    (
        "allOf",
        lambda t: _params(t)["properties"]["title"].update(allOf=[{"type": "string"}]),
        "A.2-composition",
    ),
    ("default", lambda t: _params(t)["properties"]["title"].update(default="x"), "A.4-default"),
    ("uri format", lambda t: _params(t)["properties"]["title"].update(format="uri"), "A.2-format"),
    (
        "format on integer",
        lambda t: _params(t)["properties"]["child"]["properties"]["n"].update(format="uuid"),
        "A.2-format",
    ),
    (
        "$ref sibling",
        lambda t: _params(t)["properties"]["tree"]["anyOf"][0].update(description="d"),
        "A.2-ref-siblings",
    ),
    ("dangling $ref", lambda t: _params(t)["$defs"].pop("Tree"), "A.2-ref-resolves"),
    ("enum without null", lambda t: _params(t)["properties"]["kind"]["enum"].remove(None), "A.4-enum-null"),
    ("maxLength kept", lambda t: _params(t)["properties"]["title"].update(maxLength=3), "E.3-keyword"),
    ("array without items", lambda t: _params(t)["properties"]["tags"].pop("items"), "E.4-array-items"),
    (
        "any value",
        lambda t: (
            _params(t)["properties"]["child"]["properties"].update(v={})
            or _params(t)["properties"]["child"]["required"].append("v")
        ),
        "A.2-types",
    ),
    ("bad type", lambda t: _params(t)["properties"]["title"].update(type="str"), "A.2-types"),
    ("nullable keyword", lambda t: _params(t)["properties"]["title"].update(nullable=True), "E.2-nullable"),
    (
        "too deep",
        lambda t: _params(t)["properties"].update(deep=_deep(11)) or _params(t)["required"].append("deep"),
        "A.2-limits-depth",
    ),
    (
        "too many enum values",
        lambda t: _params(t)["properties"]["kind"].update(enum=[str(i) for i in range(1001)] + [None]),
        "A.2-limits-enum",
    ),
    (
        "too many properties",
        lambda t: _params(t).update(
            properties={f"p{i}": {"type": "string"} for i in range(5001)},
            required=[f"p{i}" for i in range(5001)],
        ),
        "A.2-limits-properties",
    ),
    (
        "too many chars",
        lambda t: _params(t)["properties"]["kind"].update(enum=["x" * 60_000, "y" * 60_001, None]),
        "A.2-limits-chars",
    ),
    (
        "long big string enum",
        lambda t: _params(t)["properties"]["kind"].update(enum=[f"{i:060d}" for i in range(260)] + [None]),
        "A.2-limits-chars",
    ),
]


def _deep(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        node = {"type": "object", "properties": {"x": node}, "required": ["x"], "additionalProperties": False}
    return node


@pytest.mark.parametrize("label,mutate,rule", OPENAI_BREAKAGES, ids=[b[0] for b in OPENAI_BREAKAGES])
def test_openai_rule_fires(label: str, mutate: Mutator, rule: str) -> None:
    tools = copy.deepcopy(openai_catalog())
    mutate(tools)
    found = check_openai_catalog(tools)
    assert rule in rules(found), [v.render() for v in found]
    assert all(v.dialect == "openai" for v in found)


def test_openai_violation_carries_pointer_and_tool() -> None:
    tools = copy.deepcopy(openai_catalog())
    tools[0]["function"]["parameters"]["properties"]["child"].pop("additionalProperties")
    [v] = [v for v in check_openai_catalog(tools) if v.rule == "A.2-additionalProperties"]
    assert v.tool == "create_item"
    assert v.pointer == "/function/parameters/properties/child"
    assert "A.2-additionalProperties" in v.render()


def test_openai_max_tools_is_optional() -> None:
    tools = [openai_tool(f"t{i}", "d", {"type": "object"}) for i in range(129)]
    assert rules(check_openai_catalog(tools)) == {"A.1-max-tools"}
    assert check_openai_catalog(tools, max_tools=None) == []
    assert check_openai_catalog(tools[:128]) == []
    assert check_catalog("openai", tools, max_tools=None) == []


def test_openai_non_strict_tools_only_get_basic_checks() -> None:
    tool: dict[str, Any] = {
        "type": "function",
        "function": {
            "name": "free",
            "description": "d",
            "strict": False,
            "parameters": {"type": "object", "properties": {"meta": {"type": "object", "default": {}}}},
        },
    }
    assert check_openai_catalog([tool]) == []
    broken = copy.deepcopy(tool)
    broken["function"]["parameters"]["properties"]["list"] = {"type": "array"}
    assert rules(check_openai_catalog([broken])) == {"E.4-array-items"}
    broken["function"]["parameters"]["type"] = "array"
    assert "A.2-root-object" in rules(check_openai_catalog([broken]))


def test_openai_parameters_may_be_omitted() -> None:
    tool = {"type": "function", "function": {"name": "noop", "description": "d", "strict": True}}
    assert check_openai_catalog([tool]) == []


# --- Anthropic -------------------------------------------------------------------------------------


def _input(tools: Tools, i: int = 0) -> dict[str, Any]:
    return tools[i]["input_schema"]  # type: ignore[no-any-return]


def _strict_on(tools: Tools, *_other_changes: object) -> None:
    tools[0]["strict"] = True


ANTHROPIC_BREAKAGES: list[tuple[str, Mutator, str]] = [
    ("dot in name", lambda t: t[0].update(name="a.b"), "B.1-name"),
    ("65-char name", lambda t: t[0].update(name="a" * 65), "B.1-name"),
    ("duplicate name", lambda t: t[0].update(name="ping"), "B.1-name-unique"),
    ("no input_schema", lambda t: t[0].pop("input_schema"), "B.1-fields"),
    ("description not text", lambda t: t[0].update(description=["x"]), "B.1-fields"),
    ("strict not bool", lambda t: t[0].update(strict="yes"), "B.1-fields"),
    ("null input_schema", lambda t: t[0].update(input_schema=None), "B.1-input-schema-object"),
    ("array root", lambda t: _input(t).update(type="array"), "B.1-input-schema-object"),
    (
        "invalid 2020-12",
        lambda t: _input(t)["properties"]["title"].update(maxLength="long"),
        "B.1-json-schema-2020-12",
    ),
    (
        "invalid regex",
        lambda t: _input(t)["properties"]["title"].update(pattern="(unclosed"),
        "B.1-json-schema-2020-12",
    ),
    ("invalid required", lambda t: _input(t).update(required="title"), "B.1-json-schema-2020-12"),
    ("array without items", lambda t: _input(t)["properties"]["tags"].pop("items"), "E.4-array-items"),
    ("dangling $ref", lambda t: _input(t).pop("$defs"), "B.1-ref-resolves"),
    ("nullable keyword", lambda t: _input(t)["properties"]["title"].update(nullable=True), "E.2-nullable"),
    ("strict + recursion", _strict_on, "B.2-recursion"),
    (
        "strict + open object",
        lambda t: _strict_on(t, _input(t)["properties"]["child"].pop("additionalProperties")),
        "B.2-additionalProperties",
    ),
    (
        "strict + uri-reference",
        lambda t: _strict_on(t, _input(t)["properties"]["when"].update(format="uri-reference")),
        "B.2-format",
    ),
]


@pytest.mark.parametrize("label,mutate,rule", ANTHROPIC_BREAKAGES, ids=[b[0] for b in ANTHROPIC_BREAKAGES])
def test_anthropic_rule_fires(label: str, mutate: Mutator, rule: str) -> None:
    tools = copy.deepcopy(anthropic_catalog())
    mutate(tools)
    found = check_anthropic_catalog(tools)
    assert rule in rules(found), [v.render() for v in found]


def test_anthropic_strict_checks_only_apply_to_strict_tools() -> None:
    tools = copy.deepcopy(anthropic_catalog())
    _input(tools)["properties"]["child"].pop("additionalProperties")
    _input(tools)["properties"]["when"]["format"] = "uri-reference"
    assert check_anthropic_catalog(tools) == []  # recursion + open object + format are fine non-strict
    strict_ok = anthropic_tool(
        "flat", "d", {"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}}
    )
    strict_ok["strict"] = True
    assert check_anthropic_catalog([strict_ok]) == []


# --- MCP -------------------------------------------------------------------------------------------


def _in(tools: Tools, i: int = 0) -> dict[str, Any]:
    return tools[i]["inputSchema"]  # type: ignore[no-any-return]


def _out(tools: Tools, i: int = 0) -> dict[str, Any]:
    return tools[i]["outputSchema"]  # type: ignore[no-any-return]


MCP_BREAKAGES: list[tuple[str, Mutator, str]] = [
    ("dot in name", lambda t: t[0].update(name="items.create"), "D.2-name"),
    ("129-char name", lambda t: t[0].update(name="a" * 129), "D.2-name"),
    ("65-char name", lambda t: t[0].update(name="a" * 65), "D.2-name"),
    ("space in name", lambda t: t[0].update(name="create item"), "D.2-name"),
    ("duplicate name", lambda t: t[0].update(name="ping"), "D.2-name-unique"),
    ("title not text", lambda t: t[0].update(title=1), "D.1-fields"),
    ("missing inputSchema", lambda t: t[0].pop("inputSchema"), "D.1-input-schema-object"),
    ("null inputSchema", lambda t: t[0].update(inputSchema=None), "D.1-input-schema-object"),
    ("untyped inputSchema", lambda t: _in(t).pop("type"), "D.1-input-schema-object"),
    (
        "array outputSchema",
        lambda t: t[0].update(outputSchema={"type": "array", "items": {}}),
        "D.1-output-schema-object",
    ),
    (
        "invalid 2020-12 input",
        lambda t: _in(t)["properties"]["title"].update(type="text"),
        "D.1-json-schema-2020-12",
    ),
    (
        "invalid 2020-12 output",
        lambda t: _out(t)["properties"]["id"].update(minLength=-1),
        "D.1-json-schema-2020-12",
    ),
    ("pruned $defs (case 21)", lambda t: _in(t).pop("$defs"), "D.1-ref-resolves"),
    (
        "dangling output $ref",
        lambda t: _out(t)["properties"].update(r={"$ref": "#/$defs/Gone"}),
        "D.1-ref-resolves",
    ),
    (
        "nullable keyword (case 08)",
        lambda t: _in(t)["properties"]["title"].update(nullable=True),
        "D.1-nullable",
    ),
    ("OpenAPI format", lambda t: _in(t)["properties"]["title"].update(format="password"), "D.1-format"),
    ("OpenAPI format in output", lambda t: _out(t)["properties"]["id"].update(format="int64"), "D.1-format"),
    ("array without items", lambda t: _in(t)["properties"]["tags"].pop("items"), "E.4-array-items"),
    ("hint missing", lambda t: t[0]["annotations"].pop("openWorldHint"), "D.1-annotations"),
    ("hint not boolean", lambda t: t[0]["annotations"].update(readOnlyHint="false"), "D.1-annotations"),
    ("annotations missing", lambda t: t[0].pop("annotations"), "D.1-annotations"),
    ("annotation title not text", lambda t: t[0]["annotations"].update(title=3), "D.1-annotations"),
]


@pytest.mark.parametrize("label,mutate,rule", MCP_BREAKAGES, ids=[b[0] for b in MCP_BREAKAGES])
def test_mcp_rule_fires(label: str, mutate: Mutator, rule: str) -> None:
    tools = copy.deepcopy(mcp_catalog())
    mutate(tools)
    found = check_mcp_catalog(tools)
    assert rule in rules(found), [v.render() for v in found]


def test_mcp_keeps_what_2020_12_allows() -> None:
    tools = copy.deepcopy(mcp_catalog())
    _in(tools)["properties"]["tree"]["description"] = "ref with sibling is fine in 2020-12"
    _in(tools)["properties"]["title"]["format"] = "uri"
    _in(tools)["properties"]["title"]["default"] = "x"
    assert check_mcp_catalog(tools) == []


@pytest.mark.parametrize("checker", [check_openai_catalog, check_anthropic_catalog, check_mcp_catalog])
def test_malformed_catalogs_are_violations_not_crashes(checker: Callable[[Any], list[Violation]]) -> None:
    assert checker("not a list")
    assert checker([1, None])
