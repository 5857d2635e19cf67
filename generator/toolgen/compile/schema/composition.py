"""Composition: ``allOf`` merged into one schema (``oneOf`` / ``anyOf`` are kept; dialects rewrite them).

Input: two converted parts (`Built`) of one ``allOf``, with where each came from. Output: one schema
that accepts what both accept: types intersected, properties merged recursively, `required` united,
bounds tightened, enums intersected, annotations from the later part; what cannot be merged
(``anyOf``, ``not``, ``pattern``...) is kept side by side under ``allOf``. Contradictions (disjoint
types or enums, different consts) raise a located ``schema-allof-conflict``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...diagnostics import DiagnosticError
from ...pointer import join_pointer
from ..load import SpecDocument
from .formats import normalise_type
from .tree import Built, JSONSchema, as_list, is_number, same_value, show, value_key

_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")


class CompositionMixin:
    """The ``allOf`` merge of the converter."""

    doc: SpecDocument

    def _merge_built(self, a: Built, b: Built, at: str) -> Built:
        schema = self._merge(a.schema, b.schema, a.src, b.src, a.origin, b.origin, at)
        origin = dict(b.origin)
        origin.update(a.origin)
        return Built(schema, a.refs | b.refs, origin, a.dropped | b.dropped, a.src)

    def _conflict(self, what: str, a_value: Any, b_value: Any, a_ptr: str, b_ptr: str) -> DiagnosticError:
        return DiagnosticError.one(
            "schema-allof-conflict",
            f"allOf branches conflict on {what}: "
            f"{show(a_value)} at #{self.doc.source_pointer(a_ptr)} vs {show(b_value)} at "
            f"#{self.doc.source_pointer(b_ptr)}",
            self.doc.locate(b_ptr),
            "make the allOf branches agree (or drop one of the definitions)",
        )

    def _merge(
        self,
        a: JSONSchema,
        b: JSONSchema,
        a_ptr: str,
        b_ptr: str,
        a_origin: Mapping[str, str],
        b_origin: Mapping[str, str],
        at: str,
        what: str = "",
    ) -> JSONSchema:
        """allOf of two canonical schemas as one schema; `b` wins for annotations."""
        if a is b or not b:
            return a
        if not a:
            return b
        out = dict(a)
        leftover: list[JSONSchema] = []
        for key, bv in b.items():
            if key not in out:
                out[key] = bv
                continue
            av = out[key]
            if av is bv:
                continue
            merged = self._merge_keyword(key, av, bv, (a_ptr, b_ptr), (a_origin, b_origin), at, what)
            if merged is not _KEEP_BOTH:
                out[key] = merged
            elif key == "if":  # if/then/else apply together: b's three kept side by side
                leftover.append({k: b[k] for k in ("if", "then", "else") if k in b})
            elif key not in ("then", "else") and not same_value(av, bv):
                leftover.append({key: bv})  # anyOf, oneOf, not, $ref, pattern, multipleOf, prefixItems
        if leftover:
            out["allOf"] = list(out.get("allOf", [])) + leftover
        return out

    def _merge_keyword(
        self,
        key: str,
        av: Any,
        bv: Any,
        ptrs: tuple[str, str],
        origins: tuple[Mapping[str, str], Mapping[str, str]],
        at: str,
        what: str,
    ) -> Any:
        """One keyword both schemas hold, merged: `_KEEP_BOTH` when it cannot be (both are kept under
        ``allOf``). Raises a located ``schema-allof-conflict`` when the two contradict each other."""
        a_ptr, b_ptr = ptrs
        label = f"property {what!r}" if what else "the schema"
        if key == "type":
            merged_type = _intersect_types(av, bv)
            if merged_type is None:
                raise self._conflict(f"the type of {label}", av, bv, a_ptr, b_ptr)
            return merged_type
        if key in ("properties", "patternProperties", "dependentSchemas"):
            return self._merge_members(key, av, bv, ptrs, origins, at, what)
        if key in _SUBSCHEMA_KEYWORDS:
            if av is False or bv is False:
                return False
            if av is True or av == {}:
                return bv
            if bv is True or bv == {}:
                return av
            return self._merge(av, bv, join_pointer(a_ptr, key), join_pointer(b_ptr, key), {}, {}, at, what)
        if key == "enum":
            b_keys = {value_key(v) for v in bv}
            common = [v for v in av if value_key(v) in b_keys]
            if not common:
                raise self._conflict(f"the enum of {label}", av, bv, a_ptr, b_ptr)
            return common
        if key == "const":
            if value_key(av) != value_key(bv):
                raise self._conflict(f"the const of {label}", av, bv, a_ptr, b_ptr)
            return av
        return _merge_annotation(key, av, bv)

    def _merge_members(
        self,
        key: str,
        av: Any,
        bv: Any,
        ptrs: tuple[str, str],
        origins: tuple[Mapping[str, str], Mapping[str, str]],
        at: str,
        what: str,
    ) -> Any:
        """``properties`` (located by where each member came from), ``patternProperties`` or
        ``dependentSchemas`` of both: a member both declare is merged."""
        props = dict(av)
        for name, schema in bv.items():
            if name not in props:
                props[name] = schema
                continue
            pa, pb = (join_pointer(ptr, key, name) for ptr in ptrs)
            if key == "properties":
                pa, pb = origins[0].get(name, pa), origins[1].get(name, pb)
            inner = f"{what}.{name}" if what else name
            props[name] = self._merge(props[name], schema, pa, pb, {}, {}, at, inner)
        return props


#: `CompositionMixin._merge_keyword` of a keyword whose two values are kept side by side
_KEEP_BOTH: Any = object()
#: keywords holding one subschema, merged as schemas (false wins, true and {} give way)
_SUBSCHEMA_KEYWORDS = frozenset(
    {
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "items",
        "contains",
        "propertyNames",
        "contentSchema",
    }
)
#: annotations and formats: the later part's value
_LATER_WINS = frozenset({"title", "description", "default", "format", "contentEncoding", "contentMediaType"})


def _merge_annotation(key: str, av: Any, bv: Any) -> Any:
    """A keyword that never conflicts, merged: bounds tightened, `required` and `allOf` joined,
    flags or-ed, annotations from `bv`, ``dependentRequired`` united, ``$defs`` joined; `_KEEP_BOTH`
    for any other."""
    if key in _LOWER_BOUNDS or key in _UPPER_BOUNDS:
        if is_number(av) and is_number(bv):
            return max(av, bv) if key in _LOWER_BOUNDS else min(av, bv)
        return bv
    if key == "required":
        return list(dict.fromkeys(list(av) + list(bv)))
    if key in ("uniqueItems", "deprecated"):
        return bool(av) or bool(bv)
    if key in _LATER_WINS:
        return bv
    if key == "dependentRequired" and isinstance(av, dict) and isinstance(bv, dict):
        dep = {k: list(v) for k, v in av.items()}
        for k, v in bv.items():
            dep[k] = list(dict.fromkeys(dep.get(k, []) + list(v)))
        return dep
    if key == "allOf":
        return list(av) + list(bv)
    if key == "$defs":
        return {**av, **bv}
    return _KEEP_BOTH


def _intersect_types(a: Any, b: Any) -> Any | None:
    la, lb = as_list(a), as_list(b)
    out: list[str] = []
    for t in la:
        if t in lb or (t == "integer" and "number" in lb):
            out.append(t)
    for t in lb:
        if t == "integer" and "number" in la and t not in out:
            out.append(t)
    if not out:
        return None
    return normalise_type(out)


def drop_properties(built: Built) -> Built:
    """After an allOf merge: remove properties any branch dropped as readOnly/writeOnly."""
    schema = built.schema
    props = schema.get("properties")
    required = schema.get("required")
    out = dict(schema)
    if isinstance(props, dict) and any(name in built.dropped for name in props):
        out["properties"] = {k: v for k, v in props.items() if k not in built.dropped}
    if isinstance(required, list):
        kept = [r for r in required if r not in built.dropped]
        if kept:
            out["required"] = kept
        else:
            del out["required"]
    return built._replace(schema=out)


def admit_dropped(schema: dict[str, Any], dropped: frozenset[str]) -> dict[str, Any]:
    """An output object schema that dropped its `writeOnly` members (`dropped`) but closes its
    members (``additionalProperties``/``unevaluatedProperties`` other than true) admits them again
    through ``patternProperties`` on exactly their names: the spec's own schema accepts an answer
    that carries one, so the tool's output schema must too. Other schemas are returned unchanged."""
    if not dropped or not any(
        key in schema and schema[key] is not True for key in ("additionalProperties", "unevaluatedProperties")
    ):
        return schema
    pattern = "^(?:" + "|".join(re.escape(name) for name in sorted(dropped)) + ")$"
    patterns = schema.get("patternProperties")
    out = dict(schema)
    out["patternProperties"] = {**(patterns if isinstance(patterns, dict) else {}), pattern: {}}
    return out
