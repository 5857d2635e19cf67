"""Draft eval tasks from the failed calls of an audit log, so production failures become regression tasks.

Input: the lines of a JSON-lines audit log (`toolgen.runtime.audit.JsonlAuditSink`: one `AuditEvent`
per decision, never an argument value) and the generated package's policy rows and tools. Output: a
`TaskFile` of draft tasks (`toolgen.evals.tasks`), at most `PER_FAILURE` per tool and failure, in the
order the failures happened, each marked as a draft: its prompt says which call failed and asks a
human to write the request the user made (the log holds no prompt and no argument value), and its
`expect` is a first guess to check.

Failures drafted (the call's ``result``/``error`` event, with the step that refused it):

- ``invalid_arguments``: the model chose the tool but filled it wrong -> a ``positive`` task expecting
  that tool (the argument's JSON pointer named in the prompt);
- ``unknown_tool``: the model called a tool that is not there -> a ``no_tool`` task (to relabel when
  another tool was right);
- ``permission_denied``: the model called a tool its caller may not use -> a ``no_tool`` task;
- ``approval_required`` and the other approval refusals on a record tool, a ``preview_id`` it does not
  know (``preview_not_found``, ``preview_expired``), and ``result_unknown`` (a
  write whose outcome is not known): the write should go preview -> approval -> record -> a
  ``multi_step`` task expecting the preview tool, one write, approved.

Other failures (the API's own errors, timeouts of reads) say nothing about the model and are not
drafted, nor is a call that named no tool (an empty or blank name: a task needs one). A line that
is not an audit event is a located ``eval-audit`` error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..diagnostics import DiagnosticError, SourceLocation
from .tasks import Kind, Task, TaskFile, split_for

#: tasks drafted per tool and failure code (the first ones in the log)
PER_FAILURE = 3
_APPROVAL_CODES = frozenset(
    {"approval_required", "approval_mismatch", "approval_used", "preview_not_found", "preview_expired"}
)
DRAFTED_CODES = frozenset(
    {"invalid_arguments", "unknown_tool", "permission_denied", "result_unknown", *_APPROVAL_CODES}
)
_ID_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class FailedCall:
    """One failed call of the log: its id, tool, error code, the step that refused it, the argument
    pointer a validation error names (no value), when (Unix seconds) and the log line of its result."""

    call_id: str
    tool: str
    code: str
    step: str
    pointer: str | None
    ts: float
    line: int


def failed_calls(lines: Iterable[str], display: str) -> list[FailedCall]:
    """The failed calls of an audit log's `lines` (`display` names the file in errors), in log order.
    Raises `DiagnosticError` (``eval-audit``, file:line) for a line that is not a JSON audit event (JSON
    nested too deep included) or whose result's ``ts`` is a number that is no Unix time."""
    steps: dict[str, dict[str, Any]] = {}  # call id -> the last refusing event before its result
    out: list[FailedCall] = []
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            event = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deep"
            raise _bad(display, number, f"not JSON ({why})") from None
        if not isinstance(event, dict) or not all(
            isinstance(event.get(k), str) for k in ("call_id", "tool", "step", "decision")
        ):
            raise _bad(display, number, "not an audit event (call_id, tool, step and decision are strings)")
        call = event["call_id"]
        if event["step"] == "result":
            code = event.get("code")
            if event["decision"] == "error" and isinstance(code, str):
                refusal = steps.pop(call, {})
                raw_detail = refusal.get("detail")
                detail: dict[str, Any] = raw_detail if isinstance(raw_detail, dict) else {}
                pointer = detail.get("pointer") if isinstance(detail.get("pointer"), str) else None
                ts = _time(event.get("ts"))
                if ts is None:
                    raise _bad(display, number, "`ts` is not a Unix time in seconds (1970 to 9999)")
                out.append(
                    FailedCall(
                        call, event["tool"], code, str(refusal.get("step", "result")), pointer, ts, number
                    )
                )
            steps.pop(call, None)
        elif event["decision"] in ("deny", "fail"):
            steps[call] = event
    return out


