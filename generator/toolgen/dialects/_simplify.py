"""Acceptance-preserving simplification of a dialect view: fewer tokens, the same set of valid values.

Input: a schema as a view transform produced it (`Light` for MCP and Anthropic). Output: a schema
that accepts exactly the same JSON values (copy on write: an unchanged subtree is the input's own
object, a changed node a new container; leaves shared), by these rewrites:

* ``oneOf`` whose branches each state a `type` and no two share a JSON type (``integer`` counts as
  a ``number``) -> ``anyOf`` (at most one branch can match, so "exactly one" = "at least one");
* nested ``anyOf`` flattened: a branch that is nothing but an ``anyOf`` is spliced into its parent;
* an ``anyOf`` of bare types -> one type array (``anyOf[anyOf[string, integer], null]`` ->
  ``type: [string, integer, null]``), and an ``anyOf`` of one constrained branch plus bare types
  the branch's keywords do not apply to -> that branch with the types added (an ``enum`` gains
  ``null`` when the added type is null);
* a property description that only repeats the property's name (case, ``_``, ``-`` and spaces
  ignored, a trailing period too) is dropped (annotations never change acceptance).

The structural rewrites move subschemas, so they are skipped for a schema whose `$ref`s point
anywhere but a whole ``$defs``/``definitions`` entry (such a pointer could name a moved node).
`multi_type`: whether the dialect takes type arrays with more than one non-null type (MCP and
Anthropic do; OpenAI strict documents only ``[T, "null"]``).
"""

from __future__ import annotations

import re
from typing import Any

from ._memo import memo_table
from ._walk import SCHEMA_KEYS, SCHEMA_LIST_KEYS, SCHEMA_MAP_KEYS, child_nodes, iter_nodes

JSON = Any

_ANNOTATIONS = frozenset(
    {"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"}
)
_FAMILY_KEYS: dict[str, frozenset[str]] = {
    "string": frozenset(
        {"minLength", "maxLength", "pattern", "format", "contentMediaType", "contentEncoding"}
    ),
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
    "array": frozenset(
        {
            "items",
            "prefixItems",
            "minItems",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
            "unevaluatedItems",
        }
    ),
    "object": frozenset(
        {
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "minProperties",
            "maxProperties",
            "propertyNames",
            "dependentRequired",
            "dependentSchemas",
            "unevaluatedProperties",
        }
    ),
}
_KEY_FAMILY = {key: family for family, keys in _FAMILY_KEYS.items() for key in keys}
_LOCAL_DEF_REF = re.compile(r"^#/(\$defs|definitions)/[^/]+$")
_NORMAL = re.compile(r"[\s_\-]+")


def simplify_schema(schema: JSON, *, multi_type: bool = True, structural: bool = True) -> JSON:
    """`schema` rewritten as the module docstring says; accepts exactly the values `schema` accepts.
    `structural=False`: only drop the descriptions (for a dialect whose unions are its own, Gemini's)."""
    structural = structural and _def_refs_only(schema, memo_table("def_refs_only"))
    return _Simplifier(structural, multi_type).node(schema)


def _def_refs_only(schema: JSON, memo: dict[int, tuple[Any, ...]] | None) -> bool:
    """Whether every `$ref` in `schema` names a whole ``$defs``/``definitions`` entry; per subtree
    object once in a `toolgen.dialects._memo.shared_views` scope (`memo`)."""
    if memo is None:
        return all(
            isinstance(node.get("$ref"), str) and bool(_LOCAL_DEF_REF.match(node["$ref"]))
            for node in iter_nodes(schema)
            if isinstance(node, dict) and "$ref" in node
        )
    if not isinstance(schema, dict):
        return True
    hit = memo.get(id(schema))
    if hit is not None:
        return bool(hit[1])
    ref = schema.get("$ref", _NO_REF)
    ok = (ref is _NO_REF or (isinstance(ref, str) and bool(_LOCAL_DEF_REF.match(ref)))) and all(
        _def_refs_only(child, memo) for child in child_nodes(schema)
    )
    memo[id(schema)] = (schema, ok)
    return ok


_NO_REF = object()


def _family(t: str) -> str:
    return "number" if t == "integer" else t


def _bare_types(node: JSON) -> list[str] | None:
    """The types of a node that says nothing but ``type``; None for any other node."""
    if not isinstance(node, dict) or set(node) != {"type"}:
        return None
    t = node["type"]
    if isinstance(t, str):
        return [t]
    if isinstance(t, list) and t and all(isinstance(x, str) for x in t):
        return list(t)
    return None


def _node_types(node: dict[str, JSON]) -> list[str] | None:
    t = node.get("type")
    if isinstance(t, str):
        return [t]
    if isinstance(t, list) and t and all(isinstance(x, str) for x in t):
        return list(t)
    return None


def _norm(text: str) -> str:
    return _NORMAL.sub(" ", text.strip().rstrip(".").lower()).strip()


def repeats_name(name: str, description: JSON) -> bool:
    """Whether a property description only repeats the property's name (see the module docstring)."""
    return isinstance(description, str) and bool(_norm(name)) and _norm(description) == _norm(name)


