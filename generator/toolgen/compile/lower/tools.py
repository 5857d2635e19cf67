"""One intent -> its tools: a read tool, or a `preview_*` + `record_*` pair for a write.

Input: an operation lowered once (`Lowered`), the intent (effect, permission, approval, idempotency,
retry, output, timeout) and the map's defaults. Output: IR `Tool`s, each with its input schema, its
output schema, its description and the `PolicyRow` the runtime enforces: previews never write and
return the generic preview result; records carry the idempotency key argument, the approval gate and
retries only when the key reaches the API.
"""

from __future__ import annotations

from typing import Any, Literal

from ..intent import IncludeSpec, RetrySpec, ToolIntent
from ..ir import ArgBinding, Effect, Idempotency, OutputPolicy, PolicyRow, Retry, Tool
from ..operations import Operation
from .context import Arg, Ctx, Skip
from .gates import approval_parts, checked_condition, lower_limits
from .idempotency_key import key_constraints
from .input_examples import tool_examples
from .reuse import lowered_operation
from .text import describe_tool, summary_of, title_of
from .toolsets import place

DEFAULT_RETRY_ON = ("timeout", "429", "502", "503", "504")


def lower_intent(ctx: Ctx, op: Operation, key: str, intent: ToolIntent, where: tuple[str | int, ...],
                 *, explicit: bool, group: IncludeSpec | None = None) -> list[Tool]:
    model = ctx.intents.model
    defaults = model.defaults
    lowered = lowered_operation(ctx, op, key, intent, where, explicit=explicit, group=group)
    effect = intent.effect
    if effect == "read" and approval_parts(intent.approval)[0] == "required":
        ctx.sink.warning("approval-on-read", f"intent `{key}` is a read; approval applies to record tools only",
                         ctx.intents.locate(*where, "approval") if explicit else None)
    permission = _permission(ctx, intent, group, lowered.op_scopes, effect)
    output = OutputPolicy(
        fields=tuple(intent.output.fields) if intent.output else (),
        max_bytes=(intent.output.max_bytes if intent.output and intent.output.max_bytes else defaults.output_max_bytes),
        redact=tuple(intent.output.redact) if intent.output else (),
        schema_mode=(intent.output.schema_mode if intent.output and intent.output.schema_mode
                     else defaults.output_schema_mode),
        shape=lowered.shape,
        body=lowered.body,
        accept=lowered.accept,
        redirect=lowered.redirect,
    )
    timeout = intent.timeout_ms or defaults.timeout_ms
    max_body = intent.max_body_bytes or defaults.max_body_bytes
    summary = summary_of(ctx, op, intent, defaults.description_max_chars)
    title = intent.title or title_of(op)
    bindings = tuple(a.binding for a in lowered.args if a.binding is not None)
    base_schema = _input_schema(lowered.args)
    placed = place(ctx, op, intent, group)
    examples = tool_examples(ctx, op, key, intent, lowered.args, base_schema, where, explicit=explicit)
    programmatic = _programmatic(ctx, key, intent, where, explicit=explicit)

    if effect == "read":
        retry = _retry(intent.retry, defaults.retry, timeout, safe=True)
        row = PolicyRow(
            tool=key, mode="read", effect="read", operation_id=op.synthetic_id, method=op.method,
            path=op.url_path, permission=permission, approval="never", idempotency=None, retry=retry,
            timeout_ms=timeout, pagination=lowered.pagination, output=output, auth=lowered.auth,
            body_encoding=lowered.encoding, body_content_type=lowered.content_type, bindings=bindings,
            fixed=lowered.fixed, pair=None, intent=key, success_status=lowered.success, narrowed=lowered.narrowed,
            toolset=placed.toolset, loading=placed.loading, keywords=placed.keywords,
            examples=placed.examples, not_for=placed.not_for, max_body_bytes=max_body,
            limits=lower_limits(ctx, key, intent, where, explicit=explicit, input_schema=base_schema))
        desc = describe_tool(summary, "read", row, None)
        ctx.names[key] = op.pointer
        return [Tool(key, desc, base_schema, lowered.output_schema, row, title, op.pointer, strict=intent.strict,
                     input_examples=examples, programmatic="read" in programmatic)]

    approval = approval_parts(intent.approval)[0] or (defaults.approval_destructive if effect == "destructive"
                                                      else defaults.approval_write)
    if intent.approval is None and explicit:
        ctx.sink.info("approval-defaulted", f"intent `{key}` ({effect}) has no `approval`; using {approval!r}",
                      ctx.intents.locate(*where), "state `approval: required` or `approval: never` explicitly")
    idem = None
    record_args = list(lowered.args)
    if intent.idempotency is not None:
        send = intent.idempotency.send_as
        if send == "none":
            if intent.idempotency.honoured_by_api:
                ctx.sink.error(
                    "idempotency-honoured-unsent",
                    f"intent `{key}` says the API honours its idempotency key, but the key is not sent to the API",
                    ctx.intents.locate(*where, "idempotency", "honoured_by_api"),
                    "set `send_as` to where the API reads the key (e.g. \"header:Idempotency-Key\"), "
                    "or drop `honoured_by_api`")
            idem = Idempotency(intent.idempotency.key, "none", None)
            binding = None
        else:
            where_, wire = send.split(":", 1)
            idem = Idempotency(intent.idempotency.key, where_, wire,  # type: ignore[arg-type]
                               intent.idempotency.honoured_by_api)
            binding = ArgBinding(intent.idempotency.key, where_, wire, True)  # type: ignore[arg-type]
        if any(a.name == intent.idempotency.key for a in record_args):
            raise Skip("idempotency-key-collision",
                       f"idempotency key argument {intent.idempotency.key!r} clashes with an argument of {op.key}",
                       ctx.intents.locate(*where, "idempotency", "key") if explicit else ctx.doc.locate(op.pointer),
                       "choose another key name")
        record_args.append(Arg(intent.idempotency.key, _key_schema(lowered.key_schema if binding else None),
                               binding, True))
    sent_key = idem is not None and idem.send_in != "none"
    retry = _retry(intent.retry, defaults.retry, timeout, safe=sent_key)
    if intent.retry and intent.retry.max_attempts and intent.retry.max_attempts > 1 and not sent_key:
        ctx.sink.warning("retry-unsafe-write", f"intent `{key}` retries a {effect} whose idempotency key is not "
                         "sent to the API; retries are disabled", ctx.intents.locate(*where, "retry"),
                         "send the key to the API (idempotency.send_as) to allow retries")
    arguments, ttl, has_preview = _record_shape(ctx, key, intent, approval, where, explicit=explicit)
    if arguments == "preview" and intent.idempotency is not None and intent.idempotency.key == PREVIEW_ID_ARG:
        raise Skip("idempotency-key-collision",
                   f"idempotency key argument {PREVIEW_ID_ARG!r} clashes with the preview_id argument of record_{key}",
                   ctx.intents.locate(*where, "idempotency", "key") if explicit else ctx.doc.locate(op.pointer),
                   "choose another key name")
    preview_name, record_name = "preview_" + key, "record_" + key
    full_schema = _input_schema(record_args)
    when = checked_condition(ctx, key, intent, where, explicit=explicit, input_schema=full_schema)
    preview_row = PolicyRow(
        tool=preview_name, mode="preview", effect="read", operation_id=op.synthetic_id, method=op.method,
        path=op.url_path, permission=permission, approval="never", idempotency=None,
        retry=_retry(None, defaults.retry, timeout, safe=True), timeout_ms=timeout, pagination=None,
        output=OutputPolicy(max_bytes=output.max_bytes, schema_mode=output.schema_mode), auth=lowered.auth,
        body_encoding=lowered.encoding, body_content_type=lowered.content_type, bindings=bindings,
        fixed=lowered.fixed, pair=record_name, intent=key, success_status=lowered.success, narrowed=lowered.narrowed,
            toolset=placed.toolset, loading=placed.loading, keywords=placed.keywords,
            examples=placed.examples, not_for=placed.not_for, max_body_bytes=max_body)
    record_row = PolicyRow(
        tool=record_name, mode="record", effect=effect, operation_id=op.synthetic_id, method=op.method,
        path=op.url_path, permission=permission, approval=approval, idempotency=idem, retry=retry,
        timeout_ms=timeout, pagination=None, output=output, auth=lowered.auth, body_encoding=lowered.encoding,
        body_content_type=lowered.content_type,
        bindings=tuple(a.binding for a in record_args if a.binding is not None), fixed=lowered.fixed,
        pair=preview_name if has_preview else None, intent=key, success_status=lowered.success,
        record_arguments=arguments, preview_ttl_s=ttl, narrowed=lowered.narrowed,
        toolset=placed.toolset, loading=placed.loading, keywords=placed.keywords,
        examples=placed.examples, not_for=placed.not_for, max_body_bytes=max_body,
        approval_when=when, limits=lower_limits(ctx, key, intent, where, explicit=explicit, input_schema=full_schema))
    preview_desc = describe_tool(summary, "preview", preview_row, record_row)
    record_desc = describe_tool(summary, "record", record_row, record_row)
    ctx.names[record_name] = op.pointer
    if arguments == "preview":
        # the record tool takes the preview's id (and the key); the runtime rebuilds the request from the
        # arguments it stored at preview time, with the bindings of `record_row`
        record_args = [Arg(PREVIEW_ID_ARG, {
            "type": "string", "minLength": 1, "maxLength": 200,
            "description": f"The preview_id {preview_name} returned.",
        }, None, True)] + [a for a in record_args if intent.idempotency is not None
                           and a.name == intent.idempotency.key]
    record_tool = Tool(record_name, record_desc, _input_schema(record_args), lowered.output_schema, record_row,
                       title, op.pointer, strict=intent.strict)
    if not has_preview:
        return [record_tool]
    ctx.names[preview_name] = op.pointer
    return [
        Tool(preview_name, preview_desc, base_schema, _preview_output_schema(), preview_row,
             f"Preview: {title}" if title else None, op.pointer, strict=intent.strict, input_examples=examples,
             programmatic="preview" in programmatic),
        record_tool,
    ]


