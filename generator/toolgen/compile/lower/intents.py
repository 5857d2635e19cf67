"""Stage 3, `lower`: spec operations + intents -> the frozen IR (`ApiIR` of `Tool`s).

Input: a `SpecDocument` and a `LoadedIntentMap`. Output: `ApiIR`. Diagnostics go to the sink;
errors in explicit intents make the build fail (the caller raises), while an operation that an
`include` group cannot lower is skipped with a warning that says why (never silently dropped).

Per operation this builds one canonical input schema (path, query, header and cookie parameters
plus the request body's properties, collision-safe), the binding table (argument -> location + wire
name), the output schema (projected, paginated, wrapped to an object root) and the policy row.
Write and destructive intents become `preview_<name>` (mode preview, effect read) and
`record_<name>` (mode record).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...diagnostics import DiagnosticError, DiagnosticSink, SourceLocation
from ...naming import (
    MAX_TOOL_NAME,
    arg_name,
    shorten,
    snake_case,
    stable_suffix,
    tool_name_problem,
)
from ...pointer import join_pointer
from .. import pagination as pagination_detect
from ..intent import IncludeSpec, LoadedIntentMap, PaginationSpec, RetrySpec, ToolIntent
from ..ir import (
    ApiIR,
    ArgBinding,
    AuthBinding,
    BodyEncoding,
    Effect,
    FixedValue,
    Idempotency,
    Mode,
    OperationRef,
    OutputPolicy,
    Pagination,
    PolicyRow,
    Retry,
    SkippedOperation,
    Tool,
)
from ..load import SpecDocument
from ..operations import (
    Operation,
    find_operation,
    idempotency_header,
    list_operations,
    operation_matches,
    suggest_operations,
)
from ..schema import (
    SchemaBudget,
    SchemaConverter,
    limit_depth,
    object_view,
    project_schema,
)
from ..schema import (
    copy_tree as _copy_tree,
)

READ_VERBS = ("get", "list", "search", "find", "query", "lookup", "fetch", "read", "check", "count",
              "describe", "download", "export", "retrieve", "show", "head", "options")
MANAGED_HEADERS = {"authorization", "content-type", "accept", "content-length", "user-agent", "host"}
CREDENTIAL_NAME = re.compile(r"(^|[-_.])(api[-_]?key|apikey|access[-_]?token|token|secret|auth)$", re.IGNORECASE)
LOCATION_ORDER: dict[str, int] = {"path": 0, "query": 1, "header": 2, "cookie": 3, "body": 4}
DEFAULT_RETRY_ON = ("timeout", "429", "502", "503", "504")


@dataclass
class _Arg:
    name: str
    schema: dict[str, Any]
    binding: ArgBinding | None
    required: bool


@dataclass
class _Lowered:
    """An operation lowered once, shared by the preview and record tools of one intent."""

    args: list[_Arg]
    encoding: BodyEncoding
    content_type: str | None
    output_schema: dict[str, Any]
    pagination: Pagination | None
    fixed: tuple[FixedValue, ...]
    auth: tuple[AuthBinding, ...]
    success: tuple[int, ...]
    op_scopes: tuple[str, ...]


@dataclass
class _Ctx:
    doc: SpecDocument
    intents: LoadedIntentMap
    sink: DiagnosticSink
    api: str
    converter: SchemaConverter
    names: dict[str, str] = field(default_factory=dict)  # tool name -> operation pointer


class _Skip(Exception):
    """An operation cannot be lowered; carries (code, message, location, hint)."""

    def __init__(self, code: str, message: str, location: SourceLocation | None, hint: str | None = None):
        super().__init__(message)
        self.code, self.message, self.location, self.hint = code, message, location, hint


def lower(doc: SpecDocument, intents: LoadedIntentMap, sink: DiagnosticSink, api_name: str,
          progress: Callable[[int, int], None] | None = None) -> ApiIR:
    """Lower every intent (explicit tools first, then include groups) to tools.

    Raises nothing for bad intents: errors are added to `sink` (the caller decides to stop).
    `progress(done, total)`, if given, is called as each explicit intent and each operation an include
    group looks at is taken up (total = explicit intents + operations x include groups); it only
    reports, the result does not depend on it.
    """
    model = intents.model
    budget = SchemaBudget(max_nodes=model.budgets.max_schema_nodes, max_depth=model.budgets.max_schema_depth)
    ctx = _Ctx(doc, intents, sink, api_name, SchemaConverter(doc, sink, budget))
    operations = list_operations(doc)
    tools: list[Tool] = []
    covered: dict[str, str] = {}
    skipped: list[SkippedOperation] = []

    _check_intent_map(ctx, operations)
    total, done = len(model.tools) + len(operations) * len(model.include), 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    for key, intent in model.tools.items():
        step()
        loc = intents.locate("tools", key, "operation")
        op = find_operation(operations, intent.operation)
        if op is None:
            close = suggest_operations(operations, intent.operation)
            sink.error("operation-not-found", f"operation {intent.operation!r} (intent `{key}`) is not in "
                       f"{doc.display}", loc,
                       f"did you mean {', '.join(repr(c) for c in close)}?" if close else
                       "use an operationId or `METHOD /path` exactly as written in the spec")
            continue
        problem = _explicit_name_problem(key, intent.effect)
        if problem:
            sink.error("tool-name-invalid", f"intent `{key}` for operation {op.synthetic_id!r}: {problem}",
                       intents.locate("tools", key), "choose a shorter name of letters, digits, '_' and '-' "
                       "(write intents get a 'preview_'/'record_' prefix, which counts toward 64)")
            continue
        try:
            new = _lower_intent(ctx, op, key, intent, ("tools", key), explicit=True)
        except _Skip as skip:
            sink.error(skip.code, skip.message, skip.location, skip.hint)
            continue
        except DiagnosticError as exc:
            sink.extend(exc.diagnostics)
            continue
        tools.extend(new)
        covered.setdefault(op.pointer, key)

    for index, group in enumerate(model.include):
        for op in operations:
            step()
            if op.pointer in covered:
                continue
            if not operation_matches(op, group.match) or any(operation_matches(op, p) for p in group.exclude):
                continue
            try:
                intent, name = _infer_intent(ctx, op, group)
                new = _lower_intent(ctx, op, name, intent, ("include", index), explicit=False, group=group)
            except _Skip as skip:
                sink.warning(skip.code, f"skipped {op.key}: {skip.message}", skip.location or doc.locate(op.pointer),
                             skip.hint)
                skipped.append(SkippedOperation(_op_ref(op), skip.message, skip.code))
                covered[op.pointer] = ""
                continue
            except DiagnosticError as exc:
                first = exc.diagnostics[0]
                for d in exc.diagnostics:
                    sink.warning(d.code, f"skipped {op.key}: {d.message}", d.location, d.hint)
                skipped.append(SkippedOperation(_op_ref(op), first.message, first.code))
                covered[op.pointer] = ""
                continue
            tools.extend(new)
            covered[op.pointer] = name

    raw_info = doc.data.get("info")
    info: dict[str, Any] = raw_info if isinstance(raw_info, dict) else {}
    base_url = model.api.base_url or _server_url(doc)
    ops = tuple(_op_ref(op) for op in operations)
    return ApiIR(
        name=api_name,
        title=model.api.title or str(info.get("title") or api_name),
        version=str(info.get("version") or ""),
        base_url=base_url,
        spec_display=doc.display,
        intent_display=intents.display,
        tools=tuple(sorted(tools, key=lambda t: t.name)),
        operations=ops,
        covered=tuple(p for p, name in covered.items() if name),
        skipped=tuple(skipped),
    )


def _check_intent_map(ctx: _Ctx, operations: list[Operation]) -> None:
    """Checks of the intent map as a whole against the spec (located errors and warnings)."""
    import difflib

    model, sink, intents = ctx.intents.model, ctx.sink, ctx.intents
    schemes = (ctx.doc.data.get("components") or {}).get("securitySchemes") or {}
    for name, spec in model.auth.items():
        if spec.kind is None and name not in schemes:
            close = difflib.get_close_matches(name, [str(k) for k in schemes], n=1)
            sink.error("auth-scheme-unknown", f"auth names security scheme {name!r}, which the spec does not declare",
                       intents.locate("auth", name),
                       f"did you mean `{close[0]}`?" if close else
                       "use a key of components.securitySchemes, or declare the credential with `kind:`")
    for key, intent in model.tools.items():
        scopes = [intent.permission] if isinstance(intent.permission, str) else list(intent.permission or [])
        for scope in scopes:
            if not scope.strip() or any(c.isspace() for c in scope):
                sink.error("permission-invalid", f"intent `{key}`: permission {scope!r} is not one scope",
                           intents.locate("tools", key, "permission"),
                           "write one scope, or a list of scopes: permission: [a:read, b:read]")
    for index, group in enumerate(model.include):
        if not any(operation_matches(op, group.match) for op in operations):
            sink.warning("include-matches-nothing", f"include pattern {group.match!r} matches no operation of the spec",
                         intents.locate("include", index, "match"),
                         "patterns match an operationId, `METHOD /path` or `tag:NAME` (globs allowed)")


def _op_ref(op: Operation) -> OperationRef:
    return OperationRef(op.method, op.path, op.operation_id, op.pointer)


def _server_url(doc: SpecDocument) -> str:
    servers = doc.data.get("servers")
    if isinstance(servers, list) and servers and isinstance(servers[0], dict):
        url = str(servers[0].get("url") or "")
        variables = servers[0].get("variables") or {}
        if isinstance(variables, dict):
            for name, var in variables.items():
                if isinstance(var, dict) and "default" in var:
                    url = url.replace("{" + str(name) + "}", str(var["default"]))
        return url.rstrip("/")
    return ""


def _explicit_name_problem(key: str, effect: Effect) -> str | None:
    if effect == "read":
        return tool_name_problem(key)
    return tool_name_problem("preview_" + key)


# ---------------------------------------------------------------------------------------------
# include groups: an intent inferred from the operation


def _infer_intent(ctx: _Ctx, op: Operation, group: IncludeSpec) -> tuple[ToolIntent, str]:
    if op.method == "TRACE":
        raise _Skip("operation-method-unsupported", "TRACE operations are not turned into tools",
                    ctx.doc.locate(op.pointer))
    effect: Effect
    if group.effect != "inferred":
        effect = group.effect
    elif op.method in ("GET", "HEAD", "OPTIONS"):
        effect = "read"
    elif op.method == "DELETE":
        effect = "destructive"
    else:
        effect = "write"
    defaults = ctx.intents.model.defaults
    approval = group.approval or (
        None if effect == "read" else defaults.approval_destructive if effect == "destructive"
        else defaults.approval_write)
    idempotency = None
    if effect != "read":
        header = _idempotency_header(ctx, op)
        from ..intent import IdempotencySpec

        if header is not None:
            idempotency = IdempotencySpec(key="idempotency_key", send_as=f"header:{header}")
        else:
            idempotency = IdempotencySpec(key="action_id", send_as="none")
    name = _include_name(ctx, op, group, effect)
    intent = ToolIntent(operation=op.key, effect=effect, permission=group.permission, approval=approval,
                        idempotency=idempotency)
    return intent, name


def _idempotency_header(ctx: _Ctx, op: Operation) -> str | None:
    return idempotency_header(param for param, _ in _parameters(ctx, op))


def _include_name(ctx: _Ctx, op: Operation, group: IncludeSpec, effect: Effect) -> str:
    base = group.prefix + snake_case(op.synthetic_id)
    if not base:
        base = "op"
    if effect == "read" and not base.startswith(READ_VERBS) and not group.prefix:
        base = "get_" + base
    limit = MAX_TOOL_NAME - (len("preview_") if effect != "read" else 0)
    short = shorten(base, limit, seed=op.pointer)
    taken = set(ctx.names)
    def full(b: str) -> list[str]:
        return [b] if effect == "read" else ["preview_" + b, "record_" + b]

    if any(n in taken for n in full(short)):
        short = shorten(f"{base}_{stable_suffix(op.pointer, 6)}", limit, seed=op.pointer + "#dup")
        ctx.sink.warning("name-collision", f"{op.key}: tool name {base!r} is taken; using {short!r}",
                         ctx.doc.locate(op.pointer), "give the operation a distinct operationId or an explicit intent")
    if short != base:
        ctx.sink.warning("name-shortened",
                         f"operationId {op.synthetic_id!r} gives tool name {base!r} ({len(base)} chars); "
                         f"shortened to {', '.join(full(short))}",
                         ctx.doc.locate(op.pointer), "add an explicit intent to choose a name")
    return short


# ---------------------------------------------------------------------------------------------
# one intent


def _lower_intent(ctx: _Ctx, op: Operation, key: str, intent: ToolIntent, where: tuple[str | int, ...],
                  *, explicit: bool, group: IncludeSpec | None = None) -> list[Tool]:
    model = ctx.intents.model
    defaults = model.defaults
    lowered = _lower_operation(ctx, op, key, intent, where, explicit=explicit, group=group)
    effect = intent.effect
    if effect == "read" and intent.approval == "required":
        ctx.sink.warning("approval-on-read", f"intent `{key}` is a read; approval applies to record tools only",
                         ctx.intents.locate(*where, "approval") if explicit else None)
    permission = _permission(ctx, intent, group, lowered.op_scopes, effect)
    output = OutputPolicy(
        fields=tuple(intent.output.fields) if intent.output else (),
        max_bytes=(intent.output.max_bytes if intent.output and intent.output.max_bytes else defaults.output_max_bytes),
        redact=tuple(intent.output.redact) if intent.output else (),
        schema_mode=(intent.output.schema_mode if intent.output and intent.output.schema_mode
                     else defaults.output_schema_mode),
    )
    timeout = intent.timeout_ms or defaults.timeout_ms
    summary = _summary(ctx, op, intent, defaults.description_max_chars)
    title = intent.title or _title(op)
    bindings = tuple(a.binding for a in lowered.args if a.binding is not None)
    base_schema = _input_schema(lowered.args)

    if effect == "read":
        retry = _retry(intent.retry, defaults.retry, timeout, safe=True)
        row = PolicyRow(
            tool=key, mode="read", effect="read", operation_id=op.synthetic_id, method=op.method,
            path=op.url_path, permission=permission, approval="never", idempotency=None, retry=retry,
            timeout_ms=timeout, pagination=lowered.pagination, output=output, auth=lowered.auth,
            body_encoding=lowered.encoding, body_content_type=lowered.content_type, bindings=bindings,
            fixed=lowered.fixed, pair=None, intent=key, success_status=lowered.success)
        desc = _describe(summary, "read", row, None)
        ctx.names[key] = op.pointer
        return [Tool(key, desc, base_schema, lowered.output_schema, row, title, op.pointer)]

    approval = intent.approval or (defaults.approval_destructive if effect == "destructive"
                                   else defaults.approval_write)
    if intent.approval is None and explicit:
        ctx.sink.info("approval-defaulted", f"intent `{key}` ({effect}) has no `approval`; using {approval!r}",
                      ctx.intents.locate(*where), "state `approval: required` or `approval: never` explicitly")
    idem = None
    record_args = list(lowered.args)
    if intent.idempotency is not None:
        send = intent.idempotency.send_as
        if send == "none":
            idem = Idempotency(intent.idempotency.key, "none", None)
            binding = None
        else:
            where_, wire = send.split(":", 1)
            idem = Idempotency(intent.idempotency.key, where_, wire)  # type: ignore[arg-type]
            binding = ArgBinding(intent.idempotency.key, where_, wire, True)  # type: ignore[arg-type]
        if any(a.name == intent.idempotency.key for a in record_args):
            raise _Skip("idempotency-key-collision",
                        f"idempotency key argument {intent.idempotency.key!r} clashes with an argument of {op.key}",
                        ctx.intents.locate(*where, "idempotency", "key") if explicit else ctx.doc.locate(op.pointer),
                        "choose another key name")
        record_args.append(_Arg(intent.idempotency.key, {
            "type": "string", "minLength": 1, "maxLength": 255,
            "description": "Unique id of this action (e.g. a UUID); reuse it only to retry the same call.",
        }, binding, True))
    sent_key = idem is not None and idem.send_in != "none"
    retry = _retry(intent.retry, defaults.retry, timeout, safe=sent_key)
    if intent.retry and intent.retry.max_attempts and intent.retry.max_attempts > 1 and not sent_key:
        ctx.sink.warning("retry-unsafe-write", f"intent `{key}` retries a {effect} whose idempotency key is not "
                         "sent to the API; retries are disabled", ctx.intents.locate(*where, "retry"),
                         "send the key to the API (idempotency.send_as) to allow retries")
    preview_name, record_name = "preview_" + key, "record_" + key
    preview_row = PolicyRow(
        tool=preview_name, mode="preview", effect="read", operation_id=op.synthetic_id, method=op.method,
        path=op.url_path, permission=permission, approval="never", idempotency=None,
        retry=_retry(None, defaults.retry, timeout, safe=True), timeout_ms=timeout, pagination=None,
        output=OutputPolicy(max_bytes=output.max_bytes, schema_mode=output.schema_mode), auth=lowered.auth,
        body_encoding=lowered.encoding, body_content_type=lowered.content_type, bindings=bindings,
        fixed=lowered.fixed, pair=record_name, intent=key, success_status=lowered.success)
    record_row = PolicyRow(
        tool=record_name, mode="record", effect=effect, operation_id=op.synthetic_id, method=op.method,
        path=op.url_path, permission=permission, approval=approval, idempotency=idem, retry=retry,
        timeout_ms=timeout, pagination=None, output=output, auth=lowered.auth, body_encoding=lowered.encoding,
        body_content_type=lowered.content_type,
        bindings=tuple(a.binding for a in record_args if a.binding is not None), fixed=lowered.fixed,
        pair=preview_name, intent=key, success_status=lowered.success)
    preview_desc = _describe(summary, "preview", preview_row, record_row)
    record_desc = _describe(summary, "record", record_row, record_row)
    ctx.names[preview_name] = op.pointer
    ctx.names[record_name] = op.pointer
    return [
        Tool(preview_name, preview_desc, base_schema, _preview_output_schema(), preview_row,
             f"Preview: {title}" if title else None, op.pointer),
        Tool(record_name, record_desc, _input_schema(record_args), lowered.output_schema, record_row, title,
             op.pointer),
    ]


def _permission(ctx: _Ctx, intent: ToolIntent, group: IncludeSpec | None, op_scopes: tuple[str, ...],
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


def _title(op: Operation) -> str | None:
    summary = op.node.get("summary")
    if isinstance(summary, str) and summary.strip():
        text = " ".join(summary.split())
        return text if len(text) <= 80 else text[:79].rstrip() + "…"
    return None


def _summary(ctx: _Ctx, op: Operation, intent: ToolIntent, limit: int) -> str:
    if intent.description:
        return " ".join(intent.description.split())
    parts = []
    summary = op.node.get("summary")
    if isinstance(summary, str) and summary.strip():
        parts.append(" ".join(summary.split()).rstrip(".") + ".")
    description = op.node.get("description")
    if isinstance(description, str) and description.strip():
        first = description.strip().split("\n\n", 1)[0]
        first = " ".join(first.split())
        if first and first.rstrip(".") + "." not in parts:
            parts.append(first)
    text = " ".join(parts) or f"Calls {op.method} {op.url_path}."
    if len(text) > limit:
        text = text[: limit - 1].rstrip() + "…"
    return text


def _describe(summary: str, mode: Mode, row: PolicyRow, record: PolicyRow | None) -> str:
    """The tool description: the intent's text, then what the call does (effect, approval, pages)."""
    if mode == "read":
        tail = "Read-only."
        if row.pagination is not None:
            tail += f" Pages: pass next_cursor back as {row.pagination.cursor_arg}."
        return f"{summary} {tail}"
    assert record is not None
    verb = "Deletes" if record.effect == "destructive" else "Writes"
    if mode == "preview":
        gate = ("A human must approve the returned preview_id before " + record.tool + " runs."
                if record.approval == "required" else f"Then call {record.tool} with the same arguments.")
        return (f"PREVIEW ONLY, never writes: returns the exact request {record.tool} would send and a "
                f"preview_id. {gate} {record.tool}: {_first_sentence(summary)}")
    gate = (f"Needs human approval of the preview_id from {row.pair} (same arguments)."
            if row.approval == "required" else "No approval needed.")
    return f"{summary} {verb} ({row.method}). {gate}"


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


