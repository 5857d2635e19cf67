"""Stage `lower`, one operation's lowering remembered between builds.

Input: the lowering context (`Ctx`: the document, the intent map, the sink) and one operation with
its intent. Output: the operation's `Lowered` (or the `Skip` / `DiagnosticError` it raised) and the
diagnostics its lowering emitted, from a `remember(key, compute)` the build passes (the build
cache, `toolgen.builder.incremental.Pieces`), so that a build after an edit lowers only what the edit reached.

The key (`OperationKeys.key`) names everything `toolgen.compile.lower.operation.lower_operation`
reads: the operation's path item as written (key order kept), every part of the document its text
reaches through a local reference (``"#/..."`` strings, followed to the component or path item they
point into, transitively; a missing target counts too) with its position in the document (schema
cycle notes name their first member in document order), the document's other top-level members
and its security schemes, the intent map without its `tools` and `include` (defaults, budgets,
auth), the intent, its include group and where it sits, the API's name and the document's name. A
reference to a whole section or to the document itself, and a Swagger 2.0 document (whose pointers
map back through the conversion), are not remembered: they are lowered every time.

Diagnostics are remembered without line and column (`fill_locations` and the intent map locate
them again by pointer), so a remembered diagnostic is located in the document of this build. The
schema converter re-emits what it found in a schema each time it reuses the schema
(`toolgen.compile.schema.SchemaConverter`), so the diagnostics of one operation never depend on
which operations were lowered before it.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from typing import Any

from ...diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, SourceLocation
from ...pointer import PointerError, parse_pointer, ref_to_pointer
from ...remember import Remember, computed
from ..intent import IncludeSpec, LoadedIntentMap, ToolIntent
from ..load import SpecDocument
from ..operations import Operation
from .context import Arg, Ctx, Lowered, Skip
from .infer import infer_intent
from .operation import lower_operation
from .resolve import ResolvedIntent

#: a JSON string that starts with '#': a local reference (or a key or text that looks like one)
_LOCAL = re.compile(r'"(#(?:[^"\\]|\\.)*)"')

#: a part of the document: ("components", section, name) or ("paths", path)
Part = tuple[str, ...]


def _text(node: Any) -> str:
    return json.dumps(node, ensure_ascii=False, separators=(",", ":"), allow_nan=True, default=repr)


class OperationKeys:
    """The digest of what each operation's lowering reads (module docstring), for one document and
    intent map. Each part of the document is serialised once per build, when a key first needs it.

    `remember`: each operation's `reads`, by the document's `SpecDocument.content_key` and the
    operation's pointer (a pure function of the two), and each part's text digest and references by
    the part's content (the SHA-256 of its `marshal` format 2); the build cache passes one, so a build
    whose spec did not change serialises none of it again, and one after an edit serialises only the
    parts that changed. Only for a document whose `data` is what its text reads as (not one whose
    external references were bundled in)."""

    def __init__(
        self, doc: SpecDocument, intents: LoadedIntentMap, api: str, remember: Remember = computed
    ) -> None:
        data = doc.data if isinstance(doc.data, dict) else {}
        self.usable = doc.pointers is None and isinstance(doc.data, dict)
        self._data = data
        self._remember = remember
        self._spec = doc.content_key if remember is not computed else ""
        rest = {k: v for k, v in data.items() if k not in ("paths", "components")}
        components = data.get("components") if isinstance(data.get("components"), dict) else {}
        schemes = components.get("securitySchemes") if isinstance(components, dict) else None
        model = intents.model.model_dump(mode="json", exclude={"tools", "include"})
        self._base = _digest(
            "lower-operation 1",
            api,
            doc.display,
            doc.version,
            doc.openapi,
            _text(rest),
            _text(schemes),
            json.dumps(model, sort_keys=True, default=repr),
        )
        self._parts: dict[Part, tuple[str, tuple[Part, ...] | None]] = {}
        self._order: dict[str, dict[str, int]] = {}
        self._reads: dict[str, Any] = {}  # operation pointer -> `reads`
        self._groups: dict[int, tuple[IncludeSpec, str]] = {}  # id -> (include group, its JSON text)

    def key(self, op: Operation, intent: ResolvedIntent) -> str | None:
        """The digest for lowering `op` as `intent`; None when it cannot be known (module
        docstring): the operation is then lowered every time. The intent enters as the map states
        it (`ResolvedIntent.source`): what resolving adds comes from the map's defaults, in `base`."""
        reads = self.reads(op)
        if reads is None or intent.source is None:
            return None
        group = intent.group
        return _digest(
            self._base,
            reads,
            intent.key,
            json.dumps([str(w) for w in intent.where]),
            "explicit" if intent.explicit else "include",
            intent.source.model_dump_json(),
            self.group_text(group) if group is not None else "",
        )

    def group_text(self, group: IncludeSpec) -> str:
        """``group.model_dump_json()``, once per include group (a frozen model, asked for by each of
        the thousands of operations it matches)."""
        found = self._groups.get(id(group))
        if found is None or found[0] is not group:
            found = self._groups[id(group)] = (group, group.model_dump_json())
        return found[1]

    def reads(self, op: Operation) -> str | None:
        """The digest of the part of the document lowering `op` reads: its path item as written and
        every part its text reaches through local references, each with its position; None when that
        cannot be bounded. A tool made of several operations (a composite) is keyed by the `reads`
        of each of its steps, its own intent and `base`."""
        if not self.usable:
            return None
        known = self._reads.get(op.pointer, _MISSING)
        if known is _MISSING:
            known = self._reads[op.pointer] = self._remember(
                _digest("operation-reads 2", self._spec, op.pointer), partial(self._read, op)
            )
        return known  # type: ignore[no-any-return]

    def _read(self, op: Operation) -> str | None:
        own, refs = self._summary(op.path_item)
        if refs is None:
            return None
        seen: set[Part] = set()
        todo = list(refs)
        while todo:
            part = todo.pop()
            if part in seen:
                continue
            seen.add(part)
            _, more = self._part(part)
            if more is None:
                return None
            todo.extend(more)
        return _digest(
            op.method,
            op.path,
            op.pointer,
            own,
            *(f"{'/'.join(p)}@{self._position(p)}\n{self._part(p)[0]}" for p in sorted(seen)),
        )

    @property
    def base(self) -> str:
        """The digest of what every operation's lowering reads besides its own part of the document
        (the document's other top-level members, its security schemes, the intent map's settings)."""
        return self._base

    def _part(self, part: Part) -> tuple[str, tuple[Part, ...] | None]:
        """The part's text digest and the parts its references point into (`_summary`)."""
        found = self._parts.get(part)
        if found is None:
            node = self._node(part)
            found = ("\0missing", ()) if node is _MISSING else self._summary(node)
            self._parts[part] = found
        return found

    def _summary(self, node: Any) -> tuple[str, tuple[Part, ...] | None]:
        """The SHA-256 of `node`'s compact JSON text and the parts its local references point into
        (`_refs_of`): a pure function of its content, remembered by its `marshal` digest (a node
        marshal cannot write, a YAML date, is summarised each time)."""
        if self._remember is computed:
            return _text_summary(node)
        try:
            content = hashlib.sha256(marshal.dumps(node, 2)).hexdigest()
        except ValueError:
            return _text_summary(node)
        return self._remember(_digest("document-part 1", content), partial(_text_summary, node))

    def _node(self, part: Part) -> Any:
        node: Any = self._data
        for token in part:
            if not isinstance(node, dict) or token not in node:
                return _MISSING
            node = node[token]
        return node

    def _position(self, part: Part) -> str:
        """Where `part` sits: its index in its section (and the section's in ``components``)."""
        out = []
        node: Any = self._data
        for i, token in enumerate(part):
            if not isinstance(node, dict) or token not in node:
                return "-"
            prefix = "/".join(part[:i])
            order = self._order.get(prefix)
            if order is None:
                order = self._order[prefix] = {k: n for n, k in enumerate(node)}
            out.append(str(order[token]))
            node = node[token]
        return ".".join(out)


