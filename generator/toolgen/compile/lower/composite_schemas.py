"""Stage `lower`, composites: what the schemas tell about a composite's values.

Input: canonical JSON Schemas (a step operation's input schema, its answer's schema). Output: the
schema of the value at a JSON pointer inside a value a schema describes (`schema_at`), the JSON types a
schema admits (`schema_types`) and whether two type sets can meet (`types_meet`), whether two
argument schemas admit a common value (`compatible`), `$defs` carried along with a sub-schema
(`hoist_defs`), an operation's answer-body schema from its tool's output schema (`answer_schema`),
and a writing composite's record result (`record_output_schema`). "Cannot tell" is None, never a
guess: the checks built on these flag only mappings the schemas prove wrong.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from ...policy.format import CompositePlan
from ...results import RESULT_KEY
from ..schema.satisfiable import json_type_of as json_type

#: the aggregate result's member of the steps that did not answer: step id -> structured error
ERRORS = "errors"
#: the record result's member listing every step with its state
STEPS = "steps"


def answer_schema(output_schema: dict[str, Any], shape: str) -> dict[str, Any] | None:
    """The schema of an operation's answer body (what references read) from its tool's output schema:
    the schema itself for shape ``object``, the ``result`` member's (with the root `$defs`) for
    ``result``, None for ``status`` (no body)."""
    if shape == "object":
        return output_schema
    if shape != "result":
        return None
    inner = output_schema.get("properties", {}).get(RESULT_KEY)
    if not isinstance(inner, dict):
        return None
    body = dict(inner)
    if isinstance(output_schema.get("$defs"), dict):
        body["$defs"] = output_schema["$defs"]
    return body


def hoist_defs(schema: Any, available: dict[str, Any], into: dict[str, Any]) -> None:
    """Copy the `$defs` entries `schema` reaches (transitively) from `available` into `into`."""
    todo = list(local_refs(schema))
    while todo:
        name = todo.pop()
        if name in into or name not in available:
            continue
        into[name] = copy.deepcopy(available[name])
        todo.extend(local_refs(available[name]))


def local_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            yield ref[len("#/$defs/") :]
        for v in node.values():
            yield from local_refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from local_refs(v)


def schema_at(schema: Any, tokens: list[str], root: Any = None) -> Any:
    """The schema of the value at `tokens` inside a value `schema` describes, as far as the schema tells
    (properties, items, local `$defs` references, one-branch `allOf`); None when it cannot tell."""
    root = schema if root is None else root
    node = schema
    for token in [*tokens, None]:
        for _ in range(32):  # follow references and allOf wrappers
            if not isinstance(node, dict):
                return None
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and isinstance(root, dict):
                node = root.get("$defs", {}).get(ref[len("#/$defs/") :])
                continue
            all_of = node.get("allOf")
            if (
                isinstance(all_of, list)
                and len(all_of) == 1
                and "properties" not in node
                and "items" not in node
            ):
                node = all_of[0]
                continue
            break
        if token is None:
            return node
        if not isinstance(node, dict):
            return None
        props = node.get("properties")
        if isinstance(props, dict) and token in props:
            node = props[token]
        elif isinstance(node.get("items"), dict) and (token.isdigit() or token == "-"):
            node = node["items"]
        else:
            return None
    return node


def schema_types(schema: Any) -> set[str] | None:
    """The JSON types a schema admits, when it says (``type``, ``const``, ``enum``); None otherwise."""
    if not isinstance(schema, dict):
        return None
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        return set(kind)
    values = (
        schema["enum"]
        if isinstance(schema.get("enum"), list)
        else ([schema["const"]] if "const" in schema else None)
    )
    if values is not None:
        return {json_type(v) for v in values}
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            found: set[str] = set()
            for b in branches:
                t = schema_types(b)
                if t is None:
                    return None
                found |= t
            return found
    return None


def types_meet(source: set[str] | None, target: set[str] | None) -> bool:
    """Whether a value of one of the `source` types can be of one of the `target` types (unknown: yes;
    an integer is a number, and a number may be an integer)."""
    if source is None or target is None:
        return True
    widen = {"integer": {"integer", "number"}, "number": {"number", "integer"}}
    return any(widen.get(s, {s}) & target for s in source)


def compatible(a: Any, b: Any) -> bool:
    """Whether some value satisfies both argument schemas, as far as their types and enums tell."""
    if a == b:
        return True
    if not types_meet(schema_types(a), schema_types(b)):
        return False
    ea, eb = (s.get("enum") if isinstance(s, dict) else None for s in (a, b))
    return not (isinstance(ea, list) and isinstance(eb, list) and not any(v in eb for v in ea))


def record_output_schema(result: dict[str, Any], plan: CompositePlan) -> dict[str, Any]:
    """A writing composite's record result: the combined result plus `steps`, each step's state."""
    out = copy.deepcopy(result)
    out["properties"] = dict(out["properties"])
    out["properties"][STEPS] = {
        "type": "array",
        "description": "Every step in plan order with its state: done, failed (with its error), result_unknown "
        "(a write that may have happened) or not_run.",
        "items": {
            "type": "object",
            "required": ["id", "state"],
            "properties": {
                "id": {"type": "string", "enum": [s.id for s in plan.steps]},
                "state": {"type": "string", "enum": ["done", "failed", "result_unknown", "not_run"]},
                "error": {"type": "object"},
            },
        },
    }
    out["required"] = [STEPS]
    return out
