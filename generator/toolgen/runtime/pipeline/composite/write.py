"""A composite that writes: its ``preview_<name>`` and ``record_<name>`` tools (docs/composites.md
"The runtime").

The plan splits in two. The *reads* are the read steps before the first write (of the steps the
call runs: a branch's taken step); they run in the preview and again in the record. Every write
step's request is then resolved and built (`step.step_request`, the same validation a send has);
a write whose arguments read the answer of a step that has not run (a write, or a read after one)
is shown as ``known_after`` that step with its ``arguments`` as far as they are known (a reference to
a step not run yet marked ``{"known_after", "pointer"}``). The plan's fingerprint, the
``preview_id``, is the fingerprint of the composite's intent and every write step's (id, request
fingerprint, or fingerprint of what is known of it), in order: previewing other arguments that reach
a later write gives another ``preview_id``, and a read such a write uses that answers otherwise at
record time makes the plan stale.

- `preview`: runs the reads, shows each write request in order, stores the composite's arguments
  (under the record tool, as a single record's stored preview: `toolgen.runtime.call.stored_previews`)
  and the per-step fingerprints (under ``<record tool>#plan``, to name a stale step). Sends no
  write. Result: ``{"preview_id", "effect", "approval_required", "record_tool", "reads",
  "requests": [{"step", "request" | "known_after" and "arguments"}], "expires_in_s"[, "cannot_send"]}``.
- `record` (``preview_id`` + the idempotency key): the stored arguments, the composite's own
  approval check (the ``preview_id``), one deadline, the record's receipt (scope
  ``<api>/<record tool>``, fingerprint the ``preview_id``: a completed one is replayed whole);
  the reads again, and ``preview_stale`` (nothing written, the receipt released) when the plan's
  fingerprint differs; the approval spent once, bound to the record key; then the steps in order,
  each write step with the key ``tgs-<digest>`` (`idempotency.step_key` of the record tool, the
  record key and the step id: a form no caller's key may take) and a receipt of its own (a
  replayed record result is redacted again with the current ``output.redact``, as a single
  record's is). The record's receipt ends ``completed`` (every step
  done), ``unknown`` (a step ``result_unknown``, or a write done before a later step failed: the
  next call with the key resumes, each step's receipt deciding), or released with the approval
  given back (nothing written). It never stays pending.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

from ...call.arguments import invalid_argument, key_text_problem
from ...call.host import Host
from ...call.page_cursor import Page
from ...call.request import BuiltRequest
from ...call.response_body import scrub
from ...call.shaping import redact
from ...call.stored_previews import stored_arguments
from ...call.toolspec import ToolSpec, display
from ...calls import Actor, Approval, CallResult, fingerprint
from ...errors import ToolError, make_error
from ...stores import StoredPreview
from .. import approval as approval_step
from ..effects import Effect
from ..idempotency import LEASE_MARGIN_MS, STEP_KEY_PREFIX, receipt_decision, reserved
from ..outcome import withhold_warning
from ..preview import DEFAULT_PREVIEW_TTL_S
from ..state import Budget, Call, Grant, Halt, Hold, Validated
from .execute import execute, failure, output_of, selected
from .step import Step, StepRun, placeholder_key, step_request, step_sketch, write_step_key
from .step_refs import Pending

__all__ = ["approvable_plan", "plan_reads", "preview", "record"]


def plan_reads(steps: list[Step]) -> list[Step]:
    """The reads of a writing plan: the read steps before its first write step."""
    reads: list[Step] = []
    for step in steps:
        if step.writes:
            break
        reads.append(step)
    return reads


def _writes_shown(
    call: Call, steps: list[Step], inputs: Mapping[str, Any], answers: Mapping[str, Any], key: str | None
) -> list[dict[str, Any]]:
    """Each write step's request (shown redacted) and fingerprint, or the step it is known after;
    `key`: the record key (None: a preview, each step's key a placeholder). Raises `Halt` (the
    step's ``invalid_arguments``, ``composite_reference_missing``...)."""
    shown: list[dict[str, Any]] = []
    for step in steps:
        if not step.writes:
            continue
        step_call = Call(
            call.host, step.spec.name, call.actor, call_id=call.call_id, args_digest=call.args_digest
        )
        try:
            step_key = placeholder_key(step) if key is None else write_step_key(call.tool, key, step)
            validated = step_request(step_call, step, inputs, answers, step_key)
        except Pending as pending:
            # what is known of it now (the composite's arguments, the reads' answers) is shown and
            # bound into the plan's fingerprint: an approval covers it, a changed read makes it stale
            sketch = step_sketch(step, inputs, answers)
            shown.append(
                {
                    "step": step.id,
                    "known_after": pending.step,
                    "arguments": sketch,
                    "fp": fingerprint(step.spec.intent, {"known_after": pending.step, "arguments": sketch}),
                }
            )
            continue
        finally:
            call.secret_values.extend(step_call.secret_values)
        request: dict[str, Any] = display(step.spec.row, validated.built)
        shown.append({"step": step.id, "request": request, "fp": validated.fp})
    return shown


def _plan_fp(spec: ToolSpec, shown: list[dict[str, Any]]) -> str:
    return fingerprint(
        spec.intent,
        {"composite": [[s["step"], s.get("fp") or {"known_after": s.get("known_after")}] for s in shown]},
    )


def _reads(
    call: Call, spec: ToolSpec, steps: list[Step], inputs: Mapping[str, Any], deadline: float
) -> Generator[Effect, Any, list[StepRun]]:
    runs: list[StepRun] = yield from execute(call, spec, plan_reads(steps), inputs, deadline, {})
    for run in runs:
        call.secret_values.extend(run.secret_values)
    return runs


def _with_rest(runs: list[StepRun], steps: list[Step]) -> list[StepRun]:
    """`runs` of the reads, then every other step of the plan as ``not_run``."""
    ran = {r.id for r in runs}
    return [*runs, *(StepRun(s.id, "not_run") for s in steps if s.id not in ran)]


def _record_tool(spec: ToolSpec) -> str:
    return spec.row.pair or "record_" + spec.intent


def preview(
    call: Call, spec: ToolSpec, steps: list[Step], inputs: dict[str, Any], deadline: float
) -> Generator[Effect, Any, CallResult]:
    """The preview's `CallResult` (see the module docstring). Raises `Halt`."""
    chosen = selected(spec, steps, inputs)
    runs = yield from _reads(call, spec, chosen, inputs, deadline)
    error = failure(_with_rest(runs, chosen))
    if error is not None:
        raise Halt("http", error)
    shown = _writes_shown(call, chosen, inputs, {r.id: r.body for r in runs}, None)
    fp = call.fp = _plan_fp(spec, shown)
    host, record_tool = call.host, _record_tool(spec)
    record_spec = host.specs.get(record_tool)
    result: dict[str, Any] = {
        "preview_id": fp,
        "effect": (record_spec or spec).row.effect,
        "approval_required": record_spec is None or record_spec.row.approval == "required",
        "record_tool": record_tool,
        "reads": [r.to_json() for r in runs],
        "requests": [{k: v for k, v in s.items() if k != "fp"} for s in shown],
    }
    if record_spec is not None:
        result["expires_in_s"] = _store(call, spec, record_spec, inputs, shown)
    call.emit("http", "skip", reason="preview")
    call.emit("result", "ok")
    return CallResult(call.tool, True, result=result, fingerprint=fp, call_id=call.call_id)


def _store(
    call: Call, spec: ToolSpec, record_spec: ToolSpec, inputs: dict[str, Any], shown: list[dict[str, Any]]
) -> int:
    """Store the arguments and the per-step fingerprints; the TTL (s). Raises `Halt`."""
    host, fp = call.host, str(call.fp)
    ttl = record_spec.row.preview_ttl_s or DEFAULT_PREVIEW_TTL_S
    now = host.clock.time()
    steps = {s["step"]: s.get("fp") or f"known_after:{s.get('known_after')}" for s in shown}
    scope = f"{host.api}/{record_spec.name}"
    try:
        store = host.preview_store()
        store.put(StoredPreview(scope, call.actor.id, fp, spec.intent, inputs, now, now + ttl))
        plan = {"steps": steps, "requests": [{k: v for k, v in s.items() if k != "fp"} for s in shown]}
        store.put(StoredPreview(scope + "#plan", call.actor.id, fp, spec.intent, plan, now, now + ttl))
    except Exception as exc:  # noqa: BLE001 - any store outage: no preview_id to execute
        raise Halt(
            "preview",
            make_error(
                "receipt_store_unavailable",
                f"{call.tool}: the preview store could not keep this plan "
                f"({type(exc).__name__}), so {record_spec.name} could not execute it.",
                details={"store": type(host.receipts).__name__},
            ),
        ) from None
    call.emit("preview", "stored", ttl_s=ttl)
    return ttl


def approvable_plan(host: Host, spec: ToolSpec, preview_id: str, actor_id: str) -> dict[str, Any]:
    """What a human approves of a composite record's stored preview (issued approvals,
    `toolgen.runtime.serving.issuing.approvable_request`): ``{"requests": [...]}``, each write step's request
    as
    the preview showed it. Raises `ToolError` as `stored_arguments` (``preview_not_found``,
    ``preview_expired``, ``preview_mismatch``, ``receipt_store_unavailable``)."""
    stored_arguments(host, spec, preview_id, Actor.of(actor_id))
    try:
        plan = host.preview_store().get(f"{host.api}/{spec.name}#plan", actor_id, preview_id)
    except Exception as exc:  # noqa: BLE001 - any store outage
        raise make_error(
            "receipt_store_unavailable",
            f"{spec.name}: the preview store could not be read ({type(exc).__name__}).",
            details={"store": type(host.receipts).__name__},
        ) from None
    if plan is None or not isinstance(plan.arguments.get("requests"), list):
        raise make_error(
            "preview_mismatch",
            f"The stored plan of preview {preview_id[:24]}… cannot be read.",
            details={"pointer": "/preview_id"},
        )
    return {"requests": plan.arguments["requests"]}


def _stale_steps(call: Call, spec: ToolSpec, preview_id: str, shown: list[dict[str, Any]]) -> list[str]:
    """The write steps whose request differs from the stored plan's (all of them if it cannot be read)."""
    try:
        stored = call.host.preview_store().get(f"{call.host.api}/{spec.name}#plan", call.actor.id, preview_id)
        before = dict((stored.arguments if stored is not None else {}).get("steps") or {})
    except Exception:  # noqa: BLE001 - the stale verdict stands; only which step is unknown
        before = {}
    now = {s["step"]: s.get("fp") or f"known_after:{s.get('known_after')}" for s in shown}
    return [step for step, fp in now.items() if before.get(step) != fp] or sorted(now)


def _begin(call: Call, spec: ToolSpec, preview_id: str, key: str, budget: Budget) -> Hold | CallResult:
    """The record's own receipt (see the module docstring): a `Hold`, or the replayed `CallResult`.
    Raises `Halt`."""
    host = call.host
    hold = Hold(call, f"{host.api}/{spec.name}", key)
    lease_ms = budget.deadline_ms + budget.timeout_ms + LEASE_MARGIN_MS
    try:
        existing = host.receipts.begin(hold.scope, key, preview_id, call.actor.id, lease_ms)
    except Exception as exc:  # noqa: BLE001 - any store outage: nothing sent yet
        raise Halt(
            "idempotency",
            make_error(
                "receipt_store_unavailable",
                f"{call.tool}: the receipt store could not record the key "
                f"({type(exc).__name__}); nothing was sent.",
                details={"store": type(host.receipts).__name__},
            ),
        ) from None
    if existing is not None:
        # each step's own receipt decides whether a step may be sent again, so the plan may resume
        decision = receipt_decision(
            existing, preview_id, True, budget.row_deadline_ms + LEASE_MARGIN_MS, call.host.clock.time()
        )
        if decision == "conflict":
            raise Halt(
                "idempotency",
                make_error(
                    "idempotency_conflict",
                    f"The key {key!r} was already used by {call.tool} with another plan.",
                    details={"key_arg": spec.key_arg, "pointer": f"/{spec.key_arg}"},
                ),
            )
        if decision == "in_progress":
            raise Halt(
                "idempotency",
                make_error(
                    "idempotency_in_progress",
                    f"A call of {call.tool} with the key {key!r} is still in flight.",
                    details={"key_arg": spec.key_arg, "retry_after": 1.0},
                ),
            )
        if decision == "replay":
            call.emit("idempotency", "replay", original_actor=existing.actor)
            call.emit("result", "ok", replayed=True)
            # redacted again with the current policy's paths (as `output_of` redacts the members) and
            # scrubbed, as a single record's replay is
            stored = existing.result
            result = scrub(
                _withheld(redact(stored, spec.redact_tree))
                if spec.redact_tree and isinstance(stored, dict)
                else stored,
                call.secret_values,
            )
            return CallResult(
                call.tool,
                True,
                result=result,
                replayed=True,
                fingerprint=preview_id,
                status=existing.status,
                call_id=call.call_id,
                idempotency_key=key,
            )
        hold.decision = "resend"
        call.store("resume", hold.scope, key, lease_ms)
    call.emit("idempotency", "new" if existing is None else "resend")
    hold.open = True
    return hold


def _withheld(result: dict[str, Any]) -> dict[str, Any]:
    """A stored record result replayed under a policy that redacts: its steps' warnings without the
    excerpt of a body that could not be read (text, which redaction cannot reach; `withhold_warning`)."""
    steps = result.get("steps")
    if not isinstance(steps, list):
        return result
    return {
        **result,
        "steps": [
            {**s, "warning": withhold_warning(s["warning"])}
            if isinstance(s, dict) and isinstance(s.get("warning"), str)
            else s
            for s in steps
        ],
    }


def _grant(
    call: Call, spec: ToolSpec, inputs: dict[str, Any], preview_id: str, approval: Approval | None
) -> Grant:
    """The composite's approval, checked against its ``preview_id`` (the plan). Raises `Halt`."""
    validated = Validated(inputs, BuiltRequest("", "", [], None), preview_id, Page(), preview_id)
    return approval_step.check(call, spec, validated, approval)


def record(
    call: Call,
    spec: ToolSpec,
    steps: list[Step],
    args: dict[str, Any],
    approval: Approval | None,
    budget: Budget,
) -> Generator[Effect, Any, CallResult]:
    """The record's `CallResult` (see the module docstring). Raises `Halt` before its receipt is held."""
    preview_id = str(args.get("preview_id", ""))
    key = str(args.get(str(spec.key_arg)) or "") if spec.key_arg else ""
    if not key.strip():
        raise Halt(
            "validate",
            make_error(
                "invalid_arguments",
                "An idempotency key is required and may not be blank.",
                details={"pointer": f"/{spec.key_arg}"},
            ),
        )
    if reserved(key):  # one rule for every record tool's key (`idempotency.reserved`)
        raise Halt(
            "validate",
            make_error(
                "invalid_arguments",
                f"An idempotency key may not start with {STEP_KEY_PREFIX!r} (any case): that form is "
                "reserved for the keys of composite tools' write steps; choose another key (e.g. a UUID).",
                details={"pointer": f"/{spec.key_arg}"},
            ),
        )
    if (problem := key_text_problem(key)) is not None:
        raise Halt(
            "validate",
            invalid_argument((str(spec.key_arg),), f"an idempotency key names a receipt: {problem}"),
        )
    try:
        inputs = stored_arguments(call.host, spec, preview_id, call.actor)
    except ToolError as exc:
        raise Halt("validate", exc) from None
    call.fp = preview_id
    grant = _grant(call, spec, inputs, preview_id, approval)
    hold = _begin(call, spec, preview_id, key, budget)
    if isinstance(hold, CallResult):
        return hold
    try:
        return (yield from _held(call, spec, steps, inputs, (preview_id, key), grant, budget, hold))
    finally:
        hold.settle("mark_unknown")


def _held(
    call: Call,
    spec: ToolSpec,
    steps: list[Step],
    inputs: dict[str, Any],
    ids: tuple[str, str],
    grant: Grant,
    budget: Budget,
    hold: Hold,
) -> Generator[Effect, Any, CallResult]:
    """The record while it holds its receipt: reads, staleness, approval, steps, settling."""
    key = ids[1]
    try:
        chosen = selected(spec, steps, inputs)
        reads = yield from _reads(call, spec, chosen, inputs, budget.deadline)
        error = failure(_with_rest(reads, chosen))
        if error is None:
            error = _staleness(call, spec, chosen, inputs, reads, ids)
        if error is not None:
            hold.let_go()
            return call.fail("validate", error)
        if call.audit_failures:
            hold.let_go()
            return call.fail(
                "audit",
                make_error("internal_error", f"{call.tool}: the audit sink failed; nothing was sent."),
            )
        approval_step.spend(call, grant, hold)
        keys = {s.id: write_step_key(call.tool, key, s) for s in chosen if s.writes}
        runs = yield from execute(call, spec, chosen, inputs, budget.deadline, keys, {r.id: r for r in reads})
        return _settle(call, spec, inputs, runs, hold)
    except Halt as halt:
        return call.fail(halt.step, halt.error, rule=halt.rule, decision=halt.decision, **halt.extra)


def _staleness(
    call: Call,
    spec: ToolSpec,
    chosen: list[Step],
    inputs: dict[str, Any],
    reads: list[StepRun],
    ids: tuple[str, str],
) -> ToolError | None:
    """``preview_stale`` when the write requests rebuilt over the reads of this call differ from the
    previewed plan, or when one can no longer be built at all (a read now answers without the member a
    write reads, or with a value the write's schema refuses: the step's own error in
    ``details.cause``); None when the plan is the previewed one. Never raises."""
    preview_id, key = ids
    try:
        shown = _writes_shown(call, chosen, inputs, {r.id: r.body for r in reads}, key)
    except Halt as halt:
        step = str(halt.error.details.get("step") or "")
        return make_error(
            "preview_stale",
            f"{call.tool}: the request of step {step} can no longer be built as previewed "
            f"({halt.error.code}: {halt.error.message})"[:600]
            + "; nothing was written. Preview again.",
            details={
                "steps": [step] if step else [],
                "pointer": "/preview_id",
                "cause": halt.error.to_json()["error"],
            },
        )
    if _plan_fp(spec, shown) == preview_id:
        return None
    stale = _stale_steps(call, spec, preview_id, shown)
    return make_error(
        "preview_stale",
        f"{call.tool}: the request of step {', '.join(stale)} differs from the "
        "previewed one (a read now answers differently); nothing was written.",
        details={"steps": stale, "pointer": "/preview_id"},
    )


def _settle(
    call: Call, spec: ToolSpec, inputs: dict[str, Any], runs: list[StepRun], hold: Hold
) -> CallResult:
    """The record's result and its receipt's end (see the module docstring)."""
    for run in runs:
        call.secret_values.extend(run.secret_values)
    steps_json = [r.to_json() for r in runs]
    error = failure(runs, record=True)
    if error is not None:
        written = any(r.state == "result_unknown" or (r.state == "done" and r.key is not None) for r in runs)
        if written:
            hold.settle("mark_unknown")
        else:
            hold.settle("release")
            hold.unspend()
        error.details["receipt_state"] = "unknown" if written else None
        return call.fail("steps", error)
    result, warnings = output_of(call, spec, inputs, runs, {"steps": steps_json})
    hold.settle("complete", result, 200)
    call.emit("result", "ok")
    return CallResult(
        call.tool,
        True,
        result=result,
        fingerprint=call.fp,
        status=200,
        call_id=call.call_id,
        idempotency_key=hold.key,
        warnings=warnings,
        attempts=sum(r.attempts for r in runs),
    )
