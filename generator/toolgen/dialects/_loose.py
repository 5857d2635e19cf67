"""The non-strict OpenAI view: what a tool whose intent asks for ``strict: false`` is sent as.

Input: a canonical input schema (JSON Schema 2020-12, root ``type: object``). Output: a
`DialectSchema` with ``strict`` False, no argument rewrites (the model sends natural values, which
the runtime validates against the canonical schema as they are) and a schema that keeps the rules
OpenAI applies to every function tool, strict or not (``docs/provider-rules.md`` A.1, A.2):

* the root is ``type: "object"`` with `properties` (A.1 "object without properties");
* every array has `items` (A.2 "Array keywords": "array schema missing items" is seen outside strict
  mode too);
* every schema in a value position (a property, `items`, a `prefixItems` entry, a schema-valued
  `additionalProperties`, a `$defs` entry, a branch of an untyped `anyOf`/`oneOf`/`allOf`) has a
  ``type`` or is a `$ref`/`anyOf`/`oneOf`/`allOf`/`enum`/`const` node: OpenAI answers an untyped
  one, such as ``items: {}``, with "schema must have a 'type' key". An untyped value is typed by
  what it declares (`properties` -> object, `items` -> array), else as `ANY_VALUE` (every JSON type
  but array, which would need `items` of its own); an unconstrained ``additionalProperties: {}`` is
  written ``true``;
* no OpenAPI ``nullable`` (a null type instead), ``oneOf`` as ``anyOf``, formats outside A.2's list
  and ``default`` moved into the description; every other keyword stays as in the spec.

`check_loose_nodes` is the conformance side of the same rules (`check_openai_catalog` runs it on
every tool sent with ``strict: false``).
"""

from __future__ import annotations

from collections.abc import Iterator

from ._base import JSON, DialectSchema
from ._check import Report
from ._light import Light, LightRules
from ._simplify import simplify_schema
from ._walk import DEFS_KEYS, is_array_schema, types_of

#: The type of a value the canonical schema leaves unconstrained (A.1: every schema needs a `type`).
ANY_VALUE_TYPES: tuple[str, ...] = ("string", "number", "boolean", "object", "null")
#: Keywords that make a schema acceptable without its own `type`.
_TYPED_BY: tuple[str, ...] = ("type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const")
_BRANCH_KEYS: tuple[str, ...] = ("anyOf", "oneOf", "allOf")


def loose_parameters(canonical: dict[str, JSON], formats: frozenset[str]) -> DialectSchema:
    """The non-strict OpenAI `parameters` of `canonical` (module docstring). `formats`: the ``format``
    values kept (others move into the description). Pure: `canonical` is never mutated."""
    light = Light(LightRules("openai", formats, True, True, False), canonical)
    out = light.node(canonical, "", "")
    out = simplify_schema(out, multi_type=False)
    if not isinstance(out, dict):
        out = {"type": "object", "properties": {}}
    out = _typed(out, position=True)
    out["type"] = "object"
    if not isinstance(out.get("properties"), dict):
        out["properties"] = {}
    return DialectSchema(out, tuple(light.notes), False, ())


def _any_value(node: dict[str, JSON]) -> dict[str, JSON]:
    return {**node, "type": list(ANY_VALUE_TYPES)}


def _typed(node: JSON, *, position: bool) -> JSON:
    """`node` (a Light view, rebuilt here) with a `type` on every value-position schema. `position`:
    whether `node` itself stands in a value position."""
    if not isinstance(node, dict):
        return _any_value({}) if position and node is True else node
    out: dict[str, JSON] = {}
    untyped = not any(k in node for k in ("type", "$ref"))
    for key, value in node.items():
        if key in ("properties", "patternProperties", *DEFS_KEYS) and isinstance(value, dict):
            out[key] = {name: _typed(sub, position=True) for name, sub in value.items()}
        elif key in ("items", "prefixItems") and isinstance(value, list):
            out[key] = [_typed(sub, position=True) for sub in value]
        elif key == "items":
            out[key] = _typed(value, position=True)
        elif key == "additionalProperties":
            out[key] = True if value == {} else _typed(value, position=isinstance(value, dict))
        elif key in _BRANCH_KEYS and isinstance(value, list):
            out[key] = [_typed(sub, position=untyped) for sub in value]
        elif key in (
            "not",
            "if",
            "then",
            "else",
            "contains",
            "propertyNames",
            "unevaluatedItems",
            "unevaluatedProperties",
            "dependentSchemas",
        ):
            out[key] = value if key == "dependentSchemas" else _typed(value, position=False)
        else:
            out[key] = value
    if position and not any(k in out for k in _TYPED_BY):
        if "properties" in out or "additionalProperties" in out or "patternProperties" in out:
            out["type"] = "object"
        elif "items" in out or "prefixItems" in out:
            out["type"] = "array"
        else:
            out = _any_value(out)
    if is_array_schema(out) and "items" not in out:
        out["items"] = _any_value({})
    return out


def _value_positions(
    node: JSON, pointer: str = "", *, position: bool = True
) -> Iterator[tuple[str, JSON, bool]]:
    """Every schema of `node` with its JSON pointer and whether it stands in a value position."""
    yield pointer, node, position
    if not isinstance(node, dict):
        return
    untyped = not any(k in node for k in ("type", "$ref"))
    for key, value in node.items():
        token = key.replace("~", "~0").replace("/", "~1")
        if key in ("properties", "patternProperties", *DEFS_KEYS) and isinstance(value, dict):
            for name, sub in value.items():
                yield from _value_positions(
                    sub, f"{pointer}/{token}/{str(name).replace('~', '~0').replace('/', '~1')}"
                )
        elif key in ("items", "prefixItems") and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from _value_positions(sub, f"{pointer}/{token}/{i}")
        elif key == "items":
            yield from _value_positions(value, f"{pointer}/{token}")
        elif key == "additionalProperties":
            yield from _value_positions(value, f"{pointer}/{token}", position=isinstance(value, dict))
        elif key in _BRANCH_KEYS and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from _value_positions(sub, f"{pointer}/{token}/{i}", position=untyped)


def check_loose_nodes(report: Report, tool: str, base: str, schema: JSON) -> None:
    """A.1 / A.2 rules OpenAI applies to non-strict tools too: every value-position schema typed
    (``A.1-type``: "schema must have a 'type' key"), a `properties` object on the root
    (``A.1-object-properties``). Arrays without `items`, unresolved `$ref`s and `nullable` are
    checked for every tool by `check_openai_catalog`."""
    if isinstance(schema, dict) and not isinstance(schema.get("properties"), dict):
        report.add(tool, base, "A.1-object-properties", "parameters object without properties")
    for ptr, node, position in _value_positions(schema):
        if not position:
            continue
        if not isinstance(node, dict) or not any(k in node for k in _TYPED_BY):
            report.add(
                tool, base + ptr, "A.1-type", "schema must have a 'type' key (also outside strict mode)"
            )
        elif "type" in node and not types_of(node):
            report.add(tool, base + ptr, "A.1-type", f"unknown type {node.get('type')!r}")
