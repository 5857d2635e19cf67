"""Helpers on canonical schemas (what `lower` and the review tools do with a converted schema).

Input: a canonical schema (root ``$defs`` for recursive parts). Output: `object_view` (the properties
and `required` of an object root, looking through nullability and a root ``$ref``), `project_schema`
(only the dotted paths an intent's ``output.fields`` keeps) and `limit_depth` (a schema cut below a
number of data levels, loosened so it still accepts everything the original did, optionally within
a node budget).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, overload

from .formats import normalise_type
from .tree import JSONSchema, as_list, copy_dict, copy_tree, local_def, schema_children, schema_nodes

#: keywords whose sub-schemas sit one data level deeper (for limit_depth)
_DEEPER_ONE = (
    "additionalProperties",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "items",
)
_DEEPER_MAP = ("properties", "patternProperties")


def _is_object_schema(schema: JSONSchema) -> bool:
    types = schema.get("type")
    if types is None:
        return "properties" in schema
    type_list = as_list(types)
    return "object" in type_list and all(t in ("object", "null") for t in type_list)


def object_view(schema: JSONSchema) -> tuple[dict[str, Any], list[str]] | None:
    """``(properties, required)`` of a canonical schema whose root is an object (possibly nullable).

    The properties dict is the schema's own (not a copy); `required` is a new list. A nullable
    object written as ``anyOf: [<object>, {"type": "null"}]`` and a root ``$ref`` into the
    schema's ``$defs`` are looked through. Returns None when the root is not an object.
    """
    if not isinstance(schema, dict):
        return None
    node: JSONSchema = schema
    for _ in range(4):
        target = local_def(node, schema)
        if target is None:
            break
        node = target
    if _is_object_schema(node):
        props = node.get("properties", {})
        return (props if isinstance(props, dict) else {}), list(node.get("required", []))
    branches = node.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        other = branches[0] if branches[1] == {"type": "null"} else branches[1]
        if isinstance(other, dict):
            inner = local_def(other, schema) or other
            if _is_object_schema(inner):
                props = inner.get("properties", {})
                return (props if isinstance(props, dict) else {}), list(inner.get("required", []))
    return None


def _collect_def_refs(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            out.add(ref[len("#/$defs/") :])
        for child in schema_children(node):
            _collect_def_refs(child, out)


def _with_used_defs(body: JSONSchema, defs: Mapping[str, Any]) -> JSONSchema:
    """`body` (without $defs) plus copies of the $defs entries it still references, transitively."""
    body.pop("$defs", None)
    if not defs:
        return body
    used: set[str] = set()
    _collect_def_refs(body, used)
    todo = sorted(used)
    while todo:
        name = todo.pop()
        more: set[str] = set()
        _collect_def_refs(defs.get(name), more)
        for extra in sorted(more - used):
            used.add(extra)
            todo.append(extra)
    kept = {name: copy_tree(defs[name]) for name in sorted(used) if name in defs}
    if kept:
        body["$defs"] = kept
    return body


class _Field:
    """One step of the projection tree: `whole` keeps the property whole; `children` are still
    checked to exist even then (``["id", "id.x"]`` must fail on ``id.x``)."""

    __slots__ = ("children", "path", "whole")

    def __init__(self, path: str) -> None:
        self.children: dict[str, _Field] = {}
        self.path = path
        self.whole = False


def _field_tree(fields: Sequence[str]) -> dict[str, _Field]:
    root: dict[str, _Field] = {}
    for path in fields:
        parts = path.split(".")
        if not path or any(p == "" for p in parts):
            raise KeyError(path)
        level = root
        for i, part in enumerate(parts):
            entry = level.get(part)
            if entry is None:
                entry = level[part] = _Field(path)
            if i == len(parts) - 1:
                entry.whole = True
            level = entry.children
    return root


class _Cut:
    """How a kept field is kept: whole (`levels` None), or cut below `levels` data levels of the
    projected root (as `limit_depth` cuts), counting what it builds against `count`'s cap."""

    __slots__ = ("count", "levels")

    def __init__(self, levels: int | None, count: _NodeCount | None) -> None:
        self.levels = levels
        self.count = count


