"""One step of a composite tool, through the same enforced path as a single tool call.

A step is a complete policy row of its own (``composite.steps[].row``, loaded as
`ToolSpec.steps`), named ``<composite tool>.<step id>``: a name no catalog lists and no caller can
call. `run_step` takes it through the call path's own steps, in their order:

    resolve its arguments (`refs`) → the step's permission → validate (the step operation's input
    schema) → canonical request → timeout (within what is left of the composite's deadline) → wire
    request → idempotency (a write step's key: ``tgs-<digest>``, `idempotency.step_key`, a receipt
    of its own) → limits (the step row's, counted when its request is sent: `rate_limits.acquire`)
    → send → outcome → output validation (the step's output schema)

and returns a `StepRun`: ``done`` (with the answer's validated JSON body, before any projection:
what later references read), ``failed`` (its structured error; nothing of it took effect) or
``result_unknown`` (a write that may have happened). A 2xx answer whose body cannot be read is
``done`` with no body and a `StepRun.warning` (a write's receipt completed with the warning, so a
replay shows it too), except for a read in ``strict`` output mode (``output_invalid``). It never raises; a fault in the path settles
the receipt ``unknown``, and a driver closing the generator (cancellation) does too.

`step_request` is the request part alone (resolve, validate, build, fingerprint): what a preview
shows and what a record compares with the preview. Errors name the step (``details.step``) and,
for a reference, the pointer (``composite_reference_missing``; ``invalid_arguments`` with the
composite's own argument in ``details.pointer`` when the step argument is one of them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...call.request import BuiltRequest
from ...call.toolspec import ToolSpec
from ...calls import CallResult
from ...errors import ToolError, make_error
from .. import permission
from ..canonical import canonical_request
from ..credential import credentials
from ..effects import Effect
from ..idempotency import STEP_KEY_PREFIX, begin, step_key, step_key_length
from ..outcome import Answer, judge, unreadable_result, unreadable_warnings
from ..rate_limits import Taken, acquire, release
from ..redirect import follow
from ..send import attempts, wire_request
from ..state import Budget, Call, Halt, Hold, Validated
from ..timeout import bound
from ..validate import pointer as to_pointer
from ..validate import validate_arguments
from .step_refs import MissingMember, Pending, resolve_args, sketch_args

__all__ = [
    "Step",
    "StepRun",
    "placeholder_key",
    "run_step",
    "step_request",
    "step_sketch",
    "steps_of",
    "write_step_key",
]


@dataclass(frozen=True)
class Step:
    """One step of a plan (policy ``composite.steps[]``): its `id`, the switch value it runs for
    (`when`, branch), the steps whose answers it reads (`needs`), its argument nodes (`args`), its
    loaded row (`spec`) and whether the composite redacts members of its output (`redacts`: then an
    unreadable answer's excerpt, text that cannot be redacted, is withheld from the step's warning)."""

    id: str
    when: Any
    needs: tuple[str, ...]
    args: dict[str, Any]
    spec: ToolSpec
    redacts: bool = False

    @property
    def writes(self) -> bool:
        return self.spec.mutating


def steps_of(spec: ToolSpec) -> list[Step]:
    """The plan's steps of composite tool `spec`, in plan order."""
    plan = spec.row.composite
    return [
        Step(
            s.id, s.when, s.needs, {k: v.to_json() for k, v in s.args.items()}, loaded, bool(spec.redact_tree)
        )
        for s, loaded in zip(plan.steps if plan is not None else (), spec.steps, strict=True)
    ]


