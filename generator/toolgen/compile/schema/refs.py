"""`$ref`s: resolving a reference, the document's reference graph, and the schemas that recurse.

Input: the raw `SpecDocument` and the pointers the converter meets. Output: the target of a
``$ref`` chain (`resolve`, raising located ``ref-external``, ``ref-invalid``, ``ref-missing`` and
``ref-cycle`` errors), whether a target takes part in a reference cycle (strongly connected
components by an iterative Tarjan over sorted edges, so names, messages and output do not depend on
iteration order), the ``$defs`` name of a recursive schema (`def_name_for_pointer`), and one
``schema-cycle`` note (info) per group of mutually recursive schemas.
"""

from __future__ import annotations

import hashlib
import re
from collections import deque
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from ...diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, SourceLocation
from ...pointer import (
    POINTER_HINT,
    PointerError,
    PointerSyntaxError,
    join_pointer,
    parse_pointer,
    ref_to_pointer,
    resolve_pointer,
)
from ..bundle import STORE
from ..load import SpecDocument
from .tree import ONE_SCHEMA, SCHEMA_LIST, SCHEMA_MAP

_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
COMPONENT_SCHEMA = re.compile(r"^/components/schemas/([^/]+)$")


class Scc(NamedTuple):
    members: tuple[str, ...]  # sorted pointers
    recursive: bool
    loop: tuple[str, ...] | None  # a $ref/allOf loop with no schema content, if any


def def_name_for_pointer(pointer: str) -> str:
    """The ``$defs`` name used for the recursive schema at `pointer` (pure function of the pointer).

    ``/components/schemas/<key>`` gives ``<key>`` when it only uses ``[A-Za-z0-9_.-]``; otherwise
    the sanitised name gets a short hash of the pointer, so names stay unique and deterministic.
    """
    match = COMPONENT_SCHEMA.match(pointer)
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


