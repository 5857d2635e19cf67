"""Model-facing catalogs, one per dialect (OpenAI strict function tools, Anthropic tools, MCP tools).

Input: `ApiIR`. Output: `Catalogs`: one list of tool objects per dialect of
`toolgen.dialects.registry()`, in its order, plus the dialect warnings (e.g. a tool that cannot be
strict, a recursive schema that Anthropic strict mode cannot take), plus the catalogs that scale
(`Catalogs.deferred`: ``openai.responses.json``, ``anthropic.json`` with its tool-search tool, and what a
model sees of each dialect before it searches). The schema rules themselves live in the dialect
modules (`toolgen.dialects.openai`, `.anthropic`, `.mcp`, `.gemini`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..compile.ir import ApiIR, Tool
from ..dialects import DeferredViews, Dialect, DialectOptions, configured, deferred_views, shared_views
from ..remember import Remember, computed
from . import derived, piece_key

#: one tool's object, warnings and argument rewrites in one dialect (`Dialect.catalog_entry`)
Entry = tuple[dict[str, Any], tuple[str, ...], tuple[dict[str, Any], ...]]


@dataclass
class Catalogs:
    """Dialect name -> its catalog (tool objects in the IR's tool order), and the view transforms'
    warnings as ``(tool, "<dialect>: <message>")``, and the argument rewrites of each tool per dialect
    (``rewrites[tool][dialect]``, only where a view reshaped arguments; the policy table carries them),
    and each dialect's per-catalog decisions (``decisions[dialect]``: ``(tool, decision)``, e.g.
    which tools are strict within Anthropic's budgets)."""

    tools: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    rewrites: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    decisions: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: the catalogs that scale (toolsets, deferred loading, tool search) and what a model sees up front
    deferred: DeferredViews = field(default_factory=DeferredViews)

    def __getitem__(self, dialect: str) -> list[dict[str, Any]]:
        return self.tools[dialect]

    def by_dialect(self) -> dict[str, list[dict[str, Any]]]:
        return self.tools


def build_catalogs(
    ir: ApiIR,
    progress: Callable[[int, int], None] | None = None,
    options: DialectOptions | None = None,
    entry: Callable[[Dialect, Tool], Entry] | None = None,
    remember: Remember = computed,
) -> Catalogs:
    """Each tool's view in each dialect is computed once and feeds both the tool object and the
    warnings. `progress(done, total)` is called after each tool, if given. `options`: the project's
    dialect choices (toolgen.yaml ``dialects:``; default: none). `entry(dialect, tool)` computes one
    tool's entry (default: `Dialect.catalog_entry`; the build passes one that remembers them,
    `toolgen.builder.catalog_pieces.CatalogMemo`). `remember`: what a dialect's whole-catalog choice reads of
    each entry (`Dialect.select_facts`), by the entry's content (`toolgen.emit.piece_key`)."""
    options = options or DialectOptions()
    dialects = configured(options)
    out = Catalogs({d.name: [] for d in dialects})
    with shared_views():  # the tools share subtrees: each transform sees each one once
        for done, tool in enumerate(ir.tools, 1):
            if progress is not None:
                progress(done, len(ir.tools))
            for dialect in dialects:
                made, warnings, rewrites = (
                    entry(dialect, tool) if entry is not None else dialect.catalog_entry(tool)
                )
                out.tools[dialect.name].append(made)
                if rewrites:
                    out.rewrites.setdefault(tool.name, {})[dialect.name] = list(rewrites)
                out.warnings.extend((tool.name, f"{dialect.name}: {warning}") for warning in warnings)
    for dialect in dialects:
        if dialect.select is not None:
            entries = out.tools[dialect.name]
            facts = _select_facts(dialect, entries, remember)
            out.tools[dialect.name], out.decisions[dialect.name] = dialect.select(
                list(ir.tools), entries, facts
            )
    out.deferred = deferred_views(
        ir.tools,
        out.tools,
        ir.toolsets,
        search_limit=options.anthropic_search_limit,
        responses_limit=options.responses_limit,
    )
    return out


def _select_facts(dialect: Dialect, entries: list[dict[str, Any]], remember: Remember) -> list[Any] | None:
    """`dialect.select_facts` of each entry through `remember`, keyed by the entry's content; None
    when nothing is remembered (`select` computes them) or the dialect has none."""
    facts = dialect.select_facts
    if facts is None or remember is computed:
        return None
    return [
        derived(
            e, f"select-facts 1 {dialect.name}", partial(_remember_facts, remember, dialect.name, facts, e)
        )
        for e in entries
    ]


def _remember_facts(remember: Remember, name: str, facts: Callable[[Any], Any], entry: dict[str, Any]) -> Any:
    return remember(piece_key("select-facts 1", name, entry), partial(facts, entry))
