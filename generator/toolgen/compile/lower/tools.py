"""One intent -> its tools: a read tool, or a `preview_*` + `record_*` pair for a write.

Input: an intent, resolved once (`toolgen.compile.lower.resolve.ResolvedIntent`: effect, permission,
approval, idempotency, retry, output, timeout with the map's defaults applied), and its operation
lowered once (`Lowered`). Output: IR `Tool`s, each with its input schema, its
output schema, its description and the `PolicyRow` the runtime enforces: previews never write and
return the generic preview result; records carry the idempotency key argument, the approval gate and
retries only when the key reaches the API. The rows of one intent are one base row with each mode's
members replaced (`dataclasses.replace`), so a member they share is written once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..intent import IncludeSpec, ToolIntent
from ..ir import ArgBinding, OutputPolicy, PolicyRow, Tool
from ..operations import Operation
from .context import Arg, Ctx, Skip
from .gates import checked_condition, lower_limits
from .idempotency_key import key_constraints
from .input_examples import tool_examples
from .resolve import ResolvedIntent, resolve_intent
from .reuse import lowered_operation
from .text import describe_tool, summary_of, title_of
from .toolsets import Placement, place


def lower_intent(
    ctx: Ctx,
    op: Operation,
    key: str,
    intent: ToolIntent,
    where: tuple[str | int, ...],
    *,
    explicit: bool,
    group: IncludeSpec | None = None,
) -> list[Tool]:
    """The tools of `intent` (the map's, at `where`; `explicit` when it is in `tools:`, else the one
    `group` infers): resolved once (`resolve.resolve_intent`), then its operation lowered once
    (`reuse.lowered_operation`) for the read tool, or for the preview and record tools of a write,
    whose policy rows are one base row with each mode's members replaced. Raises `Skip` (and
    `DiagnosticError`) when the operation cannot become these tools."""
    resolved = resolve_intent(ctx.intents, key, intent, where, explicit=explicit, group=group)
    return lower_resolved(ctx, op, resolved)


def placement_of(ctx: Ctx, op: Operation, resolved: ResolvedIntent) -> Placement:
    """`place` of the tools of `resolved` (its toolset, loading, keywords, include group and search
    expansions): what `lower_resolved` gives their rows, and what a remembered tool must still hold."""
    return place(
        ctx,
        op,
        toolset=resolved.toolset,
        loading=resolved.loading,
        keywords=resolved.keywords,
        group=resolved.group,
        examples=resolved.examples,
        not_for=resolved.not_for,
    )


def lower_resolved(ctx: Ctx, op: Operation, resolved: ResolvedIntent) -> list[Tool]:
    """`lower_intent` of the intent `resolve_intent` gave `resolved` (its key, where it sits, whether
    it is explicit and its include group are the resolved intent's)."""
    key, where, explicit = resolved.key, resolved.where, resolved.explicit
    lowered = lowered_operation(ctx, op, resolved)
    ctx.sink.extend(resolved.findings)
    defaults = ctx.intents.model.defaults
    effect = resolved.effect
    rule = resolved.output
    output = OutputPolicy(
        fields=rule.fields,
        max_bytes=rule.max_bytes,
        redact=rule.redact,
        schema_mode=rule.schema_mode,
        shape=lowered.shape,
        body=lowered.body,
        accept=lowered.accept,
        redirect=lowered.redirect,
    )
    placed = placement_of(ctx, op, resolved)
    summary = summary_of(ctx, op, resolved, defaults.description_max_chars, placed.examples)
    title = resolved.title or title_of(op)
    bindings = tuple(a.binding for a in lowered.args if a.binding is not None)
    base_schema = _input_schema(lowered.args)
    # what every row of this intent says alike; each mode replaces its own members
    base = PolicyRow(
        tool=key,
        mode="read",
        effect="read",
        operation_id=op.synthetic_id,
        method=op.method,
        path=op.url_path,
        permission=_permission(ctx, resolved, lowered.op_scopes),
        approval="never",
        idempotency=None,
        retry=resolved.retry,
        timeout_ms=resolved.timeout_ms,
        pagination=None,
        output=output,
        auth=lowered.auth,
        body_encoding=lowered.encoding,
        body_content_type=lowered.content_type,
        bindings=bindings,
        fixed=lowered.fixed,
        pair=None,
        intent=key,
        success_status=lowered.success,
        narrowed=lowered.narrowed,
        toolset=placed.toolset,
        loading=placed.loading,
        keywords=placed.keywords,
        examples=placed.examples,
        not_for=placed.not_for,
        max_body_bytes=resolved.max_body_bytes,
    )
    examples = tool_examples(ctx, op, key, resolved, lowered.args, base_schema, where, explicit=explicit)
    programmatic = _programmatic(ctx, resolved)

    if effect == "read":
        row = replace(base, pagination=lowered.pagination, limits=lower_limits(ctx, resolved, base_schema))
        desc = describe_tool(summary, "read", row, None)
        ctx.names[key] = op.pointer
        return [
            Tool(
                key,
                desc,
                base_schema,
                lowered.output_schema,
                row,
                title,
                op.pointer,
                strict=resolved.strict,
                input_examples=examples,
                programmatic="read" in programmatic,
            )
        ]

    idem = resolved.idempotency
    record_args = list(lowered.args)
    if idem is not None:
        if any(a.name == idem.arg for a in record_args):
            raise Skip(
                "idempotency-key-collision",
                f"idempotency key argument {idem.arg!r} clashes with an argument of {op.key}",
                ctx.intents.locate(*where, "idempotency", "key") if explicit else ctx.doc.locate(op.pointer),
                "choose another key name",
            )
        binding = (
            ArgBinding(idem.arg, idem.send_in, idem.wire_name or "", True)  # type: ignore[arg-type]
            if resolved.key_sent
            else None
        )
        record_args.append(Arg(idem.arg, _key_schema(lowered.key_schema if binding else None), binding, True))
    arguments, has_preview = resolved.record_arguments, resolved.has_preview
    if arguments == "preview" and idem is not None and idem.arg == PREVIEW_ID_ARG:
        raise Skip(
            "idempotency-key-collision",
            f"idempotency key argument {PREVIEW_ID_ARG!r} clashes with the preview_id argument of record_{key}",
            ctx.intents.locate(*where, "idempotency", "key") if explicit else ctx.doc.locate(op.pointer),
            "choose another key name",
        )
    preview_name, record_name = "preview_" + key, "record_" + key
    full_schema = _input_schema(record_args)
    when = checked_condition(ctx, resolved, full_schema)
    preview_row = replace(
        base,
        tool=preview_name,
        mode="preview",
        retry=resolved.preview_retry,
        pair=record_name,
        output=OutputPolicy(max_bytes=output.max_bytes, schema_mode=output.schema_mode),
    )
    record_row = replace(
        base,
        tool=record_name,
        mode="record",
        effect=effect,
        approval=resolved.approval,
        idempotency=idem,
        bindings=tuple(a.binding for a in record_args if a.binding is not None),
        pair=preview_name if has_preview else None,
        record_arguments=arguments,
        preview_ttl_s=resolved.preview_ttl_s,
        approval_when=when,
        limits=lower_limits(ctx, resolved, full_schema),
    )
    preview_desc = describe_tool(summary, "preview", preview_row, record_row)
    record_desc = describe_tool(summary, "record", record_row, record_row)
    ctx.names[record_name] = op.pointer
    if arguments == "preview":
        # the record tool takes the preview's id (and the key); the runtime rebuilds the request from the
        # arguments it stored at preview time, with the bindings of `record_row`
        record_args = [
            Arg(
                PREVIEW_ID_ARG,
                {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 200,
                    "description": f"The preview_id {preview_name} returned.",
                },
                None,
                True,
            )
        ] + [a for a in record_args if idem is not None and a.name == idem.arg]
    record_tool = Tool(
        record_name,
        record_desc,
        _input_schema(record_args),
        lowered.output_schema,
        record_row,
        title,
        op.pointer,
        strict=resolved.strict,
    )
    if not has_preview:
        return [record_tool]
    ctx.names[preview_name] = op.pointer
    return [
        Tool(
            preview_name,
            preview_desc,
            base_schema,
            _preview_output_schema(),
            preview_row,
            f"Preview: {title}" if title else None,
            op.pointer,
            strict=resolved.strict,
            input_examples=examples,
            programmatic="preview" in programmatic,
        ),
        record_tool,
    ]


def _programmatic(ctx: Ctx, resolved: ResolvedIntent) -> tuple[str, ...]:
    """The modes of this intent's tools that model-written code may call: the intent's `programmatic`,
    else the map's `defaults.programmatic` (resolved: `ResolvedIntent.programmatic`). `record` is
    refused with a located ``programmatic-record`` error and never returned: a loop in model-written
    code must never write (the record tool is the one that writes, and the one approval gates)."""
    key, where, explicit, own = resolved.key, resolved.where, resolved.explicit, resolved.programmatic_own
    modes = resolved.programmatic
    if "record" in modes:
        at = (
            ctx.intents.locate(*where, "programmatic")
            if own and explicit
            else ctx.intents.locate("defaults", "programmatic")
            if not own
            else None
        )
        ctx.sink.error(
            "programmatic-record",
            f"intent `{key}` lets model-written code call its record tool",
            at,
            "list only `read` or `preview`: a record tool writes, and is called directly",
            tool=key,
        )
    return tuple(m for m in modes if m != "record")


def _key_schema(api_schema: dict[str, Any] | None) -> dict[str, Any]:
    """The record tool's idempotency key argument: a string of 1 to 255 characters, narrowed by the
    bounds the API states for the parameter or body member the key is sent in (`key_constraints`:
    a shorter ``maxLength``, a longer ``minLength``), so the runtime refuses, before sending, a key
    the API would refuse."""
    schema: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 255}
    own = key_constraints(api_schema or {})
    if own.get("maxLength", 255) < 255:
        schema["maxLength"] = max(1, own["maxLength"])
    if own.get("minLength", 1) > 1 and own["minLength"] <= schema["maxLength"]:
        schema["minLength"] = own["minLength"]
    schema["description"] = "Unique id of this action (e.g. a UUID); reuse it only to retry the same call."
    return schema


