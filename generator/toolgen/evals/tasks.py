"""The eval task file: what a model is asked, which tool it should pick, and what its arguments must hold.

Input: the YAML text of a task file (``evals/<api>.yaml``, docs/eval.md "Task file") and, to check
tool names and argument pointers, the tools of the generated package it names. Output: a frozen
`TaskFile`, or a `DiagnosticError` whose diagnostics each name ``file:line:col``, the JSON pointer of
the offending node and what to do. `dump_tasks` writes a `TaskFile` back as YAML, deterministically.

Format (``toolgen_eval: 1``)::

    toolgen_eval: 1
    api: tickets
    package: ../generated/tickets        # the generated package, relative to this file
    tasks:
      - id: get_ticket/positive/1        # unique; also decides the split
        tool: get_ticket                 # the tool (or intent) this task is about
        kind: positive                   # positive | near_neighbour | no_tool | read_only | multi_step
        prompt: Show me ticket T-102.
        expect:
          tool: get_ticket               # the first tool the model should call; null: no tool at all
          args:                          # predicates on that call's arguments, by JSON pointer
            - {pointer: /ticket_id, equals: T-102}
          writes: 0                      # upstream writes the task must end with (multi_step: 1)
        approve: false                   # does the scripted human approve previews in this task
        split: dev                       # dev | held-out: fixed by `split_for`, never chosen by hand

Predicates: ``equals`` (the value, compared as JSON), ``contains`` (a substring of a string, or an
item of an array), ``present`` (true: the member is there and not null; false: absent or null).

The split rule (`split_for`): a task is ``held-out`` when the first four bytes of
SHA-256(``"<api>:<id>"``), read as a big-endian integer, are divisible by 5 (about one task in five),
else ``dev``. A `split` written in the file must agree with the rule, so nobody moves a task into or
out of the held-out set after seeing results.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from ..compile.sourcemap import locate_yaml, yaml_nodes
from ..diagnostics import Diagnostic, DiagnosticError, SourceLocation, display_path
from ..pointer import parse_pointer
from ..shown_text import terminal_safe

FORMAT = 1
KINDS = ("positive", "near_neighbour", "no_tool", "read_only", "multi_step")
SPLITS = ("dev", "held-out")
PREDICATES = ("equals", "contains", "present")

Kind = Literal["positive", "near_neighbour", "no_tool", "read_only", "multi_step"]
Split = Literal["dev", "held-out"]


def split_for(api: str, task_id: str) -> Split:
    """``held-out`` when SHA-256(``"<api>:<task_id>"``)[:4] (big-endian) is divisible by 5, else ``dev``."""
    digest = hashlib.sha256(f"{api}:{task_id}".encode()).digest()
    return "held-out" if int.from_bytes(digest[:4], "big") % 5 == 0 else "dev"


@dataclass(frozen=True)
class Constraint:
    """One predicate on the expected call's arguments: `op` (equals / contains / present) at `pointer`."""

    pointer: str
    op: str
    value: Any

    def holds(self, args: Any) -> bool:
        """Whether `args` (the call's JSON arguments) satisfy this predicate; never raises."""
        node: Any = args
        found = True
        for token in parse_pointer(self.pointer):
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                found = False
                break
        if self.op == "present":
            return (found and node is not None) == bool(self.value)
        if not found:
            return False
        if self.op == "equals":
            return _canon(node) == _canon(self.value)
        if isinstance(node, str):
            return isinstance(self.value, str) and self.value.casefold() in node.casefold()
        if isinstance(node, list):
            return any(_canon(item) == _canon(self.value) for item in node)
        return False

    def to_json(self) -> dict[str, Any]:
        return {"pointer": self.pointer, self.op: self.value}


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Task:
    """One eval task (see the module docstring for the meaning of each field)."""

    id: str
    tool: str
    kind: Kind
    prompt: str
    expect_tool: str | None
    constraints: tuple[Constraint, ...]
    writes: int
    approve: bool
    split: Split

    def to_json(self) -> dict[str, Any]:
        expect: dict[str, Any] = {"tool": self.expect_tool}
        if self.constraints:
            expect["args"] = [c.to_json() for c in self.constraints]
        expect["writes"] = self.writes
        return {
            "id": self.id,
            "tool": self.tool,
            "kind": self.kind,
            "prompt": self.prompt,
            "expect": expect,
            "approve": self.approve,
            "split": self.split,
        }