def _input_schema(args: list[_Arg]) -> dict[str, Any]:
    """The tool's input object; `$defs` of argument schemas are hoisted to the root, where their
    `#/$defs/...` references point."""
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
    if defs:
        out["$defs"] = {k: defs[k] for k in sorted(defs)}
    return out


# ---------------------------------------------------------------------------------------------
# the operation: parameters, body, output


def _parameters(ctx: _Ctx, op: Operation) -> list[tuple[dict[str, Any], str]]:
    """Path-item parameters overridden by operation parameters (same name + in), refs resolved."""
    merged: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}
    for owner, owner_ptr in ((op.path_item, op.path_item_pointer), (op.node, op.pointer)):
        params = owner.get("parameters")
        if not isinstance(params, list):
            continue
        for i, raw in enumerate(params):
            ptr = join_pointer(owner_ptr, "parameters", i)
            node, target_ptr = ctx.converter.resolve(raw, ptr)
            if not isinstance(node, dict) or "name" not in node or "in" not in node:
                raise _Skip("parameter-invalid", f"parameter at #{ptr} has no `name`/`in`", ctx.doc.locate(ptr),
                            "fix the parameter object")
            merged[(str(node["name"]), str(node["in"]))] = (node, target_ptr)
    return list(merged.values())


def _security(ctx: _Ctx, op: Operation) -> tuple[tuple[AuthBinding, ...], tuple[str, ...], set[tuple[str, str]]]:
    """(auth bindings, OAuth scopes of the chosen requirement, (in, name) pairs of apiKey params)."""
    requirements = op.node.get("security", ctx.doc.data.get("security"))
    schemes = ((ctx.doc.data.get("components") or {}).get("securitySchemes") or {})
    if not isinstance(requirements, list) or not isinstance(schemes, dict):
        return (), (), set()
    auth_cfg = ctx.intents.model.auth
    configured = [r for r in requirements if isinstance(r, dict) and r and all(k in auth_cfg for k in r)]
    if configured:
        requirements = configured + [r for r in requirements if r not in configured]
    for requirement in requirements:
        if not isinstance(requirement, dict):
            continue
        if not requirement:
            return (), (), set()  # `{}` = anonymous access allowed
        bindings: list[AuthBinding] = []
        scopes: list[str] = []
        keys: set[tuple[str, str]] = set()
        ok = True
        for name, req_scopes in requirement.items():
            scheme = schemes.get(name)
            if isinstance(scheme, dict) and isinstance(scheme.get("$ref"), str):
                scheme, _ = ctx.converter.resolve(scheme, "/components/securitySchemes/" + name)
            if not isinstance(scheme, dict):
                ok = False
                break
            secret = auth_cfg[name].secret if name in auth_cfg else _secret_name(ctx.api, name, len(schemes))
            kind = str(scheme.get("type", ""))
            sc = tuple(str(s) for s in (req_scopes or []))
            if kind == "http":
                http = str(scheme.get("scheme", "bearer")).lower()
                bindings.append(AuthBinding(name, "basic" if http == "basic" else "bearer", "header",
                                            "Authorization", secret, sc))
            elif kind == "apiKey":
                where = str(scheme.get("in", "header"))
                wire = str(scheme.get("name", "Authorization"))
                bindings.append(AuthBinding(name, "apiKey", where if where in ("header", "query", "cookie")
                                            else "header", wire, secret, sc))  # type: ignore[arg-type]
                keys.add((where, wire.lower()))
            elif kind in ("oauth2", "openIdConnect"):
                bindings.append(AuthBinding(name, kind, "header", "Authorization", secret, sc))
            else:
                ok = False
                break
            scopes.extend(sc)
        if ok:
            return tuple(bindings), tuple(dict.fromkeys(scopes)), keys
    return (), (), set()