def _keep(schema: Any, entry: _Field, root: JSONSchema, depth: int, level: int, cut: _Cut) -> Any:
    if not entry.whole:
        return _project(schema, entry.children, root, depth + 1, level, cut)
    if entry.children:
        _project(schema, entry.children, root, depth + 1, level, cut)  # only to check the deeper paths exist
    if cut.levels is None:
        return copy_tree(schema)
    return _limit(schema, level, cut.levels, root, frozenset(), cut.count)


_OPEN_OBJECT_KEYS = (
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "minProperties",
    "maxProperties",
    "unevaluatedProperties",
)


def _project(
    node: Any, tree: dict[str, _Field], root: JSONSchema, depth: int, level: int, cut: _Cut
) -> JSONSchema:
    if not isinstance(node, dict) or depth > 256:
        raise KeyError(next(iter(tree.values())).path)
    target = local_def(node, root)
    if target is not None:
        merged = dict(target)
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        return _project(merged, tree, root, depth + 1, level, cut)
    types = as_list(node.get("type")) if "type" in node else []
    if "properties" in node or "object" in types:
        raw_props = node.get("properties")
        props: dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
        extra = node.get("additionalProperties")
        kept: dict[str, Any] = {}
        for name, schema in props.items():
            entry = tree.get(name)
            if entry is not None:
                kept[name] = _keep(schema, entry, root, depth, level + 1, cut)
        for name, entry in tree.items():
            if name in kept:
                continue
            if isinstance(extra, dict):  # a map-like object: the key is any additional key
                kept[name] = _keep(extra, entry, root, depth, level + 1, cut)
            else:
                raise KeyError(entry.path)
        out = {
            k: copy_tree(v)
            for k, v in node.items()
            if k not in ("properties", "required") and k not in _OPEN_OBJECT_KEYS
        }
        out["properties"] = kept
        required = [r for r in node.get("required", []) if r in kept]
        if required:
            out["required"] = required
        return out
    if "items" in node and ("array" in types or not types):
        out = {k: copy_tree(v) for k, v in node.items() if k != "items"}
        out["items"] = _project(node["items"], tree, root, depth + 1, level + 1, cut)
        return out
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list):
            new_branches: list[Any] = []
            matched = False
            for branch in branches:
                if isinstance(branch, dict) and _is_container(branch, root):
                    try:
                        new_branches.append(_project(branch, tree, root, depth + 1, level, cut))
                        matched = True
                    except KeyError:
                        new_branches.append(_permissive(branch, root))
                else:
                    new_branches.append(copy_tree(branch))
            if matched:
                out = {k: copy_tree(v) for k, v in node.items() if k != key}
                out[key] = new_branches
                return out
    raise KeyError(next(iter(tree.values())).path)


@overload
def project_schema(schema: JSONSchema, fields: Sequence[str]) -> JSONSchema: ...
@overload
def project_schema(
    schema: JSONSchema, fields: Sequence[str], *, depth: int, max_nodes: int | None = None
) -> JSONSchema | None: ...


def project_schema(
    schema: JSONSchema, fields: Sequence[str], *, depth: int | None = None, max_nodes: int | None = None
) -> JSONSchema | None:
    """Keep only the dotted paths in `fields` of a canonical schema; returns a new schema.

    With `depth`, a kept property is cut below `depth` data levels of the root while it is copied
    (as `limit_depth` cuts it), so a property that expands to millions of nodes is never expanded;
    with `max_nodes` too, returns None as soon as the kept properties are known to build more than
    that many schema nodes.

    ``"user.login"`` keeps ``user`` with only ``login``; a path through an array applies to its
    items; through ``anyOf``/``oneOf`` it applies to every object branch that has it (object
    branches without it become type-only). A path ending at a property keeps that property whole.
    Projected objects drop keywords about other keys (``additionalProperties``,
    ``patternProperties``...). ``$defs`` still referenced are kept, the rest dropped.
    Raises ``KeyError(path)`` for a path that names no property.
    """
    if not fields:
        return copy_dict(schema)
    tree = _field_tree(fields)
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    body = {k: v for k, v in schema.items() if k != "$defs"}
    count = _NodeCount(max_nodes) if max_nodes is not None else None
    try:
        projected = _project(body, tree, schema, 0, 0, _Cut(depth, count))
    except _OverBudget:
        return None
    return _with_used_defs(projected, defs or {})


