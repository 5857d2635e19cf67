#!/usr/bin/env python3
"""The size and complexity gate of CI: limits on every function and module, with a baseline that only shrinks.

Input: the Python files under ``generator/``, ``tests/`` and ``benchmarks/`` of a checkout (``--root``,
default: the checkout this script is in) and the committed baseline ``.ci/guardrails-baseline.txt``.
Output: one line per finding on stdout, exit status 0 (the tree keeps to the baseline) or 1.

The limits (the same for every file; ruff runs with ``--isolated`` and ``--ignore-noqa``, so neither
the ruff configuration nor a ``# noqa`` comment can loosen them):

* ``C901``: McCabe complexity of a function at most 25 (ruff's mccabe rule);
* ``PLR0912``: at most 20 branches in a function (ruff's pylint rule);
* ``PLR0915``: at most 80 statements in a function (ruff's pylint rule);
* ``module-lines``: at most 800 lines in a module.

The baseline lists the violations that existed when the gate was introduced, one a line::

    generator/toolgen/runtime/call/request.py::build_request  C901  35
    generator/toolgen/dialects/openai.py  module-lines  904

(file ``::`` qualified function name, rule, measured value). The check fails when

* a function or module breaks a limit and the baseline does not list it (a new violation);
* a listed one measures more than its baseline value (it grew);
* a listed one measures less than its baseline value, or no longer breaks the limit (the baseline is
  stale: run ``--update``, which lowers or drops the entry).

``--update`` rewrites the baseline from the tree, but only ever lowers values and drops entries: when
the tree has a violation that is new or grew, it writes nothing and exits 1. So the baseline shrinks.

The repository's own ruff configuration enforces the same function limits, and leaves the files with
a baselined function to this gate: ``[tool.ruff.lint.per-file-ignores]`` of ``pyproject.toml`` must
name exactly the files of the baseline's function entries, each with exactly their rules (of
``C901``, ``PLR0912``, ``PLR0915``). The check fails, printing the lines to write or drop, when the
two disagree (after ``--update`` too: a dropped entry frees its file), or when ruff's limits
(``[tool.ruff.lint.mccabe]``, ``[tool.ruff.lint.pylint]``) are not the gate's.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCANNED = ("generator", "tests", "benchmarks")
BASELINE = Path(".ci") / "guardrails-baseline.txt"
MAX_COMPLEXITY = 25
MAX_BRANCHES = 20
MAX_STATEMENTS = 80
MAX_MODULE_LINES = 800
RUFF_RULES = ("C901", "PLR0912", "PLR0915")
_VALUE = re.compile(r"\((\d+) > \d+\)")


@dataclass(frozen=True, order=True)
class Finding:
    """One limit broken: ``where`` is ``path`` or ``path::qualified.name`` (path relative to the root, ``/``)."""

    where: str
    rule: str
    value: int

    @property
    def key(self) -> tuple[str, str]:
        return (self.where, self.rule)

    def line(self) -> str:
        return f"{self.where}  {self.rule}  {self.value}"


def python_files(root: Path) -> list[Path]:
    """The scanned ``.py`` files under ``root``, sorted; virtual environments and caches left out."""
    found: list[Path] = []
    for top in SCANNED:
        for path in sorted((root / top).rglob("*.py")):
            parts = path.relative_to(root).parts
            if any(part.startswith(".") or part == "__pycache__" for part in parts):
                continue
            found.append(path)
    return found


def _qualified_names(source: str) -> dict[int, str]:
    """Line of each ``def`` -> its dotted qualified name (``Class.method``, ``outer.inner``)."""
    names: dict[int, str] = {}
    seen: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    seen[name] = seen.get(name, 0) + 1
                    # a name defined twice in one scope (a conditional def) is told apart by its order
                    names[child.lineno] = name if seen[name] == 1 else f"{name}#{seen[name]}"
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return names


def measure(root: Path) -> list[Finding]:
    """Every limit broken under ``root``, sorted. Raises ``RuntimeError`` when ruff cannot run."""
    files = python_files(root)
    findings: list[Finding] = []
    rel = {path.resolve(): path.relative_to(root).as_posix() for path in files}
    for path in files:
        lines = path.read_text(encoding="utf-8").count("\n")
        if lines > MAX_MODULE_LINES:
            findings.append(Finding(rel[path.resolve()], "module-lines", lines))
    command = [
        sys.executable, "-m", "ruff", "check", "--isolated", "--ignore-noqa", "--no-cache",
        "--output-format", "json", "--select", ",".join(RUFF_RULES),
        "--config", f"lint.mccabe.max-complexity={MAX_COMPLEXITY}",
        "--config", f"lint.pylint.max-branches={MAX_BRANCHES}",
        "--config", f"lint.pylint.max-statements={MAX_STATEMENTS}",
        *[str(path) for path in files],
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise RuntimeError(f"ruff failed (exit {done.returncode}): {done.stderr.strip()}")
    names: dict[str, dict[int, str]] = {}
    for item in json.loads(done.stdout or "[]"):
        path = Path(item["filename"]).resolve()
        where = rel[path]
        if item["code"] not in RUFF_RULES:  # a syntax error: ruff reports it without a rule code
            raise RuntimeError(f"{where}:{item['location']['row']}: {item['message']}")
        if where not in names:
            names[where] = _qualified_names(path.read_text(encoding="utf-8"))
        row = item["location"]["row"]
        function = names[where].get(row, f"line-{row}")
        value = _VALUE.search(item["message"])
        if value is None:
            raise RuntimeError(f"{where}:{row}: no measured value in ruff's message {item['message']!r}")
        findings.append(Finding(f"{where}::{function}", item["code"], int(value.group(1))))
    return sorted(findings)


def read_baseline(path: Path) -> list[Finding]:
    """The baseline's entries; ``#`` comments and blank lines skipped. Raises ``ValueError`` on a bad line."""
    entries: list[Finding] = []
    if not path.exists():
        return entries
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = text.strip()
        if not text or text.startswith("#"):
            continue
        parts = text.split()
        if len(parts) != 3 or not parts[2].isdigit():
            raise ValueError(f"{path}:{number}: expected 'WHERE RULE VALUE', got {text!r}")
        entries.append(Finding(parts[0], parts[1], int(parts[2])))
    return entries


