"""The MCP dialect: MCP 2025-11-25 tools as ``tools/list`` returns them (``docs/provider-rules.md``
D.1-D.4 and E).

Input: an IR `Tool` (its canonical input and output schemas and its policy row, for the
annotations). Output: the views (`mcp_input_schema`, `mcp_output_schema` -> `DialectSchema`: the
canonical constraints kept, formats JSON Schema does not define moved into the description, an output
root that is not an object wrapped as ``{"result": ...}``), the tool object (`mcp_tool`, with all four
annotation hints explicit) and the conformance check of a whole catalog (`check_mcp_catalog`). MCP has
no strict flag: `DialectSchema.strict` is always False.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..compile.ir import Tool
from ..results import result_shape
from ._base import Dialect, DialectSchema, copy_json
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
from ._walk import DEFS_KEYS, iter_schemas, types_of

JSON = Any

#: Formats defined by JSON Schema 2020-12 (validation vocabulary, section 7.3). MCP keeps these (D.1).
JSON_SCHEMA_FORMATS: frozenset[str] = frozenset(
    {
        "date-time",
        "date",
        "time",
        "duration",
        "email",
        "idn-email",
        "hostname",
        "idn-hostname",
        "ipv4",
        "ipv6",
        "uri",
        "uri-reference",
        "iri",
        "iri-reference",
        "uuid",
        "uri-template",
        "json-pointer",
        "relative-json-pointer",
        "regex",
    }
)
#: OpenAPI data-type formats that mean nothing to JSON Schema (dropped for MCP/Anthropic, D.1/B.2).
OPENAPI_ONLY_FORMATS: frozenset[str] = frozenset(
    {"int32", "int64", "float", "double", "byte", "binary", "password", "base64"}
)


def _rewrite_refs(node: JSON, fn: Callable[[str], str]) -> JSON:
    """`node` with every string `$ref` replaced by ``fn(ref)``. Copy on write: a subtree with no
    `$ref` that changes is returned as the very same object (shared, never mutated)."""
    if isinstance(node, list):
        items = [_rewrite_refs(x, fn) for x in node]
        return node if all(a is b for a, b in zip(node, items, strict=True)) else items
    if not isinstance(node, dict):
        return node
    out: dict[str, JSON] = {}
    changed = False
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = fn(value)
            changed = changed or out[key] != value
        elif key in ("enum", "const", "default", "examples", "example"):
            out[key] = value
        else:
            out[key] = _rewrite_refs(value, fn)
            changed = changed or out[key] is not value
    return out if changed else node


def _mcp_light(canonical: JSON, *, simplify: bool = True) -> tuple[JSON, list[str]]:
    """The keyword-level MCP view of `canonical` and its notes; `simplify=False` (for the tests that
    compare the two) leaves out `simplify_schema`."""
    light = Light(LightRules("mcp", JSON_SCHEMA_FORMATS, False, False, False), canonical)
    out = light.node(canonical, "", "")  # copy on write: shares unchanged subtrees with `canonical`
    return (simplify_schema(out, multi_type=True) if simplify else out), light.notes


def mcp_input_schema(canonical: dict[str, JSON]) -> DialectSchema:
    """MCP 2025-11-25 `inputSchema` from a canonical input schema (D.1, D.4, E).

    The canonical constraints stay (2020-12 is MCP's default dialect and the runtime validates the
    same schema), simplified without changing what they accept (`simplify_schema`: nested ``anyOf``
    flattened, unions of bare types as one type array, descriptions that only repeat a property
    name dropped); ``format`` values that are not JSON Schema 2020-12 formats (OpenAPI-only ones such as
    password, int32, double, binary) move into the description; OpenAPI ``nullable`` never survives.
    A tool without arguments gets exactly ``{"type": "object", "additionalProperties": false}`` (D.1,
    case 24). Every `$ref` must resolve inside the schema (a warning otherwise). `strict` is always
    False: MCP has no strict flag.
    """
    out, notes = _mcp_light(canonical)
    if isinstance(out, dict) and is_empty_params(out):
        out = {"type": "object", "additionalProperties": False}
    if not isinstance(out, dict) or types_of(out) != ["object"]:
        return DialectSchema(
            out if isinstance(out, dict) else {},
            tuple(notes),
            False,
            ("inputSchema root is not type object (#): invalid for MCP (D.1)", *ref_warnings(out, "mcp")),
        )
    return DialectSchema(out, tuple(notes), False, tuple(ref_warnings(out, "mcp")))


def mcp_output_needs_wrap(schema: JSON) -> bool:
    """Whether an output schema's root is not ``type: "object"`` exactly (D.1 `outputSchema`), so the
    tool result is returned as ``{"result": <value>}``: `toolgen.results.result_shape`, the rule the
    build records in ``policy.json`` (``output.shape``) and the runtime shapes answers by."""
    return result_shape(schema) != "object"


def _wrap_result(schema: JSON) -> dict[str, JSON]:
    """``{"type": "object", "properties": {"result": schema}, "required": ["result"]}`` with
    ``$defs`` hoisted to the new root and local refs re-pointed so they keep resolving."""
    inner: JSON = schema
    hoisted: dict[str, JSON] = {}
    if isinstance(inner, dict):
        inner = dict(inner)
        for key in DEFS_KEYS:
            if key in inner:
                hoisted[key] = inner.pop(key)
        inner.pop("$schema", None)

    def repoint(ref: str) -> str:
        if ref == "#":
            return "#/properties/result"
        if ref.startswith("#/") and not any(ref.startswith(f"#/{k}/") for k in DEFS_KEYS):
            return "#/properties/result" + ref[1:]
        return ref

    out: dict[str, JSON] = {
        "type": "object",
        "properties": {"result": _rewrite_refs(inner, repoint)},
        "required": ["result"],
        "additionalProperties": False,
    }
    for key, defs in hoisted.items():
        out[key] = _rewrite_refs(defs, repoint)
    return out


def mcp_output_schema(canonical: dict[str, JSON]) -> DialectSchema:
    """MCP 2025-11-25 `outputSchema` from a canonical output schema (D.1, D.3, case 21).

    Same keyword rules as `mcp_input_schema` (``{}`` stays unconstrained). A root that is not exactly
    ``type: "object"`` is wrapped as ``{"type": "object", "properties": {"result": <schema>},
    "required": ["result"]}`` (``$defs`` hoisted, refs re-pointed) and a note says so; the runtime
    wraps `structuredContent` by the same rule (`mcp_output_needs_wrap`).
    """
    out, notes = _mcp_light(canonical)
    if mcp_output_needs_wrap(out):
        out = _wrap_result(out)
        notes.append('(root): outputSchema root is not an object; wrapped as {"result": <value>} (D.1)')
    return DialectSchema(out, tuple(notes), False, tuple(ref_warnings(out, "mcp")))


def mcp_tool(  # noqa: PLR0913
    name: str,
    description: str,
    canonical_input: dict[str, JSON],
    canonical_output: dict[str, JSON] | None,
    *,
    title: str | None,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool = True,
    input_schema: DialectSchema | None = None,
    output_schema: DialectSchema | None = None,
) -> dict[str, JSON]:
    """MCP 2025-11-25 `Tool` (D.1): name, title?, description, inputSchema, outputSchema?, annotations.

    All four hints are explicit booleans (their defaults differ per hint, D.1). `title` is sent at the
    top level only (display precedence `title` -> `annotations.title` -> `name`, so repeating it in
    the annotations adds bytes, not meaning). Raises ValueError for a read-only destructive tool.
    `input_schema`/`output_schema`: the already computed `mcp_input_schema`/`mcp_output_schema`, if any.
    """
    if read_only and destructive:
        raise ValueError(f"tool {name!r}: a read-only tool cannot be destructive (D.1 annotations)")
    tool: dict[str, JSON] = {"name": name}
    if title:
        tool["title"] = title
    tool["description"] = description
    tool["inputSchema"] = (
        input_schema if input_schema is not None else mcp_input_schema(canonical_input)
    ).schema
    if canonical_output is not None:
        tool["outputSchema"] = (
            output_schema if output_schema is not None else mcp_output_schema(canonical_output)
        ).schema
    tool["annotations"] = {
        "readOnlyHint": bool(read_only),
        "destructiveHint": bool(destructive),
        "idempotentHint": bool(idempotent),
        "openWorldHint": bool(open_world),
    }
    return tool


def check_mcp_catalog(tools: list[dict[str, JSON]]) -> list[Violation]:
    """Check an MCP 2025-11-25 ``tools/list`` catalog (D.1, D.2, E).

    Names ``^[a-zA-Z0-9_-]{1,64}$`` (D.2 "toolgen should": 64, no dots) and unique; `inputSchema`
    present, not null, object root; `outputSchema` (if present) object root; both valid 2020-12 with
    every `$ref` resolving inside the schema (case 21), no `nullable`, no OpenAPI-only formats, arrays
    with `items`; `annotations` with explicit boolean `readOnlyHint`/`destructiveHint`/`idempotentHint`/
    `openWorldHint` (and a string `title` if present)."""
    report = Report("mcp")
    if not isinstance(tools, list):
        report.add("", "", "D.1-fields", "catalog must be a list of tools")
        return report.items
    names: list[tuple[str, str, JSON]] = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            report.add(f"#{i}", f"/{i}", "D.1-fields", "tool must be an object")
            continue
        label = tool_label(tool.get("name"), i)
        names.append((label, "/name", tool.get("name")))
        for key in ("title", "description"):
            if key in tool and not isinstance(tool[key], str):
                report.add(label, f"/{key}", "D.1-fields", f"{key} must be a string")
        for key, rule in (
            ("inputSchema", "D.1-input-schema-object"),
            ("outputSchema", "D.1-output-schema-object"),
        ):
            if key not in tool:
                if key == "inputSchema":
                    report.add(label, "/inputSchema", rule, "inputSchema is required")
                continue
            schema = tool[key]
            base = f"/{key}"
            if not object_root(report, label, base, schema, rule, key):
                continue
            summary = Summary(schema)
            check_2020_12(report, label, base, schema, "D.1-json-schema-2020-12", summary)
            check_items_and_refs(report, label, base, schema, "D.1", summary)
            check_no_nullable(report, label, base, schema, "D.1-nullable", summary)
            if summary.formats & OPENAPI_ONLY_FORMATS:
                for ptr, node in iter_schemas(schema):
                    if isinstance(node, dict) and node.get("format") in OPENAPI_ONLY_FORMATS:
                        report.add(
                            label,
                            base + ptr,
                            "D.1-format",
                            f"OpenAPI-only format {node['format']!r} (move it to the description)",
                        )
        ann = tool.get("annotations")
        if not isinstance(ann, dict):
            report.add(label, "/annotations", "D.1-annotations", "annotations must be an object")
        else:
            for hint in ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"):
                if not isinstance(ann.get(hint), bool):
                    report.add(
                        label,
                        f"/annotations/{hint}",
                        "D.1-annotations",
                        f"{hint} must be an explicit boolean",
                    )
            if "title" in ann and not isinstance(ann["title"], str):
                report.add(label, "/annotations/title", "D.1-annotations", "title must be a string")
    check_names(report, names, "D.2")
    return report.items


#: The `outputSchema` of every preview tool in the MCP catalog: the one member a model must use
#: (`preview_id`). The runtime's preview result (docs/generated-format.md, "Preview tools") always
#: conforms to it; the other members are described there and in each preview's description.
PREVIEW_OUTPUT_SCHEMA: dict[str, JSON] = {
    "type": "object",
    "properties": {"preview_id": {"type": "string"}},
    "required": ["preview_id"],
}


def mcp_preview_output_schema() -> DialectSchema:
    """The shared minimal `outputSchema` of preview tools (`PREVIEW_OUTPUT_SCHEMA`, a fresh copy)."""
    return DialectSchema(copy_json(PREVIEW_OUTPUT_SCHEMA), (), False, ())


def _catalog_entry(tool: Tool) -> tuple[dict[str, JSON], tuple[str, ...], tuple[dict[str, JSON], ...]]:
    input_schema = mcp_input_schema(tool.input_schema)
    output_schema = (
        mcp_preview_output_schema()
        if tool.policy.mode == "preview"
        else mcp_output_schema(tool.output_schema)
    )
    row = tool.policy
    entry = mcp_tool(
        tool.name,
        tool.description,
        tool.input_schema,
        tool.output_schema,
        title=tool.title,
        read_only=row.mode != "record",
        destructive=row.mode == "record" and row.effect == "destructive",
        idempotent=row.mode != "record" or row.idempotency is not None,
        open_world=True,
        input_schema=input_schema,
        output_schema=output_schema,
    )
    return entry, input_schema.warnings + output_schema.warnings, ()


def _entry_name(entry: dict[str, JSON]) -> str:
    return str(entry["name"])


def _check(tools: list[dict[str, JSON]], max_tools: int | None) -> list[Violation]:
    return check_mcp_catalog(tools)


#: Per-request limits, each with its source (docs/provider-rules.md; `toolgen.dialects.limits`).
LIMITS: tuple[Limit, ...] = (
    Limit(
        "max_name_length",
        64,
        "D.2 / F.2: clients enforce 64 characters, their prefix (mcp__<server>__) included",
    ),
)

DIALECT = Dialect(
    "mcp", 2, _catalog_entry, _entry_name, _check, None, LIMITS, title="MCP", checks_per_tool=True
)