#: the last second a ``ts`` may name (9999-12-31T23:59:59Z: `datetime`'s last year)
LAST_TS = 253_402_300_799.0


def _time(raw: Any) -> float | None:
    """An event's ``ts`` as Unix seconds: 0.0 (an unknown time) when it is absent or no number, None
    when it is a number no time has (beyond a double, before 1970, after `LAST_TS`, NaN)."""
    if not isinstance(raw, int | float) or isinstance(raw, bool):
        return 0.0
    try:
        ts = float(raw)
    except OverflowError:
        return None
    return ts if 0.0 <= ts <= LAST_TS else None


def _bad(display: str, line: int, why: str) -> DiagnosticError:
    return DiagnosticError.one(
        "eval-audit",
        f"audit log line {line}: {why}",
        SourceLocation(display, line, 1),
        "pass the JSON-lines file `--audit-log` wrote (one event per line)",
    )


def draft_from_audit(
    calls: Iterable[FailedCall],
    api: str,
    package: str,
    tools: Mapping[str, Mapping[str, Any]],
    rows: Mapping[str, Mapping[str, Any]],
) -> TaskFile:
    """Draft tasks (see the module docstring) for the failed `calls` of the package whose tools
    (name -> MCP tool) and policy rows (name -> row) are given. Raises ValueError when no call is a
    failure this drafts (a task file holds at least one task)."""
    counts: dict[tuple[str, str], int] = {}
    numbers: dict[str, int] = {}  # id stem -> last number: names a model sent may share a stem
    tasks: list[Task] = []
    for call in calls:
        if call.code not in DRAFTED_CODES or not call.tool.strip():  # a call naming no tool: no task's tool
            continue
        key = (call.tool, call.code)
        counts[key] = counts.get(key, 0) + 1
        if counts[key] > PER_FAILURE:
            continue
        stem = f"audit/{_ID_SAFE.sub('_', call.tool)[:64] or 'tool'}/{call.code}"
        numbers[stem] = numbers.get(stem, 0) + 1
        task_id = f"{stem}/{numbers[stem]}"
        kind, expect, writes, approve = _expectation(call, tools, rows)
        tasks.append(
            Task(
                id=task_id,
                tool=call.tool,
                kind=kind,
                prompt=_prompt(call, expect),
                expect_tool=expect,
                constraints=(),
                writes=writes,
                approve=approve,
                split=split_for(api, task_id),
            )
        )
    if not tasks:
        raise ValueError(
            "the audit log holds no failed call to draft (invalid arguments, an unknown tool, a "
            "denied call, an approval refused or an unknown outcome)"
        )
    return TaskFile(api=api, package=package, tasks=tuple(tasks))


def _expectation(
    call: FailedCall, tools: Mapping[str, Any], rows: Mapping[str, Mapping[str, Any]]
) -> tuple[Kind, str | None, int, bool]:
    """(kind, expected tool, writes, approve) guessed for `call`."""
    row = rows.get(call.tool) or {}
    if call.code in _APPROVAL_CODES or call.code == "result_unknown":
        pair = row.get("pair")
        if row.get("mode") == "record" and isinstance(pair, str) and pair in tools:
            return "multi_step", pair, 1, True
        return "positive", call.tool if call.tool in tools else None, 0, False
    if call.code == "invalid_arguments" and call.tool in tools:
        return "positive", call.tool, 0, False
    return "no_tool", None, 0, False


def _prompt(call: FailedCall, expect: str | None) -> str:
    when = (
        datetime.fromtimestamp(call.ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        if call.ts
        else "an unknown time"
    )
    where = f" at {call.pointer}" if call.pointer else ""
    guess = f"expect {expect}" if expect else "expect no tool"
    return (
        f"DRAFT, label me: replace this with the request the user made when `{call.tool}` failed with "
        f"{call.code} (step {call.step}{where}; call {call.call_id}, {when}), then check `expect` "
        f"(drafted: {guess})."
    )
