"""Caller input → plain JSON arguments: the first thing the call path does with what a caller sent.

Input: whatever a caller passes as a tool's arguments — JSON decoded by an MCP server or the CLI,
or Python values from an embedding application (e.g. a generated argument model's
``model_dump()``). Output: a new ``dict`` of plain JSON values (``dict`` with ``str`` keys, ``list``,
``str``, ``int``, ``float``, ``bool``, ``None``), or a `ToolError` ``invalid_arguments`` whose
``details.pointer`` (RFC 6901) names the offending value. Nothing here raises anything else, so the
call path can run this before it writes a receipt or sends a byte.

Conversions (each a value's standard JSON form): `uuid.UUID` → its canonical text;
`datetime.datetime`/`date`/`time` → ISO 8601 (``isoformat()``, RFC 3339 for an aware datetime);
`decimal.Decimal` → a number (an integer within ±2**53, else the double it rounds to, then as a
float); `enum.Enum` → its value; tuples → arrays; an integral float (``1.0``)
→ the integer ``1`` (within ±2**53, where the two are the same JSON number), so it is sent as ``1``.

Refused: NaN and ±Infinity (not JSON; nor a Decimal beyond a double's range, ``1e400``), bytes (send text), other Python objects, non-string object
keys, strings holding a lone surrogate (not encodable as UTF-8), nesting deeper than
`MAX_ARGUMENT_DEPTH` levels and more than `MAX_ARGUMENT_NODES` values. The walk is iterative: no
input, however deep or self-referencing, can exhaust the interpreter's stack.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import enum
import json
import math
import sys
import uuid
from collections.abc import Mapping
from typing import Any

from ...pointer import join_pointer
from ..errors import ToolError, make_error

#: Deepest nesting of arguments accepted (a top-level argument is depth 1).
MAX_ARGUMENT_DEPTH = 64
#: Most values (scalars and containers) accepted in one call's arguments.
MAX_ARGUMENT_NODES = 200_000
#: Integral floats up to this magnitude are sent as integers (IEEE 754 doubles are exact below it).
_EXACT_INT = 2**53


def strict_json(text: str, *, unique_keys: bool = False, double_integers: bool = False) -> Any:
    """`text` parsed as JSON (RFC 8259), refusing what Python's parser lets through but no JSON output
    can carry: ``NaN``/``Infinity`` and numbers that overflow a double (``1e999``). With
    `unique_keys`, an object naming one member twice is refused too (RFC 8259 §4: its meaning is
    unpredictable; Python keeps the last silently). With `double_integers`, so is an integer beyond
    a double's magnitude (I-JSON, RFC 7493 §2.2: a 400-digit ``exp``). Raises `ValueError` (and
    `RecursionError` for absurd nesting), like `json.loads`."""
    return json.loads(
        text,
        parse_constant=_refuse_constant,
        parse_float=_finite_float,
        parse_int=_double_int if double_integers else None,
        object_pairs_hook=_unique_members if unique_keys else None,
    )


def _unique_members(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the member {key[:80]!r} appears twice in one object")
        out[key] = value
    return out


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


#: The largest integer magnitude a double holds (``sys.float_info.max``, as an int).
DOUBLE_MAX = int(sys.float_info.max)


def _double_int(text: str) -> int:
    value = int(text)
    if abs(value) > DOUBLE_MAX:
        raise ValueError(f"{text[:40]}... overflows a double")
    return value


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} overflows a double")
    return value


def invalid_argument(path: tuple[str | int, ...], message: str) -> ToolError:
    """An ``invalid_arguments`` error for the value at `path` (pointer in ``details.pointer``)."""
    pointer = join_pointer("", *path)
    where = f"argument {pointer}" if pointer else "arguments"
    return make_error(
        "invalid_arguments",
        f"Invalid {where}: {message}"[:500],
        details={
            "pointer": pointer,
            "keyword": "type",
            "errors": [{"pointer": pointer, "keyword": "type", "message": message[:300]}],
        },
    )


def key_text_problem(value: str) -> str | None:
    """Why the text `value` cannot name a stored entry (a ``preview_id``, an idempotency key) on
    every receipt store, or None: a NUL character (PostgreSQL's ``text`` cannot hold one, so a store
    would fail where the others answer) or an unpaired surrogate (not UTF-8). The rule that makes
    every store answer such input alike: ``invalid_arguments`` at the boundary."""
    if "\x00" in value:
        return "it holds a NUL character (U+0000), which no receipt store keeps; remove it"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "it holds an unpaired surrogate, which is not UTF-8 text; send valid text"
    return None


def _text(value: str, path: tuple[str | int, ...]) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise invalid_argument(
            path, f"text holds a lone surrogate (U+{ord(value[exc.start]):04X}); send valid Unicode"
        ) from None
    return value


def _scalar(value: Any, path: tuple[str | int, ...]) -> Any:
    if isinstance(value, enum.Enum):
        return _scalar(value.value, path)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return _text(str(value), path)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise invalid_argument(path, f"{value} is not a JSON number")
        if value == value.to_integral_value() and abs(value) <= _EXACT_INT:
            return int(value)
        near = float(value)  # the double it rounds to, judged as a float argument is (1e400: inf)
        if not math.isfinite(near):
            raise invalid_argument(path, f"{str(value)[:40]} is beyond the range of a JSON number (a double)")
        value = near
    if isinstance(value, float):
        if not math.isfinite(value):
            raise invalid_argument(path, f"{value!r} is not a JSON number")
        if value.is_integer() and abs(value) <= _EXACT_INT:
            return int(value)
        return float(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise invalid_argument(path, "bytes are not a JSON value; send text (base64 for binary data)")
    raise invalid_argument(path, f"a Python {type(value).__name__} is not a JSON value")


def plain_arguments(raw: Any) -> dict[str, Any]:
    """`raw` (a mapping) as plain JSON arguments; raises `ToolError` ``invalid_arguments``.

    ``None`` counts as no arguments (``{}``). Key order is kept."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise invalid_argument((), "arguments must be a JSON object")
    root: dict[str, Any] = {}
    # (source value, target container, slot in the target, path)
    stack: list[tuple[Any, Any, Any, tuple[str | int, ...]]] = []

    def open_object(source: Mapping[Any, Any], path: tuple[str | int, ...], target: dict[str, Any]) -> None:
        for key in source:
            if not isinstance(key, str):
                raise invalid_argument(path, f"object keys must be strings, not {type(key).__name__}")
            _text(key, (*path, key))
            target[key] = None  # keeps the caller's key order; the value is filled in below
        for key, item in reversed(list(source.items())):
            stack.append((item, target, key, (*path, key)))

    open_object(raw, (), root)
    nodes = 0
    while stack:
        value, target, slot, path = stack.pop()
        nodes += 1
        if nodes > MAX_ARGUMENT_NODES:
            raise invalid_argument((), f"more than {MAX_ARGUMENT_NODES} values in one call")
        if len(path) > MAX_ARGUMENT_DEPTH:
            raise invalid_argument(
                path[:MAX_ARGUMENT_DEPTH], f"nested deeper than {MAX_ARGUMENT_DEPTH} levels"
            )
        if isinstance(value, Mapping):
            obj: dict[str, Any] = {}
            target[slot] = obj
            open_object(value, path, obj)
        elif isinstance(value, (list, tuple)):
            arr: list[Any] = [None] * len(value)
            target[slot] = arr
            for index in range(len(value) - 1, -1, -1):
                stack.append((value[index], arr, index, (*path, index)))
        else:
            target[slot] = _scalar(value, path)
    return root


__all__ = [
    "DOUBLE_MAX",
    "MAX_ARGUMENT_DEPTH",
    "MAX_ARGUMENT_NODES",
    "invalid_argument",
    "plain_arguments",
    "strict_json",
]