def _declares_anonymous(ctx: _Ctx, op: Operation) -> bool:
    """`security: []` (or a `{}` alternative) on the operation: callable without credentials."""
    sec = op.node.get("security")
    return isinstance(sec, list) and (not sec or any(isinstance(r, dict) and not r for r in sec))


def _declared_auth(ctx: _Ctx) -> tuple[AuthBinding, ...]:
    """Credentials the intent map declares for a spec without security schemes (`auth.X.kind`)."""
    out = []
    for name, spec in ctx.intents.model.auth.items():
        if spec.kind is None:
            continue
        if spec.kind == "apiKey":
            out.append(AuthBinding(name, "apiKey", spec.in_, spec.name or "Authorization", spec.secret))
        else:
            out.append(AuthBinding(name, spec.kind, "header", "Authorization", spec.secret))
    return tuple(out)


def _secret_name(api: str, scheme: str, count: int) -> str:
    base = api.upper() + ("_TOKEN" if count <= 1 else "_" + re.sub(r"[^A-Za-z0-9]+", "_", scheme).upper())
    return re.sub(r"_+", "_", base)


def _lower_operation(ctx: _Ctx, op: Operation, key: str, intent: ToolIntent, where: tuple[str | int, ...],
                     *, explicit: bool, group: IncludeSpec | None) -> _Lowered:
    doc, sink = ctx.doc, ctx.sink
    model = ctx.intents.model
    defaults = model.defaults
    desc_limit = defaults.argument_description_max_chars
    auth, op_scopes, key_params = _security(ctx, op)
    if not auth and not _declares_anonymous(ctx, op):
        auth = _declared_auth(ctx)
    params = _parameters(ctx, op)
    if len(params) > model.budgets.max_parameters:
        raise _Skip("operation-too-many-parameters",
                    f"{len(params)} parameters exceed budgets.max_parameters ({model.budgets.max_parameters})",
                    doc.locate(op.pointer), "raise budgets.max_parameters or leave this operation out")

    def iloc(*more: str | int) -> SourceLocation | None:
        return ctx.intents.locate(*where, *more) if explicit else doc.locate(op.pointer)

    hidden = set(intent.hide)
    fixed_specs = dict(intent.fixed)
    fixed: list[FixedValue] = [FixedValue("header", k, v) for k, v in sorted(model.api.headers.items())]
    api_headers = {k.lower() for k in model.api.headers}
    idem_wire: tuple[str, str] | None = None
    if intent.idempotency is not None and intent.idempotency.send_as != "none":
        loc_, wire_ = intent.idempotency.send_as.split(":", 1)
        idem_wire = (loc_, wire_.lower())

    # pagination: explicit, or detected for include groups
    # read-only: `_output_schema` builds a new tree (projection / depth limit) from it
    response_schema, success, response_ptr, link_header = _response(ctx, op, copy=False)
    pag_spec: PaginationSpec | None = intent.pagination
    if pag_spec is None and group is not None and group.paginate and intent.effect == "read":
        detected = pagination_detect.detect(
            [str(p.get("name")) for p, _ in params if p.get("in") == "query"],
            response_schema, link_header,
            param_types={str(p.get("name")): p["schema"]["type"] for p, _ in params
                         if p.get("in") == "query" and isinstance(p.get("schema"), dict)
                         and isinstance(p["schema"].get("type"), str)})
        if detected is not None:
            pag_spec = PaginationSpec(style=detected.style, items=detected.items,  # type: ignore[arg-type,unused-ignore]
                                      cursor=detected.cursor, limit=detected.limit, next=detected.next,
                                      has_more=detected.has_more, cursor_from_item=detected.cursor_from_item)
            try:  # a guess the response does not bear out: build the tool without paging, not skip it
                _pagination(ctx, op, pag_spec, defaults, response_schema, lambda *_: doc.locate(op.pointer))
            except _Skip as skip:
                sink.info("pagination-not-detected", f"{op.key}: looks paginated, but {skip.message}; the tool "
                          "returns one page as the API sends it", doc.locate(op.pointer),
                          "declare `pagination` in an explicit intent to page it")
                pag_spec = None
    pag_params: set[str] = set()
    if pag_spec is not None:
        for attr in ("cursor", "limit"):
            name = getattr(pag_spec, attr)
            if name is None:
                continue
            if not any(p.get("in") == "query" and p.get("name") == name for p, _ in params):
                raise _Skip("pagination-param-missing",
                            f"pagination.{attr} names query parameter {name!r}, which {op.key} does not have",
                            iloc("pagination", attr),
                            "available query parameters: " + ", ".join(
                                sorted(str(p.get("name")) for p, _ in params if p.get("in") == "query")) or "none")
            pag_params.add(name)
        if pag_spec.style in ("cursor", "offset", "page") and pag_spec.cursor is None:
            raise _Skip("pagination-cursor-missing", f"pagination style {pag_spec.style!r} needs `cursor` "
                        "(the API parameter that takes the cursor/offset/page)", iloc("pagination"))

    args: list[_Arg] = []
    for param, ptr in sorted(params, key=lambda pp: (LOCATION_ORDER.get(str(pp[0].get("in")), 9),
                                                     _path_order(op.path, pp[0]))):
        where_in = str(param.get("in"))
        wire = str(param.get("name"))
        if where_in not in ("path", "query", "header", "cookie"):
            raise _Skip("parameter-invalid", f"parameter {wire!r} has unknown location {where_in!r}",
                        doc.locate(ptr), "use path, query, header or cookie")
        if where_in == "query" and wire in pag_params:
            continue
        if (where_in, wire.lower()) in key_params:
            continue  # an apiKey credential, injected by the runtime
        if wire in hidden:
            if param.get("required") or where_in == "path":
                raise _Skip("hide-required", f"`hide` names {wire!r}, a required parameter of {op.key}",
                            iloc("hide"), "only optional parameters can be hidden; use `fixed` to set a value")
            hidden.discard(wire)
            continue
        if where_in == "header" and wire.lower() in api_headers:
            continue  # sent by the runtime from api.headers
        if where_in == "header" and wire.lower() in MANAGED_HEADERS:
            if wire.lower() == "authorization" and not auth:
                auth = auth + (AuthBinding("header:Authorization", "bearer", "header", "Authorization",
                                           _secret_name(ctx.api, "", 1)),)
            continue
        if idem_wire is not None and (where_in, wire.lower()) == idem_wire:
            continue  # replaced by the idempotency key argument
        fixed_key = next((k for k in (f"{where_in}:{wire}", wire) if k in fixed_specs), None)
        if fixed_key is not None:
            value = fixed_specs.pop(fixed_key)
            problem = _value_problem(_param_schema(ctx, param, ptr), value)
            if problem:
                raise _Skip("fixed-invalid", f"`fixed` value {value!r} for parameter {wire!r} of {op.key} is "
                            f"invalid: {problem}", iloc("fixed", fixed_key), "use a value the parameter's schema allows")
            fixed.append(FixedValue(where_in, wire, value))  # type: ignore[arg-type]
            continue
        if where_in in ("header", "query", "cookie") and CREDENTIAL_NAME.search(wire) and (
                param.get("required") or where_in == "header"):
            secret = re.sub(r"[^A-Za-z0-9]+", "_", f"{ctx.api}_{wire}").upper().strip("_")
            auth = auth + (AuthBinding(f"{where_in}:{wire}", "apiKey", where_in, wire, secret),)  # type: ignore[arg-type]
            sink.info("param-credential", f"{op.key}: {where_in} parameter {wire!r} looks like a credential; "
                      f"the runtime sends it from secret {secret} instead of a tool argument", doc.locate(ptr))
            continue
        schema = _param_schema(ctx, param, ptr)
        text = param.get("description")
        if isinstance(text, str) and text.strip() and "description" not in schema:
            schema["description"] = _cap(text, desc_limit)
        if param.get("deprecated") is True:
            schema["deprecated"] = True
        required = bool(param.get("required")) or where_in == "path"
        style = param.get("style") if isinstance(param.get("style"), str) else None
        explode = param.get("explode") if isinstance(param.get("explode"), bool) else None
        content_type = None
        if isinstance(param.get("content"), dict) and param["content"]:
            content_type = min(param["content"])
        binding = ArgBinding("", where_in, wire, required, "omit", style, explode, content_type)  # type: ignore[arg-type]
        args.append(_Arg(arg_name(wire), schema, binding, required))

    if fixed_specs:
        first = min(fixed_specs)
        raise _Skip("fixed-unknown", f"`fixed` names {first!r}, which is not a parameter of {op.key}",
                    iloc("fixed", first), "use a parameter's wire name, or `in:name`")

    encoding, content_type, body_args = _body(ctx, op, intent, desc_limit)
    for arg in body_args:
        assert arg.binding is not None
        if arg.binding.wire_name in hidden and arg.binding.wire_name:
            if arg.required:
                raise _Skip("hide-required", f"`hide` names {arg.binding.wire_name!r}, a required body property "
                            f"of {op.key}", iloc("hide"), "only optional properties can be hidden")
            hidden.discard(arg.binding.wire_name)
            continue
        args.append(arg)
    if hidden:
        first = min(hidden)
        raise _Skip("hide-unknown", f"`hide` names {first!r}, which is not a parameter or body property of {op.key}",
                    iloc("hide"), "use the wire name as written in the spec")

    reserved = set()
    pagination = None
    if pag_spec is not None:
        pagination = _pagination(ctx, op, pag_spec, defaults, response_schema, iloc)
        reserved = {pagination.cursor_arg, pagination.page_size_arg}
    if intent.idempotency is not None:
        reserved.add(intent.idempotency.key)
    args = _dedupe_names(args, reserved)
    for name, means in intent.null.items():
        hit = next((a for a in args if a.name == name), None)
        if hit is None or hit.binding is None:
            raise _Skip("null-unknown-argument", f"`null` names {name!r}, which is not an argument of {op.key}",
                        iloc("null", name), "available: " + ", ".join(a.name for a in args))
        hit.binding = _replace_binding(hit.binding, null_means=means)
    if pagination is not None:
        args.append(_Arg(pagination.cursor_arg, {
            "type": ["string", "null"],
            "description": "next_cursor of the previous page; omit for the first page.",
        }, None, False))
        args.append(_Arg(pagination.page_size_arg, {
            "type": "integer", "minimum": 1, "maximum": pagination.max_page_size,
            "description": f"Default {pagination.default_page_size}.",
        }, None, False))
    output_schema = _output_schema(ctx, op, intent, pagination, response_schema, response_ptr, iloc)
    if not defaults.output_descriptions:
        output_schema = _strip_descriptions(output_schema)
    return _Lowered(args, encoding, content_type, output_schema, pagination, tuple(fixed), auth, success, op_scopes)


