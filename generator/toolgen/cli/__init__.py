"""The `toolgen` command line. One exit-code table for every command:

    0 ok · 1 check or lint failed · 2 bad input (spec, intent map, project file, arguments) · 3 internal error

User mistakes are printed as located diagnostics (`file:line:col: error[code]: message` + hint),
never as tracebacks. Set TOOLGEN_DEBUG=1 to see the traceback of an internal error.
"""

from __future__ import annotations

import functools
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from .. import __version__
from ..diagnostics import Diagnostic, DiagnosticError, ExitCode

F = TypeVar("F", bound=Callable[..., Any])


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def print_diagnostics(diagnostics: Iterable[Diagnostic]) -> None:
    for d in diagnostics:
        click.echo(_one_line_fields(d).render(), err=True)


#: line breaks and other control characters a spec may carry in names, paths and messages: printed
#: escaped, so one diagnostic stays one line (+ its hint) and spec text cannot forge log lines
_CONTROL = {c: repr(chr(c))[1:-1] for c in (*range(0x20), 0x7f, 0x85, 0x2028, 0x2029)}


def _one_line_fields(d: Diagnostic) -> Diagnostic:
    from dataclasses import replace

    loc = d.location
    if loc is not None:
        loc = replace(loc, file=loc.file.translate(_CONTROL),
                      pointer=loc.pointer.translate(_CONTROL) if loc.pointer is not None else None)
    return replace(d, message=d.message.translate(_CONTROL), location=loc,
                   hint=d.hint.translate(_CONTROL) if d.hint is not None else None)


def guarded(func: F) -> F:
    """Map `DiagnosticError` to exit 2 and unexpected exceptions to exit 3, without tracebacks."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except DiagnosticError as exc:
            print_diagnostics(exc.diagnostics)
            n = sum(1 for d in exc.diagnostics if d.severity == "error")
            click.echo(f"toolgen: {n} error{'s' if n != 1 else ''}; nothing was written.", err=True)
            sys.exit(ExitCode.BAD_INPUT)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - an internal error: say so, point at the fix, no traceback by default
            if os.environ.get("TOOLGEN_DEBUG"):
                traceback.print_exc()
            click.echo(f"toolgen: internal error: {type(exc).__name__}: {exc}", err=True)
            click.echo("  this is a toolgen bug; rerun with TOOLGEN_DEBUG=1 and report the traceback", err=True)
            sys.exit(ExitCode.INTERNAL)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="toolgen")
def main() -> None:
    """Compile OpenAPI specs + intent maps into strict, policy-enforced agent tools."""


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


@main.command()
@click.argument("intent_map", required=False, type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), help="Output folder when building one INTENT_MAP.")
@click.option("--spec", "specs", multiple=True, metavar="[NAME=]PATH",
              help="Spec override: PATH for a single intent map, NAME=PATH for an API of the project. "
                   "Env: TOOLGEN_SPEC_<NAME>.")
@click.option("--project", "project_file", type=click.Path(path_type=Path), default=None,
              help="Project file (default: ./toolgen.yaml).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 with a diff if generated files are stale.")
@click.option("--emit", "emit", default=None, metavar="LIST",
              help="Comma-separated artifacts: openai,anthropic,mcp,policy,report,python (default: all).")
@click.option("-q", "--quiet", is_flag=True, help="Print only problems.")
@guarded
def build(intent_map: Path | None, out: Path | None, specs: tuple[str, ...], project_file: Path | None,
          check: bool, emit: str | None, quiet: bool) -> None:
    """Build generated/ for every API of the project (or one INTENT_MAP with --out)."""
    from ..build import build_api, build_project
    from ..project import ALL_ARTIFACTS, Artifact, load_project
    from ..write import Output, check_destinations, check_outputs, write_outputs

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
            from dataclasses import replace

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


@main.command("schema")
@guarded
def schema_command() -> None:
    """Print the JSON Schema of the intent-map format (for editors)."""
    from ..compile.intent import intent_map_json_schema
    from ..emit import json_bytes

    sys.stdout.write(json_bytes(intent_map_json_schema()).decode("utf-8"))


def _register_optional_commands() -> None:
    """Commands that live in their own modules (runtime, review workflow)."""
    import importlib

    for module, attr in (("toolgen.cli.call", "call_command"),
                         ("toolgen.runtime.mcp_server", "serve_command"),
                         ("toolgen.review.lint.linter", "lint_command"),
                         ("toolgen.review.init", "init_command"),
                         ("toolgen.review.diff", "diff_command")):
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and module.startswith(exc.name):
                continue
            raise
        command = getattr(mod, attr, None)
        if command is not None:
            main.add_command(command)


_register_optional_commands()