@dataclass(frozen=True)
class TaskFile:
    """A loaded task file: the API, the package folder (resolved against the file) and its tasks."""

    api: str
    package: str
    tasks: tuple[Task, ...]
    path: Path | None = None

    def package_dir(self) -> Path:
        base = self.path.parent if self.path is not None else Path.cwd()
        return (base / self.package).resolve()


_HEADER = (
    "# toolgen eval tasks (docs/eval.md). Drafted by `toolgen eval init`; edit and review them.\n"
    "# `split` follows the fixed hash rule of the format; do not change it by hand.\n"
)


def dump_tasks(tasks: TaskFile, header: str = _HEADER) -> str:
    """The YAML text of `tasks` after the comment lines `header`: byte-identical for equal inputs
    (keys in a fixed order)."""
    body = {
        "toolgen_eval": FORMAT,
        "api": tasks.api,
        "package": tasks.package,
        "tasks": [t.to_json() for t in tasks.tasks],
    }
    return header + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=110)


class _Locator:
    def __init__(self, text: str, display: str) -> None:
        self.display = display
        self.root: Any = None
        for loader in (None, yaml.SafeLoader):  # the C loader refuses some escapes PyYAML's reads (\ud800)
            try:
                self.root = yaml_nodes(text, loader)
                break
            except yaml.YAMLError:
                continue

    def at(self, pointer: str) -> SourceLocation:
        if self.root is None:
            return SourceLocation(self.display, pointer=pointer)
        line, col = locate_yaml(self.root, parse_pointer(pointer))
        return SourceLocation(self.display, line, col, pointer)


def load_tasks(path: Path, tool_schemas: Mapping[str, Mapping[str, Any]] | None = None) -> TaskFile:
    """Load and validate the task file at `path`.

    `tool_schemas` (tool name → input JSON Schema) checks each expected tool and the first token of
    each argument pointer; without it the package the file names is read (``mcp.json``). A YAML
    anchor or alias, and a task id that could not name a file (control, format or surrogate
    characters; over `MAX_ID_BYTES` bytes), are refused. Raises `DiagnosticError` listing every problem (codes ``eval-yaml``, ``eval-format``, ``eval-field``,
    ``eval-duplicate``, ``eval-split``, ``eval-tool``, ``eval-pointer``, ``eval-package``)."""
    display = display_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DiagnosticError.one(
            "eval-yaml",
            f"cannot read the task file: {exc.strerror}",
            SourceLocation(display),
            "check the path",
        ) from None
    try:
        _refuse_anchors(text, display)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = SourceLocation(display, mark.line + 1, mark.column + 1) if mark else SourceLocation(display)
        raise DiagnosticError.one(
            "eval-yaml",
            f"not valid YAML: {getattr(exc, 'problem', exc)}",
            where,
            "fix the YAML syntax at this position",
        ) from None
    loc = _Locator(text, display)
    errors: list[Diagnostic] = []

    def fail(code: str, pointer: str, message: str, hint: str) -> None:
        errors.append(Diagnostic(code, "error", message, loc.at(pointer), hint))

    if not isinstance(data, dict):
        fail("eval-format", "", "a task file is a mapping", "start from `toolgen eval init API`")
        raise DiagnosticError(errors)
    if data.get("toolgen_eval") != FORMAT:
        fail(
            "eval-format",
            "/toolgen_eval",
            f"toolgen_eval must be {FORMAT}",
            f"write `toolgen_eval: {FORMAT}`",
        )
    api, package = data.get("api"), data.get("package")
    for key, value in (("api", api), ("package", package)):
        if not isinstance(value, str) or not value:
            fail(
                "eval-field",
                f"/{key}",
                f"`{key}` must be a non-empty string",
                "name the API and the generated package folder (relative to this file)",
            )
    raw_tasks = data.get("tasks")
    if not isinstance(raw_tasks, list) or not raw_tasks:
        fail("eval-field", "/tasks", "`tasks` must be a non-empty list", "add at least one task")
        raise DiagnosticError(errors)
    if errors:
        raise DiagnosticError(errors)
    assert isinstance(api, str) and isinstance(package, str)
    if tool_schemas is None:
        tool_schemas = _package_schemas(path.parent / package, loc, errors)
    seen: dict[str, int] = {}
    tasks: list[Task] = []
    for i, raw in enumerate(raw_tasks):
        task = _task(api, raw, f"/tasks/{i}", tool_schemas, fail)
        if task is None:
            continue
        if task.id in seen:
            fail(
                "eval-duplicate",
                f"/tasks/{i}/id",
                f"task id {task.id!r} repeats /tasks/{seen[task.id]}",
                "give every task its own id",
            )
            continue
        seen[task.id] = i
        tasks.append(task)
    if errors:
        raise DiagnosticError(errors)
    return TaskFile(api=api, package=package, tasks=tuple(tasks), path=path)


