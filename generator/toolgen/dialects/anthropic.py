"""The Anthropic dialect: Messages API tools (``docs/provider-rules.md`` B.1-B.3 and E point 5).

Input: an IR `Tool` (its canonical input schema). Output: the view (`anthropic_input_schema` ->
`DialectSchema`: the original optionality kept, ``oneOf`` -> ``anyOf``, objects closed where that
rejects nothing declared elsewhere, formats outside B.2's list and ``default`` moved into the
description), the tool object (`anthropic_tool`), the B.2 budgets and the conformance check of a
whole catalog (`check_anthropic_catalog`). ``strict`` is never sent: `DialectSchema.strict` records
whether strict tool use would be possible.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..compile.ir import Tool
from ..compile.lower.input_examples import MAX_INPUT_EXAMPLES, example_problem
from ._base import Dialect, DialectOptions, DialectSchema, allows_code_callers, describe
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
from ._limits import Limit
from ._simplify import simplify_schema
from ._walk import MISSING, is_object_schema, iter_nodes, iter_schemas, recursive_ref_targets, types_of

JSON = Any

#: B.2 "Formats allowed" (Anthropic strict; `SupportedStringFormats` of the Python SDK).
ANTHROPIC_FORMATS: frozenset[str] = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid", "uri"}
)
#: B.2 "Budgets" (per request; toolgen also refuses strict for a single tool that exceeds them).
ANTHROPIC_MAX_OPTIONAL = 24
ANTHROPIC_MAX_UNIONS = 16
ANTHROPIC_MAX_STRICT_TOOLS = 20
#: Per-request limits, each with its source (docs/provider-rules.md; `toolgen.dialects.limits`).
LIMITS: tuple[Limit, ...] = (
    Limit(
        "max_name_length",
        64,
        "B.1 / F.2: 64 characters in Claude clients, the mcp__<server>__ prefix included",
    ),
    Limit("max_strict_tools", ANTHROPIC_MAX_STRICT_TOOLS, "F.2: 20 strict tools per request"),
    Limit("max_optional_params", ANTHROPIC_MAX_OPTIONAL, "F.2: 24 optional parameters across strict schemas"),
    Limit(
        "max_union_params", ANTHROPIC_MAX_UNIONS, "F.2: 16 parameters with union types (anyOf, type arrays)"
    ),
)
#: F.2: the tool-search server tool sent with deferred tools (BM25 over names and descriptions; the regex
#: variant is `tool_search_tool_regex_20251119`); at most 10,000 tools per request with tool search
TOOL_SEARCH: dict[str, Any] = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
TOOL_SEARCH_TYPE_RE = re.compile(r"^tool_search_tool_(regex|bm25)_[0-9]{8}$")
#: F.2 / programmatic tool calling: ``allowed_callers`` of a tool model-written code may call (the code
#: execution tool's version that keeps the interpreter's state between calls; the host sends that tool)
CODE_EXECUTION_TYPE = "code_execution_20260120"
PROGRAMMATIC_CALLERS: tuple[str, ...] = ("direct", CODE_EXECUTION_TYPE)
ALLOWED_CALLERS: frozenset[str] = frozenset(
    {"direct", "code_execution_20250825", "code_execution_20260120", "code_execution_20260521"}
)
ANTHROPIC_MAX_SEARCH_TOOLS = 10_000
ANTHROPIC_SEARCH_SOURCE = "F.2: at most 10,000 tools with tool search"
#: F.2: keywords Anthropic strict schemas do not support (moved into the description of strict tools).
ANTHROPIC_STRICT_UNSUPPORTED: frozenset[str] = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "propertyNames",
        "patternProperties",
        "not",
        "if",
        "then",
        "else",
        "dependentRequired",
        "dependentSchemas",
        "contains",
        "minContains",
        "maxContains",
        "prefixItems",
        "unevaluatedItems",
        "unevaluatedProperties",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
        "oneOf",
    }
)


def _has_free_form(schema: JSON) -> list[str]:
    """Pointers of object nodes that accept undeclared members, and of `{}`/true nodes."""
    return [ptr for ptr, node in iter_schemas(schema) if _free_form_node(node)]


def _free_form_node(node: JSON) -> bool:
    if node is True or node == {}:
        return True
    return (
        isinstance(node, dict)
        and is_object_schema(node)
        and "$ref" not in node
        and (node.get("additionalProperties", MISSING) is not False or "patternProperties" in node)
    )


def anthropic_input_schema(canonical: dict[str, JSON]) -> DialectSchema:
    """Anthropic `input_schema` from a canonical input schema (B.1-B.3, E point 5).

    Original optionality is kept (no null widening, E point 5); the schema stays valid JSON Schema
    2020-12 (B.1); ``oneOf`` -> ``anyOf``; ``additionalProperties: false`` is added on objects that
    declare properties and say nothing about extras (not on `allOf` members or the schemas they
    reference, nor on nodes combining properties with `allOf`/`anyOf`/`oneOf`/`$ref`, where closing
    would reject members declared elsewhere); ``format`` values outside B.2's list (OpenAPI-only
    ones such as password/int32, and ``uri-reference``) and ``default`` move into the description;
    other constraints stay (hints for non-strict tools, B.1); then `simplify_schema` (nested ``anyOf``
    flattened, unions of bare types as ``[T, "null"]`` type arrays, descriptions that only repeat a
    property name dropped: the same values accepted). A root without properties becomes
    ``{"type": "object", "properties": {}, "additionalProperties": false}`` (case 24).

    `strict` says whether strict tool use (B.2) would be possible: False for recursive schemas
    (warning names each recursive `$defs` entry), free-form objects / ``{}`` values, and single tools
    over the B.2 budgets (24 optional properties, 16 unions). toolgen never sends ``strict`` itself.
    """
    light = Light(LightRules("anthropic", ANTHROPIC_FORMATS, True, True, True), canonical)
    out = light.node(canonical, "", "")  # copy on write: shares unchanged subtrees with `canonical`
    out = simplify_schema(out, multi_type=False)
    if not isinstance(out, dict):
        out = {"type": "object", "properties": {}}
    if is_empty_params(out):
        kept = {k: out[k] for k in ("title", "description") if k in out}
        out = {**kept, "type": "object", "properties": {}, "additionalProperties": False}
    elif "properties" not in out and types_of(out) == ["object"]:
        out = {**out, "properties": {}}  # `out` may be `canonical` itself (copy on write): never mutated
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
        warnings.append(
            f"{optional} optional properties > {ANTHROPIC_MAX_OPTIONAL} (#): anthropic strict disabled"
        )
    if unions > ANTHROPIC_MAX_UNIONS:
        strict = False
        warnings.append(f"{unions} union schemas > {ANTHROPIC_MAX_UNIONS} (#): anthropic strict disabled")
    return DialectSchema(out, tuple(light.notes), strict, tuple(warnings))


def anthropic_tool(
    name: str,
    description: str,
    canonical_input: dict[str, JSON],
    *,
    input_schema: DialectSchema | None = None,
) -> dict[str, JSON]:
    """Anthropic Messages API tool (B.1): ``{"name", "description", "input_schema"}``.

    ``strict`` is decided over the whole catalog (`select_strict`: per-request budgets, B.2/F.2);
    `anthropic_input_schema` reports whether it would be possible for this tool alone."""
    return {
        "name": name,
        "description": description,
        "input_schema": (
            input_schema if input_schema is not None else anthropic_input_schema(canonical_input)
        ).schema,
    }


def check_anthropic_catalog(
    tools: list[dict[str, JSON]], *, max_search_tools: int = ANTHROPIC_MAX_SEARCH_TOOLS
) -> list[Violation]:
    """Check a Messages API catalog (B.1, B.2, E, F.2), as one request sends it.

    Every tool: `name` ``^[a-zA-Z0-9_-]{1,64}$`` and unique (B.1 "toolgen should"), `input_schema` an
    object-root schema valid under JSON Schema 2020-12, arrays with `items`, `$ref`s resolving, no
    `nullable`; `strict` if present is a boolean. Tools sent with ``strict: true`` additionally: no
    recursion, every object closed, formats from B.2's list. With a tool-search tool: exactly one,
    at least one tool not deferred, and at most `max_search_tools` entries in all (F.2: 10,000).
    The rules of one tool alone are `check_anthropic_tool`; those that span tools besides unique
    names, `check_anthropic_across`."""
    report = Report("anthropic")
    if not isinstance(tools, list):
        report.add("", "", "B.1-fields", "catalog must be a list of tools")
        return report.items
    names: list[tuple[str, str, JSON]] = []
    for i, tool in enumerate(tools):
        if isinstance(tool, dict):
            names.append((tool_label(tool.get("name"), i), "/name", tool.get("name")))
        _check_tool(report, i, tool)
    _check_across(report, tools, max_search_tools)
    check_names(report, names, "B.1")
    return report.items


def check_anthropic_tool(tool: dict[str, JSON]) -> list[Violation]:
    """The rules of `check_anthropic_catalog` that concern one tool alone (its fields, its schema, its
    name's form): a catalog conforms exactly when each tool passes these, no name is used twice and
    `check_anthropic_across` finds nothing."""
    report = Report("anthropic")
    _check_tool(report, 0, tool)
    if isinstance(tool, dict):
        check_names(report, [(tool_label(tool.get("name"), 0), "/name", tool.get("name"))], "B.1")
    return report.items


def check_anthropic_across(
    tools: list[dict[str, JSON]], *, max_search_tools: int = ANTHROPIC_MAX_SEARCH_TOOLS
) -> list[Violation]:
    """The rules of `check_anthropic_catalog` that span tools, besides unique names: one tool-search
    tool with deferred tools, not every tool deferred, at most `max_search_tools` entries with tool
    search (F.2: 10,000), and the strict tools within one request's budgets (B.2/F.2)."""
    report = Report("anthropic")
    if isinstance(tools, list):
        _check_across(report, tools, max_search_tools)
    return report.items


def _check_tool(report: Report, i: int, tool: JSON) -> None:
    """One tool's own rules (`check_anthropic_catalog`), its name's form aside."""
    if not isinstance(tool, dict):
        report.add(f"#{i}", f"/{i}", "B.1-fields", "tool must be an object")
        return
    label = tool_label(tool.get("name"), i)
    if "type" in tool:  # a server tool: only the tool-search tools of F.2 are emitted
        _check_search_tool(report, label, tool)
        return
    if "defer_loading" in tool and not isinstance(tool["defer_loading"], bool):
        report.add(label, "/defer_loading", "F.2-defer-loading", "defer_loading must be a boolean")
    if "description" in tool and not isinstance(tool["description"], str):
        report.add(label, "/description", "B.1-fields", "description must be a string")
    if "strict" in tool and not isinstance(tool["strict"], bool):
        report.add(label, "/strict", "B.1-fields", "strict must be a boolean")
    _check_callers(report, label, tool)
    if "input_schema" not in tool:
        report.add(label, "/input_schema", "B.1-fields", "input_schema is required")
        return
    schema = tool["input_schema"]
    base = "/input_schema"
    if not object_root(report, label, base, schema, "B.1-input-schema-object", "input_schema"):
        return
    _check_examples(report, label, tool, schema)
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
                report.add(
                    label,
                    base + ptr,
                    "B.2-additionalProperties",
                    "strict objects need additionalProperties: false",
                )
            if "format" in node and node["format"] not in ANTHROPIC_FORMATS:
                report.add(label, base + ptr, "B.2-format", f"format {node['format']!r} not supported")
            for key in node:
                if key in ANTHROPIC_STRICT_UNSUPPORTED or (key == "minItems" and node[key] not in (0, 1)):
                    report.add(
                        label, base + ptr, "F.2-keyword", f"{key!r} is not supported in strict schemas"
                    )


def _check_callers(report: Report, label: str, tool: dict[str, JSON]) -> None:
    """F.2: ``allowed_callers`` is a non-empty list of distinct known callers."""
    if "allowed_callers" not in tool:
        return
    callers = tool["allowed_callers"]
    if (
        not isinstance(callers, list)
        or not callers
        or len(set(map(str, callers))) != len(callers)
        or not all(isinstance(c, str) and c in ALLOWED_CALLERS for c in callers)
    ):
        report.add(
            label,
            "/allowed_callers",
            "F.2-allowed-callers",
            f"allowed_callers must be distinct values of {sorted(ALLOWED_CALLERS)}",
        )


def _check_examples(report: Report, label: str, tool: dict[str, JSON], schema: JSON) -> None:
    """B.1: ``input_examples`` is a list of at most `MAX_INPUT_EXAMPLES` objects, each valid under the
    tool's ``input_schema`` (the API refuses one that is not) and holding no secret-like member."""
    if "input_examples" not in tool:
        return
    examples = tool["input_examples"]
    if not isinstance(examples, list) or not 0 < len(examples) <= MAX_INPUT_EXAMPLES:
        report.add(
            label,
            "/input_examples",
            "B.1-input-examples",
            f"input_examples must be a list of 1 to {MAX_INPUT_EXAMPLES} argument objects",
        )
        return
    for i, example in enumerate(examples):
        problem = example_problem(example, schema, complete_only=False)
        if problem is not None:
            report.add(label, f"/input_examples/{i}", "B.1-input-examples", f"the example {problem}")


def _check_across(report: Report, tools: list[JSON], max_search_tools: int) -> None:
    """The rules that span tools (`check_anthropic_across`)."""
    entries = [t for t in tools if isinstance(t, dict)]
    searches = sum(1 for t in entries if "type" in t and _is_search_tool(t))
    deferred = sum(1 for t in entries if "type" not in t and t.get("defer_loading") is True)
    if deferred and not searches:
        report.add(
            "", "", "F.2-tool-search", f"{deferred} tools have defer_loading but no tool-search tool is sent"
        )
    if searches > 1:
        report.add("", "", "F.2-tool-search", f"{searches} tool-search tools; send one")
    if searches and len(tools) > max_search_tools:
        report.add("", "", "F.2-tool-search", f"{len(tools)} tools > {max_search_tools} with tool search")
    if tools and deferred == len(tools):
        report.add("", "", "F.2-tool-search", "every tool is deferred: at least one tool must be loaded")
    strict = [t for t in entries if t.get("strict") is True]
    optional = sum(strict_budget(t.get("input_schema"))[0] for t in strict)
    unions = sum(strict_budget(t.get("input_schema"))[1] for t in strict)
    for actual, cap, what in (
        (len(strict), ANTHROPIC_MAX_STRICT_TOOLS, "strict tools"),
        (optional, ANTHROPIC_MAX_OPTIONAL, "optional parameters in strict tools"),
        (unions, ANTHROPIC_MAX_UNIONS, "union parameters in strict tools"),
    ):
        if actual > cap:
            report.add("", "", "F.2-budget", f"{actual} {what} > {cap} per request")


def _is_search_tool(tool: dict[str, JSON]) -> bool:
    kind = tool.get("type")
    return isinstance(kind, str) and TOOL_SEARCH_TYPE_RE.fullmatch(kind) is not None


def _check_search_tool(report: Report, label: str, tool: dict[str, JSON]) -> None:
    """F.2: a server tool must be a tool-search tool (``tool_search_tool_{regex,bm25}_<date>``), named
    after its kind, never deferred itself (how many there are is `_check_across`'s rule)."""
    kind = tool.get("type")
    match = TOOL_SEARCH_TYPE_RE.fullmatch(kind) if isinstance(kind, str) else None
    if match is None:
        report.add(label, "/type", "F.2-server-tool", f"server tool type {kind!r} is not a tool-search tool")
        return
    if tool.get("name") != f"tool_search_tool_{match.group(1)}":
        report.add(
            label, "/name", "F.2-server-tool", f"a {kind} tool is named tool_search_tool_{match.group(1)}"
        )
    if tool.get("defer_loading") is True:
        report.add(
            label, "/defer_loading", "F.2-tool-search", "the tool-search tool itself cannot be deferred"
        )


def deferred_catalog(entries: Sequence[dict[str, JSON]]) -> list[dict[str, JSON]]:
    """The catalog to send when some tools are deferred (F.2): the tools (deferred ones carry
    ``defer_loading: true``, see `_catalog_entry`) followed by the BM25 tool-search server tool; the
    catalog unchanged when none is deferred."""
    out = list(entries)
    if any(e.get("defer_loading") is True for e in out):
        out.append(dict(TOOL_SEARCH))
    return out


def anthropic_upfront(catalog: Sequence[dict[str, JSON]]) -> list[dict[str, JSON]]:
    """What the model sees of `catalog` before it searches: every tool without ``defer_loading`` and
    the tool-search tool; deferred tools stay hidden until a search returns a `tool_reference` to them."""
    return [e for e in catalog if e.get("defer_loading") is not True]


def strict_budget(schema: JSON) -> tuple[int, int]:
    """(optional parameters, union parameters) of a schema, as the B.2/F.2 budgets count them."""
    optional = unions = 0
    for node in iter_nodes(schema):
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("properties"), dict):
            req = node.get("required", [])
            optional += sum(1 for k in node["properties"] if k not in req)
        if "anyOf" in node or isinstance(node.get("type"), list):
            unions += 1
    return optional, unions