_MISSING = object()


def _text_summary(node: Any) -> tuple[str, tuple[Part, ...] | None]:
    text = _text(node)
    return _digest(text), _refs_of(text)


def _refs_of(text: str) -> tuple[Part, ...] | None:
    """The parts of the document the local references in `text` point into; None when one points at
    the document or a whole section (everything would have to be read)."""
    found: set[Part] = set()
    for literal in set(_LOCAL.findall(text)):  # a component is referred to many times: each text once
        part = _part_of(literal)
        if part is _WHOLE:
            return None
        if part is not None:
            found.add(part)
    return tuple(sorted(found))


#: what `_part_of` returns for a reference to the document or a whole section
_WHOLE: Part = ("",)


@lru_cache(maxsize=65536)
def _part_of(literal: str) -> Part | None:
    """The part of the document a reference's JSON string literal (without its quotes) points into;
    `_WHOLE` for the document or a whole section; None when it names no part (not a JSON pointer, or
    a top-level member other than ``paths`` and ``components``, which is in every key already)."""
    try:
        ref = json.loads('"' + literal + '"') if "\\" in literal else literal
    except ValueError:
        return None
    pointer = ref_to_pointer(ref)
    if pointer is None or (pointer and not pointer.startswith("/")):
        return None  # not a JSON pointer: the reference fails the same way whatever the document holds
    try:
        tokens = parse_pointer(pointer)
    except PointerError:
        return None
    if tokens[:1] == ["components"]:
        return _WHOLE if len(tokens) < 3 else ("components", tokens[1], tokens[2])
    if tokens[:1] == ["paths"]:
        return _WHOLE if len(tokens) < 2 else ("paths", tokens[1])
    return _WHOLE if not tokens else None


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


