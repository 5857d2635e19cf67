"""The value keywords of a schema (types, formats, bounds, enums, lengths): OpenAPI's forms -> the
canonical JSON Schema 2020-12 forms, invalid values found and named.

Input: the raw keywords of one Schema Object. Output: the canonical value keywords in the converter's
output dict: a de-duplicated `type` with ``null`` last, 3.0 boolean ``exclusiveMinimum`` /
``exclusiveMaximum`` in their numeric form, ``type: file`` as a binary string, de-duplicated `enum`s
(null added when the type admits it), `items` on every array. A value 2020-12 does not allow (a
negative ``maxLength``, a ``pattern`` that does not compile, ...) is reported back so the converter
can drop it with a located ``schema-keyword-invalid`` warning.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any

import jsonschema_rs

from .tree import JSONSchema, as_list, is_number, value_key

#: keywords copied as plain values
_VALUE_KEYS = frozenset(
    {
        "title",
        "description",
        "default",
        "deprecated",
        "format",
        "const",
        "multipleOf",
        "maximum",
        "minimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "dependentRequired",
        "contentEncoding",
        "contentMediaType",
    }
)


_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null", "file"})


_INVALID: Any = object()

#: the length and count keywords (``maxLength``, ``minItems``, ...): non-negative integers
COUNT_KEYS = frozenset(
    {
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
    }
)
#: The largest length or count bound kept as written: 2**53 - 1, the largest integer every JSON reader
#: reads exactly (RFC 8259 §6). A larger one (``maxLength: 1e300``) is lowered to it: no instance is
#: that long, so a maximum keeps its meaning and a minimum stays unreachable (never dropped, which would
#: accept more), and pydantic, whose length bounds are 64-bit, can build the argument model.
MAX_COUNT = 2**53 - 1


def _valid_type(value: Any) -> Any:
    """The `type` keyword normalised (`normalise_type`), or None when it names no JSON type: a
    non-string, an unknown name, a list without one known name. ``file`` (OpenAPI 2) is kept here
    and rewritten by the caller."""
    if isinstance(value, str):
        return value if value in _JSON_TYPES else None
    if isinstance(value, list) and value and all(isinstance(t, str) and t in _JSON_TYPES for t in value):
        return normalise_type(value)
    return None


def _non_negative_int(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return _INVALID
    if isinstance(value, float):
        return int(value) if value.is_integer() else _INVALID
    return value


def _number(value: Any) -> Any:
    return value if is_number(value) and (isinstance(value, int) or math.isfinite(value)) else _INVALID


def _regex(value: Any) -> Any:
    if not isinstance(value, str) or not _compiles(value):
        return _INVALID
    return value


@lru_cache(maxsize=4096)
def _compiles(pattern: str) -> bool:
    """Whether `pattern` compiles both as a Python `re` and for the runtime's JSON Schema validator
    (jsonschema-rs, ECMA-262 regular expressions: ``{,2}`` or ``[0-9-_]`` compile in Python and not
    there, and a tool whose schema holds one could not be loaded)."""
    try:
        re.compile(pattern)
        jsonschema_rs.Draft202012Validator({"type": "string", "pattern": pattern}, validate_formats=True)
    except (re.error, RecursionError, OverflowError, ValueError, jsonschema_rs.ValidationError):
        return False
    return True


def _dependent_required(value: Any) -> Any:
    if isinstance(value, dict) and all(
        isinstance(v, list) and all(isinstance(x, str) for x in v) and len(set(v)) == len(v)
        for v in value.values()
    ):
        return value
    return _INVALID


#: keyword -> (check returning the value to keep or _INVALID, what it must be)
_VALUE_RULES: dict[str, tuple[Any, str]] = {
    **{
        k: (lambda v: v if isinstance(v, str) else _INVALID, "a string")
        for k in ("title", "description", "format", "contentEncoding", "contentMediaType")
    },
    **{
        k: (lambda v: v if isinstance(v, bool) else _INVALID, "a boolean")
        for k in ("deprecated", "uniqueItems")
    },
    **{
        k: (_non_negative_int, "a non-negative integer")
        for k in (
            "maxLength",
            "minLength",
            "maxItems",
            "minItems",
            "maxProperties",
            "minProperties",
            "maxContains",
            "minContains",
        )
    },
    **{k: (_number, "a number") for k in ("maximum", "minimum")},
    "multipleOf": (lambda v: v if _number(v) is not _INVALID and v > 0 else _INVALID, "a number above 0"),
    "pattern": (
        _regex,
        "a regular expression that compiles as ECMA-262 (the runtime validator's syntax) and as Python `re`",
    ),
    "dependentRequired": (_dependent_required, "an object of lists of unique strings"),
}


def _valid_value(key: str, value: Any) -> Any:
    rule = _VALUE_RULES.get(key)
    return value if rule is None else rule[0](value)


def normalise_type(value: Any) -> Any:
    """Type keyword: de-duplicated, declared order, ``null`` last; one entry -> a string."""
    if not isinstance(value, list):
        return value
    seen = list(dict.fromkeys(t for t in value if isinstance(t, str)))
    ordered = [t for t in seen if t != "null"] + (["null"] if "null" in seen else [])
    return ordered[0] if len(ordered) == 1 else ordered


def _dedupe(values: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    out: list[Any] = []
    for value in values:
        key = value_key(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def value_keyword(key: str, value: Any, out: JSONSchema, node: JSONSchema) -> str | None:
    """Copy the value keyword `key` of `node` (``type``, ``required``, ``enum``, the bounds, ``format``
    and the other `_VALUE_KEYS`) into `out` in canonical form. Returns what the value must be when
    JSON Schema 2020-12 does not allow it (the caller drops it with a warning), else None. Keywords
    that are not value keywords are left alone."""
    if key == "type":
        types = _valid_type(value)
        if types is None:
            return "a JSON type name or a list of them"
        out["type"] = types
    elif key == "required" and isinstance(value, list):
        out["required"] = list(dict.fromkeys(v for v in value if isinstance(v, str)))
    elif key == "enum" and isinstance(value, list):
        out["enum"] = _dedupe(value)
    elif key in ("exclusiveMinimum", "exclusiveMaximum"):
        if isinstance(value, bool):
            bound = "minimum" if key == "exclusiveMinimum" else "maximum"
            if value and isinstance(node.get(bound), (int, float)):
                out[key] = node[bound]
        elif isinstance(value, (int, float)):
            out[key] = value
    elif key in _VALUE_KEYS:
        valid = _valid_value(key, value)
        if valid is _INVALID:
            return _VALUE_RULES.get(key, ("", ""))[1]
        out[key] = valid
    return None


#: RFC 4648 §4 base64 (padded), what OpenAPI's ``format: byte`` means
BASE64_PATTERN = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"


def finish_values(out: JSONSchema, node: JSONSchema, context: str = "output") -> None:
    """The value keywords that depend on each other, once all are in `out`: an OpenAPI 3.0 boolean
    exclusive bound replaces its inclusive bound; ``type: file`` (OpenAPI 2) becomes a binary string;
    a type that admits null puts null in `enum`; an array gets ``items`` (``{}`` when absent). In the
    input `context`, a ``format: byte`` string (OpenAPI: base64, RFC 4648) also gets
    ``contentEncoding: base64`` and, unless it has one, the base64 `pattern` (`BASE64_PATTERN`): no
    JSON Schema validator knows the format, every dialect carries a pattern, and the runtime then
    refuses a value that is not base64 before the API sees it."""
    for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(key) is True and key in out:
            out.pop(bound, None)
    types = out.get("type")
    if types == "file" or (isinstance(types, list) and "file" in types):
        out["type"] = normalise_type(["string" if t == "file" else t for t in as_list(types)])
        out["format"] = "binary"
    types = out.get("type")
    if types is not None:
        type_list = as_list(types)
        if "null" in type_list and "enum" in out and None not in out["enum"]:
            out["enum"] = out["enum"] + [None]
        if "array" in type_list and "items" not in out and "prefixItems" not in out:
            out["items"] = {}
        if context == "input" and out.get("format") == "byte" and "string" in type_list:
            out.setdefault("contentEncoding", "base64")
            out.setdefault("pattern", BASE64_PATTERN)
