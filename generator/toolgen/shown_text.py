"""Text shown to a human to read and decide on (what `toolgen approve` prints, the message of an
approval round over MCP, `toolgen.runtime.serving.elicit`), made safe to show.

Input: text that may hold characters taken from a spec, an API or a caller (arguments, URLs,
actor names). Output: the same text where every character that could move the cursor, start a
terminal control sequence, break a line or reorder what is shown is written as a visible escape.

Escaped: every control character (Unicode category Cc: C0, DEL, C1 such as U+009B CSI and U+0085
NEL) except the newline the command itself writes, format characters (Cf: the bidirectional
embeddings, overrides and isolates U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C, zero-width
characters), line and paragraph separators (Zl/Zp: U+2028, U+2029), surrogates, private-use and
unassigned code points. An escape is ``\\uXXXX`` (``\\UXXXXXXXX`` above U+FFFF), which inside a
JSON string is the same string again, so JSON output stays valid JSON with the same values.
"""

from __future__ import annotations

import unicodedata

__all__ = ["terminal_safe"]

_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def terminal_safe(text: str, *, keep_newlines: bool = True) -> str:
    """`text` with every unsafe character (see the module docstring) escaped; ``"\\n"`` is kept
    unless `keep_newlines` is false. Printable ASCII (U+0020 to U+007E) is safe: such a text is
    returned as it is, without a look at each character (`toolgen build` prints hundreds of
    findings)."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(
        _escape(c)
        if unicodedata.category(c) in _UNSAFE_CATEGORIES and not (keep_newlines and c == "\n")
        else c
        for c in text
    )
