"""An intent's conditional approval and limits -> the row's ``approval_when`` and ``limits``.

Input: the resolved intent (`resolve.ResolvedIntent.approval_when`, and `limits`: the intent's, else
`Defaults.limits`) and the input schema of the tool that sends. Output: the CEL condition checked against that schema
(`toolgen.policy.conditions.check`: a syntax or type error is an ``approval-condition-invalid`` error at the
intent map's line and column of the expression) and the `Limit`s of the row (a ``sum`` over an
argument that is not a required number is a ``limit-sum-invalid`` error).
"""

from __future__ import annotations

from typing import Any

from ...diagnostics import SourceLocation
from ...policy.conditions import check
from ...policy.limits import Limit
from ..intent import LimitSpec, duration_s
from .context import Ctx
from .resolve import ResolvedIntent

__all__ = ["checked_condition", "condition_location", "lower_limits"]


def condition_location(ctx: Ctx, where: tuple[str | int, ...], line: int, column: int) -> SourceLocation:
    """Where line `line`, column `column` of the expression of ``approval.when`` under `where` is in
    the intent map: read from the map's text after the ``when`` key (past an opening quote; a block
    scalar's text starts on the line after its indicator, at its indentation). A flow or quoted
    scalar written over several lines is placed at its first line's column."""
    at = ctx.intents.locate(*where, "approval", "when")
    lines = ctx.intents.text.splitlines()
    if at.line is None or at.col is None or at.line > len(lines):
        return at
    source = lines[at.line - 1]
    rest = source[at.col - 1 :]
    if not rest.startswith("when"):
        return at
    after = rest[4:].lstrip()
    after = after[1:].lstrip() if after.startswith(":") else after
    start = len(source) - len(after) + 1  # 1-based column of the value
    if after[:1] in ("|", ">"):
        body = lines[at.line :]
        if len(body) < line:
            return at
        indent = len(body[0]) - len(body[0].lstrip(" "))  # the block's own indentation, from its first line
        return SourceLocation(at.file, at.line + line, indent + column, at.pointer)
    quoted = 1 if after[:1] in ("'", '"') else 0
    if line == 1:
        return SourceLocation(at.file, at.line, start + quoted + column - 1, at.pointer)
    return SourceLocation(at.file, at.line + line - 1, None, at.pointer)


def checked_condition(ctx: Ctx, intent: ResolvedIntent, input_schema: Any) -> str | None:
    """The intent's approval condition, checked against `input_schema` (the arguments of its record
    tool); each problem is an ``approval-condition-invalid`` error located in the expression, and the
    condition is then dropped (the approval stays required: a condition that does not check never
    loosens it)."""
    key, where, explicit, when = intent.key, intent.where, intent.explicit, intent.approval_when
    if when is None:
        return None
    problems = check(when, input_schema)
    for problem in problems:
        ctx.sink.error(
            "approval-condition-invalid",
            f"intent `{key}`: approval condition: {problem.message}",
            condition_location(ctx, where, problem.line, problem.column) if explicit else None,
            "write a CEL expression over args.<argument> and caller.id / caller.scopes that is a bool, "
            "e.g. args.amount > 50000",
        )
    return None if problems else when


def lower_limits(ctx: Ctx, intent: ResolvedIntent, input_schema: Any) -> tuple[Limit, ...]:
    """The row's limits: the intent's `limits`, else the map's `defaults.limits` (resolved:
    `ResolvedIntent.limits`, `limits_own`). A ``sum`` needs a
    required ``integer`` or ``number`` argument of `input_schema` (an absent or non-numeric value
    could not be counted); another is a ``limit-sum-invalid`` error and the limit is dropped. A sum
    of ``defaults.limits`` skips a tool without that argument."""
    key, where, explicit, own = intent.key, intent.where, intent.explicit, intent.limits_own
    specs: list[LimitSpec] = list(intent.limits)
    out: list[Limit] = []
    properties = input_schema.get("properties", {}) if isinstance(input_schema, dict) else {}
    required = set(input_schema.get("required", [])) if isinstance(input_schema, dict) else set()
    for index, spec in enumerate(specs):
        if spec.sum is not None and not own and spec.sum not in properties:
            continue  # a default sum over an argument this tool does not have: the tool moves none of it
        if spec.sum is not None:
            kind = _type(properties.get(spec.sum))
            if spec.sum not in required or kind not in ("integer", "number"):
                found = (
                    "no such argument"
                    if spec.sum not in properties
                    else (
                        f"a {kind or 'value of no single type'}"
                        if kind not in ("integer", "number")
                        else "optional"
                    )
                )
                ctx.sink.error(
                    "limit-sum-invalid",
                    f"intent `{key}`: limit sum {spec.sum!r} is {found}: a sum limit adds "
                    "up a required integer or number argument",
                    _where(ctx, where, index, own=own, explicit=explicit),
                    "name a required numeric argument of the tool, or use a calls limit",
                )
                continue
        out.append(_limit(spec))
    return tuple(out)


def _where(
    ctx: Ctx, where: tuple[str | int, ...], index: int, *, own: bool, explicit: bool
) -> SourceLocation | None:
    if not own:
        return ctx.intents.locate("defaults", "limits", index, "sum")
    return ctx.intents.locate(*where, "limits", index, "sum") if explicit else None


def _type(schema: Any) -> str | None:
    kind = schema.get("type") if isinstance(schema, dict) else None
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    return kind if isinstance(kind, str) else None


def _limit(spec: LimitSpec) -> Limit:
    if spec.concurrent is not None:
        return Limit(per=spec.per, kind="concurrent", max=spec.concurrent)
    assert spec.window is not None  # LimitSpec requires it for calls and sum
    if spec.sum is not None:
        assert spec.max is not None
        return Limit(
            per=spec.per, kind="sum", max=spec.max, window_s=duration_s(spec.window), sum_arg=spec.sum
        )
    assert spec.calls is not None
    return Limit(per=spec.per, kind="calls", max=spec.calls, window_s=duration_s(spec.window))
