"""`toolgen build [INTENT_MAP --out DIR] [--check] [--spec …] [--emit …]`.

Input: the project file (every API it lists) or one intent map, with spec overrides
(``--spec NAME=PATH``, ``TOOLGEN_SPEC_<NAME>``). Output: `generated/` written atomically through
`toolgen.write`, or with --check nothing written and exit 1 with a unified diff when it is stale.
Progress goes to stderr: a transient bar on a terminal, one line per finished step elsewhere.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from ..build import build_api, build_project
from ..diagnostics import DiagnosticError
from ..project import ALL_ARTIFACTS, Artifact, load_project
from ..write import Output, check_destinations, check_outputs, write_outputs
from .exits import ExitCode, guarded


def _stderr_console() -> Any:
    from rich.console import Console  # rich is imported only when stderr is a terminal

    return Console(stderr=True, highlight=False, soft_wrap=True)


def _parse_spec_overrides(values: tuple[str, ...]) -> tuple[dict[str, str], str | None]:
    named: dict[str, str] = {}
    single: str | None = None
    for value in values:
        if "=" in value and not Path(value).exists():
            name, path = value.split("=", 1)
            named[name.strip()] = path
        else:
            single = value
    return named, single


class _TerminalProgress:
    """Progress on a terminal: finished steps as lines, long steps (lowering operations, emitting
    catalogs) as a transient rich bar that disappears when the step ends (`toolgen.build.StepProgress`)."""

    def __init__(self, console: Any) -> None:
        self.console = console

    def __call__(self, line: str) -> None:
        from rich.markup import escape

        self.console.print(f"[dim]·[/dim] {escape(line)}", highlight=False)

    @contextmanager
    def steps(self, label: str) -> Iterator[Callable[[int, int], None]]:
        from rich.markup import escape
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=self.console, transient=True) as bar:
            task = bar.add_task(escape(label), total=None)
            last = [0.0]

            def advance(done: int, total: int) -> None:
                now = time.monotonic()
                if done >= total or now - last[0] >= 0.05:  # the bar redraws 10 times a second anyway
                    last[0] = now
                    bar.update(task, completed=done, total=total)

            yield advance


def _progress_printer(quiet: bool) -> Callable[[str], None] | None:
    """None with --quiet; a rich `_TerminalProgress` when stderr is a terminal; else plain lines
    (CI logs: one line per finished step, no bars, no control sequences)."""
    if quiet:
        return None
    if sys.stderr.isatty():
        return _TerminalProgress(_stderr_console())
    return lambda line: click.echo(line, err=True)


@click.command("build")
@click.argument("intent_map", required=False, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), help="Output folder when building one INTENT_MAP.")
@click.option("--spec", "specs", multiple=True, metavar="[NAME=]PATH",
              help="Spec override: PATH for a single intent map, NAME=PATH for an API of the project. "
                   "Env: TOOLGEN_SPEC_<NAME>.")
@click.option("--project", "project_file", type=click.Path(path_type=Path), default=None,
              help="Project file (default: ./toolgen.yaml).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 with a diff if generated files are stale.")
@click.option("--emit", "emit", default=None, metavar="LIST",
              help="Comma-separated artifacts: openai,anthropic,mcp,gemini,policy,report,python (default: all).")
@click.option("-q", "--quiet", is_flag=True, help="Print only problems.")
@guarded
def build_command(intent_map: Path | None, out: Path | None, specs: tuple[str, ...], project_file: Path | None,
                  check: bool, emit: str | None, quiet: bool) -> None:
    """Build generated/ for every API of the project (or one INTENT_MAP with --out)."""
    progress = _progress_printer(quiet)
    named, single = _parse_spec_overrides(specs)
    artifacts: tuple[Artifact, ...] = ALL_ARTIFACTS
    if emit:
        wanted = [a.strip() for a in emit.split(",") if a.strip()]
        bad = [a for a in wanted if a not in ALL_ARTIFACTS]
        if bad:
            raise click.BadParameter(f"unknown artifact {bad[0]!r}; choose from {', '.join(ALL_ARTIFACTS)}",
                                     param_hint="--emit")
        artifacts = tuple(a for a in ALL_ARTIFACTS if a in wanted)
    if intent_map is not None:
        if out is None:
            raise click.UsageError("building one intent map needs --out DIR")
        spec = Path(single) if single else None
        one = build_api(intent_map, out, spec=spec, emit=artifacts, progress=progress, spec_overrides=named)
        outputs = [Output(out, one.files)]
        builds = [one]
    else:
        if out is not None or single is not None:
            raise click.UsageError("--out and an unnamed --spec apply to a single INTENT_MAP")
        project = load_project(project_file or Path("toolgen.yaml"), named)
        if emit:
            project.targets = [replace(t, emit=artifacts) for t in project.targets]
        outputs, builds = build_project(project, progress=progress)
    if check:
        drifts = check_outputs(outputs)
        if drifts:
            for drift in drifts:
                click.echo(drift.diff, err=True, nl=False)
            click.echo(f"toolgen: generated files are stale ({len(drifts)} file"
                       f"{'s' if len(drifts) != 1 else ''}); run `toolgen build` and commit the result.", err=True)
            sys.exit(ExitCode.CHECK_FAILED)
        if not quiet:
            click.echo(f"toolgen: generated files are up to date ({len(builds)} API"
                       f"{'s' if len(builds) != 1 else ''}).", err=True)
        return
    protected = [Path.cwd(), *(p for b in builds for p in b.inputs)]
    if intent_map is None:
        protected.append(project_file or Path("toolgen.yaml"))
    problems = check_destinations(outputs, protected)
    if problems:
        raise DiagnosticError(problems)
    write_outputs(outputs)
    if progress:
        for b in builds:
            n = sum(d.severity == "warning" for d in b.diagnostics)
            progress(f"{b.name}: wrote {len(b.files)} files to {b.out} ({len(b.ir.tools)} tools, {n} warnings)")
    if not quiet:
        warned = sum(d.severity == "warning" for b in builds for d in b.diagnostics)
        click.echo(f"toolgen: built {len(builds)} API{'s' if len(builds) != 1 else ''}, "
                   f"{sum(len(b.ir.tools) for b in builds)} tools, {warned} warning{'s' if warned != 1 else ''} "
                   "(see REPORT.md).", err=True)
