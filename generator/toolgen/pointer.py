"""Kernel `pointer`: JSON Pointer (RFC 6901) and local `$ref` helpers.

Input: JSON pointers, `$ref` strings and JSON data. Output: reference tokens, decoded pointers and
the values they name (`PointerError` when none; `PointerSyntaxError`, a `PointerError`, when the
text is not a JSON pointer at all).

RFC 6901 section 3 allows ``~`` only as ``~0`` (a ``~``) or ``~1`` (a ``/``); section 4 makes any other
``~`` (``~2``, a trailing ``~``) an error. Every reader here refuses such a pointer instead of taking
the ``~`` as literal text: the pointer would name a member nothing else names the same way.

JSON can spell a character no UTF-8 text can hold: a lone UTF-16 surrogate (``"\\ud800"``, valid
JSON by RFC 8259 §7, not Unicode text by §8.2). `surrogate_paths` and `lone_surrogate_pointer` say
where one is in parsed data, so that every reader (a spec, an intent map, a token's claims, a
package's ``search.json``) refuses it with the same walk and names where it is.

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
#: a ``\u`` escape of a UTF-16 surrogate code unit (JSON and YAML double-quoted strings; YAML also has
#: ``\U``): text without one cannot parse to a lone surrogate, so its data need not be walked
SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}|\\U0000[dD][89a-fA-F][0-9a-fA-F]{2}")
#: a surrogate code point in parsed text: JSON joins a valid pair into one character, so any left is lone
LONE_SURROGATE = re.compile("[\ud800-\udfff]")

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


def surrogate_paths(data: Any, limit: int = 5) -> list[list[str]]:
    """Paths (JSON pointer tokens) of keys and strings in `data` that hold a UTF-16 surrogate code
    point: a JSON ``\\ud800`` without its pair, or any surrogate escape in YAML (which does not pair
    them). Such text cannot be encoded as UTF-8, so no output could hold it. At most `limit` paths,
    in document order; walked with a stack, not recursion (`json.loads` reads nestings deeper than
    Python's recursion allows)."""
    found: list[list[str]] = []
    stack: list[tuple[Any, list[str]]] = [(data, [])]
    while stack and len(found) < limit:
        node, path = stack.pop()
        if isinstance(node, str):
            if LONE_SURROGATE.search(node):
                found.append(path)
        elif isinstance(node, dict):
            for key, value in reversed(list(node.items())):
                key_text = str(key)
                if LONE_SURROGATE.search(key_text):
                    found.append([*path, key_text])
                else:
                    stack.append((value, [*path, key_text]))
        elif isinstance(node, list):
            stack.extend((v, [*path, str(i)]) for i, v in reversed(list(enumerate(node))))
    return found[:limit]


def lone_surrogate_pointer(data: Any) -> str | None:
    """The JSON pointer of the first string (or member name) of `data` that holds a lone surrogate
    (`surrogate_paths`), each surrogate in it written as its escape (``/fields/a\\ud800``) so the
    pointer itself can be printed; None when `data` holds none."""
    found = surrogate_paths(data, limit=1)
    if not found:
        return None
    pointer = join_pointer("", *found[0])
    return LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", pointer)
