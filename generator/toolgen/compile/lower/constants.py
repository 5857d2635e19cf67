"""Stage `lower`, constants: a schema that admits exactly one value.

Input: a converted (canonical input form) schema. Output: that one value, or nothing. A required
parameter or request-body member whose schema admits one value only (an ``enum`` of one, a
``const``, either reached through an ``allOf`` branch or a ``$ref`` into the schema's own
``$defs``) is a constant of the operation: the runtime sends it as a fixed value and the model never
sees it (AWS's query APIs declare every operation's ``Action`` and ``Version`` this way, its JSON
APIs the ``X-Amz-Target`` header). An optional one stays an argument: leaving it out and sending it
do not mean the same thing.
"""

from __future__ import annotations

from typing import Any

from ...pointer import unescape_token

_MAX_DEPTH = 16


def single_value(schema: Any) -> tuple[Any] | None:
    """``(value,)`` when `schema` (JSON Schema 2020-12, as the converter writes it) admits exactly
    `value`, else None: no ``const``/one-value ``enum`` found, or the value it names fails the rest of
    the schema (an unsatisfiable schema is not a constant)."""
    found = _find(schema, schema, 0)
    if found is None:
        return None
    import jsonschema  # imported when a constant is found: a build that reuses its lowering needs none
    from referencing.exceptions import Unresolvable

    from ..schema.bounded import bounded_validator  # spec patterns in bounded time

    try:
        valid = bounded_validator()(schema).is_valid(found[0])
    except (jsonschema.exceptions.SchemaError, Unresolvable, RecursionError):
        return None
    return found if valid else None


def _find(node: Any, root: Any, depth: int) -> tuple[Any] | None:
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return None
    if "const" in node:
        return (node["const"],)
    enum = node.get("enum")
    if isinstance(enum, list) and len(enum) == 1:
        return (enum[0],)
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for token in ref[2:].split("/"):
            target = target.get(unescape_token(token)) if isinstance(target, dict) else None
        hit = _find(target, root, depth + 1)
        if hit is not None:
            return hit
    branches = node.get("allOf")
    if isinstance(branches, list):
        for branch in branches:
            hit = _find(branch, root, depth + 1)
            if hit is not None:
                return hit
    return None
