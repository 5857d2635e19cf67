"""Stage `emit`, `REPORT.md`: tools, coverage of the spec's operations, catalog bytes and o200k tokens
per tool and dialect, and the build's warnings.

Input: the `ApiIR`, its `Catalogs` and the build's diagnostics. Output: `measure` -> a `ToolSize`
per tool (compact-JSON bytes and tokens in each dialect); `report_markdown` -> the Markdown text.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from ..compile.ir import ApiIR, PolicyRow
from ..diagnostics import Diagnostic
from ..dialects import NAMESPACE_ADVISED_FUNCTIONS, PartPlan, names, namespace_advice, registry, reshaping
from ..dialects.anthropic import ANTHROPIC_MAX_SEARCH_TOOLS
from ..dialects.openai import OPENAI_MAX_TOOLS
from ..remember import Remember, computed
from ..tokens import count_tokens
from . import compact_json, derived, piece_key
from .dialect_catalogs import Catalogs
from .policy import _code, _md, grouped_rows, operation_cell, toolsets_markdown
from .upfront import upfront_costs


@dataclass(frozen=True)
class ToolSize:
    tool: str
    bytes: dict[str, int]
    tokens: dict[str, int]


def measure(catalogs: Catalogs, remember: Remember = computed) -> list[ToolSize]:
    """Compact-JSON bytes and o200k tokens of each tool in each dialect. `remember`: each tool
    object's two sizes are taken through it, keyed by the object's content (`piece_key`: what its
    compact JSON is made from), so an unchanged tool is neither serialised nor tokenised again."""
    sizes: dict[str, dict[str, dict[str, int]]] = {}
    for dialect, tools in catalogs.by_dialect().items():
        for tool in tools:
            name = registry()[dialect].tool_name(tool)
            entry = sizes.setdefault(name, {"bytes": {}, "tokens": {}})
            size, tokens = _measured(remember, tool)
            entry["bytes"][dialect] = size
            entry["tokens"][dialect] = tokens
    return [ToolSize(name, v["bytes"], v["tokens"]) for name, v in sorted(sizes.items())]


def _tokens(remember: Remember, entry: dict[str, Any]) -> int:
    """The o200k tokens of `entry`'s compact JSON, remembered as `measure` remembers them."""
    return _measured(remember, entry)[1]


def _measured(remember: Remember, tool: dict[str, Any]) -> tuple[int, int]:
    """`_sizes` of `tool`: kept with it when it is a catalog entry the build cache read back
    (`toolgen.emit.derived`), else through `remember`, keyed by its content."""
    return derived(tool, "o200k-object", partial(_sizes, tool), partial(_remember_sizes, remember, tool))


def _remember_sizes(remember: Remember, tool: dict[str, Any]) -> tuple[int, int]:
    return remember(piece_key("o200k-object", tool), partial(_sizes, tool))


def _sizes(tool: dict[str, Any]) -> tuple[int, int]:
    """The compact JSON of `tool`: its UTF-8 bytes and o200k tokens."""
    text = compact_json(tool)
    return len(text.encode("utf-8")), count_tokens(text)


