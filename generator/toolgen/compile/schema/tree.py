"""Canonical schemas as JSON trees: where the subschemas are, how big a tree is, copying it.

Input: canonical JSON Schema 2020-12 dicts (as `SchemaConverter` builds them; sub-objects may be
shared while a result is assembled). Output: their direct subschemas (`schema_children`), schema node
counts and depth (`schema_nodes`, `measure_node`), deep copies that share nothing (`copy_tree`), and
the `Built` record the converter's keyword families pass between them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal, NamedTuple

Context = Literal["input", "output"]
JSONSchema = dict[str, Any]

# --- keyword tables ------------------------------------------------------------------------------


#: keywords whose value is one schema (booleans allowed)
ONE_SCHEMA = (
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
#: keywords whose value maps names to schemas
SCHEMA_MAP = ("properties", "patternProperties", "dependentSchemas")
#: keywords whose value is a list of schemas (allOf is merged, never emitted by the converter)
SCHEMA_LIST = ("anyOf", "oneOf", "prefixItems")


class Built(NamedTuple):
    """A converted schema while results are assembled (sub-objects may be shared; never mutated).

    `refs`: pointers of recursive schemas referenced as ``#/$defs/...`` anywhere inside;
    `origin`: top-level property name -> pointer of the schema it came from (for conflict messages);
    `dropped`: top-level property names removed by readOnly/writeOnly filtering; `src`: pointer of
    the schema node this was built from.
    """

    schema: JSONSchema
    refs: frozenset[str]
    origin: Mapping[str, str]
    dropped: frozenset[str]
    src: str


EMPTY: frozenset[str] = frozenset()


def copy_tree(value: Any) -> Any:
    """Deep copy of JSON values; shared sub-objects become separate copies."""
    if type(value) is dict:
        return copy_dict(value)
    if type(value) is list:
        return _copy_list(value)
    return value


def copy_dict(value: dict[str, Any]) -> dict[str, Any]:
    # dict.copy() plus replacing only the container values is the fastest pure-Python deep copy
    new = value.copy()
    for key, item in value.items():
        kind = type(item)
        if kind is dict:
            new[key] = copy_dict(item)
        elif kind is list:
            new[key] = _copy_list(item)
    return new


def _copy_list(value: list[Any]) -> list[Any]:
    return [copy_dict(v) if type(v) is dict else _copy_list(v) if type(v) is list else v for v in value]


def schema_children(node: JSONSchema) -> Iterator[Any]:
    """Direct sub-schemas of a canonical schema (including root ``$defs`` entries)."""
    for key, value in node.items():
        if key in SCHEMA_MAP or key == "$defs":
            if isinstance(value, dict):
                yield from value.values()
        elif key in SCHEMA_LIST or key == "allOf":
            if isinstance(value, list):
                yield from value
        elif key in ONE_SCHEMA or key in ("items", "additionalItems"):
            if isinstance(value, list):
                yield from value
            else:
                yield value


def measure_node(
    node: Any,
    memo: dict[int, tuple[int, int]],
    persistent: dict[int, tuple[int, int]] | None = None,
    fragments: set[int] | None = None,
) -> tuple[int, int]:
    """(schema nodes, depth) of a schema that may share sub-objects; linear in distinct objects."""
    if not isinstance(node, dict):
        return 0, 0
    key = id(node)
    hit = memo.get(key)
    if hit is None and persistent is not None:
        hit = persistent.get(key)
    if hit is not None:
        return hit
    count, depth = 1, 0
    for child in schema_children(node):
        c, d = measure_node(child, memo, persistent, fragments)
        count += c
        depth = max(depth, d)
    result = (count, depth + 1)
    memo[key] = result
    if persistent is not None and fragments is not None and key in fragments:
        persistent[key] = result
    return result


def json_size(value: Any, memo: dict[int, int]) -> int:
    """Compact-JSON bytes of `value` as if expanded (UTF-8; escapes not counted, so a lower bound),
    each shared dict or list counted once (`memo`: ``id -> bytes``, reusable across calls on trees
    that share objects): linear in the distinct objects, however large the expansion."""
    kind = type(value)
    if kind is str:
        return len(value.encode("utf-8")) + 2
    if kind is dict or kind is list:
        hit = memo.get(id(value))
        if hit is not None:
            return hit
        if kind is dict:
            size = (
                1
                + max(len(value), 1)
                + sum(len(str(k).encode("utf-8")) + 3 + json_size(v, memo) for k, v in value.items())
            )
        else:
            size = 1 + max(len(value), 1) + sum(json_size(v, memo) for v in value)
        memo[id(value)] = size
        return size
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    return len(repr(value))


def schema_nodes(schema: Any) -> int:
    """Number of schema nodes (dicts in schema positions, ``$defs`` entries included) in `schema`."""
    return measure_node(schema, {})[0]


def local_def(schema: JSONSchema, root: JSONSchema) -> JSONSchema | None:
    ref = schema.get("$ref")
    if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
        return None
    defs = root.get("$defs")
    if not isinstance(defs, dict):
        return None
    target = defs.get(ref[len("#/$defs/") :])
    return target if isinstance(target, dict) else None


def as_list(types: Any) -> list[Any]:
    return list(types) if isinstance(types, list) else [types]


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def value_key(value: Any) -> Any:
    """A hashable identity for a JSON value: 1 == 1.0, but True != 1 and "1" != 1."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and value.is_integer():
            return ("n", int(value))
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list):
        return ("l", tuple(value_key(v) for v in value))
    if isinstance(value, dict):
        return ("o", tuple(sorted((str(k), value_key(v)) for k, v in value.items())))
    return ("?", repr(value))


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return a is b
    return bool(value_key(a) == value_key(b))


