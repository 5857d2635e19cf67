"""Reading an API's answer, and keeping the call's secrets out of everything it returns.

`decode_body` turns a response's bytes into a value by its Content-Type and what the spec says may
come, with every unpaired UTF-16 surrogate it could hold replaced by U+FFFD (`safe_text`); `excerpt`
is the bounded, scrubbed text of an answer that cannot be read; `scrub` replaces every secret the call used in a decoded value; `may_hold_secret` tells
whether a body's bytes need that walk. Pure functions: no IO, never raise on an API's bytes.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from typing import Any

import httpx

from ...pointer import LONE_SURROGATE
from ...results import binary_summary, media_kind
from ..redaction import MARKER, cover
from .arguments import strict_json

__all__ = [
    "EXCERPT_CHARS",
    "MAX_RESPONSE_DEPTH",
    "REPLACEMENT",
    "decode_body",
    "depth_exceeds",
    "doubled_json",
    "excerpt",
    "may_hold_secret",
    "mismatch_text",
    "safe_text",
    "scrub",
    "text_charset",
]

#: JSON bodies nested deeper than this are not shaped (an unreadable body, not a crash).
MAX_RESPONSE_DEPTH = 128
_MARKERS = (MARKER,)
#: What an unpaired surrogate of an answer becomes (U+FFFD REPLACEMENT CHARACTER, as a UTF-8 decoder
#: does with bytes it cannot read).
REPLACEMENT = "\ufffd"

#: The most of an unreadable answer's text a result shows (characters; an error page's excerpt is as long).
EXCERPT_CHARS = 200
#: What stands for an excerpt that could spell a secret the scrub cannot see (escapes, another encoding).
WITHHELD_ESCAPES = "[withheld: the body holds escapes or NUL bytes that could spell a credential]"

#: A JSON escape of a surrogate code unit (RFC 8259 §7: ``\uD800``-``\uDFFF``, any case); a body
#: without one cannot decode to an unpaired surrogate
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def safe_text(text: str) -> str:
    """`text` with every unpaired surrogate (U+D800-U+DFFF; valid JSON can spell one, ``"\\ud800"``,
    but no UTF-8 can carry it: RFC 8259 §8.2) replaced by `REPLACEMENT`. A valid pair was already
    joined into one character by the JSON parser, so every surrogate left is unpaired."""
    return LONE_SURROGATE.sub(REPLACEMENT, text)


def _safe_value(value: Any) -> Any:
    """A decoded JSON value with `safe_text` applied to every string and member name (depth bounded
    by `MAX_RESPONSE_DEPTH`, checked first)."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_text(k): _safe_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_safe_value(v) for v in value]
    return value


def scrub(value: Any, secret_values: list[str]) -> Any:
    """`value` with every occurrence of a secret (in strings and object keys) replaced by
    ``"[redacted]"``, never rewriting a marker already there (`toolgen.runtime.redaction.cover`: a
    one-letter secret leaves ``[redacted]`` whole). Bounded depth: it runs on decoded bodies already checked by `depth_exceeds`
    and on arguments bounded by `MAX_ARGUMENT_DEPTH`."""
    if not secret_values:
        return value
    if isinstance(value, str):
        return cover(value, secret_values, _MARKERS, MARKER)
    if isinstance(value, dict):
        return {scrub(k, secret_values): scrub(v, secret_values) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, secret_values) for v in value]
    return value


#: What to do about JSON encoded twice (`mismatch_text`).
DOUBLED_JSON_HINT = (
    "the JSON was encoded twice. A mock that answers from the spec (Prism's static mode) sends a spec's "
    "`example` as written, so a spec whose examples are strings holding JSON gets such answers: write "
    "the spec's examples as JSON objects and arrays, not strings, or let the mock generate answers from "
    "the schemas (`prism mock -d`); a real API that answers this way does not follow its spec: report "
    "it to the API's owner"
)
_ARTICLE = {"object": "an object", "array": "an array", "integer": "an integer"}


