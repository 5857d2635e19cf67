"""Stage `lower`, inference: the intent an `include` group gives an operation the map does not name.

Input: an operation and its include group. Output: a `ToolIntent` (effect from what the operation says
it does, `toolgen.compile.verbs.guess_effect`, never a read on a method that is not safe; the group's
approval, defaulted later with every intent's, `toolgen.compile.lower.resolve`; an idempotency key).
Shared by the include groups (`intents`) and by composite steps whose operation has no intent of its
own (`composites`).
"""

from __future__ import annotations

from ...diagnostics import DiagnosticSink
from ..intent import IdempotencySpec, IncludeSpec, ToolIntent
from ..ir import Effect
from ..operations import Operation
from ..verbs import guess_effect
from .context import Ctx, Skip
from .idempotency_key import KeyPlace, idempotency_place


def infer_intent(ctx: Ctx, op: Operation, group: IncludeSpec) -> ToolIntent:
    """The intent an include group gives `op`: its effect (`group.effect`, else from what the operation
    says it does, never a read on a method that is not safe), the group's approval (None when it states
    none: `resolve.resolve_intent` applies the default) and idempotency key (sent where
    the operation takes one, `idempotency_place`: a header, a query parameter or a body member; else
    `action_id` for receipts). Raises `Skip` for TRACE."""
    if op.method == "TRACE":
        raise Skip(
            "operation-method-unsupported",
            "TRACE operations are not turned into tools",
            ctx.doc.locate(op.pointer),
        )
    effect: Effect
    if group.effect != "inferred":
        effect = group.effect
    else:  # from what the operation says it does; never a read that the method does not make one
        guessed = guess_effect(op).effect
        effect = "write" if guessed == "read" and op.method not in ("GET", "HEAD", "OPTIONS") else guessed
    idempotency = None
    if effect != "read":
        place = _quiet_place(ctx, op)
        if place is not None:
            idempotency = IdempotencySpec(key="idempotency_key", send_as=place.send_as)
        else:
            idempotency = IdempotencySpec(key="action_id", send_as="none")
    # the group's approval as stated: a write's default is applied where every intent's is
    # (`resolve.resolve_intent`); its toolset and loading come from `group` (`toolsets.place`)
    return ToolIntent(
        operation=op.key,
        effect=effect,
        permission=group.permission,
        approval=group.approval,
        idempotency=idempotency,
    )


def _quiet_place(ctx: Ctx, op: Operation) -> KeyPlace | None:
    """`idempotency_place` with what converting the request body reports (a schema cycle, say) left
    out: lowering the operation converts the same body and reports it there, and an inference that
    reports nothing is one the build cache can keep (`reuse.inferred_intent`)."""
    sink, ctx.converter.sink = ctx.converter.sink, DiagnosticSink()
    try:
        return idempotency_place(ctx.doc, ctx.converter, op)
    finally:
        ctx.converter.sink = sink
