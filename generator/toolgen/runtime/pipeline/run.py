"""The call path: every step in its fixed order, as one sans-IO generator (`run`).

    find → permission (checked; audited once the arguments are valid) → validate (the arguments,
    then the canonical request) → approval (checked; spent at send) → timeout → preview (a
    preview tool ends here) → credentials (the shared or the caller's; then the wire request) →
    idempotency → [audit sink healthy] → limits (the approval spent first, [audit sink healthy]) →
    send → redirect (a read that declares only a redirect) → outcome → output

This is the one written order: README.md and docs/runtime.md ("The call path") state it with the
same step names, and `tests/runtime/pipeline/test_run.py` fails when they and this function disagree.

A composite tool (a row with a ``composite`` plan) takes its own path after find (`composite`),
each of its steps through these same steps.

A step either returns what the next steps need (frozen: `Validated`, `Grant`, `Budget`,
`Exchange`, `Answer`) or raises `Halt`, which ends the call as `Call.fail` at the step it names.
From the idempotency step on the call holds its receipt (`Hold`): however the call ends — a
`Halt`, a fault in a step (``internal_error``, receipt ``unknown``), or the driver closing the
generator (cancellation) — the receipt never stays pending. Nothing is sent unaudited: a call
whose audit sink failed stops before spending its approval and before sending (``internal_error``).
"""

from __future__ import annotations

from typing import Any

import httpx

from ..audit import digest_arguments
from ..call.host import Host
from ..call.request import BuiltRequest
from ..call.toolspec import ToolSpec
from ..calls import Actor, Approval, CallResult
from ..errors import ToolError, make_error
from . import approval as approval_step
from . import permission
from .canonical import canonical_request
from .composite import is_composite, run_composite
from .credential import credentials
from .effects import Pipeline
from .find import find
from .idempotency import begin
from .outcome import judge
from .output import shape
from .preview import is_preview, preview
from .rate_limits import Taken, acquire, release
from .redirect import follow
from .send import attempts, wire_request
from .state import Budget, Call, Grant, Halt, Hold, Validated
from .timeout import bound
from .validate import validate_arguments

__all__ = ["run"]


def run(
    host: Host,
    tool: Any,
    raw_args: Any,
    actor: Actor,
    approval: Approval | str | None,
    timeout_override_ms: Any,
    dialect: str | None = None,
) -> Pipeline:
    """The call path of one call of `tool` on `host` (see the module docstring). Yields `Send` and
    `Sleep` effects; returns the `CallResult`. Never raises on caller input or API answers."""
    call = Call(host, tool, actor, args_digest=digest_arguments(raw_args))
    if isinstance(approval, str):  # a bare preview_id is an approval of that preview
        approval = Approval(approval)
    try:
        spec = find(call)
        if is_composite(spec.row):  # several operations, each step through this same path
            return (yield from run_composite(call, spec, raw_args, approval, timeout_override_ms, dialect))
        permission.admit(call, spec)  # a tool the actor may not see: refused before its arguments are read
        validated = canonical_request(call, spec, validate_arguments(call, spec, raw_args, dialect))
        permission.audit(call, spec)
        grant = approval_step.check(call, spec, validated, approval)
        budget = bound(call, spec.row, timeout_override_ms)
        if is_preview(spec.row):
            return preview(call, spec, validated)
        injected = yield from credentials(call, spec)
        wire, http_request = wire_request(call, spec, validated, injected)
        hold = begin(call, spec, validated, budget)
    except Halt as halt:
        return call.fail(halt.step, halt.error, rule=halt.rule, decision=halt.decision, **halt.extra)
    if isinstance(hold, CallResult):  # a replay
        return hold
    return (yield from _held(call, spec, validated, grant, budget, hold, wire, http_request))


def _held(
    call: Call,
    spec: ToolSpec,
    validated: Validated,
    grant: Grant,
    budget: Budget,
    hold: Hold,
    wire: BuiltRequest,
    http_request: httpx.Request,
) -> Pipeline:
    """The steps that run while the call holds its receipt (if any)."""
    taken = Taken()
    try:
        if (stopped := _unaudited(call, hold)) is not None:  # checked before the approval is spent, too
            return call.fail("audit", stopped)
        approval_step.spend(call, grant, hold)
        if (stopped := _unaudited(call, hold)) is not None:
            result = call.fail("audit", stopped)
            hold.unspend()  # nothing was sent: the approval is not spent either
            return result
        taken = acquire(call, spec, validated, budget, hold)  # over a limit: nothing sent, approval kept
        exchange = yield from attempts(call, spec, http_request, budget, hold)
        exchange, http_request, landed = yield from follow(call, spec, wire, http_request, budget, exchange)
        answer = judge(call, spec, validated, budget, hold, exchange, http_request, landed)
        return shape(call, spec, validated, hold, exchange, answer, wire)
    except Halt as halt:
        return call.fail(halt.step, halt.error, rule=halt.rule, decision=halt.decision, **halt.extra)
    except Exception as exc:  # noqa: BLE001 - a fault in the call path never escapes as an exception
        hold.settle("mark_unknown")
        return call.fail(
            "result",
            make_error(
                "internal_error",
                f"{call.tool}: the runtime failed while handling the call ({type(exc).__name__}).",
                result_known=not spec.mutating,
                details={"receipt_state": "unknown" if hold.key is not None else None},
            ),
        )
    finally:
        hold.settle("mark_unknown")
        release(call, taken)


def _unaudited(call: Call, hold: Hold) -> ToolError | None:
    """Nothing is sent unaudited: once the audit sink failed, the call stops here, letting go of the
    receipt it holds (released when this call created it); the ``internal_error`` to fail with at
    step ``audit``, else None."""
    if not call.audit_failures:
        return None
    hold.let_go()
    return make_error(
        "internal_error", f"{call.tool}: the audit sink failed ({call.audit_failures[0]}); nothing was sent."
    )
