"""`toolgen build [NAME | INTENT_MAP --out DIR] [--api NAME] [--check] [--spec …] [--emit …]`.

Input: the project file (every API it lists, or the one named), or one intent map, with spec
overrides (``--spec NAME=PATH``, ``TOOLGEN_SPEC_<NAME>``). Output: every finding of the build and
its lint stage, located, on stderr; then `generated/` written atomically through
`toolgen.builder.output_files`, or
with --check nothing written and exit 1 with a unified diff when it is stale. An error-severity
finding (at the project's `lint:` severities) fails the build: exit 1, nothing written.
Progress goes to stderr: a transient bar on a terminal, one line per finished step elsewhere.

One set of inputs gives one set of bytes however the build is invoked: a single intent map is built
relative to the project root (the folder of the nearest toolgen.yaml above it, or --project), and when
the project lists it, under the project's API name, spec and lint settings, exactly as `toolgen build`
would. Outside any project, generated files name the intent map by its file name.
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

from ..builder.build import ApiBuild, build_api, build_project, gc_paused, target_options
from ..builder.cache import Cache, CacheSession
from ..builder.incremental import Reused, fresh, inputs_key, remember
from ..builder.output_files import Output, check_destinations, check_outputs, write_outputs
from ..builder.project import (
    ALL_ARTIFACTS,
    PROJECT_FILE,
    Artifact,
    Project,
    find_project_file,
    load_project,
    outputs_outside,
)
from ..diagnostics import DiagnosticError, SourceLocation, display_path
from ..review.lint import LintSettings
from .exits import ExitCode, guarded, keep_until_exit, may_end_at_once, print_diagnostics


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
    catalogs) as a transient rich bar that disappears when the step ends
    (`toolgen.builder.build.StepProgress`)."""

    def __init__(self, console: Any) -> None:
        self.console = console

    def __call__(self, line: str) -> None:
        from rich.markup import escape

        self.console.print(f"[dim]·[/dim] {escape(line)}", highlight=False)

    @contextmanager
    def steps(self, label: str) -> Iterator[Callable[[int, int], None]]:
        from rich.markup import escape
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        ) as bar:
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


def _build_one_map(
    intent_map: Path,
    out: Path,
    project_file: Path | None,
    single: str | None,
    named: dict[str, str],
    artifacts: tuple[Artifact, ...],
    no_cache: bool,
    progress: Any,
    sessions: list[CacheSession],
) -> tuple[list[Output], list[ApiBuild], list[Reused]]:
    """Build one INTENT_MAP into `out`, or reuse the folder when the build cache vouches for it. The
    cache is written through a session appended to `sessions` (`_open_session`)."""
    base, kwargs = _single_arguments(
        intent_map, project_file, Path(single) if single else None, named, artifacts
    )
    cache = None if no_cache else _open_session(Cache.for_project(base), sessions)
    key = inputs_key(intent_map, **kwargs, cache=cache) if cache is not None else None
    found = fresh(cache, key, out)
    if found is not None:
        return [], [], [found]
    build = build_api(intent_map, out, progress=progress, cache=cache, **kwargs)
    if not build.errors and cache is not None:
        remember(
            cache,
            key,
            build.name,
            build.files,
            build.diagnostics,
            len(build.ir.tools),
            inputs_key(intent_map, **kwargs, cache=cache),
        )
    return [Output(out, build.files)], [build], []


