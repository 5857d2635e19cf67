"""Rendering lint findings: `text`, `json`, `sarif` (SARIF 2.1.0 for GitHub code scanning) and
`github` (workflow-command annotations).

Input: a list of (finding, display path of the intent map it came from) and the intent maps linted.
Output: one string. SARIF and GitHub annotations need paths relative to the repository root (the
git work tree that holds the working directory, else the working directory); a finding located in a
file outside it (e.g. a spec kept in a sibling folder) is re-located to line 1 of its intent map,
with the original location appended to the message.

SARIF rules followed (OASIS SARIF 2.1.0, and GitHub's "SARIF support for code scanning"):
`runs[0].tool.driver.rules[]` with `id`, `name`, `shortDescription.text`, `help.text` and
`defaultConfiguration.level`; each result has `ruleId`, `ruleIndex`, `level` (error/warning/note),
`message.text` and `locations[].physicalLocation.artifactLocation.uri` (relative, `uriBaseId`
``%SRCROOT%``) with `region.startLine`/`startColumn` (1-based).
"""

from __future__ import annotations

import json
import os
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from ... import __version__
from ...diagnostics import Diagnostic, SourceLocation
from ...shown_text import terminal_safe
from .rules import RULES, rule_for

Finding = tuple[Diagnostic, str]  # (diagnostic, display path of its intent map)
SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def render(fmt: str, findings: list[Finding], files: list[str]) -> str:
    """The findings in format `fmt` (text, json, sarif or github), with every control, format or
    surrogate character that spec text put in a field written as ``\\uXXXX``
    (`toolgen.shown_text.terminal_safe`): inside a JSON string that is the same value, and the output
    can always be written as UTF-8 (a lone surrogate in a pointer made lint fail while printing)."""
    if fmt == "json":
        text = render_json(findings, files)
    elif fmt == "sarif":
        text = render_sarif(findings)
    elif fmt == "github":
        text = render_github(findings, files)
    else:
        text = render_text(findings, files)
    return terminal_safe(text)


def _counts(findings: list[Finding]) -> dict[str, int]:
    counts = {"error": 0, "warning": 0, "info": 0}
    for d, _ in findings:
        counts[d.severity] += 1
    return counts


def _summary(findings: list[Finding], files: list[str]) -> str:
    c = _counts(findings)
    n = len(files)
    return (
        f"toolgen lint: {c['error']} error{'s' if c['error'] != 1 else ''}, {c['warning']} "
        f"warning{'s' if c['warning'] != 1 else ''}, {c['info']} info in {n} intent map{'s' if n != 1 else ''}"
    )


def render_text(findings: list[Finding], files: list[str]) -> str:
    lines = [d.render() for d, _ in findings]
    lines.append(_summary(findings, files))
    return "\n".join(lines)


def render_json(findings: list[Finding], files: list[str]) -> str:
    out = {
        "format": 1,
        "tool": {"name": "toolgen", "version": __version__},
        "files": files,
        "summary": _counts(findings),
        "findings": [{**d.to_json(), "intent_map": f, "rule": rule_for(d.code).summary} for d, f in findings],
    }
    return json.dumps(out, indent=2, ensure_ascii=False, sort_keys=True)


@lru_cache(maxsize=8)
def _repo_root(cwd: str) -> Path:
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            check=False,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        )
        if top.returncode == 0 and top.stdout.strip():
            return Path(top.stdout.strip()).resolve()
    except (OSError, subprocess.SubprocessError):
        pass
    return Path(cwd).resolve()


def repo_relative(display: str) -> str | None:
    """`display` (relative to the working directory) as a POSIX path relative to the repository root,
    or None when the file lies outside it."""
    cwd = os.getcwd()
    path = (Path(cwd) / display).resolve()
    try:
        return path.relative_to(_repo_root(cwd)).as_posix()
    except ValueError:
        return None


def _in_repo(d: Diagnostic, intent_map: str) -> tuple[str | None, SourceLocation | None, str]:
    """(repo-relative file, location, message) for SARIF/GitHub; see the module docstring."""
    loc = d.location
    if loc is not None:
        rel = repo_relative(loc.file)
        if rel is not None:
            return rel, loc, d.message
    rel = repo_relative(intent_map) if intent_map else None
    suffix = f" [at {loc.render()}]" if loc is not None else ""
    if rel is None:
        return None, None, d.message + suffix
    return rel, SourceLocation(intent_map, 1, 1), d.message + suffix


def render_sarif(findings: list[Finding]) -> str:
    codes = list(RULES) + sorted({d.code for d, _ in findings} - set(RULES))
    rules = []
    for code in codes:
        rule = rule_for(code)
        rules.append(
            {
                "id": rule.id,
                "name": "".join(part.capitalize() for part in rule.id.split("-")),
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": f"{rule.summary} {rule.help}"},
                "help": {"text": rule.help},
                "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
                "properties": {"tags": ["toolgen", rule.source]},
            }
        )
    index = {code: i for i, code in enumerate(codes)}
    results = []
    for d, intent_map in findings:
        rel, loc, message = _in_repo(d, intent_map)
        text = message + (f" Hint: {d.hint}" if d.hint else "")
        result: dict[str, Any] = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": _SARIF_LEVEL[d.severity],
            "message": {"text": text},
        }
        if rel is not None and loc is not None:
            physical: dict[str, Any] = {"artifactLocation": {"uri": rel, "uriBaseId": "%SRCROOT%"}}
            if loc.line is not None:
                physical["region"] = {"startLine": max(1, loc.line), "startColumn": max(1, loc.col or 1)}
            result["locations"] = [{"physicalLocation": physical}]
            if loc.pointer:
                result["properties"] = {"pointer": loc.pointer}
        results.append(result)
    sarif = {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "toolgen", "version": __version__, "rules": rules}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(sarif, indent=2, ensure_ascii=False)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(findings: list[Finding], files: list[str]) -> str:
    """GitHub Actions workflow commands: ``::error file=F,line=L,col=C,title=T::message``."""
    lines = []
    for d, intent_map in findings:
        rel, loc, message = _in_repo(d, intent_map)
        props = []
        if rel is not None:
            props.append(f"file={_escape_property(rel)}")
            if loc is not None and loc.line is not None:
                props.append(f"line={loc.line}")
                if loc.col is not None:
                    props.append(f"col={loc.col}")
        props.append(f"title={_escape_property(f'toolgen {d.code}')}")
        text = message + (f"\nhint: {d.hint}" if d.hint else "")
        lines.append(f"::{_GITHUB_LEVEL[d.severity]} {','.join(props)}::{_escape_data(text)}")
    lines.append(_summary(findings, files))
    return "\n".join(lines)
