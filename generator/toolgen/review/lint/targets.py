"""`toolgen lint`'s input side: load one intent map and its spec, lower it and lint it (IO).

Input: a `LintTarget` (an intent map, its spec override and API name from the project file) and the
`LintSettings`. Output: a `LintResult`: the findings of `lint_api`, located at the `# decide [RULE]`
marks that carry them and with one per open mark (`toolgen.review.lint.marks`), or, when the files cannot be
loaded, their located input errors (`bad_input`). `config_findings` reports rule ids in the project
file's `lint.severity` that do not exist, located in toolgen.yaml.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from ...compile.inputs import api_name_for, require_spec, resolve_spec_path
from ...compile.intent import load_intent_map
from ...compile.load import load_spec
from ...compile.lower import lower
from ...compile.sourcemap import locate_ruamel
from ...diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, SourceLocation, display_path
from ...yaml_text import read_yaml
from .linter import LintInput, lint_api
from .marks import apply_marks, parse_marks
from .rules import LINT_CONFIG_UNKNOWN_RULE, RULES, LintSettings


@dataclass
class LintTarget:
    """One intent map to lint, with its spec override and API name (from the project, if any)."""

    intent_map: Path
    spec: Path | None = None
    name: str | None = None


@dataclass
class LintResult:
    """The findings of one intent map; `bad_input` when it could not be loaded at all."""

    target: LintTarget
    findings: list[Diagnostic]
    intent_display: str
    bad_input: bool = False


def lint_target(target: LintTarget, settings: LintSettings) -> LintResult:
    """Load one intent map and its spec, lower it and lint it. Input errors (an unparsable intent map,
    a missing spec) come back as `bad_input` with their located diagnostics."""
    display = display_path(target.intent_map)
    try:
        intents = load_intent_map(target.intent_map)
        spec_path = resolve_spec_path(intents, target.spec)
        require_spec(intents, spec_path, overridden=target.spec is not None)
        sink = DiagnosticSink()
        doc = load_spec(spec_path, sink=sink)
    except DiagnosticError as exc:
        return LintResult(target, list(exc.diagnostics), display, bad_input=True)
    api = target.name or api_name_for(intents, target.intent_map.stem)
    ir = lower(doc, intents, sink, api)
    findings = lint_api(LintInput(doc, intents, ir, list(sink.items), settings))
    marks = parse_marks(target.intent_map.read_text(encoding="utf-8"))
    return LintResult(target, apply_marks(findings, marks, intents.display), intents.display)


def config_findings(project_file: Path | None, settings: LintSettings) -> list[Diagnostic]:
    unknown = [code for code in settings.severity if code not in RULES]
    if not unknown or project_file is None:
        return []
    root = read_yaml(project_file.read_text(encoding="utf-8"))
    out = []
    for code in unknown:
        line, col = locate_ruamel(root, ["lint", "severity", code])
        close = difflib.get_close_matches(code, list(RULES), n=1)
        out.append(
            Diagnostic(
                LINT_CONFIG_UNKNOWN_RULE.id,
                LINT_CONFIG_UNKNOWN_RULE.severity,
                f"lint.severity configures unknown rule {code!r}",
                SourceLocation(display_path(project_file), line, col, f"/lint/severity/{code}"),
                f"did you mean {close[0]!r}?" if close else LINT_CONFIG_UNKNOWN_RULE.help,
            )
        )
    return out


__all__ = ["LintResult", "LintTarget", "config_findings", "lint_target"]
