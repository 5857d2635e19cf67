"""Nullability: OpenAPI 3.0 ``nullable`` / ``x-nullable`` -> a JSON Schema null type, and which
properties a context sees (``readOnly`` ones are not input, ``writeOnly`` ones are not output).

Input: a converted schema (for `make_nullable`) or a raw property schema (for the readOnly/writeOnly
flags, followed through ``$ref`` and ``allOf``). Output: a new schema that also accepts null (the
type gains ``"null"``, or the schema is wrapped as ``anyOf: [..., {"type": "null"}]`` when an
applicator could reject null), and the (readOnly, writeOnly) flags the converter filters
properties by.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ...pointer import PointerError, ref_to_pointer, resolve_pointer
from ..load import SpecDocument
from .formats import normalise_type
from .tree import JSONSchema, as_list

#: annotations kept outside the `anyOf` wrapper when a schema is made nullable by wrapping
_ANNOTATIONS = ("title", "description", "default", "deprecated")
#: keywords that could reject null even when `type` allows it
_NULL_REJECTING = ("anyOf", "oneOf", "allOf", "$ref", "not", "const", "if")


def make_nullable(schema: JSONSchema) -> JSONSchema:
    """The schema that also accepts JSON null (a new dict; `schema` is not modified)."""
    if not schema:
        return schema  # {} accepts null already
    rejecting = [k for k in _NULL_REJECTING if k in schema]
    if "type" in schema and not rejecting:
        out = dict(schema)
        types = as_list(schema["type"])
        if "null" not in types:
            out["type"] = normalise_type([*types, "null"])
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    if not rejecting:
        if "enum" in schema and None not in schema["enum"]:
            return {**schema, "enum": [*schema["enum"], None]}
        return schema  # no type and no applicator: null is accepted already
    core = {k: v for k, v in schema.items() if k not in _ANNOTATIONS}
    notes = {k: v for k, v in schema.items() if k in _ANNOTATIONS}
    if list(core) == ["anyOf"]:
        if any(b == {"type": "null"} for b in core["anyOf"]):
            return schema
        return {"anyOf": [*core["anyOf"], {"type": "null"}], **notes}
    return {"anyOf": [core, {"type": "null"}], **notes}


class ReadWriteMixin:
    """readOnly / writeOnly flags of raw property schemas, memoised per `$ref` target."""

    doc: SpecDocument
    _rw_memo: dict[str, tuple[bool, bool]]

    def _rw(self, node: Any, depth: int = 0) -> tuple[bool, bool]:
        """(readOnly, writeOnly) of a raw schema: its own flags, through $ref and allOf."""
        if not isinstance(node, dict) or depth > 64:
            return False, False
        read_only = node.get("readOnly") is True
        write_only = node.get("writeOnly") is True
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = ref_to_pointer(ref)
            if target is not None:
                if target not in self._rw_memo:
                    self._rw_memo[target] = (False, False)  # breaks cycles
                    with contextlib.suppress(PointerError):
                        self._rw_memo[target] = self._rw(resolve_pointer(self.doc.data, target), depth + 1)
                r, w = self._rw_memo[target]
                read_only, write_only = read_only or r, write_only or w
        branches = node.get("allOf")
        if isinstance(branches, list):
            for branch in branches:
                r, w = self._rw(branch, depth + 1)
                read_only, write_only = read_only or r, write_only or w
        return read_only, write_only
