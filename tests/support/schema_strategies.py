"""Hypothesis strategies of random canonical tool schemas, for the properties of the dialect
transforms: `obj()` draws an object schema (leaves of every kind: bounded strings, URIs, integers,
numbers, booleans, enums, nullable types, a string-or-array union; nested objects and arrays of
them to depth 3) with an instance valid for it, `obj_instance(schema)` another instance of an object
schema `obj` drew.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

_NAMES = st.sampled_from(["a", "b", "c", "id", "name", "type", "items", "x_y", "page-size"])


@st.composite
def leaf(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    kind = draw(
        st.sampled_from(["string", "uri", "integer", "number", "boolean", "enum", "nullable", "union"])
    )
    if kind == "string":
        n = draw(st.integers(1, 8))
        return {"type": "string", "maxLength": n, "default": "d"}, draw(st.text(max_size=n))
    if kind == "uri":
        return {"type": "string", "format": "uri"}, "https://a.test/x"
    if kind == "integer":
        lo = draw(st.integers(-5, 5))
        return {"type": "integer", "minimum": lo, "format": "int64"}, draw(st.integers(lo, lo + 10))
    if kind == "number":
        return {"type": "number", "format": "double"}, draw(st.floats(-1e6, 1e6))
    if kind == "boolean":
        return {"type": "boolean"}, draw(st.booleans())
    if kind == "enum":
        values = draw(st.lists(st.sampled_from(["p", "q", "r", "s"]), min_size=1, max_size=4, unique=True))
        return {"type": "string", "enum": values}, draw(st.sampled_from(values))
    if kind == "nullable":
        return {"type": ["string", "null"]}, draw(st.one_of(st.none(), st.text(max_size=3)))
    schema = {
        "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "integer"}}],
        "description": "one or many",
    }
    return schema, draw(st.one_of(st.text(max_size=3), st.lists(st.integers(), max_size=3)))


@st.composite
def obj(draw: st.DrawFn, depth: int = 0) -> tuple[dict[str, Any], Any]:
    names = draw(st.lists(_NAMES, max_size=4, unique=True))
    props: dict[str, Any] = {}
    instance: dict[str, Any] = {}
    required: list[str] = []
    for name in names:
        choice = draw(st.integers(0, 4)) if depth < 3 else 0
        if choice == 3:
            sub, value = draw(obj(depth + 1))
        elif choice == 4:
            item_schema, _ = draw(obj(depth + 1))
            values = [draw(obj_instance(item_schema)) for _ in range(draw(st.integers(0, 2)))]
            sub, value = {"type": "array", "items": item_schema, "maxItems": 5}, values
        else:
            sub, value = draw(leaf())
        props[name] = sub
        if draw(st.booleans()):
            required.append(name)
            instance[name] = value
        elif draw(st.booleans()):
            instance[name] = value
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema, instance


@st.composite
def obj_instance(draw: st.DrawFn, schema: dict[str, Any]) -> Any:
    """A minimal valid instance of an object schema made by `obj` (required members only)."""
    out: dict[str, Any] = {}
    for name in schema["required"]:
        sub = schema["properties"][name]
        if sub.get("type") == "object":
            out[name] = draw(obj_instance(sub))
        elif sub.get("type") == "array":
            out[name] = []
        elif "enum" in sub:
            out[name] = sub["enum"][0]
        elif sub.get("type") == "string":
            out[name] = "https://a.test" if sub.get("format") == "uri" else ""
        elif sub.get("type") == ["string", "null"]:
            out[name] = None
        elif sub.get("type") in ("integer", "number"):
            out[name] = sub.get("minimum", 0)
        elif sub.get("type") == "boolean":
            out[name] = False
        else:
            out[name] = "s"
    return out