@dataclass(frozen=True)
class _Outcome:
    """What lowering one operation gave: `lowered`, or the `skip` / `errors` it raised; and the
    diagnostics it emitted (without line and column)."""

    diagnostics: tuple[Diagnostic, ...]
    lowered: Lowered | None = None
    skip: tuple[str, str, SourceLocation | None, str | None] | None = None
    errors: tuple[Diagnostic, ...] = ()


class _Recording(DiagnosticSink):
    """A sink that passes every diagnostic on to `target` and keeps a copy."""

    def __init__(self, target: DiagnosticSink) -> None:
        super().__init__()
        self.target = target
        self.kept: list[Diagnostic] = []

    def add(self, diagnostic: Diagnostic) -> None:
        self.kept.append(diagnostic)
        self.target.add(diagnostic)


@contextmanager
def _recording(ctx: Ctx) -> Iterator[_Recording]:
    sink, converter_sink = ctx.sink, ctx.converter.sink
    recording = _Recording(sink)
    ctx.sink = ctx.converter.sink = recording
    try:
        yield recording
    finally:
        ctx.sink, ctx.converter.sink = sink, converter_sink


def _unlocated(d: Diagnostic) -> Diagnostic:
    loc = d.location
    if loc is None or (loc.line is None and loc.col is None) or loc.pointer is None:
        return d
    return replace(d, location=replace(loc, line=None, col=None))


def lowered_operation(ctx: Ctx, op: Operation, intent: ResolvedIntent) -> Lowered:
    """`lower_operation`, through `ctx.remember` when the build passed one and the operation's key
    can be known (module docstring). Raises what `lower_operation` raises."""
    found = ctx.keys.key(op, intent) if (ctx.remember is not None and ctx.keys is not None) else None
    if found is None or ctx.remember is None:
        return lower_operation(ctx, op, intent)

    def compute() -> _Outcome:
        with _recording(ctx) as recording:
            try:
                lowered = lower_operation(ctx, op, intent)
            except Skip as skip:
                return _Outcome(
                    tuple(map(_unlocated, recording.kept)),
                    skip=(
                        skip.code,
                        skip.message,
                        skip.location and _unlocated_location(skip.location),
                        skip.hint,
                    ),
                )
            except DiagnosticError as exc:
                return _Outcome(
                    tuple(map(_unlocated, recording.kept)), errors=tuple(map(_unlocated, exc.diagnostics))
                )
        return _Outcome(tuple(map(_unlocated, recording.kept)), lowered=lowered)

    outcome: _Outcome = ctx.remember(found, compute)
    for d in outcome.diagnostics:
        ctx.sink.add(_relocated(ctx, d))
    if outcome.skip is not None:
        code, message, location, hint = outcome.skip
        raise Skip(code, message, location and _relocated_location(ctx, location), hint)
    if outcome.errors:
        raise DiagnosticError([_relocated(ctx, d) for d in outcome.errors])
    assert outcome.lowered is not None
    return outcome.lowered


