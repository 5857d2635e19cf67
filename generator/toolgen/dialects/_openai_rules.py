"""The OpenAI dialect's rules as data and checks (``docs/provider-rules.md`` A.1, A.2, A.4, E, F.1):
the formats, keywords and limits strict mode allows, a schema's size as OpenAI counts it
(`schema_stats`, `openai_limit_problems`), and the conformance check of one strict `parameters`
schema (`check_openai_strict`). The transform that writes such schemas, and the check of a whole
catalog, are `toolgen.dialects.openai`'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._check import Report, Walk, checked
from ._limits import Limit
from ._walk import DEFS_KEYS, child_nodes, is_array_schema, is_object_schema, types_of

JSON = Any

# --- limits and keyword sets -------------------------------------------------------------------------

#: A.2 "Formats allowed" (OpenAI strict).
OPENAI_STRICT_FORMATS: frozenset[str] = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
#: A.2 "Limits".
OPENAI_MAX_DEPTH = 10
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_ENUM_VALUES = 1000
OPENAI_MAX_CHARS = 120_000
OPENAI_BIG_ENUM_VALUES = 250
OPENAI_BIG_ENUM_CHARS = 15_000
#: Keywords an OpenAI strict schema may carry (A.2, E point 3). Everything else moves to the description.
OPENAI_STRICT_KEYWORDS: frozenset[str] = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$defs",
        "$ref",
        "description",
        "title",
        "format",
        "pattern",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
#: F.1: keywords strict mode carries, by the type they apply to.
OPENAI_STRING_KEYWORDS: frozenset[str] = frozenset({"pattern"})
OPENAI_NUMBER_KEYWORDS: frozenset[str] = frozenset(
    {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"}
)
OPENAI_ARRAY_KEYWORDS: frozenset[str] = frozenset({"minItems", "maxItems"})
#: A.2 "Composition": keywords OpenAI strict rejects.
OPENAI_FORBIDDEN_COMPOSITION: frozenset[str] = frozenset(
    {"allOf", "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas"}
)
#: A.1 "Max tools per request".
OPENAI_MAX_TOOLS = 128
#: Per-request limits, each with its source (docs/provider-rules.md; `toolgen.dialects.limits`).
LIMITS: tuple[Limit, ...] = (
    Limit("max_tools", OPENAI_MAX_TOOLS, "A.1 / F.1: 128 tools per request"),
    Limit("max_name_length", 64, "A.1: function names ^[a-zA-Z0-9_-]{1,64}$"),
    Limit("max_depth", OPENAI_MAX_DEPTH, "A.2 / F.1: 10 levels of nesting"),
    Limit("max_properties", OPENAI_MAX_PROPERTIES, "A.2 / F.1: 5,000 object properties"),
    Limit("max_enum_values", OPENAI_MAX_ENUM_VALUES, "A.2 / F.1: 1,000 enum values in total"),
    Limit("max_chars", OPENAI_MAX_CHARS, "A.2 / F.1: 120,000 characters of names and enum/const values"),
)
_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


@dataclass(frozen=True)
class SchemaStats:
    """Size figures of a schema as OpenAI counts them (A.2 "Limits", measured conservatively, A.3).

    `max_depth`: nesting of object/array nodes, root object = 1; `$defs` entries count as if placed
    directly under the root (level 2), references are not followed. `properties`: object properties in
    total (incl. `$defs`). `enum_values`: enum values in total. `chars`: characters of property names,
    `$defs` names, string forms of enum and const values. `big_string_enum_chars`: the largest total
    length of a string enum with more than 250 values (0 if none).
    """

    max_depth: int
    properties: int
    enum_values: int
    chars: int
    big_string_enum_chars: int


def schema_stats(schema: JSON) -> SchemaStats:
    """Measure `schema` against OpenAI's limits (A.2 "Limits"; conservative counting per A.3)."""
    max_depth = 0
    properties = 0
    enum_values = 0
    chars = 0
    big = 0

    def walk(node: JSON, level: int) -> None:
        nonlocal max_depth, properties, enum_values, chars, big
        if not isinstance(node, dict):
            return
        if is_object_schema(node) or is_array_schema(node):
            level += 1
            max_depth = max(max_depth, level)
        props = node.get("properties")
        if isinstance(props, dict):
            properties += len(props)
            chars += sum(len(str(k)) for k in props)
        enum = node.get("enum")
        if isinstance(enum, list):
            enum_values += len(enum)
            enum_chars = sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in enum)
            chars += enum_chars
            strings = [v for v in enum if isinstance(v, str)]
            if len(strings) > OPENAI_BIG_ENUM_VALUES and all(v is None or isinstance(v, str) for v in enum):
                big = max(big, sum(len(v) for v in strings))
        if "const" in node:
            c = node["const"]
            chars += len(c) if isinstance(c, str) else len(json.dumps(c))
        for key in DEFS_KEYS:
            defs = node.get(key)
            if isinstance(defs, dict):
                for name, sub in defs.items():
                    chars += len(str(name))
                    walk(sub, 1)
        for sub in child_nodes(node, into_defs=False):
            walk(sub, level)

    walk(schema, 0)
    return SchemaStats(max_depth, properties, enum_values, chars, big)


