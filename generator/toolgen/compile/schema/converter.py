"""The schema converter: one OpenAPI Schema Object -> canonical JSON Schema 2020-12 (see the package).

Input: a Schema Object of a `SpecDocument` (raw, possibly a ``{"$ref": ...}``), the JSON pointer where
it sits and a context (``"input"`` or ``"output"``). Output: a fresh canonical schema, recursive parts
under a root ``$defs``. `SchemaConverter` walks the structure (properties, items, applicators) and
hands each keyword family to its own module: `refs` (``$ref``, cycles), `composition` (``allOf``),
`nullability` (``nullable``, readOnly/writeOnly) and `formats` (the value keywords).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...diagnostics import Diagnostic, DiagnosticError, DiagnosticSink
from ...pointer import join_pointer, resolve_pointer
from ..load import SpecDocument
from .composition import CompositionMixin, admit_dropped, drop_properties
from .formats import COUNT_KEYS, MAX_COUNT, finish_values, value_keyword
from .nullability import ReadWriteMixin, make_nullable
from .refs import RefsMixin, Scc, def_name_for_pointer
from .satisfiable import repair
from .tree import (
    EMPTY,
    ONE_SCHEMA,
    SCHEMA_LIST,
    SCHEMA_MAP,
    Built,
    Context,
    JSONSchema,
    copy_dict,
    measure_node,
    show,
)

TOO_LARGE_HINT = "project the output (output.fields) or raise budgets.max_schema_nodes"
TOO_DEEP_HINT = "project the output (output.fields) or raise budgets.max_schema_depth"


@dataclass(frozen=True)
class SchemaBudget:
    """Limits for one converted schema (after inlining, including ``$defs``)."""

    max_nodes: int = 20_000  # schema nodes (dicts in schema positions), see `schema_nodes`
    max_depth: int = 64  # nesting depth of schema nodes; the root alone has depth 1


class SchemaConverter(RefsMixin, CompositionMixin, ReadWriteMixin):
    """Converts OpenAPI Schema Objects of one document into canonical JSON Schema 2020-12.

    One converter per document: it memoises converted ``$ref`` targets per (pointer, context), the
    reference graph's strongly connected components, and readOnly/writeOnly flags.
    """

    def __init__(
        self,
        doc: SpecDocument,
        sink: DiagnosticSink,
        budget: SchemaBudget = SchemaBudget(),
        *,
        allow_external_refs: bool = False,
    ) -> None:
        self.doc = doc
        self.sink = sink
        self.budget = budget
        self.allow_external_refs = allow_external_refs
        self._cache: dict[tuple[str, str], Built] = {}
        self._in_progress: set[tuple[str, str]] = set()
        self._measured: dict[int, tuple[int, int]] = {}  # id(cached fragment) -> (nodes, depth)
        self._fragment_ids: set[int] = set()
        self._rw_memo: dict[str, tuple[bool, bool]] = {}
        self._edges_memo: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
        self._scc_of: dict[str, int] = {}
        self._sccs: list[Scc] = []
        self._def_ptr: dict[str, str] = {}  # $defs name -> pointer
        self._warned: dict[int, Diagnostic] = {}  # SCC -> its schema-cycle note, emitted again on each use
        #: what building a cached target emitted, emitted again whenever it is reused, so what one
        #: conversion reports never depends on which conversions ran before it (`toolgen.compile.lower.reuse`)
        self._notes: dict[tuple[str, str], tuple[Diagnostic, ...]] = {}

    def convert(
        self, node: Any, pointer: str, context: Context, *, copy: bool = True, check_nodes: bool = True
    ) -> JSONSchema:
        """Convert the schema `node` (found at JSON `pointer` of ``doc.data``) for `context`.

        Returns a fresh canonical JSON Schema 2020-12 dict; recursive schemas appear under a
        root-level ``$defs``. Raises `DiagnosticError` (codes ``ref-*``, ``schema-allof-conflict``,
        ``schema-too-large``); emits ``schema-cycle`` notes (info) to the sink.

        ``copy=False`` skips the final deep copy: the result then shares sub-objects with the
        converter's memo (and with other results), so the caller must treat it as read-only and copy
        what it changes (`project_schema` and `limit_depth` build new trees). On a large response
        schema the copy costs more than the conversion.

        ``check_nodes=False`` (with ``copy=False``) leaves the node budget to the caller, which checks
        it on what the model sees: a request body's members after `hide` and `args` (`measure`
        counts a part of the shared result without expanding it). The depth budget still applies.
        """
        if context not in ("input", "output"):
            raise ValueError(f"context must be 'input' or 'output', not {context!r}")
        try:
            built = self._build(node, pointer, context, 1)
        except _TooDeep:
            # located at this schema, as the measure below locates it: where a nested target first
            # passed the budget depends on which conversions ran before (a memoised target is not
            # walked again), and what one conversion reports must not (`toolgen.compile.lower.reuse`)
            raise self._too_deep(pointer) from None
        root, refs = built.schema, built.refs
        # A root that is a reference to a recursive schema: inline that schema one level.
        for _ in range(16):
            target = root.get("$ref")
            if not (isinstance(target, str) and target.startswith("#/$defs/")):
                break
            def_ptr = self._def_ptr[target[len("#/$defs/") :]]
            body = self._cached(def_ptr, context, 1)
            rest = {k: v for k, v in root.items() if k != "$ref"}
            merged = self._merge_built(body, Built(rest, EMPTY, {}, EMPTY, pointer), pointer)
            root, refs = merged.schema, refs | body.refs
        defs: dict[str, JSONSchema] = {}
        todo = sorted(refs, reverse=True)
        seen = set(refs)
        while todo:
            def_ptr = todo.pop()
            body = self._cached(def_ptr, context, 2)
            defs[def_name_for_pointer(def_ptr)] = body.schema
            for ref in sorted(body.refs - seen, reverse=True):
                seen.add(ref)
                todo.append(ref)
        if defs:
            root = dict(root)
            root.pop("$defs", None)
            root["$defs"] = {name: defs[name] for name in sorted(defs)}
        nodes, depth = self._measure(root, {})
        if depth > self.budget.max_depth:
            raise self._too_deep(pointer)
        if check_nodes and nodes > self.budget.max_nodes:
            raise DiagnosticError.one(
                "schema-too-large",
                f"schema expands to {nodes:,} nodes after inlining $refs "
                f"(budget {self.budget.max_nodes:,} nodes)",
                self.doc.locate(pointer),
                TOO_LARGE_HINT,
            )
        if defs:
            self._warn_cycles(sorted(seen))
        return copy_dict(root) if copy else root

    def _cached(self, pointer: str, context: str, level: int) -> Built:
        key = (pointer, context)
        hit = self._cache.get(key)
        if hit is not None:
            for note in self._notes.get(key, ()):  # what building it found, again: the sink keeps one
                self.sink.add(note)
            return hit
        if key in self._in_progress:  # pragma: no cover - the SCC analysis prevents this
            raise DiagnosticError.one(
                "ref-cycle",
                f"$ref cycle through #{self.doc.source_pointer(pointer)} could not be broken",
                self.doc.locate(pointer),
                "report this as a toolgen bug",
            )
        self._in_progress.add(key)
        outer = self.sink
        self.sink = noting = _Noting(outer)
        try:
            node = resolve_pointer(self.doc.data, pointer)
            built = self._build(node, pointer, context, level)
        finally:
            self._in_progress.discard(key)
            self.sink = outer
        self._cache[key] = built
        if noting.notes:
            self._notes[key] = tuple(noting.notes)
        self._fragment_ids.add(id(built.schema))
        return built

    def _measure(self, node: Any, memo: dict[int, tuple[int, int]]) -> tuple[int, int]:
        return measure_node(node, memo, self._measured, self._fragment_ids)

    def measure(self, node: Any, memo: dict[int, tuple[int, int]]) -> int:
        """Schema nodes of `node`, a part of a result of ``convert(copy=False)``, as if expanded.

        Linear in the distinct objects it shares (never expanded): `memo` (``id -> (nodes, depth)``)
        may be shared by several calls on parts of one result."""
        return self._measure(node, memo)[0]

    def _too_deep(self, pointer: str) -> DiagnosticError:
        return _TooDeep.one(
            "schema-too-large",
            f"schema nests more than {self.budget.max_depth} levels deep after inlining $refs "
            f"(budget {self.budget.max_depth} levels)",
            self.doc.locate(pointer),
            TOO_DEEP_HINT,
        )

    def _build(self, node: Any, pointer: str, context: str, level: int) -> Built:
        if level > self.budget.max_depth:
            raise self._too_deep(pointer)
        if node is True:
            return Built({}, EMPTY, {}, EMPTY, pointer)
        if node is False:
            return Built({"not": {}}, EMPTY, {}, EMPTY, pointer)
        if not isinstance(node, dict):
            self.sink.warning(
                "schema-invalid",
                f"expected a schema object, found {type(node).__name__}; read as {{}} (any)",
                self.doc.locate(pointer),
                "fix the schema in the spec",
            )
            return Built({}, EMPTY, {}, EMPTY, pointer)
        parts: list[Built] = []
        if "$ref" in node:
            parts.append(self._ref_part(node, pointer, context, level))
        branches = node.get("allOf")
        if isinstance(branches, list):
            for i, branch in enumerate(branches):
                parts.append(self._build(branch, join_pointer(pointer, "allOf", i), context, level))
        local = self._plain(node, pointer, context, level)
        if parts:
            result = parts[0]
            rest = parts[1:] + ([local] if local.schema or local.dropped else [])
            for part in rest:
                result = self._merge_built(result, part, pointer)
            if rest and result.dropped:
                result = drop_properties(result)
        else:
            result = local
        if context == "output" and result.dropped:
            result = result._replace(schema=admit_dropped(result.schema, result.dropped))
        if node.get("nullable") is True or node.get("x-nullable") is True:
            result = result._replace(schema=make_nullable(result.schema))
        return result

    def _ref_part(self, node: dict[str, Any], pointer: str, context: str, level: int) -> Built:
        target = self._ref_pointer(node["$ref"], pointer)
        self._check_schema_target(node["$ref"], target, self._lookup(target, pointer), pointer)
        if self._is_recursive(target, pointer):
            name = def_name_for_pointer(target)
            self._def_ptr[name] = target
            return Built({"$ref": "#/$defs/" + name}, frozenset([target]), {}, EMPTY, target)
        return self._cached(target, context, level)

    def _plain(self, node: dict[str, Any], pointer: str, context: str, level: int) -> Built:
        """The keywords of `node` other than $ref/allOf/nullable: the structure (properties, items,
        applicators) converted here, each value keyword by `formats`."""
        out: JSONSchema = {}
        refs: set[str] = set()
        origin: dict[str, str] = {}
        dropped: list[str] = []

        def sub(value: Any, *tokens: str | int) -> Any:
            built = self._build(value, join_pointer(pointer, *tokens), context, level + 1)
            refs.update(built.refs)
            return built.schema

        def sub_or_bool(value: Any, *tokens: str | int) -> Any:
            return value if isinstance(value, bool) else sub(value, *tokens)

        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                props: dict[str, Any] = {}
                for name, prop in value.items():
                    read_only, write_only = self._rw(prop)
                    if (context == "input" and read_only) or (context == "output" and write_only):
                        dropped.append(name)
                        continue
                    props[name] = sub(prop, "properties", name)
                    origin[name] = join_pointer(pointer, "properties", name)
                out["properties"] = props
            elif key in SCHEMA_MAP and isinstance(value, dict):
                out[key] = {name: sub(v, key, name) for name, v in value.items()}
            elif key in ONE_SCHEMA:
                if key in (
                    "additionalProperties",
                    "unevaluatedProperties",
                    "unevaluatedItems",
                ) and isinstance(value, bool):
                    out[key] = value
                else:
                    out[key] = sub(value, key)
            elif key in SCHEMA_LIST and isinstance(value, list):
                if value:  # JSON Schema 2020-12: allOf/anyOf/oneOf/prefixItems are non-empty arrays
                    out[key] = [sub(v, key, i) for i, v in enumerate(value)]
                else:
                    self._invalid_keyword(pointer, key, value, "a non-empty list of schemas")
            elif key == "items":
                out.update(_items_keywords(value, node.get("additionalItems"), sub, sub_or_bool))
            else:  # a value keyword (type, required, enum, bounds, format, ...): `formats`
                expected = value_keyword(key, value, out, node)
                if expected is not None:
                    self._invalid_keyword(pointer, key, value, expected)
                elif key in COUNT_KEYS and out[key] > MAX_COUNT:
                    self._lowered_bound(pointer, key, out)
        _drop_required(out, dropped)
        finish_values(out, node, context)
        if context == "input":
            for problem in repair(out):
                self.sink.warning(
                    "schema-unsatisfiable",
                    f"no value satisfies this input schema: {problem.message}",
                    self.doc.locate(join_pointer(pointer, problem.keyword)),
                    problem.hint,
                )
        return Built(out, frozenset(refs), origin, frozenset(dropped), pointer)

    def _invalid_keyword(self, pointer: str, key: str, value: Any, expected: str) -> None:
        """A keyword whose value JSON Schema 2020-12 does not allow: dropped, with a located warning
        (left in, it would make every emitted catalog invalid; the spec stays the thing to fix)."""
        shown = show(value) if not isinstance(value, str) else repr(value)
        self.sink.warning(
            "schema-keyword-invalid",
            f"`{key}: {shown[:80]}` is not valid JSON Schema ({key} must be {expected}); dropped",
            self.doc.locate(join_pointer(pointer, key)),
            "fix the schema in the spec",
        )

    def _lowered_bound(self, pointer: str, key: str, out: JSONSchema) -> None:
        """A length or count bound above `MAX_COUNT`: lowered to it, with a located warning."""
        self.sink.warning(
            "schema-bound-too-large",
            f"`{key}: {show(out[key])[:40]}` is above 2**53 - 1, the largest count a validator reads "
            f"exactly; lowered to {MAX_COUNT} (no instance is that long)",
            self.doc.locate(join_pointer(pointer, key)),
            f"write a {key} of at most {MAX_COUNT} in the spec",
        )
        out[key] = MAX_COUNT


class _TooDeep(DiagnosticError):
    """``schema-too-large`` for a schema nested past ``budgets.max_schema_depth`` (`convert` locates
    it at the converted schema, wherever inside it the budget was passed)."""


class _Noting(DiagnosticSink):
    """A sink that passes every diagnostic on to `target` and keeps them (`SchemaConverter._cached`)."""

    def __init__(self, target: DiagnosticSink) -> None:
        super().__init__()
        self.target = target
        self.notes: list[Diagnostic] = []

    def add(self, diagnostic: Diagnostic) -> None:
        self.notes.append(diagnostic)
        self.target.add(diagnostic)


def _items_keywords(
    items: Any, additional: Any, sub: Callable[..., Any], sub_or_bool: Callable[..., Any]
) -> dict[str, Any]:
    """``items`` converted: a schema (or boolean) as it is; the draft-04 tuple form as
    ``prefixItems`` (an empty tuple constrains nothing) and its ``additionalItems`` as ``items``."""
    if not isinstance(items, list):
        return {"items": sub_or_bool(items, "items")}
    out: dict[str, Any] = {}
    if items:
        out["prefixItems"] = [sub(v, "items", i) for i, v in enumerate(items)]
    if additional is not None:
        out["items"] = sub_or_bool(additional, "additionalItems")
    return out


def _drop_required(out: JSONSchema, dropped: list[str]) -> None:
    """`required` without the properties this context does not see (`dropped`); gone when none is left."""
    if "required" not in out:
        return
    required = [r for r in out["required"] if r not in dropped]
    if required:
        out["required"] = required
    else:
        del out["required"]
