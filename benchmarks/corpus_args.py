"""The argument generator of the corpus harness (`benchmarks/corpus.py`): one deterministic argument
object for a tool's MCP ``inputSchema``, checked against the schema.

- `generate_args(schema, mode)`: ``mode`` ``"required"`` fills the required properties only,
  ``"full"`` every property to depth 3; enum members, the spec's own examples and defaults where they
  fit, format-shaped strings, a string matching ``pattern``, the smallest number in range. Raises
  `ArgumentError` naming the first check its value fails.
- `schema_errors(schema, value)`: what is wrong with a value under a JSON Schema 2020-12 schema
  (formats asserted), as ``pointer: message`` lines.

Nothing here starts a process or opens a socket.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_FORMAT_VALUES: dict[str, Any] = {
    "date-time": "2024-01-02T03:04:05Z",
    "date": "2024-01-02",
    "time": "03:04:05Z",
    "duration": "P1D",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/item",
    "url": "https://example.com/item",
    "iri": "https://example.com/item",
    "uri-reference": "https://example.com/item",
    "iri-reference": "https://example.com/item",
    "uri-template": "https://example.com/{id}",
    "uuid": "123e4567-e89b-42d3-a456-426614174000",
    "byte": "aGVsbG8=",
    "binary": "hello",
    "password": "secret-1",
    "json-pointer": "/a",
    "relative-json-pointer": "0",
    "regex": "^a$",
    "int32": 1,
    "int64": 1,
}

_MAX_DEPTH = 3


class ArgumentError(Exception):
    """No value valid for the schema could be made; the message says which check failed."""


def _resolve(schema: Any, root: Mapping[str, Any], seen: int = 0) -> Any:
    while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and seen < 32:
        ref = schema["$ref"]
        if not ref.startswith("#/"):
            return {}
        target: Any = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                return {}
            target = target[part]
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        schema = {**target, **rest} if rest and isinstance(target, Mapping) else target
        seen += 1
    return schema


def _string(schema: Mapping[str, Any], name: str) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and isinstance(_FORMAT_VALUES.get(fmt), str):
        value = str(_FORMAT_VALUES[fmt])
    else:
        value = re.sub(r"[^a-z0-9]", "", name.lower())[:12] or "value"
        value = "x" + value if not value[0].isalpha() else value
    lo = schema.get("minLength")
    hi = schema.get("maxLength")
    if isinstance(lo, int) and len(value) < lo:
        value = (value * (lo // max(len(value), 1) + 1))[: max(lo, 1)]
    if isinstance(hi, int) and len(value) > hi:
        value = value[:hi]
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and not _matches(pattern, value):
        value = _from_regex(pattern, lo if isinstance(lo, int) else None, hi if isinstance(hi, int) else None)
    return value


def _matches(pattern: str, value: str) -> bool:
    try:
        return re.search(pattern, value) is not None
    except re.error:
        return True  # a pattern Python cannot compile: the validator decides


def _from_regex(pattern: str, lo: int | None, hi: int | None) -> str:
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis import strategies as st

    def fits(s: str) -> bool:
        return (lo is None or len(s) >= lo) and (hi is None or len(s) <= hi) and s.isascii() and "\n" not in s

    try:  # the first fitting string, derandomised; no shrinking (it costs seconds and adds nothing here)
        return str(
            find(
                st.from_regex(pattern),
                fits,
                settings=settings(
                    database=None,
                    derandomize=True,
                    max_examples=400,
                    phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck),
                ),
            )
        )
    except Exception as exc:
        raise ArgumentError(f"no string matches pattern {pattern!r}: {type(exc).__name__}") from exc


def _num(schema: Mapping[str, Any], key: str) -> float | None:
    v = schema.get(key)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _number(schema: Mapping[str, Any], integer: bool) -> int | float:
    """A number inside the schema's bounds (1 when unbounded): the smallest integer or multiple of
    ``multipleOf`` that fits, else the middle of a two-sided range."""
    import math

    lo, hi = _num(schema, "minimum"), _num(schema, "maximum")
    xlo, xhi = _num(schema, "exclusiveMinimum"), _num(schema, "exclusiveMaximum")
    step = _num(schema, "multipleOf")

    def fits(v: float) -> bool:
        return (
            (lo is None or v >= lo)
            and (hi is None or v <= hi)
            and (xlo is None or v > xlo)
            and (xhi is None or v < xhi)
        )

    low = max((b for b in (lo, xlo) if b is not None), default=None)
    high = min((b for b in (hi, xhi) if b is not None), default=None)
    if step is not None and step > 0:
        base = low if low is not None else (min(1, high) if high is not None else 1)
        k = math.ceil(base / step)
        for i in range(k, k + 3):
            v = i * step
            if fits(v) and (not integer or float(v).is_integer()):
                return int(v) if integer else v
    if integer:
        first = (
            math.floor(low) + 1 if low is not None and (not fits(low) or not float(low).is_integer()) else low
        )
        candidate = (
            int(first) if first is not None else (1 if high is None or high >= 1 else math.ceil(high) - 1)
        )
        while not fits(candidate) and high is not None and candidate < high:
            candidate += 1
        return candidate
    if low is not None and high is not None:
        return (low + high) / 2
    if low is not None:
        return low if fits(low) else low + 1
    if high is not None:
        return min(1, high) if fits(min(1, high)) else high - 1
    return 1


def _pick_branch(branches: list[Any], root: Mapping[str, Any]) -> Any:
    for b in branches:
        r = _resolve(b, root)
        if isinstance(r, Mapping) and r.get("type") != "null":
            return b
    return branches[0]


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _fits(schema: Mapping[str, Any], root: Mapping[str, Any], value: Any) -> bool:
    defs = root.get("$defs")
    return not schema_errors({**schema, "$defs": defs} if isinstance(defs, Mapping) else dict(schema), value)


def _value(schema: Any, root: Mapping[str, Any], mode: str, depth: int, name: str) -> Any:
    """One value valid for `schema` (``$ref`` resolved against `root`): its const, an enum member, the
    spec's own example or default where it fits, a branch's value, else one made for its type; `name`
    seeds a made string, `depth` counts the nesting (`mode` ``"full"`` fills optional properties up to
    `_MAX_DEPTH`). Raises `ArgumentError` when no value can be made."""
    schema = _resolve(schema, root)
    if schema is True or not isinstance(schema, Mapping) or not schema:
        return "value"
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return _enum_member(schema, root, enum)
    given = _given_value(schema, root)
    if given is not None:
        return given
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            return _branch_value(schema, root, mode, depth, name, key, branches)
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and all_of:
        return _value(_merged_all_of(schema, root, all_of), root, mode, depth, name)
    kind = _kind(schema)
    if kind == "object":
        return _object_value(schema, root, mode, depth)
    if kind == "array":
        return _array_value(schema, root, mode, depth, name)
    return _scalar_value(schema, kind, name)


def _enum_member(schema: Mapping[str, Any], root: Mapping[str, Any], enum: list[Any]) -> Any:
    """The first member of `enum` (``null`` last) that fits the rest of `schema`."""
    members = [e for e in enum if e is not None] or [None]
    fitting = [e for e in members if _fits({k: v for k, v in schema.items() if k != "enum"}, root, e)]
    if not fitting:
        raise ArgumentError(
            f"no member of the enum {_short(enum)} fits the rest of the schema "
            f"(type {schema.get('type')!r}): no value is valid"
        )
    return fitting[0]


def _given_value(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    """The spec's own first example or default, when it is a scalar that fits `schema`; else None."""
    # a spec's own example or default is taken only where it fits the schema (specs get them wrong:
    # soundcloud's array `access` defaults to the string "playable,preview")
    examples = schema.get("examples")
    for candidate in [*(examples[:1] if isinstance(examples, list) else []), schema.get("default")]:
        scalar = candidate is not None and not isinstance(candidate, (dict, list))
        if scalar and _fits(schema, root, candidate):
            return candidate
    return None