def openai_limit_problems(stats: SchemaStats) -> list[tuple[str, str]]:
    """``(rule, message)`` for every A.2 limit `stats` exceeds."""
    out: list[tuple[str, str]] = []
    if stats.max_depth > OPENAI_MAX_DEPTH:
        out.append(("A.2-limits-depth", f"nesting depth {stats.max_depth} > {OPENAI_MAX_DEPTH}"))
    if stats.properties > OPENAI_MAX_PROPERTIES:
        out.append(("A.2-limits-properties", f"{stats.properties} properties > {OPENAI_MAX_PROPERTIES}"))
    if stats.enum_values > OPENAI_MAX_ENUM_VALUES:
        out.append(("A.2-limits-enum", f"{stats.enum_values} enum values > {OPENAI_MAX_ENUM_VALUES}"))
    if stats.chars > OPENAI_MAX_CHARS:
        out.append(("A.2-limits-chars", f"{stats.chars} chars of names/enums/consts > {OPENAI_MAX_CHARS}"))
    if stats.big_string_enum_chars > OPENAI_BIG_ENUM_CHARS:
        out.append(
            (
                "A.2-limits-chars",
                (
                    f"a string enum with > {OPENAI_BIG_ENUM_VALUES} values totals "
                    f"{stats.big_string_enum_chars} chars > {OPENAI_BIG_ENUM_CHARS}"
                ),
            )
        )
    return out


def check_openai_strict(report: Report, tool: str, base: str, schema: dict[str, JSON]) -> None:
    """A.2 strict subset, A.4 (default, enum + null), E point 3 (toolgen's keyword allow-list)."""
    if "anyOf" in schema:
        report.add(tool, base, "A.2-root-anyOf", "root must not be anyOf")
    checked(_check_openai_strict_nodes, report, tool, base, schema)
    for rule, message in openai_limit_problems(schema_stats(schema)):
        report.add(tool, base, rule, message)


def _check_openai_strict_nodes(
    report: Report, tool: str, base: str, schema: dict[str, JSON], *, walk: Walk
) -> None:
    for ptr, node in walk(schema):
        where = base + ptr
        if node is False and ptr.endswith("/additionalProperties"):
            continue
        if not isinstance(node, dict):
            report.add(tool, where, "A.2-types", "boolean schema; strict needs a typed schema")
            continue
        if not any(k in node for k in ("type", "enum", "const", "anyOf", "$ref")):
            report.add(tool, where, "A.2-types", "schema admits any value; strict needs a type")
        _check_keywords(report, tool, where, node)
        types = types_of(node) or []
        bad_types = [t for t in types if t not in _JSON_TYPES]
        if bad_types or ("type" in node and types_of(node) is None):
            report.add(tool, where, "A.2-types", f"unknown type {node.get('type')!r}")
        if is_object_schema(node):
            _check_object(report, tool, where, node)
        _check_typed_keywords(report, tool, where, node, types)


def _check_keywords(report: Report, tool: str, where: str, node: dict[str, JSON]) -> None:
    """E point 3 and A.2 "Composition", A.4: only the strict keyword set, no ``default``, no
    keyword beside a ``$ref``."""
    for key in node:
        if key in OPENAI_STRICT_KEYWORDS:
            continue
        if key in OPENAI_FORBIDDEN_COMPOSITION:
            report.add(tool, where, "A.2-composition", f"{key!r} is not supported in strict mode")
        elif key == "default":
            report.add(tool, where, "A.4-default", "'default' must move into the description")
        else:
            report.add(
                tool,
                where,
                "E.3-keyword",
                f"{key!r} is outside the strict keyword set (move it to the description)",
            )
    if "$ref" in node and len(node) > 1:
        others = sorted(k for k in node if k != "$ref")
        report.add(tool, where, "A.2-ref-siblings", f"$ref cannot have keywords {others}")


def _check_object(report: Report, tool: str, where: str, node: dict[str, JSON]) -> None:
    """A.1 and A.2 "Every object": `properties`, ``additionalProperties: false``, and `required`
    naming every property once."""
    props = node.get("properties")
    if not isinstance(props, dict):
        report.add(tool, where, "A.1-object-properties", "object without properties")
        props = {}
    if node.get("additionalProperties") is not False:
        report.add(
            tool,
            where,
            "A.2-additionalProperties",
            "'additionalProperties' is required to be supplied and to be false",
        )
    required = node.get("required")
    if (
        not isinstance(required, list)
        or len(required) != len(set(map(str, required)))
        or set(required) != set(props)
    ):
        report.add(
            tool, where, "A.2-required", "'required' must be an array including every key in properties"
        )


def _check_typed_keywords(
    report: Report, tool: str, where: str, node: dict[str, JSON], types: list[str]
) -> None:
    """F.1 (each type's keywords on nodes of that type only), A.2 "Formats allowed" (on strings
    only), A.4 (a null-admitting node's enum lists null)."""
    for key in OPENAI_STRING_KEYWORDS | OPENAI_NUMBER_KEYWORDS | OPENAI_ARRAY_KEYWORDS:
        if key in node:
            allowed = (
                {"string", "null"}
                if key in OPENAI_STRING_KEYWORDS
                else {"number", "integer", "null"}
                if key in OPENAI_NUMBER_KEYWORDS
                else {"array", "null"}
            )
            if not types or not set(types) <= allowed:
                report.add(tool, where, "F.1-keyword-type", f"{key!r} on a node of type {types}")
    if "format" in node:
        fmt = node["format"]
        if fmt not in OPENAI_STRICT_FORMATS or not types or not set(types) <= {"string", "null"}:
            report.add(tool, where, "A.2-format", f"format {fmt!r} is not allowed here")
    if "null" in types and isinstance(node.get("enum"), list) and None not in node["enum"]:
        report.add(tool, where, "A.4-enum-null", "type admits null but enum lacks null")