def _refuse_anchors(text: str, display: str) -> None:
    """Raise a located `DiagnosticError` (``eval-yaml``) at the first YAML anchor or alias of `text`:
    a task file is short and written out in full, and aliases can make a file of a few hundred bytes
    expand to billions of values when read (the "billion laughs"). Reads parse events only (nothing
    is built); a syntax error raises `yaml.YAMLError`, which `load_tasks` locates."""
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        anchor = getattr(event, "anchor", None)
        if anchor is not None:  # an AliasEvent's anchor is the name it refers to
            mark = event.start_mark
            what = f"the alias *{anchor}" if isinstance(event, yaml.AliasEvent) else f"the anchor &{anchor}"
            raise DiagnosticError.one(
                "eval-yaml",
                f"{what}: a task file may not use YAML anchors or aliases (a few aliases can expand to "
                "billions of values when the file is read)",
                SourceLocation(display, mark.line + 1, mark.column + 1) if mark else SourceLocation(display),
                "write each value out in full, without & anchors or * aliases",
            )


#: The longest task id: its exchange file (`toolgen.evals.runner`, every ``/`` written ``--``, plus
#: ``.json``) must be a file name every file system takes (255 bytes).
MAX_ID_BYTES = 200
_UNSAFE_ID = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _id_problem(task_id: str) -> str | None:
    """Why `task_id` cannot be a task id, or None: it names a file and is printed in reports, so it
    holds no control, format, surrogate, private-use, unassigned or line-separator character and its
    file name (``/`` as ``--``) is at most `MAX_ID_BYTES` bytes of UTF-8."""
    bad = next((c for c in task_id if unicodedata.category(c) in _UNSAFE_ID), None)
    if bad is not None:
        return f"holds the character U+{ord(bad):04X} ({unicodedata.category(bad)}), which a file name or report cannot show"
    size = len(task_id.replace("/", "--").encode("utf-8"))
    if size > MAX_ID_BYTES:
        return f"is {size} bytes long as a file name (each / counts as --); at most {MAX_ID_BYTES}"
    return None


def _package_schemas(folder: Path, loc: _Locator, errors: list[Diagnostic]) -> dict[str, Mapping[str, Any]]:
    try:
        catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        errors.append(
            Diagnostic(
                "eval-package",
                "error",
                f"no generated package at {display_path(folder)}",
                loc.at("/package"),
                "run `toolgen build`, or fix `package` (relative to this file)",
            )
        )
        raise DiagnosticError(errors) from None
    return {str(t["name"]): t.get("inputSchema") or {} for t in catalog}


