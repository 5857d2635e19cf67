"""Stage helper `schema`: OpenAPI Schema Objects -> canonical, self-contained JSON Schema 2020-12.

Input: one Schema Object of a loaded `SpecDocument` (a raw dict from ``doc.data``, possibly a
``{"$ref": ...}``), the JSON pointer where it sits (for diagnostics) and a context, ``"input"``
(request parameters and bodies) or ``"output"`` (responses).

Output: a fresh JSON Schema 2020-12 dict (never sharing objects with the document or with earlier
results) in *canonical form*:

* every local ``$ref`` is inlined, except schemas that take part in a reference cycle; those are
  kept once under ``$defs/<Name>`` and referenced as ``{"$ref": "#/$defs/<Name>"}``, so every
  ``$ref`` in a result resolves inside that result. A root that is itself recursive is inlined one
  level, so the root keeps its own keywords (e.g. ``type: object``);
* OpenAPI 3.0 ``nullable`` (and ``x-nullable``) becomes a JSON Schema null type; 3.1 type arrays
  are kept with ``null`` last; no ``nullable`` key remains;
* ``readOnly`` properties are removed from input schemas, ``writeOnly`` ones from output schemas
  (also from ``required``), at every depth and through ``$ref``;
* ``allOf`` is merged into one schema (a conflict raises ``schema-allof-conflict``); ``oneOf`` and
  ``anyOf`` are kept (dialects rewrite them);
* OpenAPI-only keywords (``discriminator``, ``xml``, ``externalDocs``, ``example``, ``examples``)
  and ``x-*`` extensions are dropped; 3.0 boolean ``exclusiveMinimum``/``exclusiveMaximum`` take
  the 2020-12 numeric form; ``enum`` values are de-duplicated; arrays get ``items`` (``{}`` when
  absent); ``type: file`` becomes ``{"type": "string", "format": "binary"}``; ``{}`` stays ``{}``.

Errors raise `DiagnosticError` (they are *not* added to the sink, so a caller may downgrade them,
e.g. skip one operation): ``ref-external``, ``ref-missing``, ``ref-invalid``, ``ref-cycle`` (a
``$ref``/``allOf`` loop without schema content), ``schema-allof-conflict`` and
``schema-too-large`` (node or depth budget exceeded). Warnings go to the sink: ``schema-cycle``
(once per group of mutually recursive schemas) and ``schema-invalid`` (a non-schema value where a
schema was expected; read as ``{}``).

Implementation notes: converted ``$ref`` targets are memoised per (pointer, context) and shared
while a result is assembled; node counts and depth are measured on that shared graph, so a schema
that would explode when inlined is rejected without being expanded; the tree is copied only when
it fits the budget. Cycles are found with Tarjan's algorithm over sorted edges, so names,
messages and output do not depend on dict or set iteration order.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, overload

from ...diagnostics import Diagnostic, DiagnosticError, DiagnosticSink
from ...pointer import PointerError, join_pointer, parse_pointer, ref_to_pointer, resolve_pointer
from ..load import SpecDocument

Context = Literal["input", "output"]
JSONSchema = dict[str, Any]

__all__ = [
    "SchemaBudget",
    "SchemaConverter",
    "copy_tree",
    "def_name_for_pointer",
    "limit_depth",
    "object_view",
    "project_schema",
    "schema_nodes",
]

TOO_LARGE_HINT = "project the output (output.fields) or raise budgets.max_schema_nodes"
TOO_DEEP_HINT = "project the output (output.fields) or raise budgets.max_schema_depth"

# --- keyword tables -----------------------------------------------------------------------------

#: keywords whose value is one schema (booleans allowed)
_ONE_SCHEMA = ("additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
               "unevaluatedItems", "unevaluatedProperties", "contentSchema")
#: keywords whose value maps names to schemas
_SCHEMA_MAP = ("properties", "patternProperties", "dependentSchemas")
#: keywords whose value is a list of schemas (allOf is merged, never emitted by the converter)
_SCHEMA_LIST = ("anyOf", "oneOf", "prefixItems")
#: keywords copied as plain values
_VALUE_KEYS = frozenset({
    "title", "description", "default", "deprecated", "format", "const", "multipleOf", "maximum",
    "minimum", "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems",
    "maxContains", "minContains", "maxProperties", "minProperties", "dependentRequired",
    "contentEncoding", "contentMediaType",
})
#: annotations kept outside the `anyOf` wrapper when a schema is made nullable by wrapping
_ANNOTATIONS = ("title", "description", "default", "deprecated")
#: keywords that could reject null even when `type` allows it
_NULL_REJECTING = ("anyOf", "oneOf", "allOf", "$ref", "not", "const", "if")
#: keywords whose sub-schemas sit one data level deeper (for limit_depth)
_DEEPER_ONE = ("additionalProperties", "contains", "propertyNames", "unevaluatedItems",
               "unevaluatedProperties", "items")
_DEEPER_MAP = ("properties", "patternProperties")

_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_COMPONENT_SCHEMA = re.compile(r"^/components/schemas/([^/]+)$")


@dataclass(frozen=True)
class SchemaBudget:
    """Limits for one converted schema (after inlining, including ``$defs``)."""

    max_nodes: int = 20_000  # schema nodes (dicts in schema positions), see `schema_nodes`
    max_depth: int = 64  # nesting depth of schema nodes; the root alone has depth 1


class _Built(NamedTuple):
    """A converted schema while results are assembled (sub-objects may be shared; never mutated).

    `refs`: pointers of recursive schemas referenced as ``#/$defs/...`` anywhere inside;
    `origin`: top-level property name -> pointer of the schema it came from (for conflict messages);
    `dropped`: top-level property names removed by readOnly/writeOnly filtering; `src`: pointer of
    the schema node this was built from.
    """

    schema: JSONSchema
    refs: frozenset[str]
    origin: Mapping[str, str]
    dropped: frozenset[str]
    src: str


_EMPTY: frozenset[str] = frozenset()


class _Scc(NamedTuple):
    members: tuple[str, ...]  # sorted pointers
    recursive: bool
    loop: tuple[str, ...] | None  # a $ref/allOf loop with no schema content, if any


def def_name_for_pointer(pointer: str) -> str:
    """The ``$defs`` name used for the recursive schema at `pointer` (pure function of the pointer).

    ``/components/schemas/<key>`` gives ``<key>`` when it only uses ``[A-Za-z0-9_.-]``; otherwise
    the sanitised name gets a short hash of the pointer, so names stay unique and deterministic.
    """
    match = _COMPONENT_SCHEMA.match(pointer)
    digest = hashlib.sha1(pointer.encode("utf-8")).hexdigest()[:8]
    if match:
        key = parse_pointer(pointer)[-1]
        clean = _NAME_UNSAFE.sub("_", key)
        if clean == key and key:
            return key
        return f"{clean or '_'}-{digest}"
    tokens = [t for t in parse_pointer(pointer) if t not in ("components", "schemas")]
    tail = "_".join(tokens[-3:]) or "root"
    return f"{_NAME_UNSAFE.sub('_', tail)}-{digest}"


class SchemaConverter:
    """Converts OpenAPI Schema Objects of one document into canonical JSON Schema 2020-12.

    One converter per document: it memoises converted ``$ref`` targets per (pointer, context), the
    reference graph's strongly connected components, and readOnly/writeOnly flags.
    """

    def __init__(self, doc: SpecDocument, sink: DiagnosticSink, budget: SchemaBudget = SchemaBudget(),
                 *, allow_external_refs: bool = False) -> None:
        self.doc = doc
        self.sink = sink
        self.budget = budget
        self.allow_external_refs = allow_external_refs
        self._cache: dict[tuple[str, str], _Built] = {}
        self._in_progress: set[tuple[str, str]] = set()
        self._measured: dict[int, tuple[int, int]] = {}  # id(cached fragment) -> (nodes, depth)
        self._fragment_ids: set[int] = set()
        self._rw_memo: dict[str, tuple[bool, bool]] = {}
        self._edges_memo: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
        self._scc_of: dict[str, int] = {}
        self._sccs: list[_Scc] = []
        self._def_ptr: dict[str, str] = {}  # $defs name -> pointer
        self._warned: set[int] = set()

    # --- public API ---------------------------------------------------------------------------

    def convert(self, node: Any, pointer: str, context: Context, *, copy: bool = True) -> JSONSchema:
        """Convert the schema `node` (found at JSON `pointer` of ``doc.data``) for `context`.

        Returns a fresh canonical JSON Schema 2020-12 dict; recursive schemas appear under a
        root-level ``$defs``. Raises `DiagnosticError` (codes ``ref-*``, ``schema-allof-conflict``,
        ``schema-too-large``); emits ``schema-cycle`` warnings to the sink.

        ``copy=False`` skips the final deep copy: the result then shares sub-objects with the
        converter's memo (and with other results), so the caller must treat it as read-only and copy
        what it changes (`project_schema` and `limit_depth` build new trees). On a large response
        schema the copy costs more than the conversion.
        """
        if context not in ("input", "output"):
            raise ValueError(f"context must be 'input' or 'output', not {context!r}")
        built = self._build(node, pointer, context, 1)
        root, refs = built.schema, built.refs
        # A root that is a reference to a recursive schema: inline that schema one level.
        for _ in range(16):
            target = root.get("$ref")
            if not (isinstance(target, str) and target.startswith("#/$defs/")):
                break
            def_ptr = self._def_ptr[target[len("#/$defs/"):]]
            body = self._cached(def_ptr, context, 1)
            rest = {k: v for k, v in root.items() if k != "$ref"}
            merged = self._merge_built(body, _Built(rest, _EMPTY, {}, _EMPTY, pointer), pointer)
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
        if nodes > self.budget.max_nodes:
            raise DiagnosticError([Diagnostic(
                "schema-too-large", "error",
                f"schema expands to {nodes:,} nodes after inlining $refs "
                f"(budget {self.budget.max_nodes:,} nodes)",
                self.doc.locate(pointer), TOO_LARGE_HINT)])
        if defs:
            self._warn_cycles(sorted(seen))
        return _copy_dict(root) if copy else root

    def resolve(self, node: Any, pointer: str) -> tuple[Any, str]:
        """Follow a ``$ref`` chain from `node` (any OpenAPI object, at `pointer`) to its target.

        Returns ``(target, target_pointer)``; a node without ``$ref`` is returned as is. Raises
        `DiagnosticError` located at the referencing node: ``ref-external`` (another document),
        ``ref-invalid`` (not a JSON pointer), ``ref-missing`` (nothing at the pointer),
        ``ref-cycle`` (the chain comes back to itself).
        """
        current, current_ptr = node, pointer
        visited = [pointer]
        while isinstance(current, dict) and "$ref" in current:
            target_ptr = self._ref_pointer(current.get("$ref"), current_ptr)
            if target_ptr in visited:
                chain = " -> ".join("#" + p for p in visited + [target_ptr])
                raise DiagnosticError([Diagnostic(
                    "ref-cycle", "error", f"$ref chain loops back to itself: {chain}",
                    self.doc.locate(join_pointer(pointer, "$ref")),
                    "point one of these $refs at a real object")])
            current = self._lookup(target_ptr, current_ptr)
            visited.append(target_ptr)
            current_ptr = target_ptr
        return current, current_ptr

    # --- references -----------------------------------------------------------------------------

    def _ref_pointer(self, ref: Any, at: str) -> str:
        """The decoded JSON pointer of the ``$ref`` value `ref` written at `at`."""
        if isinstance(ref, str) and ref.startswith("#/"):
            return ref_to_pointer(ref) or ""  # the common case: no location needed (locating is costly)
        where = self.doc.locate(join_pointer(at, "$ref"))
        if not isinstance(ref, str):
            raise DiagnosticError([Diagnostic(
                "ref-invalid", "error", f"$ref must be a string, not {type(ref).__name__}", where,
                "write the reference as '#/components/schemas/Name'")])
        target = ref_to_pointer(ref)
        if target is None:
            message = f"external $ref {ref!r}: only references inside the same document are supported"
            if self.allow_external_refs:
                message = f"external $ref {ref!r}: resolving external references is not implemented yet"
            raise DiagnosticError([Diagnostic(
                "ref-external", "error", message, where,
                "bundle the spec into one file first (e.g. `redocly bundle`), or set "
                "`allow_external_refs: true` in the intent map to bundle sibling files")])
        if target != "" and not target.startswith("/"):
            raise DiagnosticError([Diagnostic(
                "ref-invalid", "error", f"$ref {ref!r} is not a JSON pointer fragment", where,
                "local references look like '#/components/schemas/Name'")])
        return target

    def _lookup(self, target: str, at: str) -> Any:
        try:
            return resolve_pointer(self.doc.data, target)
        except PointerError as exc:
            found = f"; the longest existing prefix is #{exc.pointer}" if exc.pointer else ""
            raise DiagnosticError([Diagnostic(
                "ref-missing", "error", f"$ref target #{target} does not exist{found}",
                self.doc.locate(join_pointer(at, "$ref")),
                "fix the reference or add the missing component")]) from None

    # --- reference graph and cycles -------------------------------------------------------------

    def _edges(self, pointer: str) -> tuple[tuple[str, ...], frozenset[str]]:
        """Sorted $ref targets reachable from the schema at `pointer` without crossing another
        $ref, and the subset reachable without schema content in between ($ref / allOf only)."""
        memo = self._edges_memo.get(pointer)
        if memo is not None:
            return memo
        try:
            node = resolve_pointer(self.doc.data, pointer)
        except PointerError:
            node = None
        found: dict[str, bool] = {}
        stack: list[tuple[Any, bool]] = [(node, False)]
        while stack:
            current, guarded = stack.pop()
            for child, child_guarded in _raw_children(current, guarded):
                stack.append((child, child_guarded))
            if isinstance(current, dict):
                ref = current.get("$ref")
                if isinstance(ref, str):
                    target = ref_to_pointer(ref)
                    if target is not None and (target == "" or target.startswith("/")):
                        try:
                            resolve_pointer(self.doc.data, target)
                        except PointerError:
                            continue
                        found[target] = found.get(target, True) and guarded
        targets = tuple(sorted(found))
        unguarded = frozenset(t for t, g in found.items() if not g)
        memo = (targets, unguarded)
        self._edges_memo[pointer] = memo
        return memo

    def _scc(self, start: str) -> _Scc:
        """The strongly connected component of `start` (iterative Tarjan over sorted edges)."""
        known = self._scc_of.get(start)
        if known is not None:
            return self._sccs[known]
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        counter = 0

        def visit(v: str) -> Iterator[str]:
            nonlocal counter
            index[v] = low[v] = counter
            counter += 1
            stack.append(v)
            on_stack.add(v)
            return iter(self._edges(v)[0])

        work: list[tuple[str, Iterator[str]]] = [(start, visit(start))]
        while work:
            v, successors = work[-1]
            descended = False
            for w in successors:
                if w in self._scc_of:
                    continue
                if w not in index:
                    work.append((w, visit(w)))
                    descended = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if descended:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                members: list[str] = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    members.append(w)
                    if w == v:
                        break
                self._add_scc(sorted(members))
        return self._sccs[self._scc_of[start]]

    def _add_scc(self, members: list[str]) -> None:
        ident = len(self._sccs)
        member_set = set(members)
        recursive = len(members) > 1 or members[0] in self._edges(members[0])[0]
        loop: tuple[str, ...] | None = None
        if recursive:
            # A cycle made only of $ref/allOf edges never reaches schema content: reject it.
            unguarded = {m: [t for t in sorted(self._edges(m)[1]) if t in member_set] for m in members}
            loop = _find_cycle(members, unguarded)
        self._sccs.append(_Scc(tuple(members), recursive, loop))
        for m in members:
            self._scc_of[m] = ident

    def _is_recursive(self, target: str, at: str) -> bool:
        scc = self._scc(target)
        if scc.loop is not None:
            chain = " -> ".join(self._display(p) for p in scc.loop + (scc.loop[0],))
            raise DiagnosticError([Diagnostic(
                "ref-cycle", "error",
                f"$ref cycle without schema content: {chain} "
                f"({', '.join('#' + p for p in scc.loop)})",
                self.doc.locate(join_pointer(at, "$ref")),
                "one schema of the loop must define content (type, properties, ...) instead of "
                "only referring to the next")])
        return scc.recursive

    def _display(self, pointer: str) -> str:
        match = _COMPONENT_SCHEMA.match(pointer)
        return parse_pointer(pointer)[-1] if match else "#" + pointer

    def _doc_order(self, pointer: str) -> tuple[int, ...]:
        """Position of `pointer` in document order (member index at every step)."""
        node: Any = self.doc.data
        key: list[int] = []
        for token in parse_pointer(pointer):
            if isinstance(node, dict) and token in node:
                key.append(list(node).index(token))
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                key.append(int(token))
                node = node[int(token)]
            else:
                break
        return tuple(key)

    def _warn_cycles(self, pointers: list[str]) -> None:
        for pointer in pointers:
            ident = self._scc_of.get(pointer)
            if ident is None or ident in self._warned:
                continue
            self._warned.add(ident)
            scc = self._sccs[ident]
            members = set(scc.members)
            start = min(scc.members, key=lambda p: (self._doc_order(p), p))
            cycle = self._shortest_cycle(start, members)
            path = " -> ".join(self._display(p) for p in cycle)
            message = (f"recursive schema cycle {path} "
                       f"({', '.join('#' + p for p in cycle[:-1])}) is kept as $defs references")
            if len(scc.members) > len(cycle) - 1:
                ordered = sorted(scc.members, key=lambda p: (self._doc_order(p), p))
                names = [self._display(p) for p in ordered]
                more = f", ... (+{len(names) - 20} more)" if len(names) > 20 else ""
                shown = ", ".join(names[:20]) + more
                message += f"; it belongs to a group of {len(names)} mutually recursive schemas: {shown}"
            self.sink.warning(
                "schema-cycle", message, self.doc.locate(start),
                "targets without recursive-schema support get a relaxed or unrolled schema; "
                "break the cycle in the spec if that matters")

    def _shortest_cycle(self, start: str, members: set[str]) -> list[str]:
        previous: dict[str, str] = {}
        queue: deque[str] = deque([start])
        visited = {start}
        while queue:
            v = queue.popleft()
            for w in self._edges(v)[0]:
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [start]
                if w not in visited:
                    visited.add(w)
                    previous[w] = v
                    queue.append(w)
        return [start, start]  # pragma: no cover - members of a recursive SCC always reach start

    # --- readOnly / writeOnly -------------------------------------------------------------------

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
                    try:
                        self._rw_memo[target] = self._rw(resolve_pointer(self.doc.data, target), depth + 1)
                    except PointerError:
                        pass
                r, w = self._rw_memo[target]
                read_only, write_only = read_only or r, write_only or w
        branches = node.get("allOf")
        if isinstance(branches, list):
            for branch in branches:
                r, w = self._rw(branch, depth + 1)
                read_only, write_only = read_only or r, write_only or w
        return read_only, write_only

    # --- conversion -----------------------------------------------------------------------------

    def _cached(self, pointer: str, context: str, level: int) -> _Built:
        key = (pointer, context)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if key in self._in_progress:  # pragma: no cover - the SCC analysis prevents this
            raise DiagnosticError([Diagnostic(
                "ref-cycle", "error", f"$ref cycle through #{pointer} could not be broken",
                self.doc.locate(pointer), "report this as a toolgen bug")])
        self._in_progress.add(key)
        try:
            node = resolve_pointer(self.doc.data, pointer)
            built = self._build(node, pointer, context, level)
        finally:
            self._in_progress.discard(key)
        self._cache[key] = built
        self._fragment_ids.add(id(built.schema))
        return built

    def _measure(self, node: Any, memo: dict[int, tuple[int, int]]) -> tuple[int, int]:
        return _measure_node(node, memo, self._measured, self._fragment_ids)

    def _too_deep(self, pointer: str) -> DiagnosticError:
        return DiagnosticError([Diagnostic(
            "schema-too-large", "error",
            f"schema nests more than {self.budget.max_depth} levels deep after inlining $refs "
            f"(budget {self.budget.max_depth} levels)",
            self.doc.locate(pointer), TOO_DEEP_HINT)])

    def _build(self, node: Any, pointer: str, context: str, level: int) -> _Built:
        if level > self.budget.max_depth:
            raise self._too_deep(pointer)
        if node is True:
            return _Built({}, _EMPTY, {}, _EMPTY, pointer)
        if node is False:
            return _Built({"not": {}}, _EMPTY, {}, _EMPTY, pointer)
        if not isinstance(node, dict):
            self.sink.warning(
                "schema-invalid",
                f"expected a schema object, found {type(node).__name__}; read as {{}} (any)",
                self.doc.locate(pointer), "fix the schema in the spec")
            return _Built({}, _EMPTY, {}, _EMPTY, pointer)
        parts: list[_Built] = []
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
                result = _drop_properties(result)
        else:
            result = local
        if node.get("nullable") is True or node.get("x-nullable") is True:
            result = result._replace(schema=_make_nullable(result.schema))
        return result

    def _ref_part(self, node: dict[str, Any], pointer: str, context: str, level: int) -> _Built:
        target = self._ref_pointer(node["$ref"], pointer)
        self._lookup(target, pointer)
        if self._is_recursive(target, pointer):
            name = def_name_for_pointer(target)
            self._def_ptr[name] = target
            return _Built({"$ref": "#/$defs/" + name}, frozenset([target]), {}, _EMPTY, target)
        return self._cached(target, context, level)

    def _plain(self, node: dict[str, Any], pointer: str, context: str, level: int) -> _Built:
        """The keywords of `node` other than $ref/allOf/nullable."""
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
            if key == "type":
                types = _valid_type(value)
                if types is None:
                    self._invalid_keyword(pointer, key, value, "a JSON type name or a list of them")
                else:
                    out["type"] = types
            elif key == "properties" and isinstance(value, dict):
                props: dict[str, Any] = {}
                for name, prop in value.items():
                    read_only, write_only = self._rw(prop)
                    if (context == "input" and read_only) or (context == "output" and write_only):
                        dropped.append(name)
                        continue
                    props[name] = sub(prop, "properties", name)
                    origin[name] = join_pointer(pointer, "properties", name)
                out["properties"] = props
            elif key in _SCHEMA_MAP and isinstance(value, dict):
                out[key] = {name: sub(v, key, name) for name, v in value.items()}
            elif key in _ONE_SCHEMA:
                if key in ("additionalProperties", "unevaluatedProperties", "unevaluatedItems") \
                        and isinstance(value, bool):
                    out[key] = value
                else:
                    out[key] = sub(value, key)
            elif key in _SCHEMA_LIST and isinstance(value, list):
                if value or key == "prefixItems":
                    out[key] = [sub(v, key, i) for i, v in enumerate(value)]
                else:
                    self._invalid_keyword(pointer, key, value, "a non-empty list of schemas")
            elif key == "items":
                if isinstance(value, list):  # draft-04 tuple form
                    out["prefixItems"] = [sub(v, "items", i) for i, v in enumerate(value)]
                    extra = node.get("additionalItems")
                    if extra is not None:
                        out["items"] = sub_or_bool(extra, "additionalItems")
                else:
                    out["items"] = sub_or_bool(value, "items")
            elif key == "required" and isinstance(value, list):
                out["required"] = list(dict.fromkeys(v for v in value if isinstance(v, str)))
            elif key == "enum" and isinstance(value, list):
                out["enum"] = _dedupe(value)
            elif key in ("exclusiveMinimum", "exclusiveMaximum"):
                if isinstance(value, bool):
                    bound = "minimum" if key == "exclusiveMinimum" else "maximum"
                    if value and isinstance(node.get(bound), (int, float)):
                        out[key] = node[bound]
                elif isinstance(value, (int, float)):
                    out[key] = value
            elif key in _VALUE_KEYS:
                valid = _valid_value(key, value)
                if valid is _INVALID:
                    self._invalid_keyword(pointer, key, value, _VALUE_RULES.get(key, ("", ""))[1])
                else:
                    out[key] = valid
        # 3.0 boolean exclusive bounds replace the inclusive bound
        for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if node.get(key) is True and key in out:
                out.pop(bound, None)
        if "required" in out:
            required = [r for r in out["required"] if r not in dropped]
            if required:
                out["required"] = required
            else:
                del out["required"]
        types = out.get("type")
        if types == "file" or (isinstance(types, list) and "file" in types):
            out["type"] = _normalise_type(["string" if t == "file" else t for t in _as_list(types)])
            out["format"] = "binary"
        types = out.get("type")
        if types is not None:
            type_list = _as_list(types)
            if "null" in type_list and "enum" in out and None not in out["enum"]:
                out["enum"] = out["enum"] + [None]
            if "array" in type_list and "items" not in out and "prefixItems" not in out:
                out["items"] = {}
        return _Built(out, frozenset(refs), origin, frozenset(dropped), pointer)

    def _invalid_keyword(self, pointer: str, key: str, value: Any, expected: str) -> None:
        """A keyword whose value JSON Schema 2020-12 does not allow: dropped, with a located warning
        (left in, it would make every emitted catalog invalid; the spec stays the thing to fix)."""
        shown = _show(value) if not isinstance(value, str) else repr(value)
        self.sink.warning(
            "schema-keyword-invalid",
            f"`{key}: {shown[:80]}` is not valid JSON Schema ({key} must be {expected}); dropped",
            self.doc.locate(join_pointer(pointer, key)), "fix the schema in the spec")

    # --- allOf merge --------------------------------------------------------------------------

    def _merge_built(self, a: _Built, b: _Built, at: str) -> _Built:
        schema = self._merge(a.schema, b.schema, a.src, b.src, a.origin, b.origin, at)
        origin = dict(b.origin)
        origin.update(a.origin)
        return _Built(schema, a.refs | b.refs, origin, a.dropped | b.dropped, a.src)

    def _conflict(self, what: str, a_value: Any, b_value: Any, a_ptr: str, b_ptr: str) -> DiagnosticError:
        return DiagnosticError([Diagnostic(
            "schema-allof-conflict", "error",
            f"allOf branches conflict on {what}: "
            f"{_show(a_value)} at #{a_ptr} vs {_show(b_value)} at #{b_ptr}",
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
                b_keys = {_value_key(v) for v in bv}
                common = [v for v in av if _value_key(v) in b_keys]
                if not common:
                    raise self._conflict(f"the enum of {label}", av, bv, a_ptr, b_ptr)
                out[key] = common
            elif key == "const":
                if _value_key(av) != _value_key(bv):
                    raise self._conflict(f"the const of {label}", av, bv, a_ptr, b_ptr)
            elif key in _LOWER_BOUNDS or key in _UPPER_BOUNDS:
                if _is_number(av) and _is_number(bv):
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
            elif _same_value(av, bv):
                continue
            else:  # anyOf, oneOf, not, $ref, pattern, multipleOf, prefixItems: keep both
                leftover.append({key: bv})
        if leftover:
            out["allOf"] = list(out.get("allOf", [])) + leftover
        return out


# --- helpers for the converter ------------------------------------------------------------------


def _raw_children(node: Any, guarded: bool) -> Iterator[tuple[Any, bool]]:
    """Sub-schemas of a raw schema, with whether they sit below schema content ($ref not followed)."""
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "allOf" and isinstance(value, list):
            for v in value:
                yield v, guarded
        elif key in _SCHEMA_MAP and isinstance(value, dict):
            for v in value.values():
                yield v, True
        elif key in _SCHEMA_LIST and isinstance(value, list):
            for v in value:
                yield v, True
        elif key in _ONE_SCHEMA or key in ("items", "additionalItems"):
            if isinstance(value, list):
                for v in value:
                    yield v, True
            else:
                yield value, True


def _find_cycle(members: list[str], edges: Mapping[str, list[str]]) -> tuple[str, ...] | None:
    """A cycle in the directed graph `edges` restricted to `members` (deterministic), or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for root in members:
        if root in state:
            continue
        path: list[str] = [root]
        iters: list[Iterator[str]] = [iter(edges.get(root, []))]
        state[root] = 1
        while iters:
            advanced = False
            for w in iters[-1]:
                if state.get(w) == 1:
                    return tuple(path[path.index(w):])
                if w not in state:
                    state[w] = 1
                    path.append(w)
                    iters.append(iter(edges.get(w, [])))
                    advanced = True
                    break
            if not advanced:
                state[path.pop()] = 2
                iters.pop()
    return None


