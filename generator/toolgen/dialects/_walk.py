"""Schema walkers shared by the dialects: where the subschemas of a JSON Schema 2020-12 node are,
what type a node has, and where its local `$ref`s point.

Input: a schema (a dict, or a boolean schema) as the dialect transforms produce or receive it.
Output: its nodes with their JSON pointers (`iter_schemas`) or without (`iter_nodes`, cheaper),
the targets of local references (`resolve_local_ref`, `unresolved_refs`) and the references that lie
on a cycle (`recursive_ref_targets`). Nothing here knows a provider's rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..pointer import PointerError, escape_token, ref_to_pointer, resolve_pointer
from ._memo import memo_table

JSON = Any

# Where subschemas live in a 2020-12 schema (applicator vocabulary).
SCHEMA_MAP_KEYS: tuple[str, ...] = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)
SCHEMA_LIST_KEYS: tuple[str, ...] = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_KEYS: tuple[str, ...] = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
DEFS_KEYS: tuple[str, ...] = ("$defs", "definitions")
MISSING: Any = object()


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
        if key in SCHEMA_MAP_KEYS and isinstance(value, dict):
            if not into_defs and key in DEFS_KEYS:
                continue
            for name, sub in value.items():
                yield f"{pointer}/{escape_token(key)}/{escape_token(str(name))}", sub
        elif key in SCHEMA_LIST_KEYS and isinstance(value, list):
            for i, sub in enumerate(value):
                yield f"{pointer}/{key}/{i}", sub
        elif key in SCHEMA_KEYS:
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


_SCHEMA_MAP_KEY_SET = frozenset(SCHEMA_MAP_KEYS)
_SCHEMA_LIST_KEY_SET = frozenset(SCHEMA_LIST_KEYS)
_SCHEMA_KEY_SET = frozenset(SCHEMA_KEYS)
_DEFS_KEY_SET = frozenset(DEFS_KEYS)


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
    refs = _refs_in(schema)
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


def _refs_in(schema: JSON) -> frozenset[str | None]:
    """Every `$ref` value in `schema` (None for one that is not a string); per subtree object once
    in a `toolgen.dialects._memo.shared_views` scope."""
    memo = memo_table("refs")
    if memo is not None:
        try:
            return _refs_memo(schema, memo)
        except RecursionError:  # nested past the stack: the flat walk below
            pass
    return frozenset(
        node["$ref"] if isinstance(node["$ref"], str) else None
        for node in iter_nodes(schema)
        if isinstance(node, dict) and "$ref" in node
    )


_NO_REFS: frozenset[str | None] = frozenset()


def _refs_memo(node: JSON, memo: dict[int, tuple[Any, ...]]) -> frozenset[str | None]:
    if not isinstance(node, dict):
        return _NO_REFS
    hit = memo.get(id(node))
    if hit is not None:
        return hit[1]  # type: ignore[no-any-return]
    refs = _NO_REFS
    if "$ref" in node:
        ref = node["$ref"]
        refs = frozenset((ref if isinstance(ref, str) else None,))
    for child in child_nodes(node):
        sub = _refs_memo(child, memo)
        if sub:
            refs = refs | sub
    memo[id(node)] = (node, refs)  # `node` kept alive: its id stays its own
    return refs


def ref_target_pointer(root: JSON, ref: JSON) -> str | None:
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
            tp = ref_target_pointer(root, node["$ref"])
            if tp is not None and tp not in seen:
                seen.add(tp)
                targets.append(tp)
    edges: dict[str, list[str]] = {}
    for tp in targets:
        out: list[str] = []
        for node in iter_nodes(resolve_pointer(root, tp), into_defs=False):
            if isinstance(node, dict) and "$ref" in node:
                dest = ref_target_pointer(root, node["$ref"])
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