def _task(api: str, raw: Any, at: str, schemas: Mapping[str, Mapping[str, Any]], fail: Any) -> Task | None:
    if not isinstance(raw, dict):
        fail("eval-field", at, "a task is a mapping", "write id, tool, kind, prompt and expect")
        return None
    ok = True
    for key in ("id", "tool", "prompt"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            fail(
                "eval-field",
                f"{at}/{key}" if key in raw else at,
                f"`{key}` must be a non-empty string",
                f"give the task a `{key}`",
            )
            ok = False
    problem = _id_problem(raw["id"]) if isinstance(raw.get("id"), str) and raw["id"].strip() else None
    if problem is not None:
        fail(
            "eval-field",
            f"{at}/id",
            f"task id {terminal_safe(raw['id'][:60])!r} {problem}",
            "use a short id of letters, digits, '_', '-' and '/' (e.g. get_ticket/positive/1)",
        )
        ok = False
    kind = raw.get("kind")
    if kind not in KINDS:
        fail(
            "eval-field",
            f"{at}/kind" if "kind" in raw else at,
            f"`kind` must be one of {', '.join(KINDS)}",
            "positive: the tool is right; near_neighbour: another tool is; no_tool: none is; read_only: "
            "a read is asked, nothing may be written; multi_step: preview, approval, record",
        )
        ok = False
    expect = raw.get("expect")
    if not isinstance(expect, dict) or "tool" not in expect:
        fail(
            "eval-field",
            f"{at}/expect" if "expect" in raw else at,
            "`expect` must be a mapping with `tool`",
            "write `expect: {tool: NAME}` (or `tool: null` when no tool should be called)",
        )
        return None
    tool = expect.get("tool")
    if tool is not None and (not isinstance(tool, str) or tool not in schemas):
        fail(
            "eval-tool",
            f"{at}/expect/tool",
            f"expected tool {tool!r} is not in the package",
            f"name one of the package's tools ({', '.join(sorted(schemas)[:6])}...) or null",
        )
        ok = False
    writes = expect.get("writes", 0)
    if not isinstance(writes, int) or isinstance(writes, bool) or writes < 0:
        fail(
            "eval-field",
            f"{at}/expect/writes",
            "`writes` must be a whole number >= 0",
            "the number of upstream writes the task must end with",
        )
        ok = False
    constraints: list[Constraint] = []
    raw_args = expect.get("args", [])
    if not isinstance(raw_args, list):
        fail(
            "eval-field",
            f"{at}/expect/args",
            "`args` must be a list of predicates",
            "write `- {pointer: /name, equals: value}`",
        )
        raw_args = []
    for j, c in enumerate(raw_args):
        here = f"{at}/expect/args/{j}"
        ops = [op for op in PREDICATES if isinstance(c, dict) and op in c]
        if not isinstance(c, dict) or not isinstance(c.get("pointer"), str) or len(ops) != 1:
            fail(
                "eval-field",
                here,
                "a predicate has a `pointer` and exactly one of equals, contains, present",
                "write `{pointer: /name, equals: value}`",
            )
            ok = False
            continue
        pointer = c["pointer"]
        try:
            tokens = parse_pointer(pointer)
        except ValueError:
            tokens = []
        if not tokens:
            fail(
                "eval-pointer",
                f"{here}/pointer",
                f"{pointer!r} is not a JSON pointer to an argument",
                "write a pointer such as /ticket_id",
            )
            ok = False
            continue
        props = (schemas.get(tool) or {}).get("properties") or {} if isinstance(tool, str) else {}
        if isinstance(tool, str) and tokens[0] not in props:
            fail(
                "eval-pointer",
                f"{here}/pointer",
                f"{tool} has no argument {tokens[0]!r}",
                f"use one of: {', '.join(sorted(props)) or '(none)'}",
            )
            ok = False
            continue
        if ops[0] == "present" and not isinstance(c["present"], bool):
            fail("eval-field", f"{here}/present", "`present` is true or false", "write present: true")
            ok = False
            continue
        constraints.append(Constraint(pointer, ops[0], c[ops[0]]))
    if constraints and tool is None:
        fail(
            "eval-field",
            f"{at}/expect/args",
            "argument predicates need an expected tool",
            "remove `args`, or name the tool",
        )
        ok = False
    approve = raw.get("approve", False)
    if not isinstance(approve, bool):
        fail("eval-field", f"{at}/approve", "`approve` is true or false", "write approve: true or false")
        ok = False
    if not ok:
        return None
    split = split_for(api, raw["id"])
    if "split" in raw and raw["split"] != split:
        fail(
            "eval-split",
            f"{at}/split",
            f"split {raw['split']!r} disagrees with the split rule ({split})",
            f"write `split: {split}` or remove it: the split is SHA-256 of '<api>:<id>' (docs/eval.md)",
        )
        return None
    assert kind in KINDS
    return Task(
        id=raw["id"],
        tool=raw["tool"],
        kind=kind,
        prompt=raw["prompt"],
        expect_tool=tool,
        constraints=tuple(constraints),
        writes=writes,
        approve=approve,
        split=split,
    )
