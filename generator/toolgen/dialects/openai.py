"""The OpenAI dialect: Chat Completions function tools in strict mode (``docs/provider-rules.md``
A.1, A.2, A.4 and E, the portable intersection).

Input: an IR `Tool` (its canonical input schema: self-contained JSON Schema 2020-12, root
``type: object``, every constraint of the spec, the original optionality, ``$defs`` + ``$ref`` for
recursive schemas). Output: the strict view (`openai_parameters` -> `DialectSchema`), the tool object
(`openai_tool`), the A.2 limits (`schema_stats`, `openai_limit_problems`) and the conformance check
of a whole catalog (`check_openai_catalog`). The rules applied to one node (null widening, key
order, the keywords strict mode carries) are `toolgen.dialects._openai_nodes`'.

Decisions:

* ``$ref`` with siblings (A.2 "$ref siblings", case 13): a non-recursive ``$ref`` is inlined and its
  siblings (description, default, ...) are placed on the inlined node; a recursive ``$ref`` stays a
  bare ``{"$ref": ...}`` and, when it has siblings, is wrapped as
  ``{"description": ..., "anyOf": [{"$ref": ...}]}``. Only recursive targets are emitted in ``$defs``.
* Free-form objects (``{"type": "object"}`` without properties, ``additionalProperties`` that is
  ``true`` or a schema, ``patternProperties``) and unconstrained values (``{}``) cannot be strict: the
  *tool* is emitted with ``strict: false`` and a warning naming the JSON pointer; the rest of the
  schema keeps the strict normalisation.
* A root ``{"type": "object"}`` without ``properties`` is an empty parameter list, not a free-form
  object (case 24).
* Keywords strict mode cannot carry are summarised in the node's ``description`` as
  ``(keyword: value; ...)``; the toolgen runtime validates every call against the canonical schema,
  so nothing is lost at run time. The transform is pure: it never mutates its input.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ..compile.ir import Tool
from ..pointer import escape_token, resolve_pointer
from ._base import (
    ANNOTATIONS,
    ITEMS_STEP,
    MAP_VALUES_STEP,
    SILENT_DROP,
    Dialect,
    DialectSchema,
    apply_nullable,
    branch_step,
    copy_json,
    describe,
    label_child,
    order_moved,
    prop_step,
    render_note_value,
    rewrite,
)
from ._check import (
    Report,
    Summary,
    Violation,
    check_items_and_refs,
    check_names,
    check_no_nullable,
    object_root,
    tool_label,
)
from ._loose import check_loose_nodes, loose_parameters
from ._openai_nodes import (
    OPENAI_KEY_ORDER,
    admits_string,
    carried,
    dedupe,
    def_name,
    node_types,
    null_consistent,
    ordered,
    widen_null,
)
from ._openai_rules import (
    LIMITS,
    OPENAI_MAX_DEPTH,
    OPENAI_MAX_TOOLS,
    OPENAI_STRICT_FORMATS,
    SchemaStats,
    check_openai_strict,
    openai_limit_problems,
    schema_stats,
)
from ._simplify import simplify_schema
from ._walk import (
    DEFS_KEYS,
    MISSING,
    recursive_ref_targets,
    ref_target_pointer,
    types_of,
)

__all__ = [
    "LIMITS",
    "OPENAI_MAX_DEPTH",
    "OPENAI_MAX_TOOLS",
    "OPENAI_STRICT_FORMATS",
    "SchemaStats",
    "check_openai_catalog",
    "openai_limit_problems",
    "openai_loose_parameters",
    "openai_parameters",
    "openai_tool",
    "schema_stats",
]

JSON = Any


class _OpenAIStrict:
    """One run of the OpenAI strict transform (A.2, A.4, E, F.1). `widen_optional`: optional members
    become required-and-nullable (OpenAI); a subclass for another dialect may keep them optional."""

    widen_optional = True

    def __init__(self, canonical: dict[str, JSON]):
        # read only: every node is rebuilt, and values taken over whole (enum, const) are copied
        self.doc: dict[str, JSON] = canonical
        self.cyclic: set[str] = set(recursive_ref_targets(self.doc))
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.strict = True
        self.def_names: dict[str, str] = {}
        self.pending: list[str] = []
        self.rewrites: list[dict[str, JSON]] = []
        self.current_def: str | None = None

    # -- bookkeeping
    def block(self, pointer: str, reason: str) -> None:
        self.strict = False
        msg = f"{reason} (#{pointer}): openai strict disabled"
        if msg not in self.warnings:
            self.warnings.append(msg)

    def note(self, label: str, moved: list[tuple[str, JSON]]) -> None:
        for key, value in order_moved(moved):
            self.notes.append(f"{label or '(root)'}: {key} {render_note_value(key, value)}")

    def record(self, path: tuple[str, ...], kind: str, reason: str, **extra: JSON) -> None:
        if self.current_def is not None:
            extra = {**extra, "def": self.current_def}
        self.rewrites.append(rewrite(path, kind, reason, **extra))

    def def_ref(self, pointer: str) -> str:
        if pointer == "":
            return "#"
        if pointer not in self.def_names:
            base = def_name(pointer)
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
            tp = ref_target_pointer(doc, doc["$ref"])
            if tp is not None:
                sib = {k: v for k, v in doc.items() if k != "$ref" and k not in DEFS_KEYS}
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
            self.current_def = name
            defs[name] = self.node(resolve_pointer(self.doc, ptr), ptr, f"$defs.{name}", level=1)
            self.current_def = None
        if defs:
            root["$defs"] = defs
        for _rule, message in openai_limit_problems(schema_stats(root)):
            self.block("", f"{message} (A.2 Limits)")
        rewrites = self.rewrites
        if not any(r["kind"] != "ref" and "def" in r for r in rewrites):
            rewrites = [r for r in rewrites if r["kind"] != "ref"]  # nothing to undo inside $defs
        return DialectSchema(root, tuple(self.notes), self.strict, tuple(self.warnings), tuple(rewrites))

    def merge_ref(self, target: JSON, siblings: dict[str, JSON]) -> dict[str, JSON]:
        """Inline `target` with the referrer's `siblings`: annotations from the referrer win; other
        keywords the target lacks are added; conflicting ones are AND-ed through `allOf`."""
        if target is True or target == {}:
            return dict(siblings)
        if not isinstance(target, dict):
            return {**siblings, "not": {}}
        merged = dict(target)
        for key, value in siblings.items():
            if key in ANNOTATIONS or key not in merged:
                merged[key] = value
            elif merged[key] != value:
                merged.setdefault("allOf", [])
                merged["allOf"] = [*merged["allOf"], {key: value}]
        return merged

    def ref(self, schema: dict[str, JSON], ptr: str, label: str, path: tuple[str, ...], level: int) -> JSON:
        """A.2 "$ref siblings": inline non-recursive refs; keep recursive ones bare (wrapped in a
        one-branch anyOf when they carry siblings, so the description survives; case 13)."""
        siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in DEFS_KEYS}
        tp = ref_target_pointer(self.doc, schema["$ref"])
        if tp is None:
            self.block(ptr, f"unresolvable $ref {schema['$ref']!r}")
            return self.node(siblings, ptr, label, path=path, level=level)
        if tp not in self.cyclic:
            target = resolve_pointer(self.doc, tp)
            return self.node(self.merge_ref(target, siblings), ptr, label, path=path, level=level)
        out_ref = self.def_ref(tp)
        self.record(path, "ref", "recursive schema", target="#" if tp == "" else self.def_names[tp])
        if not siblings:
            return {"$ref": out_ref}
        moved = [
            (k, v)
            for k, v in siblings.items()
            if k not in ("description", "title", "nullable")
            and k not in SILENT_DROP
            and not k.startswith("x-")
        ]
        self.note(label, moved)
        out: dict[str, JSON] = {}
        if isinstance(siblings.get("title"), str):
            out["title"] = siblings["title"]
        text = describe(siblings.get("description"), moved)
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
                tp = ref_target_pointer(self.doc, part["$ref"])
                if tp is None or tp in self.cyclic:
                    return None
                part = self.merge_ref(
                    resolve_pointer(self.doc, tp), {k: v for k, v in part.items() if k != "$ref"}
                )
            if part is True or part == {}:
                continue
            if not isinstance(part, dict):
                return None
            for key, value in part.items():
                if key in SILENT_DROP or key.startswith("x-"):
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
                elif key in ANNOTATIONS:
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

    # -- rewrites (F.1: what strict mode cannot express becomes something it can)
    def as_json_string(self, schema: JSON, ptr: str, label: str, path: tuple[str, ...], reason: str) -> JSON:
        """A string argument holding the JSON text of the canonical value (the runtime parses it
        and validates the result against the canonical schema)."""
        node = schema if isinstance(schema, dict) else {}
        types = types_of(node)
        solid = [t for t in (types or []) if t != "null"]
        expect = solid[0] if len(solid) == 1 and solid[0] in ("object", "array") else "any"
        what = {"object": "a JSON object", "array": "a JSON array"}.get(expect, "a JSON value")
        summary = {
            k: v
            for k, v in node.items()
            if k not in ("description", "title", "nullable")
            and k not in SILENT_DROP
            and not k.startswith("x-")
            and k not in DEFS_KEYS
        }
        text = f"JSON-encoded: send {what} as a JSON text string"
        if summary and summary not in ({"type": "object"}, {"type": "object", "additionalProperties": True}):
            shape = json.dumps(summary, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
            text += "; its schema: " + (shape if len(shape) <= 300 else shape[:299] + "\u2026")
        desc = node.get("description")
        out: dict[str, JSON] = {}
        if isinstance(node.get("title"), str):
            out["title"] = node["title"]
        out["description"] = (
            f"{desc.rstrip()} ({text})" if isinstance(desc, str) and desc.strip() else f"({text})"
        )
        nullable = (types is not None and "null" in types) or node.get("nullable") is True
        out["type"] = ["string", "null"] if nullable else "string"
        lenient = (
            (types is not None and "string" in types)
            or "anyOf" in node
            or "oneOf" in node
            or any(step.startswith("|") for step in path)
        )
        extra: dict[str, JSON] = {"expect": expect}
        if lenient:
            extra["lenient"] = True
        if admits_string(node):
            extra["keep_strings"] = True  # a plain string is a canonical value here: parse only containers
        self.record(path, "json_string", reason, **extra)
        self.notes.append(f"{label or '(root)'}: JSON-encoded string ({reason})")
        return out

    def map_entries(
        self, schema: dict[str, JSON], ptr: str, label: str, path: tuple[str, ...], level: int
    ) -> JSON:
        """A typed map (``additionalProperties: <schema>``) as an array of ``{key, value}`` entries."""
        value = self.node(
            schema["additionalProperties"],
            f"{ptr}/additionalProperties",
            label_child(label, "additionalProperties"),
            path=(*path, MAP_VALUES_STEP),
            level=level + 2,
        )
        moved = [
            (k, v)
            for k, v in schema.items()
            if k
            not in (
                "type",
                "description",
                "title",
                "additionalProperties",
                "properties",
                "required",
                "nullable",
            )
            and k not in SILENT_DROP
            and not k.startswith("x-")
            and k not in DEFS_KEYS
        ]
        self.note(label, moved)
        text = describe(schema.get("description"), moved)
        hint = "(a map: one {key, value} entry per key, keys unique)"
        out: dict[str, JSON] = {}
        if isinstance(schema.get("title"), str):
            out["title"] = schema["title"]
        out["description"] = f"{text.rstrip()} {hint}" if text else hint
        types = types_of(schema) or []
        out["type"] = ["array", "null"] if "null" in types else "array"
        out["items"] = {
            "type": "object",
            "properties": {"key": {"type": "string"}, "value": value},
            "required": ["key", "value"],
            "additionalProperties": False,
        }
        self.record(path, "map_entries", "typed map (additionalProperties schema)")
        self.notes.append(f"{label or '(root)'}: map sent as [{{key, value}}] entries")
        return out

    def must_rewrite(self, schema: dict[str, JSON], types: list[str] | None, level: int) -> str | None:
        """Why a (non-root) node cannot be strict as it is, or None. "map" means a typed map."""
        is_object = types is not None and "object" in types
        is_array = types is not None and "array" in types
        if "oneOf" in schema and "anyOf" in schema:
            return "anyOf and oneOf on one node"
        if (is_object or is_array) and level + 1 > OPENAI_MAX_DEPTH:
            return "nesting below the depth limit"
        if is_array:
            items = schema.get("items", MISSING)
            if items is MISSING or isinstance(items, list):
                return "array without a single items schema"
        if is_object:
            props = schema.get("properties")
            if props is not None and not isinstance(props, dict):
                return "properties is not an object"
            ap = schema.get("additionalProperties", MISSING)
            solid = [t for t in types or [] if t != "null"]
            if (
                isinstance(ap, dict)
                and ap
                and not props
                and "patternProperties" not in schema
                and solid == ["object"]
                and level + 2 <= OPENAI_MAX_DEPTH
            ):
                return "map"
            if (
                "patternProperties" in schema
                or (ap is not MISSING and ap is not False)
                or (ap is MISSING and props is None)
            ):
                return "free-form object"
            required = schema.get("required")
            if isinstance(required, list) and any(
                isinstance(r, str) and r not in (props or {}) for r in required
            ):
                return "required but undeclared properties"
        return None

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
        """Transform one canonical node (and its subtree) to the OpenAI strict subset. `path`: the
        argument path of the node (rewrite records); `level`: the nesting level of its parent."""
        if schema is True or (isinstance(schema, dict) and not schema):
            return self.as_json_string(schema, ptr, label, path, "unconstrained value")
        if not isinstance(schema, dict):
            self.block(ptr, "schema that admits nothing (false)")
            return {"not": {}}
        schema = apply_nullable(schema)
        if "$ref" in schema:
            return self.ref(schema, ptr, label, path, level)
        while "allOf" in schema:
            merged = self.merge_all_of(schema, ptr)
            if merged is None:
                if not is_root:
                    return self.as_json_string(schema, ptr, label, path, "allOf strict mode cannot express")
                self.block(ptr, "allOf that cannot be merged (A.2 Composition)")
                break
            schema = merged
            if "$ref" in schema:
                return self.ref(schema, ptr, label, path, level)

        types = node_types(schema)
        is_object = types is not None and "object" in types
        is_array = types is not None and "array" in types
        if not is_root:
            why = self.must_rewrite(schema, types, level)
            if why == "map":
                return self.map_entries(schema, ptr, label, path, level)
            if why is not None:
                return self.as_json_string(schema, ptr, label, path, why)
        my_level = level + 1 if (is_object or is_array) else level
        parts, moved = self.keyword_parts(schema, types, ptr, label, path, my_level)
        if types is not None:
            parts["type"] = types[0] if len(types) == 1 else list(types)
        if is_object:
            self.object_parts(schema, parts, ptr, label, is_root, path, my_level)
        if is_array:
            parts["items"] = self.items_part(schema, ptr, label, path, my_level)
        if "allOf" in schema:  # could not merge (root only): keep for the non-strict tool
            parts["allOf"] = [
                self.node(p, f"{ptr}/allOf/{i}", label_child(label, "allOf", i), path=path, level=my_level)
                for i, p in enumerate(schema["allOf"])
            ]
        if moved:
            self.note(label, moved)
            text = describe(parts.get("description"), moved)
            if text:
                parts["description"] = text
        out = null_consistent(ordered(parts, OPENAI_KEY_ORDER))
        if not any(k in out for k in ("type", "enum", "const", "anyOf", "allOf", "$ref")):
            if is_root:
                self.block(ptr, "unconstrained value {}")
            else:
                return self.as_json_string(schema, ptr, label, path, "value without a type")
        return out

    def keyword_parts(
        self,
        schema: dict[str, JSON],
        types: list[str] | None,
        ptr: str,
        label: str,
        path: tuple[str, ...],
        level: int,
    ) -> tuple[dict[str, JSON], list[tuple[str, JSON]]]:
        """The node's non-structural keywords: those strict mode carries (annotations, ``anyOf``
        from ``anyOf``/``oneOf`` with each branch transformed, ``enum`` without repeats, ``const``,
        A.2's formats on strings, F.1's keywords on their types), and those moved to the
        description, in the node's order."""
        parts: dict[str, JSON] = {}
        moved: list[tuple[str, JSON]] = []
        for key, value in schema.items():
            if key in SILENT_DROP or key.startswith("x-") or key in DEFS_KEYS or key in _STRUCTURAL:
                continue
            if key in ("description", "title"):
                parts[key] = value
            elif key in ("anyOf", "oneOf"):
                if isinstance(value, list):
                    parts["anyOf"] = [
                        self.node(
                            b,
                            f"{ptr}/{key}/{i}",
                            label_child(label, key, i),
                            path=(*path, branch_step(i)),
                            level=level,
                        )
                        for i, b in enumerate(value)
                    ]
            elif key == "enum":
                parts["enum"] = (
                    dedupe([copy_json(v) for v in value]) if isinstance(value, list) else copy_json(value)
                )
            elif key == "const":
                parts["const"] = copy_json(value)
            elif carried(key, value, types):
                parts[key] = value
            else:
                moved.append((key, value))
        return parts, moved

    def items_part(
        self, schema: dict[str, JSON], ptr: str, label: str, path: tuple[str, ...], level: int
    ) -> JSON:
        """An array node's ``items``, transformed; ``{}`` (and strict blocked) without a single items
        schema, which only the root can have and the root is never an array."""
        items = schema.get("items", MISSING)
        if items is MISSING or isinstance(items, list):
            self.block(ptr, "array without a single items schema (A.2 Array keywords)")
            return {}
        return self.node(
            items, f"{ptr}/items", label_child(label, "items"), path=(*path, ITEMS_STEP), level=level
        )

    def object_parts(
        self,
        schema: dict[str, JSON],
        parts: dict[str, JSON],
        ptr: str,
        label: str,
        is_root: bool,
        path: tuple[str, ...],
        level: int,
    ) -> None:
        """A.2 "Every object" / "required" / "Optional fields"; A.1 objects carry `properties`.
        Nested free-form objects never get here (`must_rewrite`); a root that accepts extra
        arguments is closed: only the declared ones are offered."""
        props = schema.get("properties")
        if props is not None and not isinstance(props, dict):
            self.block(ptr, "properties is not an object")
            props = None
        required = (
            [r for r in schema.get("required", []) if isinstance(r, str)]
            if isinstance(schema.get("required"), list)
            else []
        )
        out_props: dict[str, JSON] = {}
        for name, sub in (props or {}).items():
            child = self.node(
                sub,
                f"{ptr}/properties/{escape_token(name)}",
                label_child(label, "properties", name),
                path=(*path, prop_step(name)),
                level=level,
            )
            out_props[name] = child if name in required or not self.widen_optional else widen_null(child)
        undeclared = [r for r in required if r not in out_props]
        if undeclared:
            self.block(ptr, f"required but undeclared properties {undeclared}")
        parts["properties"] = out_props
        parts["required"] = (
            list(out_props) if self.widen_optional else [r for r in required if r in out_props]
        )
        parts["additionalProperties"] = False
        ap = schema.get("additionalProperties", MISSING)
        if is_root and (
            schema.get("patternProperties") is not None or (ap is not MISSING and ap is not False)
        ):
            self.notes.append("(root): only the declared arguments are offered (additionalProperties closed)")


