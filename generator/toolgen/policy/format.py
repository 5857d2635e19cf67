"""Kernel `policy_format`: the runtime policy table (``policy.json``) as one set of frozen, typed values.

Input: lowering builds a `PolicyRow` per tool (`toolgen.compile.lower`); `from_json` reads the JSON
value of a ``policy.json`` (`read_policy`, the file). Output: `PolicyTable.to_json()`, the JSON value `toolgen build` writes
(byte for byte the file, through `toolgen.emit.json_bytes`), and typed rows for whoever reads the
table (`toolgen.emit.policy` for POLICY.md, `toolgen diff`, the runtime's contract suite).

This module is the one definition of the format (docs/generated-format.md, "policy.json"), with the
parts of a row in `toolgen.policy.row_parts` (bindings, fixed values, idempotency, pagination,
retry, output, narrowed arguments; importable from here): a new policy field is a field here or
there, with its line in the `to_json` and the reader of its object, the lowering that fills it and
the runtime step that enforces it.

Format version: `FORMAT_VERSION` (the ``format`` member). The table fails closed: `from_json`
refuses another version, a missing member, an unknown member (`toolgen.policy.members.MEMBERS`: every
member is written on every object, so none is read as a default), a value outside its values (an
``approval`` of ``"Required"``) or below its bound (a ``timeout_ms`` of 0), with a `PolicyFormatError`
naming the member's JSON pointer and what to do. Its JSON Schema is `toolgen.policy.schema`
(docs/policy.schema.json). The build, the runtime (`toolgen.runtime.serving.registry.Registry`), ``toolgen
diff`` and the contract suite all read the table with `from_json`.

``request.max_body_bytes`` is ``null`` unless the intent map sets a limit (null: no limit).

Normalisation (what `to_json` cannot tell apart): ``Idempotency.honoured_by_api`` None (the intent
map does not say) is written as ``false``; a record row with ``record_arguments`` None is written
as ``full``; ``record_arguments`` and ``preview_ttl_s`` of a read or preview row are not written.
A composite tool's row (``composite`` set) writes ``operation: null``; its `operation_id`, `method` and
`path` are ``""``. On every other value ``from_json(t.to_json()) == t``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..pointer import POINTER_HINT, PointerSyntaxError, parse_pointer
from .auth import AuthBinding, AuthLocation, PerCaller, PerCallerVia, ServiceSecretUse, read_auth
from .limits import Limit, read_approval_when, read_limits
from .mapping import InputRef, LiteralValue, MappingValue, Reference, StepRef, mapping_references
from .members import MAX_PREVIEW_TTL_S, MAX_TIMEOUT_MS, MEMBERS
from .nodes import REBUILD, Node, PolicyFormatError, no_constant, one_of_each, shown
from .row_parts import (
    JSON,
    METHOD_OVERRIDE_HEADERS,
    RESERVED_HEADERS,
    ArgBinding,
    ArgLocation,
    FixedValue,
    Idempotency,
    IdempotencyIn,
    NarrowedArg,
    NullMeans,
    OutputPolicy,
    Pagination,
    PaginationStyle,
    Retry,
    SchemaMode,
    read_binding,
    read_fixed,
    read_idempotency,
    read_narrowed,
    read_output,
    read_pagination,
    read_retry,
)

#: the ``format`` member of every ``policy.json`` this module writes and the only one it reads
FORMAT_VERSION = 3

Effect = Literal["read", "write", "destructive"]
Mode = Literal["read", "preview", "record"]
BodyEncoding = Literal["none", "json", "form", "multipart", "binary", "text"]
Approval = Literal["never", "required"]
Loading = Literal["eager", "deferred"]
RecordArguments = Literal["preview", "full"]
ToolsetOrigin = Literal["declared", "tag", "path"]
CompositePattern = Literal["pipeline", "branch", "aggregate"]


@dataclass(frozen=True)
class CompositeStep:
    """One step of a composite plan (``composite.steps[]``).

    `id`: the step's id in the plan. `when`: the value of the switch argument that takes this step
    (branch steps), else None. `needs`: ids of the steps whose answers `args` read (every one earlier
    in the plan). `args`: step argument name -> mapping value. `row`: the complete policy row the
    step runs under (tool ``<composite tool>.<step id>``; read steps mode ``read``; write steps mode
    ``record`` with full arguments and approval ``never``). `input_schema`: the step operation's
    canonical input schema (the step's arguments are validated against it); `output_schema`: its
    answer's schema, or None."""

    id: str
    when: str | None
    needs: tuple[str, ...]
    args: Mapping[str, MappingValue]
    row: PolicyRow
    input_schema: JSON
    output_schema: JSON | None

    def to_json(self) -> dict[str, JSON]:
        return {
            "id": self.id,
            "when": self.when,
            "needs": list(self.needs),
            "args": {k: v.to_json() for k, v in self.args.items()},
            "row": self.row.to_json(),
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
        }


@dataclass(frozen=True)
class CompositePlan:
    """What a composite tool runs (``composite`` of its row; docs/composites.md, "In policy.json").

    `pattern`: pipeline (steps in order, later ones may read earlier answers), branch (the step whose
    `when` equals the `switch` value runs) or aggregate (every step, concurrently, partial errors
    reported). `switch`: the input reference that chooses (branch only, else None). `steps`: in a
    valid execution order. `output`: member of the combined result -> mapping value."""

    pattern: CompositePattern
    switch: InputRef | None
    steps: tuple[CompositeStep, ...]
    output: Mapping[str, MappingValue]

    def to_json(self) -> dict[str, JSON]:
        return {
            "pattern": self.pattern,
            "switch": None if self.switch is None else self.switch.to_json(),
            "steps": [s.to_json() for s in self.steps],
            "output": {k: v.to_json() for k, v in self.output.items()},
        }

    def step(self, step_id: str) -> CompositeStep | None:
        """The step of that id, or None."""
        return next((s for s in self.steps if s.id == step_id), None)


@dataclass(frozen=True)
class PolicyRow:
    """One row of the runtime policy table (one per tool; ``tools[]`` of ``policy.json``).

    `operation_id`/`method`/`path` are the JSON ``operation`` object; `body_encoding`,
    `body_content_type`, `bindings` and `fixed` its ``request`` object; `record_arguments` and
    `preview_ttl_s` its ``record`` object (record rows only). `dialect_rewrites`: per dialect name,
    the records of how that dialect's catalog reshaped the tool's arguments (docs/dialects.md; the
    runtime undoes them, `toolgen.runtime.call.dialect_args`); lowering leaves it empty, the build fills
    it once the catalogs are made."""

    tool: str
    mode: Mode
    effect: Effect
    operation_id: str
    method: str
    path: str
    permission: tuple[str, ...]
    approval: Approval
    idempotency: Idempotency | None
    retry: Retry
    timeout_ms: int
    pagination: Pagination | None
    output: OutputPolicy
    auth: tuple[AuthBinding, ...]
    body_encoding: BodyEncoding
    body_content_type: str | None
    bindings: tuple[ArgBinding, ...]
    fixed: tuple[FixedValue, ...] = ()
    pair: str | None = None  # preview_X <-> record_X
    intent: str = ""  # the intent-map key this tool came from
    success_status: tuple[int, ...] = ()
    #: record rows: ``preview`` (the record executes the stored preview, its input is the preview_id)
    #: or ``full`` (it takes every argument again); ``None`` on read and preview rows
    record_arguments: RecordArguments | None = None
    #: record rows executing a stored preview: seconds the preview stays executable
    preview_ttl_s: int | None = None
    narrowed: tuple[NarrowedArg, ...] = ()  # intent-map `args` entries, in argument order
    toolset: str | None = None  # the toolset (namespace) of the tool, if any
    loading: Loading = "eager"  # eager: always in the catalog; deferred: found by tool search
    keywords: tuple[str, ...] = ()  # intent-map `keywords`: extra words tool search indexes
    examples: tuple[str, ...] = ()  # intent-map `examples`: requests in users' words tool search indexes
    not_for: str | None = None  # intent-map `not_for`: said in the description, never indexed
    #: the most bytes the encoded request body may have (``request.max_body_bytes``; None: no limit); the
    #: canonical-request step refuses a larger body with ``invalid_arguments`` before anything is stored or sent
    max_body_bytes: int | None = None
    dialect_rewrites: Mapping[str, tuple[Mapping[str, JSON], ...]] = field(default_factory=dict)
    #: a composite tool's plan (docs/composites.md); its row has no operation (`operation_id`,
    #: `method` and `path` are ``""``, JSON ``operation: null``)
    composite: CompositePlan | None = None
    #: a record row with approval ``required``: the CEL condition under which the approval is asked
    #: (`toolgen.policy.conditions`; None: always)
    approval_when: str | None = None
    limits: tuple[Limit, ...] = ()  # what the tool may send per window (`toolgen.policy.limits`)

    @property
    def executes_preview(self) -> bool:
        """A record row that executes the stored preview of its `pair` (``record.arguments: preview``)."""
        return self.mode == "record" and self.record_arguments == "preview"

    def to_json(self) -> dict[str, JSON]:
        """The row as ``policy.json`` holds it (docs/generated-format.md)."""
        return {
            "tool": self.tool,
            "mode": self.mode,
            "effect": self.effect,
            "intent": self.intent,
            "pair": self.pair,
            "operation": None
            if self.composite is not None
            else {"id": self.operation_id, "method": self.method, "path": self.path},
            "permission": list(self.permission),
            "approval": self.approval,
            "approval_when": self.approval_when,
            "idempotency": None if self.idempotency is None else self.idempotency.to_json(),
            "limits": [limit.to_json() for limit in self.limits],
            "retry": self.retry.to_json(),
            "timeout_ms": self.timeout_ms,
            "pagination": self.pagination.to_json() if self.pagination else None,
            "output": self.output.to_json(),
            "auth": [a.to_json() for a in self.auth],
            "request": {
                "encoding": self.body_encoding,
                "content_type": self.body_content_type,
                "bindings": [b.to_json() for b in self.bindings],
                "fixed": [f.to_json() for f in self.fixed],
                "max_body_bytes": self.max_body_bytes,
            },
            "success_status": list(self.success_status),
            "dialect_rewrites": {
                d: [dict(r) for r in records] for d, records in sorted(self.dialect_rewrites.items())
            },
            "record": None
            if self.mode != "record"
            else {"arguments": self.record_arguments or "full", "preview_ttl_s": self.preview_ttl_s},
            "narrowed": [n.to_json() for n in self.narrowed],
            "toolset": self.toolset,
            "loading": self.loading,
            "keywords": list(self.keywords),
            "examples": list(self.examples),
            "not_for": self.not_for,
            "composite": None if self.composite is None else self.composite.to_json(),
        }


@dataclass(frozen=True)
class Toolset:
    """A named group of tools (``toolsets[]``; an OpenAI Responses namespace): `description` is what a
    model reads before it searches, `loading` the toolset's default loading, `origin` where it came
    from (``declared`` under `toolsets:`; ``tag`` or ``path``: named by an include group after an
    operation's OpenAPI tag or its path's first resource segment)."""

    name: str
    description: str
    loading: Loading
    origin: ToolsetOrigin = "declared"
    examples: tuple[str, ...] = ()  # intent-map `toolsets.<name>.examples`: indexed with each of its tools

    def to_json(self) -> dict[str, JSON]:
        return {
            "name": self.name,
            "description": self.description,
            "loading": self.loading,
            "origin": self.origin,
            "examples": list(self.examples),
        }


@dataclass(frozen=True)
class PolicyTable:
    """The whole ``policy.json`` of one API: its identity, the rows (in the IR's tool order) and the
    toolsets the rows use (by name)."""

    api: str
    title: str
    version: str
    base_url: str
    spec: str  # the spec's display path
    tools: tuple[PolicyRow, ...]
    toolsets: tuple[Toolset, ...] = ()
    format: int = FORMAT_VERSION

    def to_json(self) -> dict[str, JSON]:
        """The JSON value of ``policy.json``; `toolgen.emit.json_bytes` of it is the file."""
        return {
            "format": self.format,
            "api": self.api,
            "title": self.title,
            "version": self.version,
            "base_url": self.base_url,
            "spec": self.spec,
            "tools": [r.to_json() for r in self.tools],
            "toolsets": [s.to_json() for s in self.toolsets],
        }

    def row(self, tool: str) -> PolicyRow | None:
        """The row of `tool`, or None."""
        return next((r for r in self.tools if r.tool == tool), None)

    def rows(self) -> dict[str, PolicyRow]:
        """The rows by tool name."""
        return {r.tool: r for r in self.tools}


# ---------------------------------------------------------------------------------------------
# reading


def _read_rewrites(n: Node) -> dict[str, tuple[Mapping[str, JSON], ...]]:
    out: dict[str, tuple[Mapping[str, JSON], ...]] = {}
    for dialect, records in n.obj().items():
        node = n.child(dialect, records)
        read: list[Mapping[str, JSON]] = []
        for record in node.items():
            kind = record.get("kind").text()
            if not kind:
                raise record.fail("a rewrite record needs a non-empty kind", "kind")
            read.append(record.obj())
        out[dialect] = tuple(read)
    return out


def _read_body_limit(n: Node) -> int | None:
    limit = n.opt_integer()
    if limit is not None and limit < 1:
        raise n.fail(f"a body limit of {limit} bytes admits no request")
    return limit


def _read_ref(n: Node) -> InputRef | StepRef:
    kind = n.get("$ref").choice(Literal["input", "step"])
    n.exactly(MEMBERS["input_ref" if kind == "input" else "step_ref"])
    pointer = n.get("pointer").text()
    try:
        parse_pointer(pointer)  # RFC 6901: starts with '/' (or is empty); '~' only as '~0' or '~1'
    except PointerSyntaxError as exc:
        raise n.fail(
            f"{exc}; the runtime resolves no malformed pointer", "pointer", f"{POINTER_HINT}; then {REBUILD}"
        ) from None
    if kind == "input":
        return InputRef(pointer)
    return StepRef(n.get("step").text(), pointer)


def _read_literal_member(n: Node) -> JSON:
    value = n.value
    if isinstance(value, dict):
        if "$ref" in value:
            return _read_ref(n)
        if "$literal" in value:
            inner = n.get("$literal")
            if isinstance(inner.value, dict):
                return {k: _read_literal_member(inner.child(k, v)) for k, v in inner.value.items()}
            return _read_literal_member(inner)
        return {k: _read_literal_member(n.child(k, v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_read_literal_member(c) for c in n.items()]
    return value


def _read_mapping(n: Node) -> MappingValue:
    members = n.obj()
    if "$ref" in members:
        return _read_ref(n)
    if "$literal" in members:
        n.exactly(MEMBERS["literal"])
        return LiteralValue(_read_literal_member(n.get("$literal")))
    raise n.fail('expected a reference {"$ref": ...} or a literal {"$literal": ...}')


def _read_mappings(n: Node) -> dict[str, MappingValue]:
    return {k: _read_mapping(n.child(k, v)) for k, v in n.obj().items()}


def _read_step(n: Node) -> CompositeStep:
    n.exactly(MEMBERS["step"])
    row = n.get("row")
    output_schema = n.get("output_schema")
    _ = None if output_schema.value is None else output_schema.obj()
    read = CompositeStep(
        id=n.get("id").text(),
        when=n.get("when").opt_text(),
        needs=n.get("needs").tuple_of(Node.text),
        args=_read_mappings(n.get("args")),
        row=_read_row(row),
        input_schema=n.get("input_schema").obj(),
        output_schema=output_schema.value,
    )
    if read.row.composite is not None:
        raise row.fail("a step row is the row of one operation; it holds no composite plan", "composite")
    return read


def _read_composite(n: Node) -> CompositePlan | None:
    if n.value is None:
        return None
    n.exactly(MEMBERS["composite"])
    switch, steps = n.get("switch"), n.get("steps")
    ref = None if switch.value is None else _read_ref(switch)
    if ref is not None and not isinstance(ref, InputRef):
        raise switch.fail("the switch is a reference to the composite's input", "$ref")
    plan = CompositePlan(
        pattern=n.get("pattern").choice(CompositePattern),
        switch=ref,
        steps=steps.tuple_of(_read_step),
        output=_read_mappings(n.get("output")),
    )
    seen: set[str] = set()
    for index, (node, step) in enumerate(zip(steps.items(), plan.steps, strict=True)):
        for need in step.needs:
            if need not in seen:
                raise node.fail(
                    f"step {step.id!r} needs {need!r}, which is not an earlier step of the plan", "needs"
                )
        if step.id in seen:
            raise node.fail(f"step id {step.id!r} is used twice (steps/{index})", "id")
        seen.add(step.id)
    return plan


def _read_row(n: Node) -> PolicyRow:
    n.exactly(MEMBERS["row"])
    mode = n.get("mode").choice(Mode)
    tool = n.get("tool").text()
    composite = _read_composite(n.get("composite"))
    operation, request = n.get("operation"), n.get("request")
    if (operation.value is None) == (composite is None):
        raise (
            n.fail("a composite tool's row has no operation (`operation: null`)", "operation")
            if composite
            else n.fail(
                "a row without an operation is a composite tool's and needs its `composite` plan", "composite"
            )
        )
    op_id = method = path = ""
    if operation.value is not None:
        operation.exactly(MEMBERS["operation"])
        op_id, method, path = (
            operation.get("id").text(),
            operation.get("method").text(),
            operation.get("path").text(),
        )
    record = n.get("record")
    request.exactly(MEMBERS["request"])
    record_arguments: RecordArguments | None = None
    preview_ttl_s: int | None = None
    if mode == "record":
        record.exactly(MEMBERS["record"])
        record_arguments = record.get("arguments").choice(RecordArguments)
        ttl = record.get("preview_ttl_s")
        preview_ttl_s = None if ttl.value is None else ttl.between(1, MAX_PREVIEW_TTL_S)
    elif record.value is not None:
        raise n.fail(f"a {mode} row holds no record object (record rows only)", "record")
    effect, approval = n.get("effect").choice(Effect), n.get("approval").choice(Approval)
    if (effect == "read") != (mode != "record"):
        # only a record row writes: a read or preview row the runtime sends without an approval, a
        # receipt or a key, so one that says it writes would send its write ungated
        raise n.fail(
            f"a {mode} row's effect is {'read' if mode != 'record' else 'write or destructive'}, "
            f"not {effect}",
            "effect",
        )
    if mode != "record" and approval != "never":
        raise n.fail(
            f"a {mode} row's approval is never (approval gates record rows only), not {approval}", "approval"
        )
    return PolicyRow(
        tool=tool,
        mode=mode,
        effect=effect,
        operation_id=op_id,
        method=method,
        path=path,
        permission=n.get("permission").tuple_of(Node.text),
        approval=approval,
        idempotency=read_idempotency(n.get("idempotency")),
        retry=read_retry(n.get("retry")),
        timeout_ms=n.get("timeout_ms").between(1, MAX_TIMEOUT_MS),
        pagination=read_pagination(n.get("pagination")),
        output=read_output(n.get("output")),
        auth=n.get("auth").tuple_of(read_auth),
        body_encoding=request.get("encoding").choice(BodyEncoding),
        body_content_type=request.get("content_type").opt_text(),
        bindings=request.get("bindings").tuple_of(read_binding),
        fixed=request.get("fixed").tuple_of(read_fixed),
        max_body_bytes=_read_body_limit(request.get("max_body_bytes")),
        pair=n.get("pair").opt_text(),
        intent=n.get("intent").text(),
        success_status=n.get("success_status").tuple_of(Node.integer),
        record_arguments=record_arguments,
        preview_ttl_s=preview_ttl_s,
        narrowed=n.get("narrowed").tuple_of(read_narrowed),
        toolset=n.get("toolset").opt_text(),
        loading=n.get("loading").choice(Loading),
        keywords=n.get("keywords").tuple_of(Node.text),
        examples=n.get("examples").tuple_of(Node.text),
        not_for=n.get("not_for").opt_text(),
        dialect_rewrites=_read_rewrites(n.get("dialect_rewrites")),
        composite=composite,
        approval_when=read_approval_when(n.get("approval_when"), mode, approval),
        limits=read_limits(n.get("limits")),
    )


def _read_toolset(n: Node) -> Toolset:
    n.exactly(MEMBERS["toolset"])
    return Toolset(
        name=n.get("name").text(),
        description=n.get("description").text(),
        loading=n.get("loading").choice(Loading),
        origin=n.get("origin").choice(ToolsetOrigin),
        examples=n.get("examples").tuple_of(Node.text),
    )


def from_json(value: JSON, file: str = "policy.json") -> PolicyTable:
    """The `PolicyTable` of `value`, the JSON value of a ``policy.json`` (`file`: the display path
    errors name). Raises `PolicyFormatError` (a ValueError) located at the first member that is
    missing or unknown, of the wrong JSON type, outside its values or below its bound, at ``/format``
    for another format version, and at ``/tools/<i>/tool`` for a tool named twice (module docstring)."""
    root = Node(value, "", file)
    root.obj()
    version = root.get("format")
    if version.value != FORMAT_VERSION:
        raise version.fail(
            f"policy format {shown(version.value)} is not the format {FORMAT_VERSION} this toolgen reads",
            hint=(
                "rebuild the API with this toolgen (`toolgen build`), or run the toolgen that wrote it"
                if isinstance(version.value, int) and not isinstance(version.value, bool)
                else REBUILD
            ),
        )
    root.exactly(MEMBERS["table"])
    rows: list[PolicyRow] = []
    seen: set[str] = set()
    for node in root.get("tools").items():
        row = _read_row(node)
        if row.tool in seen:
            raise node.fail(f"tool {row.tool!r} has a second row", "tool")
        seen.add(row.tool)
        rows.append(row)
    return PolicyTable(
        api=root.get("api").text(),
        title=root.get("title").text(),
        version=root.get("version").text(),
        base_url=root.get("base_url").text(),
        spec=root.get("spec").text(),
        tools=tuple(rows),
        toolsets=root.get("toolsets").tuple_of(_read_toolset),
        format=FORMAT_VERSION,
    )


def read_policy(path: str | os.PathLike[str], file: str | None = None) -> PolicyTable:
    """The `PolicyTable` of the ``policy.json`` at `path` (`file`: the display path errors name,
    default `path` as given). Raises OSError when it cannot be read, `PolicyFormatError` when it is not
    JSON (located at the document, with the line and column) or not of this format (`from_json`)."""
    shown = file if file is not None else os.fspath(path)
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    try:
        value = json.loads(text, object_pairs_hook=one_of_each, parse_constant=no_constant)
    except ValueError as exc:
        raise PolicyFormatError(f"not JSON: {exc}", "", REBUILD, shown) from None
    except RecursionError:
        raise PolicyFormatError("not JSON this reader takes: nested too deep", "", REBUILD, shown) from None
    return from_json(value, shown)


__all__ = [
    "FORMAT_VERSION",
    "JSON",
    "METHOD_OVERRIDE_HEADERS",
    "RESERVED_HEADERS",
    "Approval",
    "ArgBinding",
    "ArgLocation",
    "AuthBinding",
    "AuthLocation",
    "BodyEncoding",
    "CompositePattern",
    "CompositePlan",
    "CompositeStep",
    "Effect",
    "FixedValue",
    "Idempotency",
    "IdempotencyIn",
    "InputRef",
    "Limit",
    "LiteralValue",
    "Loading",
    "MappingValue",
    "Mode",
    "NarrowedArg",
    "NullMeans",
    "OutputPolicy",
    "Pagination",
    "PaginationStyle",
    "PerCaller",
    "PerCallerVia",
    "PolicyFormatError",
    "PolicyRow",
    "PolicyTable",
    "Reference",
    "Retry",
    "SchemaMode",
    "ServiceSecretUse",
    "StepRef",
    "Toolset",
    "from_json",
    "mapping_references",
    "read_policy",
]
