"""One operation, lowered once: its parameters, request body, security and outputs -> `Lowered`.

Input: an `Operation` and the intent that maps it, resolved (`resolve.ResolvedIntent`: its include
group, if any, and where it sits in the intent map). Output: `Lowered`: the tool arguments (parameters, then body properties, then
the paging arguments; every name distinct; members nested in an argument without their long
descriptions, `text.trim_member_descriptions`), the body encoding, the output schema, the pagination,
the fixed values, the credentials the runtime injects, the success statuses and the operation's
OAuth scopes. The preview and record tools of a write share it. Raises `Skip` (and `DiagnosticError`
for a broken ``$ref``) when the operation cannot become a tool as the intent says.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...diagnostics import SourceLocation
from ...naming import arg_name
from ..ir import ArgBinding, FixedValue
from ..operations import Operation
from .body import body_arguments
from .context import Arg, Ctx, Lowered, Skip
from .idempotency_key import key_places
from .narrow import narrow_args
from .outputs import strip_descriptions, success_response, tool_output_schema
from .paging import lower_pagination, paging_args, paging_params, paging_spec
from .parameters import key_parameter_schema, merged_parameters, parameter_args
from .resolve import ResolvedIntent
from .security import operation_auth
from .text import trim_member_descriptions


def lower_operation(ctx: Ctx, op: Operation, intent: ResolvedIntent) -> Lowered:
    """Lower `op` for `intent` (see the module docstring); `intent.where` locates the intent's keys
    when it is explicit (an include group's operation is located at the operation in the spec)."""
    doc = ctx.doc
    model = ctx.intents.model
    defaults = model.defaults
    auth, op_scopes, key_params = operation_auth(ctx, op)
    params = merged_parameters(ctx, op)
    if len(params) > model.budgets.max_parameters:
        raise Skip(
            "operation-too-many-parameters",
            f"{len(params)} parameters exceed budgets.max_parameters ({model.budgets.max_parameters})",
            doc.locate(op.pointer),
            "raise budgets.max_parameters or leave this operation out",
        )

    def iloc(*more: str | int) -> SourceLocation | None:
        return ctx.intents.locate(*intent.where, *more) if intent.explicit else doc.locate(op.pointer)

    # read-only: `tool_output_schema` builds a new tree (projection / depth limit) from it and checks
    # the node budget on that tree, the output as the model sees it
    response = success_response(ctx, op, copy=False, check_nodes=False)
    response_schema, success, link_header = response.schema, response.statuses, response.link
    pag_spec = paging_spec(ctx, op, intent, params, response_schema, link_header)
    plan = parameter_args(
        ctx,
        op,
        intent,
        params,
        auth=auth,
        key_params=key_params,
        paging=paging_params(op, pag_spec, params, iloc),
        iloc=iloc,
    )
    args, hidden = plan.args, plan.hidden
    key_member = intent.body_key_member()
    body = body_arguments(ctx, op, intent, defaults.argument_description_max_chars, hidden, key_member)
    encoding, content_type = body.encoding, body.content_type
    if key_member is not None:
        _check_body_key(op, key_member, body.encoding, body.args, iloc)
        hidden.discard(key_member)  # `hide` of the key's member (the earlier workaround) is moot
    for arg in body.args:
        assert arg.binding is not None
        if arg.binding.wire_name in hidden and arg.binding.wire_name:
            if arg.required:
                raise Skip(
                    "hide-required",
                    f"`hide` names {arg.binding.wire_name!r}, a required body property of {op.key}",
                    iloc("hide"),
                    "only optional properties can be hidden",
                )
            hidden.discard(arg.binding.wire_name)
            continue
        args.append(arg)
    args = _without_other_key_places(ctx, op, intent, args, iloc)
    args, method_fixed = _without_method_parameter(op, args)
    if hidden:
        first = min(hidden)
        raise Skip(
            "hide-unknown",
            f"`hide` names {first!r}, which is not a parameter or body property of {op.key}",
            iloc("hide"),
            "use the wire name as written in the spec",
        )

    reserved = set()
    pagination = None
    if pag_spec is not None:
        pagination = lower_pagination(ctx, op, pag_spec, intent.page_sizes, response_schema, params, iloc)
        reserved = {pagination.cursor_arg, pagination.page_size_arg}
    if intent.idempotency is not None:
        reserved.add(intent.idempotency.arg)
    args = _dedupe_names(args, reserved)
    for name, means in intent.null.items():
        hit = next((a for a in args if a.name == name), None)
        if hit is None or hit.binding is None:
            raise Skip(
                "null-unknown-argument",
                f"`null` names {name!r}, which is not an argument of {op.key}",
                iloc("null", name),
                "available: " + ", ".join(a.name for a in args),
            )
        hit.binding = _replace_binding(hit.binding, null_means=means)
    for arg in args:
        arg.schema = trim_member_descriptions(
            arg.schema, defaults.argument_description_max_chars, 1 if defaults.member_descriptions else 0
        )
    constants = frozenset(
        arg_name(f.wire_name) for f in (*plan.fixed, *body.fixed) if f.source and f.wire_name
    )
    args, narrowed = narrow_args(op, intent, args, iloc, constants)
    if pagination is not None:
        args.extend(paging_args(pagination))
    output_schema, shape = tool_output_schema(ctx, op, intent.output, pagination, response, iloc)
    if not defaults.output_descriptions:
        output_schema = strip_descriptions(output_schema)
    return Lowered(
        args,
        encoding,
        content_type,
        output_schema,
        pagination,
        tuple(plan.fixed) + body.fixed + method_fixed,
        plan.auth,
        success,
        op_scopes,
        narrowed,
        shape,
        response.body,
        response.accept,
        key_parameter_schema(ctx, intent, params) or body.key_schema,
        response.redirect,
    )


def _check_body_key(op: Operation, member: str, encoding: str, body_args: list[Arg], iloc: Any) -> None:
    """``send_as: body:NAME`` needs a body of named members (JSON, form or multipart): the runtime
    adds the key as one more member. Raises `Skip` ``idempotency-body-unplaceable`` for a body that
    is one argument (free-form, composed, text or binary) or for an operation without a body: the
    key would replace the body, or the model could set the member itself."""
    whole = any(
        a.binding is not None and a.binding.location == "body" and not a.binding.wire_name for a in body_args
    )
    if encoding in ("json", "form", "multipart") and not whole:
        return
    why = (
        "has no request body"
        if encoding == "none"
        else f"has a {encoding} request body"
        if encoding not in ("json", "form", "multipart")
        else "has a request body the tool takes whole (free-form or composed), not as named members"
    )
    raise Skip(
        "idempotency-body-unplaceable",
        f"`send_as: body:{member}`, but {op.key} {why}; the runtime cannot add the key as a member",
        iloc("idempotency", "send_as"),
        "send the key where the API reads it (`header:NAME` or `query:NAME`), or `send_as: none`",
    )


def _without_other_key_places(
    ctx: Ctx, op: Operation, intent: ResolvedIntent, args: list[Arg], iloc: Any
) -> list[Arg]:
    """`args` less the parameters and body members that take an idempotency key
    (`key_places`) other than the one the record fills (``send_as``): an operation that declares a
    key header and a key member too would otherwise let the model set the second key, pinning one
    value on two different approved writes (the API returns the first write's answer for the
    second) or a fresh value on a re-sent one. An optional place is left out of the request; a
    required one raises `Skip` ``idempotency-key-unsent`` (the map sends the key in the other)."""
    idem = intent.idempotency
    if idem is None or idem.send_in == "none" or idem.wire_name is None:
        return args
    where, name = idem.send_in, idem.wire_name
    stated = f"{where}:{name}"
    others = [
        p
        for p in key_places(ctx.doc, ctx.converter, op)
        if not (
            p.location == where and (p.name.lower() == name.lower() if where != "body" else p.name == name)
        )
    ]
    if not others:
        return args

    def other(arg: Arg) -> bool:
        b = arg.binding
        return b is not None and any(
            b.location == p.location
            and (b.wire_name.lower() == p.name.lower() if p.location == "header" else b.wire_name == p.name)
            for p in others
        )

    required = next((a for a in args if other(a) and a.required), None)
    if required is not None and required.binding is not None:
        raise Skip(
            "idempotency-key-unsent",
            f"`send_as: {stated}`, but {op.key} also requires the {required.binding.location} "
            f"`{required.binding.wire_name}`, which takes an idempotency key: the model would set that key",
            iloc("idempotency", "send_as"),
            f'send the key there (`send_as: "{required.binding.location}:{required.binding.wire_name}"`)',
        )
    return [a for a in args if not other(a)]


#: a query parameter or body member that names the method to run (Laravel, Symfony and Rack run it
#: on a POST; Laravel reads a JSON body's too), as `toolgen.runtime.call.parameter_styles.param_key`
#: reads names
METHOD_PARAMETER = "_method"


def _without_method_parameter(op: Operation, args: list[Arg]) -> tuple[list[Arg], tuple[FixedValue, ...]]:
    """`args` less a declared ``_method`` query parameter or body member, never the model's (it
    would run an approved POST as a DELETE), and what the runtime sends for it: nothing for an
    optional one, the operation's own method for a required one (as a method-override header)."""

    def override(arg: Arg) -> bool:
        b = arg.binding
        return b is not None and b.location in ("query", "body") and b.wire_name.lower() == METHOD_PARAMETER

    fixed = tuple(
        FixedValue(a.binding.location, a.binding.wire_name, op.method.upper())
        for a in args
        if override(a) and a.required and a.binding is not None
    )
    return [a for a in args if not override(a)], fixed


def _dedupe_names(args: list[Arg], reserved: set[str]) -> list[Arg]:
    """Give every argument a distinct name; on a clash the later location gets `<in>_<name>` and both
    descriptions say where they go (binding keeps the wire name)."""
    taken: dict[str, Arg] = {}
    clashed: set[int] = set()
    for arg in args:
        assert arg.binding is not None
        base = arg.name
        name = base
        if name in taken or name in reserved:
            if name in taken:
                clashed.add(id(taken[name]))
            clashed.add(id(arg))
            name = arg_name(f"{arg.binding.location}_{base}")
            n = 2
            while name in taken or name in reserved:
                name = arg_name(f"{arg.binding.location}_{base}_{n}")
                n += 1
        arg.name = name
        taken[name] = arg
    for arg in args:
        assert arg.binding is not None
        arg.binding = _replace_binding(arg.binding, arg=arg.name)
        if id(arg) in clashed:
            where = {
                "path": "the URL path",
                "query": "the query string",
                "header": "a request header",
                "cookie": "a cookie",
                "body": "the request body",
            }[arg.binding.location]
            note = f"Sent in {where} as `{arg.binding.wire_name}`."
            text = arg.schema.get("description")
            arg.schema["description"] = f"{text} {note}" if isinstance(text, str) and text else note
    return args


def _replace_binding(b: ArgBinding, **changes: Any) -> ArgBinding:
    return replace(b, **changes)
