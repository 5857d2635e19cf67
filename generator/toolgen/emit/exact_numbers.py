"""Exact bounds for `type: number` in `models.py`: a bound a double cannot hold, and the values near it.

Input: the JSON Schema document given to datamodel-code-generator (`toolgen.emit.python.ModelsPlan`),
then the module it wrote. Output: the document with each such number schema marked, then the module
with each mark replaced by a type that compares exactly.

datamodel-code-generator writes a number's bounds as floats (``confloat(ge=9007199254740992.0)`` for
``minimum: 9007199254740993``), and pydantic turns the value into a float before it compares, so
beyond 2**53 both the bound and the value may round: the model accepted 9007199254740992, and
``maximum: 2**54`` accepted 2**54 + 1. The runtime's validator (jsonschema-rs over the policy table's
input schema) compares JSON numbers exactly. So a ``type: number`` schema (or ``[number, null]``)
with a bound (``minimum``, ``maximum``, ``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf``)
of magnitude 2**53 or more is given to datamodel-code-generator as a ``Literal`` of one marker
string (``x-python-type``, which writes the type it names and drops the bounds), whose text states
the bounds; `exact_bounds` then writes that field's type as
``Annotated[int | float, Field(ge=9007199254740993), WithJsonSchema(...)]``: pydantic keeps an
integer an ``int`` and a float a ``float`` and compares either with the bound in Python, exactly, as
JSON Schema does, and the model's own JSON Schema states the number and its bounds as the spec does
(pydantic would write a constraint on a union as ``ge``, a keyword JSON Schema does not have). A
number schema with ``enum`` or ``const`` lists its values and is left as it is. Only numbers reach
the module from the marker: each bound is read back as a Python ``int`` or ``float`` and written by
``repr``.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from typing import Any

__all__ = ["EXACT_FROM", "exact_bounds", "mark_inexact_numbers"]

#: A number schema whose bound has at least this magnitude is written exactly (every integer up to
#: 2**53 is a double, and a value beyond it rounds when pydantic turns it into a float).
EXACT_FROM = 2**53

_KEYWORDS = {
    "minimum": "ge",
    "exclusiveMinimum": "gt",
    "maximum": "le",
    "exclusiveMaximum": "lt",
    "multipleOf": "multiple_of",
}
_SCHEMA_KEYWORDS = {name: keyword for keyword, name in _KEYWORDS.items()}
_PREFIX = "toolgen-exact-number"
_ARGUMENT = re.compile(r"^(ge|gt|le|lt|multiple_of)=(-?[0-9][0-9.e+-]*)$")
#: the names the rewritten fields use, imported under names no class of datamodel-code-generator takes
_IMPORTS = (
    "from typing import Annotated as _ExactAnnotated\n"
    "from pydantic import Field as _ExactField, WithJsonSchema as _ExactSchema\n"
)


def mark_inexact_numbers(document: str) -> str:
    """`document` (JSON text) with each number schema whose bounds need exactness (see the module
    docstring) replaced by its marker; `document` itself when there is none."""
    data = json.loads(document)
    prefix = _free_prefix(data)
    marked = _mark(data, prefix)
    return json.dumps(marked, sort_keys=True) if marked != data else document


def exact_bounds(source: str, document: str) -> str:
    """`source` (datamodel-code-generator's module for the marked `document`) with each
    ``Literal['<marker>']`` written as ``_ExactAnnotated[int | float, _ExactField(<bounds>),
    _ExactSchema(<its JSON Schema>)]``, and the three names imported after ``from __future__ import
    annotations``."""
    markers = _markers(json.loads(document))
    if not markers:
        return source
    lines = source.split("\n")
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    edits: list[tuple[int, int, int, str]] = []  # (row, start col, end col, new text), one line each
    for first, bracket, text, close in zip(tokens, tokens[1:], tokens[2:], tokens[3:], strict=False):
        if (first.string, bracket.string, close.string) != (
            "Literal",
            "[",
            "]",
        ) or text.type != tokenize.STRING:
            continue
        value = ast.literal_eval(text.string)
        if value in markers and first.start[0] == close.end[0]:
            edits.append((first.start[0], first.start[1], close.end[1], markers[value]))
    for row, start, end, new in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + new + line[end:]
    out = "\n".join(lines)
    future = "from __future__ import annotations\n"
    if future not in out:
        raise RuntimeError(
            "datamodel-code-generator wrote no `from __future__ import annotations`"
        )  # a toolgen bug
    return out.replace(future, future + _IMPORTS, 1)


def _mark(node: Any, prefix: str) -> Any:
    if isinstance(node, list):
        return [_mark(item, prefix) for item in node]
    if not isinstance(node, dict):
        return node
    out = {
        key: value if key in ("enum", "const", "required") else _mark(value, prefix)
        for key, value in node.items()
    }
    bounds = {key: out[key] for key in _KEYWORDS if _is_number(out.get(key))}
    kind = out.get("type")
    if (
        kind not in ("number", ["number", "null"])
        or "enum" in out
        or "const" in out
        or not any(abs(value) >= EXACT_FROM for value in bounds.values())
    ):
        return out
    marker = prefix + ":" + ",".join(f"{_KEYWORDS[key]}={_literal(value)}" for key, value in bounds.items())
    number = {key: value for key, value in out.items() if key not in _KEYWORDS and key != "type"}
    number.update({"type": "number", "x-python-type": f"typing.Literal[{marker!r}]"})
    return number if kind == "number" else {"anyOf": [number, {"type": "null"}]}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _literal(value: float) -> str:
    """The exact Python literal of a bound: an integral float as the integer it is (every float of
    magnitude 2**53 or more is one)."""
    if isinstance(value, float) and value.is_integer():
        return repr(int(value))
    return repr(value)


def _markers(document: Any) -> dict[str, str]:
    """Marker text -> the type it stands for, from every ``x-python-type`` of `document` that is a
    marker of `_mark` (its bounds read back as numbers, so only numbers reach the module)."""
    out: dict[str, str] = {}
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key == "x-python-type" and isinstance(value, str) and value.startswith("typing.Literal["):
                    text = ast.literal_eval(value[len("typing.Literal[") : -1])
                    bounds = _bounds(text)
                    if bounds is not None:
                        arguments = ", ".join(f"{name}={number!r}" for name, number in bounds)
                        schema = {"type": "number"} | {
                            _SCHEMA_KEYWORDS[name]: number for name, number in bounds
                        }
                        out[text] = (
                            f"_ExactAnnotated[int | float, _ExactField({arguments}), _ExactSchema({schema!r})]"
                        )
                elif key not in ("enum", "const"):
                    stack.append(value)
    return out


def _bounds(marker: str) -> list[tuple[str, int | float]] | None:
    """``[("ge", 1), ("lt", 2)]`` from a marker's text, each number read back as a Python number;
    None when the text is not a marker."""
    head, _, tail = marker.partition(":")
    if not head.startswith(_PREFIX) or not tail:
        return None
    bounds: list[tuple[str, int | float]] = []
    for part in tail.split(","):
        match = _ARGUMENT.match(part)
        if match is None:
            return None
        number = ast.literal_eval(match.group(2))
        if not _is_number(number):
            return None
        bounds.append((match.group(1), number))
    return bounds


def _free_prefix(document: Any) -> str:
    """The marker prefix: `_PREFIX`, numbered when a string of `document` (an enum value) starts so,
    so that no value of the spec is ever read as a marker."""
    texts: set[str] = set()
    stack = [document]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            texts.add(node)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            texts.update(k for k in node if isinstance(k, str))
            stack.extend(node.values())
    prefix, n = _PREFIX, 1
    while any(text.startswith(prefix) for text in texts):
        n += 1
        prefix = f"{_PREFIX}{n}"
    return prefix