def _branch_value(
    schema: Mapping[str, Any],
    root: Mapping[str, Any],
    mode: str,
    depth: int,
    name: str,
    key: str,
    branches: list[Any],
) -> Any:
    """A value of one of the `key` (``anyOf``/``oneOf``) `branches`: the first the whole schema takes,
    trying the first non-null branch first; else the first value a branch gives."""
    base = {k: v for k, v in schema.items() if k != key}
    first = _pick_branch(branches, root)
    candidates = []
    for b in [first, *(b for b in branches if b is not first)]:  # the first value the whole schema takes
        branch = _resolve(b, root)
        merged = {**base, **branch} if isinstance(branch, Mapping) else base
        try:
            value = _value(merged, root, mode, depth, name)
        except ArgumentError:
            continue
        if _fits(schema, root, value):
            return value
        candidates.append(value)
    if candidates:
        return candidates[0]
    raise ArgumentError(f"no branch of {key} gives a valid value")


def _merged_all_of(schema: Mapping[str, Any], root: Mapping[str, Any], all_of: list[Any]) -> dict[str, Any]:
    """`schema` with its ``allOf`` parts merged in: properties and required names joined, the first
    value of any other keyword kept."""
    whole: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    for part in all_of:
        part = _resolve(part, root)
        if isinstance(part, Mapping):
            for k, v in part.items():
                if k == "properties" and isinstance(v, Mapping):
                    whole["properties"] = {**whole.get("properties", {}), **v}
                elif k == "required" and isinstance(v, list):
                    whole["required"] = [*whole.get("required", []), *v]
                else:
                    whole.setdefault(k, v)
    return whole