def _is_container(node: Any, root: JSONSchema, seen: frozenset[str] = frozenset()) -> bool:
    if not isinstance(node, dict):
        return False
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        target = local_def(node, root)
        if target is not None and _is_container(target, root, seen | {ref}):
            return True
    if "type" in node:
        return any(t in ("object", "array") for t in as_list(node["type"]))
    if any(
        k in node for k in ("properties", "items", "additionalProperties", "prefixItems", "patternProperties")
    ):
        return True
    for key in ("anyOf", "oneOf", "allOf"):
        branches = node.get(key)
        if isinstance(branches, list) and any(_is_container(b, root, seen) for b in branches):
            return True
    return False


def _permissive(node: Any, root: JSONSchema, seen: frozenset[str] = frozenset()) -> JSONSchema:
    """A schema keeping only `type` (nullability included) that accepts everything `node` does.

    Each distinct sub-schema is looked at once (a converted schema shares its parts: a union of
    unions of the same schemas is a small graph, not millions of branches); returns a new tree."""
    return copy_dict(_permissive_in(node, root, seen, {}))


def _permissive_in(
    node: Any, root: JSONSchema, seen: frozenset[str], memo: dict[tuple[int, frozenset[str]], JSONSchema]
) -> JSONSchema:
    if not isinstance(node, dict):
        return {}
    key = (id(node), seen)
    hit = memo.get(key)
    if hit is not None:
        return hit
    out = _permissive_node(node, root, seen, memo)
    memo[key] = out
    return out


def _permissive_node(
    node: dict[str, Any],
    root: JSONSchema,
    seen: frozenset[str],
    memo: dict[tuple[int, frozenset[str]], JSONSchema],
) -> JSONSchema:
    if "type" in node:
        out: JSONSchema = {"type": copy_tree(node["type"])}
        if "array" in as_list(node["type"]):
            out["items"] = {}  # every array keeps `items` (provider-rules.md E.4)
        return out
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen and not any(k in node for k in ("anyOf", "oneOf")):
        target = local_def(node, root)
        return _permissive_in(target, root, seen | {ref}, memo) if target is not None else {}
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            types: list[str] = []
            for branch in branches:
                sub = _permissive_in(branch, root, seen, memo)
                if "type" not in sub:
                    return {}
                types.extend(as_list(sub["type"]))
            merged: JSONSchema = {"type": normalise_type(types)}
            if "array" in types:
                merged["items"] = {}
            return merged
    return {}


class _OverBudget(Exception):
    """`limit_depth(..., max_nodes=n)`: the result would have more than n schema nodes."""


class _NodeCount:
    """Schema nodes `_limit` has produced so far: every dict it returns at a schema position is one
    distinct node of the result (a `_permissive` array two: it carries ``items: {}``). That is
    `schema_nodes(result)` exactly, unless a schema was copied whole (`not`, `if`, `contentSchema`)
    or `$defs` are kept (`inexact`); then it is a lower bound."""

    __slots__ = ("cap", "inexact", "n")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.n = 0
        self.inexact = False

    def add(self, n: int = 1) -> None:
        self.n += n
        if self.n > self.cap:
            raise _OverBudget


