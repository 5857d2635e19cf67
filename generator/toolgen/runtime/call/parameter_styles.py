"""The call path's parameter styles: one argument value -> its text in a path, query, header, cookie
or form field, as OpenAPI 3.1 "Style Values" say (https://spec.openapis.org/oas/v3.1.0#style-values).

Input: a value already validated, the parameter's name, `style` and `explode`. Output: the path
segment (percent-encoded: ``simple``, ``label``, ``matrix``), the (name, value) pairs of a query
parameter or form field, not yet percent-encoded (``form``, ``spaceDelimited``, ``pipeDelimited``,
``deepObject``: ``a[b]=v``, recursively ``a[b][c]=v``, arrays indexed ``a[0]=v`` as Stripe expects),
or the header value (``simple``). A primitive is written as JSON writes it (`scalar`). Raises
`ToolError` ``invalid_arguments``, at the argument's path, for an object key the bracket syntax
cannot carry as itself and for an exploded object's member named like another parameter of the
request (`param_key`: the name a server reads).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from .arguments import invalid_argument


def scalar(value: Any) -> str:
    """A primitive as it appears in a URL, header or form field: booleans ``true``/``false``,
    numbers in JSON form, ``None`` as empty, objects and arrays as compact JSON."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def _enc(value: str) -> str:
    return quote(value, safe="")


def serialise_path(name: str, value: Any, style: str | None, explode: bool | None) -> str:  # noqa: PLR0911
    """One path parameter (already percent-encoded), OpenAPI ``simple`` (default), ``label`` or
    ``matrix`` style. A ``/`` inside a value is encoded as ``%2F``."""
    style = style or "simple"
    explode = bool(explode)
    if isinstance(value, list):
        parts = [_enc(scalar(v)) for v in value]
        if style == "label":
            return "." + (".".join(parts) if explode else ",".join(parts))
        if style == "matrix":
            if explode:
                return "".join(f";{name}={p}" for p in parts)
            return f";{name}=" + ",".join(parts)
        return ",".join(parts)
    if isinstance(value, dict):
        if explode:
            pairs = [f"{_enc(k)}={_enc(scalar(v))}" for k, v in value.items()]
        else:
            pairs = [f"{_enc(k)},{_enc(scalar(v))}" for k, v in value.items()]
        if style == "label":
            return "." + (".".join(pairs) if explode else ",".join(pairs))
        if style == "matrix":
            if explode:
                return "".join(f";{p}" for p in pairs)
            return f";{name}=" + ",".join(pairs)
        return ",".join(pairs)
    text = _enc(scalar(value))
    if style == "label":
        return "." + text
    if style == "matrix":
        return f";{name}={text}"
    return text


def deep_object_pairs(prefix: str, value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str, str]]:
    """Flatten `value` into bracketed pairs: ``{"a": {"b": 1}}`` under ``p`` → ``p[a][b]=1``;
    arrays are indexed (``p[0]=x``), as Stripe's form encoding expects. Nulls are dropped; an empty
    string value is sent as is (Stripe uses it to unset a field).

    The bracket syntax has no escape, so an object key containing ``[`` or ``]`` would address
    another field (``{"a][b": 1}`` → ``p[a][b]=1``): such a key raises `ToolError`
    ``invalid_arguments`` at `path` + the key."""
    out: list[tuple[str, str]] = []
    if value is None:
        return out
    if isinstance(value, dict):
        for key, item in value.items():
            check_bracket_key(str(key), (*path, key))
            out.extend(deep_object_pairs(f"{prefix}[{key}]", item, (*path, key)))
        return out
    if isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(deep_object_pairs(f"{prefix}[{index}]", item, (*path, index)))
        return out
    out.append((prefix, scalar(value)))
    return out


