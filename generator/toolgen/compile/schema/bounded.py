"""Python `jsonschema` validators whose regular expressions run in bounded time.

Input: a JSON Schema (2020-12) from a spec or an intent map. Output: `BoundedValidator`, the
`jsonschema.Draft202012Validator` with its ``pattern`` and ``patternProperties`` keywords matched by
jsonschema-rs (Rust's regex engine: linear time, and a backtracking limit for the lookarounds and
backreferences it runs in its fallback engine) instead of Python's `re`, whose backtracking takes
exponential time on a pattern such as ``^(a+)+$`` and a value such as ``aaaa…a!``. The build checks
spec values (a one-value ``enum``, a fixed parameter's value, a narrowed list) against spec patterns,
so with `re` a hostile spec could stop the build for hours; the runtime validates with jsonschema-rs,
so the build now reads a pattern as the runtime does.

A pattern jsonschema-rs cannot compile matches nothing (fail closed: the value is refused). The
converter drops such a pattern from every canonical schema (`formats._compiles`), so this reaches only
a schema written in an intent map. `additionalProperties` and `unevaluatedProperties` still find the
properties a ``patternProperties`` covers with `re`; no build check reaches them with an object.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import jsonschema_rs


@lru_cache(maxsize=4096)
def _validator(pattern: str) -> Any:
    try:
        return jsonschema_rs.Draft202012Validator({"type": "string", "pattern": pattern})
    except (ValueError, jsonschema_rs.ValidationError):
        return None


def pattern_matches(pattern: str, text: str) -> bool:
    """Whether `pattern` (ECMA-262, unanchored, as JSON Schema reads it) matches somewhere in `text`,
    in time linear in `text` (jsonschema-rs); False when jsonschema-rs cannot compile `pattern`."""
    validator = _validator(pattern)
    return validator is not None and bool(validator.is_valid(text))


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if (
        validator.is_type(instance, "string")
        and isinstance(pattern, str)
        and not pattern_matches(pattern, instance)
    ):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, properties: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object") or not isinstance(properties, dict):
        return
    for pattern, subschema in properties.items():
        for key, value in instance.items():
            if pattern_matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


@lru_cache(maxsize=1)
def bounded_validator() -> Any:
    """`BoundedValidator`: the class (made on first use, so that importing this module imports no
    `jsonschema`). Use it as `jsonschema.Draft202012Validator`: ``bounded_validator()(schema,
    format_checker=...)``, ``.is_valid(value)``, ``.iter_errors(value)``."""
    from jsonschema import Draft202012Validator, validators

    return validators.extend(
        Draft202012Validator, {"pattern": _pattern, "patternProperties": _pattern_properties}
    )
