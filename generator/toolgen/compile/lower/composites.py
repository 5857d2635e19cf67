"""Stage `lower`, composites: one intent over several operations -> its tools (docs/composites.md).

Input: the intent map's `composites:` entries and the tools already lowered (names taken). Output:
per composite one read tool (pattern pipeline, branch or aggregate of reads) or a `preview_<key>` +
`record_<key>` pair (a composite with a write step), each an ordinary IR `Tool` whose `PolicyRow`
has no operation and carries the `CompositePlan`.

Each step's row is lowered by the code that lowers an ordinary tool of its operation
(`toolgen.compile.lower.tools.lower_intent`), from the operation's own intent in `tools:` when the
map has one (its permission, idempotency, narrowed arguments, timeout, retries), else from the intent
an include group would infer; then without pagination and projection (a reference reads the whole
answer), and a write step as a record row with full arguments and approval ``never`` (the
composite's approval covers it).

Derived, never declared twice: the composite's arguments (each ``$input/<name>`` mapped whole into a
step argument takes that argument's schema and description), its effect (the strictest step; the
intent may only ask for stricter), permission (the union of the steps' scopes plus the intent's),
approval (``required`` with any write step) and its output schema (each output member's schema read
from the step answer's schema at the reference's pointer).

Every problem is a located error (file:line:col + JSON pointer in the intent map, and what to do):
an unknown step operation, a malformed or dangling reference, a reference to a later step or a
cycle, a reference between branch or aggregate steps, an unmapped required step argument, a mapping
whose types cannot match, a write step in an aggregate, an override looser than derived, a branch
`when` missing or duplicated, one argument mapped into two steps with incompatible schemas.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ...diagnostics import DiagnosticError, DiagnosticSink, SourceLocation
from ...naming import tool_name_problem
from ...pointer import escape_token, parse_pointer
from ...policy.format import (
    CompositePlan,
    CompositeStep,
    InputRef,
    LiteralValue,
    MappingValue,
    StepRef,
    mapping_references,
)
from ..intent import (
    CompositeIntent,
    CompositeStepSpec,
    IncludeSpec,
    OutputSpec,
    RecordSpec,
    ToolIntent,
)
from ..ir import AuthBinding, Effect, Idempotency, Mode, OutputPolicy, PolicyRow, Retry, Tool
from ..operations import Operation, OperationIndex, find_operation, suggest_operations
from ..schema.projection import project_schema
from ..schema.satisfiable import json_type_of as json_type
from .composite_refs import INPUT, cycle_path, in_cycle, parse_ref, parse_value
from .composite_schemas import (
    ERRORS,
    STEPS,
    answer_schema,
    compatible,
    hoist_defs,
    record_output_schema,
    schema_at,
    schema_types,
    types_meet,
)
from .context import Ctx, Skip
from .infer import infer_intent
from .text import cap_text, expansion_texts, guidance, with_examples
from .tools import PREVIEW_ID_ARG, _preview_output_schema, lower_intent
from .toolsets import place

#: effects from least to most strict
EFFECT_ORDER: dict[str, int] = {"read": 0, "write": 1, "destructive": 2}
#: the record tool's idempotency key argument when the intent names none
DEFAULT_KEY = "action_id"
#: words a read composite's key may start with to be its tool name as it is (else ``get_<key>``)
READ_PREFIXES = ("get_", "list_", "search_", "find_", "lookup_", "fetch_", "read_", "show_", "describe_")


def composite_tool_names(key: str, writes: bool) -> tuple[str, ...]:
    """The tool names of composite `key`: ``(read tool,)`` or ``(preview_<key>, record_<key>)``."""
    if writes:
        return ("preview_" + key, "record_" + key)
    return (key if key.startswith(READ_PREFIXES) else "get_" + key,)


@dataclass
class _Step:
    spec: CompositeStepSpec
    index: int
    op: Operation
    row: PolicyRow
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    args: dict[str, MappingValue]
    redact: tuple[str, ...]  # the step intent's own redaction paths (dotted, into its answer)


class _Failed(Exception):
    """A composite could not be lowered; its errors are in the sink."""


def lower_composites(ctx: Ctx, operations: list[Operation], by_ref: OperationIndex,
                     taken: set[str]) -> list[Tool]:
    """The tools of every composite in the intent map (`taken`: the tool names already lowered).
    Errors go to ``ctx.sink``; a composite with an error yields no tool."""
    tools: list[Tool] = []
    for key, intent in ctx.intents.model.composites.items():
        errors_before = len(ctx.sink.errors)
        try:
            made = _lower_composite(ctx, operations, by_ref, key, intent, taken)
        except _Failed:
            continue
        if len(ctx.sink.errors) > errors_before:
            continue
        taken.update(t.name for t in made)
        tools.extend(made)
    return tools


def _lower_composite(ctx: Ctx, operations: list[Operation], by_ref: OperationIndex, key: str,
                     intent: CompositeIntent, taken: set[str]) -> list[Tool]:
    sink, intents = ctx.sink, ctx.intents
    where = ("composites", key)

    def loc(*more: str | int) -> SourceLocation:
        return intents.locate(*where, *more)

    _check_shape(ctx, key, intent, loc)
    steps_ids = [s.id for s in intent.steps]
    # 1. each step's operation, lowered as an ordinary tool of it
    lowered: list[_Step] = []
    writes_any = any(_step_effect_guess(ctx, by_ref, s) != "read" for s in intent.steps)
    names = composite_tool_names(key, writes_any)
    owner = names[-1]
    for index, spec in enumerate(intent.steps):
        step = _lower_step(ctx, operations, by_ref, key, owner, index, spec, loc)
        if step is not None:
            lowered.append(step)
    if len(lowered) != len(intent.steps):
        raise _Failed
    writes = any(s.row.mode == "record" for s in lowered)
    if writes != writes_any:  # the guess and the lowering disagree only on a broken step
        raise _Failed
    # 2. the mappings, their references and the step order
    output = _parse_mappings(ctx, intent, lowered, loc)
    switch = _switch(ctx, intent, loc)
    needs = _check_references(ctx, intent, lowered, output, loc)
    if _has_errors_at(sink, intents.display, where):
        raise _Failed
    # 3. derived arguments, and the checks that need step schemas
    by_id = {s.spec.id: s for s in lowered}
    input_schema = _input_schema(ctx, intent, lowered, switch, loc)
    _check_steps(ctx, intent, lowered, input_schema, loc)
    # 4. effect, permission, approval
    effect = _effect(ctx, key, intent, lowered, writes, loc)
    permission = _permission(ctx, intent, lowered, loc)
    if _has_errors_at(sink, intents.display, where):
        raise _Failed
    # 5. the plan, the output, the tools
    ordered = lowered  # pipeline steps run in the order written (references checked above)
    plan = CompositePlan(
        pattern=intent.pattern, switch=switch,
        steps=tuple(CompositeStep(
            id=s.spec.id, when=s.spec.when, needs=tuple(sorted(needs[s.spec.id], key=steps_ids.index)),
            args=dict(s.args), row=s.row, input_schema=s.input_schema, output_schema=s.output_schema)
            for s in ordered),
        output=dict(output))
    _check_names(ctx, key, names, taken, loc)
    result_schema, fields = _result(ctx, key, intent, by_id, input_schema, output, writes, loc)
    defaults = ctx.intents.model.defaults
    out_policy = OutputPolicy(
        fields=tuple(fields), max_bytes=intent.max_bytes or defaults.output_max_bytes,
        redact=tuple(dict.fromkeys((*_derived_redact(by_id, output), *intent.redact))),
        schema_mode=defaults.output_schema_mode)
    timeout = intent.timeout_ms or _default_timeout(intent.pattern, lowered)
    auth = _auth_union(lowered)
    placement = place(ctx, lowered[0].op, ToolIntent(
        operation=lowered[0].op.key, effect="read", toolset=intent.toolset, loading=intent.loading,
        keywords=intent.keywords, examples=intent.examples, not_for=intent.not_for), None)
    once = Retry(max_attempts=1, backoff_ms=0, deadline_ms=timeout, on=())
    extra = guidance(intent.use_when, intent.not_for)
    summary = cap_text(" ".join(intent.description.split()), max(defaults.description_max_chars - len(extra), 80))
    summary = with_examples(summary + extra, expansion_texts(intent.examples), defaults.description_max_chars)
    chain = (" → " if intent.pattern == "pipeline" else ", ").join(s.op.key for s in ordered)
    how = {"pipeline": f"Runs in order: {chain}.", "branch": f"Runs one of: {chain}, chosen by "
           f"{(switch.pointer[1:] if switch else '')}.", "aggregate": f"Runs at once: {chain}; partial errors "
           "are listed under errors."}[intent.pattern]

    def row(tool: str, mode: Mode, **more: Any) -> PolicyRow:
        base = PolicyRow(
            tool=tool, mode=mode, effect="read", operation_id="", method="", path="", permission=permission,
            approval="never", idempotency=None, retry=once, timeout_ms=timeout, pagination=None,
            output=out_policy, auth=auth, body_encoding="none", body_content_type=None, bindings=(), fixed=(),
            pair=None, intent=key, success_status=(), toolset=placement.toolset, loading=placement.loading,
            keywords=placement.keywords, examples=placement.examples, not_for=placement.not_for, composite=plan)
        return replace(base, **more)

    title = intent.title
    if not writes:
        read = row(names[0], "read")
        return [Tool(names[0], f"{summary} Read-only. {how}", input_schema, result_schema, read, title, "",
                     strict=intent.strict)]
    return _writing_tools(ctx, key, intent, names, input_schema, result_schema, plan, row, effect, fields,
                          summary, how, loc)


def _effect(ctx: Ctx, key: str, intent: CompositeIntent, lowered: list[_Step], writes: bool, loc: Any) -> Effect:
    """The composite's effect (the strictest step's, or the intent's when stricter); located errors for
    overrides looser than derived, a write in an aggregate and a key sent to the API."""
    sink = ctx.sink
    effect: Effect = max((s.row.effect for s in lowered), key=lambda e: EFFECT_ORDER[e])
    if intent.effect is not None:
        if EFFECT_ORDER[intent.effect] < EFFECT_ORDER[effect]:
            sink.error("composite-override-looser",
                       f"composite `{key}` sets effect {intent.effect!r}, but a step is {effect!r}",
                       loc("effect"), f"drop `effect` (derived: {effect}) or set something at least as strict")
        else:
            effect = intent.effect
    if intent.pattern == "aggregate":
        for step in lowered:
            if step.row.effect != "read":
                sink.error("composite-aggregate-write",
                           f"composite `{key}` is an aggregate, but step `{step.spec.id}` ({step.op.key}) "
                           f"is a {step.row.effect}", loc("steps", step.index, "operation"),
                           "an aggregate runs reads only; use a pipeline for steps that write")
    if intent.approval == "never" and writes:
        sink.error("composite-override-looser",
                   f"composite `{key}` sets approval never, but it has a write step", loc("approval"),
                   "drop `approval` (derived: required): one approval covers the whole plan")
    if intent.approval == "required" and not writes:
        sink.warning("approval-on-read", f"composite `{key}` only reads; approval applies to record tools only",
                     loc("approval"), "drop `approval`")
    if intent.idempotency is not None and intent.idempotency.send_as != "none":
        sink.error("composite-idempotency-sent",
                   f"composite `{key}` sends its idempotency key ({intent.idempotency.send_as}); a composite "
                   "has no request of its own", loc("idempotency", "send_as"),
                   "drop `send_as`: each write step sends its own key (`tgs-` and a digest of the record tool, "
                   "the key and the step id) as its operation's intent says")
    return effect


def _parse_mappings(ctx: Ctx, intent: CompositeIntent, lowered: list[_Step], loc: Any) -> dict[str, MappingValue]:
    """Each step's `args` parsed into its `_Step.args`; the result members (`output`, default: one per
    step, its whole answer)."""
    for step in lowered:
        for arg, raw in step.spec.args.items():
            value = parse_value(raw, loc("steps", step.index, "args", arg), ctx.sink)
            if value is not None:
                step.args[arg] = value
    output_raw = intent.output if intent.output is not None else {s.id: f"${s.id}" for s in intent.steps}
    output: dict[str, MappingValue] = {}
    for member, raw in output_raw.items():
        value = parse_value(raw, loc("output", member) if intent.output is not None else loc("steps"), ctx.sink)
        if value is not None:
            output[member] = value
    return output


def _check_names(ctx: Ctx, key: str, names: tuple[str, ...], taken: set[str], loc: Any) -> None:
    for name in names:
        problem = tool_name_problem(name)
        if problem:
            ctx.sink.error("tool-name-invalid", f"composite `{key}` gives tool {name!r}: {problem}", loc(),
                           "choose a shorter key of letters, digits and '_'")
            raise _Failed
        if name in taken:
            ctx.sink.error("tool-name-taken", f"composite `{key}` gives tool {name!r}, which another intent "
                           "already gives", loc(), "rename the composite")
            raise _Failed


def _result(ctx: Ctx, key: str, intent: CompositeIntent, by_id: dict[str, _Step], input_schema: dict[str, Any],
            output: dict[str, MappingValue], writes: bool, loc: Any) -> tuple[dict[str, Any], list[str]]:
    """(the combined result's schema, projected; the projection's fields, `errors` kept in an aggregate).
    An `output` member named like a member the runtime adds (`errors` of an aggregate, `steps` of a
    record result) is a located error."""
    reserved = {ERRORS: intent.pattern == "aggregate", STEPS: writes}
    for member in output:
        if reserved.get(member):
            ctx.sink.error("composite-output-reserved", f"composite `{key}`: result member `{member}` is the one "
                           "the runtime adds (" + ("the steps that did not answer" if member == ERRORS else
                                                   "every step's state") + ")", loc("output", member),
                           "give the member another name")
            raise _Failed
    result_schema = _output_schema(intent, by_id, input_schema, output)
    fields = list(intent.output_fields)
    if fields and intent.pattern == "aggregate" and ERRORS not in fields:
        fields.append(ERRORS)  # a projection never hides which steps failed
    if fields:
        try:
            result_schema = project_schema(result_schema, fields)
        except KeyError as exc:
            ctx.sink.error("composite-output-field-unknown", f"composite `{key}`: output field {exc.args[0]!r} "
                           "names no member of the combined result", loc("output_fields"),
                           "name members of `output` and their members, e.g. customer.id")
            raise _Failed from None
    return result_schema, fields


def _writing_tools(ctx: Ctx, key: str, intent: CompositeIntent, names: tuple[str, ...],  # noqa: PLR0913
                   input_schema: dict[str, Any], result_schema: dict[str, Any], plan: CompositePlan,
                   row: Callable[..., PolicyRow], effect: Effect, fields: list[str], summary: str, how: str,
                   loc: Any) -> list[Tool]:
    """A writing composite's `preview_<key>` and `record_<key>` (the record takes the preview_id and a
    key; each write step's key is `tgs-` and a digest of the record tool, the key and the step id:
    docs/composites.md, step keys)."""
    sink, defaults, title = ctx.sink, ctx.intents.model.defaults, intent.title
    out_policy = row("", "read").output
    preview_name, record_name = names
    key_arg = intent.idempotency.key if intent.idempotency is not None else DEFAULT_KEY
    if key_arg in input_schema["properties"] or key_arg == PREVIEW_ID_ARG:
        sink.error("idempotency-key-collision", f"composite `{key}`: idempotency key argument {key_arg!r} clashes "
                   "with an argument of the composite", loc("idempotency") if intent.idempotency else loc(),
                   "set `idempotency: {key: <another name>}`")
        raise _Failed
    ttl = defaults.preview_ttl_s
    preview_row = row(preview_name, "preview", pair=record_name,
                      output=OutputPolicy(max_bytes=out_policy.max_bytes, schema_mode=out_policy.schema_mode))
    record_row = row(record_name, "record", effect=effect, approval="required", pair=preview_name,
                     output=replace(out_policy, fields=(*fields, STEPS) if fields else ()),
                     idempotency=Idempotency(key_arg, "none", None), record_arguments="preview", preview_ttl_s=ttl)
    verb = "Destructive" if effect == "destructive" else "Writes"
    preview_desc = (f"PREVIEW ONLY, never writes: runs the reads and returns every request {record_name} would "
                    f"send and a preview_id. A human must approve the preview_id before {record_name} runs. "
                    f"{record_name}: {summary}")
    record_desc = (f"{summary} {verb}. {how} Sends exactly the requests previewed by {preview_name}: pass its "
                   f"preview_id, which a human must approve, and a fresh {key_arg}.")
    record_input = {
        "type": "object", "additionalProperties": False, "required": [PREVIEW_ID_ARG, key_arg],
        "properties": {
            PREVIEW_ID_ARG: {"type": "string", "minLength": 1, "maxLength": 200,
                             "description": f"The preview_id {preview_name} returned."},
            key_arg: {"type": "string", "minLength": 1, "maxLength": 190,
                      "description": "Unique id of this action (e.g. a UUID); reuse it only to retry the same "
                                     "call. Each write step sends a key derived from this one; a key that "
                                     "starts with `tgs-` is refused."},
        },
    }
    return [
        Tool(preview_name, preview_desc, input_schema, _preview_output_schema(), preview_row,
             f"Preview: {title}" if title else None, "", strict=intent.strict),
        Tool(record_name, record_desc, record_input, record_output_schema(result_schema, plan), record_row,
             title, "", strict=intent.strict),
    ]



def _has_errors_at(sink: DiagnosticSink, display: str, where: tuple[str, str]) -> bool:
    prefix = "/" + "/".join(escape_token(w) for w in where)
    return any(d.location is not None and d.location.file == display
               and (d.location.pointer or "").startswith(prefix) for d in sink.errors)


def _check_shape(ctx: Ctx, key: str, intent: CompositeIntent, loc: Any) -> None:
    """Step ids unique and not `input`; a branch's switch and `when`s; `when` only on branches."""
    sink = ctx.sink
    seen: dict[str, int] = {}
    for index, step in enumerate(intent.steps):
        if step.id == INPUT:
            sink.error("composite-step-id", f"composite `{key}`: step id `input` is reserved for the composite's "
                       "arguments", loc("steps", index, "id"), "choose another id")
        if step.id in seen:
            sink.error("composite-step-id", f"composite `{key}`: step id `{step.id}` is used twice "
                       f"(steps {seen[step.id]} and {index})", loc("steps", index, "id"), "give every step its own id")
        seen.setdefault(step.id, index)
    whens: dict[str, int] = {}
    if intent.pattern == "branch":
        if intent.switch is None:
            sink.error("composite-switch-missing", f"composite `{key}` is a branch without a `switch`", loc(),
                       "add `switch: $input/<argument>`, the argument whose value chooses the step")
        for index, step in enumerate(intent.steps):
            if step.when is None:
                sink.error("composite-when-missing", f"branch `{key}`: step `{step.id}` has no `when`",
                           loc("steps", index), "add `when: <value of the switch argument that takes this step>`")
            elif step.when in whens:
                sink.error("composite-when-duplicate", f"branch `{key}`: steps {whens[step.when]} and {index} both "
                           f"run when the switch is {step.when!r}", loc("steps", index, "when"),
                           "give every branch step its own `when` value")
            else:
                whens[step.when] = index
    else:
        if intent.switch is not None:
            sink.error("composite-switch-unused", f"composite `{key}` is a {intent.pattern}; only a branch has a "
                       "`switch`", loc("switch"), "drop `switch`, or set `pattern: branch`")
        for index, step in enumerate(intent.steps):
            if step.when is not None:
                sink.error("composite-when-unused", f"composite `{key}` is a {intent.pattern}; only branch steps "
                           "have `when`", loc("steps", index, "when"), "drop `when`, or set `pattern: branch`")