def _value_problem(schema: dict[str, Any], value: Any) -> str | None:
    """Why `value` does not validate against `schema` (JSON Schema 2020-12), or None."""
    import jsonschema

    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(value))
    return None if error is None else error.message


def _replace_binding(b: ArgBinding, **changes: Any) -> ArgBinding:
    from dataclasses import replace

    return replace(b, **changes)


def _path_order(path: str, param: dict[str, Any]) -> int:
    if param.get("in") != "path":
        return 0
    pos = path.find("{" + str(param.get("name")) + "}")
    return pos if pos >= 0 else 10_000


_MD_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^()]*\))*\)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*_(\"'])")


def _cap(text: str, limit: int) -> str:
    """Description text for a catalog: Markdown links reduced to their text (URLs cost tokens and
    help no model), whitespace collapsed, cut at a sentence end within `limit` characters when one
    exists, else at `limit` with an ellipsis."""
    text = " ".join(_MD_LINK.sub(r"\1", text).split())
    if len(text) <= limit:
        return text
    cut = [m.start() for m in _SENTENCE_END.finditer(text) if m.start() <= limit]
    if cut and cut[-1] >= limit // 3:
        return text[: cut[-1]]
    return text[: limit - 1].rstrip() + "…"


def _first_sentence(text: str) -> str:
    m = _SENTENCE_END.search(text)
    return text[: m.start()] if m else text