def _build_the_project(
    project_file: Path | None,
    named: dict[str, str],
    api_name: str | None,
    artifacts: tuple[Artifact, ...] | None,
    no_cache: bool,
    progress: Any,
    sessions: list[CacheSession],
    outside: bool = False,
) -> tuple[list[Output], list[ApiBuild], list[Reused], dict[str, int]]:
    """Build every API of the project (or `api_name` alone), reusing each folder the build cache
    vouches for; `artifacts` overrides each API's ``emit``. Also returns each API's position in the
    project (the order its findings are printed in). The cache is written through a session appended
    to `sessions` (`_open_session`). An output path of toolgen.yaml outside its folder is a located
    error before anything is read from or written to it, unless `outside` (``--allow-outside-project``)."""
    project = load_project(project_file or Path(PROJECT_FILE), named)
    if api_name is not None:
        project = _only(project, api_name)
    if not outside and (escaped := outputs_outside(project)):
        raise DiagnosticError(escaped)
    if artifacts is not None:
        project.targets = [replace(t, emit=artifacts) for t in project.targets]
    cache = None if no_cache else _open_session(Cache.for_project(project.root), sessions)
    keys = _project_keys(project, cache) if cache is not None else {}
    reused = [r for t in project.targets if (r := fresh(cache, keys.get(t.name), t.out)) is not None]
    done = {r.name for r in reused}
    outputs, builds = build_project(
        replace(project, targets=[t for t in project.targets if t.name not in done]),
        progress=progress,
        cache=cache,
    )
    if cache is not None and builds:
        after = _project_keys(project, cache)
        for b in builds:
            if not b.errors:
                remember(
                    cache,
                    keys.get(b.name),
                    b.name,
                    b.files,
                    b.diagnostics,
                    len(b.ir.tools),
                    after.get(b.name),
                )
    return outputs, builds, reused, {t.name: i for i, t in enumerate(project.targets)}


@click.command("build")
@click.argument("target", required=False, metavar="[NAME | INTENT_MAP]")
@click.option(
    "--api", "api_name", default=None, metavar="NAME", help="Build only this API of the project file."
)
@click.option("--out", type=click.Path(path_type=Path), help="Output folder when building one INTENT_MAP.")
@click.option(
    "--spec",
    "specs",
    multiple=True,
    metavar="[NAME=]PATH",
    help="Spec override: PATH for a single intent map, NAME=PATH for an API of the project. "
    "Env: TOOLGEN_SPEC_<NAME>.",
)
@click.option(
    "--project",
    "project_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Project file (default: ./toolgen.yaml).",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 with a diff if generated files are stale.")
@click.option(
    "--emit",
    "emit",
    default=None,
    metavar="LIST",
    help="Comma-separated artifacts: openai,anthropic,mcp,gemini,policy,report,python (default: all).",
)
@click.option("-q", "--quiet", is_flag=True, help="Print only problems.")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Neither read nor write the build cache (.toolgen/cache; env: TOOLGEN_CACHE=0).",
)
@click.option(
    "--allow-outside-project",
    "outside",
    is_flag=True,
    help="Let toolgen.yaml's output paths (out, schema_out) lie outside its folder.",
)
@guarded
def build_command(
    target: str | None,
    api_name: str | None,
    out: Path | None,
    specs: tuple[str, ...],
    project_file: Path | None,
    check: bool,
    emit: str | None,
    quiet: bool,
    no_cache: bool,
    outside: bool,
) -> None:
    """Build generated/ for every API of the project, one API of it (NAME or --api NAME), or one
    INTENT_MAP with --out. Every finding is printed; an error-severity finding fails the build.

    An API whose inputs are those of an earlier build, and whose folder holds that build's files,
    is not built again (the build cache, `toolgen.builder.incremental`; --no-cache builds everything).
    What the build computed reaches the cache only when the command succeeds (`_commit`)."""
    may_end_at_once()  # the outputs and cache entries are closed and renamed, the worker joined, before it returns
    sessions: list[CacheSession] = []
    try:
        with gc_paused():  # the collector walks nothing this command drops (`gc_paused`)
            _build(
                target, api_name, out, specs, project_file, check, emit, quiet, no_cache, sessions, outside
            )
    finally:  # a failed build: what it staged is dropped (after a commit, nothing is left)
        for session in sessions:
            session.close()