def _step_intent(ctx: Ctx, op: Operation, by_ref: OperationIndex) -> tuple[ToolIntent, bool]:
    """The intent an ordinary tool of `op` is lowered from: the map's own (first in `tools:` order)
    when it has one (True), else the one an include group would infer (False)."""
    for intent in ctx.intents.model.tools.values():
        if find_operation(by_ref, intent.operation) is op:
            return intent, True
    return infer_intent(ctx, op, IncludeSpec()), False


def _step_effect_guess(ctx: Ctx, by_ref: OperationIndex, spec: CompositeStepSpec) -> str:
    op = find_operation(by_ref, spec.operation)
    if op is None:
        return "read"
    try:
        return _step_intent(ctx, op, by_ref)[0].effect
    except Skip:
        return "read"


def _lower_step(ctx: Ctx, operations: list[Operation], by_ref: OperationIndex, key: str, owner: str, index: int,
                spec: CompositeStepSpec, loc: Any) -> _Step | None:
    sink = ctx.sink
    op = find_operation(by_ref, spec.operation)
    where = loc("steps", index, "operation")
    if op is None:
        close = suggest_operations(operations, spec.operation)
        sink.error("composite-step-operation-unknown",
                   f"composite `{key}`: step `{spec.id}` names operation {spec.operation!r}, which is not in "
                   f"{ctx.doc.display}", where,
                   f"did you mean {', '.join(repr(c) for c in close)}?" if close else
                   "use an operationId or `METHOD /path` exactly as written in the spec")
        return None
    try:
        base, _explicit = _step_intent(ctx, op, by_ref)
    except Skip as skip:
        sink.error(skip.code, f"composite `{key}`, step `{spec.id}`: {skip.message}", where, skip.hint)
        return None
    keep = base.output
    step_intent = base.model_copy(update={
        "pagination": None, "approval": "never", "preview": False, "record": RecordSpec(arguments="full"),
        "output": OutputSpec(max_bytes=keep.max_bytes if keep else None,
                             schema_mode=keep.schema_mode if keep else None),
        "toolset": None, "loading": None, "keywords": [], "examples": [], "use_when": None, "not_for": None,
    })
    # lowered by the ordinary tools' code, in a scratch context: its names and diagnostics are the
    # ordinary tool's business, only errors are reported here, at the step
    scratch = Ctx(ctx.doc, ctx.intents, DiagnosticSink(), ctx.api, ctx.converter, names={},
                  toolsets=dict(ctx.toolsets))
    try:
        made = lower_intent(scratch, op, spec.id, step_intent, ("steps",), explicit=False)
    except Skip as skip:
        sink.error(skip.code, f"composite `{key}`, step `{spec.id}` ({op.key}): {skip.message}", where, skip.hint)
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
    row = replace(tool.policy, tool=f"{owner}.{spec.id}", pair=None, intent=key, toolset=None, loading="eager",
                  keywords=(), examples=(), not_for=None)
    redact = tuple(base.output.redact) if base.output else ()
    return _Step(spec, index, op, row, tool.input_schema, answer_schema(tool.output_schema, row.output.shape), {},
                 redact)


