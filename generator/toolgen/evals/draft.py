"""`toolgen eval init`: draft an eval task file from a generated package.

Input: the package's ``policy.json`` (rows: tool, intent, mode, effect, operation, idempotency) and
``mcp.json`` (descriptions and canonical input schemas). Output: a `TaskFile` (pure; the CLI writes
it with `toolgen.evals.tasks.dump_tasks`). Deterministic: the same package gives the same file.

Per intent (a read tool, or a write's ``preview_*``/``record_*`` pair):

- 5 ``positive`` tasks: five phrasings built from the intent's name and the first sentence of its
  description, with argument values taken from the schema (an ``e.g. `X``` in a description, an
  enum, a format, a bound; the last resort is ``example-<name>``). The expected tool is the one a
  model calls first (``preview_*`` for a previewed write), each value a predicate on it;
- 3 negatives: ``near_neighbour`` (the prompt of the intent whose operation path and name are
  closest: that one is right, this one is not), ``no_tool`` (a general question no call answers),
  ``read_only`` (the user asks to look, never to change: a read is expected and no write);
- 1 ``multi_step`` task per previewed write: preview, the scripted human approves, record;
  expected: exactly one write.

Composite tools (rows with no operation, docs/composites.md) are not drafted: a task that calls one
needs the runtime that executes composite plans.

Drafts are templated, not written by a person: review and edit them (docs/eval.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .tasks import Constraint, Task, TaskFile, split_for

POSITIVES = 5
_EXAMPLE = re.compile(r"e\.g\.,? `([^`]+)`|e\.g\.,? ([A-Za-z0-9_\-]+[0-9][A-Za-z0-9_\-]*)")
_RECORD_PREFIX = re.compile(r"^.*?record_[a-z0-9_]+: ", re.DOTALL)


@dataclass(frozen=True)
class _Intent:
    name: str
    entry: str  # the tool a model calls first
    write: bool
    previewed: bool
    path: tuple[str, ...]
    sentence: str
    schema: Mapping[str, Any]
    skip: frozenset[str]  # arguments the runtime fills in (preview_id, idempotency key)


def draft_tasks(policy: Mapping[str, Any], catalog: Sequence[Mapping[str, Any]], *, package: str) -> TaskFile:
    """The drafted `TaskFile` for the package (`package`: its folder, as the task file will name it)."""
    api = str(policy.get("api", ""))
    intents = _intents(policy, catalog)
    tasks: list[Task] = []
    by_name = {i.name: i for i in intents}
    for intent in intents:
        for n in range(POSITIVES):
            prompt, constraints = _prompt(intent, n)
            tasks.append(
                _task(
                    api,
                    f"{intent.name}/positive/{n + 1}",
                    intent.name,
                    "positive",
                    prompt,
                    intent.entry,
                    constraints,
                )
            )
        neighbour = _neighbour(intent, intents)
        if neighbour is not None:
            prompt, constraints = _prompt(by_name[neighbour], 0)
            tasks.append(
                _task(
                    api,
                    f"{intent.name}/near_neighbour",
                    intent.name,
                    "near_neighbour",
                    prompt,
                    by_name[neighbour].entry,
                    constraints,
                )
            )
        other = f" and {neighbour.replace('_', ' ')}" if neighbour else ""
        tasks.append(
            _task(
                api,
                f"{intent.name}/no_tool",
                intent.name,
                "no_tool",
                f"Without looking anything up or changing anything: in one sentence, what is the "
                f"difference between {_human(intent.name)}{other} in general?",
                None,
                (),
            )
        )
        tasks.append(_read_only(api, intent, intents))
        if intent.previewed:
            prompt, constraints = _prompt(intent, 1)
            tasks.append(
                _task(
                    api,
                    f"{intent.name}/multi_step",
                    intent.name,
                    "multi_step",
                    f"{prompt} Show me the preview first; once I approve it, go ahead.",
                    intent.entry,
                    constraints,
                    writes=1,
                    approve=True,
                )
            )
    return TaskFile(api=api, package=package, tasks=tuple(tasks))


def _task(  # noqa: PLR0913
    api: str,
    task_id: str,
    tool: str,
    kind: Any,
    prompt: str,
    expect: str | None,
    constraints: Sequence[Constraint],
    *,
    writes: int = 0,
    approve: bool = False,
) -> Task:
    return Task(
        id=task_id,
        tool=tool,
        kind=kind,
        prompt=prompt,
        expect_tool=expect,
        constraints=tuple(constraints),
        writes=writes,
        approve=approve,
        split=split_for(api, task_id),
    )


def _intents(policy: Mapping[str, Any], catalog: Sequence[Mapping[str, Any]]) -> list[_Intent]:
    entries = {str(t["name"]): t for t in catalog}
    rows: dict[str, list[Mapping[str, Any]]] = {}
    for row in policy.get("tools", []):
        if row.get("composite") is not None:
            continue
        rows.setdefault(str(row.get("intent") or row["tool"]), []).append(row)
    out: list[_Intent] = []
    for name in sorted(rows):
        group = {str(r.get("mode")): r for r in rows[name]}
        first = group.get("preview") or group.get("record") or group.get("read") or rows[name][0]
        entry = str(first["tool"])
        described = group.get("record") or first
        description = str(entries.get(str(described["tool"]), {}).get("description", ""))
        idem = (described.get("idempotency") or {}).get("arg")
        skip = frozenset(k for k in ("preview_id", idem) if isinstance(k, str))
        out.append(
            _Intent(
                name=name,
                entry=entry,
                write="record" in group,
                previewed="preview" in group,
                path=tuple(p for p in str((first.get("operation") or {}).get("path", "")).split("/") if p),
                sentence=_sentence(description, name),
                schema=entries.get(entry, {}).get("inputSchema") or {},
                skip=skip,
            )
        )
    return out


def _sentence(description: str, name: str) -> str:
    text = re.sub(r"\s*\([^)]*\)", "", _RECORD_PREFIX.sub("", description)).strip()
    first = re.split(r"(?<=[.!?;:])\s", text, maxsplit=1)[0].rstrip(".!?;: ")
    if not first:
        return _human(name)
    return first[0].lower() + first[1:]


def _human(name: str) -> str:
    return name.replace("_", " ")


def _value(name: str, schema: Mapping[str, Any], n: int) -> Any:
    """A value for argument `name` (variant `n`), from its schema; None when none can be made."""
    types = schema.get("type")
    kind = types if isinstance(types, str) else next((t for t in types or [] if t != "null"), None)
    enum = [v for v in schema.get("enum") or [] if v is not None]
    if enum:
        return enum[n % len(enum)]
    if kind in ("integer", "number"):
        low = schema.get("minimum", 1)
        high = schema.get("maximum", 10_000)
        value = min(max(int(low), 12 + n), int(high))
        return value if kind == "integer" else float(value)
    if kind == "boolean":
        return n % 2 == 0
    if kind != "string":
        return None
    fmt = schema.get("format")
    if fmt == "date-time":
        return f"2025-03-{n + 1:02d}T12:00:00Z"
    if fmt == "date":
        return f"2025-03-{n + 1:02d}"
    found = _EXAMPLE.search(str(schema.get("description", "")))
    if found:
        example = found.group(1) or found.group(2)
        digits = re.search(r"[0-9]+$", example)
        if digits:
            return example[: digits.start()] + str(int(digits.group()) + n)
        return example
    if name in ("body", "text", "message", "comment", "note", "description", "reason", "title"):
        return f"Thanks for the report, we are on it (note {n + 1})"
    return f"example-{name.replace('_', '-')}-{n + 1}"


def _arguments(intent: _Intent, n: int) -> list[tuple[str, Any]]:
    props: Mapping[str, Any] = intent.schema.get("properties") or {}
    required = [r for r in intent.schema.get("required") or [] if r in props and r not in intent.skip]
    out: list[tuple[str, Any]] = []
    for name in required:
        value = _value(name, props[name], n)
        if value is not None:
            out.append((name, value))
    return out


def _prompt(intent: _Intent, n: int) -> tuple[str, list[Constraint]]:
    args = _arguments(intent, n)
    phrase = ", ".join(f"{_human(k)} {v if not isinstance(v, bool) else str(v).lower()}" for k, v in args)
    constraints = [
        Constraint(f"/{k}", "contains" if isinstance(v, str) and " " in v else "equals", v) for k, v in args
    ]
    s, h = intent.sentence, _human(intent.name)
    with_args = f" for {phrase}" if phrase else ""
    templates = (
        f"{s[0].upper()}{s[1:]}{': ' + phrase if phrase else ''}.",
        f"Please {h}{with_args}.",
        f"I need to {s}{' — ' + phrase if phrase else ''}.",
        f"Could you {h}?{' Use ' + phrase + '.' if phrase else ''}",
        f"{h[0].upper()}{h[1:]} now{', ' + phrase if phrase else ''}.",
    )
    return templates[n % len(templates)], constraints


def _closeness(a: _Intent, b: _Intent) -> tuple[int, int]:
    common = 0
    for x, y in zip(a.path, b.path, strict=False):  # the shared leading segments of two paths
        if x != y:
            break
        common += 1
    words = len(set(a.name.split("_")) & set(b.name.split("_")))
    return common + words, -len(b.path)


def _neighbour(intent: _Intent, intents: Sequence[_Intent]) -> str | None:
    others = [o for o in intents if o.name != intent.name]
    if not others:
        return None
    return max(others, key=lambda o: (_closeness(intent, o), [-ord(c) for c in o.name])).name


def _read_only(api: str, intent: _Intent, intents: Sequence[_Intent]) -> Task:
    task_id = f"{intent.name}/read_only"
    if not intent.write:
        prompt, constraints = _prompt(intent, 2)
        return _task(
            api,
            task_id,
            intent.name,
            "read_only",
            f"Just look, do not change anything: {prompt}",
            intent.entry,
            constraints,
        )
    reads = [o for o in intents if not o.write]
    if not reads:
        return _task(
            api,
            task_id,
            intent.name,
            "read_only",
            f"Do not change anything: only tell me what {_human(intent.name)} would do.",
            None,
            (),
        )
    read = max(reads, key=lambda o: (_closeness(intent, o), [-ord(c) for c in o.name]))
    mine = dict(_arguments(intent, 0))
    args = [(k, mine.get(k, v)) for k, v in _arguments(read, 0)]
    phrase = ", ".join(f"{_human(k)} {v}" for k, v in args)
    constraints = [Constraint(f"/{k}", "equals", v) for k, v in args if not (isinstance(v, str) and " " in v)]
    prompt = (
        f"Before anyone does anything ({_human(intent.name)}), only show me the current state"
        f"{' for ' + phrase if phrase else ''}. Do not change anything."
    )
    return _task(api, task_id, intent.name, "read_only", prompt, read.entry, constraints)