def _build(
    target: str | None,
    api_name: str | None,
    out: Path | None,
    specs: tuple[str, ...],
    project_file: Path | None,
    check: bool,
    emit: str | None,
    quiet: bool,
    no_cache: bool,
    sessions: list[CacheSession],
    outside: bool = False,
) -> None:
    """`build_command`, its cache written through the sessions it appends to `sessions`."""
    progress = _progress_printer(quiet)
    named, single = _parse_spec_overrides(specs)
    artifacts = _artifacts(emit)
    intent_map: Path | None = None
    if target is not None and api_name is not None:
        raise click.UsageError("pass an API name or an intent map, not both")
    if target is not None and (
        out is not None or Path(target).is_file() or target.endswith((".yaml", ".yml"))
    ):
        intent_map = Path(target)
    elif target is not None:
        api_name = target
    if intent_map is not None:
        if out is None:
            raise click.UsageError("building one intent map needs --out DIR")
        outputs, builds, reused = _build_one_map(
            intent_map, out, project_file, single, named, artifacts, no_cache, progress, sessions
        )
        order: dict[str, int] = {}
    else:
        if out is not None or single is not None:
            raise click.UsageError("--out and an unnamed --spec apply to a single INTENT_MAP")
        outputs, builds, reused, order = _build_the_project(
            project_file, named, api_name, artifacts if emit else None, no_cache, progress, sessions, outside
        )
    keep_until_exit(outputs, builds)  # never freed: the process ends when the command returns
    if progress:
        for r in reused:
            progress(
                f"{r.name}: unchanged since the last build (the build cache): {r.files} files in "
                f"{display_path(r.out)}"
            )
    # the project's order, whichever of its APIs the manifest answered: what a build without the cache prints
    everything: list[ApiBuild | Reused] = sorted(
        [*builds, *reused], key=lambda b: order.get(b.name, len(order))
    )
    findings = [d for b in everything for d in b.diagnostics if not quiet or d.severity != "info"]
    print_diagnostics(findings)
    errors = sum(len(b.errors) for b in builds)
    if errors:
        click.echo(
            f"toolgen: {errors} error{_s(errors)} (see above; `toolgen lint` explains each rule); "
            "nothing was written.",
            err=True,
        )
        sys.exit(ExitCode.CHECK_FAILED)
    if check:
        _commit(sessions)  # stale folders or not, what the build computed is right
        _check(outputs, len(builds) + len(reused), quiet)
        return
    protected = [Path.cwd(), *(p for b in builds for p in b.inputs)]
    if intent_map is None:
        protected.append(project_file or Path(PROJECT_FILE))
    problems = check_destinations(outputs, protected)
    if problems:
        raise DiagnosticError(problems)
    write_outputs(outputs)  # durable when it returns
    _commit(sessions)  # after it: a manifest never names files that are not on disk
    if progress:
        for b in builds:
            n = _count(b, "warning")
            progress(
                f"{b.name}: wrote {len(b.files)} files to {b.out} ({len(b.ir.tools)} tools, "
                f"{n} warning{_s(n)})"
            )
    if not quiet:
        warned = sum(_count(b, "warning") for b in everything)
        info = sum(_count(b, "info") for b in everything)
        tools = sum(len(b.ir.tools) for b in builds) + sum(r.tools for r in reused)
        click.echo(
            f"toolgen: built {len(everything)} API{_s(len(everything))}, "
            f"{tools} tools, {warned} warning{_s(warned)}, {info} info "
            "(see REPORT.md).",
            err=True,
        )


def _open_session(cache: Cache | None, sessions: list[CacheSession]) -> CacheSession | None:
    """A session of `cache` (None: no cache) for this command, appended to `sessions`: the build and
    the manifest write into it, and `_commit` publishes it once the command has succeeded."""
    if cache is None:
        return None
    session = cache.session()
    sessions.append(session)
    return session


def _commit(sessions: list[CacheSession]) -> None:
    """Publish what the build wrote into the cache (`CacheSession.commit`): called once the outputs
    are written, or, for ``--check``, once the build has succeeded, before the folders are compared.
    A ``--check`` that finds stale folders keeps the entries: they are the pieces of a correct build
    of the current inputs (a failure of the folders, not of the build), and the ``toolgen build``
    that follows reads them. A build refused (by its inputs, at lint, by its output folders) or
    stopped by an exception never gets here, and its entries are dropped."""
    for session in sessions:
        session.commit()