def report_markdown(
    ir: ApiIR,
    catalogs: Catalogs,
    sizes: list[ToolSize],
    diagnostics: list[Diagnostic],
    remember: Remember = computed,
) -> str:
    """REPORT.md. `remember`: what `measure` remembers of a tool object (its compact JSON's bytes and
    o200k tokens), for the up-front views' entries that are not a catalog's tools (namespaces,
    tool-search tools, the entries of deferred views)."""
    covered = set(ir.covered)
    skipped = {s.operation.pointer: s for s in ir.skipped}
    total_tokens = {d: sum(s.tokens.get(d, 0) for s in sizes) for d in names()}
    total_bytes = {d: sum(s.bytes.get(d, 0) for s in sizes) for d in names()}
    lines = [
        f"# {_md(ir.title)}: build report",
        "",
        f"Spec `{_md(ir.spec_display)}` (version {_md(ir.version) or 'unknown'}), intent map `{_md(ir.intent_display)}`.",
        "",
        "| | count |",
        "|---|---|",
        f"| operations in the spec | {len(ir.operations)} |",
        f"| operations covered by tools | {len(covered)} |",
        f"| operations skipped (see warnings) | {len(skipped)} |",
        f"| tools | {len(ir.tools)} |",
        (
            f"| catalog tokens, o200k (openai / anthropic / mcp) | {total_tokens['openai']} / "
            f"{total_tokens['anthropic']} / {total_tokens['mcp']} |"
        ),
        (
            f"| catalog bytes (openai / anthropic / mcp) | {total_bytes['openai']} / {total_bytes['anthropic']} / "
            f"{total_bytes['mcp']} |"
        ),
        f"| gemini catalog, o200k tokens / bytes | {total_tokens['gemini']} / {total_bytes['gemini']} |",
        "",
        *_upfront_lines(catalogs, sizes, remember),
        *_strict_lines(catalogs, ir),
        "## Tools",
        "",
        "Sizes are of each tool's compact JSON; tokens use the o200k_base encoding.",
        "",
    ]
    header = [
        "| tool | mode | effect | operation | openai tokens | anthropic tokens | mcp tokens | mcp bytes |",
        "|---|---|---|---|---|---|---|---|",
    ]
    by_size = {s.tool: s for s in sizes}
    if ir.toolsets:
        lines += toolsets_markdown(ir)
        for name, rows in grouped_rows(ir):
            heading = f"### Toolset {_code(name)}" if name is not None else "### Tools in no toolset"
            lines += ["", heading, "", *header]
            lines += [
                _tool_line(r, by_size[r.tool])
                for r in sorted(rows, key=lambda r: r.tool)
                if r.tool in by_size
            ]
    else:
        by_name = {t.name: t for t in ir.tools}
        lines += header
        lines += [_tool_line(by_name[s.tool].policy, s) for s in sizes]
    lines += ["", "## Coverage", ""]
    tool_by_pointer: dict[str, list[str]] = {}
    for t in ir.tools:
        tool_by_pointer.setdefault(t.source_pointer, []).append(t.name)
    cov = [op for op in ir.operations if op.pointer in covered]
    rest = [op for op in ir.operations if op.pointer not in covered]
    lines.append(f"Covered ({len(cov)}):")
    lines.append("")
    for op in cov:
        lines.append(
            f"- {_code(op.method + ' ' + op.path)} ({_code(op.operation_id or '-')}) → "
            + ", ".join(_code(n) for n in sorted(tool_by_pointer.get(op.pointer, [])))
        )
    lines.append("")
    if rest:
        lines.append(f"<details><summary>Not covered ({len(rest)})</summary>")
        lines.append("")
        for op in rest:
            why = skipped.get(op.pointer)
            note = f": skipped, {_md(why.reason)} ({_code(why.code)})" if why else ""
            lines.append(f"- {_code(op.method + ' ' + op.path)} ({_code(op.operation_id or '-')}){note}")
        lines += ["", "</details>", ""]
    else:
        lines += ["Not covered: none.", ""]
    warnings = [d for d in diagnostics if d.severity in ("warning", "error")]
    lines += ["## Warnings", ""]
    if not warnings and not catalogs.warnings:
        lines.append("None.")
    counts: dict[str, int] = {}
    for d in warnings:
        counts[d.code] = counts.get(d.code, 0) + 1
    if counts:
        lines.append("By code: " + ", ".join(f"{_code(c)} {n}" for c, n in sorted(counts.items())) + ".")
        lines.append("")
    for d in warnings[:200]:
        where = d.location.render() if d.location else ""
        lines.append(f"- {_code(d.code)} {_md(where)}: {_md(d.message)}")
    if len(warnings) > 200:
        lines.append(f"- … and {len(warnings) - 200} more (run `toolgen lint --format json` for all)")
    for tool, message in sorted(set(catalogs.warnings))[:200]:
        lines.append(f"- {_code('dialect')} {_code(tool)}: {_md(message)}")
    return "\n".join(lines).rstrip() + "\n"


def _tool_line(row: PolicyRow, size: ToolSize) -> str:
    deferred = " (deferred)" if row.loading == "deferred" else ""
    return (
        f"| {_code(row.tool)}{deferred} | {row.mode} | {row.effect} | {operation_cell(row)} | "
        f"{size.tokens.get('openai', 0)} | {size.tokens.get('anthropic', 0)} | {size.tokens.get('mcp', 0)} | "
        f"{size.bytes.get('mcp', 0)} |"
    )


def _upfront_lines(catalogs: Catalogs, sizes: list[ToolSize], remember: Remember = computed) -> list[str]:
    """The "Up-front cost" section: per dialect, what a model sees before it searches, in o200k tokens.
    A catalog tool shown up front as it is (the same object) is not counted again: `measure` did."""
    views = catalogs.deferred
    by_tool = {s.tool: s for s in sizes}
    counted: dict[int, int] = {}
    for dialect, tools in catalogs.by_dialect().items():
        for tool in tools:
            size = by_tool.get(registry()[dialect].tool_name(tool))
            if size is not None and dialect in size.tokens:
                counted[id(tool)] = size.tokens[dialect]
    lines = [
        "## Up-front cost",
        "",
        (
            f"What a model sees before it searches, in o200k tokens of compact JSON. {views.deferred} tools are "
            "deferred (found by tool search, then loaded in full)."
            if views.deferred
            else "No tool is deferred: every catalog is sent whole (mark tools or toolsets `loading: deferred` to "
            "load them through tool search)."
        ),
        "",
        "| dialect | file | up front | entries | tokens |",
        "|---|---|---|---|---|",
    ]
    for cost in upfront_costs(views, counted, partial(_tokens, remember)):
        lines.append(
            f"| {cost.view} | {_code(cost.file)} | {_md(cost.note)} | {cost.entries} | {cost.tokens} |"
        )
    lines += _parts_lines(catalogs)
    # a split catalog's parts repeat the namespaces of eager functions: each is named once
    large = list(
        dict.fromkeys(
            namespace_advice(
                [e for catalog in views.catalogs_of("openai.responses").values() for e in catalog]
            )
        )
    )
    if large:
        lines += [
            "",
            (
                f"OpenAI advises fewer than {NAMESPACE_ADVISED_FUNCTIONS} functions per namespace (F.1); "
                "these toolsets have more: " + ", ".join(f"{_code(n)} ({k})" for n, k in large) + "."
            ),
        ]
    return [*lines, ""]