def doubled_json(value: Any) -> str | None:
    """``"object"`` or ``"array"`` when `value` is a string whose whole text (blanks around it
    aside) is a JSON object or array: JSON encoded twice, as a spec's example written as a string
    holding JSON is answered by a mock. None otherwise (any other string, any other value)."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if len(text) < 2 or text[0] + text[-1] not in ("{}", "[]"):
        return None
    try:
        parsed = strict_json(text)
    except (ValueError, RecursionError):
        return None
    return "object" if isinstance(parsed, dict) else "array" if isinstance(parsed, list) else None


def mismatch_text(pointer: str, message: str, instance: Any, declared: Iterable[str] | None = None) -> str:
    """A schema mismatch of an answer for a human and a model: ``<pointer>: <message>``, or, when
    the value at `pointer` is a string holding a JSON object or array (`doubled_json`), what the
    spec declares there (`declared`: its JSON Schema types; None: not known), what came, and what to do
    (`DOUBLED_JSON_HINT`)."""
    held = doubled_json(instance)
    if held is None:
        return f"{pointer or '/'}: {message}"
    types = [t for t in declared or () if t != "null"]
    wanted = " or ".join(_ARTICLE.get(t, f"a {t}") for t in types) or "JSON data, not a string"
    return (
        f"the answer's JSON at {pointer or '/'} is a string holding a JSON {held} where the spec declares "
        f"{wanted}: {DOUBLED_JSON_HINT}"
    )


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


def decode_body(
    headers: httpx.Headers | None, content: bytes, expect: str | None = None
) -> tuple[Any, str | None]:
    """(decoded body, problem) by the answer's Content-Type (`toolgen.results.media_kind`) and what
    the spec says may come (`expect`, the row's ``output.body``): JSON for JSON media types (any
    ``+json`` type, ``text/json``, with or without parameters), and tried first for a wildcard or
    missing type and, when the spec says JSON (``expect == "json"``), for any type but HTML (a
    springdoc ``*/*`` answer labelled ``text/plain`` or ``application/octet-stream``); text for
    other text; `toolgen.results.binary_summary` for binary. `problem` is set, and the body not to
    be trusted, when a JSON body does not parse or nests deeper than `MAX_RESPONSE_DEPTH`, or the
    API sent an HTML page where the spec declares none (an error or login page, never a tool
    result); a declared text answer (``expect == "text"``: ``text/html`` among them) is text. No
    string of the value holds an unpaired surrogate (`safe_text`): valid JSON that escapes one
    (``"\\ud800"``) is read with U+FFFD in its place, so the result can always be encoded as UTF-8."""
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
            return (_safe_value(value) if _SURROGATE_ESCAPE.search(content) else value), None
    if html and expect != "text":
        return content[:2000].decode("utf-8", "replace"), "an HTML page where data was expected"
    if kind in ("text", "any"):  # a codec such as UTF-7 can spell an unpaired surrogate too
        return safe_text(content.decode(text_charset(headers) or "utf-8", "replace")), None
    return binary_summary(ctype, len(content)), None


def excerpt(content: bytes, headers: httpx.Headers | None, secret_values: list[str]) -> str:
    """The start of an answer's bytes as text a result can show: decoded by its ``charset`` (UTF-8
    when none; bytes that do not decode, and unpaired surrogates, become U+FFFD), every secret of the
    call replaced (`scrub`), at most `EXCERPT_CHARS` characters (a longer text ends with ``"…"``).
    A text holding a backslash or a NUL while the call has secrets is withheld (`WITHHELD_ESCAPES`): a
    JSON or other escape (``\\u0073``), or UTF-16/32 read as UTF-8, could spell a secret that `scrub`
    does not see. Never raises."""
    longest = max((len(s) for s in secret_values), default=0)
    # enough characters that a secret starting inside the shown ones ends inside the decoded text
    text, whole = _decoded_start(content, text_charset(headers) or "utf-8", EXCERPT_CHARS + longest + 1)
    text = str(scrub(safe_text(text), secret_values))
    if secret_values and ("\\" in text or "\x00" in text):
        return WITHHELD_ESCAPES
    return text if len(text) <= EXCERPT_CHARS and whole else text[:EXCERPT_CHARS] + "…"


def _decoded_start(content: bytes, charset: str, chars: int) -> tuple[str, bool]:
    """(the text of `content`'s first bytes, at least `chars` characters of it unless it is shorter,
    whether that is all of it). A character may take any number of bytes (UTF-7 writes one alone in
    five, an ISO-2022 escape sequence spells none), so no count of bytes is sure to hold `chars`
    characters: the window doubles until it does, each decoded at once (an incremental UTF-7 decoder
    decodes a long shifted run again on every chunk), so at most twice the body is decoded. A window
    cut inside a character ends with U+FFFD; 16 characters more than asked for keep that off the
    characters that count. Bytes that do not decode become U+FFFD."""
    size = 4 * (chars + 16)
    while True:
        window = content[:size]
        try:
            text = window.decode(charset, "replace")
        except (LookupError, ValueError, TypeError):  # a codec that refuses "replace": read as UTF-8
            text = window.decode("utf-8", "replace")
        if len(window) == len(content):
            return text, True
        if len(text) >= chars + 16:
            return text, False
        size *= 2
