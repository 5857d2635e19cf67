"""Stage `lower`, composites: each step of a composite lowered as an ordinary tool of its operation.

Input: a composite's step (`CompositeStepSpec`: its id and operation) and the lowering context.
Output: a `Step` holding the step's operation, its policy row (lowered by
`toolgen.compile.lower.tools.lower_intent` from the operation's own intent in `tools:` when the map
has one, else from the intent an include group would infer; then without pagination and
projection, a write step as a record row with full arguments and approval ``never``), its input
schema and its answer's schema, and the step intent's own redactions. An unknown operation, or one
the ordinary lowering refuses, is a located error at the step's `operation` (None).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...diagnostics import DiagnosticError, DiagnosticSink
from ...policy.format import MappingValue
from ..intent import CompositeStepSpec, IncludeSpec, OutputSpec, RecordSpec, ToolIntent
from ..ir import PolicyRow
from ..operations import Operation, OperationIndex, find_operation, suggest_operations
from .composite_schemas import answer_schema
from .context import Ctx, Skip
from .infer import infer_intent
from .resolve import resolve_intent
from .tools import lower_intent


@dataclass
class Step:
    """A composite's step lowered: its place in `steps` (`index`), operation, policy row, input and
    answer schemas (`output_schema` None when the answer's schema cannot be told), and its `args`
    (filled by `toolgen.compile.lower.composite_checks.parse_mappings`)."""

    spec: CompositeStepSpec
    index: int
    op: Operation
    row: PolicyRow
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    args: dict[str, MappingValue]
    redact: tuple[str, ...]  # the step intent's own redaction paths (dotted, into its answer)


def _step_intent(ctx: Ctx, op: Operation, by_ref: OperationIndex) -> tuple[ToolIntent, bool]:
    """The intent an ordinary tool of `op` is lowered from: the map's own (first in `tools:` order)
    when it has one (True), else the one an include group would infer (False)."""
    for intent in ctx.intents.model.tools.values():
        if find_operation(by_ref, intent.operation) is op:
            return intent, True
    return infer_intent(ctx, op, IncludeSpec()), False


def step_effect_guess(ctx: Ctx, by_ref: OperationIndex, spec: CompositeStepSpec) -> str:
    """The effect of the intent the step's operation is lowered from, before lowering it (``read`` when
    the operation is unknown or cannot be lowered: its error comes with `lower_step`)."""
    op = find_operation(by_ref, spec.operation)
    if op is None:
        return "read"
    try:
        return _step_intent(ctx, op, by_ref)[0].effect
    except Skip:
        return "read"


def lower_step(
    ctx: Ctx,
    operations: list[Operation],
    by_ref: OperationIndex,
    key: str,
    owner: str,
    index: int,
    spec: CompositeStepSpec,
    loc: Any,
) -> Step | None:
    """Step `index` of composite `key` lowered (its row named ``<owner>.<step id>``, `owner` the
    composite's last tool), or None after located errors at the step's `operation` in ``ctx.sink``."""
    sink = ctx.sink
    op = find_operation(by_ref, spec.operation)
    where = loc("steps", index, "operation")
    if op is None:
        close = suggest_operations(operations, spec.operation)
        sink.error(
            "composite-step-operation-unknown",
            f"composite `{key}`: step `{spec.id}` names operation {spec.operation!r}, which is not in "
            f"{ctx.doc.display}",
            where,
            f"did you mean {', '.join(repr(c) for c in close)}?"
            if close
            else "use an operationId or `METHOD /path` exactly as written in the spec",
        )
        return None
    try:
        base, _explicit = _step_intent(ctx, op, by_ref)
    except Skip as skip:
        sink.error(skip.code, f"composite `{key}`, step `{spec.id}`: {skip.message}", where, skip.hint)
        return None
    keep = base.output
    step_intent = base.model_copy(
        update={
            "pagination": None,
            "approval": "never",
            "preview": False,
            "record": RecordSpec(arguments="full"),
            "output": OutputSpec(
                max_bytes=keep.max_bytes if keep else None, schema_mode=keep.schema_mode if keep else None
            ),
            "toolset": None,
            "loading": None,
            "keywords": [],
            "examples": [],
            "use_when": None,
            "not_for": None,
        }
    )
    # lowered by the ordinary tools' code, in a scratch context: its names and diagnostics are the
    # ordinary tool's business, only errors are reported here, at the step
    scratch = Ctx(
        ctx.doc, ctx.intents, DiagnosticSink(), ctx.api, ctx.converter, names={}, toolsets=dict(ctx.toolsets)
    )
    try:
        made = lower_intent(scratch, op, spec.id, step_intent, ("steps",), explicit=False)
    except Skip as skip:
        sink.error(
            skip.code, f"composite `{key}`, step `{spec.id}` ({op.key}): {skip.message}", where, skip.hint
        )
        return None
    except DiagnosticError as exc:
        for d in exc.diagnostics:
            sink.error(d.code, f"composite `{key}`, step `{spec.id}` ({op.key}): {d.message}", where, d.hint)
        return None
    for d in scratch.sink.errors:
        sink.error(d.code, f"composite `{key}`, step `{spec.id}` ({op.key}): {d.message}", where, d.hint)
    if scratch.sink.errors:
        return None
    tool = made[-1]
    row = replace(
        tool.policy,
        tool=f"{owner}.{spec.id}",
        pair=None,
        intent=key,
        toolset=None,
        loading="eager",
        keywords=(),
        examples=(),
        not_for=None,
    )
    redact = resolve_intent(ctx.intents, spec.id, base, ("steps",), explicit=False).output.redact
    answer = answer_schema(tool.output_schema, row.output.shape)
    return Step(spec, index, op, row, tool.input_schema, answer, {}, redact)
