"""The Anthropic dialect: Messages API tools (``docs/provider-dialects.md`` B.1-B.3 and E point 5).

Input: an IR `Tool` (its canonical input schema). Output: the view (`anthropic_input_schema` ->
`DialectSchema`: the original optionality kept, ``oneOf`` -> ``anyOf``, objects closed where that
rejects nothing declared elsewhere, formats outside B.2's list and ``default`` moved into the
description), the tool object (`anthropic_tool`), the B.2 budgets and the conformance check of a
whole catalog (`check_anthropic_catalog`). ``strict`` is never sent: `DialectSchema.strict` records
whether strict tool use would be possible.
"""

from __future__ import annotations

from typing import Any

from ..compile.ir import Tool
from ._base import Dialect, DialectSchema
from ._check import (
    Report,
    Summary,
    Violation,
    check_2020_12,
    check_items_and_refs,
    check_names,
    check_no_nullable,
    object_root,
    tool_label,
)
from ._light import Light, LightRules, is_empty_params, ref_warnings
from ._walk import MISSING, is_object_schema, iter_nodes, iter_schemas, recursive_ref_targets, types_of

JSON = Any

#: B.2 "Formats allowed" (Anthropic strict; `SupportedStringFormats` of the Python SDK).
ANTHROPIC_FORMATS: frozenset[str] = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid", "uri"}
)
#: B.2 "Budgets" (per request; toolgen also refuses strict for a single tool that exceeds them).
ANTHROPIC_MAX_OPTIONAL = 24
ANTHROPIC_MAX_UNIONS = 16


def _has_free_form(schema: JSON) -> list[str]:
    """Pointers of object nodes that accept undeclared members, and of `{}`/true nodes."""
    return [ptr for ptr, node in iter_schemas(schema) if _free_form_node(node)]


def _free_form_node(node: JSON) -> bool:
    if node is True or node == {}:
        return True
    return (isinstance(node, dict) and is_object_schema(node) and "$ref" not in node
            and (node.get("additionalProperties", MISSING) is not False or "patternProperties" in node))


def anthropic_input_schema(canonical: dict[str, JSON]) -> DialectSchema:
    """Anthropic `input_schema` from a canonical input schema (B.1-B.3, E point 5).

    Original optionality is kept (no null widening, E point 5); the schema stays valid JSON Schema
    2020-12 (B.1); ``oneOf`` -> ``anyOf``; ``additionalProperties: false`` is added on objects that
    declare properties and say nothing about extras (not on `allOf` members or the schemas they
    reference, nor on nodes combining properties with `allOf`/`anyOf`/`oneOf`/`$ref`, where closing
    would reject members declared elsewhere); ``format`` values outside B.2's list (OpenAPI-only
    ones such as password/int32, and ``uri-reference``) and ``default`` move into the description;
    other constraints stay (hints for non-strict tools, B.1). A root without properties becomes
    ``{"type": "object", "properties": {}, "additionalProperties": false}`` (case 24).

    `strict` says whether strict tool use (B.2) would be possible: False for recursive schemas
    (warning names each recursive `$defs` entry), free-form objects / ``{}`` values, and single tools
    over the B.2 budgets (24 optional properties, 16 unions). toolgen never sends ``strict`` itself.
    """
    light = Light(LightRules("anthropic", lambda f: f in ANTHROPIC_FORMATS, True, True, True), canonical)
    out = light.node(canonical, "", "")  # builds new containers throughout; never mutates `canonical`
    if not isinstance(out, dict):
        out = {"type": "object", "properties": {}}
    if is_empty_params(out):
        kept = {k: out[k] for k in ("title", "description") if k in out}
        out = {**kept, "type": "object", "properties": {}, "additionalProperties": False}
    elif "properties" not in out and types_of(out) == ["object"]:
        out["properties"] = {}
    optional = unions = 0
    has_ref = free_form = False  # one walk decides which of the (pointer-naming) walks below are needed
    for node in iter_nodes(out):
        if not free_form and _free_form_node(node):
            free_form = True
        if not isinstance(node, dict):
            continue
        if "$ref" in node:
            has_ref = True
        if isinstance(node.get("properties"), dict):
            req = node.get("required", [])
            optional += sum(1 for k in node["properties"] if k not in req)
        if "anyOf" in node or isinstance(node.get("type"), list):
            unions += 1
    warnings: list[str] = ref_warnings(out, "anthropic") if has_ref else []
    strict = not warnings
    for ptr in recursive_ref_targets(out) if has_ref else ():
        strict = False
        warnings.append(f"recursive schema (#{ptr}): anthropic strict disabled")
    for ptr in _has_free_form(out) if free_form else ():
        strict = False
        warnings.append(f"free-form object or unconstrained value (#{ptr}): anthropic strict disabled")
    if optional > ANTHROPIC_MAX_OPTIONAL:
        strict = False
        warnings.append(f"{optional} optional properties > {ANTHROPIC_MAX_OPTIONAL} (#): "
                        "anthropic strict disabled")
    if unions > ANTHROPIC_MAX_UNIONS:
        strict = False
        warnings.append(f"{unions} union schemas > {ANTHROPIC_MAX_UNIONS} (#): anthropic strict disabled")
    return DialectSchema(out, tuple(light.notes), strict, tuple(warnings))


