"""The Gemini dialect: function declarations in the conservative OpenAPI-3.0 `Schema` subset
(``docs/provider-rules.md`` C.1-C.3 and F.3).

Input: an IR `Tool` (its canonical input schema). Output: the view (`gemini_parameters` ->
`DialectSchema`), the declaration (`gemini_declaration`: ``{name, description, parameters}``, or
``parametersJsonSchema`` when asked for, C.3), the limits (`LIMITS`) and the conformance check of a
whole catalog (`check_gemini_catalog`). A catalog is the ``functionDeclarations`` list of one
``tools`` entry.

The view shares the OpenAI transform's structure work (``$ref``s inlined, ``allOf`` merged, typed
maps as ``{key, value}`` entries, free-form objects and subtrees below the depth limit as
JSON-encoded strings) and then keeps to what every Gemini endpoint accepts:

* optional arguments stay optional (no null unions); a null-admitting node is ``nullable: true``;
* ``type`` is one upper-case name (``STRING``, ``OBJECT``...); a union of several types, an
  ``anyOf`` of several schemas and a recursive schema become a JSON-encoded string;
* no ``additionalProperties``, ``$ref``, ``$defs``, ``anyOf``, ``title``; ``items`` on every array;
* ``enum`` holds strings only: an integer (or other non-string) enum is sent as strings and mapped
  back by the runtime (an ``enum_strings`` rewrite);
* ``format`` only ``enum`` or ``date-time`` (C.2: the Gemini Developer API refuses others); every
  other keyword outside the subset moves into the description (the runtime enforces it);
* argument names that break ``^[A-Za-z_][A-Za-z0-9_]{0,63}$`` (C.1) are renamed, with the mapping
  in the policy table (a ``rename`` rewrite).

Gemini has no strict flag: `DialectSchema.strict` is always False.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from ..compile.ir import Tool
from ..pointer import resolve_pointer
from ._base import Dialect, DialectOptions, DialectSchema, describe
from ._check import (
    Report,
    Summary,
    Violation,
    check_2020_12,
    check_items_and_refs,
    check_no_nullable,
    object_root,
    tool_label,
)
from ._light import Light, LightRules
from ._limits import Limit, limit_value
from ._simplify import simplify_schema
from ._walk import types_of
from .openai import _OpenAIStrict

JSON = Any

#: F.3: function names are a-z, A-Z, 0-9, ``_ : . -``, at most 64 characters (the Gemini API).
GEMINI_NAME_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
#: C.1 "Parameter names (Vertex)".
GEMINI_PARAM_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
#: C.2: the `Schema` fields toolgen emits.
GEMINI_KEYWORDS: frozenset[str] = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "items",
        "enum",
        "properties",
        "required",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
    }
)
GEMINI_TYPES: frozenset[str] = frozenset({"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"})
#: C.2 "format": the Gemini Developer API accepts only these.
GEMINI_FORMATS: frozenset[str] = frozenset({"enum", "date-time"})

#: C.1 (Vertex): function declarations per request.
GEMINI_MAX_TOOLS = 128
#: Per-request limits, each with its source (docs/provider-rules.md).
LIMITS: tuple[Limit, ...] = (
    Limit("max_tools", GEMINI_MAX_TOOLS, "C.1 Vertex: at most 128 function declarations per request"),
    Limit("max_name_length", 64, "F.3 / C.1: function names at most 64 characters"),
    Limit("max_param_name_length", 64, "C.1 Vertex: parameter names at most 64 characters"),
    Limit("max_depth", 10, "C.2: no documented number; toolgen keeps OpenAI's 10 (nesting errors observed)"),
)


class _GeminiView(_OpenAIStrict):
    """The OpenAI transform's structure work, optional members kept optional, then the C.2 subset."""

    widen_optional = False

    def ref(self, schema: dict[str, JSON], ptr: str, label: str, path: tuple[str, ...], level: int) -> JSON:
        from ._walk import ref_target_pointer

        tp = ref_target_pointer(self.doc, schema["$ref"])
        if tp is not None and tp in self.cyclic:
            target = resolve_pointer(self.doc, tp)
            shown = {
                **(target if isinstance(target, dict) else {}),
                **{k: v for k, v in schema.items() if k != "$ref"},
            }
            return self.as_json_string(
                shown, ptr, label, path, "recursive schema (no $ref in Gemini's subset)"
            )
        return super().ref(schema, ptr, label, path, level)

    def node(
        self,
        schema: JSON,
        ptr: str,
        label: str,
        *,
        is_root: bool = False,
        path: tuple[str, ...] = (),
        level: int = 0,
    ) -> JSON:
        if isinstance(schema, dict) and not is_root and _is_union(schema):
            return self.as_json_string(
                schema, ptr, label, path, "union of several types (no anyOf in Gemini's subset)"
            )
        out = super().node(schema, ptr, label, is_root=is_root, path=path, level=level)
        if not isinstance(out, dict):
            return out
        out = self.string_enum(out, path)
        if isinstance(out.get("properties"), dict):
            out = self.rename(out, path)
        return out

    def string_enum(self, out: dict[str, JSON], path: tuple[str, ...]) -> dict[str, JSON]:
        """C.2 "enum": strings only. Non-string values are sent as their JSON text."""
        values = out.get("enum")
        if "const" in out:
            values = [out["const"]]
        if not isinstance(values, list):
            return out
        solid = [v for v in values if v is not None]
        if all(isinstance(v, str) for v in solid):
            return out
        mapping: dict[str, JSON] = {}
        forms: list[str] = []
        for v in solid:
            form = v if isinstance(v, str) else json.dumps(v, sort_keys=True, separators=(",", ":"))
            if form in mapping or form in forms:
                continue
            forms.append(form)
            if not isinstance(v, str):
                mapping[form] = v
        new = dict(out)
        new.pop("const", None)
        new["enum"] = forms + ([None] if None in values else [])
        types = types_of(out) or []
        new["type"] = ["string", "null"] if "null" in types or None in values else "string"
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
            new.pop(key, None)
        self.record(path, "enum_strings", "non-string enum (Gemini enums are strings)", values=mapping)
        return new

    def rename(self, out: dict[str, JSON], path: tuple[str, ...]) -> dict[str, JSON]:
        """C.1: argument names ``^[A-Za-z_][A-Za-z0-9_]{0,63}$``; others get a fitting name."""
        props: dict[str, JSON] = out["properties"]
        if all(GEMINI_PARAM_RE.fullmatch(k) for k in props):
            return out
        taken = {k for k in props if GEMINI_PARAM_RE.fullmatch(k)}
        names: dict[str, str] = {}
        new_props: dict[str, JSON] = {}
        for key, sub in props.items():
            new_key = key
            if not GEMINI_PARAM_RE.fullmatch(key):
                new_key = _param_name(key, taken)
                taken.add(new_key)
                names[new_key] = key
            new_props[new_key] = sub
        back = {v: k for k, v in names.items()}
        new = dict(out)
        new["properties"] = new_props
        if isinstance(out.get("required"), list):
            new["required"] = [back.get(r, r) for r in out["required"]]
        self.record(path, "rename", "argument names Gemini refuses", names=names)
        return new


