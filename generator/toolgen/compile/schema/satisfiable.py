"""Input schemas no value can satisfy: found, made satisfiable where the spec says enough, reported.

Input: one converted (canonical) schema node of the input context, its own keywords only (its
children were checked when they were converted). Output: the node made satisfiable in place, and one
`Unsatisfiable` (the keyword at fault, what is wrong, what to do) per contradiction found.

A spec can state a schema that rejects every value: ``{"type": "string", "enum": [1, 2]}``, a
`required` member an ``additionalProperties: false`` object does not declare, ``minimum`` above
``maximum``. A model cannot write an argument such a schema accepts (in strict mode it is forced to
try), and the runtime refuses whatever it writes. Repairs keep what the spec states most precisely:
the values of an `enum`/`const` win over a `type` none of them has (the type becomes theirs, with
`items` of their elements' types when they are arrays; an array's enum of scalars becomes its items'
enum); enum
values of another type than the stated one are dropped while some fit; an undeclared required member
is declared with the empty schema (any value). Contradictory bounds have no repair and are reported
only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .formats import normalise_type
from .tree import JSONSchema, as_list

_BOUNDS = (
    ("minimum", "maximum"),
    ("minLength", "maxLength"),
    ("minItems", "maxItems"),
    ("minProperties", "maxProperties"),
    ("minContains", "maxContains"),
)


@dataclass(frozen=True)
class Unsatisfiable:
    """One contradiction: the keyword at fault (for the JSON pointer), a message and a remedy."""

    keyword: str
    message: str
    hint: str


def json_type_of(value: Any) -> str:
    """The JSON Schema type name of a JSON value (an integral number is ``integer``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _fits(value: Any, types: list[str]) -> bool:
    kind = json_type_of(value)
    return kind in types or (kind == "integer" and "number" in types)


def repair(node: JSONSchema) -> list[Unsatisfiable]:
    """Make `node` satisfiable where the spec says how (see the module docstring); the problems found."""
    found: list[Unsatisfiable] = []
    types = as_list(node["type"]) if isinstance(node.get("type"), (str, list)) else None
    if types is not None:
        for key in ("enum", "const"):
            if key not in node or (key == "enum" and not isinstance(node[key], list)):
                continue
            values = node[key] if key == "enum" else [node[key]]
            # null is the nullability's business (OpenAPI 3.0 `nullable` is applied after this node)
            fitting = [v for v in values if v is None or _fits(v, types)]
            if len(fitting) == len(values):
                continue
            items = node.get("items")
            if (
                key == "enum"
                and types == ["array"]
                and isinstance(items, dict)
                and "$ref" not in items
                and "enum" not in items
                and all(not isinstance(v, (list, dict)) for v in values)
            ):
                # an enum of scalars on an array: the values its items take
                del node["enum"]
                node["items"] = {**items, "enum": list(values)}
                found.append(
                    Unsatisfiable(
                        key,
                        f"an array's enum lists scalar values "
                        f"{', '.join(_show(v) for v in values[:6])}; they are taken as the "
                        "values of its items",
                        "move the `enum` into `items` in the spec",
                    )
                )
                continue
            shown = ", ".join(_show(v) for v in values[:6]) + (", …" if len(values) > 6 else "")
            if any(v is not None for v in fitting) and key == "enum":
                node["enum"] = fitting
                found.append(
                    Unsatisfiable(
                        key,
                        f"enum values {shown} include values that are not of type "
                        f"{'/'.join(types)}; those are left out",
                        "make every enum value of the schema's type, or widen `type`",
                    )
                )
                continue
            if not any(v is not None for v in values):
                continue
            node["type"] = normalise_type(sorted({json_type_of(v) for v in values}))
            if "array" in as_list(node["type"]) and not isinstance(node.get("items"), dict):
                # an enum of arrays: its items take the types of the values' elements (every dialect
                # needs an array's `items`)
                elements = {
                    json_type_of(e) for v in values if isinstance(v, list) for e in v if e is not None
                }
                node["items"] = {"type": normalise_type(sorted(elements))} if elements else {}
            found.append(
                Unsatisfiable(
                    "type",
                    f"{key} {shown} has no value of type {'/'.join(types)}; "
                    f"the tool takes the {key} values as written "
                    f"(type {'/'.join(as_list(node['type']))})",
                    f"fix the spec: write the {key} values as {'/'.join(types)} "
                    f"(e.g. {_show(str(values[0]))}) or set `type` to theirs",
                )
            )
    raw_props = node.get("properties")
    props: dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
    required = node.get("required")
    if (
        node.get("additionalProperties") is False
        and isinstance(required, list)
        and not node.get("patternProperties")
    ):
        missing = [r for r in required if r not in props]
        if missing:
            node["properties"] = {**props, **{name: {} for name in missing}}
            found.append(
                Unsatisfiable(
                    "required",
                    f"required member{'s' if len(missing) > 1 else ''} "
                    f"{', '.join(map(repr, missing))} not declared under "
                    "`additionalProperties: false`; declared here "
                    "with any value",
                    "declare the member under `properties` in the spec, or drop it from `required`",
                )
            )
    for low, high in _BOUNDS:
        a, b = node.get(low), node.get(high)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > b:
            found.append(
                Unsatisfiable(low, f"`{low}: {a}` is above `{high}: {b}`", f"fix the spec's `{low}`/`{high}`")
            )
    return found


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:40]