def _switch(ctx: Ctx, intent: CompositeIntent, loc: Any) -> InputRef | None:
    if intent.pattern != "branch" or intent.switch is None:
        return None
    ref = parse_ref(intent.switch, loc("switch"), ctx.sink) if intent.switch.startswith("$") else None
    if ref is None or not isinstance(ref, InputRef) or len(parse_pointer(ref.pointer)) != 1:
        if ref is not None or not intent.switch.startswith("$"):
            ctx.sink.error("composite-switch-invalid", f"switch {intent.switch!r} is not an argument of the composite",
                           loc("switch"), "write `switch: $input/<argument>`")
        return None
    return ref


def _check_references(ctx: Ctx, intent: CompositeIntent, steps: list[_Step], output: dict[str, MappingValue],
                      loc: Any) -> dict[str, set[str]]:
    """Each step's `needs` (the steps its arguments read); unknown steps, references to later steps,
    cycles and references between branch or aggregate steps are located errors."""
    sink = ctx.sink
    ids = [s.spec.id for s in steps]
    needs: dict[str, set[str]] = {s.spec.id: set() for s in steps}
    for step in steps:
        for arg, value in step.args.items():
            for ref in mapping_references(value):
                if not isinstance(ref, StepRef):
                    continue
                where = loc("steps", step.index, "args", arg)
                if ref.step not in needs:
                    close = difflib.get_close_matches(ref.step, ids, n=1)
                    sink.error("composite-reference-unknown", f"step `{step.spec.id}` reads `${ref.step}`, which is "
                               "not a step of this composite", where,
                               f"did you mean `${close[0]}`?" if close else f"steps: {', '.join(ids)}")
                    continue
                needs[step.spec.id].add(ref.step)
    for step in steps:
        if in_cycle(step.spec.id, needs):
            sink.error("composite-cycle", f"step `{step.spec.id}` reads its own answer, through "
                       f"{' -> '.join(cycle_path(step.spec.id, needs))}", loc("steps", step.index, "args"),
                       "a step can read only the answers of steps that run before it")
            continue
        for need in sorted(needs[step.spec.id], key=ids.index):
            where = loc("steps", step.index, "args")
            if intent.pattern == "branch":
                sink.error("composite-reference-branch", f"branch step `{step.spec.id}` reads `${need}`, another "
                           "branch; exactly one branch step runs", where,
                           "use a pipeline, or map the value from the composite's input")
            elif intent.pattern == "aggregate":
                sink.error("composite-reference-aggregate", f"aggregate step `{step.spec.id}` reads `${need}`; "
                           "aggregate steps run at once, independently", where,
                           "use a pipeline when a step needs another's answer")
            elif ids.index(need) > ids.index(step.spec.id) and not in_cycle(need, needs):
                sink.error("composite-reference-later", f"step `{step.spec.id}` reads `${need}`, a later step",
                           where, f"move step `{need}` before step `{step.spec.id}`: pipeline steps run in the "
                           "order written")
    for member, value in output.items():
        for ref in mapping_references(value):
            if isinstance(ref, StepRef) and ref.step not in needs:
                close = difflib.get_close_matches(ref.step, ids, n=1)
                sink.error("composite-reference-unknown", f"output member `{member}` reads `${ref.step}`, which is "
                           "not a step of this composite", loc("output", member),
                           f"did you mean `${close[0]}`?" if close else f"steps: {', '.join(ids)}")
    return needs