def _param_schema(ctx: _Ctx, param: dict[str, Any], ptr: str) -> dict[str, Any]:
    if "schema" in param:
        return ctx.converter.convert(param["schema"], join_pointer(ptr, "schema"), "input")
    content = param.get("content")
    if isinstance(content, dict) and content:
        media = min(content)
        node = content[media]
        if isinstance(node, dict) and "schema" in node:
            return ctx.converter.convert(node["schema"], join_pointer(ptr, "content", media, "schema"), "input")
    return {"type": "string"}


_JSON_MEDIA = re.compile(r"^application/([a-z0-9.+-]*\+)?json(;.*)?$", re.IGNORECASE)


def _pick_media(content: dict[str, Any]) -> tuple[str, BodyEncoding]:
    keys = list(content)
    for m in keys:
        if m.lower().split(";")[0].strip() == "application/json":
            return m, "json"
    for m in keys:
        if _JSON_MEDIA.match(m.strip()):
            return m, "json"
    for m in keys:
        if m.lower().startswith("application/x-www-form-urlencoded"):
            return m, "form"
    for m in keys:
        if m.lower().startswith("multipart/"):
            return m, "multipart"
    for m in keys:
        if m.lower().startswith("text/"):
            return m, "text"
    return keys[0], "binary"


def _body(ctx: _Ctx, op: Operation, intent: ToolIntent, desc_limit: int
          ) -> tuple[BodyEncoding, str | None, list[_Arg]]:
    raw = op.node.get("requestBody")
    if raw is None:
        return "none", None, []
    ptr = join_pointer(op.pointer, "requestBody")
    body, body_ptr = ctx.converter.resolve(raw, ptr)
    if not isinstance(body, dict):
        return "none", None, []
    content = body.get("content")
    if not isinstance(content, dict) or not content:
        return "none", None, []
    media, encoding = _pick_media(content)
    media_node = content[media] if isinstance(content[media], dict) else {}
    body_required = bool(body.get("required"))
    schema_ptr = join_pointer(body_ptr, "content", media, "schema")
    if encoding in ("binary", "text") or "schema" not in media_node:
        description = "Request body (" + media + ")" + (
            ", base64-encoded" if encoding == "binary" else "") + "."
        schema: dict[str, Any] = {"type": "string", "description": description}
        if encoding == "binary":
            schema["contentEncoding"] = "base64"
        return encoding, media, [_Arg("body", schema, ArgBinding("body", "body", "", body_required, "omit",
                                                                 content_type=media), body_required)]
    # read-only result (shares the converter's memo): every path below copies what it keeps
    schema = ctx.converter.convert(media_node["schema"], schema_ptr, "input", copy=False)
    schema = _unwrap_single_branch(schema)
    view = object_view(schema)
    if view is not None and not view[0] and schema.get("additionalProperties") in (None, False) \
            and "$ref" not in schema:
        return "none", None, []  # an empty object body (Stripe's GETs declare one): send no body
    free_form = view is None or (not view[0] and schema.get("additionalProperties") not in (None, False))
    if view is None or free_form or "$ref" in schema:
        if encoding == "form":
            encoding = "form"
        schema = _copy_tree(schema)
        schema.setdefault("description", "Request body.")
        return encoding, media, [_Arg("body", schema, ArgBinding("body", "body", "", body_required), body_required)]
    props, required = view
    encodings = media_node.get("encoding") if isinstance(media_node.get("encoding"), dict) else {}
    defs = schema.get("$defs")
    args: list[_Arg] = []
    for prop, prop_schema in props.items():
        prop_schema = _attach_defs(prop_schema, defs) if defs else _copy_tree(prop_schema)
        if isinstance(prop_schema.get("description"), str):
            prop_schema["description"] = _cap(prop_schema["description"], desc_limit)
        is_required = body_required and prop in required
        null_means = "send" if is_required and _admits_null(prop_schema) else "omit"
        enc = encodings.get(prop) if isinstance(encodings, dict) else None
        style = enc.get("style") if isinstance(enc, dict) and isinstance(enc.get("style"), str) else None
        explode = enc.get("explode") if isinstance(enc, dict) and isinstance(enc.get("explode"), bool) else None
        part_type = enc.get("contentType") if isinstance(enc, dict) and isinstance(enc.get("contentType"), str) else None
        binding = ArgBinding("", "body", prop, is_required, null_means, style, explode, part_type)  # type: ignore[arg-type]
        args.append(_Arg(arg_name(prop), prop_schema, binding, is_required))
    return encoding, media, args