#: keywords `_OpenAIStrict.node` transforms itself, not as plain keywords (`keyword_parts`)
_STRUCTURAL = frozenset(
    {"properties", "required", "additionalProperties", "patternProperties", "items", "allOf", "type"}
)


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


def openai_tool(
    name: str, description: str, canonical_input: dict[str, JSON], *, parameters: DialectSchema | None = None
) -> dict[str, JSON]:
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


def check_openai_catalog(
    tools: list[dict[str, JSON]], *, max_tools: int | None = OPENAI_MAX_TOOLS
) -> list[Violation]:
    """Check a Chat Completions catalog (A.1, A.2, A.4, E).

    Every tool: shape ``{"type": "function", "function": {...}}``, explicit boolean `strict` (A.1
    "toolgen should"), name pattern and uniqueness, object root (not anyOf), arrays with `items`,
    resolvable `$ref`s, no `nullable`. Non-strict tools: every value-position schema typed and a root
    with `properties` (`toolgen.dialects._loose.check_loose_nodes`). Strict tools instead: every object closed with complete
    `required` and `properties`, only the strict keyword set, allowed formats on strings only, no
    `default`, no `$ref` siblings, null in enums of nullable nodes, the A.2 limits.
    `max_tools`: the A.1 cap on tools per request (``A.1-max-tools``); None skips it (include-all
    builds may legitimately exceed it and are split by the caller)."""
    report = Report("openai")
    if not isinstance(tools, list):
        report.add("", "", "A.1-shape", "catalog must be a list of tools")
        return report.items
    if max_tools is not None and len(tools) > max_tools:
        report.add("", "", "A.1-max-tools", f"{len(tools)} tools > {max_tools} per request")
    names: list[tuple[str, str, JSON]] = []
    for i, tool in enumerate(tools):
        if (
            not isinstance(tool, dict)
            or tool.get("type") != "function"
            or not isinstance(tool.get("function"), dict)
        ):
            report.add(f"#{i}", f"/{i}", "A.1-shape", 'tool must be {"type": "function", "function": {...}}')
            continue
        fn = tool["function"]
        label = tool_label(fn.get("name"), i)
        names.append((label, "/function/name", fn.get("name")))
        if "description" in fn and not isinstance(fn["description"], str):
            report.add(label, "/function/description", "A.1-shape", "description must be a string")
        if not isinstance(fn.get("strict"), bool):
            report.add(
                label,
                "/function/strict",
                "A.1-strict-explicit",
                "strict must be sent explicitly as true or false",
            )
        if "parameters" not in fn:
            continue  # A.1: omitted parameters = empty parameter list
        params = fn["parameters"]
        base = "/function/parameters"
        if not object_root(report, label, base, params, "A.2-root-object", "parameters"):
            continue
        summary = Summary(params)
        check_items_and_refs(report, label, base, params, "A.2", summary)
        check_no_nullable(report, label, base, params, "E.2-nullable", summary)
        if fn.get("strict") is True:
            check_openai_strict(report, label, base, params)
        else:
            check_loose_nodes(report, label, base, params)
    check_names(report, names, "A.1")
    return report.items


