"""Running a composite's steps by its pattern, and the composite's result (docs/composites.md).

- ``pipeline``: the steps in plan order; the first step that does not end ``done`` stops the plan,
  every later step is ``not_run``.
- ``branch``: the one step whose ``when`` equals the switch value (policy ``composite.switch``, a
  reference to the composite's argument); a switch value no step takes is ``invalid_arguments``.
  The taken step's required arguments are checked by its own validation (``details.branch``).
- ``aggregate``: every step at once (one `Gather` effect the driver performs concurrently), all
  within the one deadline; the result holds the members of the steps that answered and
  ``errors``: ``{step id: structured error}`` for the others.

`selected` is the steps a call runs; `execute` runs them (the steps already run, `done`, are kept:
a record's reads); `output_of` resolves ``composite.output`` over the answers and shapes it with the
composite row's own output policy (redaction, ``output.fields``, ``output.max_bytes``; checked
against its output schema, a mismatch a warning); `failure` is the composite's error when a step
did not end ``done``: that step's error, with every step's state in ``details.steps``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Mapping
from typing import Any

from ....policy.format import CompositePlan
from ...call.shaping import enforce_budget, project, redact
from ...call.toolspec import ToolSpec
from ...errors import ToolError, make_error
from ..effects import Effect, Gather
from ..state import Call, Halt
from ..validate import pointer as to_pointer
from .step import Step, StepRun, run_step
from .step_refs import Absent, MissingMember, Pending, resolve

__all__ = ["execute", "failure", "output_of", "pattern_of", "selected"]


def _plan(spec: ToolSpec) -> CompositePlan:
    """Policy: the composite row's plan (``composite``; `is_composite` rows only)."""
    plan = spec.row.composite
    if plan is None:  # the call path takes only composite rows here
        raise ValueError(f"{spec.name} is not a composite tool")
    return plan


def pattern_of(spec: ToolSpec) -> str:
    """Policy: the plan's pattern (``pipeline``, ``branch``, ``aggregate``)."""
    return _plan(spec).pattern


def selected(spec: ToolSpec, steps: list[Step], inputs: Mapping[str, Any]) -> list[Step]:
    """The steps a call with `inputs` runs: a branch's taken step, else all. Raises `Halt`
    ``invalid_arguments`` for a switch value no step takes."""
    if pattern_of(spec) != "branch":
        return steps
    switch = _plan(spec).switch
    try:
        value = None if switch is None else resolve(switch.to_json(), inputs, {})
    except (Absent, Pending, MissingMember):
        value = None
    taken = [s for s in steps if s.when == value]
    if not taken:
        where = "" if switch is None else switch.pointer
        raise Halt(
            "validate",
            make_error(
                "invalid_arguments",
                f"Invalid argument {where or '/'}: {value!r} chooses no branch; one of "
                f"{', '.join(repr(s.when) for s in steps)}.",
                details={"pointer": where, "keyword": "enum"},
            ),
        )
    return taken[:1]


def execute(
    call: Call,
    spec: ToolSpec,
    steps: list[Step],
    inputs: Mapping[str, Any],
    deadline: float,
    keys: Mapping[str, str],
    done: Mapping[str, StepRun] | None = None,
) -> Generator[Effect, Any, list[StepRun]]:
    """Run `steps` by the plan's pattern (see the module docstring); `keys`: each write step's
    idempotency key; `done`: the steps already run (kept as they are). Returns every step's
    `StepRun`, in plan order."""
    pattern = pattern_of(spec)
    branch = pattern == "branch"
    if pattern == "aggregate":
        runs: list[StepRun] = yield Gather(
            [run_step(call, s, inputs, {}, deadline, keys.get(s.id)) for s in steps]
        )
        return runs
    runs = []
    answers: dict[str, Any] = {}
    stopped = False
    for step in steps:
        if stopped:
            runs.append(StepRun(step.id, "not_run"))
            continue
        run = (done or {}).get(step.id)
        if run is None:
            run = yield from run_step(call, step, inputs, answers, deadline, keys.get(step.id), branch=branch)
        runs.append(run)
        if run.state == "done":
            answers[step.id] = run.body
        else:
            stopped = True
    return runs


