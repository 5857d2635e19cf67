"""Reading an API's answer, and keeping the call's secrets out of everything it returns.

`decode_body` turns a response's bytes into a value by its Content-Type and what the spec says may
come; `scrub` replaces every secret the call used in a decoded value; `may_hold_secret` tells
whether a body's bytes need that walk. Pure functions: no IO, never raise on an API's bytes.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from typing import Any

import httpx

from ..results import binary_summary, media_kind
from .arguments import strict_json

__all__ = ["MAX_RESPONSE_DEPTH", "decode_body", "depth_exceeds", "may_hold_secret", "scrub", "text_charset"]

#: JSON bodies nested deeper than this are not shaped (an unreadable body, not a crash).
MAX_RESPONSE_DEPTH = 128


def scrub(value: Any, secret_values: list[str]) -> Any:
    """`value` with every occurrence of a secret (in strings and object keys) replaced by
    ``"[redacted]"``. Bounded depth: it runs on decoded bodies already checked by `depth_exceeds`
    and on arguments bounded by `MAX_ARGUMENT_DEPTH`."""
    if not secret_values:
        return value
    if isinstance(value, str):
        for s in secret_values:
            if s in value:
                value = value.replace(s, "[redacted]")
        return value
    if isinstance(value, dict):
        return {scrub(k, secret_values): scrub(v, secret_values) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, secret_values) for v in value]
    return value


def may_hold_secret(content: bytes, secret_values: list[str], headers: httpx.Headers | None = None) -> bool:
    """Whether a body's bytes can hold a secret once decoded: one appears as is (in any of the forms
    `credentials.echo_forms` lists), the body uses JSON escapes (``\\u0073``, ``\\/``) that could spell
    one, or it is text in a declared charset other than UTF-8. Lets the common case skip the decoded
    walk."""
    if not secret_values or not content:
        return False
    if b"\\" in content or text_charset(headers) not in (None, "utf-8", "ascii"):
        return True
    return any(s.encode("utf-8") in content for s in secret_values)


def text_charset(headers: httpx.Headers | None) -> str | None:
    """The ``charset`` parameter of a response's Content-Type, as Python's codec name (lower case),
    or None when absent or not a text encoding Python knows."""
    ctype = headers.get("content-type", "") if headers is not None else ""
    for param in ctype.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            try:
                info = codecs.lookup(value.strip().strip('"'))
            except LookupError:
                return None
            return info.name if getattr(info, "_is_text_encoding", True) else None
    return None


def depth_exceeds(value: Any, limit: int) -> bool:
    """Whether a decoded JSON value nests deeper than `limit` (an iterative walk)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def decode_body(headers: httpx.Headers | None, content: bytes, expect: str | None = None) -> tuple[Any, str | None]:
    """(decoded body, problem) by the answer's Content-Type (`toolgen.results.media_kind`) and what
    the spec says may come (`expect`, the row's ``output.body``): JSON for JSON media types (any
    ``+json`` type, ``text/json``, with or without parameters), and tried first for a wildcard or
    missing type and, when the spec says JSON (``expect == "json"``), for any type but HTML (a
    springdoc ``*/*`` answer labelled ``text/plain`` or ``application/octet-stream``); text for
    other text; `toolgen.results.binary_summary` for binary. `problem` is set, and the body not to
    be trusted, when a JSON body does not parse or nests deeper than `MAX_RESPONSE_DEPTH`, or the
    API sent an HTML page where the spec declares none (an error or login page, never a tool
    result); a declared text answer (``expect == "text"``: ``text/html`` among them) is text."""
    if not content:
        return None, None
    ctype = (headers.get("content-type", "") if headers is not None else "").lower()
    kind = media_kind(ctype)
    html = "html" in ctype
    if kind in ("json", "any") or (expect == "json" and not html):
        try:
            # RFC 8259 §8.1: JSON between systems is UTF-8 (no UTF-16/32 detection, so a secret cannot
            # hide from the byte-level check in another encoding); NaN and Infinity are not JSON
            value = strict_json(content.decode("utf-8-sig"))
        except RecursionError:  # JSON so deep the parser gave up: never a binary or text result
            return None, f"JSON nested deeper than {MAX_RESPONSE_DEPTH} levels"
        except ValueError:
            if kind == "json":
                return content[:2000].decode("utf-8", "replace"), "invalid JSON"
        else:
            if depth_exceeds(value, MAX_RESPONSE_DEPTH):
                return None, f"JSON nested deeper than {MAX_RESPONSE_DEPTH} levels"
            return value, None
    if html and expect != "text":
        return content[:2000].decode("utf-8", "replace"), "an HTML page where data was expected"
    if kind in ("text", "any"):
        return content.decode(text_charset(headers) or "utf-8", "replace"), None
    return binary_summary(ctype, len(content)), None