def compare(found: list[Finding], baseline: list[Finding]) -> tuple[list[str], list[str]]:
    """(growth, stale): violations that are new or grew, and baseline entries that should shrink."""
    listed = {entry.key: entry for entry in baseline}
    current = {finding.key: finding for finding in found}
    growth: list[str] = []
    stale: list[str] = []
    for finding in found:
        entry = listed.get(finding.key)
        if entry is None:
            growth.append(f"new: {finding.line()} (limit {limit(finding.rule)}; split it up)")
        elif finding.value > entry.value:
            growth.append(f"grew: {finding.line()} (baseline {entry.value}, limit {limit(finding.rule)})")
        elif finding.value < entry.value:
            stale.append(f"shrank: {finding.line()} (baseline {entry.value}); lower it with --update")
    for entry in baseline:
        if entry.key not in current:
            stale.append(f"gone: {entry.line()} is within the limit now; drop it with --update")
    return growth, stale


def ruff_lint_config(root: Path) -> dict[str, Any]:
    """``[tool.ruff.lint]`` of ``root/pyproject.toml`` (empty without the file). Raises ``ValueError``
    on a file that is not TOML."""
    path = root / "pyproject.toml"
    if not path.exists():
        return {}
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: {error}") from None
    lint: dict[str, Any] = config.get("tool", {}).get("ruff", {}).get("lint", {})
    return lint


def ruff_ignores(lint: dict[str, Any]) -> dict[str, set[str]]:
    """The gate's rules in each ``per-file-ignores`` entry of a ``[tool.ruff.lint]`` table."""
    found = {pattern: set(rules) & set(RUFF_RULES) for pattern, rules in lint.get("per-file-ignores", {}).items()}
    return {pattern: rules for pattern, rules in found.items() if rules}


def compare_limits(lint: dict[str, Any]) -> list[str]:
    """Where ruff's limits (``[tool.ruff.lint.mccabe]``, ``[tool.ruff.lint.pylint]``) are not the gate's."""
    configured = {"C901": lint.get("mccabe", {}).get("max-complexity"),
                  "PLR0912": lint.get("pylint", {}).get("max-branches"),
                  "PLR0915": lint.get("pylint", {}).get("max-statements")}
    return [f"ruff: pyproject.toml sets {rule}'s limit to {value}, the gate's is {limit(rule)}"
            for rule, value in configured.items() if value != limit(rule)]


def compare_ignores(found: list[Finding], ignores: dict[str, set[str]]) -> list[str]:
    """What ruff's per-file ignores must gain or lose to be exactly the files (and rules) of the
    functions in ``found``."""
    wanted: dict[str, set[str]] = {}
    for finding in found:
        if "::" in finding.where and finding.rule in RUFF_RULES:
            wanted.setdefault(finding.where.split("::")[0], set()).add(finding.rule)
    out = []
    for pattern in sorted(set(wanted) | set(ignores)):
        want, have = wanted.get(pattern, set()), ignores.get(pattern, set())
        if want != have:
            rules = ", ".join(f'"{rule}"' for rule in sorted(want))
            out.append(f'ruff: pyproject.toml [tool.ruff.lint.per-file-ignores] must read "{pattern}" = [{rules}]'
                       + (" (with the file's other rules, if any)" if want else
                          f" without {', '.join(sorted(have))}: no function of it is baselined"))
    return out


def limit(rule: str) -> int:
    return {"C901": MAX_COMPLEXITY, "PLR0912": MAX_BRANCHES, "PLR0915": MAX_STATEMENTS,
            "module-lines": MAX_MODULE_LINES}[rule]


HEADER = """\
# The violations of .ci/guardrails.py's limits that the tree still has: this list may only shrink.
# WHERE (file or file::function)  RULE  VALUE (as measured). Lower or drop entries with
# `python .ci/guardrails.py --update`; it refuses to add one.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--update", action="store_true", help="lower or drop baseline entries (never add)")
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    baseline_path = root / BASELINE
    try:
        baseline = read_baseline(baseline_path)
        found = measure(root)
        lint = ruff_lint_config(root)
    except (ValueError, RuntimeError) as error:
        print(f"guardrails: {error}")
        return 1
    growth, stale = compare(found, baseline)
    for message in growth + stale:
        print(f"guardrails: {message}")
    if growth:
        print(f"guardrails: {len(growth)} violation(s) beyond {BASELINE.as_posix()}; nothing written"
              if args.update else f"guardrails: {len(growth)} violation(s) beyond {BASELINE.as_posix()}")
        return 1
    if args.update:
        baseline_path.write_text(HEADER + "".join(f"{finding.line()}\n" for finding in found), encoding="utf-8")
        print(f"guardrails: {BASELINE.as_posix()} written, {len(found)} entries ({len(baseline)} before)")
    mismatch = compare_limits(lint) + compare_ignores(found if args.update else baseline, ruff_ignores(lint))
    for message in mismatch:
        print(f"guardrails: {message}")
    if args.update:
        return 1 if mismatch else 0
    if stale or mismatch:
        return 1
    print(f"guardrails: {len(found)} baselined violation(s), none new ({len(python_files(root))} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
