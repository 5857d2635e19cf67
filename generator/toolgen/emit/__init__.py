"""Stage `emit`: IR -> files in memory (`dict[str, bytes]`, relative path -> content).

Input: the `ApiIR` (and the catalogs built from it). Output: the catalogs (`catalogs`: one per
dialect, and `toolgen.dialects.deferred_views` for toolsets and deferred tools), the policy table
(`policy`: policy.json, POLICY.md), the tool-search index (`search`: search.json), the up-front cost
(`upfront`), REPORT.md (`report`) and the Python package (`python`, whose only way to write spec
text into code is `pyliteral`). Nothing here touches the disk; `write` does. Every JSON file is serialised by `json_bytes` (sorted keys, two-space indent,
UTF-8, final newline), so output is byte-identical across runs.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any


def json_bytes(value: Any) -> bytes:
    """Deterministic JSON: sorted keys, 2-space indent, non-ASCII kept, final newline.

    Byte-identical to ``json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)``; the standard
    library serialises indented JSON in pure Python through generators, which costs seconds on a
    catalog of thousands of tools, so plain JSON trees go through a flatter encoder (strings, numbers
    and keys still use the standard library's C routines); anything else takes the standard path.
    """
    try:
        text = _indented(value, "")
    except (_Unsupported, RecursionError):
        text = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


class _Unsupported(Exception):
    """A value `_indented` leaves to `json.dumps` (non-string keys, tuples, custom types...)."""


def _indented(value: Any, indent: str) -> str:
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is dict:
        if not value:
            return "{}"
        inner = indent + "  "
        for key in value:
            if type(key) is not str:
                raise _Unsupported
        return ("{\n" + inner + (",\n" + inner).join(
            [encode_basestring(k) + ": " + _indented(value[k], inner) for k in sorted(value)])
            + "\n" + indent + "}")
    if kind is list:
        if not value:
            return "[]"
        inner = indent + "  "
        return "[\n" + inner + (",\n" + inner).join([_indented(v, inner) for v in value]) + "\n" + indent + "]"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int or kind is float:
        return json.dumps(value)
    raise _Unsupported


def compact_json(value: Any) -> str:
    """The compact form used to measure catalog bytes and tokens (what an SDK would send)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