#: The record tool's argument naming the stored preview it executes.
PREVIEW_ID_ARG = "preview_id"


def _permission(ctx: Ctx, resolved: ResolvedIntent, op_scopes: tuple[str, ...]) -> tuple[str, ...]:
    """The scopes every tool of the intent needs: the intent's (or its include group's), else the
    operation's OAuth scopes, else for an include group ``<api>:<effect>`` (``write`` for a destructive
    one); an explicit intent without any needs none."""
    if resolved.permission is not None:
        return resolved.permission
    if op_scopes:
        return op_scopes
    effect = resolved.effect
    return (f"{ctx.api}:{'write' if effect == 'destructive' else effect}",) if resolved.group else ()


def _preview_output_schema() -> dict[str, Any]:
    """What every preview tool returns (docs/generated-format.md, "Preview tools")."""
    return {
        "type": "object",
        "required": ["preview_id", "request", "effect", "approval_required", "record_tool"],
        "properties": {
            "preview_id": {"type": "string"},
            "request": {"type": "object"},
            "effect": {"type": "string"},
            "side_effects": {"type": "string"},
            "approval_required": {"type": "boolean"},
            "record_tool": {"type": "string"},
        },
    }


def _input_schema(args: list[Arg]) -> dict[str, Any]:
    """The tool's input object; `$defs` of argument schemas are hoisted to the root, where their
    `#/$defs/...` references point. The members an optional request body requires
    (`Arg.required_in_body`) go into ``dependentRequired`` (JSON Schema 2020-12 §10.2.2.4): each
    other body member given requires them."""
    props: dict[str, Any] = {}
    defs: dict[str, Any] = {}
    for a in args:
        schema = a.schema
        if "$defs" in schema:
            schema = dict(schema)
            defs.update(schema.pop("$defs"))
        props[a.name] = schema
    required = [a.name for a in args if a.required]
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = required
    # the members an optional body requires: required as soon as the body is sent (any member given)
    together = [a.name for a in args if a.required_in_body]
    if together:
        members = [
            a.name
            for a in args
            if a.binding is not None
            and a.binding.location == "body"
            and a.binding.wire_name
            and not a.required
        ]
        out["dependentRequired"] = {
            m: [t for t in together if t != m] for m in members if [t for t in together if t != m]
        }
    if defs:
        out["$defs"] = {k: defs[k] for k in sorted(defs)}
    return out
