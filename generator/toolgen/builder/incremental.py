"""What a build reuses from earlier builds, through the cache (`toolgen.builder.cache`).

Input: a build's inputs (the arguments of `toolgen.builder.build.build_api`) and a `Cache`. Output: two
reuses, each giving exactly the bytes a build without the cache gives:

- **the manifest** (`fresh`, `remember`): after a build without errors, the digest of its inputs
  (`inputs_key`: the intent map's and the spec's bytes and paths, the API name, the artifacts, the
  lint and dialect settings, the project root and working directory, and `environment_key`: toolgen's
  own code and its libraries' versions) is recorded with the digest of every file the build
  produced and its findings. A later build with the same inputs whose output folder holds exactly
  those files is up to date without building: `toolgen build --check` answers by hashing the inputs
  and the folder, and `toolgen build` has nothing to write; what the digest reads of the intent map
  is kept by its bytes (`intent_facts`), so that answer parses no YAML. An intent map with
  ``allow_external_refs`` reads further files, so it is always built.
- **the Python package** (`package_job`): `__init__.py` and `models.py` are a pure function of the
  package plan (`toolgen.emit.python.package_plan`: argument schemas without their descriptions,
  class names, the rendered `__init__.py`), remembered whole under the plan's digest; and each piece
  black formats (a class of `models.py`) is remembered under its source text, so an edited tool's
  schema re-formats only the classes that changed. An edited description changes no plan: the
  package comes from the cache whole.
- **catalog entries** (`toolgen.builder.catalog_pieces.CatalogMemo`): each tool's object, warnings and
  argument rewrites in each dialect, by the final tool's content (its pickle: every field, in order) and
  the dialect's name and options, kept with what the later stages derive from the entry (its sizes,
  conformance verdict, strict-choice facts and indented JSON) and from the tool itself (its policy row's
  POLICY.md line); one edited tool is transformed again, the others are read back with those values.
- **the last build's tools** (`LastTools`): every intent's IR tools as the last build made them,
  by its operation's lowering key, in one entry read with one unpickling
  (`toolgen.compile.lower.remembered_tools`); an edited intent's tools are made again, the others are
  taken whole.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from ..compile.inputs import api_name_for_facts
from ..compile.intent import load_intent_map
from ..compile.ir import Tool
from ..compile.lower.remembered_tools import IntentTools
from ..diagnostics import Diagnostic, DiagnosticError, SourceLocation, display_path
from ..dialects import Dialect, DialectOptions, Violation, check_catalog, dialect
from ..dialects.anthropic import check_anthropic_across, check_anthropic_catalog
from ..emit import content_digest, derived, piece_key
from ..emit.python import PackagePlan, format_piece, join_package, package_pieces
from ..remember import Remember, computed
from ..review.lint import LintSettings
from .cache import Cache, canonical, digest, environment_key, files_digest, folder_matches
from .project import ALL_ARTIFACTS, Artifact, spec_override
from .worker import Pending, Worker, run_with

T = TypeVar("T")


def inputs_key(  # noqa: PLR0913
    intent_path: Path,
    *,
    name: str | None = None,
    spec: Path | None = None,
    emit: tuple[Artifact, ...] = ALL_ARTIFACTS,
    base: Path | None = None,
    spec_overrides: dict[str, str] | None = None,
    lint: LintSettings | None = None,
    run_lint: bool = True,
    dialect_options: DialectOptions | None = None,
    cache: Cache | None = None,
) -> str | None:
    """The digest of everything a build with these arguments (those of `toolgen.builder.build.build_api`)
    reads or depends on; None when that cannot be known without building (an input missing or bad,
    external references allowed), so the build runs and reports it. `cache`: where the three facts
    the key reads of the intent map (`IntentFacts`) are remembered by its bytes, so that a build
    whose inputs did not change parses no YAML (a drafted map of 1,800 tools takes a second)."""
    try:
        intent_bytes = intent_path.read_bytes()
        facts = intent_facts(intent_path, intent_bytes, base, cache)
        if facts is None or facts.external_refs:
            return None
        api = name or api_name_for_facts(facts.api_name, intent_path.stem)
        chosen = spec if spec is not None else spec_override(api, spec_overrides or {})
        if chosen is None and facts.spec is None:
            return None  # the build reports `spec-missing`
        spec_path = chosen if chosen is not None else intent_path.parent / str(facts.spec)
        spec_bytes = spec_path.read_bytes()
    except OSError:
        return None
    settings = {
        "api": api,
        "emit": list(emit),
        "run_lint": run_lint,
        "lint": asdict(lint or LintSettings()),
        "dialects": asdict(dialect_options or DialectOptions()),
        "spec_given": chosen is not None,
        "intent": str(intent_path.resolve()),
        "spec": str(spec_path.resolve()),
        "declared": facts.spec,
        "base": str(base.resolve()) if base is not None else None,
        "cwd": os.getcwd(),
    }
    return digest("inputs", environment_key(), canonical(settings), intent_bytes, spec_bytes)


@dataclass(frozen=True)
class IntentFacts:
    """What `inputs_key` reads of a valid intent map: ``allow_external_refs``, ``api.name`` and ``spec``."""

    external_refs: bool
    api_name: str | None
    spec: str | None


def intent_facts(
    intent_path: Path, intent_bytes: bytes, base: Path | None, cache: Cache | None
) -> IntentFacts | None:
    """The `IntentFacts` of the intent map whose bytes are `intent_bytes`; None when it does not load
    (the build reports why) or changed while it was read. With a cache they are remembered under the
    SHA-256 of the bytes and toolgen's code (`environment_key`): they are a pure function of both;
    when the map is parsed, each tool's block of its YAML is kept by its text
    (`toolgen.compile.intent_blocks`), so after one tool's edit only that block is parsed again, and
    the build reads the map this parse loaded (`load_intent_map` keeps the last one)."""
    key = digest("intent-facts", environment_key(), intent_bytes) if cache is not None else ""
    found = cache.get("intent-facts", key) if cache is not None else None
    if found is not None:
        try:
            record = json.loads(found)
            return IntentFacts(bool(record["external_refs"]), record["api_name"], record["spec"])
        except (ValueError, KeyError, TypeError):
            pass  # an entry of another format: parsed again
    blocks = Pieces(cache, "intent", f"map {intent_path.resolve()}") if cache is not None else None
    try:
        model = load_intent_map(intent_path, display_path(intent_path, base), blocks or computed).model
    except DiagnosticError:
        return None
    if blocks is not None:
        blocks.save()
    if intent_path.read_bytes() != intent_bytes:
        return None  # edited while it was read: the build reads it again
    facts = IntentFacts(model.allow_external_refs, model.api.name, model.spec)
    if cache is not None:
        cache.put("intent-facts", key, canonical(asdict(facts)).encode("utf-8"))
    return facts


@dataclass(frozen=True)
class Reused:
    """A build found up to date by its manifest: what the CLI reports of it."""

    name: str
    out: Path
    diagnostics: list[Diagnostic]
    tools: int
    files: int
    errors: list[Diagnostic] = field(default_factory=list)  # a manifest is recorded for builds without errors


def fresh(cache: Cache | None, key: str | None, out: Path) -> Reused | None:
    """The recorded build of `key` when `out` holds exactly the files it produced; else None."""
    if cache is None or key is None:
        return None
    found = cache.get("manifest", key)
    if found is None:
        return None
    try:
        record = json.loads(found)
        files: dict[str, str] = record["files"]
        diagnostics = [_diagnostic(d) for d in record["diagnostics"]]
        tools = int(record["tools"])
        name = str(record["name"])
    except (ValueError, KeyError, TypeError):
        return None  # an entry from another version of this format: build
    if not folder_matches(out, files):
        return None
    return Reused(name, out, diagnostics, tools, len(files))


def remember(
    cache: Cache | None,
    key: str | None,
    name: str,
    files: dict[str, bytes],
    diagnostics: list[Diagnostic],
    tools: int,
    key_after: str | None,
) -> None:
    """Record a build without errors under `key`, its inputs' digest taken before it ran; nothing
    when `key_after` (taken after it) differs: an input changed while the build read it."""
    if cache is None or key is None or key != key_after:
        return
    record = {
        "name": name,
        "files": files_digest(sorted(files.items())),
        "tools": tools,
        "diagnostics": [d.to_json() for d in diagnostics],
    }
    cache.put("manifest", key, canonical(record).encode("utf-8"))


def _diagnostic(data: dict[str, Any]) -> Diagnostic:
    """A remembered diagnostic (the manifest's copy of `Diagnostic.to_json`) made again."""
    loc = data.get("location")
    location = SourceLocation(**loc) if isinstance(loc, dict) else None
    return Diagnostic(
        str(data["code"]),
        data["severity"],
        str(data["message"]),
        location,
        data.get("hint"),
        data.get("tool"),
    )


def package_job(
    cache: Cache | None, worker: Worker | None, plan: PackagePlan, *, size: int, min_size: int
) -> Pending[dict[str, str]]:
    """The package's two files as text (`toolgen.emit.python.join_package`), computed in `worker`
    as `toolgen.builder.worker.run_with` does; with a cache, the whole result is taken from it when the plan
    was built before, and otherwise each black piece is."""
    finish = partial(join_package, plan=plan)
    if cache is None:
        return run_with(worker, package_pieces, format_piece, finish, plan, size=size, min_size=min_size)
    key = digest("package", environment_key(), canonical(asdict(plan)))
    found = cache.get("package", key)
    if found is not None:
        try:
            files = json.loads(found)
        except ValueError:
            files = None
        if isinstance(files, dict) and set(files) == {"__init__.py", "models.py"}:
            if worker is not None:
                worker.close()
            return Pending(lambda: files, in_worker=False)
    each = cache.memo_text("black", digest("black", environment_key()), format_piece)
    pending = run_with(worker, package_pieces, each, finish, plan, size=size, min_size=min_size)

    def store() -> dict[str, str]:
        result = pending.result()
        cache.put("package", key, canonical(result).encode("utf-8"))
        return result

    return Pending(store, in_worker=pending.in_worker)


def pickled_table(cache: Cache, kind: str, key: str, value_ok: Callable[[Any], bool]) -> dict[str, Any]:
    """The dict of str to values that `value_ok` accepts, pickled in `cache` under (`kind`, `key`) by
    this module (toolgen's own cache, written under its MAC), or ``{}`` when there is none or it is of
    another shape: such an entry is ignored and its contents computed again, never trusted."""
    found = cache.get(kind, key)
    if found is None:
        return {}
    try:
        table = pickle.loads(found)
    except Exception:  # noqa: BLE001 - an entry of another format: computed again
        return {}
    ok = isinstance(table, dict) and all(isinstance(k, str) and value_ok(v) for k, v in table.items())
    return table if ok else {}


class PieceTable:
    """A table of pieces (piece key -> pickled value) kept in the cache as two entries of `kind`: a
    base under `key` and a delta under ``digest(key, "delta")``, read once and merged (a value is a
    pure function of its key, so any base with any delta, even from another build, gives right
    values). `save` writes back what a build used: only the delta (the pieces the base lacks, or holds
    another value of: `toolgen.builder.catalog_pieces` adds derived values to an entry's record) while
    that is small, so a build after one edit does not rewrite a table of megabytes; the whole table
    (and an empty delta) when the delta would pass a quarter of the base's bytes, or the base holds
    more than a quarter of pieces the build did not use."""

    def __init__(self, cache: Cache, kind: str, key: str) -> None:
        self._cache, self._kind, self._key = cache, kind, key
        self._delta_key = digest(key, "delta")
        self._base = self._load(key)
        self._delta = self._load(self._delta_key)

    def _load(self, key: str) -> dict[str, bytes]:
        return pickled_table(self._cache, self._kind, key, lambda v: isinstance(v, bytes))

    def get(self, key: str) -> bytes | None:
        """The pickled value of piece `key`, or None."""
        return self._delta.get(key) or self._base.get(key)

    def save(self, used: dict[str, bytes]) -> None:
        """Keep `used` (every piece a build used, new or found) for the next build (class docstring)."""
        new = {k: v for k, v in used.items() if self._base.get(k) is not v}  # not the base's own value
        stale = len(self._base) - (len(used) - len(new))
        if not stale and new == self._delta:
            return  # nothing new, nothing dropped
        base_bytes = sum(map(len, self._base.values()))
        if self._base and stale * 4 <= len(self._base) and sum(map(len, new.values())) * 4 <= base_bytes:
            if new != self._delta:
                self._cache.put(self._kind, self._delta_key, pickle.dumps(new, protocol=5))
            return
        self._cache.put(self._kind, self._key, pickle.dumps(used, protocol=5))
        if self._delta:
            self._cache.put(self._kind, self._delta_key, pickle.dumps({}, protocol=5))


class Pieces:
    """A `toolgen.remember.Remember` backed by the cache: one table per kind of piece (a dict of piece
    key -> pickled value, a `PieceTable` under the kind, the environment and `salt`), read once when
    the build starts; `save` keeps the pieces this build used (`PieceTable.save`). Values are kept
    pickled and unpickled on each use, so what a later stage does to a value never reaches the table.

    With `raw`, every value is bytes (immutable: nothing a later stage does reaches the table) and is
    kept as it is, not pickled: the indented JSON of every tool (megabytes) is not copied again on
    each use.

    A piece's key names everything its value depends on (`toolgen.emit.piece_key` of the inputs),
    and the table's key names the code that computes it (`environment_key`): a found value is the
    one a build without the cache computes."""

    def __init__(self, cache: Cache, kind: str, salt: str = "", *, raw: bool = False) -> None:
        self.kind = kind
        self._raw = raw
        self._table = PieceTable(
            cache, kind, digest(kind, environment_key(), salt, "raw" if raw else "pickled")
        )
        self._used: dict[str, bytes] = {}
        self.computed = 0

    def __call__(self, key: str, compute: Callable[[], T], /) -> T:
        stored = self._used.get(key) or self._table.get(key)
        if stored is None:
            value = compute()
            if self._raw and type(value) is not bytes:
                raise TypeError(f"the {self.kind} table keeps bytes, not {type(value).__name__}")
            self._used[key] = value if self._raw else pickle.dumps(value, protocol=5)  # type: ignore[assignment]
            self.computed += 1
            return value
        self._used[key] = stored
        found: T = stored if self._raw else pickle.loads(stored)  # type: ignore[assignment]
        return found

    def save(self) -> None:
        """Keep the pieces this build used for the next (`PieceTable.save`)."""
        self._table.save(self._used)


def conformance_problems(
    name: str, tools: list[dict[str, Any]], remember: Remember = computed
) -> list[Violation]:
    """``check_catalog(name, tools, max_tools=None)``, with each tool's own verdict remembered: for a
    dialect that `Dialect.checks_per_tool` (all four), by the tool object's content (`piece_key`),
    whether it keeps its own rules (`Dialect.check_tool`); when every tool does, the names are unique
    and the rules that span tools (`Dialect.check_across`) find nothing, the catalog conforms, and
    otherwise (a toolgen bug) the whole catalog is checked again for the violations. Other dialects
    are checked whole. Raises ValueError for an unknown dialect."""
    found = dialect(name)
    whole = partial(check_catalog, name, max_tools=None)
    if remember is computed or not found.checks_per_tool:
        return whole(tools)
    return _per_tool(found, tools, remember, whole, found.check_across)


def anthropic_search_problems(
    tools: list[dict[str, Any]], max_search_tools: int, remember: Remember = computed
) -> list[Violation]:
    """``check_anthropic_catalog(tools, max_search_tools=max_search_tools)`` (``anthropic.json`` with its
    tool-search tool, or one of its parts: `toolgen.dialects.check_deferred`), each tool's own verdict
    remembered as `conformance_problems` remembers it, the rules that span tools checked against
    `max_search_tools`."""
    whole = partial(check_anthropic_catalog, max_search_tools=max_search_tools)
    if remember is computed:
        return whole(tools)
    across = partial(check_anthropic_across, max_search_tools=max_search_tools)
    return _per_tool(dialect("anthropic"), tools, remember, whole, across)


def _per_tool(
    found: Dialect,
    tools: list[dict[str, Any]],
    remember: Remember,
    whole: Callable[[list[dict[str, Any]]], list[Violation]],
    across: Callable[[list[dict[str, Any]]], list[Violation]] | None,
) -> list[Violation]:
    """``[]`` when the names of `tools` are unique, each tool keeps its own rules (its verdict kept with
    it, `toolgen.emit.derived`, or remembered by its content) and `across` finds nothing; else
    ``whole(tools)``, which checks the catalog whole and says what is wrong."""
    read_name = found.tool_name
    try:
        names = [read_name(tool) for tool in tools]
    except Exception:  # noqa: BLE001 - a malformed entry: the whole check says what is wrong
        return whole(tools)
    if (
        len(set(names)) == len(names)
        and all(
            derived(
                tool,
                f"conformance 2 {found.name}",
                partial(_conforms, found, tool),
                partial(_remember_verdict, remember, found, tool),
            )
            for tool in tools
        )
        and (across is None or not across(tools))
    ):
        return []
    return whole(tools)


def _remember_verdict(remember: Remember, found: Dialect, tool: dict[str, Any]) -> bool:
    """`_conforms` through `remember`, keyed by the dialect's name and the tool object's content."""
    return remember(piece_key("conformance 2", found.name, tool), partial(_conforms, found, tool))


def _conforms(found: Dialect, tool: dict[str, Any]) -> bool:
    """Whether `tool` keeps the rules of dialect `found` that concern it alone (`Dialect.check_tool`)."""
    if found.check_tool is not None:
        return not found.check_tool(tool)
    return not check_catalog(found.name, [tool], max_tools=None)


@dataclass
class BuildPieces:
    """The per-tool pieces one build remembers (`Pieces`), by kind: `tokens` (o200k counts of
    compact JSON texts, REPORT.md and lint), `json` (each tool's and each policy row's indented JSON
    in the JSON files), `search` (each operation's search.json document before the catalog-wide
    decompounding), `lower` (each operation's lowering, `toolgen.compile.lower.reuse`), `plan`
    (the Python package's plan, by the tools' names and argument schemas: all it reads),
    `conformance` (whether each catalog tool object keeps its dialect's rules alone,
    `conformance_problems`), `lint` (what an operation's response and parameters tell the lint
    rules, `toolgen.review.lint.LintInput.remember`), `spec` (what the spec's text alone gives, by
    `toolgen.compile.load.SpecDocument.content_key`: its validation's findings, each operation's
    `toolgen.compile.lower.reuse.OperationKeys.reads`), `select` (what a dialect's whole-catalog
    choice reads of each catalog entry, `toolgen.dialects.Dialect.select_facts`: Anthropic's strict
    subset and budgets), `policy` (the JSON of each policy row with argument rewrites, by its tool and the
    rewrites, `toolgen.emit.policy.table_json`; a row that is its tool's own is made from the tool when
    read). The sizes, verdicts, facts and JSON of a catalog entry the build cache made or read back are
    kept with the entry instead (`toolgen.builder.catalog_pieces`): these tables hold those of the
    objects a whole-catalog stage made (strict tools, deferred views)."""

    tokens: Remember
    json: Remember
    search: Remember
    lower: Remember | None = None
    plan: Remember = computed
    conformance: Remember = computed
    lint: Remember = computed
    spec: Remember = computed
    select: Remember = computed
    policy: Remember = computed
    tables: tuple[Pieces, ...] = ()

    def save(self) -> None:
        """Write back every table (`Pieces.save`)."""
        for table in self.tables:
            table.save()

    def computed(self) -> dict[str, int]:
        """Kind -> how many pieces of it this build computed (the rest were reused)."""
        return {table.kind: table.computed for table in self.tables}


def build_pieces(cache: Cache | None, api: str = "") -> BuildPieces:
    """`BuildPieces` remembered in `cache`, in tables of the API named `api` (each build keeps only the
    pieces it used, so APIs of one project sharing a table would drop each other's); without a
    cache, computed each time (`toolgen.remember.computed`)."""
    if cache is None:
        return BuildPieces(computed, computed, computed)
    tokens, json_, search, lower, plan, conformance, lint, spec, select, policy = tables = tuple(
        Pieces(cache, kind, f"api {api}", raw=kind == "json")
        for kind in (
            "tokens",
            "json",
            "search",
            "lower",
            "plan",
            "conformance",
            "lint",
            "spec",
            "select",
            "policy",
        )
    )
    return BuildPieces(
        tokens, json_, search, lower, plan, conformance, lint, spec, select, policy, tables=tables
    )


class LastTools:
    """The tools the last build made of each intent (`toolgen.compile.lower.remembered_tools.IntentTools`),
    kept as one entry of the cache (kind ``intent-tools``) under the environment (`environment_key`),
    the entry's format and the API's name: read once when the build starts, one unpickling for every
    tool. Each tool is kept with the SHA-256 of its `toolgen.emit.content_pickle` (taken once, by the
    build that made it), which `content_digest` gives the later stages. A payload that is not a dict of
    str -> (tuple of `Tool`, tuple of as many digests) (of another format, or not this code's) is
    ignored: every intent is computed. `save` writes back what the build made or took, when that
    changed."""

    kind = "intent-tools"
    #: the payload's format, in the entry's key: an entry of another format is another entry
    FORMAT = "intent-tools 2: tools with their content digests"

    def __init__(self, cache: Cache, api: str) -> None:
        self._cache = cache
        #: the entry's key: the environment, the format and the API
        self.key = digest(self.kind, environment_key(), self.FORMAT, f"api {api}")
        #: ``id(tool) -> (tool, the SHA-256 of its content_pickle)``, for every tool read back or kept
        self._digests: dict[int, tuple[Tool, str]] = {}
        previous: dict[str, tuple[Tool, ...]] = {}
        for key, (tools, digests) in self._load().items():
            previous[key] = tools
            for tool, known in zip(tools, digests, strict=True):
                self._digests[id(tool)] = (tool, known)
        self.tools = IntentTools(previous)
        #: the tools this build made or took, by name (`save`)
        self._by_name: dict[str, Tool] = {}

    def _load(self) -> dict[str, tuple[tuple[Tool, ...], tuple[str, ...]]]:
        return pickled_table(self._cache, self.kind, self.key, _tools_with_digests)

    def save(self) -> None:
        """Keep what this build made or took for the next (nothing is written when that is what the
        build started from), each tool with its content digest (taken now for the tools this build
        made). Called as soon as the tools are made, before a later stage reads them."""
        kept = {key: (tools, tuple(map(self._digest, tools))) for key, tools in self.tools.kept.items()}
        self._by_name = {tool.name: tool for tools in self.tools.kept.values() for tool in tools}
        if self.tools.changed:
            self._cache.put(self.kind, self.key, pickle.dumps(kept, protocol=5))

    def _digest(self, tool: Tool) -> str:
        found = self._digests.get(id(tool))
        if found is not None and found[0] is tool:
            return found[1]
        made = content_digest(tool)
        self._digests[id(tool)] = (tool, made)
        return made

    def content_digest(self, tool: Tool) -> str | None:
        """A digest naming `tool`'s content, for a final IR tool (after `add_routing_notes`), without
        serialising it; None when this build's lowering did not make or take it (a composite: the
        caller then digests its content itself). After `save`:

        - a tool an intent made or took, as it is: the SHA-256 of its `content_pickle`, as kept;
        - a tool `add_routing_notes` gave a note: ``replace(kept, description=...)`` of the intent's
          tool of that name, every other field the very same object, so its content is a pure function
          of the kept tool's content and its new description, which the digest names (domain-separated
          from content digests)."""
        found = self._digests.get(id(tool))
        if found is not None and found[0] is tool:
            return found[1]
        base = self._by_name.get(tool.name)
        if base is None or type(tool) is not Tool or not _only_description_differs(base, tool):
            return None
        return digest("tool with a routing note 1", self._digest(base), tool.description)


def _only_description_differs(base: Tool, tool: Tool) -> bool:
    """Whether every field of `tool` but its description is the very object `base` holds (what
    ``dataclasses.replace(base, description=...)`` makes)."""
    return all(
        getattr(tool, f.name) is getattr(base, f.name) for f in fields(Tool) if f.name != "description"
    )


def _tools_with_digests(value: Any) -> bool:
    return (
        type(value) is tuple
        and len(value) == 2
        and type(value[0]) is tuple
        and type(value[1]) is tuple
        and bool(value[0])
        and len(value[0]) == len(value[1])
        and all(type(t) is Tool for t in value[0])
        and all(type(d) is str and len(d) == 64 for d in value[1])
    )


def last_tools(cache: Cache | None, api: str) -> LastTools | None:
    """The `LastTools` of the API named `api` when there is a cache."""
    return LastTools(cache, api) if cache is not None else None