class RefsMixin:
    """Reference resolution and the reference graph of one document (memoised per converter)."""

    doc: SpecDocument
    sink: DiagnosticSink
    allow_external_refs: bool
    _edges_memo: dict[str, tuple[tuple[str, ...], frozenset[str]]]
    _scc_of: dict[str, int]
    _sccs: list[Scc]
    _warned: dict[int, Diagnostic]

    def resolve(self, node: Any, pointer: str) -> tuple[Any, str]:
        """Follow a ``$ref`` chain from `node` (any OpenAPI object, at `pointer`) to its target.

        Returns ``(target, target_pointer)``; a node without ``$ref`` is returned as is. Raises
        `DiagnosticError` located at the referencing node: ``ref-external`` (another document),
        ``ref-invalid`` (not a JSON pointer: RFC 6901 refuses a ``~`` that is not ``~0``/``~1``), ``ref-missing`` (nothing at the pointer),
        ``ref-cycle`` (the chain comes back to itself).
        """
        current, current_ptr = node, pointer
        visited = [pointer]
        while isinstance(current, dict) and "$ref" in current:
            target_ptr = self._ref_pointer(current.get("$ref"), current_ptr)
            if target_ptr in visited:
                chain = " -> ".join("#" + p for p in [*visited, target_ptr])
                raise DiagnosticError.one(
                    "ref-cycle",
                    f"$ref chain loops back to itself: {chain}",
                    self.doc.locate(join_pointer(pointer, "$ref")),
                    "point one of these $refs at a real object",
                )
            current = self._lookup(target_ptr, current_ptr)
            visited.append(target_ptr)
            current_ptr = target_ptr
        return current, current_ptr

    def _ref_pointer(self, ref: Any, at: str) -> str:
        """The decoded JSON pointer of the ``$ref`` value `ref` written at `at`."""
        if isinstance(ref, str) and ref.startswith("#/"):
            fast = ref_to_pointer(ref) or ""
            if "~" not in fast:  # the common case: no location needed (locating is costly)
                return fast
        return local_ref_target(
            ref,
            self.doc.locate(join_pointer(at, "$ref")),
            allow_external_refs=self.allow_external_refs,
            example="'#/components/schemas/Name'",
        )

    def _lookup(self, target: str, at: str) -> Any:
        try:
            return resolve_pointer(self.doc.data, target)
        except PointerError as exc:
            found = (
                f"; the longest existing prefix is #{self.doc.source_pointer(exc.pointer)}"
                if exc.pointer
                else ""
            )
            raise DiagnosticError.one(
                "ref-missing",
                f"$ref target #{self.doc.source_pointer(target)} does not exist{found}",
                self.doc.locate(join_pointer(at, "$ref")),
                "fix the reference or add the missing component",
            ) from None

    def _check_schema_target(self, ref: str, target: str, value: Any, at: str) -> None:
        """Refuse (``ref-not-schema``, located at the ``$ref``) a Schema Object's ``$ref`` whose target
        is not a schema: read as one, its members would be no keywords and it would accept any value.

        The rule implemented: a ``$ref`` resolves against the document's base URI (OpenAPI 3.0
        Reference Object; OpenAPI 3.1 "Relative References in URIs": a Schema Object with no parent
        ``$id``; toolgen reads no ``$id``), so ``#`` names the whole OpenAPI document, which is not a
        schema. JSON Schema 2020-12 section 8.2 makes ``#`` a schema only when the document is itself
        a schema resource (or below an ``$id``), which an OpenAPI document is not. A schema is a JSON
        object (or boolean) at or below ``components/schemas/<name>``, ``definitions/<name>``, a
        ``schema`` member or a bundled file's value (``components/x-toolgen-external/<name>``); any other target (the document, ``info``, a path item, an operation, a
        response, the ``schemas`` map itself, a string or number) is refused."""
        what = _not_a_schema(target, value)
        if what is None:
            return
        raise DiagnosticError.one(
            "ref-not-schema",
            f"$ref {ref!r} names {what}, not a schema: read as one it would accept any value",
            self.doc.locate(join_pointer(at, "$ref")),
            "point the $ref at a schema, e.g. '#/components/schemas/Name' (a schema that refers to "
            "itself names its own component, not '#')",
        )

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

    def _scc(self, start: str) -> Scc:
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
        self._sccs.append(Scc(tuple(members), recursive, loop))
        for m in members:
            self._scc_of[m] = ident

    def _is_recursive(self, target: str, at: str) -> bool:
        scc = self._scc(target)
        if scc.loop is not None:
            chain = " -> ".join(self._display(p) for p in (*scc.loop, scc.loop[0]))
            raise DiagnosticError.one(
                "ref-cycle",
                f"$ref cycle without schema content: {chain} ({', '.join('#' + p for p in scc.loop)})",
                self.doc.locate(join_pointer(at, "$ref")),
                "one schema of the loop must define content (type, properties, ...) instead of "
                "only referring to the next",
            )
        return scc.recursive

    def _display(self, pointer: str) -> str:
        match = COMPONENT_SCHEMA.match(pointer)
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
            if ident is None:
                continue
            if ident in self._warned:  # noted again: the sink keeps one, and each conversion has it
                self.sink.add(self._warned[ident])
                continue
            scc = self._sccs[ident]
            members = set(scc.members)
            start = min(scc.members, key=lambda p: (self._doc_order(p), p))
            cycle = self._shortest_cycle(start, members)
            path = " -> ".join(self._display(p) for p in cycle)
            message = (
                f"recursive schema cycle {path} "
                f"({', '.join('#' + p for p in cycle[:-1])}) is kept as $defs references"
            )
            if len(scc.members) > len(cycle) - 1:
                ordered = sorted(scc.members, key=lambda p: (self._doc_order(p), p))
                names = [self._display(p) for p in ordered]
                more = f", ... (+{len(names) - 20} more)" if len(names) > 20 else ""
                shown = ", ".join(names[:20]) + more
                message += f"; it belongs to a group of {len(names)} mutually recursive schemas: {shown}"
            note = Diagnostic(
                "schema-cycle",
                "info",
                message,
                self.doc.locate(start),
                "targets without recursive-schema support get a relaxed or unrolled schema; "
                "break the cycle in the spec if that matters",
            )
            self._warned[ident] = note
            self.sink.add(note)

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
                    return [*reversed(path), start]
                if w not in visited:
                    visited.add(w)
                    previous[w] = v
                    queue.append(w)
        return [start, start]  # pragma: no cover - members of a recursive SCC always reach start