def _strict_blockers(schema: JSON) -> list[str]:
    """Why Anthropic's strict subset cannot express `schema` (empty: it can)."""
    why: list[str] = []
    if recursive_ref_targets(schema):
        why.append("recursive schema")
    if _has_free_form(schema):
        why.append("free-form object")
    for node in iter_nodes(schema):
        if isinstance(node, dict) and "allOf" in node:
            why.append("allOf")
            break
    return why


def strict_form(schema: JSON) -> JSON:
    """`schema` with the keywords Anthropic strict does not support moved into descriptions (F.2)."""
    if isinstance(schema, list):
        return [strict_form(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, JSON] = {}
    moved: list[tuple[str, JSON]] = []
    for key, value in schema.items():
        if key in ANTHROPIC_STRICT_UNSUPPORTED or (key == "minItems" and value not in (0, 1)):
            moved.append((key, value))
        elif key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {k: strict_form(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties") or key == "anyOf":
            out[key] = strict_form(value)
        else:
            out[key] = value
    if moved:
        text = describe(out.get("description"), moved)
        if text:
            out["description"] = text
    return out


_SELECT_ORDER = {"destructive": 0, "write": 1}


def strict_facts(entry: dict[str, JSON]) -> tuple[tuple[str, ...], int, int]:
    """What `select_strict` reads of one catalog entry: why Anthropic's strict subset cannot express
    the strict form of its input schema (`strict_form`; empty: it can), and the optional and union
    parameters that form counts against the budgets (`strict_budget`; 0 when it cannot be strict). A
    pure function of the entry."""
    schema = strict_form(entry["input_schema"])
    why = tuple(_strict_blockers(schema))
    if why:
        return why, 0, 0
    optional, unions = strict_budget(schema)
    return (), optional, unions


def select_strict(
    tools: list[Tool], entries: list[dict[str, JSON]], facts: list[Any] | None = None
) -> tuple[list[dict[str, JSON]], list[tuple[str, str]]]:
    """B.2 / F.2: mark tools ``strict: true`` where the strict subset can express them, within one
    request's budgets (20 strict tools, 24 optional and 16 union parameters); record tools of
    destructive intents first, then other writes, then previews and reads (catalog order within a
    group). A tool whose intent asks for ``strict: false`` (`Tool.strict`) is never strict. Every other
    tool carries ``strict: false`` (the entry itself when it already does, as `_catalog_entry`
    makes it), and the decision says why. `facts`: `strict_facts` of each entry, if the caller has
    them (remembered); else computed here."""
    facts = facts if facts is not None else [strict_facts(e) for e in entries]
    order = sorted(
        range(len(tools)),
        key=lambda i: (
            0 if tools[i].policy.mode == "record" else 1 if tools[i].policy.mode == "preview" else 2,
            _SELECT_ORDER.get(tools[i].policy.effect, 2),
            i,
        ),
    )
    out = [e if e.get("strict") is False else {**e, "strict": False} for e in entries]
    decisions: dict[int, str] = {}
    count = optional = unions = 0
    for i in order:
        if not tools[i].strict:
            decisions[i] = "not strict: the intent map asks for strict: false"
            continue
        why, opt, uni = facts[i]
        if why:
            decisions[i] = "not strict: " + ", ".join(why) + " (outside the strict subset)"
            continue
        if (
            count + 1 > ANTHROPIC_MAX_STRICT_TOOLS
            or optional + opt > ANTHROPIC_MAX_OPTIONAL
            or unions + uni > ANTHROPIC_MAX_UNIONS
        ):
            decisions[i] = (
                f"not strict: over the per-request budget ({opt} optional, {uni} union parameters; "
                f"{ANTHROPIC_MAX_STRICT_TOOLS} tools / {ANTHROPIC_MAX_OPTIONAL} optional / "
                f"{ANTHROPIC_MAX_UNIONS} unions per request)"
            )
            continue
        count, optional, unions = count + 1, optional + opt, unions + uni
        out[i] = {**entries[i], "input_schema": strict_form(entries[i]["input_schema"]), "strict": True}
        decisions[i] = f"strict ({opt} optional, {uni} union parameters)"
    return out, [(tools[i].name, decisions[i]) for i in range(len(tools))]


def _catalog_entry(
    tool: Tool, *, examples: bool = True
) -> tuple[dict[str, JSON], tuple[str, ...], tuple[dict[str, JSON], ...]]:
    input_schema = anthropic_input_schema(tool.input_schema)
    entry = anthropic_tool(tool.name, tool.description, tool.input_schema, input_schema=input_schema)
    entry["strict"] = False  # until `select_strict` chooses it, within the catalog's budgets
    if tool.policy.loading == "deferred":
        entry["defer_loading"] = True  # F.2: found by the tool-search tool (`deferred_catalog`)
    warnings = input_schema.warnings
    if examples and tool.input_examples:
        kept, dropped = fitting_examples(tool.input_examples, input_schema.schema)
        if kept:
            entry["input_examples"] = kept
        warnings += dropped
    if allows_code_callers(tool):
        entry["allowed_callers"] = list(PROGRAMMATIC_CALLERS)
    return entry, warnings, ()


def fitting_examples(examples: Sequence[JSON], schema: JSON) -> tuple[list[JSON], tuple[str, ...]]:
    """The examples valid under the Anthropic view `schema` (the API refuses a request whose
    ``input_examples`` break the tool's ``input_schema``; the view closes objects the canonical schema
    leaves open), at most `MAX_INPUT_EXAMPLES`; and a warning for each one left out."""
    kept: list[JSON] = []
    dropped: list[str] = []
    for i, example in enumerate(examples):
        problem = example_problem(example, schema, complete_only=False)
        if problem is not None:
            dropped.append(f"input example {i + 1} left out: it {problem}")
        elif len(kept) < MAX_INPUT_EXAMPLES:
            kept.append(example)
    return kept, tuple(dropped)


def _entry_name(entry: dict[str, JSON]) -> str:
    return str(entry["name"])


def _check(tools: list[dict[str, JSON]], max_tools: int | None) -> list[Violation]:
    return check_anthropic_catalog(tools)


def _entry_without_examples(
    tool: Tool,
) -> tuple[dict[str, JSON], tuple[str, ...], tuple[dict[str, JSON], ...]]:
    return _catalog_entry(tool, examples=False)


def _configure(options: DialectOptions) -> Dialect:
    """toolgen.yaml ``dialects.anthropic.input_examples: false`` sends no ``input_examples``."""
    if not options.anthropic_input_examples:
        return replace(DIALECT, catalog_entry=_entry_without_examples)
    return DIALECT


DIALECT = Dialect(
    "anthropic",
    1,
    _catalog_entry,
    _entry_name,
    _check,
    None,
    LIMITS,
    select_strict,
    strict_facts,
    configure=_configure,
    title="Anthropic",
    checks_per_tool=True,
    check_tool=check_anthropic_tool,
    check_across=check_anthropic_across,
)