def _members(
    spec: ToolSpec,
    inputs: Mapping[str, Any],
    answers: Mapping[str, Any],
    errors: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``composite.output`` resolved: members over a step that did not answer (or did not run) left
    out. A member over an answer without it is ``composite_reference_missing``: with `errors` (an
    aggregate's, ``{step id: error}``) that step's error there and the member left out, so one odd
    answer never hides the others; else raises `Halt`."""
    out: dict[str, Any] = {}
    for name, node in _plan(spec).output.items():
        try:
            out[name] = resolve(node.to_json(), inputs, answers)
        except (Absent, Pending):
            continue
        except MissingMember as miss:
            error = make_error(
                "composite_reference_missing",
                f"{spec.name}: the answer of step {miss.step} has no member {miss.pointer or '/'} (output "
                f"member {name}).",
                details={"step": miss.step, "pointer": miss.pointer, "member": str(name)},
            )
            if errors is None:
                raise Halt("output", error) from None
            errors.setdefault(miss.step, error.to_json()["error"])
    return out


def output_of(
    call: Call,
    spec: ToolSpec,
    inputs: Mapping[str, Any],
    runs: list[StepRun],
    extra: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """(the composite's result, warnings): the output members over the steps that answered,
    redacted, projected and fit to the budget of the composite row, then `extra` members (an
    aggregate's ``errors``, a record's ``steps``) added; checked against the output schema (a
    mismatch is a warning). An aggregate's member over an answer without it adds that step's
    ``composite_reference_missing`` to ``extra["errors"]``. Raises `Halt` (``composite_reference_missing``
    of a pipeline or branch, the budget's error)."""
    answers = {r.id: r.body for r in runs if r.state == "done"}
    partial = (extra or {}).get("errors") if pattern_of(spec) == "aggregate" else None
    members = _members(spec, inputs, answers, partial if isinstance(partial, dict) else None)
    result: Any = project(redact(members, spec.redact_tree), spec.field_tree)
    result = dict(result) if isinstance(result, dict) else {}
    result.update(extra or {})
    try:
        result, _ = enforce_budget(result, spec.row.output.max_bytes, keep=spec.required_members)
    except ToolError as exc:
        raise Halt("output", exc) from None
    warnings: list[str] = []
    validator = spec.output_validator
    if validator is not None and not validator.is_valid(result):
        first = next(iter(validator.iter_errors(result)))
        where = to_pointer(first.instance_path)
        warnings.append(f"output {where or '/'}: {first.message}"[:300])
        call.emit("output", "warn", pointer=where)
    return result, warnings


def failure(runs: list[StepRun], *, record: bool = False) -> ToolError | None:
    """The composite's error: the error of the first step that did not end ``done`` with every
    step's state in ``details.steps`` (None when all are done). For a record whose earlier writes
    are done, ``next_step`` says they stay done and how to resume."""
    bad = next((r for r in runs if r.state in ("failed", "result_unknown")), None)
    if bad is None or bad.error is None:
        return None
    error = dataclasses.replace(
        bad.error, details={**bad.error.details, "step": bad.id, "steps": [r.to_json() for r in runs]}
    )
    written = [r.id for r in runs if r.state == "done" and r.key is not None]
    if record and written:
        error.result_known = False if bad.state == "result_unknown" else error.result_known
        error.next_step = (
            f"Steps {', '.join(written)} are done and not rolled back. "
            + (error.next_step or "")
            + " Calling the record tool again with the same key "
            "replays the done steps (never sent again) and runs the rest; a step whose outcome "
            "is unknown is not sent again unless its API deduplicates the step's key."
        )
    return error