def _unwrap_single_branch(schema: dict[str, Any]) -> dict[str, Any]:
    """`{"oneOf": [X]}` (or anyOf) with nothing else that constrains -> X with the annotations kept."""
    for key in ("oneOf", "anyOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and len(branches) == 1 and isinstance(branches[0], dict) \
                and "$ref" not in branches[0]:
            rest = {k: v for k, v in schema.items() if k != key}
            if set(rest) <= {"description", "title", "$defs"}:
                merged = dict(branches[0])
                for k, v in rest.items():
                    merged.setdefault(k, v)
                return merged
    return schema


def _admits_null(schema: dict[str, Any]) -> bool:
    t = schema.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    return any(isinstance(b, dict) and b.get("type") == "null" for b in schema.get("anyOf", []) or [])


def _dedupe_names(args: list[_Arg], reserved: set[str]) -> list[_Arg]:
    """Give every argument a distinct name; on a clash the later location gets `<in>_<name>` and both
    descriptions say where they go (binding keeps the wire name)."""
    taken: dict[str, _Arg] = {}
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
            where = {"path": "the URL path", "query": "the query string", "header": "a request header",
                     "cookie": "a cookie", "body": "the request body"}[arg.binding.location]
            note = f"Sent in {where} as `{arg.binding.wire_name}`."
            text = arg.schema.get("description")
            arg.schema["description"] = f"{text} {note}" if isinstance(text, str) and text else note
    return args


def _response(ctx: _Ctx, op: Operation, *, copy: bool = True) -> tuple[Any, tuple[int, ...], str, bool]:
    """(canonical schema of the success response or None, declared 2xx statuses, pointer, Link header?).

    ``copy=False``: the schema is read-only (it shares the converter's memo; see `SchemaConverter.convert`)."""
    responses = op.node.get("responses")
    if not isinstance(responses, dict):
        return None, (), op.pointer, False
    codes = sorted(str(c) for c in responses if str(c).startswith("2") or str(c).upper() == "2XX")
    success = tuple(int(c) for c in codes if c.isdigit())
    order = [c for c in codes if c.isdigit()] + [c for c in codes if not c.isdigit()]
    if not order and "default" in responses:
        order = ["default"]
    for code in order:
        ptr = join_pointer(op.pointer, "responses", code)
        node, node_ptr = ctx.converter.resolve(responses[code], ptr)
        if not isinstance(node, dict):
            continue
        raw_headers = node.get("headers")
        headers: dict[str, Any] = raw_headers if isinstance(raw_headers, dict) else {}
        link = any(str(h).lower() == "link" for h in headers)
        content = node.get("content")
        if not isinstance(content, dict) or not content:
            if code in ("204", "205") or len(order) == 1:
                return None, success, node_ptr, link
            continue
        media, encoding = _pick_media(content)
        media_node = content[media] if isinstance(content[media], dict) else {}
        if encoding != "json" or "schema" not in media_node:
            return {"type": "string", "description": f"Response body ({media})."}, success, node_ptr, link
        schema_ptr = join_pointer(node_ptr, "content", media, "schema")
        return (ctx.converter.convert(media_node["schema"], schema_ptr, "output", copy=copy), success, schema_ptr,
                link)
    return None, success, op.pointer, False


def _pagination(ctx: _Ctx, op: Operation, spec: PaginationSpec, defaults: Any, response: Any, iloc: Any
                ) -> Pagination:
    max_size = spec.max_page_size or defaults.max_page_size
    page_size = min(spec.page_size or defaults.page_size, max_size)
    if _field_schema(response, spec.items, array=True) is None:
        raise _Skip("pagination-items-missing",
                    f"pagination.items {spec.items!r} is not an array in the success response of {op.key}",
                    iloc("pagination", "items"), "give the dotted path of the item array ('' for an array body)")
    for attr in ("next", "has_more"):
        path = getattr(spec, attr)
        if path is not None and _field_schema(response, path) is None:
            raise _Skip("pagination-field-missing",
                        f"pagination.{attr} {path!r} is not a field of the success response of {op.key}",
                        iloc("pagination", attr), "give the dotted path of that field in the response body")
    if spec.cursor_from_item is not None:
        items = _field_schema(response, spec.items, array=True) or {}
        if _field_schema(items.get("items"), spec.cursor_from_item, defs=response.get("$defs")) is None:
            raise _Skip("pagination-field-missing",
                        f"pagination.cursor_from_item {spec.cursor_from_item!r} is not a field of the items of "
                        f"{op.key}", iloc("pagination", "cursor_from_item"), "name a field of one item, e.g. id")
    if spec.style == "cursor" and spec.next is None and spec.cursor_from_item is None:
        raise _Skip("pagination-next-missing",
                    f"cursor pagination of {op.key} needs `next` (where the next cursor is in the response) or "
                    "`cursor_from_item` (+ `has_more`): without them no next page can be reached",
                    iloc("pagination"), "e.g. next: next_cursor, or cursor_from_item: id with has_more: has_more")
    return Pagination(style=spec.style, items_field=spec.items, cursor_param=spec.cursor, limit_param=spec.limit,
                      next_field=spec.next, has_more_field=spec.has_more, cursor_from_item=spec.cursor_from_item,
                      default_page_size=page_size, max_page_size=max_size)


def _field_schema(schema: Any, dotted: str, *, array: bool = False, defs: dict[str, Any] | None = None) -> Any:
    """The sub-schema at a dotted path of object properties (following `#/$defs/...` references of
    the root, or of `defs`), or None. With `array`, only an array schema counts."""
    if defs is None and isinstance(schema, dict) and isinstance(schema.get("$defs"), dict):
        defs = schema["$defs"]

    def deref(node: Any) -> Any:
        seen = 0
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and defs and seen < 50:
            node = defs.get(node["$ref"].removeprefix("#/$defs/"), node)
            seen += 1
        return node

    node = deref(schema)
    if dotted:
        for part in dotted.split("."):
            node = deref(node)
            view = object_view(node) if isinstance(node, dict) else None
            if view is None or part not in view[0]:
                return None
            node = view[0][part]
    node = deref(node)
    if array:
        if not isinstance(node, dict):
            return None
        t = node.get("type")
        if not (t == "array" or (isinstance(t, list) and "array" in t)):
            return None
    return node


REDACTED_SCHEMA: dict[str, Any] = {"description": "Redacted by the runtime policy.", "enum": ["[redacted]", None]}


def _output_schema(ctx: _Ctx, op: Operation, intent: ToolIntent, pagination: Pagination | None, response: Any,
                   response_ptr: str, iloc: Any) -> dict[str, Any]:
    """The output schema with `output.redact` paths checked against the response and replaced by the
    value the runtime puts there, so a redacted `format: email` field still validates."""
    out = _shaped_output_schema(ctx, op, intent, pagination, response, response_ptr, iloc)
    redact = list(intent.output.redact) if intent.output else []
    if not redact:
        return out
    base = response
    if pagination is not None and isinstance(response, dict):
        items = _field_schema(response, pagination.items_field, array=True) or {}
        base = {**items.get("items", {}), "$defs": response.get("$defs", {})}
    elif isinstance(response, dict) and _field_schema(response, "", array=True) is not None:
        base = {**response.get("items", {}), "$defs": response.get("$defs", {})}
    for index, path in enumerate(redact):
        try:
            if not isinstance(base, dict):
                raise KeyError(path)
            project_schema(base, [path])
        except KeyError:
            raise _Skip("output-redact-unknown", f"output.redact {path!r} is not a field of the response of "
                        f"{op.key}, so nothing would be redacted", iloc("output", "redact", index),
                        "use a dotted path of the response (the same form as output.fields)")
        target = out["properties"]["items"]["items"] if pagination is not None else out
        if pagination is None and "result" in out.get("properties", {}) and "items" in out["properties"]["result"]:
            target = out["properties"]["result"]["items"]
        _redact_in(target, path.split("."))
    return out


def _redact_in(node: Any, parts: list[str]) -> None:
    """Replace the schema at `parts` (through arrays and union branches) by `REDACTED_SCHEMA`."""
    if not isinstance(node, dict) or not parts:
        return
    for key in ("anyOf", "oneOf"):
        for branch in node.get(key) or []:
            _redact_in(branch, parts)
    if isinstance(node.get("items"), dict):
        _redact_in(node["items"], parts)
    props = node.get("properties")
    if isinstance(props, dict) and parts[0] in props:
        if len(parts) == 1:
            props[parts[0]] = {"description": REDACTED_SCHEMA["description"], "enum": list(REDACTED_SCHEMA["enum"])}
        else:
            _redact_in(props[parts[0]], parts[1:])


def _shaped_output_schema(ctx: _Ctx, op: Operation, intent: ToolIntent, pagination: Pagination | None,
                          response: Any, response_ptr: str, iloc: Any) -> dict[str, Any]:
    fields = list(intent.output.fields) if intent.output else []
    depth = (intent.output.depth if intent.output and intent.output.depth else ctx.intents.model.defaults.output_depth)
    if response is None:
        return {"type": "object", "properties": {
            "status": {"type": "integer", "description": "HTTP status of the (empty) response."}},
            "required": ["status"]}
    node_budget = ctx.intents.model.defaults.output_schema_nodes
    schema = dict(response)  # shallow: the helpers below build new trees and never mutate their input
    defs = schema.pop("$defs", None)

    def project(node: dict[str, Any], what: str) -> dict[str, Any]:
        if defs:
            node = {**node, "$defs": defs}  # project_schema/limit_depth copy only the $defs still used
        if fields:
            try:
                # a kept field is kept whole, but only `depth` levels below it (Stripe's expandable
                # fields would otherwise pull in a 65-schema recursive group)
                below = intent.output.depth if intent.output and intent.output.depth else 1
                levels = max(f.count(".") for f in fields) + below
                return limit_depth(project_schema(node, fields), levels)
            except KeyError as exc:
                view = object_view(node)
                known = ", ".join(sorted(view[0])) if view else "(not an object)"
                raise _Skip("output-field-unknown", f"output field {exc.args[0]!r} is not in the {what} of {op.key}",
                            iloc("output", "fields"), f"available fields: {known}")
        return _bounded(node, depth, node_budget)

    if pagination is not None:
        items_schema = _field_schema(schema, pagination.items_field, array=True) or {"type": "array", "items": {}}
        item = project(dict(items_schema.get("items", {})), "items")
        item_defs = item.pop("$defs", None)
        out: dict[str, Any] = {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": item},
                "next_cursor": {"type": ["string", "null"]},
            },
            "required": ["items", "next_cursor"],
        }
        if item_defs:
            out["$defs"] = item_defs
        return out
    view = object_view(schema)
    if view is not None and "$ref" not in schema and not schema.get("anyOf") and not schema.get("oneOf"):
        node = project(schema, "response")
        node_defs = node.pop("$defs", None)
        node.setdefault("properties", {})
        t = node.get("type")
        if isinstance(t, list):  # a nullable object root: the runtime wraps null as {"result": null}
            node["type"] = "object"
        if node_defs:
            node["$defs"] = node_defs
        return node
    if fields and (schema.get("anyOf") or schema.get("oneOf") or "$ref" in schema):
        # a union (Stripe: customer | deleted_customer): each object branch keeps the fields it has
        node = project(schema, "response")
        node_defs = node.pop("$defs", None)
        out = {"type": "object", **{k: v for k, v in node.items() if k != "type"}}
        if node_defs:
            out["$defs"] = node_defs
        return out
    if fields and _field_schema(schema, "", array=True) is not None:
        # an array body (GitHub's label lists): the fields apply to each item, wrapped as {"result": [...]}
        item = project(dict(schema.get("items", {})), "items")
        item_defs = item.pop("$defs", None)
        out = {"type": "object", "properties": {"result": {"type": "array", "items": item}}, "required": ["result"]}
        if item_defs:
            out["$defs"] = item_defs
        return out
    if fields:
        raise _Skip("output-not-object", f"output.fields needs an object response; {op.key} returns "
                    f"{_describe_type(schema)}", iloc("output", "fields"), "remove output.fields")
    inner = _bounded({**schema, "$defs": defs} if defs else schema, depth, node_budget)
    inner_defs = inner.pop("$defs", None)
    out = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    if inner_defs:
        out["$defs"] = inner_defs
    return out


