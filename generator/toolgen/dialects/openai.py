"""Stage `emit`, dialect views: canonical tool schema -> provider dialect schema and tool object.

Input: a *canonical* tool schema (``ir.Tool.input_schema`` / ``output_schema``): a self-contained JSON
Schema 2020-12 dict, root ``type: object``, with every constraint of the spec and the original
optionality; nullable values are type arrays with ``"null"`` or ``anyOf`` with ``{"type": "null"}``;
``$defs`` + ``$ref`` are used for recursive schemas (and possibly carry sibling keywords).

Output: a `DialectSchema` per dialect (the transformed schema, notes for reviewers about what moved
into descriptions, whether the tool can be marked strict, warnings), and the tool objects of each
catalog (`openai_tool`, `anthropic_tool`, `mcp_tool`).

Every rule cites a section of ``docs/provider-dialects.md`` (shared design material):
A.x OpenAI function tools and strict mode, B.x Anthropic tools, D.x MCP 2025-11-25, E the portable
intersection. The transforms are pure: they never mutate their input, share no mutable object with it,
and build output dicts in a fixed order (callers serialise with ``sort_keys`` anyway). Keywords a dialect cannot carry
are summarised in the node's ``description`` as ``(keyword: value; ...)``; the toolgen runtime
validates every call against the canonical schema, so nothing is lost at run time.

Decisions (see the function docstrings for details):

* OpenAI ``$ref`` with siblings (A.2 "$ref siblings", case 13): a non-recursive ``$ref`` is inlined and
  its siblings (description, default, ...) are placed on the inlined node; a recursive ``$ref`` stays
  a bare ``{"$ref": ...}`` and, when it has siblings, is wrapped as
  ``{"description": ..., "anyOf": [{"$ref": ...}]}``. Only recursive targets are emitted in ``$defs``.
* OpenAI free-form objects (``{"type": "object"}`` without properties, ``additionalProperties`` that is
  ``true`` or a schema, ``patternProperties``) and unconstrained values (``{}``) cannot be strict: the
  *tool* is emitted with ``strict: false`` and a warning naming the JSON pointer; the rest of the
  schema keeps the strict normalisation.
* A root ``{"type": "object"}`` without ``properties`` is an empty parameter list, not a free-form
  object (case 24).
* Anthropic: ``strict`` is never sent (B.2 budgets make it a per-deployment choice);
  ``DialectSchema.strict`` records whether it would be possible.
* MCP has no strict flag; ``DialectSchema.strict`` is always ``False`` for MCP.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from toolgen.pointer import PointerError, escape_token, ref_to_pointer, resolve_pointer

JSON = Any

# --- constants -------------------------------------------------------------------------------------

#: A.2 "Formats allowed" (OpenAI strict).
OPENAI_STRICT_FORMATS: frozenset[str] = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
#: B.2 "Formats allowed" (Anthropic strict; `SupportedStringFormats` of the Python SDK).
ANTHROPIC_FORMATS: frozenset[str] = OPENAI_STRICT_FORMATS | {"uri"}
#: Formats defined by JSON Schema 2020-12 (validation vocabulary, section 7.3). MCP keeps these (D.1).
JSON_SCHEMA_FORMATS: frozenset[str] = frozenset(
    {
        "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
        "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "uri-template",
        "json-pointer", "relative-json-pointer", "regex",
    }
)
#: OpenAPI data-type formats that mean nothing to JSON Schema (dropped for MCP/Anthropic, D.1/B.2).
OPENAPI_ONLY_FORMATS: frozenset[str] = frozenset(
    {"int32", "int64", "float", "double", "byte", "binary", "password", "base64"}
)
#: A.1 / B.1 / D.2: the name pattern toolgen uses for every dialect (64, no dots).
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

#: A.2 "Limits".
OPENAI_MAX_DEPTH = 10
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_ENUM_VALUES = 1000
OPENAI_MAX_CHARS = 120_000
OPENAI_BIG_ENUM_VALUES = 250
OPENAI_BIG_ENUM_CHARS = 15_000
#: B.2 "Budgets" (per request; toolgen also refuses strict for a single tool that exceeds them).
ANTHROPIC_MAX_OPTIONAL = 24
ANTHROPIC_MAX_UNIONS = 16

#: Keywords an OpenAI strict schema may carry (A.2, E point 3). Everything else moves to the description.
OPENAI_STRICT_KEYWORDS: frozenset[str] = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
        "$defs", "$ref", "description", "title", "format",
    }
)
#: A.2 "Composition": keywords OpenAI strict rejects.
OPENAI_FORBIDDEN_COMPOSITION: frozenset[str] = frozenset(
    {"allOf", "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas"}
)
#: Keywords dropped without a note: identifiers, comments, OpenAPI-only decorations.
_SILENT_DROP: frozenset[str] = frozenset(
    {"$schema", "$id", "$comment", "$anchor", "$dynamicAnchor", "$vocabulary", "discriminator", "xml",
     "externalDocs"}
)
#: Keywords that annotate a `$ref` and may be overridden by the referrer when inlining.
_ANNOTATIONS: frozenset[str] = frozenset(
    {"description", "title", "default", "examples", "example", "deprecated", "readOnly", "writeOnly",
     "$comment"}
)
#: Fixed order in which moved keywords are summarised (others follow alphabetically).
_NOTE_ORDER: tuple[str, ...] = (
    "format", "minLength", "maxLength", "pattern", "minimum", "exclusiveMinimum", "maximum",
    "exclusiveMaximum", "multipleOf", "minItems", "maxItems", "uniqueItems", "prefixItems", "contains",
    "minContains", "maxContains", "minProperties", "maxProperties", "propertyNames", "default",
    "examples", "example", "deprecated", "readOnly", "writeOnly", "contentMediaType", "contentEncoding",
)
_RAW_STRING_NOTES: frozenset[str] = frozenset({"format", "pattern", "contentMediaType", "contentEncoding"})
_NOTE_VALUE_MAX = 160

# Where subschemas live in a 2020-12 schema (applicator vocabulary).
_SCHEMA_MAP_KEYS: tuple[str, ...] = ("properties", "patternProperties", "$defs", "definitions",
                                     "dependentSchemas")
_SCHEMA_LIST_KEYS: tuple[str, ...] = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_KEYS: tuple[str, ...] = ("items", "additionalProperties", "not", "if", "then", "else", "contains",
                                 "propertyNames", "unevaluatedItems", "unevaluatedProperties",
                                 "contentSchema")
_DEFS_KEYS: tuple[str, ...] = ("$defs", "definitions")

_MISSING: Any = object()


@dataclass(frozen=True)
class DialectSchema:
    """One dialect's view of a canonical schema.

    `schema`: the transformed schema. `notes`: what moved into descriptions, as
    ``"<property path>: <keyword> <value>"`` (e.g. ``"title: maxLength 200"``). `strict`: whether the
    tool can be marked strict in this dialect (always False for MCP, which has no such flag).
    `warnings`: why strict is off, or other problems (each names a JSON pointer of the canonical schema).
    """

    schema: dict[str, JSON]
    notes: tuple[str, ...]
    strict: bool
    warnings: tuple[str, ...]


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


# --- generic schema helpers ------------------------------------------------------------------------


def types_of(node: JSON) -> list[str] | None:
    """The `type` keyword of a schema node as a list, or None when absent."""
    if not isinstance(node, dict) or "type" not in node:
        return None
    t = node["type"]
    if isinstance(t, str):
        return [t]
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    return None


def is_object_schema(node: JSON) -> bool:
    """A node that describes objects: `type` includes "object", or untyped with `properties`."""
    if not isinstance(node, dict):
        return False
    types = types_of(node)
    if types is not None:
        return "object" in types
    return "properties" in node


def is_array_schema(node: JSON) -> bool:
    """A node that describes arrays: `type` includes "array", or untyped with `items`."""
    if not isinstance(node, dict):
        return False
    types = types_of(node)
    if types is not None:
        return "array" in types
    return "items" in node or "prefixItems" in node


def child_schemas(node: JSON, pointer: str = "", *, into_defs: bool = True) -> Iterator[tuple[str, JSON]]:
    """Direct subschemas of `node` as ``(json_pointer, subschema)`` (2020-12 applicators, draft
    `definitions` and tuple-form `items` included). `into_defs=False` skips ``$defs``/``definitions``."""
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
            if not into_defs and key in _DEFS_KEYS:
                continue
            for name, sub in value.items():
                yield f"{pointer}/{escape_token(key)}/{escape_token(str(name))}", sub
        elif key in _SCHEMA_LIST_KEYS and isinstance(value, list):
            for i, sub in enumerate(value):
                yield f"{pointer}/{key}/{i}", sub
        elif key in _SCHEMA_KEYS:
            if isinstance(value, list) and key == "items":
                for i, sub in enumerate(value):
                    yield f"{pointer}/items/{i}", sub
            elif isinstance(value, (dict, bool)):
                yield f"{pointer}/{key}", value


def iter_schemas(node: JSON, pointer: str = "", *, into_defs: bool = True) -> Iterator[tuple[str, JSON]]:
    """Every schema node of `node` (itself first), depth first, as ``(json_pointer, node)``."""
    stack: list[tuple[str, JSON]] = [(pointer, node)]
    while stack:
        ptr, cur = stack.pop()
        yield ptr, cur
        children = list(child_schemas(cur, ptr, into_defs=into_defs))
        stack.extend(reversed(children))


def iter_nodes(node: JSON, *, into_defs: bool = True) -> Iterator[JSON]:
    """The nodes `iter_schemas` yields, in the same order, without building their JSON pointers.

    Checks walk every schema of a catalog; building a pointer for every node (escaping every
    property name) cost more than the checks. They scan with this and only walk again with
    `iter_schemas` when they found something to report."""
    stack: list[JSON] = [node]
    while stack:
        cur = stack.pop()
        yield cur
        if isinstance(cur, dict):
            children = child_nodes(cur, into_defs=into_defs)
            if children:
                children.reverse()
                stack.extend(children)


def child_nodes(node: dict[str, JSON], *, into_defs: bool = True) -> list[JSON]:
    """The subschemas `child_schemas` yields, in the same order, without their JSON pointers."""
    children: list[JSON] = []
    for key, value in node.items():
        if key in _SCHEMA_MAP_KEY_SET:
            if isinstance(value, dict) and (into_defs or key not in _DEFS_KEY_SET):
                children.extend(value.values())
        elif key in _SCHEMA_LIST_KEY_SET:
            if isinstance(value, list):
                children.extend(value)
        elif key in _SCHEMA_KEY_SET:
            if isinstance(value, list):
                if key == "items":
                    children.extend(value)
            elif isinstance(value, (dict, bool)):
                children.append(value)
    return children


_SCHEMA_MAP_KEY_SET = frozenset(_SCHEMA_MAP_KEYS)
_SCHEMA_LIST_KEY_SET = frozenset(_SCHEMA_LIST_KEYS)
_SCHEMA_KEY_SET = frozenset(_SCHEMA_KEYS)
_DEFS_KEY_SET = frozenset(_DEFS_KEYS)


def resolve_local_ref(root: JSON, ref: str) -> JSON:
    """The schema a local `$ref` (``#``, ``#/json/pointer`` or ``#anchor``) names inside `root`.

    Raises `PointerError` when it does not resolve (external refs included)."""
    pointer = ref_to_pointer(ref)
    if pointer is None:
        raise PointerError(f"{ref!r} is not a local reference", "")
    if pointer == "" or pointer.startswith("/"):
        return resolve_pointer(root, pointer)
    for _, node in iter_schemas(root):
        if isinstance(node, dict) and node.get("$anchor") == pointer:
            return node
    raise PointerError(f"{ref!r}: no $anchor {pointer!r}", "")


def unresolved_refs(schema: JSON) -> list[tuple[str, str]]:
    """``(pointer, ref)`` of every `$ref` in `schema` that does not resolve inside `schema` (D.1, case 21)."""
    refs = {node["$ref"] if isinstance(node["$ref"], str) else None
            for node in iter_nodes(schema) if isinstance(node, dict) and "$ref" in node}
    if not refs:
        return []
    if None not in refs:
        try:
            for ref in refs:
                resolve_local_ref(schema, ref)  # type: ignore[arg-type]
            return []
        except PointerError:
            pass  # walk again with pointers to say where
    bad: list[tuple[str, str]] = []
    for ptr, node in iter_schemas(schema):
        if isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            try:
                if not isinstance(ref, str):
                    raise PointerError("non-string $ref", "")
                resolve_local_ref(schema, ref)
            except PointerError:
                bad.append((ptr, str(ref)))
    return bad


def _ref_target_pointer(root: JSON, ref: JSON) -> str | None:
    """The decoded JSON pointer a local `$ref` points at, if it resolves; else None."""
    if not isinstance(ref, str):
        return None
    pointer = ref_to_pointer(ref)
    if pointer is None:
        return None
    if pointer and not pointer.startswith("/"):  # $anchor: find its pointer
        for ptr, node in iter_schemas(root):
            if isinstance(node, dict) and node.get("$anchor") == pointer:
                return ptr
        return None
    try:
        resolve_pointer(root, pointer)
    except PointerError:
        return None
    return pointer


def recursive_ref_targets(root: JSON) -> list[str]:
    """JSON pointers (decoded, ``""`` = root) of `$ref` targets that lie on a reference cycle, in
    first-seen order. A target's edges are the refs in its subtree (nested ``$defs`` excluded).
    Used for A.2 (OpenAI keeps recursive `$defs`) and B.2 (Anthropic strict rejects recursion)."""
    targets: list[str] = []
    seen: set[str] = set()
    for node in iter_nodes(root):
        if isinstance(node, dict) and "$ref" in node:
            tp = _ref_target_pointer(root, node["$ref"])
            if tp is not None and tp not in seen:
                seen.add(tp)
                targets.append(tp)
    edges: dict[str, list[str]] = {}
    for tp in targets:
        out: list[str] = []
        for node in iter_nodes(resolve_pointer(root, tp), into_defs=False):
            if isinstance(node, dict) and "$ref" in node:
                dest = _ref_target_pointer(root, node["$ref"])
                if dest is not None and dest not in out:
                    out.append(dest)
        edges[tp] = out
    cyclic: list[str] = []
    for tp in targets:
        stack = list(edges.get(tp, ()))
        visited: set[str] = set()
        while stack:
            cur = stack.pop()
            if cur == tp:
                cyclic.append(tp)
                break
            if cur in visited:
                continue
            visited.add(cur)
            stack.extend(edges.get(cur, ()))
    return cyclic


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
        for key in _DEFS_KEYS:
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
        out.append(("A.2-limits-chars",
                    (f"a string enum with > {OPENAI_BIG_ENUM_VALUES} values totals "
                     f"{stats.big_string_enum_chars} chars > {OPENAI_BIG_ENUM_CHARS}")))
    return out


def _render_note_value(key: str, value: JSON) -> str:
    if key in _RAW_STRING_NOTES and isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if len(text) > _NOTE_VALUE_MAX:
        text = text[: _NOTE_VALUE_MAX - 1] + "\u2026"
    return text


def _order_moved(moved: list[tuple[str, JSON]]) -> list[tuple[str, JSON]]:
    rank = {k: i for i, k in enumerate(_NOTE_ORDER)}
    return sorted(moved, key=lambda kv: (rank.get(kv[0], len(rank)), kv[0]))


def _describe(description: JSON, moved: list[tuple[str, JSON]]) -> str | None:
    """`description` + ``" (k: v; k2: v2)"`` for the moved keywords (A.4, E point 3)."""
    base = description if isinstance(description, str) else None
    if not moved:
        return base
    suffix = "(" + "; ".join(f"{k}: {_render_note_value(k, v)}" for k, v in _order_moved(moved)) + ")"
    return f"{base.rstrip()} {suffix}" if base else suffix


def _label_child(label: str, key: str, name: str | int | None = None) -> str:
    """Human path of a subschema for notes: ``options.timeoutMs``, ``tags[]``, ``urls|1``."""
    if key == "properties":
        return f"{label}.{name}" if label else str(name)
    if key == "items":
        return f"{label or '(root)'}[]"
    if key in ("anyOf", "oneOf", "allOf"):
        return f"{label or '(root)'}|{name}"
    if key in _DEFS_KEYS:
        return f"$defs.{name}"
    if key == "additionalProperties":
        return f"{label}.*" if label else "*"
    return f"{label or '(root)'}.{key}" + (f".{name}" if name is not None else "")


def _apply_nullable(schema: dict[str, JSON]) -> dict[str, JSON]:
    """OpenAPI 3.0 ``nullable: true`` -> a JSON Schema null type (case 08; never left in any dialect)."""
    if "nullable" not in schema:
        return schema
    s = dict(schema)
    flag = s.pop("nullable")
    if flag is not True:
        return s
    types = types_of(s)
    if types is not None:
        if "null" not in types:
            s["type"] = types + ["null"]
        if isinstance(s.get("enum"), list) and None not in s["enum"]:
            s["enum"] = list(s["enum"]) + [None]
        return s
    if isinstance(s.get("enum"), list):
        if None not in s["enum"]:
            s["enum"] = list(s["enum"]) + [None]
        return s
    if any(k in s for k in ("$ref", "anyOf", "oneOf", "allOf")):
        desc = s.pop("description", None)
        wrapped: dict[str, JSON] = {}
        if desc is not None:
            wrapped["description"] = desc
        wrapped["anyOf"] = [s, {"type": "null"}]
        return wrapped
    return s


def _copy_json(value: JSON) -> JSON:
    """Deep copy of a JSON value (scalars are returned as they are)."""
    kind = type(value)
    if kind is dict:
        return {k: _copy_json(v) for k, v in value.items()}
    if kind is list:
        return [_copy_json(v) for v in value]
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    return copy.deepcopy(value)


def _dedupe(values: list[JSON]) -> list[JSON]:
    seen: set[str] = set()
    out: list[JSON] = []
    for v in values:
        key = json.dumps(v, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def _ordered(parts: dict[str, JSON], order: tuple[str, ...]) -> dict[str, JSON]:
    out = {k: parts[k] for k in order if k in parts}
    for k, v in parts.items():
        if k not in out:
            out[k] = v
    return out


def _rewrite_refs(node: JSON, fn: Callable[[str], str]) -> JSON:
    """A copy of `node` with every string `$ref` replaced by ``fn(ref)``."""
    if isinstance(node, list):
        return [_rewrite_refs(x, fn) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, JSON] = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str):
            out[key] = fn(value)
        elif key in ("enum", "const", "default", "examples", "example"):
            out[key] = _copy_json(value)
        else:
            out[key] = _rewrite_refs(value, fn)
    return out


# --- OpenAI strict ---------------------------------------------------------------------------------

_OPENAI_KEY_ORDER: tuple[str, ...] = (
    "title", "description", "type", "enum", "const", "format", "properties", "required",
    "additionalProperties", "patternProperties", "items", "anyOf", "allOf", "$ref", "$defs",
)


def _admits_null(node: JSON) -> bool:
    """Whether null passes every constraint of `node` that toolgen emits (type, enum, const, anyOf);
    `$ref` counts as not admitting null (conservative)."""
    if not isinstance(node, dict):
        return node is True
    if "$ref" in node:
        return False
    types = types_of(node)
    if types is not None and "null" not in types:
        return False
    if "const" in node and node["const"] is not None:
        return False
    if isinstance(node.get("enum"), list) and None not in node["enum"]:
        return False
    if isinstance(node.get("anyOf"), list) and not any(_admits_null(b) for b in node["anyOf"]):
        return False
    return not (types is None and any(k in node for k in ("properties", "items", "allOf", "not")))


def _null_consistent(node: dict[str, JSON]) -> dict[str, JSON]:
    """A.4 "Enum + nullable": when the type admits null, `enum` lists null too (const -> enum)."""
    types = types_of(node)
    if types is None or "null" not in types:
        return node
    if isinstance(node.get("enum"), list) and None not in node["enum"]:
        node["enum"] = list(node["enum"]) + [None]
    if "const" in node and node["const"] is not None:
        node["enum"] = [node.pop("const"), None]
    return node


def _widen_null(node: JSON) -> JSON:
    """Make an originally optional member nullable (A.2 "Optional fields", A.4, E point 2).

    Typed nodes get ``"null"`` in their type array (and in `enum`; a `const` becomes a two-value
    `enum`); `anyOf` nodes get a ``{"type": "null"}`` branch; `$ref` nodes (and anything else) are
    wrapped as ``anyOf: [<node>, {"type": "null"}]``."""
    if not isinstance(node, dict) or _admits_null(node):
        return node
    s = dict(node)
    if "$ref" in s or "allOf" in s:
        return {"anyOf": [s, {"type": "null"}]}
    changed = False
    if isinstance(s.get("anyOf"), list):
        if not any(_admits_null(b) for b in s["anyOf"]):
            s["anyOf"] = list(s["anyOf"]) + [{"type": "null"}]
        changed = True
    types = types_of(s)
    if types is not None:
        if "null" not in types:
            s["type"] = types + ["null"]
        changed = True
    if isinstance(s.get("enum"), list):
        if None not in s["enum"]:
            s["enum"] = list(s["enum"]) + [None]
        changed = True
    if "const" in s:
        s["enum"] = [s.pop("const"), None]
        changed = True
    if changed:
        return _ordered(s, _OPENAI_KEY_ORDER)
    desc = s.pop("description", None)
    out: dict[str, JSON] = {}
    if desc is not None:
        out["description"] = desc
    out["anyOf"] = [s, {"type": "null"}]
    return out


def _def_name(pointer: str) -> str:
    tokens = [t for t in pointer.split("/") if t]
    if len(tokens) == 2 and tokens[0] in _DEFS_KEYS:
        raw = tokens[1].replace("~1", "/").replace("~0", "~")
    else:
        raw = "ref_" + "_".join(tokens)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", raw)
    return name or "def"


class _OpenAIStrict:
    """One run of the OpenAI strict transform (A.2, A.4, E)."""

    def __init__(self, canonical: dict[str, JSON]):
        # read only: every node is rebuilt, and values taken over whole (enum, const) are copied
        self.doc: dict[str, JSON] = canonical
        self.cyclic: set[str] = set(recursive_ref_targets(self.doc))
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.strict = True
        self.def_names: dict[str, str] = {}
        self.pending: list[str] = []

    # -- bookkeeping
    def block(self, pointer: str, reason: str) -> None:
        self.strict = False
        msg = f"{reason} (#{pointer}): openai strict disabled"
        if msg not in self.warnings:
            self.warnings.append(msg)

    def note(self, label: str, moved: list[tuple[str, JSON]]) -> None:
        for key, value in _order_moved(moved):
            self.notes.append(f"{label or '(root)'}: {key} {_render_note_value(key, value)}")

    def def_ref(self, pointer: str) -> str:
        if pointer == "":
            return "#"
        if pointer not in self.def_names:
            base = _def_name(pointer)
            name, n = base, 2
            used = set(self.def_names.values())
            while name in used:
                name, n = f"{base}_{n}", n + 1
            self.def_names[pointer] = name
            self.pending.append(pointer)
        return f"#/$defs/{self.def_names[pointer]}"

    # -- run
    def run(self) -> DialectSchema:
        doc = self.doc
        if isinstance(doc.get("$ref"), str):  # a root $ref is inlined once, even when recursive
            tp = _ref_target_pointer(doc, doc["$ref"])
            if tp is not None:
                sib = {k: v for k, v in doc.items() if k != "$ref" and k not in _DEFS_KEYS}
                doc = self.merge_ref(resolve_pointer(self.doc, tp), sib)
        root = self.node(doc, "", "", is_root=True)
        if types_of(root) != ["object"]:
            self.block("", "root is not type object (A.2 Root)")
        if "anyOf" in root:
            self.block("", "root uses anyOf (A.2 Root)")
        defs: dict[str, JSON] = {}
        while self.pending:
            ptr = self.pending.pop(0)
            name = self.def_names[ptr]
            defs[name] = self.node(resolve_pointer(self.doc, ptr), ptr, f"$defs.{name}")
        if defs:
            root["$defs"] = defs
        for _rule, message in openai_limit_problems(schema_stats(root)):
            self.block("", f"{message} (A.2 Limits)")
        return DialectSchema(root, tuple(self.notes), self.strict, tuple(self.warnings))

    def merge_ref(self, target: JSON, siblings: dict[str, JSON]) -> dict[str, JSON]:
        """Inline `target` with the referrer's `siblings`: annotations from the referrer win; other
        keywords the target lacks are added; conflicting ones are AND-ed through `allOf`."""
        if target is True or target == {}:
            return dict(siblings)
        if not isinstance(target, dict):
            return {**siblings, "not": {}}
        merged = dict(target)
        for key, value in siblings.items():
            if key in _ANNOTATIONS or key not in merged:
                merged[key] = value
            elif merged[key] != value:
                merged.setdefault("allOf", [])
                merged["allOf"] = list(merged["allOf"]) + [{key: value}]
        return merged

    def ref(self, schema: dict[str, JSON], ptr: str, label: str) -> JSON:
        """A.2 "$ref siblings": inline non-recursive refs; keep recursive ones bare (wrapped in a
        one-branch anyOf when they carry siblings, so the description survives; case 13)."""
        siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in _DEFS_KEYS}
        tp = _ref_target_pointer(self.doc, schema["$ref"])
        if tp is None:
            self.block(ptr, f"unresolvable $ref {schema['$ref']!r}")
            return self.node(siblings, ptr, label)
        if tp not in self.cyclic:
            target = resolve_pointer(self.doc, tp)
            return self.node(self.merge_ref(target, siblings), ptr, label)
        out_ref = self.def_ref(tp)
        if not siblings:
            return {"$ref": out_ref}
        moved = [(k, v) for k, v in siblings.items()
                 if k not in ("description", "title", "nullable") and k not in _SILENT_DROP
                 and not k.startswith("x-")]
        self.note(label, moved)
        out: dict[str, JSON] = {}
        if isinstance(siblings.get("title"), str):
            out["title"] = siblings["title"]
        text = _describe(siblings.get("description"), moved)
        if text:
            out["description"] = text
        out["anyOf"] = [{"$ref": out_ref}]
        if siblings.get("nullable") is True:
            out["anyOf"].append({"type": "null"})
        if len(out) == 1:
            return {"$ref": out_ref} if len(out["anyOf"]) == 1 else out
        return out

    def merge_all_of(self, schema: dict[str, JSON], ptr: str) -> dict[str, JSON] | None:
        """A.2 "Composition": fold `allOf` into its node when the parts merge without conflict
        (properties united, required united); None when they do not."""
        parts = schema.get("allOf")
        if not isinstance(parts, list):
            return None
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        for part in parts:
            if isinstance(part, dict) and "$ref" in part:
                tp = _ref_target_pointer(self.doc, part["$ref"])
                if tp is None or tp in self.cyclic:
                    return None
                part = self.merge_ref(resolve_pointer(self.doc, tp),
                                      {k: v for k, v in part.items() if k != "$ref"})
            if part is True or part == {}:
                continue
            if not isinstance(part, dict):
                return None
            for key, value in part.items():
                if key in _SILENT_DROP or key.startswith("x-"):
                    continue
                if key == "properties" and isinstance(value, dict):
                    props = dict(merged.get("properties", {}))
                    for name, sub in value.items():
                        if name in props and props[name] != sub:
                            props[name] = {"allOf": [props[name], sub]}  # merged when visited
                        else:
                            props[name] = sub
                    merged["properties"] = props
                elif key == "required" and isinstance(value, list):
                    req = list(merged.get("required", []))
                    merged["required"] = req + [r for r in value if r not in req]
                elif key in _ANNOTATIONS:
                    merged.setdefault(key, value)
                elif key == "type" and "type" in merged:
                    mine, theirs = types_of(merged) or [], types_of(part) or []
                    both = [t for t in mine if t in theirs or (t == "integer" and "number" in theirs)]
                    both += [t for t in theirs if t == "integer" and "number" in mine and t not in both]
                    if not both:
                        return None
                    merged["type"] = both[0] if len(both) == 1 else both
                elif key == "allOf" and isinstance(value, list):
                    merged["allOf"] = list(merged.get("allOf", [])) + value
                elif key not in merged or merged[key] == value:
                    merged[key] = value
                else:
                    return None
        return merged

    def node(self, schema: JSON, ptr: str, label: str, *, is_root: bool = False) -> JSON:
        """Transform one canonical node (and its subtree) to the OpenAI strict subset."""
        if schema is True or (isinstance(schema, dict) and not schema):
            self.block(ptr, "unconstrained value {}")
            return {}
        if not isinstance(schema, dict):
            self.block(ptr, "schema that admits nothing (false)")
            return {"not": {}}
        schema = _apply_nullable(schema)
        if "$ref" in schema:
            return self.ref(schema, ptr, label)
        while "allOf" in schema:
            merged = self.merge_all_of(schema, ptr)
            if merged is None:
                self.block(ptr, "allOf that cannot be merged (A.2 Composition)")
                break
            schema = merged
            if "$ref" in schema:
                return self.ref(schema, ptr, label)

        parts: dict[str, JSON] = {}
        moved: list[tuple[str, JSON]] = []
        types = types_of(schema)
        if types is None and "anyOf" not in schema and "oneOf" not in schema:
            if "properties" in schema:
                types = ["object"]
            elif "items" in schema:
                types = ["array"]
        is_object = types is not None and "object" in types
        is_array = types is not None and "array" in types

        for key, value in schema.items():
            if key in _SILENT_DROP or key.startswith("x-") or key in _DEFS_KEYS:
                continue
            if key in ("properties", "required", "additionalProperties", "patternProperties", "items",
                       "allOf"):
                continue  # structural, handled below
            if key == "type":
                continue
            if key in ("description", "title"):
                parts[key] = value
            elif key in ("anyOf", "oneOf"):
                if not isinstance(value, list):
                    continue
                if key == "oneOf" and "anyOf" in schema:
                    self.block(ptr, "anyOf and oneOf on one node (A.2 Composition)")
                    moved.append((key, value))
                    continue
                parts["anyOf"] = [self.node(b, f"{ptr}/{key}/{i}", _label_child(label, key, i))
                                  for i, b in enumerate(value)]
            elif key == "enum":
                parts["enum"] = _dedupe([_copy_json(v) for v in value]) if isinstance(value, list) \
                    else _copy_json(value)
            elif key == "const":
                parts["const"] = _copy_json(value)
            elif key == "format":
                stringy = types is not None and "string" in types and set(types) <= {"string", "null"}
                if stringy and value in OPENAI_STRICT_FORMATS:
                    parts["format"] = value
                else:
                    moved.append((key, value))
            else:
                moved.append((key, value))

        if types is not None:
            parts["type"] = types[0] if len(types) == 1 else list(types)

        if is_object:
            self.object_parts(schema, parts, ptr, label, is_root)
        if is_array:
            items = schema.get("items", _MISSING)
            if items is _MISSING or isinstance(items, list):
                self.block(ptr, "array without a single items schema (A.2 Array keywords)")
                if isinstance(items, list):
                    moved.append(("items", items))
                parts["items"] = {}
            else:
                parts["items"] = self.node(items, f"{ptr}/items", _label_child(label, "items"))
        if "allOf" in schema:  # could not merge: keep for the non-strict tool
            parts["allOf"] = [self.node(p, f"{ptr}/allOf/{i}", _label_child(label, "allOf", i))
                              for i, p in enumerate(schema["allOf"])]

        if moved:
            self.note(label, moved)
            text = _describe(parts.get("description"), moved)
            if text:
                parts["description"] = text
        out = _null_consistent(_ordered(parts, _OPENAI_KEY_ORDER))
        if not any(k in out for k in ("type", "enum", "const", "anyOf", "allOf", "$ref")):
            self.block(ptr, "unconstrained value {}")
        return out

    def object_parts(self, schema: dict[str, JSON], parts: dict[str, JSON], ptr: str, label: str,
                     is_root: bool) -> None:
        """A.2 "Every object" / "required" / "Optional fields"; A.1 objects carry `properties`."""
        props = schema.get("properties")
        if props is not None and not isinstance(props, dict):
            self.block(ptr, "properties is not an object")
            props = None
        required = [r for r in schema.get("required", []) if isinstance(r, str)] \
            if isinstance(schema.get("required"), list) else []
        ap = schema.get("additionalProperties", _MISSING)
        pattern_props = schema.get("patternProperties")
        free = (pattern_props is not None
                or (ap is not _MISSING and ap is not False)
                or (ap is _MISSING and props is None and not is_root))
        out_props: dict[str, JSON] = {}
        for name, sub in (props or {}).items():
            child = self.node(sub, f"{ptr}/properties/{escape_token(name)}",
                              _label_child(label, "properties", name))
            out_props[name] = child if name in required else _widen_null(child)
        undeclared = [r for r in required if r not in out_props]
        if undeclared and not free:
            self.block(ptr, f"required but undeclared properties {undeclared}")
        parts["properties"] = out_props
        parts["required"] = list(out_props)
        if not free:
            parts["additionalProperties"] = False
            return
        self.block(ptr, "free-form object (A.2 Every object)")
        if isinstance(pattern_props, dict):
            parts["patternProperties"] = {
                k: self.node(v, f"{ptr}/patternProperties/{escape_token(k)}", f"{label}.<{k}>")
                for k, v in pattern_props.items()
            }
        if isinstance(ap, dict):
            parts["additionalProperties"] = self.node(ap, f"{ptr}/additionalProperties",
                                                      _label_child(label, "additionalProperties")) \
                if ap else True
        elif ap is True:
            parts["additionalProperties"] = True


def openai_parameters(canonical: dict[str, JSON]) -> DialectSchema:
    """OpenAI strict function `parameters` from a canonical input schema (A.1, A.2, A.4, E).

    * every object (root, nested, in `items`/`anyOf`/`$defs`, empty ones) gets `properties`,
      `required` = all keys and ``additionalProperties: false``;
    * originally optional members become nullable (type array with ``"null"``; ``anyOf`` + null
      branch for `$ref`/`anyOf` members); `enum`s of null-admitting nodes contain null (A.4);
    * ``oneOf`` -> ``anyOf``; mergeable ``allOf`` is folded; ``not``/``if``/``then``/``else``/
      ``dependent*`` move to the description (the runtime enforces them);
    * non-recursive `$ref`s are inlined (referrer siblings on the inlined node); recursive ones stay in
      ``$defs`` as bare ``$ref`` (with siblings: ``{"description", "anyOf": [{"$ref"}]}``);
    * ``default``, ``examples``, ``deprecated``, ``readOnly``/``writeOnly``, every string/number/array/
      object constraint keyword and ``format`` outside A.2's list (or on non-strings) move to the
      description, e.g. ``"Subject line. (maxLength: 200; pattern: ^T-\\d+$)"``;
    * free-form objects, ``{}``, unmergeable ``allOf``, roots that are not plain objects, and schemas
      over the A.2 limits (depth 10, 5000 properties, 1000 enum values, 120000 chars) make
      ``strict`` False, each with a warning naming the canonical JSON pointer.
    """
    return _OpenAIStrict(canonical).run()


# --- Anthropic and MCP (light transforms: structure kept, `$ref`s keep resolving) -------------------


@dataclass(frozen=True)
class _LightRules:
    dialect: str
    keep_format: Callable[[str], bool]
    move_default: bool
    oneof_to_anyof: bool
    close_objects: bool


class _Light:
    """Keyword-level rewrite that keeps the schema's structure (so local `$ref`s still resolve)."""

    def __init__(self, rules: _LightRules, canonical: JSON):
        self.rules = rules
        self.notes: list[str] = []
        self.keep_open: set[str] = _allof_members(canonical) if rules.close_objects else set()

    def node(self, schema: JSON, ptr: str, label: str) -> JSON:
        if not isinstance(schema, dict):
            return schema
        schema = _apply_nullable(schema)
        out: dict[str, JSON] = {}
        moved: list[tuple[str, JSON]] = []
        for key, value in schema.items():
            if key.startswith("x-") or key in ("$comment", "discriminator", "xml", "externalDocs"):
                continue
            if key in _SCHEMA_MAP_KEYS and isinstance(value, dict):
                out[key] = {
                    name: self.node(sub, f"{ptr}/{escape_token(key)}/{escape_token(str(name))}",
                                    _label_child(label, key, name))
                    for name, sub in value.items()
                }
            elif key in _SCHEMA_LIST_KEYS and isinstance(value, list):
                new_key = key
                if key == "oneOf" and self.rules.oneof_to_anyof and "anyOf" not in schema:
                    new_key = "anyOf"
                out[new_key] = [self.node(sub, f"{ptr}/{key}/{i}", _label_child(label, key, i))
                                for i, sub in enumerate(value)]
            elif key in _SCHEMA_KEYS:
                if isinstance(value, list):
                    out[key] = [self.node(sub, f"{ptr}/{key}/{i}", _label_child(label, key, i))
                                for i, sub in enumerate(value)]
                else:
                    out[key] = self.node(value, f"{ptr}/{key}", _label_child(label, key))
            elif key == "format":
                if isinstance(value, str) and self.rules.keep_format(value) and (
                    types_of(schema) is None or "string" in (types_of(schema) or [])
                ):
                    out[key] = value
                else:
                    moved.append((key, value))
            elif key == "default" and self.rules.move_default:
                moved.append((key, value))
            elif key == "example":
                if "examples" not in schema:
                    out["examples"] = [_copy_json(value)]
            else:
                out[key] = _copy_json(value)
        if (self.rules.close_objects and isinstance(out.get("properties"), dict)
                and ptr not in self.keep_open
                and not any(k in out for k in ("additionalProperties", "patternProperties",
                                               "unevaluatedProperties", "allOf", "anyOf", "oneOf",
                                               "$ref"))):
            out["additionalProperties"] = False
        if moved:
            for key, value in _order_moved(moved):
                self.notes.append(f"{label or '(root)'}: {key} {_render_note_value(key, value)}")
            text = _describe(out.get("description"), moved)
            if text:
                out["description"] = text
        return out


def _allof_members(canonical: JSON) -> set[str]:
    """Pointers of `allOf` members and of the schemas their `$ref`s reach: closing those with
    ``additionalProperties: false`` would reject the members the other parts declare."""
    found: set[str] = set()
    todo: list[str] = []
    if not any(isinstance(node, dict) and isinstance(node.get("allOf"), list) for node in iter_nodes(canonical)):
        return found
    for ptr, node in iter_schemas(canonical):
        if isinstance(node, dict) and isinstance(node.get("allOf"), list):
            todo.extend(f"{ptr}/allOf/{i}" for i in range(len(node["allOf"])))
    while todo:
        ptr = todo.pop()
        if ptr in found:
            continue
        found.add(ptr)
        try:
            node = resolve_pointer(canonical, ptr)
        except PointerError:
            continue
        if isinstance(node, dict) and "$ref" in node:
            target = _ref_target_pointer(canonical, node["$ref"])
            if target is not None:
                todo.append(target)
    return found


def _is_empty_params(schema: dict[str, JSON]) -> bool:
    """A root object that takes no arguments: no properties, closed or unspecified extras (case 24)."""
    if types_of(schema) != ["object"] or schema.get("properties"):
        return False
    if schema.get("additionalProperties", False) is not False:
        return False
    structural = ("patternProperties", "anyOf", "oneOf", "allOf", "$ref", "propertyNames", "not", "if",
                  "dependentSchemas", "unevaluatedProperties", "minProperties")
    return not any(k in schema for k in structural)


def _ref_warnings(schema: JSON, dialect: str) -> list[str]:
    return [f"unresolvable $ref {ref!r} (#{ptr}): {dialect} schema is not self-contained"
            for ptr, ref in unresolved_refs(schema)]


def _has_free_form(schema: JSON) -> list[str]:
    """Pointers of object nodes that accept undeclared members, and of `{}`/true nodes."""
    return [ptr for ptr, node in iter_schemas(schema) if _free_form_node(node)]


def _free_form_node(node: JSON) -> bool:
    if node is True or node == {}:
        return True
    return (isinstance(node, dict) and is_object_schema(node) and "$ref" not in node
            and (node.get("additionalProperties", _MISSING) is not False or "patternProperties" in node))


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
    light = _Light(_LightRules("anthropic", lambda f: f in ANTHROPIC_FORMATS, True, True, True), canonical)
    out = light.node(canonical, "", "")  # builds new containers throughout; never mutates `canonical`
    if not isinstance(out, dict):
        out = {"type": "object", "properties": {}}
    if _is_empty_params(out):
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
    warnings: list[str] = _ref_warnings(out, "anthropic") if has_ref else []
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


def _mcp_light(canonical: JSON) -> tuple[JSON, list[str]]:
    light = _Light(_LightRules("mcp", lambda f: f in JSON_SCHEMA_FORMATS, False, False, False), canonical)
    out = light.node(canonical, "", "")  # new containers throughout
    return out, light.notes


def mcp_input_schema(canonical: dict[str, JSON]) -> DialectSchema:
    """MCP 2025-11-25 `inputSchema` from a canonical input schema (D.1, D.4, E).

    The canonical constraints stay (2020-12 is MCP's default dialect and the runtime validates the
    same schema); ``format`` values that are not JSON Schema 2020-12 formats (OpenAPI-only ones such as
    password, int32, double, binary) move into the description; OpenAPI ``nullable`` never survives.
    A tool without arguments gets exactly ``{"type": "object", "additionalProperties": false}`` (D.1,
    case 24). Every `$ref` must resolve inside the schema (a warning otherwise). `strict` is always
    False: MCP has no strict flag.
    """
    out, notes = _mcp_light(canonical)
    if isinstance(out, dict) and _is_empty_params(out):
        out = {"type": "object", "additionalProperties": False}
    if not isinstance(out, dict) or types_of(out) != ["object"]:
        return DialectSchema(out if isinstance(out, dict) else {}, tuple(notes), False,
                             ("inputSchema root is not type object (#): invalid for MCP (D.1)",
                              *_ref_warnings(out, "mcp")))
    return DialectSchema(out, tuple(notes), False, tuple(_ref_warnings(out, "mcp")))


def mcp_output_needs_wrap(schema: JSON) -> bool:
    """Whether an output schema's root is not ``type: "object"`` exactly (D.1 `outputSchema`), so the
    tool result is returned as ``{"result": <value>}``. The runtime uses the same rule."""
    return not (isinstance(schema, dict) and schema.get("type") == "object")


def _wrap_result(schema: JSON) -> dict[str, JSON]:
    """``{"type": "object", "properties": {"result": schema}, "required": ["result"]}`` with
    ``$defs`` hoisted to the new root and local refs re-pointed so they keep resolving."""
    inner: JSON = schema
    hoisted: dict[str, JSON] = {}
    if isinstance(inner, dict):
        inner = dict(inner)
        for key in _DEFS_KEYS:
            if key in inner:
                hoisted[key] = inner.pop(key)
        inner.pop("$schema", None)

    def repoint(ref: str) -> str:
        if ref == "#":
            return "#/properties/result"
        if ref.startswith("#/") and not any(ref.startswith(f"#/{k}/") for k in _DEFS_KEYS):
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
    return DialectSchema(out, tuple(notes), False, tuple(_ref_warnings(out, "mcp")))


# --- tool objects ----------------------------------------------------------------------------------


def openai_tool(name: str, description: str, canonical_input: dict[str, JSON], *,
                parameters: DialectSchema | None = None) -> dict[str, JSON]:
    """Chat Completions function tool (A.1): ``{"type": "function", "function": {name, description,
    parameters, strict}}``; `strict` is always explicit (A.1 "strict default") and False when
    `openai_parameters` found something strict mode cannot carry. `parameters`: the already computed
    ``openai_parameters(canonical_input)``, if the caller has it."""
    params = parameters if parameters is not None else openai_parameters(canonical_input)
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": params.schema,
            "strict": params.strict,
        },
    }


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


def mcp_tool(
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
    tool["inputSchema"] = (input_schema if input_schema is not None else mcp_input_schema(canonical_input)).schema
    if canonical_output is not None:
        tool["outputSchema"] = (output_schema if output_schema is not None
                                else mcp_output_schema(canonical_output)).schema
    tool["annotations"] = {
        "readOnlyHint": bool(read_only),
        "destructiveHint": bool(destructive),
        "idempotentHint": bool(idempotent),
        "openWorldHint": bool(open_world),
    }
    return tool
