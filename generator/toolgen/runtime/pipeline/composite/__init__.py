"""Composite tools at run time: one tool over several operations of one API, every step through
the enforced call path (docs/composites.md "The runtime").

A composite is an ordinary ``tools[]`` row with ``operation: null`` and a ``composite`` plan; its
steps are loaded with it (`ToolSpec.steps`) and are never tools of their own. `run_composite` is
the call path of such a row, entered by `run` after find:

    permission (the row's: the union of the steps') → every step's own permission (refused before
    anything is read or sent) → validate (the composite's input schema) → timeout (one deadline
    for the whole composite) → by mode:

- ``read``: the steps by pattern (`execute`), then the result (`execute.output_of`) or the first
  failed step's error with every step's state (`execute.failure`);
- ``preview`` / ``record``: `write.preview`, `write.record`.

Modules: `refs` (the mapping language), `step` (one step's enforced path), `execute` (patterns,
result), `write` (preview and record). Yields the call path's effects (`Gather` for an
aggregate); never raises.
"""

from __future__ import annotations

from typing import Any

from ....policy.format import PolicyRow
from ...call.toolspec import ToolSpec
from ...calls import Approval, CallResult
from ...errors import make_error
from ...identity import permission_error
from .. import permission
from ..effects import Pipeline
from ..state import Call, Halt
from ..timeout import bound
from ..validate import validate_arguments
from .execute import execute, failure, output_of, pattern_of, selected
from .step import Step, steps_of
from .write import preview, record

__all__ = ["is_composite", "run_composite"]


def is_composite(row: PolicyRow) -> bool:
    """Policy: a composite tool's row (a ``composite`` plan)."""
    return row.composite is not None


def _steps_permitted(call: Call, spec: ToolSpec, steps: list[Step]) -> None:
    """Every step's own permission, before anything is read or sent. Raises `Halt` ``permission_denied``."""
    for step in steps:
        error = permission_error(step.spec.name, step.spec.row, call.actor.id, call.actor.scopes)
        if error is not None:
            error.details["step"] = step.id
            error.message = f"{spec.name}: step {step.id}: {error.message}"
            raise Halt("permission", error, rule=f"/composite/steps/{steps.index(step)}/row/permission")


def run_composite(
    call: Call,
    spec: ToolSpec,
    raw_args: Any,
    approval: Approval | None,
    timeout_override_ms: Any,
    dialect: str | None,
) -> Pipeline:
    """The call path of composite tool `spec` (see the module docstring); returns its `CallResult`."""
    steps = steps_of(spec)
    try:
        permission.admit(call, spec)
        _steps_permitted(call, spec, steps)
        args = validate_arguments(call, spec, raw_args, dialect)
        permission.audit(call, spec)
        budget = bound(call, spec.row, timeout_override_ms)
        mode = spec.row.mode
        if mode == "preview":
            return (yield from preview(call, spec, steps, args, budget.deadline))
        if mode == "record":
            return (yield from record(call, spec, steps, args, approval, budget))
        return (yield from _read(call, spec, steps, args, budget.deadline))
    except Halt as halt:
        return call.fail(halt.step, halt.error, rule=halt.rule, decision=halt.decision, **halt.extra)
    except Exception as exc:  # noqa: BLE001 - a fault in the composite path never escapes
        return call.fail(
            "result",
            make_error(
                "internal_error",
                f"{call.tool}: the runtime failed while handling the call ({type(exc).__name__}).",
                result_known=not spec.mutating,
            ),
        )


def _read(call: Call, spec: ToolSpec, steps: list[Step], args: dict[str, Any], deadline: float) -> Pipeline:
    """A read composite: the steps by pattern, then the result. Raises `Halt`."""
    runs = yield from execute(call, spec, selected(spec, steps, args), args, deadline, {})
    for run in runs:
        call.secret_values.extend(run.secret_values)
    aggregate = pattern_of(spec) == "aggregate"
    answered = [r for r in runs if r.state == "done"]
    if not (aggregate and answered) and (error := failure(runs)) is not None:
        return call.fail("steps", error)
    extra = (
        {"errors": {r.id: r.error.to_json()["error"] for r in runs if r.error is not None}}
        if aggregate
        else None
    )
    result, warnings = output_of(call, spec, args, runs, extra)
    call.emit("result", "ok")
    return CallResult(
        call.tool,
        True,
        result=result,
        fingerprint=None,
        status=200,
        call_id=call.call_id,
        warnings=warnings,
        attempts=sum(r.attempts for r in runs),
    )