def _is_union(schema: dict[str, JSON]) -> bool:
    types = types_of(schema)
    if types is not None and len([t for t in types if t != "null"]) > 1:
        return True
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and len([b for b in branches if b != {"type": "null"}]) > 1:
            return True
    return False


def _param_name(name: str, taken: set[str]) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not base or not (base[0].isalpha() or base[0] == "_") or not base[0].isascii():
        base = "_" + base
    base = base[:64]
    candidate, n = base, 2
    while candidate in taken:
        suffix = f"_{n}"
        candidate, n = base[: 64 - len(suffix)] + suffix, n + 1
    return candidate


def _subset(node: JSON) -> JSON:
    """The C.2 `Schema` form of an OpenAI-shaped node (post-order)."""
    if not isinstance(node, dict):
        return {"type": "STRING"}
    node = dict(node)
    nullable = False
    branches = node.pop("anyOf", None)
    if isinstance(branches, list):
        solid = [b for b in branches if b != {"type": "null"}]
        nullable = len(solid) < len(branches)
        inner = solid[0] if solid else {"type": "string"}
        desc = node.get("description")
        node = {**inner, **({"description": desc} if isinstance(desc, str) else {})}
    types = types_of(node) or []
    if "null" in types:
        nullable = True
    solid_types = [t for t in types if t != "null"]
    if isinstance(node.get("enum"), list) and None in node["enum"]:
        nullable = True
        node["enum"] = [v for v in node["enum"] if v is not None]
    out: dict[str, JSON] = {}
    moved: list[tuple[str, JSON]] = []
    for key, value in node.items():
        if key in ("type", "additionalProperties", "title", "$defs"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {k: _subset(v) for k, v in value.items()}
        elif key == "items":
            out[key] = _subset(value)
        elif key == "format":
            if value in GEMINI_FORMATS:
                out[key] = value
            else:
                moved.append((key, value))
        elif key in GEMINI_KEYWORDS:
            out[key] = value
        else:
            moved.append((key, value))
    out["type"] = (solid_types[0] if solid_types else "string").upper()
    if out["type"] == "ARRAY" and "items" not in out:
        out["items"] = {"type": "STRING"}
    if out["type"] == "OBJECT" and "properties" not in out:
        out["properties"] = {}
    if nullable:
        out["nullable"] = True
    if moved:
        text = describe(out.get("description"), moved)
        if text:
            out["description"] = text
    return out


def gemini_parameters(canonical: dict[str, JSON]) -> DialectSchema:
    """Gemini `parameters` (the OpenAPI-3.0 subset, C.2) from a canonical input schema."""
    view = _GeminiView(canonical)
    ds = view.run()
    schema = _subset(ds.schema)
    if schema.get("type") != "OBJECT":
        schema = {"type": "OBJECT", "properties": {}}
    return DialectSchema(schema, ds.notes, False, ds.warnings, ds.rewrites)


def gemini_json_schema(canonical: dict[str, JSON]) -> DialectSchema:
    """Gemini `parametersJsonSchema` (C.3): the canonical JSON Schema, OpenAPI-only formats and
    ``default`` moved into descriptions (no rewrites: the arguments come back canonical)."""
    from .anthropic import ANTHROPIC_FORMATS

    light = Light(LightRules("gemini", ANTHROPIC_FORMATS, True, True, False), canonical)
    out = light.node(canonical, "", "")
    return DialectSchema(out if isinstance(out, dict) else {"type": "object"}, tuple(light.notes), False, ())


def gemini_declaration(
    name: str,
    description: str,
    canonical_input: dict[str, JSON],
    *,
    json_schema: bool = False,
    view: DialectSchema | None = None,
) -> dict[str, JSON]:
    """A Gemini `FunctionDeclaration` (C.1): ``{name, description, parameters}``; with `json_schema`,
    ``parametersJsonSchema`` instead (C.3; the two are mutually exclusive)."""
    if json_schema:
        return {
            "name": name,
            "description": description,
            "parametersJsonSchema": (view or gemini_json_schema(canonical_input)).schema,
        }
    return {
        "name": name,
        "description": description,
        "parameters": (view or gemini_parameters(canonical_input)).schema,
    }


def check_gemini_catalog(tools: list[dict[str, JSON]], *, max_tools: int | None = None) -> list[Violation]:
    """Check a list of function declarations (C.1, C.2, F.3). `parameters` must keep to the subset:
    upper-case single types, no ``additionalProperties``/``$ref``/``anyOf``/type arrays, string-only
    enums, ``items`` on arrays, ``properties`` an object, `required` naming declared properties,
    parameter names ``^[A-Za-z_][A-Za-z0-9_]{0,63}$``, formats ``enum``/``date-time`` only.
    `parametersJsonSchema` (C.3) must be valid JSON Schema 2020-12 with an object root, `items` on
    arrays, resolvable `$ref`s and no ``nullable``; the two fields are mutually exclusive."""
    report = Report("gemini")
    if not isinstance(tools, list):
        report.add("", "", "C.1-shape", "catalog must be a list of function declarations")
        return report.items
    if max_tools is not None and len(tools) > max_tools:
        report.add("", "", "C.1-max-tools", f"{len(tools)} declarations > {max_tools} per request")
    seen: set[str] = set()
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            report.add(f"#{i}", f"/{i}", "C.1-shape", "declaration must be an object")
            continue
        label = tool_label(tool.get("name"), i)
        name = tool.get("name")
        if not isinstance(name, str) or not GEMINI_NAME_RE.fullmatch(name):
            report.add(label, "/name", "C.1-name", f"name {name!r} does not match {GEMINI_NAME_RE.pattern}")
        elif name in seen:
            report.add(label, "/name", "C.1-name-unique", f"name {name!r} is used twice")
        else:
            seen.add(name)
        if "parameters" in tool and "parametersJsonSchema" in tool:
            report.add(
                label, "", "C.1-schema-fields", "parameters and parametersJsonSchema are mutually exclusive"
            )
        if "parameters" in tool:
            params = tool["parameters"]
            if not isinstance(params, dict) or params.get("type") != "OBJECT":
                report.add(label, "/parameters", "C.2-root", 'parameters must be {"type": "OBJECT", ...}')
                continue
            _check_subset(report, label, "/parameters", params)
        if "parametersJsonSchema" in tool:
            _check_json_schema(report, label, tool["parametersJsonSchema"])
    return report.items


def _check_json_schema(report: Report, tool: str, schema: JSON) -> None:
    """C.3 ``parametersJsonSchema``: a JSON Schema (2020-12 valid) whose root is an object, every
    array with `items`, every `$ref` resolving in the schema, no OpenAPI ``nullable``."""
    base = "/parametersJsonSchema"
    if not object_root(report, tool, base, schema, "C.3-root", "parametersJsonSchema"):
        return
    summary = Summary(schema)
    check_2020_12(report, tool, base, schema, "C.3-json-schema", summary)
    check_items_and_refs(report, tool, base, schema, "C.3", summary)
    check_no_nullable(report, tool, base, schema, "C.3-nullable", summary)


def _check_subset(report: Report, tool: str, ptr: str, node: JSON) -> None:
    if not isinstance(node, dict):
        report.add(tool, ptr, "C.2-schema", "schema must be an object")
        return
    for key in node:
        if key not in GEMINI_KEYWORDS:
            report.add(tool, f"{ptr}/{key}", "C.2-keyword", f"{key!r} is not a field of Gemini's Schema")
    kind = node.get("type")
    if kind not in GEMINI_TYPES:
        report.add(
            tool, f"{ptr}/type", "C.2-type", f"type must be one of {sorted(GEMINI_TYPES)}, not {kind!r}"
        )
    if "enum" in node:
        values = node["enum"]
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            report.add(tool, f"{ptr}/enum", "C.2-enum", "enum values must be strings")
    if "format" in node and node["format"] not in GEMINI_FORMATS:
        report.add(tool, f"{ptr}/format", "C.2-format", f"format {node['format']!r} is not accepted")
    if kind == "ARRAY":
        if "items" not in node:
            report.add(tool, ptr, "C.2-items", "array without items")
        else:
            _check_subset(report, tool, f"{ptr}/items", node["items"])
    if kind == "OBJECT":
        props = node.get("properties")
        if not isinstance(props, dict):
            report.add(tool, f"{ptr}/properties", "C.2-properties", "properties must be a JSON object")
            props = {}
        for name, sub in props.items():
            if not GEMINI_PARAM_RE.fullmatch(name):
                report.add(
                    tool,
                    f"{ptr}/properties/{name}",
                    "C.1-param-name",
                    f"parameter name {name!r} does not match {GEMINI_PARAM_RE.pattern}",
                )
            _check_subset(report, tool, f"{ptr}/properties/{name}", sub)
        required = node.get("required", [])
        if not isinstance(required, list) or any(r not in props for r in required):
            report.add(tool, f"{ptr}/required", "C.2-required", "required must name declared properties")


def _catalog_entry(tool: Tool) -> tuple[dict[str, JSON], tuple[str, ...], tuple[dict[str, JSON], ...]]:
    view = gemini_parameters(tool.input_schema)
    view = replace(view, schema=simplify_schema(view.schema, multi_type=False, structural=False))
    return (
        gemini_declaration(tool.name, tool.description, tool.input_schema, view=view),
        view.warnings,
        view.rewrites,
    )


def _json_schema_entry(tool: Tool) -> tuple[dict[str, JSON], tuple[str, ...], tuple[dict[str, JSON], ...]]:
    """The declaration with ``parametersJsonSchema`` (C.3): no reshaped arguments, so no rewrites."""
    view = gemini_json_schema(tool.input_schema)
    view = replace(view, schema=simplify_schema(view.schema, multi_type=False))
    return (
        gemini_declaration(tool.name, tool.description, tool.input_schema, json_schema=True, view=view),
        view.warnings,
        (),
    )


def _configure(options: DialectOptions) -> Dialect:
    """toolgen.yaml ``dialects: {gemini: {parameters: json_schema}}`` -> ``parametersJsonSchema``."""
    if options.gemini_parameters == "json_schema":
        return replace(DIALECT, catalog_entry=_json_schema_entry)
    return DIALECT


def _entry_name(entry: dict[str, JSON]) -> str:
    return str(entry["name"])


def _check(tools: list[dict[str, JSON]], max_tools: int | None) -> list[Violation]:
    return check_gemini_catalog(tools, max_tools=max_tools)


DIALECT = Dialect(
    "gemini",
    3,
    _catalog_entry,
    _entry_name,
    _check,
    limit_value(LIMITS, "max_tools"),
    LIMITS,
    configure=_configure,
    title="Gemini",
    reshapes_arguments=True,
    checks_per_tool=True,
    extra_files=("gemini.interactions.json",),
)