def openai_loose_parameters(canonical: dict[str, JSON]) -> DialectSchema:
    """The non-strict `parameters` of a tool whose intent asks for ``strict: false``: the natural
    schema (no argument rewrites) under the rules OpenAI applies outside strict mode too (every value
    typed, arrays with `items`, a root with `properties`; `toolgen.dialects._loose`)."""
    return loose_parameters(canonical, OPENAI_STRICT_FORMATS)


def _catalog_entry(tool: Tool) -> tuple[dict[str, JSON], tuple[str, ...], tuple[dict[str, JSON], ...]]:
    if not tool.strict:  # the intent map asks for it: natural values, nothing to undo at run time
        loose = openai_loose_parameters(tool.input_schema)
        return openai_tool(tool.name, tool.description, tool.input_schema, parameters=loose), (), ()
    parameters = openai_parameters(tool.input_schema)
    if not parameters.rewrites:  # rewrite paths name anyOf branches by index: simplify only without them
        parameters = replace(parameters, schema=simplify_schema(parameters.schema, multi_type=False))
    return (
        openai_tool(tool.name, tool.description, tool.input_schema, parameters=parameters),
        parameters.warnings,
        parameters.rewrites,
    )


def _entry_name(entry: dict[str, JSON]) -> str:
    return str(entry["function"]["name"])


def _check(tools: list[dict[str, JSON]], max_tools: int | None) -> list[Violation]:
    return check_openai_catalog(tools, max_tools=max_tools)


DIALECT = Dialect(
    "openai",
    0,
    _catalog_entry,
    _entry_name,
    _check,
    OPENAI_MAX_TOOLS,
    LIMITS,
    title="OpenAI",
    extra_files=("openai.responses.json",),
    reshapes_arguments=True,
    checks_per_tool=True,
)
