"""`toolgen diff`: what changed in the generated tool surface, risky changes first (for PR review).

Input: two versions of the generated folder, each read as `policy.json` (typed rows,
`toolgen.policy.format.from_json`; a malformed one is a located ``diff-input-invalid`` error) +
`mcp.json` per API folder (`Surface`, read by `toolgen.review.diff_inputs`). The old version comes
from a git ref (read with `git ls-tree` / `git show`, nothing is checked out) or a directory; the
new one from the working tree or a directory. Output: a list of
`Change`s and per-API catalog token counts (`DiffResult`), rendered as Markdown (a PR comment) or
JSON.

Risky changes are the ones a reviewer must look at because callers break or the runtime gate got
weaker: a tool removed or renamed, a tool calling another operation, a new record (writing) tool,
effect widened (read → write → destructive), approval removed, permission changed, idempotency key
removed or no longer sent to the API, an approval condition that asks less often or is not provably
as strict, a limit removed or loosened, a new required argument, an argument removed, a tool that
model-written code may now call (``allowed_callers`` in anthropic.json or openai.responses.json), and a
description that still promises approval after the gate was dropped. Everything else (new read tools,
optional arguments, description changes, shown old → new and shortened, output or other policy changes) is
listed after. Catalog tokens are counted per tool, as REPORT.md counts them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields
from typing import Any

from ..policy.conditions import implies
from ..policy.format import PolicyRow
from .diff_inputs import Surface

_EFFECT_RANK = {"read": 0, "write": 1, "destructive": 2}


@dataclass(frozen=True)
class Change:
    api: str
    tool: str
    kind: str
    risky: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "api": self.api,
            "tool": self.tool,
            "kind": self.kind,
            "risky": self.risky,
            "detail": self.detail,
        }


@dataclass
class DiffResult:
    changes: list[Change] = field(default_factory=list)
    tokens: dict[str, tuple[int, int]] = field(default_factory=dict)  # api -> (old, new)
    tools: dict[str, tuple[int, int]] = field(default_factory=dict)  # api -> (old count, new count)

    @property
    def risky(self) -> list[Change]:
        return [c for c in self.changes if c.risky]


# ---------------------------------------------------------------------------------------------
# comparing


def _args(tool: dict[str, Any] | None) -> tuple[dict[str, Any], set[str]]:
    schema: dict[str, Any] = (tool or {}).get("inputSchema") or {}
    props = schema.get("properties")
    required = schema.get("required")
    return (
        props if isinstance(props, dict) else {},
        {str(r) for r in required} if isinstance(required, list) else set(),
    )


def _op(row: PolicyRow) -> str:
    if row.composite is not None:
        return f"composite ({row.composite.pattern})"
    return f"{row.method} {row.path}"


def _perm(row: PolicyRow) -> str:
    return ", ".join(row.permission) or "(none)"


def _idem(row: PolicyRow) -> str:
    idem = row.idempotency
    if idem is None:
        return "none"
    sent = "receipts only" if idem.send_in == "none" else f"{idem.send_in} {idem.wire_name}"
    return f"{idem.arg} ({sent})"


#: the `PolicyRow` fields a change kind of its own covers
_COMPARED = {
    "tool",
    "mode",
    "effect",
    "operation_id",
    "method",
    "path",
    "permission",
    "approval",
    "idempotency",
    "output",
    "pair",
    "intent",
    "record_arguments",
    "preview_ttl_s",
    "narrowed",
    "toolset",
    "loading",
    "composite",
    "approval_when",
    "limits",
}
#: the ``policy.json`` member a field is written under, where the names differ (a "policy-changed" names members)
_MEMBER = {
    "body_encoding": "request",
    "body_content_type": "request",
    "bindings": "request",
    "fixed": "request",
}


def _record(row: PolicyRow) -> str:
    if row.executes_preview:
        return f"the stored preview (expires after {row.preview_ttl_s} s)"
    return "full arguments"


#: one change of a tool, before its API and name: (kind, risky, detail)
_Found = tuple[str, bool, str]


#: how far the service's shared secret may stand in for a caller, least first (no `per_caller`: always)
_SHARED_RANK = {"never": 0, "reads": 1, "always": 2}


def credential_changes(old_row: PolicyRow, new_row: PolicyRow) -> list[_Found]:
    """``(kind, risky, detail)`` per security scheme of the row whose callers share the service's
    credential more than before (``per_caller`` removed, or its ``service_secret`` widened):
    ``credential-shared``, risky (a caller may now act as the service), or less
    (``credential-per-caller``)."""

    def shared(row: PolicyRow) -> dict[str, int]:
        return {
            a.scheme: 2 if a.per_caller is None else _SHARED_RANK[a.per_caller.service_secret]
            for a in row.auth
        }

    def said(rank: int | None) -> str:
        return {
            None: "(none)",
            0: "each caller's own",
            1: "each caller's own (shared for reads)",
            2: "shared by every caller",
        }[rank]

    old, new = shared(old_row), shared(new_row)
    out: list[_Found] = []
    for scheme in sorted(set(old) & set(new)):
        if old[scheme] != new[scheme]:
            wider = new[scheme] > old[scheme]
            out.append(
                (
                    "credential-shared" if wider else "credential-per-caller",
                    wider,
                    f"`{scheme}`: {said(old[scheme])} → {said(new[scheme])}",
                )
            )
    return out


def compare_tool(
    api: str,
    name: str,
    old_row: PolicyRow,
    new_row: PolicyRow,
    old_tool: dict[str, Any] | None,
    new_tool: dict[str, Any] | None,
) -> list[Change]:
    """Changes of one tool present in both versions (possibly under two names): its policy (operation,
    effect, approval, permission, idempotency), its arguments, its description, its output, its record
    arguments, the intent map's narrowings, its toolset and loading, how its security schemes share
    the service's credential, a composite's steps, its approval condition and limits, and any other
    policy field, in that order."""
    found: list[_Found] = [*_policy_changes(old_row, new_row), *_argument_changes(old_tool, new_tool)]
    old_d = str((old_tool or {}).get("description") or "")
    new_d = str((new_tool or {}).get("description") or "")
    if old_d != new_d:
        found.append(("description-changed", False, describe_change(old_d, new_d)))
    promise = _approval_promise(new_d)
    if old_row.approval == "required" and new_row.approval != "required" and promise:
        quoted = _around(new_d, promise.start(), promise.end())
        found.append(
            (
                "description-stale",
                True,
                f"approval was removed, but the description still promises it: “{quoted}”",
            )
        )
    if (old_tool or {}).get("outputSchema") != (new_tool or {}).get(
        "outputSchema"
    ) or old_row.output != new_row.output:
        found.append(
            ("output-changed", False, "output schema or output policy (fields, budget, redaction) changed")
        )
    if _record(old_row) != _record(new_row):
        found.append(
            (
                "record-arguments-changed",
                False,
                f"the record tool executes {_record(old_row)} → {_record(new_row)}",
            )
        )
    found += _narrowing_changes(old_row, new_row)
    if old_row.toolset != new_row.toolset:
        found.append(
            (
                "toolset-changed",
                False,
                f"toolset {old_row.toolset or '(none)'} → {new_row.toolset or '(none)'}",
            )
        )
    if old_row.loading != new_row.loading:
        deferred = " (now found by tool search, not listed up front)" if new_row.loading == "deferred" else ""
        found.append(("loading-changed", False, f"loading {old_row.loading} → {new_row.loading}{deferred}"))
    found += credential_changes(old_row, new_row)
    out = [Change(api, name, kind, risky, detail) for kind, risky, detail in found]
    out.extend(compare_plans(api, name, old_row, new_row))
    out.extend(compare_gates(api, name, old_row, new_row))
    other = sorted(
        {
            _MEMBER.get(f.name, f.name)
            for f in fields(PolicyRow)
            if f.name not in _COMPARED and getattr(old_row, f.name) != getattr(new_row, f.name)
        }
    )
    if other:
        out.append(Change(api, name, "policy-changed", False, "changed: " + ", ".join(other)))
    return out


def _policy_changes(old_row: PolicyRow, new_row: PolicyRow) -> list[_Found]:
    """What changed in a row's operation, effect, approval, permission and idempotency key; risky: another
    operation, a wider effect, approval removed, other scopes, the key removed or no longer sent."""
    found: list[_Found] = []
    if _op(old_row) != _op(new_row):
        found.append(("operation-changed", True, f"{_op(old_row)} → {_op(new_row)}"))
    old_e, new_e = old_row.effect, new_row.effect
    if old_e != new_e:
        widened = _EFFECT_RANK.get(new_e, 0) > _EFFECT_RANK.get(old_e, 0)
        found.append(("effect-widened" if widened else "effect-narrowed", widened, f"{old_e} → {new_e}"))
    old_a, new_a = old_row.approval, new_row.approval
    if old_a != new_a:
        removed = old_a == "required"
        found.append(("approval-removed" if removed else "approval-added", removed, f"{old_a} → {new_a}"))
    if sorted(old_row.permission) != sorted(new_row.permission):
        found.append(("permission-changed", True, f"{_perm(old_row)} → {_perm(new_row)}"))
    old_i, new_i = old_row.idempotency, new_row.idempotency
    if old_i != new_i:
        if old_i and not new_i:
            found.append(("idempotency-removed", True, f"{_idem(old_row)} → none"))
        elif old_i and new_i and old_i.send_in != "none" and new_i.send_in == "none":
            found.append(("idempotency-not-sent", True, f"{_idem(old_row)} → {_idem(new_row)}"))
        else:
            found.append(("idempotency-changed", False, f"{_idem(old_row)} → {_idem(new_row)}"))
    return found


def _argument_changes(old_tool: dict[str, Any] | None, new_tool: dict[str, Any] | None) -> list[_Found]:
    """Arguments removed, added (risky when required), now required, or otherwise changed, each
    group sorted by name."""
    found: list[_Found] = []
    old_props, old_req = _args(old_tool)
    new_props, new_req = _args(new_tool)
    for arg in sorted(set(old_props) - set(new_props)):
        found.append(("argument-removed", True, f"`{arg}` removed (calls that pass it now fail validation)"))
    for arg in sorted(set(new_props) - set(old_props)):
        if arg in new_req:
            found.append(("argument-required-added", True, f"new required argument `{arg}`"))
        else:
            found.append(("argument-added", False, f"new optional argument `{arg}`"))
    for arg in sorted(set(old_props) & set(new_props)):
        if arg in new_req and arg not in old_req:
            found.append(("argument-now-required", True, f"`{arg}` is now required"))
        elif old_props[arg] != new_props[arg] or (arg in old_req) != (arg in new_req):
            found.append(("argument-changed", False, f"`{arg}`: schema or optionality changed"))
    return found


def _narrowing_changes(old_row: PolicyRow, new_row: PolicyRow) -> list[_Found]:
    """The intent map's narrowings of arguments added, changed or removed (risky: the runtime accepts
    more), by argument name."""
    found: list[_Found] = []
    old_n, new_n = {n.arg: n for n in old_row.narrowed}, {n.arg: n for n in new_row.narrowed}
    for arg in sorted(set(old_n) | set(new_n)):
        before, after = old_n.get(arg), new_n.get(arg)
        if before == after:
            continue
        if after is None or (before is not None and before.schema is not None and after.schema is None):
            found.append(
                (
                    "narrowing-removed",
                    True,
                    (
                        f"`{arg}`: the intent map's narrowing was removed; "
                        "the runtime now accepts every value the spec's "
                        "schema accepts"
                    ),
                )
            )
        elif before is None:
            found.append(("narrowing-added", False, f"`{arg}`: narrowed by the intent map"))
        else:
            found.append(("narrowing-changed", False, f"`{arg}`: the intent map's narrowing changed"))
    return found


def compare_gates(api: str, name: str, old_row: PolicyRow, new_row: PolicyRow) -> list[Change]:
    """Changes of a row's approval condition and limits, judged conservatively: a change counts as
    loosening (risky) unless it is provably stricter. Approval condition: added to an approval that
    was always asked, or changed to one that `toolgen.policy.conditions.implies` cannot show asks at least
    whenever the old one did, is ``approval-condition-loosened``; removed (the approval asked always)
    or provably stricter is ``approval-condition-tightened``; a respacing is no change. Limits (matched
    by ``per``, kind and summed argument): one removed, a larger ``max`` or a shorter window is
    ``limits-loosened``; one added, a smaller ``max`` or a longer window ``limits-tightened``."""
    out: list[Change] = []
    if new_row.approval == "required":
        old_when = old_row.approval_when if old_row.approval == "required" else None
        new_when = new_row.approval_when
        if (
            old_row.approval == "required"
            and new_when is not None
            and (old_when is None or not implies(old_when, new_when))
        ):
            out.append(
                Change(
                    api,
                    name,
                    "approval-condition-loosened",
                    True,
                    f"approval asked {_when(old_when)} → {_when(new_when)} (not provably as often)",
                )
            )
        elif old_when != new_when and not (
            old_when is not None
            and new_when is not None
            and implies(new_when, old_when)
            and implies(old_when, new_when)
        ):
            out.append(
                Change(
                    api,
                    name,
                    "approval-condition-tightened",
                    False,
                    f"approval asked {_when(old_when)} → {_when(new_when)}",
                )
            )
    old_l = {(x.per, x.kind, x.sum_arg): x for x in old_row.limits}
    new_l = {(x.per, x.kind, x.sum_arg): x for x in new_row.limits}
    looser = [f"{x.describe()} removed" for k, x in old_l.items() if k not in new_l]
    stricter = [f"{x.describe()} added" for k, x in new_l.items() if k not in old_l]
    for key in sorted(set(old_l) & set(new_l), key=str):
        before, after = old_l[key], new_l[key]
        if before == after:
            continue
        loosened = after.max > before.max or (after.window_s or 0) < (before.window_s or 0)
        (looser if loosened else stricter).append(f"{before.describe()} → {after.describe()}")
    if looser:
        out.append(Change(api, name, "limits-loosened", True, "; ".join(looser)))
    if stricter:
        out.append(Change(api, name, "limits-tightened", False, "; ".join(stricter)))
    return out


def _when(condition: str | None) -> str:
    return "always" if condition is None else f"when `{condition}`"


def compare_plans(api: str, name: str, old_row: PolicyRow, new_row: PolicyRow) -> list[Change]:
    """Changes of a composite's steps (docs/composites.md). Risky: a write step added (a step whose row
    writes, new or changed from a read), a step's effect widened, a scope dropped from a step's
    permission, a step's approval or idempotency key removed, a step calling another operation.
    Listed after: steps added or removed, scopes added, other plan changes (pattern, arguments,
    order, output)."""
    old_plan, new_plan = old_row.composite, new_row.composite
    if old_plan is None or new_plan is None:
        return []  # from or to one operation: `operation-changed` says it
    out: list[Change] = []

    def add(kind: str, risky: bool, detail: str) -> None:
        out.append(Change(api, name, kind, risky, detail))

    old_steps = {s.id: s for s in old_plan.steps}
    for step in new_plan.steps:
        before = old_steps.get(step.id)
        row = step.row
        if before is None:
            writes = row.effect != "read"
            add(
                "composite-write-step-added" if writes else "composite-step-added",
                writes,
                f"step `{step.id}`: {_step_op(row)} ({row.effect})",
            )
            continue
        was = before.row
        if _step_op(was) != _step_op(row):
            add(
                "composite-step-operation-changed",
                True,
                f"step `{step.id}`: {_step_op(was)} → {_step_op(row)}",
            )
        if was.effect != row.effect:
            widened = _EFFECT_RANK.get(row.effect, 0) > _EFFECT_RANK.get(was.effect, 0)
            kind = (
                ("composite-write-step-added" if was.effect == "read" else "composite-step-effect-widened")
                if widened
                else "composite-step-effect-narrowed"
            )
            add(kind, widened, f"step `{step.id}`: {was.effect} → {row.effect}")
        dropped = [p for p in was.permission if p not in row.permission]
        gained = [p for p in row.permission if p not in was.permission]
        if dropped:
            add(
                "composite-step-permission-dropped",
                True,
                f"step `{step.id}`: no longer checks {', '.join(dropped)} ({_perm(was)} → {_perm(row)})",
            )
        elif gained:
            add("composite-step-permission-changed", False, f"step `{step.id}`: {_perm(was)} → {_perm(row)}")
        if was.approval == "required" and row.approval != "required":
            add(
                "composite-step-approval-removed",
                True,
                f"step `{step.id}`: approval required → {row.approval}",
            )
        if was.idempotency is not None and row.idempotency is None:
            add("composite-step-idempotency-removed", True, f"step `{step.id}`: {_idem(was)} → none")
        if (before.args, before.needs, before.when, before.input_schema, before.output_schema) != (
            step.args,
            step.needs,
            step.when,
            step.input_schema,
            step.output_schema,
        ):
            add("composite-step-changed", False, f"step `{step.id}`: arguments, order or schemas changed")
    for step_id in sorted(set(old_steps) - {s.id for s in new_plan.steps}):
        add("composite-step-removed", False, f"step `{step_id}`: {_step_op(old_steps[step_id].row)}")
    if [s.id for s in old_plan.steps if s.id in {t.id for t in new_plan.steps}] != [
        s.id for s in new_plan.steps if s.id in old_steps
    ]:
        add("composite-plan-changed", False, "the steps run in another order")
    if (old_plan.pattern, old_plan.switch, old_plan.output) != (
        new_plan.pattern,
        new_plan.switch,
        new_plan.output,
    ):
        add(
            "composite-plan-changed",
            False,
            f"pattern, switch or result changed ({old_plan.pattern} → {new_plan.pattern})"
            if old_plan.pattern != new_plan.pattern
            else "switch or result members changed",
        )
    return out


def _step_op(row: PolicyRow) -> str:
    return f"{row.operation_id or '-'} {row.method} {row.path}"


_APPROVAL_PROMISE = re.compile(
    r"\bapprov\w*|\bhuman (?:must )?(?:review|confirm|sign)\w*|\bpreview_id\b", re.IGNORECASE
)
_NEGATED = re.compile(r"\b(?:no|not|never|without)\s+$", re.IGNORECASE)


def _approval_promise(description: str) -> re.Match[str] | None:
    """The first words of `description` that promise a human approval ("approve", "a human reviews",
    `preview_id`), or None. A negated mention ("No approval needed.", the sentence toolgen itself
    writes into a tool without approval) promises nothing and is skipped."""
    for match in _APPROVAL_PROMISE.finditer(description):
        if not _NEGATED.search(description, 0, match.start()):
            return match
    return None


SHOWN = 80  # characters of each side of a changed description


def _clip(text: str, start: int, end: int, width: int = SHOWN) -> str:
    """`text[start:end]`, at most `width` characters, with "…" where text was left out."""
    segment = text[start:end].strip()
    cut = len(segment) > width
    if cut:
        segment = segment[: width - 1].rstrip() + "…"
    return ("…" if start > 0 else "") + segment + ("…" if end < len(text) and not cut else "")


def _around(text: str, start: int, end: int, width: int = SHOWN) -> str:
    """The words around `text[start:end]`, about `width` characters."""
    room = max(0, width - (end - start)) // 2
    lo = max(0, start - room)
    if lo > 0:
        lo = text.find(" ", lo) + 1 or lo
    hi = min(len(text), end + room)
    return _clip(text, lo, hi, width)


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters `a` and `b` share."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def describe_change(old: str, new: str, width: int = SHOWN) -> str:
    """“old” → “new”, shortened to the part that changed (with a little context), for a review."""
    old, new = " ".join(old.split()), " ".join(new.split())
    if not old:
        return f"description added: “{_clip(new, 0, len(new), width)}”"
    if not new:
        return f"description removed (was “{_clip(old, 0, len(old), width)}”)"
    prefix = _common_prefix(old, new)
    limit = min(len(old), len(new)) - prefix
    suffix = min(limit, _common_prefix(old[::-1], new[::-1]))
    start = 0
    if prefix > 20:  # keep a few words before the change
        start = old.find(" ", prefix - 20) + 1 or prefix
        start = min(start, prefix)
    context = 20
    old_end = min(len(old), len(old) - suffix + context)
    new_end = min(len(new), len(new) - suffix + context)
    return f"“{_clip(old, start, old_end, width)}” → “{_clip(new, start, new_end, width)}”"


def diff_surfaces(old: dict[str, Surface], new: dict[str, Surface]) -> DiffResult:
    """All changes between two sets of surfaces, risky ones first, then by API and tool."""
    result = DiffResult()
    for api in sorted(set(old) | set(new)):
        o, n = old.get(api), new.get(api)
        if o is None and n is not None:
            result.changes.append(Change(api, "*", "api-added", False, f"{len(n.rows)} tools"))
        if n is None and o is not None:
            result.changes.append(Change(api, "*", "api-removed", True, f"{len(o.rows)} tools removed"))
        o = o or Surface(api, {}, {})
        n = n or Surface(api, {}, {})
        result.tokens[api] = (o.tokens() if o.tools else 0, n.tokens() if n.tools else 0)
        result.tools[api] = (len(o.rows), len(n.rows))
        if api not in old or api not in new:
            continue
        removed = sorted(set(o.rows) - set(n.rows))
        added = sorted(set(n.rows) - set(o.rows))
        pairs: list[tuple[str, str]] = []
        for old_name in list(removed):
            key = (_op(o.rows[old_name]), o.rows[old_name].mode)
            match = next((a for a in added if (_op(n.rows[a]), n.rows[a].mode) == key), None)
            if match is not None:
                pairs.append((old_name, match))
                removed.remove(old_name)
                added.remove(match)
        for name in removed:
            row = o.rows[name]
            result.changes.append(
                Change(
                    api, name, "tool-removed", True, f"{row.mode} tool for {_op(row)} removed (callers break)"
                )
            )
        for name in added:
            row = n.rows[name]
            writes = row.mode == "record"
            detail = f"new {row.effect} tool for {_op(row)}" + (
                f", approval {row.approval}" if writes else ""
            )
            result.changes.append(Change(api, name, "tool-added", writes, detail))
        for old_name, new_name in pairs:
            result.changes.append(
                Change(
                    api,
                    new_name,
                    "tool-renamed",
                    True,
                    f"`{old_name}` → `{new_name}` ({_op(n.rows[new_name])}; callers break)",
                )
            )
            result.changes.extend(
                compare_tool(
                    api,
                    new_name,
                    o.rows[old_name],
                    n.rows[new_name],
                    o.tools.get(old_name),
                    n.tools.get(new_name),
                )
            )
        for name in sorted(set(o.rows) & set(n.rows)):
            result.changes.extend(
                compare_tool(api, name, o.rows[name], n.rows[name], o.tools.get(name), n.tools.get(name))
            )
        result.changes.extend(_caller_changes(api, o, n))
    result.changes.sort(key=lambda c: (not c.risky, c.api, c.tool, c.kind))
    return result


def _caller_changes(api: str, old: Surface, new: Surface) -> list[Change]:
    """A tool model-written code may now call is risky (a loop in code calls it unseen); one it may no
    longer call is not."""
    out = [
        Change(api, name, "code-callers-added", True, "model-written code may now call it (allowed_callers)")
        for name in sorted(new.coded - old.coded)
    ]
    out += [
        Change(api, name, "code-callers-removed", False, "only called directly now")
        for name in sorted(old.coded - new.coded)
        if name in new.rows
    ]
    return out


# ---------------------------------------------------------------------------------------------
# rendering


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _table(changes: list[Change]) -> list[str]:
    lines = ["| tool | change | details |", "|---|---|---|"]
    for c in changes:
        tool = "(API)" if c.tool == "*" else f"`{_cell(c.tool)}`"
        lines.append(f"| {tool} | {c.kind.replace('-', ' ')} | {_cell(c.detail)} |")
    return lines


def render_markdown(result: DiffResult, base: str, head: str) -> str:
    """A PR comment: summary line, risky changes (a table per API), other changes, catalog sizes."""
    risky = result.risky
    other = [c for c in result.changes if not c.risky]
    old_total = sum(o for o, _ in result.tokens.values())
    new_total = sum(n for _, n in result.tokens.values())
    lines = [f"## toolgen: tool surface diff (`{base}` → `{head}`)", ""]
    if not result.changes:
        lines += ["No changes to the generated tool surface.", ""]
    else:
        lines += [
            (
                f"**{len(risky)} risky change{'s' if len(risky) != 1 else ''}**, {len(other)} other "
                f"change{'s' if len(other) != 1 else ''}; MCP catalog {old_total:,} → {new_total:,} o200k tokens "
                f"({new_total - old_total:+,})."
            ),
            "",
        ]
    for title, changes in (("Risky changes", risky), ("Other changes", other)):
        if not changes:
            continue
        lines += [f"### {title}", ""]
        for api in sorted({c.api for c in changes}):
            lines += [f"**{_cell(api)}**", "", *_table([c for c in changes if c.api == api]), ""]
    lines += ["### Catalog size", "", "| API | tools | MCP tokens (o200k) | Δ |", "|---|---|---|---|"]
    for api in sorted(result.tokens):
        (ot, nt), (oc, nc) = result.tokens[api], result.tools[api]
        lines.append(f"| {_cell(api)} | {oc} → {nc} | {ot:,} → {nt:,} | {nt - ot:+,} |")
    return "\n".join(lines) + "\n"


def render_json(result: DiffResult, base: str, head: str) -> str:
    return (
        json.dumps(
            {
                "format": 1,
                "base": base,
                "head": head,
                "risky": len(result.risky),
                "changes": [c.to_json() for c in result.changes],
                "apis": {
                    api: {
                        "tools": {"old": result.tools[api][0], "new": result.tools[api][1]},
                        "tokens": {"old": o, "new": n, "delta": n - o},
                    }
                    for api, (o, n) in sorted(result.tokens.items())
                },
            },
            indent=2,
            sort_keys=True,
            ensure_ascii=False,
        )
        + "\n"
    )


__all__ = [
    "Change",
    "DiffResult",
    "diff_surfaces",
    "render_json",
    "render_markdown",
]
