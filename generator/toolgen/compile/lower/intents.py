"""Stage `lower`, the driver: spec operations + intents -> the frozen IR (`ApiIR` of `Tool`s).

Input: a `SpecDocument` and a `LoadedIntentMap`. Output: `ApiIR`. Explicit intents are lowered first,
then every operation an `include` group matches and no tool covers yet (its intent inferred from
what the operation says it does, `toolgen.compile.verbs.guess_effect`, never a read on a method that
is not safe; its name from the operationId, shortened and made unique). Diagnostics go to the
sink: errors in explicit intents make the build fail (the caller raises), while an operation that
an `include` group cannot lower is skipped with a warning that says why (never silently dropped).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ...diagnostics import DiagnosticError, DiagnosticSink
from ...naming import MAX_TOOL_NAME, shorten, snake_case, stable_suffix, tool_name_problem
from ...remember import Remember
from ..intent import IncludeSpec, LoadedIntentMap, ToolIntent
from ..ir import ApiIR, Effect, OperationRef, SkippedOperation, Tool
from ..load import SpecDocument
from ..operations import (
    Operation,
    OperationIndex,
    find_operation,
    list_operations,
    operation_matches,
    suggest_operations,
)
from ..schema import Interner, SchemaBudget, SchemaConverter
from .composites import lower_composites
from .context import Ctx, Skip
from .remembered_tools import IntentTools, intent_tools
from .resolve import resolve_intent
from .reuse import OperationKeys, inferred_intent
from .routing import add_routing_notes, describe_toolsets
from .toolsets import check_reserved_names, check_toolsets, toolsets_of

READ_VERBS = (
    "get",
    "list",
    "search",
    "find",
    "query",
    "lookup",
    "fetch",
    "read",
    "check",
    "count",
    "describe",
    "download",
    "export",
    "retrieve",
    "show",
    "head",
    "options",
)


def lower(
    doc: SpecDocument,
    intents: LoadedIntentMap,
    sink: DiagnosticSink,
    api_name: str,
    progress: Callable[[int, int], None] | None = None,
    remember: Remember | None = None,
    keys: OperationKeys | None = None,
    tools: IntentTools | None = None,
) -> ApiIR:
    """Lower every intent (explicit tools first, then include groups) to tools.

    Raises nothing for bad intents: errors are added to `sink` (the caller decides to stop).
    `progress(done, total)`, if given, is called as each explicit intent and each operation an include
    group looks at is taken up (total = explicit intents + operations x include groups); it only
    reports, the result does not depend on it. `remember(key, compute)`: each operation's lowering
    is remembered through it (`toolgen.compile.lower.reuse`; the build cache); the IR is the same.
    `keys`: what names each operation's lowering to `remember` (default: `OperationKeys` of `doc`
    and `intents`, valid across builds); a caller that keys more by them (the lint stage, init's
    draft lowerings) passes its own. `tools`: each intent's tools as the last build made them
    (`toolgen.compile.lower.remembered_tools`), with `remember`; the IR is the same.
    """
    model = intents.model
    budget = SchemaBudget(max_nodes=model.budgets.max_schema_nodes, max_depth=model.budgets.max_schema_depth)
    ctx = Ctx(
        doc,
        intents,
        sink,
        api_name,
        SchemaConverter(doc, sink, budget),
        remember=remember,
        keys=(keys or OperationKeys(doc, intents, api_name)) if remember is not None else None,
        tools=tools if remember is not None else None,
    )
    operations = list_operations(doc)
    made: list[Tool] = []
    authored: set[str] = set()  # tools whose description the intent map gives: its author's routing stands
    covered: dict[str, str] = {}
    skipped: list[SkippedOperation] = []

    _check_intent_map(ctx, operations)
    check_toolsets(ctx)
    total, done = len(model.tools) + len(operations) * len(model.include), 0

    # equal schema subtrees of all tools become one object (read-only from here on, `Interner`): a
    # spec's component schemas reach many tools, each of which built its own copy
    intern = Interner()

    def shared(tool: Tool) -> Tool:
        return replace(tool, input_schema=intern(tool.input_schema), output_schema=intern(tool.output_schema))

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    by_ref = OperationIndex(operations)
    for key, intent in model.tools.items():
        step()
        loc = intents.locate("tools", key, "operation")
        op = find_operation(by_ref, intent.operation)
        if op is None:
            close = suggest_operations(operations, intent.operation)
            sink.error(
                "operation-not-found",
                f"operation {intent.operation!r} (intent `{key}`) is not in {doc.display}",
                loc,
                f"did you mean {', '.join(repr(c) for c in close)}?"
                if close
                else "use an operationId or `METHOD /path` exactly as written in the spec",
            )
            continue
        problem = _explicit_name_problem(key, intent.effect)
        if problem:
            sink.error(
                "tool-name-invalid",
                f"intent `{key}` for operation {op.synthetic_id!r}: {problem}",
                intents.locate("tools", key),
                "choose a shorter name of letters, digits, '_' and '-' "
                "(write intents get a 'preview_'/'record_' prefix, which counts toward 64)",
            )
            continue
        try:
            resolved = resolve_intent(ctx.intents, key, intent, ("tools", key), explicit=True)
            new = intent_tools(ctx, op, resolved, shared=shared)
        except Skip as skip:
            sink.error(skip.code, skip.message, skip.location, skip.hint)
            continue
        except DiagnosticError as exc:
            sink.extend(exc.diagnostics)
            continue
        made.extend(new)
        covered.setdefault(op.pointer, key)
        if intent.description:
            authored.update(tool.name for tool in new)

    for index, group in enumerate(model.include):
        for op in operations:
            step()
            if op.pointer in covered:
                continue
            if not operation_matches(op, group.match) or any(operation_matches(op, p) for p in group.exclude):
                continue
            try:
                intent, name = _infer_intent(ctx, op, group)
                resolved = resolve_intent(
                    ctx.intents, name, intent, ("include", index), explicit=False, group=group
                )
                new = intent_tools(ctx, op, resolved, shared=shared)
            except Skip as skip:
                sink.warning(
                    skip.code,
                    f"skipped {op.key}: {skip.message}",
                    skip.location or doc.locate(op.pointer),
                    skip.hint,
                )
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
            made.extend(new)
            covered[op.pointer] = name

    made.extend(shared(tool) for tool in lower_composites(ctx, operations, by_ref, {t.name for t in made}))
    made = add_routing_notes(made, authored)
    check_reserved_names(ctx, made)
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
        tools=tuple(sorted(made, key=lambda t: t.name)),
        operations=ops,
        covered=tuple(p for p, name in covered.items() if name),
        skipped=tuple(skipped),
        toolsets=describe_toolsets(toolsets_of(ctx), made),
    )


def _check_intent_map(ctx: Ctx, operations: list[Operation]) -> None:
    """Checks of the intent map as a whole against the spec (located errors and warnings)."""
    model, sink, intents = ctx.intents.model, ctx.sink, ctx.intents
    schemes = (ctx.doc.data.get("components") or {}).get("securitySchemes") or {}
    for name, spec in model.auth.items():
        if spec.kind is None and name not in schemes:
            close = difflib.get_close_matches(name, [str(k) for k in schemes], n=1)
            sink.error(
                "auth-scheme-unknown",
                f"auth names security scheme {name!r}, which the spec does not declare",
                intents.locate("auth", name),
                f"did you mean `{close[0]}`?"
                if close
                else "use a key of components.securitySchemes, or declare the credential with `kind:`",
            )
    for key, intent in model.tools.items():
        scopes = [intent.permission] if isinstance(intent.permission, str) else list(intent.permission or [])
        for scope in scopes:
            if not scope.strip() or any(c.isspace() for c in scope):
                sink.error(
                    "permission-invalid",
                    f"intent `{key}`: permission {scope!r} is not one scope",
                    intents.locate("tools", key, "permission"),
                    "write one scope, or a list of scopes: permission: [a:read, b:read]",
                )
    for index, group in enumerate(model.include):
        if not any(operation_matches(op, group.match) for op in operations):
            sink.warning(
                "include-matches-nothing",
                f"include pattern {group.match!r} matches no operation of the spec",
                intents.locate("include", index, "match"),
                "patterns match an operationId, `METHOD /path` or `tag:NAME` (globs allowed)",
            )


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


def _infer_intent(ctx: Ctx, op: Operation, group: IncludeSpec) -> tuple[ToolIntent, str]:
    intent = inferred_intent(ctx, op, group)
    return intent, _include_name(ctx, op, group, intent.effect)


def _include_name(ctx: Ctx, op: Operation, group: IncludeSpec, effect: Effect) -> str:
    base = group.prefix + snake_case(op.synthetic_id)
    if not base:
        base = "op"
    if effect == "read" and not base.startswith(READ_VERBS) and not group.prefix:
        base = "get_" + base
    limit = MAX_TOOL_NAME - (len("preview_") if effect != "read" else 0)
    short = shorten(base, limit, seed=op.pointer)

    def full(b: str) -> list[str]:
        return [b] if effect == "read" else ["preview_" + b, "record_" + b]

    if any(n in ctx.names for n in full(short)):  # the names taken so far
        short = shorten(f"{base}_{stable_suffix(op.pointer, 6)}", limit, seed=op.pointer + "#dup")
        ctx.sink.warning(
            "name-collision",
            f"{op.key}: tool name {base!r} is taken; using {short!r}",
            ctx.doc.locate(op.pointer),
            "give the operation a distinct operationId or an explicit intent",
        )
    if short != base:
        ctx.sink.warning(
            "name-shortened",
            f"operationId {op.synthetic_id!r} gives tool name {base!r} ({len(base)} chars); "
            f"shortened to {', '.join(full(short))}",
            ctx.doc.locate(op.pointer),
            "add an explicit intent to choose a name",
        )
    return short