def check_bracket_key(key: str, path: tuple[str | int, ...], *, nested: bool = True) -> None:
    """Refuse an object key the bracket syntax cannot carry as itself: one holding ``[`` or ``]``
    (it would address another field), an empty one (``p[]`` appends to an array) and, below a
    prefix, one of ASCII digits only (``p[0]`` is an array index: the map ``{"0": x}`` and the
    list ``[x]`` would be one wire request). There is no escape, so these are refused."""
    if "[" in key or "]" in key:
        raise invalid_argument(path, "an object key may not contain '[' or ']' in this API's form encoding")
    if not key:
        raise invalid_argument(
            path,
            "an object key may not be empty in this API's form encoding "
            "(it would be sent as an array append, name[])",
        )
    if nested and key.isascii() and key.isdigit():
        raise invalid_argument(
            path,
            f"an object key of digits only ({key[:20]!r}) would be sent as an array "
            "index in this API's form encoding; use a key with a non-digit character",
        )


def serialise_query(
    name: str,
    value: Any,
    style: str | None,
    explode: bool | None,
    path: tuple[str | int, ...] = (),
    taken: frozenset[str] = frozenset(),
) -> list[tuple[str, str]]:
    """One query parameter (or form-body field) as (name, value) pairs, not yet percent-encoded.

    ``form`` (default, explode defaults to true): arrays → repeated names or ``a,b``; objects →
    one pair per property or ``name=k,v,...``. ``spaceDelimited``/``pipeDelimited``: arrays joined
    by space or ``|``. ``deepObject``: ``name[k]=v`` recursively.

    An exploded object's members become parameters of their own, named by the caller: a member
    whose `param_key` is in `taken` (another parameter of the request: see `taken_names`) raises
    `ToolError` ``invalid_arguments`` at `path` + the member's name.
    """
    style = style or "form"
    explode = True if explode is None else explode
    if value is None:
        return []
    if style == "deepObject":
        if isinstance(value, (dict, list)):
            return deep_object_pairs(name, value, path)
        return [(name, scalar(value))]
    if isinstance(value, list):
        items = [scalar(v) for v in value if v is not None]
        if style == "spaceDelimited" and not explode:
            return [(name, " ".join(items))]
        if style == "pipeDelimited" and not explode:
            return [(name, "|".join(items))]
        if explode:
            return [(name, v) for v in items]
        return [(name, ",".join(items))]
    if isinstance(value, dict):
        if explode:
            for k in value:
                if param_key(str(k)) in taken:
                    raise invalid_argument(
                        (*path, k),
                        f"the member {str(k)[:40]!r} would be sent as the "
                        f"parameter {str(k)[:40]!r}, which this request sets otherwise (another "
                        "argument, a fixed or hidden value, paging or a credential)",
                    )
            return [(str(k), scalar(v)) for k, v in value.items() if v is not None]
        flat: list[str] = []
        for k, v in value.items():
            if v is not None:
                flat.extend([str(k), scalar(v)])
        return [(name, ",".join(flat))]
    return [(name, scalar(value))]


def serialise_header(value: Any, explode: bool | None) -> str:
    """A header value, OpenAPI ``simple`` style."""
    if isinstance(value, list):
        return ",".join(scalar(v) for v in value)
    if isinstance(value, dict):
        if explode:
            return ",".join(f"{k}={scalar(v)}" for k, v in value.items())
        return ",".join(f"{k},{scalar(v)}" for k, v in value.items())
    return scalar(value)


def param_key(name: str) -> str:
    """The parameter a server reads `name` as, whatever its spelling: lower case (ASP.NET and
    others match names without case), without leading blanks, with blanks and dots as ``_`` and
    without a bracketed suffix (PHP reads ``user.id``, ``user id`` and ``user_id[]`` all as
    ``user_id``; Rails and ``qs`` read ``user_id[x]`` as a member of ``user_id``)."""
    key = name.lower().lstrip(" ")
    if "[" in key[1:]:
        key = key[: key.index("[", 1)]
    return key.replace(" ", "_").replace(".", "_")


__all__ = [
    "check_bracket_key",
    "deep_object_pairs",
    "param_key",
    "scalar",
    "serialise_header",
    "serialise_path",
    "serialise_query",
]