def _bounded(schema: dict[str, Any], depth: int, budget: int) -> dict[str, Any]:
    """`limit_depth` at the deepest level ≤ `depth` whose result stays within `budget` schema nodes
    (at least one level). Wide APIs (Stripe objects with ~100 expandable properties) get fewer levels."""
    first = limit_depth(schema, 1, max_nodes=budget)  # None when over the budget
    if first is None:
        return limit_depth(schema, 1)
    best = first
    for level in range(2, depth + 1):
        candidate = limit_depth(schema, level, max_nodes=budget)  # None (early) when over the budget
        if candidate is None:
            break
        best = candidate
    return best


def _strip_descriptions(node: Any) -> Any:
    """Drop `description`/`title` annotations (not property names called so) from a schema tree."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in ("description", "title") and isinstance(value, str):
                continue
            if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
                out[key] = {k: _strip_descriptions(v) for k, v in value.items()}
            elif key in ("enum", "const", "default", "required", "examples"):
                out[key] = value
            else:
                out[key] = _strip_descriptions(value)
        return out
    if isinstance(node, list):
        return [_strip_descriptions(v) for v in node]
    return node


def _describe_type(schema: Any) -> str:
    if isinstance(schema, dict) and "type" in schema:
        return f"type {schema['type']!r}"
    return "a composed schema"


def _attach_defs(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Copy of `node` with the `$defs` entries it (transitively) references."""
    node = _copy_tree(node)
    needed: list[str] = []
    stack: list[Any] = [node]
    seen: set[str] = set()
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            ref = cur.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref[len("#/$defs/"):]
                if name not in seen and name in defs:
                    seen.add(name)
                    needed.append(name)
                    stack.append(defs[name])
            stack.extend(v for k, v in cur.items() if k != "$defs")
        elif isinstance(cur, list):
            stack.extend(cur)
    if needed:
        existing = node.setdefault("$defs", {})
        for name in sorted(needed):
            existing.setdefault(name, _copy_tree(defs[name]))
    return node


# ---------------------------------------------------------------------------------------------
# hooks for `toolgen init` and `toolgen lint`: the same parameter and response choice as the build


def operation_parameters(doc: SpecDocument, converter: SchemaConverter, op: Operation
                         ) -> list[tuple[dict[str, Any], str]]:
    """The operation's parameters (path-item ones overridden by the operation's), `$ref`s resolved,
    as (parameter object, pointer). Raises `DiagnosticError` for a broken `$ref`; [] for an invalid
    parameter list."""
    try:
        return _parameters(_Ctx(doc, None, converter.sink, "", converter), op)  # type: ignore[arg-type]
    except _Skip:
        return []


def operation_response(doc: SpecDocument, converter: SchemaConverter, op: Operation) -> tuple[Any, bool]:
    """(canonical schema of the success response the build uses, or None for an empty body; whether
    that response declares a `Link` header). Raises `DiagnosticError` for a schema it cannot convert."""
    schema, _, _, link = _response(_Ctx(doc, None, converter.sink, "", converter), op)  # type: ignore[arg-type]
    return schema, link


__all__ = ["lower", "operation_parameters", "operation_response"]