def show(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    return repr(value) if not isinstance(value, str) else value


class Interner:
    """Hash-consing of JSON trees: equal subtrees become one shared object.

    ``interner(value)`` returns a tree equal to `value` (same keys in the same order, same scalar
    types and values: ``1``, ``1.0`` and ``True`` stay apart, so do ``0.0`` and ``-0.0``) in which
    every dict and list equal to one seen before, in any tree given to this interner, is that earlier
    object. A container whose children are already the shared ones is kept as it is; others are
    rebuilt. Scalars other than str, int, float, bool and None only match themselves.

    The trees it returns share objects, so they are read-only: nothing may mutate one in place (the
    IR's schemas, `toolgen.compile.lower`, and the dialect views built from them, which are copy on
    write). Lowering a large spec builds one output schema per tool from the same component schemas;
    shared, Stripe's 157,573 schema containers are 6,353 distinct ones. Memory: one key tuple per
    distinct container, until the interner is dropped. Time: linear in the containers of `value`.
    """

    def __init__(self) -> None:
        self._table: dict[tuple[Any, ...], Any] = {}

    def __call__(self, value: Any) -> Any:
        kind = type(value)
        if kind is dict:
            return self._dict(value)
        if kind is list:
            return self._list(value)
        return value

    def _child(self, value: Any) -> tuple[Any, Any]:
        """(the shared form of a child that is not a string, what stands for it in its parent's key):
        a container by its identity, a scalar by `_token`."""
        kind = type(value)
        if kind is dict:
            child = self._dict(value)
            return child, id(child)
        if kind is list:
            child = self._list(value)
            return child, id(child)
        return value, _token(value)

    def _dict(self, value: dict[str, Any]) -> Any:
        parts: list[Any] = [0]
        append = parts.append
        children: dict[str, Any] = {}
        same = True
        for k, v in value.items():
            child, token = (v, v) if type(v) is str else self._child(v)
            same = same and child is v
            children[k] = child
            append(k)
            append(token)
        key = tuple(parts)
        hit = self._table.get(key)
        if hit is None:
            hit = self._table[key] = value if same else children
        return hit

    def _list(self, value: list[Any]) -> Any:
        items: list[Any] = []
        parts: list[Any] = [1]
        same = True
        for v in value:
            child, token = (v, v) if type(v) is str else self._child(v)
            same = same and child is v
            items.append(child)
            parts.append(token)
        key = tuple(parts)
        hit = self._table.get(key)
        if hit is None:
            hit = self._table[key] = value if same else items
        return hit


def _token(value: Any) -> Any:
    """What stands for an interned child in its parent's key: a shared container by its identity
    (the interner's table keeps it alive), a string by itself, another scalar by its type and
    value (`repr` for floats, so that ``-0.0`` and ``0.0`` differ), anything else by its identity."""
    kind = type(value)
    if kind is str:
        return value
    if kind is dict or kind is list:
        return id(value)
    if kind is int or kind is bool or value is None:
        return (kind, value)
    if kind is float:
        return (kind, repr(value))
    return (object, id(value))