# ---------------------------------------------------------------------------------------------
# schemas


def _input_schema(ctx: Ctx, intent: CompositeIntent, steps: list[_Step], switch: InputRef | None,
                  loc: Any) -> dict[str, Any]:
    """The composite's canonical input schema: an object of the derived arguments (docs/composites.md,
    "The composite's arguments"), strict-mode friendly like every tool's."""
    sink = ctx.sink
    props: dict[str, Any] = {}
    required: list[str] = []
    defs: dict[str, Any] = {}
    origin: dict[str, tuple[str, str]] = {}  # argument -> (step id, step argument) it was taken from
    always = intent.pattern != "branch"
    if switch is not None:
        name = parse_pointer(switch.pointer)[0]
        whens = [s.spec.when for s in steps if s.spec.when is not None]
        props[name] = intent.inputs.get(name) or {
            "type": "string", "enum": whens,
            "description": "Which step runs: " + "; ".join(f"{s.spec.when}: {s.op.key}" for s in steps) + "."}
        required.append(name)
    for name, schema in intent.inputs.items():
        if name not in props:
            props[name] = copy.deepcopy(schema)
    for step in steps:
        step_props = step.input_schema.get("properties", {})
        step_required = set(step.input_schema.get("required", []))
        for arg, value in step.args.items():
            where = loc("steps", step.index, "args", arg)
            for ref in mapping_references(value):
                if not isinstance(ref, InputRef):
                    continue
                tokens = parse_pointer(ref.pointer)
                name = tokens[0]
                whole = value is ref and len(tokens) == 1
                if whole and arg not in step_props:
                    continue  # not an argument of the step: `composite-argument-unknown`
                if whole:
                    schema = step_props[arg]
                    if name in props:  # declared under `inputs`, the switch, or mapped into an earlier step
                        if not compatible(props[name], schema):
                            first = origin.get(name)
                            sink.error("composite-argument-incompatible",
                                       f"argument `{name}` is mapped into step `{step.spec.id}` ({arg}) and "
                                       + (f"step `{first[0]}` ({first[1]})" if first else "declared under `inputs`")
                                       + " with schemas no value satisfies both", where,
                                       "map two different arguments, or declare one schema under `inputs` that "
                                       "both step arguments accept")
                    else:
                        props[name] = copy.deepcopy(schema)
                        origin[name] = (step.spec.id, arg)
                        hoist_defs(schema, step.input_schema.get("$defs", {}), defs)
                    if always and arg in step_required and name not in required:
                        required.append(name)
                elif name not in props:
                    sink.error("composite-input-undeclared",
                               f"`$input{ref.pointer}` in step `{step.spec.id}` ({arg}) names argument `{name}`, "
                               "whose schema cannot be taken from a step argument", where,
                               f"declare it: inputs: {{{name}: {{type: string}}}} (its JSON Schema)")
                elif always and name not in required:
                    required.append(name)
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    if defs:
        out["$defs"] = {k: defs[k] for k in sorted(defs)}
    return out