def _limit(
    node: Any,
    level: int,
    depth: int,
    root: JSONSchema,
    active: frozenset[tuple[str, int]],
    count: _NodeCount | None = None,
) -> Any:
    if not isinstance(node, dict):
        return node
    if level > depth and _is_container(node, root):
        loose = _permissive(node, root)
        if count is not None:
            count.add(2 if isinstance(loose.get("items"), dict) else 1)
        return loose
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = local_def(node, root)
        if target is not None:
            if (ref, level) in active:  # re-entered without going deeper: stop with "any"
                if count is not None:
                    count.add()
                return {}
            merged = dict(target)
            merged.update({k: v for k, v in node.items() if k != "$ref"})
            return _limit(merged, level, depth, root, active | {(ref, level)}, count)
    if count is not None:
        count.add()
    return {key: _limit_keyword(key, value, level, depth, root, active, count) for key, value in node.items()}


def _limit_keyword(
    key: str,
    value: Any,
    level: int,
    depth: int,
    root: JSONSchema,
    active: frozenset[tuple[str, int]],
    count: _NodeCount | None,
) -> Any:
    """One keyword of a node `_limit` keeps: its subschemas limited (one level deeper under
    properties and items, the same level under applicators), ``not``/``if`` and other keywords
    copied (``not``, ``if``, ``contentSchema`` and ``$defs`` make the count inexact)."""
    if key in ("not", "if"):  # contravariant: loosening them would reject more
        if count is not None:
            count.inexact = True
        return copy_tree(value)
    if key in _DEEPER_MAP and isinstance(value, dict):
        return {k: _limit(v, level + 1, depth, root, active, count) for k, v in value.items()}
    if key in _DEEPER_ONE or key == "additionalItems":
        if isinstance(value, list):
            return [_limit(v, level + 1, depth, root, active, count) for v in value]
        return _limit(value, level + 1, depth, root, active, count)
    if key == "prefixItems" and isinstance(value, list):
        return [_limit(v, level + 1, depth, root, active, count) for v in value]
    if key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
        return [_limit(v, level, depth, root, active, count) for v in value]
    if key in ("then", "else"):
        return _limit(value, level, depth, root, active, count)
    if key == "dependentSchemas" and isinstance(value, dict):
        return {k: _limit(v, level, depth, root, active, count) for k, v in value.items()}
    if count is not None and key in ("contentSchema", "$defs"):
        count.inexact = True
    return copy_tree(value)


@overload
def limit_depth(schema: JSONSchema, depth: int) -> JSONSchema: ...
@overload
def limit_depth(schema: JSONSchema, depth: int, *, max_nodes: int) -> JSONSchema | None: ...


def limit_depth(schema: JSONSchema, depth: int, *, max_nodes: int | None = None) -> JSONSchema | None:
    """Cut a canonical schema below `depth` data levels; returns a new schema.

    The root is level 0; each step through ``properties``/``items``/``additionalProperties``
    (and similar) goes one level down; ``anyOf``/``oneOf``/``allOf`` branches stay on their
    parent's level. An object or array sub-schema below level `depth` becomes ``{"type": ...}``
    (keeping ``null`` in the type when it was nullable), or ``{}`` when it has no type, so the
    result accepts every instance the original accepted. ``$defs`` are inlined while walking (so
    recursion is cut at `depth`); those still referenced (from ``not``/``if``) are kept.

    With `max_nodes`, returns None as soon as the result is known to exceed that many schema nodes
    (`schema_nodes`), without building the rest of it; a result is returned only when it fits.
    """
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    body = {k: v for k, v in schema.items() if k != "$defs"}
    count = _NodeCount(max_nodes) if max_nodes is not None else None
    try:
        limited = _limit(body, 0, depth, schema, frozenset(), count)
    except _OverBudget:
        return None
    result = _with_used_defs(limited, defs or {})
    if (
        max_nodes is not None
        and count is not None
        and (count.inexact or "$defs" in result)
        and schema_nodes(result) > max_nodes
    ):
        return None
    return result
