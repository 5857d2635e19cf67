"""`toolgen lint [PATHS] [--format text|json|sarif|github] [--strict] [--project FILE] [--list-rules]`.

Input: intent maps (PATHS, or every API of the project file) and the project's `lint:` settings.
Output: the findings of `toolgen.review.lint`, printed in the chosen format, and the exit code:
0 no errors (warnings allowed unless --strict), 1 findings at error level, 2 bad input, 3 internal error.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..builder.project import load_project
from ..diagnostics import Diagnostic
from ..review.lint import (
    LintSettings,
    LintTarget,
    apply_severity,
    config_findings,
    lint_target,
    render,
    rules_markdown,
)
from .exits import ExitCode, guarded


@click.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "sarif", "github"]),
    default="text",
    show_default=True,
    help="Output format (github: workflow annotations).",
)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option(
    "--project",
    "project_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Project file (default: ./toolgen.yaml).",
)
@click.option("--list-rules", is_flag=True, help="Print the rules as a Markdown table and exit.")
@guarded
def lint_command(
    paths: tuple[Path, ...], fmt: str, strict: bool, project_file: Path | None, list_rules: bool
) -> None:
    """Lint intent maps against their specs and the generated surface.

    With no PATHS, lints every intent map of toolgen.yaml. Exit 0: no errors (warnings allowed
    unless --strict); 1: findings at error level; 2: bad input; 3: internal error.
    """
    if list_rules:
        click.echo(rules_markdown(), nl=False)
        return
    sys.exit(run_lint(paths, fmt, strict, project_file, click.echo))


def run_lint(
    paths: tuple[Path, ...], fmt: str, strict: bool, project_file: Path | None, echo: Callable[[str], Any]
) -> int:
    """Lint, print in `fmt` through `echo`, and return the exit code."""
    targets, settings, pf = _targets(paths, project_file)
    results = [lint_target(t, settings) for t in targets]
    config = apply_severity(config_findings(pf, settings), settings, strict)
    findings: list[tuple[Diagnostic, str]] = [(d, pf.as_posix() if pf else "") for d in config]
    bad = False
    for r in results:
        bad = bad or r.bad_input
        kept = r.findings if r.bad_input else apply_severity(r.findings, settings, strict)
        findings.extend((d, r.intent_display) for d in kept)
    echo(render(fmt, findings, [r.intent_display for r in results]))
    if bad:
        return ExitCode.BAD_INPUT
    if any(d.severity == "error" for d, _ in findings):
        return ExitCode.CHECK_FAILED
    return ExitCode.OK


def _targets(
    paths: tuple[Path, ...], project_file: Path | None
) -> tuple[list[LintTarget], LintSettings, Path | None]:
    explicit = project_file is not None
    pf = project_file or Path("toolgen.yaml")
    project = None
    if explicit or pf.exists():
        project = load_project(pf)
    settings = LintSettings.from_config(project.lint if project else None)
    if not paths:
        if project is None:
            raise click.UsageError("no toolgen.yaml here: pass intent maps to lint, or --project FILE")
        return [LintTarget(t.intent_map, t.spec, t.name) for t in project.targets], settings, pf
    known = {t.intent_map.resolve(): t for t in project.targets} if project else {}
    out = []
    for path in paths:
        files = sorted(list(path.glob("*.yaml")) + list(path.glob("*.yml"))) if path.is_dir() else [path]
        for f in files:
            t = known.get(f.resolve())
            out.append(LintTarget(f, t.spec, t.name) if t else LintTarget(f))
    return out, settings, pf if project else None
