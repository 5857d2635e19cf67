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

from ...diagnostics import Diagnostic, DiagnosticError
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
        return DiagnosticError([Diagnostic(
            "schema-allof-conflict", "error",
            f"allOf branches conflict on {what}: "
            f"{show(a_value)} at #{self.doc.source_pointer(a_ptr)} vs {show(b_value)} at "
            f"#{self.doc.source_pointer(b_ptr)}",
            self.doc.locate(b_ptr),
            "make the allOf branches agree (or drop one of the definitions)")])

    def _merge(self, a: JSONSchema, b: JSONSchema, a_ptr: str, b_ptr: str,
               a_origin: Mapping[str, str], b_origin: Mapping[str, str], at: str,
               what: str = "") -> JSONSchema:
        """allOf of two canonical schemas as one schema; `b` wins for annotations."""
        if a is b or not b:
            return a
        if not a:
            return b
        out = dict(a)
        leftover: list[JSONSchema] = []
        label = f"property {what!r}" if what else "the schema"
        for key, bv in b.items():
            if key not in out:
                out[key] = bv
                continue
            av = out[key]
            if av is bv:
                continue
            if key == "type":
                merged_type = _intersect_types(av, bv)
                if merged_type is None:
                    raise self._conflict(f"the type of {label}", av, bv, a_ptr, b_ptr)
                out["type"] = merged_type
            elif key in ("properties", "patternProperties", "dependentSchemas"):
                props = dict(av)
                for name, schema in bv.items():
                    if name in props:
                        pa = a_origin.get(name, join_pointer(a_ptr, key, name)) if key == "properties" \
                            else join_pointer(a_ptr, key, name)
                        pb = b_origin.get(name, join_pointer(b_ptr, key, name)) if key == "properties" \
                            else join_pointer(b_ptr, key, name)
                        inner = f"{what}.{name}" if what else name
                        props[name] = self._merge(props[name], schema, pa, pb, {}, {}, at, inner)
                    else:
                        props[name] = schema
                out[key] = props
            elif key == "required":
                out[key] = list(dict.fromkeys(list(av) + list(bv)))
            elif key in ("additionalProperties", "unevaluatedProperties", "unevaluatedItems", "items",
                         "contains", "propertyNames", "contentSchema"):
                if av is False or bv is False:
                    out[key] = False
                elif av is True or av == {}:
                    out[key] = bv
                elif bv is True or bv == {}:
                    out[key] = av
                else:
                    out[key] = self._merge(av, bv, join_pointer(a_ptr, key), join_pointer(b_ptr, key),
                                           {}, {}, at, what)
            elif key == "enum":
                b_keys = {value_key(v) for v in bv}
                common = [v for v in av if value_key(v) in b_keys]
                if not common:
                    raise self._conflict(f"the enum of {label}", av, bv, a_ptr, b_ptr)
                out[key] = common
            elif key == "const":
                if value_key(av) != value_key(bv):
                    raise self._conflict(f"the const of {label}", av, bv, a_ptr, b_ptr)
            elif key in _LOWER_BOUNDS or key in _UPPER_BOUNDS:
                if is_number(av) and is_number(bv):
                    out[key] = max(av, bv) if key in _LOWER_BOUNDS else min(av, bv)
                else:
                    out[key] = bv
            elif key in ("uniqueItems", "deprecated"):
                out[key] = bool(av) or bool(bv)
            elif key in ("title", "description", "default", "format", "contentEncoding",
                         "contentMediaType"):
                out[key] = bv
            elif key == "dependentRequired" and isinstance(av, dict) and isinstance(bv, dict):
                dep = {k: list(v) for k, v in av.items()}
                for k, v in bv.items():
                    dep[k] = list(dict.fromkeys(dep.get(k, []) + list(v)))
                out[key] = dep
            elif key == "allOf":
                out[key] = list(av) + list(bv)
            elif key == "$defs":
                out[key] = {**av, **bv}
            elif key in ("if", "then", "else"):
                if key == "if":
                    leftover.append({k: b[k] for k in ("if", "then", "else") if k in b})
            elif same_value(av, bv):
                continue
            else:  # anyOf, oneOf, not, $ref, pattern, multipleOf, prefixItems: keep both
                leftover.append({key: bv})
        if leftover:
            out["allOf"] = list(out.get("allOf", [])) + leftover
        return out


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
    if not dropped or not any(key in schema and schema[key] is not True
                              for key in ("additionalProperties", "unevaluatedProperties")):
        return schema
    pattern = "^(?:" + "|".join(re.escape(name) for name in sorted(dropped)) + ")$"
    patterns = schema.get("patternProperties")
    out = dict(schema)
    out["patternProperties"] = {**(patterns if isinstance(patterns, dict) else {}), pattern: {}}
    return out