def _programmatic(ctx: Ctx, key: str, intent: ToolIntent, where: tuple[str | int, ...], *, explicit: bool
                  ) -> tuple[str, ...]:
    """The modes of this intent's tools that model-written code may call: the intent's `programmatic`,
    else the map's `defaults.programmatic`. `record` is refused with a located ``programmatic-record``
    error and never returned: a loop in model-written code must never write (the record tool is the
    one that writes, and the one approval gates)."""
    own = intent.programmatic
    modes = tuple(own if own is not None else ctx.intents.model.defaults.programmatic)
    if "record" in modes:
        at = (ctx.intents.locate(*where, "programmatic") if own is not None and explicit
              else ctx.intents.locate("defaults", "programmatic") if own is None else None)
        ctx.sink.error("programmatic-record", f"intent `{key}` lets model-written code call its record tool",
                       at, "list only `read` or `preview`: a record tool writes, and is called directly", tool=key)
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


def _record_shape(ctx: Ctx, key: str, intent: ToolIntent, approval: str, where: tuple[str | int, ...], *,
                  explicit: bool) -> tuple[Literal["preview", "full"], int | None, bool]:
    """(what the record tool takes, the stored preview's lifetime in seconds or ``None``, whether the
    write has a preview tool). Default: ``preview`` for an approval-gated write, else ``full``.
    `preview: false` is refused (a located error; the preview is kept) with ``approval: required``
    or ``record.arguments: preview``: a human approves a preview, and only a preview can be executed."""
    spec = intent.record
    arguments: Literal["preview", "full"] = (
        spec.arguments if spec is not None and spec.arguments is not None
        else ("preview" if approval == "required" else "full"))
    has_preview = intent.preview is not False
    if not has_preview:
        reason = ("its approval is bound to a preview_id" if approval == "required"
                  else "`record.arguments: preview` executes the stored preview" if arguments == "preview" else None)
        if reason is not None:
            ctx.sink.error(
                "preview-required", f"intent `{key}` sets `preview: false`, but {reason}",
                ctx.intents.locate(*where, "preview") if explicit else None,
                "drop `preview: false`, or set `approval: never` and `record.arguments: full`")
            has_preview = True
    ttl = None
    if arguments == "preview":
        ttl = (spec.preview_ttl_s if spec is not None and spec.preview_ttl_s is not None
               else ctx.intents.model.defaults.preview_ttl_s)
    elif spec is not None and spec.preview_ttl_s is not None:
        ctx.sink.warning(
            "preview-ttl-unused", f"intent `{key}` sets `record.preview_ttl_s`, but its record tool takes the full "
            "arguments and executes no stored preview", ctx.intents.locate(*where, "record", "preview_ttl_s")
            if explicit else None, "drop `preview_ttl_s`, or set `record.arguments: preview`")
    return arguments, ttl, has_preview