def _check_steps(ctx: Ctx, intent: CompositeIntent, steps: list[_Step], input_schema: dict[str, Any],
                 loc: Any) -> None:
    """Every required step argument mapped (the idempotency key excepted: the runtime fills it), every
    mapped argument one the step takes, and every mapping's types able to match the argument's."""
    sink = ctx.sink
    by_id = {s.spec.id: s for s in steps}
    for step in steps:
        props = step.input_schema.get("properties", {})
        key_arg = step.row.idempotency.arg if step.row.idempotency is not None else None
        for name in step.input_schema.get("required", []):
            if name not in step.args and name != key_arg:
                sink.error("composite-argument-unmapped",
                           f"step `{step.spec.id}` ({step.op.key}) requires argument `{name}`, which its `args` "
                           "do not map", loc("steps", step.index, "args") if step.spec.args
                           else loc("steps", step.index),
                           f"map it: args: {{{name}: $input/{name}}} (or a step's answer, or a literal)")
        for arg, value in step.args.items():
            where = loc("steps", step.index, "args", arg)
            if arg not in props or arg == key_arg:
                close = difflib.get_close_matches(arg, list(props), n=1)
                sink.error("composite-argument-unknown",
                           f"step `{step.spec.id}` maps `{arg}`, which is not an argument of {step.op.key}"
                           + (" (the runtime fills the idempotency key)" if arg == key_arg else ""), where,
                           f"did you mean `{close[0]}`?" if close else
                           f"its arguments: {', '.join(sorted(props)) or '(none)'}")
                continue
            target = schema_at(step.input_schema, [arg])
            source = _value_schema(value, by_id, input_schema)
            if not types_meet(schema_types(source), schema_types(target)):
                sink.error("composite-mapping-type",
                           f"step `{step.spec.id}` argument `{arg}` takes {_shown(schema_types(target))}, but is "
                           f"fed {_shown(schema_types(source))} ({_describe(value)})", where,
                           "map a member of the right type, or a literal the argument accepts")
            elif isinstance(value, LiteralValue) and not value.references() and isinstance(target, dict) \
                    and isinstance(target.get("enum"), list) and value.value not in target["enum"]:
                sink.error("composite-mapping-type",
                           f"step `{step.spec.id}` argument `{arg}` is one of {target['enum']!r}, but is given "
                           f"{value.value!r}", where, "use one of the listed values")