def _parts_lines(catalogs: Catalogs) -> list[str]:
    """The parts of each split catalog (`toolgen.dialects._parts`): file, entries, toolsets."""
    lines: list[str] = []
    for name, plan in sorted(catalogs.deferred.parts.items()):
        if not plan.split:
            continue
        if name == "anthropic":
            why = (
                f"a request with tool search carries at most {plan.limit:,} tools ({_source(plan, 'F.2')}). "
                f"Each part is a whole request catalog: the {plan.fixed - 1} eager tools, the deferred tools of "
                "whole toolsets and the tool-search tool"
            )
        else:
            why = (
                f"a request carries at most {plan.limit:,} tools, a namespace counting as one "
                f"({_source(plan, 'A.1 / F.1')}). Each part is a whole request catalog: the {plan.fixed} entries "
                "every part repeats (functions of no toolset, namespaces with eager functions, `tool_search`) "
                "and whole namespaces of deferred functions"
            )
        lines += [
            "",
            (
                f"The {_code(name)} catalog is split into {len(plan.parts)} parts: {why}; send the part "
                f"holding the toolsets a conversation needs ({_code(f'{name}.parts.json')} indexes them, "
                f"`toolgen catalog --dialect {name} --toolset NAME` prints it)."
            ),
            "",
            "| file | tools | toolsets |",
            "|---|---|---|",
        ]
        for k, part in enumerate(plan.parts, 1):
            names = [_code(n) if n is not None else "(no toolset)" for n in part.toolsets]
            shown = (
                ", ".join(names) if len(names) <= 4 else f"{names[0]} … {names[-1]} ({len(names)} toolsets)"
            )
            lines.append(f"| {_code(f'{name}.{k}.json')} | {plan.sent(part)} | {shown} |")
    return lines


def _source(plan: PartPlan, section: str) -> str:
    """The provider rule a part plan keeps, and the limit when a build lowered it."""
    provider = ANTHROPIC_MAX_SEARCH_TOOLS if section == "F.2" else OPENAI_MAX_TOOLS
    return section if plan.limit == provider else f"{section}, lowered to {plan.limit:,} for this build"


def _strict_lines(catalogs: Catalogs, ir: ApiIR) -> list[str]:
    """Which tools are strict in each dialect, and why the others are not: the intent map's choice
    (``strict: false``) or a provider limit."""
    tools = catalogs.tools
    lines = ["## Strict tools", ""]
    if "openai" in tools:
        strict = sum(1 for t in tools["openai"] if t["function"].get("strict") is True)
        lines.append(f"OpenAI: {strict} of {len(tools['openai'])} tools strict.")
        lines += _non_strict_lines(ir, [t["function"] for t in tools["openai"]])
    reshaped = {
        d.name: sum(
            1
            for per in catalogs.rewrites.values()
            if any(r.get("kind") != "ref" for r in per.get(d.name, []))
        )
        for d in reshaping()
    }
    lines.append(
        "Arguments reshaped (undone by the runtime, see POLICY.md): "
        + ", ".join(f"{d} {n} tools" for d, n in reshaped.items())
        + "."
    )
    decisions = catalogs.decisions.get("anthropic")
    if decisions:
        chosen = [t for t, d in decisions if d.startswith("strict")]
        lines += [
            "",
            (
                f"Anthropic: {len(chosen)} of {len(decisions)} tools strict (one request carries at most 20 "
                "strict tools, 24 optional and 16 union parameters; records of destructive intents first, "
                "then other writes, previews, reads)."
            ),
            "",
            "| tool | anthropic strict |",
            "|---|---|",
        ]
        lines += [f"| {_code(t)} | {_md(d)} |" for t, d in decisions]
    return [*lines, ""]


def _non_strict_lines(ir: ApiIR, functions: list[dict[str, Any]]) -> list[str]:
    """The OpenAI tools sent non-strict, split by cause (nothing when every tool is strict)."""
    chosen = [t.name for t in ir.tools if not t.strict]
    by_limit = [
        str(f.get("name")) for f in functions if f.get("strict") is not True and f.get("name") not in chosen
    ]
    lines: list[str] = []
    if chosen:
        lines.append(
            "Not strict by the intent map's choice (`strict: false`; natural schema, no reshaped "
            "arguments; never strict in Anthropic either): " + ", ".join(_code(n) for n in chosen) + "."
        )
    if by_limit:
        lines.append(
            "Not strict because of a provider limit (see the warnings): "
            + ", ".join(_code(n) for n in by_limit)
            + "."
        )
    return lines