def _kind(schema: Mapping[str, Any]) -> Any:
    """The type a value is made for: the first non-null of a type list, else what the keywords imply."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    return kind


def _object_value(
    schema: Mapping[str, Any], root: Mapping[str, Any], mode: str, depth: int
) -> dict[str, Any]:
    """An object: the required properties (every property in mode ``"full"`` above `_MAX_DEPTH`),
    then entries until ``minProperties``."""
    declared = schema.get("properties")
    props: Mapping[str, Any] = declared if isinstance(declared, Mapping) else {}
    required = [r for r in schema.get("required", []) if isinstance(r, str)]
    names = list(props) if mode == "full" and depth < _MAX_DEPTH else [p for p in props if p in required]
    out: dict[str, Any] = {}
    for p in names:
        out[p] = _value(props[p], root, mode, depth + 1, p)
    extra = schema.get("additionalProperties")
    for r in required:
        if r not in out:
            out[r] = _value(extra if isinstance(extra, Mapping) else {}, root, mode, depth + 1, r)
    least = schema.get("minProperties")
    for p in props:  # minProperties: the declared properties first, then entries of the map
        if isinstance(least, int) and len(out) < least and p not in out:
            out[p] = _value(props[p], root, mode, depth + 1, p)
    while isinstance(least, int) and len(out) < least and extra is not False:
        key = f"key{len(out) + 1}"
        out[key] = _value(extra if isinstance(extra, Mapping) else {}, root, mode, depth + 1, key)
    return out


def _array_value(
    schema: Mapping[str, Any], root: Mapping[str, Any], mode: str, depth: int, name: str
) -> list[Any]:
    """An array of one item at least (below `_MAX_DEPTH`), within ``minItems``/``maxItems``, its items
    made distinct when ``uniqueItems`` asks for more than one."""
    items = schema.get("items", {})
    lo, hi = schema.get("minItems"), schema.get("maxItems")
    # one item at least (an empty list is often sent as no value at all), within maxItems
    count = max(lo if isinstance(lo, int) else 0, 1 if depth < _MAX_DEPTH else 0)
    count = min(count, hi) if isinstance(hi, int) else count
    first = _value(items, root, mode, depth + 1, name)
    if count > 1 and schema.get("uniqueItems"):
        return [first] + [_value(items, root, "required", depth + 1, f"{name}{i}") for i in range(1, count)]
    return [first] * count


def _scalar_value(schema: Mapping[str, Any], kind: Any, name: str) -> Any:
    """A string, number, boolean or null for `kind`; ``"value"`` for a type the generator does not know."""
    if kind == "string":
        return _string(schema, name)
    if kind == "integer":
        return _number(schema, True)
    if kind == "number":
        return _number(schema, False)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return "value"


def schema_errors(schema: Mapping[str, Any], value: Any) -> list[str]:
    """What is wrong with `value` under `schema` (JSON Schema 2020-12, formats asserted), as
    ``pointer: message`` lines; empty when valid."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    out = []
    for e in sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path))):
        out.append(f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:200]}")
    return out


def generate_args(schema: Mapping[str, Any], mode: str = "required") -> dict[str, Any]:
    """One argument object valid for `schema` (a tool's ``inputSchema``), the same every run.

    ``mode="required"`` fills the required properties, ``"full"`` every property to depth 3. The
    generator picks enum members, examples, defaults, format-shaped strings, a string matching
    ``pattern`` (hypothesis ``from_regex``, derandomised) and the smallest number in range. Raises
    `ArgumentError` naming the first schema check its value fails. (hypothesis-jsonschema 0.23.1,
    the last release, fails on every object schema with hypothesis 6.170, so it is not used.)"""
    try:
        value = _value(schema, schema, mode, 0, "arg")
    except ArgumentError as exc:
        raise ArgumentError(str(exc)) from exc
    except RecursionError as exc:
        raise ArgumentError("the schema recurses too deeply for the generator") from exc
    if not isinstance(value, dict):
        raise ArgumentError("the generator made no object")
    errors = schema_errors(schema, value)
    if errors:
        raise ArgumentError(errors[0])
    return value