def _permission(ctx: Ctx, intent: ToolIntent, group: IncludeSpec | None, op_scopes: tuple[str, ...],
                effect: Effect) -> tuple[str, ...]:
    value = intent.permission if intent.permission is not None else (group.permission if group else None)
    if value is None:
        if op_scopes:
            return op_scopes
        return (f"{ctx.api}:{'write' if effect == 'destructive' else effect}",) if group else ()
    return (value,) if isinstance(value, str) else tuple(value)


def _retry(spec: RetrySpec | None, default: RetrySpec, timeout_ms: int, *, safe: bool) -> Retry:
    def pick(name: str, fallback: Any) -> Any:
        for source in (spec, default):
            if source is not None and getattr(source, name) is not None:
                return getattr(source, name)
        return fallback

    attempts = pick("max_attempts", 3) if safe else 1
    return Retry(
        max_attempts=int(attempts),
        backoff_ms=int(pick("backoff_ms", 200)),
        deadline_ms=int(pick("deadline_ms", max(timeout_ms * 3, 10_000))),
        on=tuple(pick("on", DEFAULT_RETRY_ON)),
    )


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
        members = [a.name for a in args if a.binding is not None and a.binding.location == "body"
                   and a.binding.wire_name and not a.required]
        out["dependentRequired"] = {m: [t for t in together if t != m] for m in members
                                    if [t for t in together if t != m]}
    if defs:
        out["$defs"] = {k: defs[k] for k in sorted(defs)}
    return out