def inferred_intent(ctx: Ctx, op: Operation, group: IncludeSpec) -> ToolIntent:
    """`infer_intent` (the intent an include group gives `op`), through `ctx.remember` when the build
    passed one and the operation's `OperationKeys.reads` can be known. Keyed by what it reads: the
    operation's part of the document (`reads`), the intent map's settings (`OperationKeys.base`:
    its defaults) and the group. An inference that raised or emitted a diagnostic is remembered as
    such and computed again each time (its messages are located in this build's document)."""
    reads = ctx.keys.reads(op) if ctx.remember is not None and ctx.keys is not None else None
    if reads is None or ctx.remember is None or ctx.keys is None:
        return infer_intent(ctx, op, group)

    here: list[ToolIntent | Exception] = []  # computed by this call (what it emitted is in the sink)

    def compute() -> ToolIntent | None:
        with _recording(ctx) as recording:
            try:
                intent = infer_intent(ctx, op, group)
            except (Skip, DiagnosticError) as exc:
                here.append(exc)
                return None
        here.append(intent)
        return None if recording.kept else intent

    found: ToolIntent | None = ctx.remember(
        _digest("infer-intent 1", ctx.keys.base, reads, ctx.keys.group_text(group)), compute
    )
    if here:
        if isinstance(here[0], Exception):
            raise here[0]
        return here[0]
    return found if found is not None else infer_intent(ctx, op, group)


def remembered_examples(
    ctx: Ctx,
    op: Operation,
    args: list[Arg],
    schema: dict[str, Any],
    compute: Callable[[], tuple[dict[str, Any], ...]],
) -> tuple[dict[str, Any], ...]:
    """`compute()`: the input examples a tool takes from the spec (`toolgen.compile.lower.input_examples`),
    through `ctx.remember` when the build passed one and the operation's `OperationKeys.reads` can be
    known. Keyed by what assembling and checking them reads: the operation's part of the document, the
    intent map's settings (`OperationKeys.base`), each argument's name and binding and the tool's input
    schema. A computation that emitted a diagnostic (a `spec-example-invalid` warning, located in this
    build's document) is remembered as such and computed again each time."""
    reads = ctx.keys.reads(op) if ctx.remember is not None and ctx.keys is not None else None
    if reads is None or ctx.remember is None or ctx.keys is None:
        return compute()
    here: list[tuple[dict[str, Any], ...]] = []  # computed by this call (what it emitted is in the sink)

    def run() -> tuple[dict[str, Any], ...] | None:
        with _recording(ctx) as recording:
            found = compute()
        here.append(found)
        return None if recording.kept else found

    bindings = [
        (a.name, a.binding.location, a.binding.wire_name) if a.binding is not None else (a.name,)
        for a in args
    ]
    found = ctx.remember(
        _digest("spec-examples 1", ctx.keys.base, reads, _text(bindings), _text(schema)), run
    )
    if here:
        return here[0]
    return found if found is not None else compute()


def _unlocated_location(loc: SourceLocation) -> SourceLocation:
    return replace(loc, line=None, col=None) if loc.pointer is not None else loc


def _relocated(ctx: Ctx, d: Diagnostic) -> Diagnostic:
    loc = d.location
    if loc is None:
        return d
    moved = _relocated_location(ctx, loc)
    return d if moved is loc else replace(d, location=moved)


def _relocated_location(ctx: Ctx, loc: SourceLocation) -> SourceLocation:
    """A remembered location with line and column again: in the intent map now (the spec's are filled
    in with the others, `SpecDocument.fill_locations`)."""
    if loc.pointer is None or loc.line is not None or loc.file != ctx.intents.display:
        return loc
    try:
        tokens = parse_pointer(loc.pointer)
    except PointerError:
        return loc
    return ctx.intents.locate(*tokens)
