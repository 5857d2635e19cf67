"""The OpenAI strict transform's node rules (``docs/provider-rules.md`` A.2, A.4, E, F.1): what
`toolgen.dialects.openai` applies to one schema node as it rebuilds it.

Input: one JSON Schema node (canonical, or already rebuilt). Output: whether it admits null or a
string (`admits_null`, `admits_string`), the node made nullable as an originally optional member
must be (`widen_null`: A.2 "Optional fields", A.4, E point 2) and its `enum` made to list null where
its type does (`null_consistent`: A.4 "Enum + nullable"), its keys in the order the transform writes
them (`ordered`, `OPENAI_KEY_ORDER`), its types (`node_types`), whether strict mode carries a keyword
on it (`carried`: A.2 formats, F.1 keywords), enum values without repeats (`dedupe`) and the name a
recursive ``$ref`` target takes in ``$defs`` (`def_name`). Pure: nothing is mutated but a node the
caller built (`null_consistent`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._base import or_null
from ._openai_rules import (
    OPENAI_ARRAY_KEYWORDS,
    OPENAI_NUMBER_KEYWORDS,
    OPENAI_STRICT_FORMATS,
    OPENAI_STRING_KEYWORDS,
)
from ._walk import DEFS_KEYS, types_of

JSON = Any


def dedupe(values: list[JSON]) -> list[JSON]:
    """`values` without repeats (compared as sorted-key JSON), first occurrences in order."""
    seen: set[str] = set()
    out: list[JSON] = []
    for v in values:
        key = json.dumps(v, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out


def ordered(parts: dict[str, JSON], order: tuple[str, ...]) -> dict[str, JSON]:
    """`parts` with the keys of `order` first, in that order, then the others as they came."""
    out = {k: parts[k] for k in order if k in parts}
    for k, v in parts.items():
        if k not in out:
            out[k] = v
    return out


OPENAI_KEY_ORDER: tuple[str, ...] = (
    "title",
    "description",
    "type",
    "enum",
    "const",
    "format",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "items",
    "anyOf",
    "allOf",
    "$ref",
    "$defs",
)


def admits_null(node: JSON) -> bool:
    """Whether null passes every constraint of `node` that toolgen emits (type, enum, const, anyOf);
    `$ref` counts as not admitting null (conservative)."""
    if not isinstance(node, dict):
        return node is True
    if "$ref" in node:
        return False
    types = types_of(node)
    if types is not None and "null" not in types:
        return False
    if "const" in node and node["const"] is not None:
        return False
    if isinstance(node.get("enum"), list) and None not in node["enum"]:
        return False
    if isinstance(node.get("anyOf"), list) and not any(admits_null(b) for b in node["anyOf"]):
        return False
    return not (types is None and any(k in node for k in ("properties", "items", "allOf", "not")))


def null_consistent(node: dict[str, JSON]) -> dict[str, JSON]:
    """A.4 "Enum + nullable": when the type admits null, `enum` lists null too (const -> enum)."""
    types = types_of(node)
    if types is None or "null" not in types:
        return node
    if isinstance(node.get("enum"), list) and None not in node["enum"]:
        node["enum"] = [*node["enum"], None]
    if "const" in node and node["const"] is not None:
        node["enum"] = [node.pop("const"), None]
    return node


def widen_null(node: JSON) -> JSON:
    """Make an originally optional member nullable (A.2 "Optional fields", A.4, E point 2).

    Typed nodes get ``"null"`` in their type array (and in `enum`; a `const` becomes a two-value
    `enum`); `anyOf` nodes get a ``{"type": "null"}`` branch; `$ref` nodes (and anything else) are
    wrapped as ``anyOf: [<node>, {"type": "null"}]``."""
    if not isinstance(node, dict) or admits_null(node):
        return node
    s = dict(node)
    if "$ref" in s or "allOf" in s:
        return {"anyOf": [s, {"type": "null"}]}
    changed = False
    if isinstance(s.get("anyOf"), list):
        if not any(admits_null(b) for b in s["anyOf"]):
            s["anyOf"] = [*s["anyOf"], {"type": "null"}]
        changed = True
    types = types_of(s)
    if types is not None:
        if "null" not in types:
            s["type"] = [*types, "null"]
        changed = True
    if isinstance(s.get("enum"), list):
        if None not in s["enum"]:
            s["enum"] = [*s["enum"], None]
        changed = True
    if "const" in s:
        s["enum"] = [s.pop("const"), None]
        changed = True
    if changed:
        return ordered(s, OPENAI_KEY_ORDER)
    return or_null(s)


def def_name(pointer: str) -> str:
    """The ``$defs`` name of the recursive ``$ref`` target at `pointer`: its own name under
    ``$defs``/``definitions``, else ``ref_`` and the pointer's tokens; only ``[A-Za-z0-9_.-]``."""
    tokens = [t for t in pointer.split("/") if t]
    if len(tokens) == 2 and tokens[0] in DEFS_KEYS:
        raw = tokens[1].replace("~1", "/").replace("~0", "~")
    else:
        raw = "ref_" + "_".join(tokens)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", raw)
    return name or "def"


def node_types(schema: dict[str, JSON]) -> list[str] | None:
    """The node's types: its ``type``; else an object when it has ``properties``, an array when it
    has ``items`` (unless ``anyOf``/``oneOf`` says what it is); else None."""
    types = types_of(schema)
    if types is None and "anyOf" not in schema and "oneOf" not in schema:
        if "properties" in schema:
            return ["object"]
        if "items" in schema:
            return ["array"]
    return types


def carried(key: str, value: JSON, types: list[str] | None) -> bool:
    """Whether strict mode carries `key` with `value` on a node of `types`: A.2's formats on a string
    node; F.1's ``pattern`` (one that compiles) on a string node, number keywords on a numeric node,
    ``minItems``/``maxItems`` (non-negative) on an array node."""
    if types is None:
        return False
    kinds = set(types)
    stringy = "string" in kinds and kinds <= {"string", "null"}
    if key == "format":
        return stringy and value in OPENAI_STRICT_FORMATS
    if key in OPENAI_STRING_KEYWORDS:
        return stringy and isinstance(value, str) and _compiles(value)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if key in OPENAI_NUMBER_KEYWORDS:
        return bool(kinds & {"number", "integer"}) and kinds <= {"number", "integer", "null"} and number
    if key in OPENAI_ARRAY_KEYWORDS:
        return (
            "array" in kinds
            and kinds <= {"array", "null"}
            and isinstance(value, int)
            and number
            and value >= 0
        )
    return False


def admits_string(node: JSON) -> bool:
    """Whether a canonical node may accept a string (its type, or any branch of its anyOf/oneOf)."""
    if not isinstance(node, dict):
        return node is True
    types = types_of(node)
    if types is not None and "string" in types:
        return True
    if isinstance(node.get("enum"), list) and any(isinstance(v, str) for v in node["enum"]):
        return True
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list) and any(admits_string(b) for b in node[key]):
            return True
    return False


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return False
    return True


__all__ = [
    "OPENAI_KEY_ORDER",
    "admits_null",
    "admits_string",
    "carried",
    "dedupe",
    "def_name",
    "node_types",
    "null_consistent",
    "ordered",
    "widen_null",
]
