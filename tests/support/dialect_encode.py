"""What a model would send in a dialect: canonical arguments reshaped by a view's rewrite records
(the inverse of `toolgen.runtime.call.dialect_args`), and canonical values drawn from a schema.

Used by the round-trip property tests: encode(canonical) → runtime decode must give back the same
value, and a call must send the same request.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from toolgen.runtime.call.dialect_args import ITEMS_STEP, MAP_VALUES_STEP, Rewrites, _Node, compile_rewrites


def encode(args: dict[str, Any], records: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> Any:
    rewrites = compile_rewrites(list(records))
    return _Encoder(rewrites).encode(args, rewrites.root)


class _Encoder:
    def __init__(self, rewrites: Rewrites) -> None:
        self.rewrites = rewrites

    def encode(self, value: Any, node: _Node, item: bool = False) -> Any:
        """`value` as the model sends it. A null property means "absent" and stays null; a null array
        item is a value, so a JSON-string item carries it as the text ``"null"``."""
        # children first (they are named by canonical members), then this node's own records
        for step, child in node.children.items():
            if step.startswith("|"):
                value = self.encode(value, child, item)
        if isinstance(value, dict):
            value = {
                k: (self.encode(v, node.children[_step(k)]) if _step(k) in node.children else v)
                for k, v in value.items()
            }
        elif isinstance(value, list) and ITEMS_STEP in node.children:
            value = [self.encode(v, node.children[ITEMS_STEP], True) for v in value]
        for record in reversed(node.records):
            kind = record["kind"]
            if kind == "ref":
                target = record.get("target", "#")
                tree = self.rewrites.root if target == "#" else self.rewrites.defs.get(target)
                if tree is not None and tree is not node:
                    value = self.encode(value, tree, item)
            elif kind == "rename" and isinstance(value, dict):
                back = {v: k for k, v in record["names"].items()}
                value = {back.get(k, k): v for k, v in value.items()}
            elif kind == "json_string" and (value is not None or item):
                expect = record.get("expect", "any")
                if record.get("keep_strings") and not isinstance(value, (dict, list)):
                    continue
                if (expect == "object" and not isinstance(value, dict)) or (
                    expect == "array" and not isinstance(value, list)
                ):
                    continue
                value = json.dumps(value)
            elif kind == "map_entries" and isinstance(value, dict):
                values_node = node.children.get(MAP_VALUES_STEP)
                value = [
                    {"key": k, "value": self.encode(v, values_node) if values_node else v}
                    for k, v in value.items()
                ]
            elif kind == "enum_strings":
                names = [k for k, v in record["values"].items() if v == value and type(v) is type(value)]
                if names:
                    value = names[0]
        return value


def _step(name: str) -> str:
    return "~" + name if name[:1] in ("[", "{", "|", "~") else name


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.text(max_size=8))
_ANY = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


def values(schema: Any, root: Any | None = None, depth: int = 0) -> st.SearchStrategy[Any]:  # noqa: PLR0911
    """Values valid under `schema` (the subset the round-trip schemas use: objects with properties or
    additionalProperties, arrays, enums, consts, anyOf, local $refs, primitive types, {})."""
    root = schema if root is None else root
    if schema is True or schema == {}:
        return _ANY
    if "$ref" in schema:
        target = root
        for token in schema["$ref"].lstrip("#/").split("/"):
            if token:
                target = target[token]
        return values(target, root, depth + 1)
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    if "anyOf" in schema:
        return st.one_of([values(b, root, depth + 1) for b in schema["anyOf"]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([values({**schema, "type": t}, root, depth) for t in kind])
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        return st.integers(-1000, 1000)
    if kind == "number":
        return st.floats(-1e6, 1e6, allow_nan=False).filter(lambda f: not f.is_integer())
    if kind == "string":
        return st.text(max_size=10)
    if kind == "array":
        if depth > 6:
            return st.just([])
        return st.lists(values(schema.get("items", {}), root, depth + 1), max_size=3)
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        fixed = {k: values(v, root, depth + 1) for k, v in props.items() if k in required}
        optional = {k: values(v, root, depth + 1) for k, v in props.items() if k not in required}
        base = st.fixed_dictionaries(fixed, optional=optional)
        extra = schema.get("additionalProperties", not props)
        if extra is False or depth > 6:
            return base
        extras = st.dictionaries(
            st.text(max_size=6).filter(lambda k: k not in props), values(extra, root, depth + 1), max_size=3
        )
        return st.tuples(base, extras).map(lambda pair: {**pair[1], **pair[0]})
    return _ANY