def anthropic_tool(name: str, description: str, canonical_input: dict[str, JSON], *,
                   input_schema: DialectSchema | None = None) -> dict[str, JSON]:
    """Anthropic Messages API tool (B.1): ``{"name", "description", "input_schema"}``.

    ``strict`` is never sent: strict tool use has per-request budgets (B.2: 20 strict tools, 24 optional
    parameters, 16 unions), so turning it on is a per-deployment choice; `anthropic_input_schema`
    reports whether it would be possible."""
    return {
        "name": name,
        "description": description,
        "input_schema": (input_schema if input_schema is not None else anthropic_input_schema(canonical_input)).schema,
    }


def check_anthropic_catalog(tools: list[dict[str, JSON]]) -> list[Violation]:
    """Check a Messages API catalog (B.1, B.2, E).

    Every tool: `name` ``^[a-zA-Z0-9_-]{1,64}$`` and unique (B.1 "toolgen should"), `input_schema` an
    object-root schema valid under JSON Schema 2020-12, arrays with `items`, `$ref`s resolving, no
    `nullable`; `strict` if present is a boolean. Tools sent with ``strict: true`` additionally: no
    recursion, every object closed, formats from B.2's list."""
    report = Report("anthropic")
    if not isinstance(tools, list):
        report.add("", "", "B.1-fields", "catalog must be a list of tools")
        return report.items
    names: list[tuple[str, str, JSON]] = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            report.add(f"#{i}", f"/{i}", "B.1-fields", "tool must be an object")
            continue
        label = tool_label(tool.get("name"), i)
        names.append((label, "/name", tool.get("name")))
        if "description" in tool and not isinstance(tool["description"], str):
            report.add(label, "/description", "B.1-fields", "description must be a string")
        if "strict" in tool and not isinstance(tool["strict"], bool):
            report.add(label, "/strict", "B.1-fields", "strict must be a boolean")
        if "input_schema" not in tool:
            report.add(label, "/input_schema", "B.1-fields", "input_schema is required")
            continue
        schema = tool["input_schema"]
        base = "/input_schema"
        if not object_root(report, label, base, schema, "B.1-input-schema-object", "input_schema"):
            continue
        summary = Summary(schema)
        check_2020_12(report, label, base, schema, "B.1-json-schema-2020-12", summary)
        check_items_and_refs(report, label, base, schema, "B.1", summary)
        check_no_nullable(report, label, base, schema, "E.2-nullable", summary)
        if tool.get("strict") is True:
            for ptr in recursive_ref_targets(schema):
                report.add(label, base + ptr, "B.2-recursion", "recursive schemas are not supported in strict")
            for ptr, node in iter_schemas(schema):
                if not isinstance(node, dict):
                    continue
                if is_object_schema(node) and node.get("additionalProperties") is not False:
                    report.add(label, base + ptr, "B.2-additionalProperties",
                               "strict objects need additionalProperties: false")
                if "format" in node and node["format"] not in ANTHROPIC_FORMATS:
                    report.add(label, base + ptr, "B.2-format", f"format {node['format']!r} not supported")
    check_names(report, names, "B.1")
    return report.items


def _catalog_entry(tool: Tool) -> tuple[dict[str, JSON], tuple[str, ...]]:
    input_schema = anthropic_input_schema(tool.input_schema)
    return (anthropic_tool(tool.name, tool.description, tool.input_schema, input_schema=input_schema),
            input_schema.warnings)


def _entry_name(entry: dict[str, JSON]) -> str:
    return str(entry["name"])


def _check(tools: list[dict[str, JSON]], max_tools: int | None) -> list[Violation]:
    return check_anthropic_catalog(tools)


DIALECT = Dialect("anthropic", 1, _catalog_entry, _entry_name, _check)
