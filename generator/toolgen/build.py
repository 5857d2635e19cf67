"""Stage `build`: the pipeline for one API and for a project, in memory.

Input: an intent map (the spec comes from its `spec:` key or an override), or a `Project` of them.
Output: an `ApiBuild` per API: its files as bytes (catalogs, policy table, report, Python package),
the IR, the catalogs and the located diagnostics; `build_project` also returns the `Output`s to
write. The stages run in order: load -> intent -> lower -> lint -> emit, and the catalogs are checked
against their dialects' rules. Nothing is written here: the CLI writes the outputs atomically
(`toolgen.write`) or compares them (`--check`). Bad input raises `DiagnosticError`.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, runtime_checkable

from .compile.bundle import bundle_external_refs
from .compile.inputs import api_name_for, refuse_surrogates, require_spec, resolve_spec_path
from .compile.intent import intent_map_json_schema, load_intent_map
from .compile.ir import ApiIR
from .compile.load import SpecDocument, load_spec
from .compile.lower import lower
from .diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, display_path
from .dialects import check_catalog
from .emit import json_bytes
from .emit.catalogs import Catalogs, build_catalogs
from .emit.policy import policy_json, policy_markdown
from .emit.python import package_files
from .emit.report import ToolSize, measure, report_markdown
from .project import ALL_ARTIFACTS, Artifact, Project, spec_override
from .review.lint import LintInput, lint_api
from .write import Output

Progress = Callable[[str], None]
Advance = Callable[[int, int], None]


@runtime_checkable
class StepProgress(Protocol):
    """A `Progress` (one line per finished step) that can also follow a long step while it runs:
    `steps(label)` is a context manager yielding ``advance(done, total)``. The CLI shows a transient
    bar on a terminal; elsewhere a plain line printer is enough (quiet and line-oriented in CI)."""

    def __call__(self, line: str) -> None: ...

    def steps(self, label: str) -> AbstractContextManager[Advance]: ...


@contextmanager
def _steps(progress: Progress | None, label: str) -> Iterator[Advance | None]:
    if isinstance(progress, StepProgress):
        with progress.steps(label) as advance:
            yield advance
    else:
        yield None


@dataclass
class ApiBuild:
    """The in-memory result of building one API."""

    name: str
    out: Path
    ir: ApiIR
    files: dict[str, bytes]
    diagnostics: list[Diagnostic]
    catalogs: Catalogs
    sizes: list[ToolSize]
    seconds: dict[str, float] = field(default_factory=dict)
    inputs: tuple[Path, ...] = ()  # the intent map and the spec (an output folder must never hold them)


def build_api(intent_path: Path, out: Path, *, name: str | None = None, spec: Path | None = None,
              emit: tuple[Artifact, ...] = ALL_ARTIFACTS, progress: Progress | None = None,
              base: Path | None = None, spec_overrides: dict[str, str] | None = None) -> ApiBuild:
    """Build one API in memory. Raises `DiagnosticError` when the inputs have errors.

    The spec is `spec` if given, else `spec_overrides[<api>]`, else `TOOLGEN_SPEC_<API>`, else the
    intent map's `spec:` key. Paths in messages are shown relative to `base` (the project root;
    default: the working directory); generated files name the inputs as the intent map declares them,
    so the output does not depend on where toolgen runs from or where the spec lives.
    """
    with _gc_paused():
        return _build_api(intent_path, out, name=name, spec=spec, emit=emit, progress=progress, base=base,
                          spec_overrides=spec_overrides)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the duration of a build.

    A build allocates millions of small, acyclic dicts and lists (schemas) while the parsed spec (a
    13 MB document is millions of objects) stays alive; every full collection walks all of them, which
    cost a third of a large build. Reference counting still frees everything the build drops; the
    previous collector state is restored afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _build_api(intent_path: Path, out: Path, *, name: str | None, spec: Path | None,
               emit: tuple[Artifact, ...], progress: Progress | None, base: Path | None,
               spec_overrides: dict[str, str] | None = None) -> ApiBuild:
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    intents = load_intent_map(intent_path, display_path(intent_path, base))
    refuse_surrogates(intents)
    api = name or api_name_for(intents, intent_path.stem)
    if spec is None:  # --spec NAME=PATH, then TOOLGEN_SPEC_<NAME>, then the intent map's `spec:`
        spec = spec_override(api, spec_overrides or {})
    spec_path = resolve_spec_path(intents, spec)
    sink = DiagnosticSink()
    require_spec(intents, spec_path, overridden=spec is not None, base=base)
    doc = load_spec(spec_path, display_path(spec_path, base), sink=sink)
    if intents.model.allow_external_refs:
        doc.data = bundle_external_refs(spec_path, doc.data, base)
    timings["load"] = time.perf_counter() - t0
    if progress:
        progress(f"{api}: loaded {doc.display} (OpenAPI {doc.openapi})")
    t1 = time.perf_counter()
    with _steps(progress, f"{api}: lowering operations") as advance:
        ir = lower(doc, intents, sink, api, progress=advance)
    timings["lower"] = time.perf_counter() - t1
    located = DiagnosticSink()
    located.extend(doc.fill_locations(sink.items))
    sink = located
    sink.raise_if_errors()
    if "report" in emit:
        # the lint stage: its findings reach REPORT.md and the build's warning count, so a build never
        # says "0 warnings" about a map that `toolgen lint` rejects; only `toolgen lint` fails on them
        t_lint = time.perf_counter()
        for finding in lint_api(LintInput(doc, intents, ir, [])):
            if finding.severity == "error":
                finding = replace(finding, severity="warning", message=f"{finding.message} (a lint error)")
            sink.add(finding)
        timings["lint"] = time.perf_counter() - t_lint
    if progress:
        progress(f"{api}: lowered {len(ir.covered)} of {len(ir.operations)} operations to {len(ir.tools)} tools")
    # generated files name the inputs as the intent map declares them, never by where they happen to
    # be on this machine: an overridden spec location or another working directory changes nothing

    ir = replace(ir, spec_display=intents.model.spec or spec_path.name,
                 intent_display=display_path(intent_path, base) if base is not None else intent_path.name)
    t2 = time.perf_counter()
    with _steps(progress, f"{api}: emitting catalogs") as advance:
        files, catalogs, sizes = emit_files(ir, emit, sink.sorted(), progress=advance)
    timings["emit"] = time.perf_counter() - t2
    diagnostics = sink.sorted()
    ir = replace(ir, diagnostics=tuple(diagnostics))
    return ApiBuild(api, out, ir, files, diagnostics, catalogs, sizes, timings, inputs=(intent_path, spec_path))


def emit_files(ir: ApiIR, emit: tuple[Artifact, ...], diagnostics: list[Diagnostic],
               progress: Advance | None = None) -> tuple[dict[str, bytes], Catalogs, list[ToolSize]]:
    """All files of one API, in memory. `progress(done, total)` follows the catalog's tools."""
    catalogs = build_catalogs(ir, progress)
    _check_conformance(ir, catalogs)
    files: dict[str, bytes] = {}
    for dialect, tools in catalogs.by_dialect().items():
        if dialect in emit:
            files[f"{dialect}.json"] = json_bytes(tools)
    policy = policy_json(ir, catalogs.rewrites)
    if "policy" in emit:
        files["policy.json"] = json_bytes(policy)
        files["POLICY.md"] = policy_markdown(ir, catalogs.rewrites).encode("utf-8")
    sizes = measure(catalogs) if "report" in emit else []
    if "report" in emit:
        files["REPORT.md"] = report_markdown(ir, catalogs, sizes, diagnostics).encode("utf-8")
    if "python" in emit:
        files.update(package_files(ir, policy, catalogs["mcp"]))  # the package serves the MCP catalog
    return files, catalogs, sizes


