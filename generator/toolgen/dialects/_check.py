"""Conformance checker: emitted catalog (list of tool objects in one dialect) -> list of `Violation`s.

Run on every catalog `emit` produces (and in the tests). It re-checks the provider rules of
``docs/provider-dialects.md`` on the *output*, independently of how `toolgen.dialects` built it, so a
transform bug shows up as a violation rather than as a provider's HTTP 400 at run time.

A `Violation` names the dialect, the tool, a JSON pointer into the tool object, a short rule id that
cites the section (``A.2-additionalProperties``, ``D.1-ref-resolves``...) and a message. An empty
list means the catalog conforms. Nothing here raises on bad input: malformed tools are violations.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from toolgen.dialects.openai import (
    ANTHROPIC_FORMATS,
    OPENAI_FORBIDDEN_COMPOSITION,
    OPENAI_STRICT_FORMATS,
    OPENAI_STRICT_KEYWORDS,
    OPENAPI_ONLY_FORMATS,
    TOOL_NAME_RE,
    is_array_schema,
    is_object_schema,
    iter_nodes,
    iter_schemas,
    openai_limit_problems,
    recursive_ref_targets,
    resolve_local_ref,
    schema_stats,
    types_of,
    unresolved_refs,
)
from toolgen.pointer import PointerError, escape_token

_rs_meta: Any
try:  # optional accelerator; jsonschema remains the reference and gives the messages
    from jsonschema_rs import meta as _rs_meta
except ImportError:  # pragma: no cover - depends on the environment
    _rs_meta = None

JSON = Any
_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"
Dialect = Literal["openai", "anthropic", "mcp"]

#: A.1 "Max tools per request".
OPENAI_MAX_TOOLS = 128
_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null"})


@dataclass(frozen=True)
class Violation:
    """One broken rule: `rule` is a short id citing provider-dialects.md (e.g. ``A.2-required``);
    `pointer` is a JSON pointer into the tool object (``/function/parameters/properties/x``)."""

    dialect: str
    tool: str
    pointer: str
    rule: str
    message: str

    def render(self) -> str:
        return f"{self.dialect}:{self.tool}#{self.pointer}: [{self.rule}] {self.message}"


class _Report:
    def __init__(self, dialect: str):
        self.dialect = dialect
        self.items: list[Violation] = []

    def add(self, tool: str, pointer: str, rule: str, message: str) -> None:
        self.items.append(Violation(self.dialect, tool, pointer, rule, message))


def _tool_name(value: JSON, index: int) -> str:
    return value if isinstance(value, str) and value else f"#{index}"


def _check_names(report: _Report, names: list[tuple[str, str, JSON]], rule_prefix: str) -> None:
    """Names ``^[a-zA-Z0-9_-]{1,64}$`` (A.1, B.1, D.2 "toolgen should") and unique in the catalog."""
    seen: dict[str, str] = {}
    for label, pointer, name in names:
        if not isinstance(name, str) or not TOOL_NAME_RE.match(name):
            report.add(label, pointer, f"{rule_prefix}-name",
                       f"name {name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$")
            continue
        if name in seen:
            report.add(label, pointer, f"{rule_prefix}-name-unique", f"name {name!r} is used twice")
        seen[name] = label


Walk = Callable[[JSON], Iterator[tuple[str, JSON]]]


def _last_token_walk(schema: JSON) -> Iterator[tuple[str, JSON]]:
    """`iter_schemas` (same nodes, same order) with only the *last* token of each pointer, as
    ``"/token"``: enough for the checks to decide, much cheaper than full pointers. `_checked` runs a
    check with it first and walks again with full pointers only when the check found something."""
    stack: list[tuple[str, JSON]] = [("", schema)]
    while stack:
        token, node = stack.pop()
        yield token, node
        if not isinstance(node, dict):
            continue
        children: list[tuple[str, JSON]] = []
        for key, value in node.items():
            if key in _MAP_KEYS:
                if isinstance(value, dict):
                    children.extend(("/" + (escape_token(name) if "/" in name or "~" in name else name), sub)
                                    for name, sub in value.items())
            elif key in _LIST_KEYS:
                if isinstance(value, list):
                    children.extend(("/" + str(i), sub) for i, sub in enumerate(value))
            elif key in _ONE_KEYS:
                if isinstance(value, list):
                    if key == "items":
                        children.extend(("/" + str(i), sub) for i, sub in enumerate(value))
                elif isinstance(value, (dict, bool)):
                    children.append(("/" + key, value))
        children.reverse()
        stack.extend(children)


_MAP_KEYS = frozenset(("properties", "patternProperties", "$defs", "definitions", "dependentSchemas"))
_LIST_KEYS = frozenset(("allOf", "anyOf", "oneOf", "prefixItems"))
_ONE_KEYS = frozenset(("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
                       "unevaluatedItems", "unevaluatedProperties", "contentSchema"))


def _checked(check: Callable[..., None], report: _Report, *args: Any) -> None:
    """Run `check(report, *args, walk=...)` cheaply: first over `_last_token_walk` into a scratch
    report; only if that finds a problem, again over `iter_schemas` into `report` (full pointers)."""
    scratch = _Report(report.dialect)
    check(scratch, *args, walk=_last_token_walk)
    if scratch.items:
        check(report, *args, walk=iter_schemas)


class _Summary:
    """What one walk over a schema found, so each check walks again (with pointers, to report) only
    when there is something to report: arrays without `items`, `$ref` values, `nullable` keys,
    OpenAPI-only formats and the regular expressions to compile."""

    __slots__ = ("array_without_items", "bad_format", "nullable", "patterns", "refs")

    def __init__(self, schema: JSON) -> None:
        self.array_without_items = self.nullable = self.bad_format = False
        self.refs: set[Any] = set()
        self.patterns: list[str] = []
        for node in iter_nodes(schema):
            if not isinstance(node, dict):
                continue
            if "items" not in node and is_array_schema(node):
                self.array_without_items = True
            if "$ref" in node:
                ref = node["$ref"]
                self.refs.add(ref if isinstance(ref, str) else None)
            if "nullable" in node:
                self.nullable = True
            if isinstance(node.get("format"), str) and node["format"] in OPENAPI_ONLY_FORMATS:
                self.bad_format = True
            if "pattern" in node and isinstance(node["pattern"], str):
                self.patterns.append(node["pattern"])
            if "patternProperties" in node and isinstance(node["patternProperties"], dict):
                self.patterns.extend(node["patternProperties"])

    def refs_resolve(self, schema: JSON) -> bool:
        if None in self.refs:
            return False
        try:
            for ref in self.refs:
                resolve_local_ref(schema, ref)
        except PointerError:
            return False
        return True


def _check_items_and_refs(report: _Report, tool: str, base: str, schema: JSON, prefix: str,
                          summary: _Summary | None = None) -> None:
    """Every array has `items` (A.2 "Array keywords", E point 4); every `$ref` resolves (D.1, case 21)."""
    summary = summary or _Summary(schema)
    if summary.array_without_items:
        _checked(_check_items, report, tool, base, schema)
    if not summary.refs or summary.refs_resolve(schema):
        return
    for ptr, ref in unresolved_refs(schema):
        report.add(tool, base + ptr, f"{prefix}-ref-resolves", f"$ref {ref!r} does not resolve in the schema")


def _check_items(report: _Report, tool: str, base: str, schema: JSON, *, walk: Walk) -> None:
    for ptr, node in walk(schema):
        if isinstance(node, dict) and is_array_schema(node) and "items" not in node:
            report.add(tool, base + ptr, "E.4-array-items", "array schema without items")


def _fast_meta_valid(schema: JSON, summary: _Summary | None = None) -> bool:
    """True when the (optional, much faster) jsonschema_rs meta-validator accepts `schema` as 2020-12
    and every `pattern` compiles; False means "ask jsonschema", which also yields the message."""
    if _rs_meta is None or not isinstance(schema, dict):
        return False
    probe = schema if "$schema" in schema else {**schema, "$schema": _DRAFT_2020_12}
    try:
        if not _rs_meta.is_valid(probe):
            return False
    except Exception:  # noqa: BLE001 - unknown $schema, registry problems: let jsonschema decide and explain
        return False
    for pattern in (summary or _Summary(schema)).patterns:
        try:
            re.compile(pattern)
        except re.error:
            return False
    return True


def _check_2020_12(report: _Report, tool: str, base: str, schema: JSON, rule: str,
                   summary: _Summary | None = None) -> None:
    """Valid under the JSON Schema 2020-12 meta-schema (B.1 `input_schema`, D.1)."""
    if _fast_meta_valid(schema, summary):
        return
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        path = "".join(f"/{p}" for p in exc.path)
        report.add(tool, base + path, rule, f"not valid JSON Schema 2020-12: {exc.message}")


def _check_no_nullable(report: _Report, tool: str, base: str, schema: JSON, rule: str,
                       summary: _Summary | None = None) -> None:
    """OpenAPI 3.0 `nullable` means nothing to JSON Schema (case 08)."""
    if (summary or _Summary(schema)).nullable:
        _checked(_check_nullable_nodes, report, tool, base, schema, rule)


def _check_nullable_nodes(report: _Report, tool: str, base: str, schema: JSON, rule: str, *, walk: Walk) -> None:
    for ptr, node in walk(schema):
        if isinstance(node, dict) and "nullable" in node:
            report.add(tool, base + ptr, rule, "OpenAPI `nullable` keyword; use a null type instead")


def _object_root(report: _Report, tool: str, pointer: str, schema: JSON, rule: str, what: str) -> bool:
    if not isinstance(schema, dict) or types_of(schema) != ["object"]:
        report.add(tool, pointer, rule, f"{what} must be a schema with type \"object\"")
        return False
    return True


def _check_openai_strict(report: _Report, tool: str, base: str, schema: dict[str, JSON]) -> None:
    """A.2 strict subset, A.4 (default, enum + null), E point 3 (toolgen's keyword allow-list)."""
    if "anyOf" in schema:
        report.add(tool, base, "A.2-root-anyOf", "root must not be anyOf")
    _checked(_check_openai_strict_nodes, report, tool, base, schema)
    for rule, message in openai_limit_problems(schema_stats(schema)):
        report.add(tool, base, rule, message)


def _check_openai_strict_nodes(report: _Report, tool: str, base: str, schema: dict[str, JSON], *,
                               walk: Walk) -> None:
    for ptr, node in walk(schema):
        where = base + ptr
        if node is False and ptr.endswith("/additionalProperties"):
            continue
        if not isinstance(node, dict):
            report.add(tool, where, "A.2-types", "boolean schema; strict needs a typed schema")
            continue
        if not any(k in node for k in ("type", "enum", "const", "anyOf", "$ref")):
            report.add(tool, where, "A.2-types", "schema admits any value; strict needs a type")
        for key in node:
            if key in OPENAI_STRICT_KEYWORDS:
                continue
            if key in OPENAI_FORBIDDEN_COMPOSITION:
                report.add(tool, where, "A.2-composition", f"{key!r} is not supported in strict mode")
            elif key == "default":
                report.add(tool, where, "A.4-default", "'default' must move into the description")
            else:
                report.add(tool, where, "E.3-keyword",
                           f"{key!r} is outside the strict keyword set (move it to the description)")
        if "$ref" in node and len(node) > 1:
            others = sorted(k for k in node if k != "$ref")
            report.add(tool, where, "A.2-ref-siblings", f"$ref cannot have keywords {others}")
        types = types_of(node) or []
        bad_types = [t for t in types if t not in _JSON_TYPES]
        if bad_types or ("type" in node and types_of(node) is None):
            report.add(tool, where, "A.2-types", f"unknown type {node.get('type')!r}")
        if is_object_schema(node):
            props = node.get("properties")
            if not isinstance(props, dict):
                report.add(tool, where, "A.1-object-properties", "object without properties")
                props = {}
            if node.get("additionalProperties", None) is not False:
                report.add(tool, where, "A.2-additionalProperties",
                           "'additionalProperties' is required to be supplied and to be false")
            required = node.get("required")
            if (not isinstance(required, list) or len(required) != len(set(map(str, required)))
                    or set(required) != set(props)):
                report.add(tool, where, "A.2-required",
                           "'required' must be an array including every key in properties")
        if "format" in node:
            fmt = node["format"]
            if fmt not in OPENAI_STRICT_FORMATS or not types or not set(types) <= {"string", "null"}:
                report.add(tool, where, "A.2-format", f"format {fmt!r} is not allowed here")
        if "null" in types and isinstance(node.get("enum"), list) and None not in node["enum"]:
            report.add(tool, where, "A.4-enum-null", "type admits null but enum lacks null")


def check_openai_catalog(tools: list[dict[str, JSON]], *, max_tools: int | None = OPENAI_MAX_TOOLS
                         ) -> list[Violation]:
    """Check a Chat Completions catalog (A.1, A.2, A.4, E).

    Every tool: shape ``{"type": "function", "function": {...}}``, explicit boolean `strict` (A.1
    "toolgen should"), name pattern and uniqueness, object root (not anyOf), arrays with `items`,
    resolvable `$ref`s, no `nullable`. Strict tools additionally: every object closed with complete
    `required` and `properties`, only the strict keyword set, allowed formats on strings only, no
    `default`, no `$ref` siblings, null in enums of nullable nodes, the A.2 limits.
    `max_tools`: the A.1 cap on tools per request (``A.1-max-tools``); None skips it (include-all
    builds may legitimately exceed it and are split by the caller)."""
    report = _Report("openai")
    if not isinstance(tools, list):
        report.add("", "", "A.1-shape", "catalog must be a list of tools")
        return report.items
    if max_tools is not None and len(tools) > max_tools:
        report.add("", "", "A.1-max-tools", f"{len(tools)} tools > {max_tools} per request")
    names: list[tuple[str, str, JSON]] = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(
                tool.get("function"), dict):
            report.add(f"#{i}", f"/{i}", "A.1-shape", 'tool must be {"type": "function", "function": {...}}')
            continue
        fn = tool["function"]
        label = _tool_name(fn.get("name"), i)
        names.append((label, "/function/name", fn.get("name")))
        if "description" in fn and not isinstance(fn["description"], str):
            report.add(label, "/function/description", "A.1-shape", "description must be a string")
        if not isinstance(fn.get("strict"), bool):
            report.add(label, "/function/strict", "A.1-strict-explicit",
                       "strict must be sent explicitly as true or false")
        if "parameters" not in fn:
            continue  # A.1: omitted parameters = empty parameter list
        params = fn["parameters"]
        base = "/function/parameters"
        if not _object_root(report, label, base, params, "A.2-root-object", "parameters"):
            continue
        summary = _Summary(params)
        _check_items_and_refs(report, label, base, params, "A.2", summary)
        _check_no_nullable(report, label, base, params, "E.2-nullable", summary)
        if fn.get("strict") is True:
            _check_openai_strict(report, label, base, params)
    _check_names(report, names, "A.1")
    return report.items


def check_anthropic_catalog(tools: list[dict[str, JSON]]) -> list[Violation]:
    """Check a Messages API catalog (B.1, B.2, E).

    Every tool: `name` ``^[a-zA-Z0-9_-]{1,64}$`` and unique (B.1 "toolgen should"), `input_schema` an
    object-root schema valid under JSON Schema 2020-12, arrays with `items`, `$ref`s resolving, no
    `nullable`; `strict` if present is a boolean. Tools sent with ``strict: true`` additionally: no
    recursion, every object closed, formats from B.2's list."""
    report = _Report("anthropic")
    if not isinstance(tools, list):
        report.add("", "", "B.1-fields", "catalog must be a list of tools")
        return report.items
    names: list[tuple[str, str, JSON]] = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            report.add(f"#{i}", f"/{i}", "B.1-fields", "tool must be an object")
            continue
        label = _tool_name(tool.get("name"), i)
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
        if not _object_root(report, label, base, schema, "B.1-input-schema-object", "input_schema"):
            continue
        summary = _Summary(schema)
        _check_2020_12(report, label, base, schema, "B.1-json-schema-2020-12", summary)
        _check_items_and_refs(report, label, base, schema, "B.1", summary)
        _check_no_nullable(report, label, base, schema, "E.2-nullable", summary)
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
    _check_names(report, names, "B.1")
    return report.items


def check_mcp_catalog(tools: list[dict[str, JSON]]) -> list[Violation]:
    """Check an MCP 2025-11-25 ``tools/list`` catalog (D.1, D.2, E).

    Names ``^[a-zA-Z0-9_-]{1,64}$`` (D.2 "toolgen should": 64, no dots) and unique; `inputSchema`
    present, not null, object root; `outputSchema` (if present) object root; both valid 2020-12 with
    every `$ref` resolving inside the schema (case 21), no `nullable`, no OpenAPI-only formats, arrays
    with `items`; `annotations` with explicit boolean `readOnlyHint`/`destructiveHint`/`idempotentHint`/
    `openWorldHint` (and a string `title` if present)."""
    report = _Report("mcp")
    if not isinstance(tools, list):
        report.add("", "", "D.1-fields", "catalog must be a list of tools")
        return report.items
    names: list[tuple[str, str, JSON]] = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            report.add(f"#{i}", f"/{i}", "D.1-fields", "tool must be an object")
            continue
        label = _tool_name(tool.get("name"), i)
        names.append((label, "/name", tool.get("name")))
        for key in ("title", "description"):
            if key in tool and not isinstance(tool[key], str):
                report.add(label, f"/{key}", "D.1-fields", f"{key} must be a string")
        for key, rule in (("inputSchema", "D.1-input-schema-object"), ("outputSchema", "D.1-output-schema-object")):
            if key not in tool:
                if key == "inputSchema":
                    report.add(label, "/inputSchema", rule, "inputSchema is required")
                continue
            schema = tool[key]
            base = f"/{key}"
            if not _object_root(report, label, base, schema, rule, key):
                continue
            summary = _Summary(schema)
            _check_2020_12(report, label, base, schema, "D.1-json-schema-2020-12", summary)
            _check_items_and_refs(report, label, base, schema, "D.1", summary)
            _check_no_nullable(report, label, base, schema, "D.1-nullable", summary)
            if summary.bad_format:
                for ptr, node in iter_schemas(schema):
                    if isinstance(node, dict) and node.get("format") in OPENAPI_ONLY_FORMATS:
                        report.add(label, base + ptr, "D.1-format",
                                   f"OpenAPI-only format {node['format']!r} (move it to the description)")
        ann = tool.get("annotations")
        if not isinstance(ann, dict):
            report.add(label, "/annotations", "D.1-annotations", "annotations must be an object")
        else:
            for hint in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"):
                if not isinstance(ann.get(hint), bool):
                    report.add(label, f"/annotations/{hint}", "D.1-annotations",
                               f"{hint} must be an explicit boolean")
            if "title" in ann and not isinstance(ann["title"], str):
                report.add(label, "/annotations/title", "D.1-annotations", "title must be a string")
    _check_names(report, names, "D.2")
    return report.items


def check_catalog(dialect: Dialect, tools: list[dict[str, JSON]], *,
                  max_tools: int | None = OPENAI_MAX_TOOLS) -> list[Violation]:
    """Dispatch to the dialect's checker; `max_tools` applies to OpenAI only (A.1)."""
    if dialect == "openai":
        return check_openai_catalog(tools, max_tools=max_tools)
    if dialect == "anthropic":
        return check_anthropic_catalog(tools)
    if dialect == "mcp":
        return check_mcp_catalog(tools)
    raise ValueError(f"unknown dialect {dialect!r}")
