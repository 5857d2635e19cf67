"""Stage `lower`, composites: the checks of a composite's shape, mappings and references.

Input: a composite's intent (`CompositeIntent`) and its steps lowered (`Step`). Output: each step's
`args` and the result's `output` parsed into mapping values, the branch switch (an `InputRef`),
each step's `needs` (the steps its arguments read), and located errors (file:line:col + JSON
pointer in the intent map, and what to do) in the sink for: a reserved or repeated step id, a
branch `switch` or `when` missing, duplicated or where no branch is, a reference to an unknown or
later step, a cycle, a reference between branch or aggregate steps, an unmapped required step
argument, a mapped argument the step does not take, and a mapping whose types cannot match.
Nothing is raised.
"""

from __future__ import annotations

import difflib
from typing import Any

from ...diagnostics import DiagnosticSink
from ...pointer import escape_token, parse_pointer
from ...policy.format import InputRef, LiteralValue, MappingValue, StepRef, mapping_references
from ..intent import CompositeIntent
from ..schema.satisfiable import json_type_of as json_type
from .composite_refs import INPUT, cycle_path, in_cycle, parse_ref, parse_value
from .composite_schemas import schema_at, schema_types, types_meet
from .composite_steps import Step
from .context import Ctx


def has_errors_at(sink: DiagnosticSink, display: str, where: tuple[str, str]) -> bool:
    """Whether `sink` holds an error in file `display` at or under the intent map's `where` (a
    composite: ``("composites", key)``)."""
    prefix = "/" + "/".join(escape_token(w) for w in where)
    return any(
        d.location is not None
        and d.location.file == display
        and (d.location.pointer or "").startswith(prefix)
        for d in sink.errors
    )


def check_shape(ctx: Ctx, key: str, intent: CompositeIntent, loc: Any) -> None:
    """Step ids unique and not `input`; a branch's switch and `when`s; `when` only on branches."""
    sink = ctx.sink
    seen: dict[str, int] = {}
    for index, step in enumerate(intent.steps):
        if step.id == INPUT:
            sink.error(
                "composite-step-id",
                f"composite `{key}`: step id `input` is reserved for the composite's arguments",
                loc("steps", index, "id"),
                "choose another id",
            )
        if step.id in seen:
            sink.error(
                "composite-step-id",
                f"composite `{key}`: step id `{step.id}` is used twice (steps {seen[step.id]} and {index})",
                loc("steps", index, "id"),
                "give every step its own id",
            )
        seen.setdefault(step.id, index)
    whens: dict[str, int] = {}
    if intent.pattern == "branch":
        if intent.switch is None:
            sink.error(
                "composite-switch-missing",
                f"composite `{key}` is a branch without a `switch`",
                loc(),
                "add `switch: $input/<argument>`, the argument whose value chooses the step",
            )
        for index, step in enumerate(intent.steps):
            if step.when is None:
                sink.error(
                    "composite-when-missing",
                    f"branch `{key}`: step `{step.id}` has no `when`",
                    loc("steps", index),
                    "add `when: <value of the switch argument that takes this step>`",
                )
            elif step.when in whens:
                sink.error(
                    "composite-when-duplicate",
                    f"branch `{key}`: steps {whens[step.when]} and {index} both "
                    f"run when the switch is {step.when!r}",
                    loc("steps", index, "when"),
                    "give every branch step its own `when` value",
                )
            else:
                whens[step.when] = index
    else:
        if intent.switch is not None:
            sink.error(
                "composite-switch-unused",
                f"composite `{key}` is a {intent.pattern}; only a branch has a `switch`",
                loc("switch"),
                "drop `switch`, or set `pattern: branch`",
            )
        for index, step in enumerate(intent.steps):
            if step.when is not None:
                sink.error(
                    "composite-when-unused",
                    f"composite `{key}` is a {intent.pattern}; only branch steps have `when`",
                    loc("steps", index, "when"),
                    "drop `when`, or set `pattern: branch`",
                )


def branch_switch(ctx: Ctx, intent: CompositeIntent, loc: Any) -> InputRef | None:
    """A branch's `switch` as a reference to one argument of the composite (None for another pattern,
    or after a located ``composite-switch-invalid`` error)."""
    if intent.pattern != "branch" or intent.switch is None:
        return None
    ref = parse_ref(intent.switch, loc("switch"), ctx.sink) if intent.switch.startswith("$") else None
    if ref is None or not isinstance(ref, InputRef) or len(parse_pointer(ref.pointer)) != 1:
        if ref is not None or not intent.switch.startswith("$"):
            ctx.sink.error(
                "composite-switch-invalid",
                f"switch {intent.switch!r} is not an argument of the composite",
                loc("switch"),
                "write `switch: $input/<argument>`",
            )
        return None
    return ref


def parse_mappings(
    ctx: Ctx, intent: CompositeIntent, lowered: list[Step], loc: Any
) -> dict[str, MappingValue]:
    """Each step's `args` parsed into its `Step.args`; the result members (`output`, default: one per
    step, its whole answer)."""
    for step in lowered:
        for arg, raw in step.spec.args.items():
            value = parse_value(raw, loc("steps", step.index, "args", arg), ctx.sink)
            if value is not None:
                step.args[arg] = value
    output_raw = intent.output if intent.output is not None else {s.id: f"${s.id}" for s in intent.steps}
    output: dict[str, MappingValue] = {}
    for member, raw in output_raw.items():
        value = parse_value(
            raw, loc("output", member) if intent.output is not None else loc("steps"), ctx.sink
        )
        if value is not None:
            output[member] = value
    return output


