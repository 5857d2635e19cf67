"""Stage `build`: the pipeline for one API and for a project, in memory.

Input: an intent map (the spec comes from its `spec:` key or an override), or a `Project` of them.
Output: an `ApiBuild` per API: its files as bytes (catalogs, policy table, report, Python package),
the IR, the catalogs and the located diagnostics; `build_project` also returns the `Output`s to
write. The stages run in order: load -> intent -> lower -> lint -> emit, and the catalogs are checked
against their dialects' rules. Nothing is written here: the CLI writes the outputs atomically
(`toolgen.builder.output_files`) or compares them (`--check`). Bad input raises `DiagnosticError`.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..compile.bundle import bundle_external_refs
from ..compile.inputs import api_name_for, refuse_surrogates, require_spec, resolve_spec_path
from ..compile.intent import LoadedIntentMap, intent_map_json_schema, load_intent_map
from ..compile.ir import ApiIR, Tool
from ..compile.load import SpecDocument, load_spec
from ..compile.lower import lower
from ..compile.lower.reuse import OperationKeys
from ..diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, display_path
from ..dialects import DialectOptions, RegistryListing, check_deferred
from ..dialects import names as dialect_names
from ..emit import json_bytes, known_contents, piece_key
from ..emit.build_report import ToolSize, measure, report_markdown
from ..emit.dialect_catalogs import Catalogs, build_catalogs
from ..emit.policy import policy_markdown, policy_table, table_json
from ..emit.python import package_files, package_plan, warm_up
from ..emit.search_index import dense_search, search_json
from ..emit.server_json import server_json, server_json_problems
from ..remember import Remember, computed
from ..review.lint import LintInput, LintSettings, apply_severity, lint_api, preflight_findings
from ..search.dense_index import DenseModel, pinned_embedder
from ..search.dense_sidecar import SIDECAR_FILE
from ..search.onnx_embedder import DenseModelError, DenseUnavailable, file_sha256
from ..search.vector_index import Embedder
from .cache import Cache, CacheSession, digest, environment_key
from .catalog_pieces import catalog_memo
from .dense_cache import CachedEmbedder, dense_embedder
from .incremental import (
    BuildPieces,
    anthropic_search_problems,
    build_pieces,
    conformance_problems,
    last_tools,
    package_job,
)
from .output_files import Output
from .project import ALL_ARTIFACTS, ApiTarget, Artifact, Project, spec_override
from .worker import Pending, Worker, closing, start_worker

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
    inputs: tuple[Path, ...] = ()
    #: per kind of piece the build cache remembers (`toolgen.builder.incremental.BuildPieces`): how many this
    #: build computed (the others were reused); empty without the cache
    computed: dict[str, int] = field(
        default_factory=dict
    )  # the intent map and the spec (an output folder must never hold them)

    @property
    def errors(self) -> list[Diagnostic]:
        """Error-severity findings (of the lint stage): a build with any must not be written."""
        return [d for d in self.diagnostics if d.severity == "error"]


def build_api(  # noqa: PLR0913
    intent_path: Path,
    out: Path,
    *,
    name: str | None = None,
    spec: Path | None = None,
    emit: tuple[Artifact, ...] = ALL_ARTIFACTS,
    progress: Progress | None = None,
    base: Path | None = None,
    spec_overrides: dict[str, str] | None = None,
    lint: LintSettings | None = None,
    run_lint: bool = True,
    dialect_options: DialectOptions | None = None,
    cache: Cache | None = None,
) -> ApiBuild:
    """Build one API in memory. Raises `DiagnosticError` when the inputs have errors.

    The spec is `spec` if given, else `spec_overrides[<api>]`, else `TOOLGEN_SPEC_<API>`, else the
    intent map's `spec:` key. Paths in messages are shown relative to `base` (the project root;
    default: the working directory); generated files name the inputs relative to it (a spec the
    intent map names by a relative path, as declared; an absolute one outside `base` by its file
    name), so the output does not depend on where toolgen runs from or where the spec lives.

    The lint stage runs unless `run_lint` is false; its findings, at the severities of `lint` (the
    project's `lint:` settings), join `diagnostics`. Error-severity findings do not raise: the build
    is returned with them (`ApiBuild.errors`), and the caller decides not to write it.
    `dialect_options`: the project's dialect choices (toolgen.yaml ``dialects:``; `target_options`).
    `cache`: where the Python package is remembered (`toolgen.builder.incremental.package_job`); None:
    computed. The build writes into a session of it (`Cache.session`): given a `CacheSession`, into
    that one, whose owner commits it; given a `Cache`, into one of its own, committed when the build
    returns without errors and dropped otherwise (a failed build writes nothing to the cache).
    """
    session = cache.session() if cache is not None else None
    owned = session if session is not cache else None  # given a plain cache: this build's own session
    # forked now, while this process is small: the worker that formats the package (toolgen.builder.worker).
    # With the cache, it warms up only when it gets the job: after an edit the package is usually
    # found whole in the cache (`package_job`), and the worker is closed having spent nothing
    warm = warm_up if cache is None else None
    try:
        with (
            gc_paused(),
            closing(start_worker("the Python package", warm) if "python" in emit else None) as worker,
        ):
            build = _build_api(
                intent_path,
                out,
                name=name,
                spec=spec,
                emit=emit,
                progress=progress,
                base=base,
                spec_overrides=spec_overrides,
                lint=lint or LintSettings(),
                run_lint=run_lint,
                options=dialect_options or DialectOptions(),
                worker=worker,
                cache=session,
            )
        if owned is not None and not build.errors:
            owned.commit()  # the worker has ended (`closing`): its pieces are staged too
        return build
    finally:
        if owned is not None:
            owned.close()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the duration of a build (`build_api`), or of the
    command that builds (`toolgen build` holds it from its inputs' digest on: the intent map read
    there and the modules imported before are walked by every full collection, 30 ms of a rebuild).

    A build allocates millions of small, acyclic dicts and lists (schemas) while the parsed spec (a
    13 MB document is millions of objects) stays alive; every full collection walks all of them, which
    cost a third of a large build. Reference counting still frees everything the build drops; the
    previous collector state is restored afterwards. The Python package's stage runs with the
    collector when it ran before the outermost pause (`_gc_resumed`)."""
    was_enabled = gc.isenabled()
    _GC_PAUSED_BY_BUILD.append(was_enabled)
    gc.disable()
    try:
        yield
    finally:
        _GC_PAUSED_BY_BUILD.pop()
        if was_enabled:
            gc.enable()


#: one entry per `gc_paused` in progress: whether the collector ran before it paused it
_GC_PAUSED_BY_BUILD: list[bool] = []


@contextmanager
def _gc_resumed() -> Iterator[None]:
    """Run the collector again inside a paused build, if it ran before the first of the pauses in
    progress (a build inside `toolgen build`'s pause: the command's).

    datamodel-code-generator and black build cyclic trees (parsers, ASTs with parent links); with the
    collector paused they all stay alive until the build ends, which cost 140 MB of peak memory on
    Stripe's Python package for a few seconds saved. What exists already (the spec, the IR, the
    catalogs: millions of objects that live until the build ends) is frozen meanwhile, so the
    collections walk only the new objects. Measured on Stripe's include-everything package (CPU
    seconds / peak MB of the stage): paused 9.0 / 410, default thresholds 15.0 / 270, these 11.7 / 285."""
    if not _GC_PAUSED_BY_BUILD or not _GC_PAUSED_BY_BUILD[0] or gc.isenabled():
        yield
        return
    gc.freeze()  # the spec, IR and catalogs stay alive to the end: the collector need not walk them
    thresholds = gc.get_threshold()
    gc.set_threshold(10_000, 10, 10)  # fewer, larger collections; measured below
    gc.enable()
    try:
        yield
    finally:
        gc.disable()
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _build_api(  # noqa: PLR0913
    intent_path: Path,
    out: Path,
    *,
    name: str | None,
    spec: Path | None,
    emit: tuple[Artifact, ...],
    progress: Progress | None,
    base: Path | None,
    spec_overrides: dict[str, str] | None,
    lint: LintSettings,
    run_lint: bool,
    options: DialectOptions,
    worker: Worker | None = None,
    cache: Cache | None = None,
) -> ApiBuild:
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
    pieces = build_pieces(cache, api)
    doc = load_spec(spec_path, display_path(spec_path, base), sink=sink, remember=pieces.spec)
    # what the document's text alone gives (`SpecDocument.content_key`) holds until references to
    # other files are bundled into its data
    from_text = pieces.spec
    if intents.model.allow_external_refs:
        doc.data = bundle_external_refs(spec_path, doc.data, base)
        from_text = computed
    timings["load"] = time.perf_counter() - t0
    if progress:
        read_as = (
            f"Swagger {doc.swagger}, read as OpenAPI {doc.openapi}"
            if doc.swagger
            else f"OpenAPI {doc.openapi}"
        )
        progress(f"{api}: loaded {doc.display} ({read_as})")
    t1 = time.perf_counter()
    # what each operation's part of the document is: the key of its lowering and of its lint facts
    keys = OperationKeys(doc, intents, api, from_text) if pieces.lower is not None else None
    last = last_tools(cache, api) if keys is not None else None
    with _steps(progress, f"{api}: lowering operations") as advance:
        ir = lower(
            doc,
            intents,
            sink,
            api,
            progress=advance,
            remember=pieces.lower,
            keys=keys,
            tools=last.tools if last is not None else None,
        )
    if last is not None:
        last.save()
    timings["lower"] = time.perf_counter() - t1
    located = DiagnosticSink()
    located.extend(doc.fill_locations(sink.items))
    sink = located
    sink.raise_if_errors()
    # provider limits known from the IR alone: refused now, in seconds, before any catalog is built
    # (the lint stage reports them again, with the warnings, when nothing stops the build here)
    # (a hard provider limit stays an error whatever `lint.severity` says: no catalog over it can be sent)
    found = preflight_findings(ir, intents, lint, emitted_dialects(emit), options)
    hard = [d for d in found if d.code == "catalog-provider-limit"] + [
        d
        for d in apply_severity([d for d in found if d.code != "catalog-provider-limit"], lint, strict=False)
        if d.severity == "error"
    ]
    if hard:
        raise DiagnosticError(hard)
    # the package's Python needs only the argument schemas and tool names: the worker process runs
    # datamodel-code-generator and black meanwhile, and this process formats part of it once its
    # own work is done
    package = None
    if "python" in emit:
        plan = pieces.plan(
            piece_key("package-plan", ir.name, [(t.name, t.input_schema) for t in ir.tools]),
            partial(package_plan, ir),
        )  # all `package_plan` reads of the IR
        package = package_job(cache, worker, plan, size=len(ir.tools), min_size=WORKER_MIN_TOOLS)
    # handed over, not kept: the spec's text and tree are freed once the lint stage is done with them
    held = [doc]
    del doc
    with known_contents() as register:  # the catalog entries read back: keyed by their cache key
        build = _build_rest(
            ir,
            held,
            intents,
            sink,
            timings,
            emit=emit,
            progress=progress,
            base=base,
            lint=lint,
            run_lint=run_lint,
            options=options,
            api=api,
            out=out,
            intent_path=intent_path,
            spec_path=spec_path,
            package=package,
            cache=cache,
            pieces=pieces,
            keys=keys,
            register=register,
            preflight=found,
            known=last.content_digest if last is not None else None,
        )
    if last is not None:  # how many intents' tools were made again (the others were taken whole)
        build.computed["tools"] = last.tools.computed
    return build


def emitted_dialects(emit: tuple[Artifact, ...]) -> tuple[str, ...]:
    """The catalogs a build with `emit` writes: the dialects it names, and MCP with the Python package
    (which serves mcp.json)."""
    names = [a for a in dialect_names() if a in emit]
    if "python" in emit and "mcp" not in names:
        names.append("mcp")
    return tuple(names)


#: below this many tools, the package is formatted inline: the worker's round trip costs more than it saves
WORKER_MIN_TOOLS = 100


def _build_rest(  # noqa: PLR0913
    ir: ApiIR,
    held: list[SpecDocument],
    intents: LoadedIntentMap,
    sink: DiagnosticSink,
    timings: dict[str, float],
    *,
    emit: tuple[Artifact, ...],
    progress: Progress | None,
    base: Path | None,
    lint: LintSettings,
    run_lint: bool,
    options: DialectOptions,
    api: str,
    out: Path,
    intent_path: Path,
    spec_path: Path,
    package: Pending[dict[str, str]] | None,
    cache: Cache | None = None,
    pieces: BuildPieces | None = None,
    keys: OperationKeys | None = None,
    register: Callable[[Any, str], None] | None = None,
    preflight: list[Diagnostic] | None = None,
    known: Callable[[Tool], str | None] | None = None,
) -> ApiBuild:
    """The catalogs, the lint stage and the files of a lowered API. `held` holds the spec's
    document, its only reference: it is emptied once the lint stage is done, so the spec's text and
    tree (hundreds of MB for a 40 MB spec) are freed before the files are made. `register`: where the
    catalog entries read back from the cache are registered with their keys (`toolgen.emit.known_contents`).
    `preflight`: the lint stage's `preflight_findings` of `ir`, when the caller computed them. `known`:
    a digest of an IR tool's content the lowering already has (`LastTools.content_digest`), for the
    catalog records' keys."""
    doc = held.pop()
    # the catalogs are built, checked and measured once: lint, REPORT.md and the files share them
    t_cat = time.perf_counter()
    memo = catalog_memo(cache, options, register, api, known)
    pieces = pieces or build_pieces(cache, api)
    with _steps(progress, f"{api}: emitting catalogs") as advance:
        catalogs = build_catalogs(ir, advance, options, entry=memo, remember=pieces.select)
    _check_conformance(ir, catalogs, emitted_dialects(emit), pieces.conformance)
    sizes = measure(catalogs, pieces.tokens) if ("report" in emit or run_lint) else []
    timings["catalogs"] = time.perf_counter() - t_cat
    if run_lint:
        # the lint stage: the build reports what `toolgen lint` knows, at the project's severities
        t_lint = time.perf_counter()
        sink.extend(
            lint_api(
                LintInput(
                    doc,
                    intents,
                    ir,
                    [],
                    lint,
                    catalogs=catalogs,
                    sizes=sizes,
                    dialects=emitted_dialects(emit),
                    options=options,
                    remember=pieces.lint,
                    keys=keys,
                    preflight=preflight,
                )
            )
        )
        timings["lint"] = time.perf_counter() - t_lint
    spec_display_in_messages = doc.display
    del doc, keys  # nothing below reads the spec (`keys` holds its tree too)
    kept = DiagnosticSink()
    kept.extend(apply_severity(sink.items, lint, strict=False))
    sink = kept
    if progress:
        progress(
            f"{api}: lowered {len(ir.covered)} of {len(ir.operations)} operations to {len(ir.tools)} tools"
        )
    # generated files name the inputs relative to the project root, never by where they happen to be
    # on this machine: an overridden spec location or another working directory changes nothing
    spec_display = generated_spec_display(intents.model.spec, spec_path, base)
    intent_display = display_path(intent_path, base) if base is not None else intent_path.name
    ir = replace(ir, spec_display=spec_display, intent_display=intent_display)
    declared = intents.model.spec
    spec_where = (
        display_path(intent_path.parent / declared, base)
        if base is not None and declared is not None and spec_display == declared
        else spec_display
    )  # where REPORT.md locates findings in the spec
    # and in the intent map, named as REPORT.md names it (not relative to the working directory)
    shown = _relocated(
        _relocated(sink.sorted(), spec_display_in_messages, spec_where), intents.display, intent_display
    )
    t2 = time.perf_counter()
    embedder = dense_embedder(cache, options.dense) if options.dense is not None else None
    files, catalogs, sizes = emit_files(
        ir,
        emit,
        shown,
        catalogs=catalogs,
        sizes=sizes,
        package=package,
        pieces=pieces,
        semantic_search=options.semantic_search,
        registry=options.registry,
        dense=options.dense,
        embedder=embedder,
    )
    pieces.save()
    if memo is not None:  # with the values the stages derived from its entries
        memo.save()
    timings["emit"] = time.perf_counter() - t2
    diagnostics = sink.sorted()
    ir = replace(ir, diagnostics=tuple(diagnostics))
    computed = pieces.computed() | ({"catalog": memo.computed} if memo is not None else {})
    if isinstance(embedder, CachedEmbedder):
        computed["embedding"] = embedder.computed
    return ApiBuild(
        api,
        out,
        ir,
        files,
        diagnostics,
        catalogs,
        sizes,
        timings,
        inputs=(intent_path, spec_path),
        computed=computed,
    )


def generated_spec_display(declared: str | None, spec_path: Path, base: Path | None) -> str:
    """How generated files name the spec: as the intent map declares it when that is a relative path;
    an absolute one (or an override's path when the map declares none) relative to `base` when inside
    it, else by its file name. Never an absolute path: the bytes must not depend on the machine."""
    if declared and not Path(declared).is_absolute() and not declared.startswith("~"):
        return declared
    target = Path(declared).expanduser() if declared else spec_path
    if base is not None:
        try:
            return target.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            pass
    return target.name


def _relocated(diagnostics: list[Diagnostic], file: str, display: str) -> list[Diagnostic]:
    """Diagnostics located in `file` (the spec or the intent map as messages name it), named
    `display`, as the generated files name that input."""
    return [
        replace(d, location=replace(d.location, file=display))
        if d.location is not None and d.location.file == file
        else d
        for d in diagnostics
    ]


def emit_files(  # noqa: PLR0913
    ir: ApiIR,
    emit: tuple[Artifact, ...],
    diagnostics: list[Diagnostic],
    progress: Advance | None = None,
    *,
    catalogs: Catalogs | None = None,
    sizes: list[ToolSize] | None = None,
    package: Pending[dict[str, str]] | None = None,
    pieces: BuildPieces | None = None,
    semantic_search: str | None = None,
    registry: RegistryListing | None = None,
    dense: DenseModel | None = None,
    embedder: Embedder | None = None,
) -> tuple[dict[str, bytes], Catalogs, list[ToolSize]]:
    """All files of one API, in memory. `progress(done, total)` follows the catalog's tools when the
    catalogs are built here; `catalogs` and `sizes` are the caller's, already built, checked and
    measured (so nothing is built or tokenised twice); `package` is the package's Python being
    formatted (`toolgen.emit.python.join_package`, in a worker: `toolgen.builder.worker`), else it is
    formatted here. `pieces`: what the build cache remembers of each tool
    (`toolgen.builder.incremental.BuildPieces`);
    None: everything is computed. `semantic_search`: toolgen.yaml ``search.semantic`` (None: a
    lexical ``search.json``; `toolgen.emit.search_index.search_json`). `registry`: toolgen.yaml ``registry:``
    of the API; with it and the ``registry`` artifact, ``server.json`` (`toolgen.emit.server_json`), checked
    against the registry's published schema (a refusal is a toolgen bug: the listing was checked when the
    project was read). `dense`: the pinned model of ``search: {semantic: onnx}``: ``search.json`` names
    it and ``search.vectors`` holds the documents' vectors (`toolgen.search.dense_index.dense_files`),
    embedded by `embedder` (the pinned model behind the build cache: `toolgen.builder.dense_cache`;
    None: the pinned model)."""
    pieces = pieces or build_pieces(None)
    if catalogs is None:
        catalogs = build_catalogs(ir, progress)
        _check_conformance(ir, catalogs, emitted_dialects(emit))
    files: dict[str, bytes] = {}
    # the Python package reads its policy table and MCP catalog from policy.json and mcp.json beside it
    with_package = "python" in emit
    # openai.responses.json; anthropic.json with its tool-search tool, or its parts and their index
    scaled = catalogs.deferred.files
    for dialect, tools in catalogs.by_dialect().items():
        if dialect in emit or (with_package and dialect == "mcp"):
            if f"{dialect}.json" not in catalogs.deferred.omitted:
                files[f"{dialect}.json"] = json_bytes(scaled.get(f"{dialect}.json", tools), pieces.json)
            for name, extra in sorted(scaled.items()):
                if name.startswith(f"{dialect}.") and name != f"{dialect}.json":
                    files[name] = json_bytes(extra, pieces.json)
    table = policy_table(ir, catalogs.rewrites)
    policy = table_json(ir, table, catalogs.rewrites, pieces.policy)
    if "policy" in emit or with_package:
        files["policy.json"] = json_bytes(policy, pieces.json)
        search = search_json(
            policy,
            catalogs.tools.get("mcp", []),
            catalogs.deferred.searchable,
            pieces.search,
            semantic=semantic_search if dense is None else None,
        )
        if dense is not None:
            files[SIDECAR_FILE] = dense_search(search, dense, embedder)
        files["search.json"] = json_bytes(search, pieces.json)
    if "policy" in emit:
        files["POLICY.md"] = policy_markdown(ir, table).encode("utf-8")
    if sizes is None:
        sizes = measure(catalogs, pieces.tokens) if "report" in emit else []
    if "report" in emit:
        files["REPORT.md"] = report_markdown(ir, catalogs, sizes, diagnostics, pieces.tokens).encode("utf-8")
    if registry is not None and "registry" in emit:
        listing = server_json(ir, registry)
        refused = server_json_problems(listing)
        if refused:
            raise RuntimeError(
                "server.json breaks the MCP registry's schema (a toolgen bug): " + "; ".join(refused[:5])
            )
        files["server.json"] = json_bytes(listing, pieces.json)
    if "python" in emit:
        with _gc_resumed():
            files.update(package_files(ir, package.result() if package is not None else None))
    return files, catalogs, sizes


def _check_conformance(
    ir: ApiIR, catalogs: Catalogs, dialects: tuple[str, ...], remember: Remember = computed
) -> None:
    """Every emitted catalog (of `dialects`) must pass its dialect's rules; a violation is a toolgen
    bug. The catalogs a build does not write are not checked: a limit of a provider the build leaves
    out (`--emit`) must not stop it. `remember`: each tool's verdict, between builds
    (`toolgen.builder.incremental.conformance_problems`)."""
    problems = []
    for dialect, tools in catalogs.by_dialect().items():
        if dialect not in dialects:
            continue
        # the 128-tools-per-request limit is a lint finding (catalog-too-big), not a build error
        if dialect == "anthropic" and catalogs.deferred.catalogs_of("anthropic"):
            continue  # anthropic.json with its tool-search tool, or its parts: check_deferred checks them
        problems.extend(conformance_problems(dialect, tools, remember))
    problems.extend(
        check_deferred(
            catalogs.deferred,
            include_dialect_files="anthropic" in dialects,
            check_chat=partial(conformance_problems, "openai", remember=remember),
            check_anthropic=partial(anthropic_search_problems, remember=remember),
        )
    )
    if problems:
        first = problems[:5]
        raise RuntimeError(
            "generated catalog breaks dialect rules (a toolgen bug): "
            + "; ".join(f"{p.dialect} {p.tool} {p.pointer}: {p.rule}: {p.message}" for p in first)
        )


def target_options(target: ApiTarget) -> DialectOptions:
    """The dialect and search choices of one API of the project file. Raises a `DiagnosticError`
    located at toolgen.yaml's ``search.semantic`` when it asks for the semantic index and numpy (the
    ``semantic`` extra) is not installed, and for the dense option as `dense_pins` says."""
    if target.dense is not None:
        return DialectOptions(
            gemini_parameters=target.gemini_parameters,
            semantic_search=target.semantic_search,
            anthropic_input_examples=target.anthropic_input_examples,
            registry=target.registry,
            dense=dense_pins(target),
        )
    if target.semantic_search is not None and importlib.util.find_spec("numpy") is None:
        raise DiagnosticError.one(
            "search-semantic-unavailable",
            f"{target.name}: search.semantic: {target.semantic_search} needs numpy, which is not installed",
            target.semantic_at,
            "pip install -e '.[semantic]' in a clone of toolgen, or remove search.semantic (lexical search)",
        )
    return DialectOptions(
        gemini_parameters=target.gemini_parameters,
        semantic_search=target.semantic_search,
        anthropic_input_examples=target.anthropic_input_examples,
        registry=target.registry,
    )


def dense_pins(target: ApiTarget) -> DenseModel:
    """The pinned model of an API with ``search: {semantic: onnx, ...}`` (`target.dense`), checked:
    the extra installed (``search-dense-unavailable``), each file there and readable
    (``search-dense-model``), of its pinned SHA-256 (``search-dense-pin-mismatch``, located at the
    pin), and the model a sentence-embedding graph onnxruntime runs (``search-dense-model``). Raises
    a located `DiagnosticError`; never downloads anything."""
    config = target.dense
    assert config is not None
    missing = [m for m in ("onnxruntime", "tokenizers", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        raise DiagnosticError.one(
            "search-dense-unavailable",
            f"{target.name}: search.semantic: onnx needs {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed",
            target.semantic_at,
            "pip install -e '.[dense]' in a clone of toolgen, or remove search.semantic (lexical search)",
        )
    for key, path, pin in (
        ("model", config.model, config.model_sha256),
        ("tokenizer", config.tokenizer, config.tokenizer_sha256),
    ):
        try:
            found = file_sha256(path)
        except OSError as exc:
            raise DiagnosticError.one(
                "search-dense-model",
                f"{target.name}: search.{key}: cannot read {display_path(path)} ({exc.strerror or exc})",
                config.at[key],
                f"put the {key} file there (toolgen never downloads one), or point search.{key} at it",
            ) from None
        if found != pin:
            raise DiagnosticError.one(
                "search-dense-pin-mismatch",
                f"{target.name}: search.{key}_sha256: {display_path(path)} has "
                f"SHA-256 {found}, not the pinned {pin}",
                config.at[f"{key}_sha256"],
                f"use the pinned {key}; or, having checked where this one came from, pin {found}",
            )
    try:
        pinned_embedder(config.model, config.model_sha256, config.tokenizer, config.tokenizer_sha256)
    except DenseModelError as exc:
        key = "tokenizer" if str(exc).startswith("tokenizer") else "model"
        raise DiagnosticError.one(
            "search-dense-model",
            f"{target.name}: search.{key}: {exc}",
            config.at[key],
            "export the model with its sentence-transformers ONNX exporter, and give its own tokenizer.json",
        ) from None
    except DenseUnavailable as exc:
        raise DiagnosticError.one(
            "search-dense-unavailable",
            f"{target.name}: {exc}",
            target.semantic_at,
            "pip install -e '.[dense]' in a clone of toolgen",
        ) from None
    out = target.out.resolve()
    return DenseModel(
        config.model.resolve(),
        config.model_sha256,
        config.tokenizer.resolve(),
        config.tokenizer_sha256,
        Path(os.path.relpath(config.model.resolve(), out)).as_posix(),
        Path(os.path.relpath(config.tokenizer.resolve(), out)).as_posix(),
    )


def build_project(
    project: Project, progress: Progress | None = None, cache: Cache | None = None
) -> tuple[list[Output], list[ApiBuild]]:
    """Build every API of the project in memory. Raises `DiagnosticError` with all APIs' input
    errors; lint errors come back in the builds (`ApiBuild.errors`). `cache`: as for `build_api`,
    one session for the whole project (given a `Cache`, committed only when no API failed)."""
    session = cache.session() if cache is not None else None
    owned = session if session is not cache else None
    try:
        outputs, builds = _build_targets(project, progress, session)
        if owned is not None and not any(b.errors for b in builds):
            owned.commit()
        return outputs, builds
    finally:
        if owned is not None:
            owned.close()


def _build_targets(
    project: Project, progress: Progress | None, cache: CacheSession | None
) -> tuple[list[Output], list[ApiBuild]]:
    """`build_project`'s builds, into the session `cache`."""
    outputs: list[Output] = []
    builds: list[ApiBuild] = []
    errors: list[Diagnostic] = []
    settings = LintSettings.from_config(project.lint)
    for target in project.targets:
        try:
            build = build_api(
                target.intent_map,
                target.out,
                name=target.name,
                spec=target.spec,
                emit=target.emit,
                progress=progress,
                base=project.root,
                lint=settings,
                dialect_options=target_options(target),
                cache=cache,
            )
        except DiagnosticError as exc:
            errors.extend(exc.diagnostics)
            continue
        builds.append(build)
        outputs.append(Output(target.out, build.files))
    if errors:
        raise DiagnosticError(errors)
    if project.schema_out is not None:
        outputs.append(Output(project.schema_out, {"": intent_map_schema(cache)}))
    return outputs, builds


def intent_map_schema(cache: Cache | None) -> bytes:
    """The bytes of the intent map's JSON Schema (``schema_out``, `intent_map_json_schema`): a pure
    function of toolgen's code (the pydantic models of `toolgen.compile.intent`) and pydantic's
    version, so remembered in `cache` under `environment_key`, which names both. pydantic writes it
    in 15 ms, which every build paid, one whose APIs the manifest answered too."""
    if cache is None:
        return json_bytes(intent_map_json_schema())
    key = digest("intent-map schema 1", environment_key())
    return cache.memo("schema", key, lambda: json_bytes(intent_map_json_schema()))


__all__ = ["ApiBuild", "SpecDocument", "build_api", "build_project", "emit_files", "target_options"]