def _value_schema(value: MappingValue, steps: dict[str, _Step], input_schema: dict[str, Any]) -> Any:
    """The schema of the values a mapping gives, as far as known (None: unknown)."""
    if isinstance(value, InputRef):
        return schema_at(input_schema, parse_pointer(value.pointer))
    if isinstance(value, StepRef):
        step = steps.get(value.step)
        if step is None or step.output_schema is None:
            return None
        return schema_at(step.output_schema, parse_pointer(value.pointer))
    if value.references():
        return {"type": json_type(value.value)} if isinstance(value.value, (dict, list)) else None
    return {"type": json_type(value.value)}


def _shown(types: set[str] | None) -> str:
    return "any value" if types is None else " or ".join(sorted(types))


def _describe(value: MappingValue) -> str:
    if isinstance(value, InputRef):
        return f"$input{value.pointer}"
    if isinstance(value, StepRef):
        return f"${value.step}{value.pointer}"
    return f"the literal {value.value!r}"


def _permission(ctx: Ctx, intent: CompositeIntent, steps: list[_Step], loc: Any) -> tuple[str, ...]:
    scopes = [scope for s in steps for scope in s.row.permission]
    extra = [intent.permission] if isinstance(intent.permission, str) else list(intent.permission or [])
    for scope in extra:
        if not scope.strip() or any(c.isspace() for c in scope):
            ctx.sink.error("permission-invalid", f"permission {scope!r} is not one scope", loc("permission"),
                           "write one scope, or a list of scopes: permission: [a:read, b:read]")
    return tuple(dict.fromkeys([*scopes, *extra]))