def _artifacts(emit: str | None) -> tuple[Artifact, ...]:
    """The artifacts ``--emit`` names (comma-separated), in `ALL_ARTIFACTS` order; all of them when
    it is not given. `click.BadParameter` on a name that is not an artifact."""
    if not emit:
        return ALL_ARTIFACTS
    wanted = [a.strip() for a in emit.split(",") if a.strip()]
    bad = [a for a in wanted if a not in ALL_ARTIFACTS]
    if bad:
        raise click.BadParameter(
            f"unknown artifact {bad[0]!r}; choose from {', '.join(ALL_ARTIFACTS)}", param_hint="--emit"
        )
    return tuple(a for a in ALL_ARTIFACTS if a in wanted)


def _check(outputs: list[Output], apis: int, quiet: bool) -> None:
    """``--check``: print the diff of every stale file and exit 1 (`ExitCode.CHECK_FAILED`) when the
    `outputs` of the `apis` APIs built differ from what is on disk, else say they are up to date."""
    drifts = check_outputs(outputs)
    if drifts:
        for drift in drifts:
            click.echo(drift.diff, err=True, nl=False)
        click.echo(
            f"toolgen: generated files are stale ({len(drifts)} file"
            f"{'s' if len(drifts) != 1 else ''}); run `toolgen build` and commit the result.",
            err=True,
        )
        sys.exit(ExitCode.CHECK_FAILED)
    if not quiet:
        click.echo(f"toolgen: generated files are up to date ({apis} API{_s(apis)}).", err=True)


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _count(build: ApiBuild | Reused, severity: str) -> int:
    return sum(d.severity == severity for d in build.diagnostics)


def _only(project: Project, name: str) -> Project:
    """The project with only the API `name`; a located error when it lists no such API."""
    targets = [t for t in project.targets if t.name == name]
    if not targets:
        display = display_path(project.file) if project.file else PROJECT_FILE
        known = ", ".join(t.name for t in project.targets) or "none"
        raise DiagnosticError.one(
            "api-unknown",
            f"{display} lists no API named {name!r}",
            SourceLocation(display),
            f"known APIs: {known}; to build an intent map the project does not list: "
            "toolgen build INTENT_MAP --out DIR",
        )
    return replace(project, targets=targets, schema_out=None)


def _api_names(project_file: Path) -> set[str]:
    try:
        return {t.name for t in load_project(project_file).targets}
    except DiagnosticError:
        return set()


def _project_keys(project: Project, cache: Cache | None) -> dict[str, str | None]:
    """API name -> `inputs_key` of its build, as `build_project` builds it (`cache`: where the
    intent maps' facts the keys read are remembered)."""
    settings = LintSettings.from_config(project.lint)
    return {
        t.name: inputs_key(
            t.intent_map,
            name=t.name,
            spec=t.spec,
            emit=t.emit,
            base=project.root,
            lint=settings,
            dialect_options=target_options(t),
            cache=cache,
        )
        for t in project.targets
    }


def _single_arguments(
    intent_map: Path,
    project_file: Path | None,
    spec: Path | None,
    named: dict[str, str],
    artifacts: tuple[Artifact, ...],
) -> tuple[Path | None, dict[str, Any]]:
    """The project root (None outside a project) and the arguments of `build_api` for one intent
    map, built as the project build would build it: relative to the project root, and, when the
    project lists the map, under its API name, spec and lint settings."""
    pf = project_file or find_project_file(intent_map)
    project = (
        load_project(pf, {k: v for k, v in named.items() if k in _api_names(pf)}) if pf is not None else None
    )
    base = project.root if project is not None else None  # outside a project: named by file name
    settings = LintSettings.from_config(project.lint if project is not None else None)
    listed = None
    if project is not None:
        listed = next((t for t in project.targets if t.intent_map.resolve() == intent_map.resolve()), None)
    if listed is not None:
        return base, {
            "name": listed.name,
            "spec": spec or listed.spec,
            "emit": artifacts,
            "base": base,
            "spec_overrides": named,
            "lint": settings,
            "dialect_options": target_options(listed),
        }
    return base, {"spec": spec, "emit": artifacts, "base": base, "spec_overrides": named, "lint": settings}