def _check_conformance(ir: ApiIR, catalogs: Catalogs) -> None:
    """Every emitted catalog must pass its dialect's rules; a violation is a toolgen bug."""
    problems = []
    for dialect, tools in catalogs.by_dialect().items():
        # the 128-tools-per-request limit is a lint finding (catalog-too-big), not a build error
        problems.extend(check_catalog(dialect, tools, max_tools=None))
    if problems:
        first = problems[:5]
        raise RuntimeError("generated catalog breaks dialect rules (a toolgen bug): " + "; ".join(
            f"{p.dialect} {p.tool} {p.pointer}: {p.rule}: {p.message}" for p in first))


def build_project(project: Project, progress: Progress | None = None
                  ) -> tuple[list[Output], list[ApiBuild]]:
    """Build every API of the project in memory. Raises `DiagnosticError` with all APIs' errors."""
    outputs: list[Output] = []
    builds: list[ApiBuild] = []
    errors: list[Diagnostic] = []
    for target in project.targets:
        try:
            build = build_api(target.intent_map, target.out, name=target.name, spec=target.spec,
                              emit=target.emit, progress=progress, base=project.root)
        except DiagnosticError as exc:
            errors.extend(exc.diagnostics)
            continue
        builds.append(build)
        outputs.append(Output(target.out, build.files))
    if errors:
        raise DiagnosticError(errors)
    if project.schema_out is not None:
        outputs.append(Output(project.schema_out, {"": json_bytes(intent_map_json_schema())}))
    return outputs, builds


__all__ = ["ApiBuild", "SpecDocument", "build_api", "build_project", "emit_files"]