@dataclass
class StepRun:
    """What became of one step: `state` ``done`` / ``failed`` / ``result_unknown`` / ``not_run``;
    `body` the answer's JSON body (done), `warning` (done with a body that cannot be read, whose
    body is then None), `error` (failed, result_unknown), the HTTP `status`,
    `attempts`, whether its receipt was `replayed`, its idempotency `key`, the `request` it sent or
    would send (redacted, as a preview shows it) and the step call's secrets (scrubbed from the
    composite's result)."""

    id: str
    state: str
    body: Any = None
    error: ToolError | None = None
    status: int | None = None
    attempts: int = 0
    replayed: bool = False
    key: str | None = None
    secret_values: list[str] = field(default_factory=list)
    warning: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"id", "state"[, "idempotency_key"][, "replayed"][, "warning"][, "error"]}``."""
        out: dict[str, Any] = {"id": self.id, "state": self.state}
        if self.key is not None:
            out["idempotency_key"] = self.key
        if self.replayed:
            out["replayed"] = True
        if self.warning is not None:
            out["warning"] = self.warning
        if self.error is not None:
            out["error"] = self.error.to_json()["error"]
        return out


def _key_length(step: Step) -> int:
    """The length of `step`'s key: `step_key_length` of its key argument's ``maxLength``."""
    prop = (step.spec.input_schema.get("properties") or {}).get(step.spec.key_arg or "")
    return step_key_length(prop.get("maxLength") if isinstance(prop, dict) else None)


def write_step_key(record_tool: str, record_key: str, step: Step) -> str:
    """The idempotency key write `step` sends when `record_tool` is called with `record_key`
    (`idempotency.step_key`, as long as the step's key argument allows)."""
    return step_key(record_tool, record_key, step.id, _key_length(step))


def placeholder_key(step: Step) -> str:
    """The key a preview fills in for write `step` (the record's key is not known yet):
    ``tgs-xxxx...`` of the step key's length, so it validates as the record's will; the fingerprint
    never includes the key, so the preview's request is the record's."""
    return STEP_KEY_PREFIX + "x" * (_key_length(step) - len(STEP_KEY_PREFIX))


def _input_pointer(step: Step, step_pointer: str) -> str | None:
    """The composite argument a step argument is (``$input/x`` as the whole argument), if any."""
    name = step_pointer.split("/")[1] if step_pointer.count("/") >= 1 else ""
    node = step.args.get(name)
    if isinstance(node, dict) and node.get("$ref") == "input":
        rest = step_pointer[len(name) + 1 :]
        return str(node.get("pointer") or "") + rest
    return None


def _named(step: Step, error: ToolError, *, branch: bool) -> ToolError:
    """`error` of `step` saying so: ``details.step`` (``details.branch`` for a branch's step), and
    for invalid arguments the composite's own argument in ``details.pointer``."""
    error.details["step"] = step.id
    if branch:
        error.details["branch"] = step.id
    if error.code == "invalid_arguments":
        step_pointer = str(error.details.get("pointer", ""))
        error.details["step_pointer"] = step_pointer
        mapped = _input_pointer(step, step_pointer)
        if mapped is not None:
            error.details["pointer"] = mapped
    if not error.message.startswith("step "):
        error.message = f"step {step.id} ({step.spec.row.operation_id or step.spec.name}): {error.message}"[
            :600
        ]
    return error


def _arguments(
    step: Step, inputs: Mapping[str, Any], answers: Mapping[str, Any], key: str | None
) -> dict[str, Any]:
    """The step's resolved arguments, its idempotency key filled in. Raises `Halt`
    ``composite_reference_missing``; `Pending` propagates."""
    try:
        args = resolve_args(step.args, inputs, answers)
    except MissingMember as miss:
        raise Halt(
            "validate",
            make_error(
                "composite_reference_missing",
                f"step {step.id}: the answer of step {miss.step} has no member {miss.pointer or '/'}; "
                f"step {step.id} was not run.",
                details={"step": step.id, "from_step": miss.step, "pointer": miss.pointer},
            ),
        ) from None
    idem = step.spec.key_arg
    if idem and key is not None:
        args[idem] = key
    return args


def step_sketch(step: Step, inputs: Mapping[str, Any], answers: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of a step that reads a step not answered yet, as far as they are known
    (`refs.sketch_args`; without the idempotency key, which is the record's). Raises `Halt`
    ``composite_reference_missing`` (a read's answer lacks a member it reads)."""
    try:
        return sketch_args(step.args, inputs, answers)
    except MissingMember as miss:
        raise Halt(
            "validate",
            _named(
                step,
                make_error(
                    "composite_reference_missing",
                    f"step {step.id}: the answer of step {miss.step} has no member {miss.pointer or '/'}; "
                    f"step {step.id} was not run.",
                    details={"step": step.id, "from_step": miss.step, "pointer": miss.pointer},
                ),
                branch=False,
            ),
        ) from None


def step_request(
    call: Call,
    step: Step,
    inputs: Mapping[str, Any],
    answers: Mapping[str, Any],
    key: str | None,
    *,
    branch: bool = False,
) -> Validated:
    """The step's validated canonical request (its fingerprint `Validated.fp`). Raises `Halt`
    (the error naming the step) or `Pending` (a reference to a step not answered yet)."""
    try:
        args = _arguments(step, inputs, answers, key)
        permission.admit(call, step.spec)
        validated = canonical_request(call, step.spec, validate_arguments(call, step.spec, args, None))
        permission.audit(call, step.spec)
        return validated
    except Halt as halt:
        raise Halt(halt.step, _named(step, halt.error, branch=branch), **halt.extra) from None


def _budget(call: Call, step: Step, deadline: float) -> Budget:
    """The step's budget: its row's, the per-attempt timeout and the deadline within what is left
    of the composite's deadline (monotonic seconds). Raises `Halt` ``tool_timeout`` when none is left."""
    left_ms = int((deadline - call.host.clock.monotonic()) * 1000)
    if left_ms <= 0:
        raise Halt(
            "timeout",
            make_error(
                "tool_timeout",
                f"step {step.id}: the composite's deadline passed before this step; it was not sent.",
                details={"step": step.id},
            ),
        )
    budget = bound(call, step.spec.row, left_ms)
    return dataclasses.replace(budget, deadline=min(budget.deadline, deadline))


def _failed(step: Step, call: Call, halt: Halt, *, branch: bool, key: str | None) -> StepRun:
    error = _named(step, halt.error, branch=branch)
    # audited like any failed call
    failed = call.fail(halt.step, error, rule=halt.rule, decision=halt.decision, **halt.extra)
    state = "result_unknown" if step.writes and not error.result_known else "failed"
    return StepRun(
        step.id,
        state,
        error=failed.error,
        status=failed.status,
        attempts=failed.attempts,
        key=key,
        secret_values=call.secret_values,
    )


def run_step(
    parent: Call,
    step: Step,
    inputs: Mapping[str, Any],
    answers: Mapping[str, Any],
    deadline: float,
    key: str | None,
    *,
    branch: bool = False,
) -> Generator[Effect, Any, StepRun]:
    """Run `step` (see the module docstring); `key` is a write step's idempotency key (None for a
    read). Yields the call path's effects; returns the `StepRun`. Never raises."""
    call = Call(
        parent.host, step.spec.name, parent.actor, call_id=parent.call_id, args_digest=parent.args_digest
    )
    call.emit("find", "allow", mode=step.spec.row.mode, effect=step.spec.row.effect, composite=parent.tool)
    try:
        validated = step_request(call, step, inputs, answers, key, branch=branch)
        budget = _budget(call, step, deadline)
        injected = yield from credentials(call, step.spec)
        wire, http_request = wire_request(call, step.spec, validated, injected)
        hold = begin(call, step.spec, validated, budget, step_key=key if step.writes else None)
    except Halt as halt:
        return _failed(step, call, halt, branch=branch, key=key)
    except Pending as pending:  # the build orders steps by their references: a runtime bug
        return _failed(
            step,
            call,
            Halt(
                "validate",
                make_error("internal_error", f"step {step.id} reads step {pending.step}, which has not run."),
            ),
            branch=branch,
            key=key,
        )
    except Exception as exc:  # noqa: BLE001 - a fault before sending (a credentials provider's...) is this step's
        return _failed(
            step,
            call,
            Halt(
                "request",
                make_error(
                    "internal_error",
                    f"{call.tool}: the runtime failed while preparing the step ({type(exc).__name__}); "
                    "it was not sent.",
                ),
            ),
            branch=branch,
            key=key,
        )
    if isinstance(hold, CallResult):  # a replay of the step's receipt: never sent again
        stored = hold.result if isinstance(hold.result, dict) else {}
        return StepRun(
            step.id,
            "done",
            body=stored.get("body"),
            status=hold.status,
            replayed=True,
            key=key,
            secret_values=call.secret_values,
            warning=_stored_warning(stored),
        )
    return (
        yield from _held(call, step, validated, budget, hold, (wire, http_request), branch=branch, key=key)
    )


def _held(
    call: Call,
    step: Step,
    validated: Validated,
    budget: Budget,
    hold: Hold,
    sent: tuple[BuiltRequest, Any],
    *,
    branch: bool,
    key: str | None,
) -> Generator[Effect, Any, StepRun]:
    """The steps that run while the step holds its receipt (if any)."""
    spec = step.spec
    wire, http_request = sent
    taken = Taken()
    try:
        if call.audit_failures:
            hold.let_go()
            raise Halt(
                "audit",
                make_error("internal_error", f"{call.tool}: the audit sink failed; nothing was sent."),
            )
        taken = acquire(call, spec, validated, budget, hold)  # the step row's limits, as a tool's
        exchange = yield from attempts(call, spec, http_request, budget, hold)
        exchange, http_request, landed = yield from follow(call, spec, wire, http_request, budget, exchange)
        answer = judge(call, spec, validated, budget, hold, exchange, http_request, landed)
        if answer.unreadable is not None:
            return _unreadable(call, step, hold, answer, exchange.attempts, key)
        _check_output(call, step, answer.body, exchange.attempts, answer.status)
        hold.settle("complete", {"body": answer.body}, answer.status)
        call.emit("result", "ok", status=answer.status)
        return StepRun(
            step.id,
            "done",
            body=answer.body,
            status=answer.status,
            attempts=exchange.attempts,
            key=key,
            secret_values=call.secret_values,
        )
    except Halt as halt:
        return _failed(step, call, halt, branch=branch, key=key)
    except Exception as exc:  # noqa: BLE001 - a fault in the path never escapes as an exception
        hold.settle("mark_unknown")
        return _failed(
            step,
            call,
            Halt(
                "result",
                make_error(
                    "internal_error",
                    f"{call.tool}: the runtime failed while handling the step ({type(exc).__name__}).",
                    result_known=not spec.mutating,
                ),
            ),
            branch=branch,
            key=key,
        )
    finally:
        hold.settle("mark_unknown")
        release(call, taken)


def _stored_warning(stored: Mapping[str, Any]) -> str | None:
    """The warning a step's receipt stored with its result (a body that could not be read), or None."""
    warning = stored.get("warning")
    return warning if isinstance(warning, str) else None


def _unreadable(
    call: Call, step: Step, hold: Hold, answer: Answer, attempts_made: int, key: str | None
) -> StepRun:
    """A step whose 2xx answer's body cannot be read: ``done`` with no body and a warning, its
    receipt completed (the API's status says the write was done); raises `Halt` ``output_invalid``
    for a read in ``strict`` output mode."""
    spec, status = step.spec, answer.status
    if not spec.mutating and spec.row.output.schema_mode == "strict":
        raise Halt(
            "output",
            make_error(
                "output_invalid",
                f"{call.tool} answered HTTP {status} with a body that cannot be read ({answer.unreadable}).",
                details={"status": status},
            ),
            attempts=attempts_made,
            status=status,
        )
    warning = (
        f"step {step.id}: "
        + unreadable_warnings(spec, unreadable_result(spec, answer, withhold=step.redacts))[0]
    )
    call.emit("output", "warn", problem=answer.unreadable)
    hold.settle("complete", {"body": None, "warning": warning}, status)
    call.emit("result", "ok", status=status)
    return StepRun(
        step.id,
        "done",
        status=status,
        attempts=attempts_made,
        key=key,
        secret_values=call.secret_values,
        warning=warning,
    )


def _check_output(call: Call, step: Step, body: Any, attempts_made: int, status: int) -> None:
    """The answer against the step's output schema: ``strict`` refuses a read's answer
    (``output_invalid``), otherwise a mismatch is audited (``output`` ``warn``)."""
    validator = step.spec.output_validator
    if validator is None or validator.is_valid(body):
        return
    first = next(iter(validator.iter_errors(body)))
    where = to_pointer(first.instance_path)
    mode = step.spec.row.output.schema_mode
    if mode == "strict" and not step.spec.mutating:
        raise Halt(
            "output",
            make_error(
                "output_invalid",
                f"{call.tool}'s answer does not match its output schema: {where or '/'}: {first.message}"[
                    :300
                ],
                details={"pointer": where},
            ),
            attempts=attempts_made,
            status=status,
        )
    call.emit("output", "warn", pointer=where)
