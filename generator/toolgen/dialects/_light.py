"""The light view transform shared by Anthropic and MCP: keyword-level rewrites that keep a canonical
schema's structure, so its local `$ref`s keep resolving.

Input: a canonical schema and the dialect's `LightRules` (which formats it keeps, whether `default`
moves into the description, whether ``oneOf`` becomes ``anyOf``, whether objects are closed).
Output: the rewritten schema and the reviewer notes of what moved into descriptions.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..pointer import PointerError, escape_token, resolve_pointer
from ._base import JSON, apply_nullable, describe, label_child, order_moved, render_note_value
from ._memo import memo_table
from ._walk import (
    SCHEMA_KEYS,
    SCHEMA_LIST_KEYS,
    SCHEMA_MAP_KEYS,
    iter_nodes,
    iter_schemas,
    ref_target_pointer,
    types_of,
    unresolved_refs,
)


@dataclass(frozen=True)
class LightRules:
    """What a dialect's light view does: `formats` are the ``format`` values it keeps (on string or
    untyped nodes; others move into the description), `move_default` moves ``default`` there too,
    `oneof_to_anyof` renames ``oneOf``, `close_objects` adds ``additionalProperties: false`` to
    objects that declare properties and say nothing of extras. Equal rules give equal views (the
    views of shared subtrees are remembered per rules, `toolgen.dialects._memo`)."""

    dialect: str
    formats: frozenset[str]
    move_default: bool
    oneof_to_anyof: bool
    close_objects: bool


#: A reviewer note of a subtree: the path steps from the subtree's root to the node it is about
#: (``(key, name)`` as `label_child` takes them) and the text after the label.
_Note = tuple[tuple[tuple[str, "str | int | None"], ...], str]
_NO_NOTES: tuple[_Note, ...] = ()


class Light:
    """Keyword-level rewrite that keeps the schema's structure (so local `$ref`s still resolve).

    Within `toolgen.dialects._memo.shared_views`, the view of a subtree object is computed once per
    rules (the IR shares equal subtrees between tools, so most of a catalog's nodes are seen again)
    unless objects are closed around ``allOf`` members, whose view depends on where the node sits."""

    def __init__(self, rules: LightRules, canonical: JSON):
        self.rules = rules
        self.notes: list[str] = []
        self.keep_open: set[str] = _allof_members(canonical) if rules.close_objects else set()
        self._memo = memo_table(("light", rules)) if not self.keep_open else None

    def node(self, schema: JSON, ptr: str, label: str) -> JSON:
        """The view of `schema` (at pointer `ptr`, shown as `label` in notes). Copy on write: a node
        the rules leave as it is comes back as the very same object, so the view shares unchanged
        subtrees (and leaf values such as ``enum`` lists) with `schema`; a changed node is a new
        container. Neither is ever mutated afterwards: callers treat both as read-only."""
        out, notes = self._node(schema, ptr if self.keep_open else None)
        for steps, text in notes:
            at = label
            for key, name in steps:
                at = label_child(at, key, name)
            self.notes.append(f"{at or '(root)'}: {text}")
        return out

    def _node(self, schema: JSON, ptr: str | None) -> tuple[JSON, tuple[_Note, ...]]:
        """The view of `schema` and its notes relative to it. `ptr`: its JSON pointer when
        `keep_open` needs it, else None."""
        if not isinstance(schema, dict):
            return schema, _NO_NOTES
        memo = self._memo
        if memo is not None:
            hit = memo.get(id(schema))
            if hit is not None:
                return hit[1], hit[2]
        given = schema
        schema = apply_nullable(schema)
        changed = schema is not given
        out: dict[str, JSON] = {}
        moved: list[tuple[str, JSON]] = []
        notes: list[_Note] = []

        def child(sub: JSON, key: str, name: str | int | None, sub_ptr: str | None) -> JSON:
            view, sub_notes = self._node(sub, sub_ptr)
            if sub_notes:
                notes.extend((((key, name), *steps), text) for steps, text in sub_notes)
            return view

        for key, value in schema.items():
            if key.startswith("x-") or key in ("$comment", "discriminator", "xml", "externalDocs"):
                changed = True
                continue
            if key in SCHEMA_MAP_KEYS and isinstance(value, dict):
                children = {
                    name: child(
                        sub,
                        key,
                        name,
                        None if ptr is None else f"{ptr}/{escape_token(key)}/{escape_token(str(name))}",
                    )
                    for name, sub in value.items()
                }
                out[key] = _same_dict(value, children)
            elif key in SCHEMA_LIST_KEYS and isinstance(value, list):
                new_key = key
                if key == "oneOf" and self.rules.oneof_to_anyof and "anyOf" not in schema:
                    new_key = "anyOf"
                    changed = True
                out[new_key] = _same_list(
                    value,
                    [
                        child(sub, key, i, None if ptr is None else f"{ptr}/{key}/{i}")
                        for i, sub in enumerate(value)
                    ],
                )
            elif key in SCHEMA_KEYS:
                if isinstance(value, list):
                    out[key] = _same_list(
                        value,
                        [
                            child(sub, key, i, None if ptr is None else f"{ptr}/{key}/{i}")
                            for i, sub in enumerate(value)
                        ],
                    )
                else:
                    out[key] = child(value, key, None, None if ptr is None else f"{ptr}/{key}")
            else:
                changed = self._value_keyword(schema, key, value, out, moved) or changed
            if not changed and out.get(key, _ABSENT) is not value:
                changed = True
        if self._closes(out, ptr):
            out["additionalProperties"] = False
            changed = True
        if moved:
            for key, value in order_moved(moved):
                notes.append(((), f"{key} {render_note_value(key, value)}"))
            text = describe(out.get("description"), moved)
            if text:
                out["description"] = text
        result = out if changed else given
        found = tuple(notes) if notes else _NO_NOTES
        if memo is not None:
            memo[id(given)] = (given, result, found)  # `given` kept alive: its id stays its own
        return result, found

    def _value_keyword(
        self,
        schema: dict[str, JSON],
        key: str,
        value: JSON,
        out: dict[str, JSON],
        moved: list[tuple[str, JSON]],
    ) -> bool:
        """Put the keyword `key` of `schema` (not a subschema) into `out`, or into `moved` when it moves
        into the description; True when it did not go to `out` as it was."""
        if key == "format":
            if (
                isinstance(value, str)
                and value in self.rules.formats
                and (types_of(schema) is None or "string" in (types_of(schema) or []))
            ):
                out[key] = value
                return False
            moved.append((key, value))
            return True
        if key == "default" and self.rules.move_default:
            moved.append((key, value))
            return True
        if key == "example":
            if "examples" not in schema:
                out["examples"] = [value]
            return True
        out[key] = value
        return False

    def _closes(self, out: dict[str, JSON], ptr: str | None) -> bool:
        """Whether the node `out` (at `ptr`) gets ``additionalProperties: false``: objects are closed,
        it declares properties and says nothing of extras, and it is no `allOf` member."""
        return (
            self.rules.close_objects
            and isinstance(out.get("properties"), dict)
            and ptr not in self.keep_open
            and not any(
                k in out
                for k in (
                    "additionalProperties",
                    "patternProperties",
                    "unevaluatedProperties",
                    "allOf",
                    "anyOf",
                    "oneOf",
                    "$ref",
                )
            )
        )


_ABSENT = object()


def _same_dict(old: dict[str, JSON], new: dict[str, JSON]) -> dict[str, JSON]:
    """`old` when every value of `new` is the very object `old` holds under that key, else `new`."""
    return old if all(new[k] is v for k, v in old.items()) else new


def _same_list(old: list[JSON], new: list[JSON]) -> list[JSON]:
    """`old` when `new` holds the very same objects, else `new`."""
    return old if all(a is b for a, b in zip(old, new, strict=True)) else new


def _allof_members(canonical: JSON) -> set[str]:
    """Pointers of `allOf` members and of the schemas their `$ref`s reach: closing those with
    ``additionalProperties: false`` would reject the members the other parts declare."""
    found: set[str] = set()
    todo: list[str] = []
    if not any(
        isinstance(node, dict) and isinstance(node.get("allOf"), list) for node in iter_nodes(canonical)
    ):
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
            target = ref_target_pointer(canonical, node["$ref"])
            if target is not None:
                todo.append(target)
    return found


def is_empty_params(schema: dict[str, JSON]) -> bool:
    """A root object that takes no arguments: no properties, closed or unspecified extras (case 24)."""
    if types_of(schema) != ["object"] or schema.get("properties"):
        return False
    if schema.get("additionalProperties", False) is not False:
        return False
    structural = (
        "patternProperties",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "propertyNames",
        "not",
        "if",
        "dependentSchemas",
        "unevaluatedProperties",
        "minProperties",
    )
    return not any(k in schema for k in structural)


def ref_warnings(schema: JSON, dialect: str) -> list[str]:
    return [
        f"unresolvable $ref {ref!r} (#{ptr}): {dialect} schema is not self-contained"
        for ptr, ref in unresolved_refs(schema)
    ]