_JSON_TYPES = frozenset({"string", "number", "integer", "boolean", "object", "array", "null", "file"})
_INVALID: Any = object()


def _valid_type(value: Any) -> Any:
    """The `type` keyword normalised (`_normalise_type`), or None when it names no JSON type: a
    non-string, an unknown name, a list without one known name. ``file`` (OpenAPI 2) is kept here
    and rewritten by the caller."""
    if isinstance(value, str):
        return value if value in _JSON_TYPES else None
    if isinstance(value, list) and value and all(isinstance(t, str) and t in _JSON_TYPES for t in value):
        return _normalise_type(value)
    return None


def _non_negative_int(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return _INVALID
    if isinstance(value, float):
        return int(value) if value.is_integer() else _INVALID
    return value


def _number(value: Any) -> Any:
    return value if _is_number(value) and math.isfinite(value) else _INVALID


def _regex(value: Any) -> Any:
    if not isinstance(value, str):
        return _INVALID
    try:
        re.compile(value)
    except (re.error, RecursionError, OverflowError):
        return _INVALID
    return value


def _dependent_required(value: Any) -> Any:
    if isinstance(value, dict) and all(isinstance(v, list) and all(isinstance(x, str) for x in v)
                                       and len(set(v)) == len(v) for v in value.values()):
        return value
    return _INVALID


#: keyword -> (check returning the value to keep or _INVALID, what it must be)
_VALUE_RULES: dict[str, tuple[Any, str]] = {
    **{k: (lambda v: v if isinstance(v, str) else _INVALID, "a string")
       for k in ("title", "description", "format", "contentEncoding", "contentMediaType")},
    **{k: (lambda v: v if isinstance(v, bool) else _INVALID, "a boolean") for k in ("deprecated", "uniqueItems")},
    **{k: (_non_negative_int, "a non-negative integer")
       for k in ("maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties",
                 "maxContains", "minContains")},
    **{k: (_number, "a number") for k in ("maximum", "minimum")},
    "multipleOf": (lambda v: v if _number(v) is not _INVALID and v > 0 else _INVALID, "a number above 0"),
    "pattern": (_regex, "a regular expression (Python `re` syntax; the runtime enforces it)"),
    "dependentRequired": (_dependent_required, "an object of lists of unique strings"),
}


def _valid_value(key: str, value: Any) -> Any:
    rule = _VALUE_RULES.get(key)
    return value if rule is None else rule[0](value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_list(types: Any) -> list[Any]:
    return list(types) if isinstance(types, list) else [types]


def _normalise_type(value: Any) -> Any:
    """Type keyword: de-duplicated, declared order, ``null`` last; one entry -> a string."""
    if not isinstance(value, list):
        return value
    seen = list(dict.fromkeys(t for t in value if isinstance(t, str)))
    ordered = [t for t in seen if t != "null"] + (["null"] if "null" in seen else [])
    return ordered[0] if len(ordered) == 1 else ordered


def _intersect_types(a: Any, b: Any) -> Any | None:
    la, lb = _as_list(a), _as_list(b)
    out: list[str] = []
    for t in la:
        if t in lb or (t == "integer" and "number" in lb):
            out.append(t)
    for t in lb:
        if t == "integer" and "number" in la and t not in out:
            out.append(t)
    if not out:
        return None
    return _normalise_type(out)


def _make_nullable(schema: JSONSchema) -> JSONSchema:
    """The schema that also accepts JSON null (a new dict; `schema` is not modified)."""
    if not schema:
        return schema  # {} accepts null already
    rejecting = [k for k in _NULL_REJECTING if k in schema]
    if "type" in schema and not rejecting:
        out = dict(schema)
        types = _as_list(schema["type"])
        if "null" not in types:
            out["type"] = _normalise_type(types + ["null"])
        if "enum" in out and None not in out["enum"]:
            out["enum"] = list(out["enum"]) + [None]
        return out
    if not rejecting:
        if "enum" in schema and None not in schema["enum"]:
            return {**schema, "enum": list(schema["enum"]) + [None]}
        return schema  # no type and no applicator: null is accepted already
    core = {k: v for k, v in schema.items() if k not in _ANNOTATIONS}
    notes = {k: v for k, v in schema.items() if k in _ANNOTATIONS}
    if list(core) == ["anyOf"]:
        if any(b == {"type": "null"} for b in core["anyOf"]):
            return schema
        return {"anyOf": list(core["anyOf"]) + [{"type": "null"}], **notes}
    return {"anyOf": [core, {"type": "null"}], **notes}


def _drop_properties(built: _Built) -> _Built:
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


def _value_key(value: Any) -> Any:
    """A hashable identity for a JSON value: 1 == 1.0, but True != 1 and "1" != 1."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and value.is_integer():
            return ("n", int(value))
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list):
        return ("l", tuple(_value_key(v) for v in value))
    if isinstance(value, dict):
        return ("o", tuple(sorted((str(k), _value_key(v)) for k, v in value.items())))
    return ("?", repr(value))


def _dedupe(values: list[Any]) -> list[Any]:
    seen: set[Any] = set()
    out: list[Any] = []
    for value in values:
        key = _value_key(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return a is b
    return bool(_value_key(a) == _value_key(b))


def _show(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    return repr(value) if not isinstance(value, str) else value


def _copy_tree(value: Any) -> Any:
    """Deep copy of JSON values; shared sub-objects become separate copies."""
    if type(value) is dict:
        return _copy_dict(value)
    if type(value) is list:
        return _copy_list(value)
    return value


def _copy_dict(value: dict[str, Any]) -> dict[str, Any]:
    # dict.copy() plus replacing only the container values is the fastest pure-Python deep copy
    new = value.copy()
    for key, item in value.items():
        kind = type(item)
        if kind is dict:
            new[key] = _copy_dict(item)
        elif kind is list:
            new[key] = _copy_list(item)
    return new


def _copy_list(value: list[Any]) -> list[Any]:
    return [_copy_dict(v) if type(v) is dict else _copy_list(v) if type(v) is list else v for v in value]



def _schema_children(node: JSONSchema) -> Iterator[Any]:
    """Direct sub-schemas of a canonical schema (including root ``$defs`` entries)."""
    for key, value in node.items():
        if key in _SCHEMA_MAP or key == "$defs":
            if isinstance(value, dict):
                yield from value.values()
        elif key in _SCHEMA_LIST or key == "allOf":
            if isinstance(value, list):
                yield from value
        elif key in _ONE_SCHEMA or key in ("items", "additionalItems"):
            if isinstance(value, list):
                yield from value
            else:
                yield value


def _measure_node(node: Any, memo: dict[int, tuple[int, int]],
                  persistent: dict[int, tuple[int, int]] | None = None,
                  fragments: set[int] | None = None) -> tuple[int, int]:
    """(schema nodes, depth) of a schema that may share sub-objects; linear in distinct objects."""
    if not isinstance(node, dict):
        return 0, 0
    key = id(node)
    hit = memo.get(key)
    if hit is None and persistent is not None:
        hit = persistent.get(key)
    if hit is not None:
        return hit
    count, depth = 1, 0
    for child in _schema_children(node):
        c, d = _measure_node(child, memo, persistent, fragments)
        count += c
        depth = max(depth, d)
    result = (count, depth + 1)
    memo[key] = result
    if persistent is not None and fragments is not None and key in fragments:
        persistent[key] = result
    return result


# --- public helpers on canonical schemas ---------------------------------------------------------


def schema_nodes(schema: Any) -> int:
    """Number of schema nodes (dicts in schema positions, ``$defs`` entries included) in `schema`."""
    return _measure_node(schema, {})[0]


def _local_def(schema: JSONSchema, root: JSONSchema) -> JSONSchema | None:
    ref = schema.get("$ref")
    if not (isinstance(ref, str) and ref.startswith("#/$defs/")):
        return None
    defs = root.get("$defs")
    if not isinstance(defs, dict):
        return None
    target = defs.get(ref[len("#/$defs/"):])
    return target if isinstance(target, dict) else None


def _is_object_schema(schema: JSONSchema) -> bool:
    types = schema.get("type")
    if types is None:
        return "properties" in schema
    type_list = _as_list(types)
    return "object" in type_list and all(t in ("object", "null") for t in type_list)


def object_view(schema: JSONSchema) -> tuple[dict[str, Any], list[str]] | None:
    """``(properties, required)`` of a canonical schema whose root is an object (possibly nullable).

    The properties dict is the schema's own (not a copy); `required` is a new list. A nullable
    object written as ``anyOf: [<object>, {"type": "null"}]`` and a root ``$ref`` into the
    schema's ``$defs`` are looked through. Returns None when the root is not an object.
    """
    if not isinstance(schema, dict):
        return None
    node: JSONSchema = schema
    for _ in range(4):
        target = _local_def(node, schema)
        if target is None:
            break
        node = target
    if _is_object_schema(node):
        props = node.get("properties", {})
        return (props if isinstance(props, dict) else {}), list(node.get("required", []))
    branches = node.get("anyOf")
    if isinstance(branches, list) and len(branches) == 2 and {"type": "null"} in branches:
        other = branches[0] if branches[1] == {"type": "null"} else branches[1]
        if isinstance(other, dict):
            inner = _local_def(other, schema) or other
            if _is_object_schema(inner):
                props = inner.get("properties", {})
                return (props if isinstance(props, dict) else {}), list(inner.get("required", []))
    return None


def _collect_def_refs(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            out.add(ref[len("#/$defs/"):])
        for child in _schema_children(node):
            _collect_def_refs(child, out)


def _with_used_defs(body: JSONSchema, defs: Mapping[str, Any]) -> JSONSchema:
    """`body` (without $defs) plus copies of the $defs entries it still references, transitively."""
    body.pop("$defs", None)
    if not defs:
        return body
    used: set[str] = set()
    _collect_def_refs(body, used)
    todo = sorted(used)
    while todo:
        name = todo.pop()
        more: set[str] = set()
        _collect_def_refs(defs.get(name), more)
        for extra in sorted(more - used):
            used.add(extra)
            todo.append(extra)
    kept = {name: _copy_tree(defs[name]) for name in sorted(used) if name in defs}
    if kept:
        body["$defs"] = kept
    return body


class _Field:
    """One step of the projection tree: `whole` keeps the property whole; `children` are still
    checked to exist even then (``["id", "id.x"]`` must fail on ``id.x``)."""

    __slots__ = ("children", "path", "whole")

    def __init__(self, path: str) -> None:
        self.children: dict[str, _Field] = {}
        self.path = path
        self.whole = False


def _field_tree(fields: Sequence[str]) -> dict[str, _Field]:
    root: dict[str, _Field] = {}
    for path in fields:
        parts = path.split(".")
        if not path or any(p == "" for p in parts):
            raise KeyError(path)
        level = root
        for i, part in enumerate(parts):
            entry = level.get(part)
            if entry is None:
                entry = level[part] = _Field(path)
            if i == len(parts) - 1:
                entry.whole = True
            level = entry.children
    return root


def _keep(schema: Any, entry: _Field, root: JSONSchema, depth: int) -> Any:
    if not entry.whole:
        return _project(schema, entry.children, root, depth + 1)
    if entry.children:
        _project(schema, entry.children, root, depth + 1)  # only to check the deeper paths exist
    return _copy_tree(schema)


_OPEN_OBJECT_KEYS = ("additionalProperties", "patternProperties", "propertyNames", "dependentRequired",
                     "dependentSchemas", "minProperties", "maxProperties", "unevaluatedProperties")


def _project(node: Any, tree: dict[str, _Field], root: JSONSchema, depth: int = 0) -> JSONSchema:
    if not isinstance(node, dict) or depth > 256:
        raise KeyError(next(iter(tree.values())).path)
    target = _local_def(node, root)
    if target is not None:
        merged = dict(target)
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        return _project(merged, tree, root, depth + 1)
    types = _as_list(node.get("type")) if "type" in node else []
    if "properties" in node or "object" in types:
        raw_props = node.get("properties")
        props: dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
        extra = node.get("additionalProperties")
        kept: dict[str, Any] = {}
        for name, schema in props.items():
            entry = tree.get(name)
            if entry is not None:
                kept[name] = _keep(schema, entry, root, depth)
        for name, entry in tree.items():
            if name in kept:
                continue
            if isinstance(extra, dict):  # a map-like object: the key is any additional key
                kept[name] = _keep(extra, entry, root, depth)
            else:
                raise KeyError(entry.path)
        out = {k: _copy_tree(v) for k, v in node.items()
               if k not in ("properties", "required") and k not in _OPEN_OBJECT_KEYS}
        out["properties"] = kept
        required = [r for r in node.get("required", []) if r in kept]
        if required:
            out["required"] = required
        return out
    if "items" in node and ("array" in types or not types):
        out = {k: _copy_tree(v) for k, v in node.items() if k != "items"}
        out["items"] = _project(node["items"], tree, root, depth + 1)
        return out
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list):
            new_branches: list[Any] = []
            matched = False
            for branch in branches:
                if isinstance(branch, dict) and _is_container(branch, root):
                    try:
                        new_branches.append(_project(branch, tree, root, depth + 1))
                        matched = True
                    except KeyError:
                        new_branches.append(_permissive(branch, root))
                else:
                    new_branches.append(_copy_tree(branch))
            if matched:
                out = {k: _copy_tree(v) for k, v in node.items() if k != key}
                out[key] = new_branches
                return out
    raise KeyError(next(iter(tree.values())).path)


def project_schema(schema: JSONSchema, fields: Sequence[str]) -> JSONSchema:
    """Keep only the dotted paths in `fields` of a canonical schema; returns a new schema.

    ``"user.login"`` keeps ``user`` with only ``login``; a path through an array applies to its
    items; through ``anyOf``/``oneOf`` it applies to every object branch that has it (object
    branches without it become type-only). A path ending at a property keeps that property whole.
    Projected objects drop keywords about other keys (``additionalProperties``,
    ``patternProperties``...). ``$defs`` still referenced are kept, the rest dropped.
    Raises ``KeyError(path)`` for a path that names no property.
    """
    if not fields:
        return _copy_dict(schema)
    tree = _field_tree(fields)
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    body = {k: v for k, v in schema.items() if k != "$defs"}
    projected = _project(body, tree, schema)
    return _with_used_defs(projected, defs or {})


def _is_container(node: Any, root: JSONSchema, seen: frozenset[str] = frozenset()) -> bool:
    if not isinstance(node, dict):
        return False
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen:
        target = _local_def(node, root)
        if target is not None and _is_container(target, root, seen | {ref}):
            return True
    if "type" in node:
        return any(t in ("object", "array") for t in _as_list(node["type"]))
    if any(k in node for k in ("properties", "items", "additionalProperties", "prefixItems",
                               "patternProperties")):
        return True
    for key in ("anyOf", "oneOf", "allOf"):
        branches = node.get(key)
        if isinstance(branches, list) and any(_is_container(b, root, seen) for b in branches):
            return True
    return False


def _permissive(node: Any, root: JSONSchema, seen: frozenset[str] = frozenset()) -> JSONSchema:
    """A schema keeping only `type` (nullability included) that accepts everything `node` does."""
    if not isinstance(node, dict):
        return {}
    if "type" in node:
        out: JSONSchema = {"type": _copy_tree(node["type"])}
        if "array" in _as_list(node["type"]):
            out["items"] = {}  # every array keeps `items` (provider-dialects.md E.4)
        return out
    ref = node.get("$ref")
    if isinstance(ref, str) and ref not in seen and not any(k in node for k in ("anyOf", "oneOf")):
        target = _local_def(node, root)
        return _permissive(target, root, seen | {ref}) if target is not None else {}
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            types: list[str] = []
            for branch in branches:
                sub = _permissive(branch, root, seen)
                if "type" not in sub:
                    return {}
                types.extend(_as_list(sub["type"]))
            merged: JSONSchema = {"type": _normalise_type(types)}
            if "array" in types:
                merged["items"] = {}
            return merged
    return {}


class _OverBudget(Exception):
    """`limit_depth(..., max_nodes=n)`: the result would have more than n schema nodes."""


class _NodeCount:
    """Schema nodes `_limit` has produced so far: every dict it returns at a schema position is one
    distinct node of the result (a `_permissive` array two: it carries ``items: {}``). That is
    `schema_nodes(result)` exactly, unless a schema was copied whole (`not`, `if`, `contentSchema`)
    or `$defs` are kept (`inexact`); then it is a lower bound."""

    __slots__ = ("cap", "inexact", "n")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.n = 0
        self.inexact = False

    def add(self, n: int = 1) -> None:
        self.n += n
        if self.n > self.cap:
            raise _OverBudget


def _limit(node: Any, level: int, depth: int, root: JSONSchema, active: frozenset[tuple[str, int]],
           count: _NodeCount | None = None) -> Any:
    if not isinstance(node, dict):
        return node
    if level > depth and _is_container(node, root):
        loose = _permissive(node, root)
        if count is not None:
            count.add(2 if isinstance(loose.get("items"), dict) else 1)
        return loose
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = _local_def(node, root)
        if target is not None:
            if (ref, level) in active:  # re-entered without going deeper: stop with "any"
                if count is not None:
                    count.add()
                return {}
            merged = dict(target)
            merged.update({k: v for k, v in node.items() if k != "$ref"})
            return _limit(merged, level, depth, root, active | {(ref, level)}, count)
    if count is not None:
        count.add()
    out: JSONSchema = {}
    for key, value in node.items():
        if key in ("not", "if"):  # contravariant: loosening them would reject more
            out[key] = _copy_tree(value)
            if count is not None:
                count.inexact = True
        elif key in _DEEPER_MAP and isinstance(value, dict):
            out[key] = {k: _limit(v, level + 1, depth, root, active, count) for k, v in value.items()}
        elif key in _DEEPER_ONE or key == "additionalItems":
            if isinstance(value, list):
                out[key] = [_limit(v, level + 1, depth, root, active, count) for v in value]
            else:
                out[key] = _limit(value, level + 1, depth, root, active, count)
        elif key == "prefixItems" and isinstance(value, list):
            out[key] = [_limit(v, level + 1, depth, root, active, count) for v in value]
        elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
            out[key] = [_limit(v, level, depth, root, active, count) for v in value]
        elif key in ("then", "else"):
            out[key] = _limit(value, level, depth, root, active, count)
        elif key == "dependentSchemas" and isinstance(value, dict):
            out[key] = {k: _limit(v, level, depth, root, active, count) for k, v in value.items()}
        else:
            out[key] = _copy_tree(value)
            if count is not None and key in ("contentSchema", "$defs"):
                count.inexact = True
    return out


@overload
def limit_depth(schema: JSONSchema, depth: int) -> JSONSchema: ...
@overload
def limit_depth(schema: JSONSchema, depth: int, *, max_nodes: int) -> JSONSchema | None: ...


def limit_depth(schema: JSONSchema, depth: int, *, max_nodes: int | None = None) -> JSONSchema | None:
    """Cut a canonical schema below `depth` data levels; returns a new schema.

    The root is level 0; each step through ``properties``/``items``/``additionalProperties``
    (and similar) goes one level down; ``anyOf``/``oneOf``/``allOf`` branches stay on their
    parent's level. An object or array sub-schema below level `depth` becomes ``{"type": ...}``
    (keeping ``null`` in the type when it was nullable), or ``{}`` when it has no type, so the
    result accepts every instance the original accepted. ``$defs`` are inlined while walking (so
    recursion is cut at `depth`); those still referenced (from ``not``/``if``) are kept.

    With `max_nodes`, returns None as soon as the result is known to exceed that many schema nodes
    (`schema_nodes`), without building the rest of it; a result is returned only when it fits.
    """
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    body = {k: v for k, v in schema.items() if k != "$defs"}
    count = _NodeCount(max_nodes) if max_nodes is not None else None
    try:
        limited = _limit(body, 0, depth, schema, frozenset(), count)
    except _OverBudget:
        return None
    result = _with_used_defs(limited, defs or {})
    if max_nodes is not None and count is not None and (count.inexact or "$defs" in result) \
            and schema_nodes(result) > max_nodes:
        return None
    return result


#: deep copy of a JSON tree (shared sub-objects become separate copies), for callers of
#: ``convert(..., copy=False)`` that need to change part of a result
copy_tree = _copy_tree