def local_ref_target(
    ref: Any, where: SourceLocation, *, example: str, allow_external_refs: bool = False
) -> str:
    """The decoded JSON pointer (RFC 6901) of the ``$ref`` value `ref`, a reference inside the same
    document (``""`` for ``#``, the whole document). Raises `DiagnosticError` located at `where`:
    ``ref-invalid`` (not a string, or a fragment that is not a JSON pointer: a ``~`` that is not
    ``~0``/``~1`` is never read as text) and ``ref-external`` (another document or a URL). `example`
    is the form the hints show (``'#/components/schemas/Name'``)."""
    if not isinstance(ref, str):
        raise DiagnosticError.one(
            "ref-invalid",
            f"$ref must be a string, not {type(ref).__name__}",
            where,
            f"write the reference as {example}",
        )
    target = ref_to_pointer(ref)
    if target is None:
        message = f"external $ref {ref!r}: only references inside the same document are supported"
        if allow_external_refs:
            message = f"external $ref {ref!r}: resolving external references is not implemented yet"
        raise DiagnosticError.one(
            "ref-external",
            message,
            where,
            "bundle the spec into one file first (e.g. `redocly bundle`), or set "
            "`allow_external_refs: true` in the intent map to bundle sibling files",
        )
    if target != "" and not target.startswith("/"):
        raise DiagnosticError.one(
            "ref-invalid",
            f"$ref {ref!r} is not a JSON pointer fragment",
            where,
            f"local references look like {example}",
        )
    try:
        parse_pointer(target)
    except PointerSyntaxError as exc:
        raise DiagnosticError.one(
            "ref-invalid",
            f"$ref {ref!r} is not a JSON pointer fragment: {exc}",
            where,
            POINTER_HINT,
        ) from None
    return target


def _raw_children(node: Any, guarded: bool) -> Iterator[tuple[Any, bool]]:
    """Sub-schemas of a raw schema, with whether they sit below schema content ($ref not followed)."""
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "allOf" and isinstance(value, list):
            for v in value:
                yield v, guarded
        elif key in SCHEMA_MAP and isinstance(value, dict):
            for v in value.values():
                yield v, True
        elif key in SCHEMA_LIST and isinstance(value, list):
            for v in value:
                yield v, True
        elif key in ONE_SCHEMA or key in ("items", "additionalItems"):
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
                    return tuple(path[path.index(w) :])
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


#: the members whose entries hold a `schema` member: parameters (by index or component name), headers,
#: media types (under ``content``) and, in Swagger 2.0, responses (a ``schema`` named elsewhere, e.g. a
#: component called ``schema`` or an ``x-`` extension's member, is no schema)
_SCHEMA_HOLDERS = frozenset({"parameters", "headers", "content", "responses"})


def _not_a_schema(target: str, value: Any) -> str | None:
    """What the ``$ref`` target at `target` (a JSON pointer into an OpenAPI document) is when it is
    not a schema (words for a message), or None when it is one (`RefsMixin._check_schema_target`)."""
    if target == "":
        return "the OpenAPI document itself"
    if not isinstance(value, (dict, bool)):
        kinds = {str: "a string", int: "a number", float: "a number", list: "an array"}
        return kinds.get(type(value), "null" if value is None else type(value).__name__)
    tokens = parse_pointer(target)
    if tokens[:2] == ["components", "schemas"] and len(tokens) >= 3:
        return None
    if tokens[:1] == ["definitions"] and len(tokens) >= 2:  # Swagger 2.0
        return None
    if (
        tokens[:2] == ["components", STORE] and len(tokens) >= 3
    ):  # a bundled file's value, as its $ref took it
        return None
    if any(  # a parameter's, header's or media type's schema (Swagger 2.0: a response's), or below one
        token == "schema" and tokens[i - 2] in _SCHEMA_HOLDERS for i, token in enumerate(tokens) if i >= 2
    ):
        return None
    return f"#{target} (schemas live under components/schemas or a `schema` member)"
