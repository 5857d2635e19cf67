"""Stage `lower`, composites: one intent over several operations -> its tools (docs/composites.md).

Input: the intent map's `composites:` entries and the tools already lowered (names taken). Output:
per composite one read tool (pattern pipeline, branch or aggregate of reads) or a `preview_<key>` +
`record_<key>` pair (a composite with a write step), each an ordinary IR `Tool` whose `PolicyRow`
has no operation and carries the `CompositePlan`.

Each step's row is lowered (`composite_steps`) by the code that lowers an ordinary tool of its
operation (`toolgen.compile.lower.tools.lower_intent`), from the operation's own intent in `tools:`
when the map has one (its permission, idempotency, narrowed arguments, timeout, retries), else from
the intent an include group would infer; then without pagination and projection (a reference reads the whole
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
whose types cannot match (those of the shape, mappings and references: `composite_checks`), a
write step in an aggregate, an override looser than derived, a branch
`when` missing or duplicated, one argument mapped into two steps with incompatible schemas.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ...diagnostics import SourceLocation
from ...naming import tool_name_problem
from ...pointer import parse_pointer
from ...policy.format import (
    CompositePlan,
    CompositeStep,
    InputRef,
    MappingValue,
    StepRef,
    mapping_references,
)
from ..intent import CompositeIntent
from ..ir import AuthBinding, Effect, Idempotency, Mode, OutputPolicy, PolicyRow, Retry, Tool
from ..operations import Operation, OperationIndex
from ..schema.projection import project_schema
from .composite_checks import (
    branch_switch,
    check_references,
    check_shape,
    check_steps,
    has_errors_at,
    parse_mappings,
)
from .composite_schemas import (
    ERRORS,
    STEPS,
    compatible,
    hoist_defs,
    record_output_schema,
    schema_at,
)
from .composite_steps import Step, lower_step, step_effect_guess
from .context import Ctx
from .text import cap_text, expansion_texts, guidance, with_examples
from .tools import PREVIEW_ID_ARG, _preview_output_schema
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


class _Failed(Exception):
    """A composite could not be lowered; its errors are in the sink."""


def lower_composites(
    ctx: Ctx, operations: list[Operation], by_ref: OperationIndex, taken: set[str]
) -> list[Tool]:
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


def _lower_composite(
    ctx: Ctx,
    operations: list[Operation],
    by_ref: OperationIndex,
    key: str,
    intent: CompositeIntent,
    taken: set[str],
) -> list[Tool]:
    sink, intents = ctx.sink, ctx.intents
    where = ("composites", key)

    def loc(*more: str | int) -> SourceLocation:
        return intents.locate(*where, *more)

    check_shape(ctx, key, intent, loc)
    steps_ids = [s.id for s in intent.steps]
    # 1. each step's operation, lowered as an ordinary tool of it
    lowered: list[Step] = []
    writes_any = any(step_effect_guess(ctx, by_ref, s) != "read" for s in intent.steps)
    names = composite_tool_names(key, writes_any)
    owner = names[-1]
    for index, spec in enumerate(intent.steps):
        step = lower_step(ctx, operations, by_ref, key, owner, index, spec, loc)
        if step is not None:
            lowered.append(step)
    if len(lowered) != len(intent.steps):
        raise _Failed
    writes = any(s.row.mode == "record" for s in lowered)
    if writes != writes_any:  # the guess and the lowering disagree only on a broken step
        raise _Failed
    # 2. the mappings, their references and the step order
    output = parse_mappings(ctx, intent, lowered, loc)
    switch = branch_switch(ctx, intent, loc)
    needs = check_references(ctx, intent, lowered, output, loc)
    if has_errors_at(sink, intents.display, where):
        raise _Failed
    # 3. derived arguments, and the checks that need step schemas
    by_id = {s.spec.id: s for s in lowered}
    input_schema = _input_schema(ctx, intent, lowered, switch, loc)
    check_steps(ctx, intent, lowered, input_schema, loc)
    # 4. effect, permission, approval
    effect = _effect(ctx, key, intent, lowered, writes, loc)
    permission = _permission(ctx, intent, lowered, loc)
    if has_errors_at(sink, intents.display, where):
        raise _Failed
    # 5. the plan, the output, the tools
    ordered = lowered  # pipeline steps run in the order written (references checked above)
    plan = CompositePlan(
        pattern=intent.pattern,
        switch=switch,
        steps=tuple(
            CompositeStep(
                id=s.spec.id,
                when=s.spec.when,
                needs=tuple(sorted(needs[s.spec.id], key=steps_ids.index)),
                args=dict(s.args),
                row=s.row,
                input_schema=s.input_schema,
                output_schema=s.output_schema,
            )
            for s in ordered
        ),
        output=dict(output),
    )
    _check_names(ctx, key, names, taken, loc)
    result_schema, fields = _result(ctx, key, intent, by_id, input_schema, output, writes, loc)
    defaults = ctx.intents.model.defaults
    out_policy = OutputPolicy(
        fields=tuple(fields),
        max_bytes=intent.max_bytes or defaults.output_max_bytes,
        redact=tuple(dict.fromkeys((*_derived_redact(by_id, output), *intent.redact))),
        schema_mode=defaults.output_schema_mode,
    )
    timeout = intent.timeout_ms or _default_timeout(intent.pattern, lowered)
    auth = _auth_union(lowered)
    placement = place(
        ctx,
        lowered[0].op,
        toolset=intent.toolset,
        loading=intent.loading,
        keywords=intent.keywords,
        group=None,
        examples=intent.examples,
        not_for=intent.not_for,
    )
    once = Retry(max_attempts=1, backoff_ms=0, deadline_ms=timeout, on=())
    extra = guidance(intent.use_when, intent.not_for)
    summary = cap_text(
        " ".join(intent.description.split()), max(defaults.description_max_chars - len(extra), 80)
    )
    summary = with_examples(summary + extra, expansion_texts(intent.examples), defaults.description_max_chars)
    chain = (" → " if intent.pattern == "pipeline" else ", ").join(s.op.key for s in ordered)
    how = {
        "pipeline": f"Runs in order: {chain}.",
        "branch": f"Runs one of: {chain}, chosen by {(switch.pointer[1:] if switch else '')}.",
        "aggregate": f"Runs at once: {chain}; partial errors are listed under errors.",
    }[intent.pattern]

    def row(tool: str, mode: Mode, **more: Any) -> PolicyRow:
        base = PolicyRow(
            tool=tool,
            mode=mode,
            effect="read",
            operation_id="",
            method="",
            path="",
            permission=permission,
            approval="never",
            idempotency=None,
            retry=once,
            timeout_ms=timeout,
            pagination=None,
            output=out_policy,
            auth=auth,
            body_encoding="none",
            body_content_type=None,
            bindings=(),
            fixed=(),
            pair=None,
            intent=key,
            success_status=(),
            toolset=placement.toolset,
            loading=placement.loading,
            keywords=placement.keywords,
            examples=placement.examples,
            not_for=placement.not_for,
            composite=plan,
        )
        return replace(base, **more)

    title = intent.title
    if not writes:
        read = row(names[0], "read")
        return [
            Tool(
                names[0],
                f"{summary} Read-only. {how}",
                input_schema,
                result_schema,
                read,
                title,
                "",
                strict=intent.strict,
            )
        ]
    return _writing_tools(
        ctx, key, intent, names, input_schema, result_schema, plan, row, effect, fields, summary, how, loc
    )


def _effect(
    ctx: Ctx, key: str, intent: CompositeIntent, lowered: list[Step], writes: bool, loc: Any
) -> Effect:
    """The composite's effect (the strictest step's, or the intent's when stricter); located errors for
    overrides looser than derived, a write in an aggregate and a key sent to the API."""
    sink = ctx.sink
    effect: Effect = max((s.row.effect for s in lowered), key=lambda e: EFFECT_ORDER[e])
    if intent.effect is not None:
        if EFFECT_ORDER[intent.effect] < EFFECT_ORDER[effect]:
            sink.error(
                "composite-override-looser",
                f"composite `{key}` sets effect {intent.effect!r}, but a step is {effect!r}",
                loc("effect"),
                f"drop `effect` (derived: {effect}) or set something at least as strict",
            )
        else:
            effect = intent.effect
    if intent.pattern == "aggregate":
        for step in lowered:
            if step.row.effect != "read":
                sink.error(
                    "composite-aggregate-write",
                    f"composite `{key}` is an aggregate, but step `{step.spec.id}` ({step.op.key}) "
                    f"is a {step.row.effect}",
                    loc("steps", step.index, "operation"),
                    "an aggregate runs reads only; use a pipeline for steps that write",
                )
    if intent.approval == "never" and writes:
        sink.error(
            "composite-override-looser",
            f"composite `{key}` sets approval never, but it has a write step",
            loc("approval"),
            "drop `approval` (derived: required): one approval covers the whole plan",
        )
    if intent.approval == "required" and not writes:
        sink.warning(
            "approval-on-read",
            f"composite `{key}` only reads; approval applies to record tools only",
            loc("approval"),
            "drop `approval`",
        )
    if intent.idempotency is not None and intent.idempotency.send_as != "none":
        sink.error(
            "composite-idempotency-sent",
            f"composite `{key}` sends its idempotency key ({intent.idempotency.send_as}); a composite "
            "has no request of its own",
            loc("idempotency", "send_as"),
            "drop `send_as`: each write step sends its own key (`tgs-` and a digest of the record tool, "
            "the key and the step id) as its operation's intent says",
        )
    return effect


def _check_names(ctx: Ctx, key: str, names: tuple[str, ...], taken: set[str], loc: Any) -> None:
    for name in names:
        problem = tool_name_problem(name)
        if problem:
            ctx.sink.error(
                "tool-name-invalid",
                f"composite `{key}` gives tool {name!r}: {problem}",
                loc(),
                "choose a shorter key of letters, digits and '_'",
            )
            raise _Failed
        if name in taken:
            ctx.sink.error(
                "tool-name-taken",
                f"composite `{key}` gives tool {name!r}, which another intent already gives",
                loc(),
                "rename the composite",
            )
            raise _Failed


def _result(
    ctx: Ctx,
    key: str,
    intent: CompositeIntent,
    by_id: dict[str, Step],
    input_schema: dict[str, Any],
    output: dict[str, MappingValue],
    writes: bool,
    loc: Any,
) -> tuple[dict[str, Any], list[str]]:
    """(the combined result's schema, projected; the projection's fields, `errors` kept in an aggregate).
    An `output` member named like a member the runtime adds (`errors` of an aggregate, `steps` of a
    record result) is a located error."""
    reserved = {ERRORS: intent.pattern == "aggregate", STEPS: writes}
    for member in output:
        if reserved.get(member):
            ctx.sink.error(
                "composite-output-reserved",
                f"composite `{key}`: result member `{member}` is the one "
                "the runtime adds ("
                + ("the steps that did not answer" if member == ERRORS else "every step's state")
                + ")",
                loc("output", member),
                "give the member another name",
            )
            raise _Failed
    result_schema = _output_schema(intent, by_id, input_schema, output)
    fields = list(intent.output_fields)
    if fields and intent.pattern == "aggregate" and ERRORS not in fields:
        fields.append(ERRORS)  # a projection never hides which steps failed
    if fields:
        try:
            result_schema = project_schema(result_schema, fields)
        except KeyError as exc:
            ctx.sink.error(
                "composite-output-field-unknown",
                f"composite `{key}`: output field {exc.args[0]!r} names no member of the combined result",
                loc("output_fields"),
                "name members of `output` and their members, e.g. customer.id",
            )
            raise _Failed from None
    return result_schema, fields


def _writing_tools(  # noqa: PLR0913
    ctx: Ctx,
    key: str,
    intent: CompositeIntent,
    names: tuple[str, ...],
    input_schema: dict[str, Any],
    result_schema: dict[str, Any],
    plan: CompositePlan,
    row: Callable[..., PolicyRow],
    effect: Effect,
    fields: list[str],
    summary: str,
    how: str,
    loc: Any,
) -> list[Tool]:
    """A writing composite's `preview_<key>` and `record_<key>` (the record takes the preview_id and a
    key; each write step's key is `tgs-` and a digest of the record tool, the key and the step id:
    docs/composites.md, step keys)."""
    sink, defaults, title = ctx.sink, ctx.intents.model.defaults, intent.title
    out_policy = row("", "read").output
    preview_name, record_name = names
    key_arg = intent.idempotency.key if intent.idempotency is not None else DEFAULT_KEY
    if key_arg in input_schema["properties"] or key_arg == PREVIEW_ID_ARG:
        sink.error(
            "idempotency-key-collision",
            f"composite `{key}`: idempotency key argument {key_arg!r} clashes "
            "with an argument of the composite",
            loc("idempotency") if intent.idempotency else loc(),
            "set `idempotency: {key: <another name>}`",
        )
        raise _Failed
    ttl = defaults.preview_ttl_s
    preview_row = row(
        preview_name,
        "preview",
        pair=record_name,
        output=OutputPolicy(max_bytes=out_policy.max_bytes, schema_mode=out_policy.schema_mode),
    )
    record_row = row(
        record_name,
        "record",
        effect=effect,
        approval="required",
        pair=preview_name,
        output=replace(out_policy, fields=(*fields, STEPS) if fields else ()),
        idempotency=Idempotency(key_arg, "none", None),
        record_arguments="preview",
        preview_ttl_s=ttl,
    )
    verb = "Destructive" if effect == "destructive" else "Writes"
    preview_desc = (
        f"PREVIEW ONLY, never writes: runs the reads and returns every request {record_name} would "
        f"send and a preview_id. A human must approve the preview_id before {record_name} runs. "
        f"{record_name}: {summary}"
    )
    record_desc = (
        f"{summary} {verb}. {how} Sends exactly the requests previewed by {preview_name}: pass its "
        f"preview_id, which a human must approve, and a fresh {key_arg}."
    )
    record_input = {
        "type": "object",
        "additionalProperties": False,
        "required": [PREVIEW_ID_ARG, key_arg],
        "properties": {
            PREVIEW_ID_ARG: {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": f"The preview_id {preview_name} returned.",
            },
            key_arg: {
                "type": "string",
                "minLength": 1,
                "maxLength": 190,
                "description": "Unique id of this action (e.g. a UUID); reuse it only to retry the same "
                "call. Each write step sends a key derived from this one; a key that "
                "starts with `tgs-` is refused.",
            },
        },
    }
    return [
        Tool(
            preview_name,
            preview_desc,
            input_schema,
            _preview_output_schema(),
            preview_row,
            f"Preview: {title}" if title else None,
            "",
            strict=intent.strict,
        ),
        Tool(
            record_name,
            record_desc,
            record_input,
            record_output_schema(result_schema, plan),
            record_row,
            title,
            "",
            strict=intent.strict,
        ),
    ]


# ---------------------------------------------------------------------------------------------
# schemas


def _input_schema(
    ctx: Ctx, intent: CompositeIntent, steps: list[Step], switch: InputRef | None, loc: Any
) -> dict[str, Any]:
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
            "type": "string",
            "enum": whens,
            "description": "Which step runs: " + "; ".join(f"{s.spec.when}: {s.op.key}" for s in steps) + ".",
        }
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
                            sink.error(
                                "composite-argument-incompatible",
                                f"argument `{name}` is mapped into step `{step.spec.id}` ({arg}) and "
                                + (f"step `{first[0]}` ({first[1]})" if first else "declared under `inputs`")
                                + " with schemas no value satisfies both",
                                where,
                                "map two different arguments, or declare one schema under `inputs` that "
                                "both step arguments accept",
                            )
                    else:
                        props[name] = copy.deepcopy(schema)
                        origin[name] = (step.spec.id, arg)
                        hoist_defs(schema, step.input_schema.get("$defs", {}), defs)
                    if always and arg in step_required and name not in required:
                        required.append(name)
                elif name not in props:
                    sink.error(
                        "composite-input-undeclared",
                        f"`$input{ref.pointer}` in step `{step.spec.id}` ({arg}) names argument `{name}`, "
                        "whose schema cannot be taken from a step argument",
                        where,
                        f"declare it: inputs: {{{name}: {{type: string}}}} (its JSON Schema)",
                    )
                elif always and name not in required:
                    required.append(name)
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    if defs:
        out["$defs"] = {k: defs[k] for k in sorted(defs)}
    return out


def _permission(ctx: Ctx, intent: CompositeIntent, steps: list[Step], loc: Any) -> tuple[str, ...]:
    scopes = [scope for s in steps for scope in s.row.permission]
    extra = [intent.permission] if isinstance(intent.permission, str) else list(intent.permission or [])
    for scope in extra:
        if not scope.strip() or any(c.isspace() for c in scope):
            ctx.sink.error(
                "permission-invalid",
                f"permission {scope!r} is not one scope",
                loc("permission"),
                "write one scope, or a list of scopes: permission: [a:read, b:read]",
            )
    return tuple(dict.fromkeys([*scopes, *extra]))


def _auth_union(steps: list[Step]) -> tuple[AuthBinding, ...]:
    """The credentials the steps use, one per scheme, with the union of the scopes the steps ask for."""
    merged: dict[tuple[str, str, str, str, str], list[str]] = {}
    for step in steps:
        for a in step.row.auth:
            scopes = merged.setdefault((a.scheme, a.kind, a.location, a.wire_name, a.secret), [])
            scopes.extend(x for x in a.scopes if x not in scopes)
    return tuple(
        AuthBinding(scheme, kind, location, wire, secret, tuple(scopes))  # type: ignore[arg-type]
        for (scheme, kind, location, wire, secret), scopes in merged.items()
    )


def _default_timeout(pattern: str, steps: list[Step]) -> int:
    """One deadline: the steps' timeouts summed (pipeline), the longest (branch, aggregate)."""
    times = [s.row.timeout_ms for s in steps]
    return sum(times) if pattern == "pipeline" else max(times)


def _output_schema(
    intent: CompositeIntent,
    steps: dict[str, Step],
    input_schema: dict[str, Any],
    output: dict[str, MappingValue],
) -> dict[str, Any]:
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
            "type": "object",
            "additionalProperties": {"type": "object"},
            "description": "Step id -> the structured error of each step that did not answer.",
        }
    out: dict[str, Any] = {"type": "object", "properties": props}
    if defs:
        out["$defs"] = {k: defs[k] for k in sorted(defs)}
    return out


def _derived_redact(steps: dict[str, Step], output: dict[str, MappingValue]) -> list[str]:
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
                found.append(".".join([member, *parts[len(prefix) :]]))
            elif prefix[: len(parts)] == parts:  # the member lies inside a redacted part
                found.append(member)
    return found


__all__ = ["EFFECT_ORDER", "composite_tool_names", "lower_composites"]
