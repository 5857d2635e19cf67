"""Stage `emit`, the one trust boundary for spec text entering generated Python.

Input: any value from a spec or an intent map. Output: Python source text that evaluates to exactly
that value (`py_literal`), a proven-safe identifier (`py_identifier`), or the jinja2 environment the
package templates are rendered with (`template_env`).

Every value from a spec or intent map that reaches a generated `.py` file goes through `py_literal`
(built on `repr`, which always yields a valid Python literal for str/int/float/bool/None) or
`py_identifier` (which only accepts names it has proven safe). Templates may not print anything
else: the jinja2 environment built by `template_env` refuses plain strings, so a template that
forgets the `py` filter fails the build instead of emitting unescaped text.
"""

from __future__ import annotations

import keyword
import math
import re
from typing import Any

from .template_path import template_dir

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PyCode(str):
    """Text proven to be safe Python source (a literal or a checked identifier)."""


def py_literal(value: Any, indent: int = 0, width: int = 4) -> PyCode:
    """A Python source literal equal to the JSON value `value`.

    Dicts and lists are laid out one item per line (so black has little to reformat); strings use
    `repr`, so quotes, backslashes, newlines, U+2028 and non-ASCII text cannot end the literal.
    Non-finite floats are refused (JSON has none). Raises TypeError for non-JSON values.
    """
    return PyCode(_render(value, indent, width))


def _render(value: Any, indent: int, width: int) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(int(value))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError("non-finite float cannot be emitted")
        return repr(value)
    if isinstance(value, str):
        return repr(str(value))
    pad = " " * (indent + width)
    end = " " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"dict key {key!r} is not a string")
            items.append(f"{pad}{str(key)!r}: {_render(item, indent + width, width)},")
        return "{\n" + "\n".join(items) + "\n" + end + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        items = [f"{pad}{_render(item, indent + width, width)}," for item in value]
        return "[\n" + "\n".join(items) + "\n" + end + "]"
    raise TypeError(f"cannot emit a {type(value).__name__} as a Python literal")


def py_identifier(name: str) -> PyCode:
    """`name` if it is a plain, non-keyword identifier; ValueError otherwise."""
    if (
        not isinstance(name, str)
        or not _IDENTIFIER.fullmatch(name)
        or keyword.iskeyword(name)
        or keyword.issoftkeyword(name)
    ):
        raise ValueError(f"not a safe Python identifier: {name!r}")
    return PyCode(name)


def to_identifier(text: str, prefix: str = "_") -> str:
    """Derive a safe identifier from arbitrary text (letters/digits/underscore; no keywords)."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", text)
    if not out or out[0].isdigit():
        out = prefix + out
    if keyword.iskeyword(out) or keyword.issoftkeyword(out):
        out += "_"
    return out


def pascal_case(text: str) -> str:
    parts = re.split(r"[^A-Za-z0-9]+", text)
    out = "".join(p[:1].upper() + p[1:] for p in parts if p)
    return to_identifier(out or "Model", prefix="M")


def _finalize(value: Any) -> Any:
    if isinstance(value, PyCode):
        return value
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return repr(value)
    raise TypeError(f"template printed unescaped text {str(value)[:40]!r}; use the `py` or `ident` filter")


def template_env() -> Any:
    """A jinja2 environment over the shipped templates whose output can only be escaped text."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(template_dir())),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["py"] = py_literal
    env.filters["ident"] = py_identifier
    return env