def _auth_union(steps: list[_Step]) -> tuple[AuthBinding, ...]:
    """The credentials the steps use, one per scheme, with the union of the scopes the steps ask for."""
    merged: dict[tuple[str, str, str, str, str], list[str]] = {}
    for step in steps:
        for a in step.row.auth:
            scopes = merged.setdefault((a.scheme, a.kind, a.location, a.wire_name, a.secret), [])
            scopes.extend(x for x in a.scopes if x not in scopes)
    return tuple(AuthBinding(scheme, kind, location, wire, secret, tuple(scopes))  # type: ignore[arg-type]
                 for (scheme, kind, location, wire, secret), scopes in merged.items())


def _default_timeout(pattern: str, steps: list[_Step]) -> int:
    """One deadline: the steps' timeouts summed (pipeline), the longest (branch, aggregate)."""
    times = [s.row.timeout_ms for s in steps]
    return sum(times) if pattern == "pipeline" else max(times)


def _output_schema(intent: CompositeIntent, steps: dict[str, _Step], input_schema: dict[str, Any],
                   output: dict[str, MappingValue]) -> dict[str, Any]:
    """The combined result's schema: one property per output member (its schema read from the step's
    answer schema at the reference's pointer, `{}` when that cannot be told); an aggregate adds
    `errors`. No member is required: a branch or an aggregate gives only those of the steps that ran
    and answered."""
    props: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    for member, value in output.items():
        schema: Any = None
        if isinstance(value, StepRef) and value.step in steps:
            step = steps[value.step]
            if step.output_schema is not None:
                schema = schema_at(step.output_schema, parse_pointer(value.pointer))
                if schema is not None:
                    hoist_defs(schema, step.output_schema.get("$defs", {}), defs)
        elif isinstance(value, InputRef):
            schema = schema_at(input_schema, parse_pointer(value.pointer))
        props[member] = copy.deepcopy(schema) if isinstance(schema, dict) else {}
    if intent.pattern == "aggregate":
        props[ERRORS] = {
            "type": "object", "additionalProperties": {"type": "object"},
            "description": "Step id -> the structured error of each step that did not answer."}
    out: dict[str, Any] = {"type": "object", "properties": props}
    if defs:
        out["$defs"] = {k: defs[k] for k in sorted(defs)}
    return out


def _derived_redact(steps: dict[str, _Step], output: dict[str, MappingValue]) -> list[str]:
    """The steps' own redactions carried to the combined result: a step intent that redacts
    `requester.phone` redacts `<member>.requester.phone` of a member that holds that part of its answer."""
    found: list[str] = []
    for member, value in output.items():
        if not isinstance(value, StepRef) or value.step not in steps:
            continue
        prefix = [t for t in parse_pointer(value.pointer) if not t.isdigit()]
        for path in steps[value.step].redact:
            parts = path.split(".")
            if parts[: len(prefix)] == prefix:
                found.append(".".join([member, *parts[len(prefix):]]))
            elif prefix[: len(parts)] == parts:  # the member lies inside a redacted part
                found.append(member)
    return found


__all__ = ["EFFECT_ORDER", "composite_tool_names", "lower_composites"]