def check_references(
    ctx: Ctx, intent: CompositeIntent, steps: list[Step], output: dict[str, MappingValue], loc: Any
) -> dict[str, set[str]]:
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
                    sink.error(
                        "composite-reference-unknown",
                        f"step `{step.spec.id}` reads `${ref.step}`, which is not a step of this composite",
                        where,
                        f"did you mean `${close[0]}`?" if close else f"steps: {', '.join(ids)}",
                    )
                    continue
                needs[step.spec.id].add(ref.step)
    for step in steps:
        if in_cycle(step.spec.id, needs):
            sink.error(
                "composite-cycle",
                f"step `{step.spec.id}` reads its own answer, through "
                f"{' -> '.join(cycle_path(step.spec.id, needs))}",
                loc("steps", step.index, "args"),
                "a step can read only the answers of steps that run before it",
            )
            continue
        for need in sorted(needs[step.spec.id], key=ids.index):
            where = loc("steps", step.index, "args")
            if intent.pattern == "branch":
                sink.error(
                    "composite-reference-branch",
                    f"branch step `{step.spec.id}` reads `${need}`, another "
                    "branch; exactly one branch step runs",
                    where,
                    "use a pipeline, or map the value from the composite's input",
                )
            elif intent.pattern == "aggregate":
                sink.error(
                    "composite-reference-aggregate",
                    f"aggregate step `{step.spec.id}` reads `${need}`; "
                    "aggregate steps run at once, independently",
                    where,
                    "use a pipeline when a step needs another's answer",
                )
            elif ids.index(need) > ids.index(step.spec.id) and not in_cycle(need, needs):
                sink.error(
                    "composite-reference-later",
                    f"step `{step.spec.id}` reads `${need}`, a later step",
                    where,
                    f"move step `{need}` before step `{step.spec.id}`: pipeline steps run in the "
                    "order written",
                )
    for member, value in output.items():
        for ref in mapping_references(value):
            if isinstance(ref, StepRef) and ref.step not in needs:
                close = difflib.get_close_matches(ref.step, ids, n=1)
                sink.error(
                    "composite-reference-unknown",
                    f"output member `{member}` reads `${ref.step}`, which is not a step of this composite",
                    loc("output", member),
                    f"did you mean `${close[0]}`?" if close else f"steps: {', '.join(ids)}",
                )
    return needs


def check_steps(
    ctx: Ctx, intent: CompositeIntent, steps: list[Step], input_schema: dict[str, Any], loc: Any
) -> None:
    """Every required step argument mapped (the idempotency key excepted: the runtime fills it), every
    mapped argument one the step takes, and every mapping's types able to match the argument's."""
    sink = ctx.sink
    by_id = {s.spec.id: s for s in steps}
    for step in steps:
        props = step.input_schema.get("properties", {})
        key_arg = step.row.idempotency.arg if step.row.idempotency is not None else None
        for name in step.input_schema.get("required", []):
            if name not in step.args and name != key_arg:
                sink.error(
                    "composite-argument-unmapped",
                    f"step `{step.spec.id}` ({step.op.key}) requires argument `{name}`, which its `args` "
                    "do not map",
                    loc("steps", step.index, "args") if step.spec.args else loc("steps", step.index),
                    f"map it: args: {{{name}: $input/{name}}} (or a step's answer, or a literal)",
                )
        for arg, value in step.args.items():
            where = loc("steps", step.index, "args", arg)
            if arg not in props or arg == key_arg:
                close = difflib.get_close_matches(arg, list(props), n=1)
                sink.error(
                    "composite-argument-unknown",
                    f"step `{step.spec.id}` maps `{arg}`, which is not an argument of {step.op.key}"
                    + (" (the runtime fills the idempotency key)" if arg == key_arg else ""),
                    where,
                    f"did you mean `{close[0]}`?"
                    if close
                    else f"its arguments: {', '.join(sorted(props)) or '(none)'}",
                )
                continue
            target = schema_at(step.input_schema, [arg])
            source = _value_schema(value, by_id, input_schema)
            if not types_meet(schema_types(source), schema_types(target)):
                sink.error(
                    "composite-mapping-type",
                    f"step `{step.spec.id}` argument `{arg}` takes {_shown(schema_types(target))}, but is "
                    f"fed {_shown(schema_types(source))} ({_describe(value)})",
                    where,
                    "map a member of the right type, or a literal the argument accepts",
                )
            elif (
                isinstance(value, LiteralValue)
                and not value.references()
                and isinstance(target, dict)
                and isinstance(target.get("enum"), list)
                and value.value not in target["enum"]
            ):
                sink.error(
                    "composite-mapping-type",
                    f"step `{step.spec.id}` argument `{arg}` is one of {target['enum']!r}, but is given "
                    f"{value.value!r}",
                    where,
                    "use one of the listed values",
                )


def _value_schema(value: MappingValue, steps: dict[str, Step], input_schema: dict[str, Any]) -> Any:
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
