"""Kernel `pointer`: JSON Pointer (RFC 6901) and local `$ref` helpers.

Input: JSON pointers, `$ref` strings and JSON data. Output: reference tokens, decoded pointers and
the values they name (`PointerError` when none).

A `$ref` in an OpenAPI document is a URI reference; a local one is a fragment holding a JSON pointer
(RFC 3986 percent-encoding applies to the fragment, then RFC 6901 `~1`/`~0` escapes). OpenAPI 3.0
section 4.7.2 / 3.1 section 4.8.23 (Reference Object).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote


class PointerError(LookupError):
    """A JSON pointer does not name a value; `.pointer` is the longest prefix that exists."""

    def __init__(self, message: str, pointer: str):
        super().__init__(message)
        self.pointer = pointer


def escape_token(token: str) -> str:
    """RFC 6901 escape of one reference token."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def parse_pointer(pointer: str) -> list[str]:
    """``"/a/b~1c"`` -> ``["a", "b/c"]``; ``""`` -> ``[]``. Raises `PointerError` if not a pointer."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PointerError(f"JSON pointer must start with '/': {pointer!r}", "")
    return [unescape_token(t) for t in pointer[1:].split("/")]


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
