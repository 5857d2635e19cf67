"""Kernel `pointer`: JSON Pointer (RFC 6901) and local `$ref` helpers.

Input: JSON pointers, `$ref` strings and JSON data. Output: reference tokens, decoded pointers and
the values they name (`PointerError` when none; `PointerSyntaxError`, a `PointerError`, when the
text is not a JSON pointer at all).

RFC 6901 section 3 allows ``~`` only as ``~0`` (a ``~``) or ``~1`` (a ``/``); section 4 makes any other
``~`` (``~2``, a trailing ``~``) an error. Every reader here refuses such a pointer instead of taking
the ``~`` as literal text: the pointer would name a member nothing else names the same way.

A `$ref` in an OpenAPI document is a URI reference; a local one is a fragment holding a JSON pointer
(RFC 3986 percent-encoding applies to the fragment, then RFC 6901 `~1`/`~0` escapes). OpenAPI 3.0
section 4.7.2 / 3.1 section 4.8.23 (Reference Object).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote


class PointerError(LookupError):
    """A JSON pointer does not name a value; `.pointer` is the longest prefix that exists."""

    def __init__(self, message: str, pointer: str):
        super().__init__(message)
        self.pointer = pointer


class PointerSyntaxError(PointerError):
    """The text is not a JSON pointer (RFC 6901 sections 3-4): it does not start with ``/``, or a ``~``
    in it is not ``~0`` or ``~1``. `.pointer` is ``""``; `.text` is the refused text."""

    def __init__(self, message: str, text: str):
        super().__init__(message, "")
        self.text = text


_BAD_ESCAPE = re.compile(r"~(?![01])")

#: what to do about a refused pointer, for the messages that report one
POINTER_HINT = "write '~' as '~0' and '/' inside a name as '~1' (RFC 6901); no other '~' escape exists"


def escape_token(token: str) -> str:
    """RFC 6901 escape of one reference token (``~`` -> ``~0``, then ``/`` -> ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    """RFC 6901 section 4 decoding of one reference token (``~1`` -> ``/``, then ``~0`` -> ``~``).
    Raises `PointerSyntaxError` when a ``~`` is followed by anything but ``0`` or ``1`` (or ends it)."""
    bad = _BAD_ESCAPE.search(token)
    if bad is not None:
        shown = token[bad.start() : bad.start() + 2]
        raise PointerSyntaxError(
            f"{shown!r} in {token!r} is not an RFC 6901 escape (only '~0' and '~1' are)", token
        )
    return token.replace("~1", "/").replace("~0", "~")


def parse_pointer(pointer: str) -> list[str]:
    """``"/a/b~1c"`` -> ``["a", "b/c"]``; ``""`` -> ``[]``. Raises `PointerSyntaxError` (a
    `PointerError`) when `pointer` does not start with ``/`` or holds a ``~`` that is not ``~0``/``~1``
    (RFC 6901 sections 3-4)."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PointerSyntaxError(f"JSON pointer must start with '/': {pointer!r}", pointer)
    try:
        return [unescape_token(t) for t in pointer[1:].split("/")]
    except PointerSyntaxError as exc:
        raise PointerSyntaxError(f"{pointer!r} is not a JSON pointer: {exc}", pointer) from None


def check_pointer(pointer: str) -> str:
    """`pointer` itself when it is a JSON pointer (RFC 6901); raises `PointerSyntaxError` otherwise."""
    parse_pointer(pointer)
    return pointer


def join_pointer(base: str, *tokens: str | int) -> str:
    """Append tokens to a pointer, escaping each."""
    return base + "".join("/" + escape_token(str(t)) for t in tokens)


def ref_to_pointer(ref: str) -> str | None:
    """A local `$ref` (``#/components/schemas/A%20B``) -> its decoded JSON pointer; None if not local."""
    if not ref.startswith("#"):
        return None
    return unquote(ref[1:])


def resolve_pointer(data: Any, pointer: str) -> Any:
    """The value at `pointer` in `data`. Raises `PointerError` naming the last pointer that existed."""
    node = data
    walked = ""
    for token in parse_pointer(pointer):
        if isinstance(node, dict):
            if token not in node:
                raise PointerError(f"{pointer!r}: no member {token!r} at {walked or '/'}", walked)
            node = node[token]
        elif isinstance(node, list):
            if not token.isdigit() or int(token) >= len(node):
                raise PointerError(f"{pointer!r}: no index {token!r} at {walked or '/'}", walked)
            node = node[int(token)]
        else:
            raise PointerError(f"{pointer!r}: {walked or '/'} is not a container", walked)
        walked += "/" + escape_token(token)
    return node