class _Simplifier:
    def __init__(self, structural: bool, multi_type: bool) -> None:
        self.structural = structural
        self.multi_type = multi_type
        self.memo = memo_table(("simplify", structural, multi_type))

    def node(self, schema: JSON) -> JSON:
        """`schema` simplified. Copy on write: a node no rewrite touches (nor any node below it) comes
        back as the very same object, a changed one as a new container; neither is mutated. Once per
        subtree object in a `toolgen.dialects._memo.shared_views` scope."""
        if not isinstance(schema, dict):
            return schema
        memo = self.memo
        if memo is None:
            return self._node(schema)
        hit = memo.get(id(schema))
        if hit is None:
            hit = memo[id(schema)] = (schema, self._node(schema))  # `schema` kept alive: its id stays its own
        return hit[1]

    def _node(self, schema: dict[str, JSON]) -> JSON:
        out: dict[str, JSON] = {}
        changed = False
        for key, value in schema.items():
            if key in SCHEMA_MAP_KEYS and isinstance(value, dict):
                children = {name: self.node(sub) for name, sub in value.items()}
                if key == "properties":
                    children = {
                        name: (
                            {k: v for k, v in sub.items() if k != "description"}
                            if isinstance(sub, dict) and repeats_name(str(name), sub.get("description"))
                            else sub
                        )
                        for name, sub in children.items()
                    }
                if all(children[name] is sub for name, sub in value.items()):
                    children = value
                out[key] = children
            elif key in SCHEMA_LIST_KEYS and isinstance(value, list):
                out[key] = self.items(value)
            elif key in SCHEMA_KEYS and isinstance(value, (dict, list)):
                out[key] = self.items(value) if isinstance(value, list) else self.node(value)
            else:
                out[key] = value
            changed = changed or out[key] is not value
        result = self.collapse(out) if self.structural else out
        return schema if result is out and not changed else result

    def items(self, value: list[JSON]) -> list[JSON]:
        """Each subschema of `value` simplified; `value` itself when none changed."""
        new = [self.node(sub) for sub in value]
        return value if all(a is b for a, b in zip(value, new, strict=True)) else new

    def collapse(self, node: dict[str, JSON]) -> dict[str, JSON]:
        """`node` (whose subschemas are simplified already) with the structural rewrites applied at
        its own level; `node` itself when none applies."""
        if isinstance(node.get("oneOf"), list) and "anyOf" not in node and _disjoint_typed(node["oneOf"]):
            node = {("anyOf" if k == "oneOf" else k): v for k, v in node.items()}
        branches = node.get("anyOf")
        if not isinstance(branches, list) or not branches:
            return node
        flat: list[JSON] = []
        spliced = False
        for branch in branches:
            if (
                isinstance(branch, dict)
                and set(branch) == {"anyOf"}
                and isinstance(branch["anyOf"], list)
                and branch["anyOf"]
            ):
                flat.extend(branch["anyOf"])
                spliced = True
            else:
                flat.append(branch)
        if spliced:
            node = {**node, "anyOf": flat}
        if "type" in node or "enum" in node or "const" in node:
            return node
        bare = [_bare_types(b) for b in flat]
        if all(t is not None for t in bare):
            types = _union([t for t in bare if t is not None])
            if self.type_array_ok(types):
                rest = {k: v for k, v in node.items() if k != "anyOf"}
                return {**rest, "type": types[0] if len(types) == 1 else types}
            return node
        others = [i for i, t in enumerate(bare) if t is None]
        if len(others) != 1:
            return node
        merged = self.merge_one(node, flat[others[0]], _union([t for t in bare if t is not None]))
        return merged if merged is not None else node

    def merge_one(self, node: dict[str, JSON], branch: JSON, added: list[str]) -> dict[str, JSON] | None:
        """``anyOf[branch, <bare types added>]`` as one node, when `branch`'s keywords do not apply to
        the added types; None when that does not hold."""
        if not isinstance(branch, dict):
            return None
        own = _node_types(branch)
        if own is None:
            return None
        added_families = {_family(t) for t in added}
        if added_families & {_family(t) for t in own}:
            return None
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        if set(rest) & set(branch):
            return None
        out: dict[str, JSON] = {**rest}
        for key, value in branch.items():
            if key == "type" or key in _ANNOTATIONS:
                out[key] = value
            elif key == "enum" and isinstance(value, list) and added == ["null"]:
                out[key] = value if None in value else [*value, None]
            elif key in _KEY_FAMILY and _KEY_FAMILY[key] not in added_families:
                out[key] = value
            else:
                return None
        types = _union([own, added])
        if not self.type_array_ok(types):
            return None
        out["type"] = types[0] if len(types) == 1 else types
        return out

    def type_array_ok(self, types: list[str]) -> bool:
        return self.multi_type or len([t for t in types if t != "null"]) <= 1


def _union(groups: list[list[str]]) -> list[str]:
    seen: list[str] = []
    for group in groups:
        for t in group:
            if t not in seen:
                seen.append(t)
    return seen


def _disjoint_typed(branches: list[JSON]) -> bool:
    """Branches that each state a `type`, no two sharing a JSON type (integer within number)."""
    seen: set[str] = set()
    for branch in branches:
        types = _node_types(branch) if isinstance(branch, dict) else None
        if types is None:
            return False
        families = {_family(t) for t in types}
        if families & seen:
            return False
        seen |= families
    return bool(branches)
