"""Stage `emit`, the runtime policy table: `ApiIR` -> `policy.json` (what the runtime enforces) and
`POLICY.md` (what a reviewer reads in a PR).

Input: the IR's `PolicyRow`s and the catalogs' argument rewrites. Output: the typed `PolicyTable`
(`toolgen.policy.format`, the one definition of the format), whose `to_json()` is `policy.json`, and
the Markdown text of `POLICY.md`, written from the same rows. Format: docs/generated-format.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from ..compile.ir import ApiIR
from ..dialects import allows_code_callers
from ..policy.format import InputRef, MappingValue, NarrowedArg, PolicyRow, PolicyTable, StepRef
from ..remember import Remember, computed
from . import LazyJson, also_known, derived, has_record, known_from, piece_key

_MODE_ORDER = {"read": 0, "preview": 1, "record": 2}


def row_with_rewrites(row: PolicyRow, rewrites: dict[str, list[dict[str, Any]]] | None = None) -> PolicyRow:
    """`row` with its argument rewrites per dialect (`rewrites`; undone by the runtime before
    validation, `toolgen.runtime.call.dialect_args`)."""
    if not rewrites:
        return row
    return replace(row, dialect_rewrites={d: tuple(r) for d, r in rewrites.items()})


def policy_table(
    ir: ApiIR, rewrites: dict[str, dict[str, list[dict[str, Any]]]] | None = None
) -> PolicyTable:
    """The typed policy table of `ir`: its lowered rows, each with the catalogs' argument rewrites
    (`rewrites`: tool -> dialect -> records)."""
    return PolicyTable(
        api=ir.name,
        title=ir.title,
        version=ir.version,
        base_url=ir.base_url,
        spec=ir.spec_display,
        tools=tuple(row_with_rewrites(t.policy, (rewrites or {}).get(t.name)) for t in ir.tools),
        toolsets=ir.toolsets,
    )


def table_json(
    ir: ApiIR,
    table: PolicyTable,
    rewrites: dict[str, dict[str, list[dict[str, Any]]]],
    remember: Remember = computed,
) -> dict[str, Any]:
    """``table.to_json()`` for ``table = policy_table(ir, rewrites)``. A row that is its tool's own
    (``tool.policy``: no argument rewrites) is a pure function of the IR `Tool`'s content: when the
    tool is known by its digest (the build cache's `toolgen.emit.known_contents`), the row is its JSON
    made only when read (`toolgen.emit.LazyJson`: its tool, intent, mode and toolset read from the
    row itself), known by the tool's digest (`toolgen.emit.known_from`: its indented JSON and its
    search document are keyed without making it), so an unchanged tool's row is not made at all. Any
    other row's JSON goes through `remember`, keyed by its tool and the tool's rewrites, and is known
    by that key to the later stages' keys (`toolgen.emit.also_known`)."""
    if remember is computed:
        return table.to_json()
    value = replace(table, tools=()).to_json()
    rows: list[Any] = []
    for tool, row in zip(ir.tools, table.tools, strict=True):
        found: Any = None
        if row is tool.policy:
            found = LazyJson(row.to_json, row_facts(row))
            if not known_from(found, tool, ROW_JSON):
                found = None  # the tool is not known by a digest: keyed by its content
        if found is None:
            key = piece_key("policy-row 1", tool, rewrites.get(tool.name))
            found = remember(key, row.to_json)
            also_known(found, key)
        rows.append(found)
    value["tools"] = rows
    return value


#: what a tool's own policy row's JSON is known by, beside the tool's digest (`table_json`): a new version
#: for another JSON
ROW_JSON = "policy-row 2"


def row_facts(row: PolicyRow) -> tuple[tuple[str, Any], ...]:
    """The members of ``row.to_json()`` that `toolgen.search.text_index.search_documents` groups and
    orders the rows by, read from the row itself (``to_json`` copies them as they are)."""
    return (("tool", row.tool), ("intent", row.intent), ("mode", row.mode), ("toolset", row.toolset))


def _md(text: str) -> str:
    """Cell-safe Markdown text: pipes escaped, no line breaks."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    text = _md(text).replace("`", "'")
    return f"`{text}`" if text else ""


def _ms(ms: int) -> str:
    return f"{ms / 1000:g} s" if ms >= 1000 else f"{ms} ms"


def _duration(seconds: int) -> str:
    return f"{seconds // 60} min" if seconds >= 60 and seconds % 60 == 0 else f"{seconds} s"


def _bytes(n: int) -> str:
    return f"{n / 1000:g} kB" if n >= 1000 else f"{n} B"


def ordered_rows(rows: ApiIR | PolicyTable) -> list[PolicyRow]:
    """Rows (of an IR's tools or of a policy table) grouped by intent, read/preview/record within an
    intent."""
    found = rows.tools if isinstance(rows, PolicyTable) else tuple(t.policy for t in rows.tools)
    return sorted(found, key=lambda r: (r.intent, _MODE_ORDER[r.mode], r.tool))


def _path_text(path: list[str]) -> str:
    text = ""
    for step in path:
        if step == "[]":
            text += "[]"
        elif step == "{}":
            text += ".*"
        elif step.startswith("|"):
            text += f"|{step[1:]}"
        else:
            name = step.removeprefix("~")
            text += f".{name}" if text else name
    return text or "(arguments)"


def _rewrite_text(record: Mapping[str, Any]) -> str:
    kind = record.get("kind")
    if kind == "json_string":
        return f"JSON-encoded string ({record.get('reason')})"
    if kind == "map_entries":
        return "map sent as [{key, value}] entries"
    if kind == "enum_strings":
        return "enum sent as strings: " + ", ".join(
            f"{k}→{v}" for k, v in (record.get("values") or {}).items()
        )
    if kind == "rename":
        return "renamed: " + ", ".join(f"{k}→{v}" for k, v in (record.get("names") or {}).items())
    return str(kind)


def rewrites_markdown(rows: list[PolicyRow]) -> list[str]:
    """The "Arguments reshaped per dialect" section of POLICY.md, from the rows' `dialect_rewrites`."""
    lines = [
        "",
        "## Arguments reshaped per dialect",
        "",
        (
            "Where a provider's schema subset cannot express an argument, its catalog reshapes it and the "
            "runtime converts what the model sends back to the canonical arguments before validating them."
        ),
        "",
    ]
    found = [
        (row.tool, dialect, r)
        for row in sorted(rows, key=lambda row: row.tool)
        for dialect, records in sorted(row.dialect_rewrites.items())
        for r in records
        if r.get("kind") != "ref"
    ]
    if not found:
        return [*lines, "None: every dialect sends the canonical arguments."]
    lines += ["| tool | dialect | argument | sent as |", "|---|---|---|---|"]
    for tool, dialect, r in found:
        where = _path_text(list(r.get("path") or []))
        if "def" in r:
            where = f"$defs.{r['def']}" + ("." + where if where != "(arguments)" else "")
        lines.append(f"| {_code(tool)} | {dialect} | {_code(where)} | {_md(_rewrite_text(r))} |")
    return lines


def _executes(row: PolicyRow) -> str:
    """The "record executes" cell: the stored preview (with its lifetime) or the full arguments."""
    if row.mode != "record":
        return "—"
    if row.record_arguments == "preview":
        ttl = row.preview_ttl_s or 0
        return f"stored preview of {_code(row.pair or '')} (expires after {_duration(ttl)})"
    return "full arguments" + ("" if row.pair else " (no preview tool)")


def policy_markdown(ir: ApiIR, table: PolicyTable | None = None) -> str:
    """The text of POLICY.md: the rows of `table` (default: `policy_table(ir)`, without rewrites),
    with the file names and the non-strict tools of `ir`."""
    table = table if table is not None else policy_table(ir)
    rows = ordered_rows(table)
    kept = _kept_lines(ir, table)

    def line(r: PolicyRow) -> str:
        return kept.get(id(r)) or _row_line(r)

    lines = [
        f"# {_md(table.title)}: runtime policy",
        "",
        (
            f"Generated by `toolgen build` from `{_md(table.spec)}` and `{_md(ir.intent_display)}`. "
            "Do not edit; the runtime enforces exactly this table on every call. In a review, look for "
            "**effect** widening, a lost **approval** gate, a changed **permission** or a dropped "
            "**idempotency key**."
        ),
        "",
        (
            f"{len(rows)} tools: {sum(r.mode == 'read' for r in rows)} read, "
            f"{sum(r.mode == 'preview' for r in rows)} preview, {sum(r.mode == 'record' for r in rows)} record "
            f"({sum(r.mode == 'record' and r.effect == 'destructive' for r in rows)} destructive)."
        ),
        "",
    ]
    header = [
        (
            "| tool | mode | effect | operation | permission | approval | idempotency key | retry | timeout "
            "| pagination | output | record executes |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    if not table.toolsets:
        lines += header
    for r in rows if not table.toolsets else []:
        lines.append(line(r))
    if table.toolsets:
        lines += toolsets_markdown(table)
        for name, group in grouped_rows(table):
            lines += ["", _toolset_heading(table, name), "", *header, *(line(r) for r in group)]
    coded = [t.name for t in ir.tools if allows_code_callers(t)]
    if coded:  # what a loop in model-written code may call: a reviewer sees it widen
        lines += [
            "",
            "## Called from model-written code",
            "",
            (
                "Model-written code may call these tools (`allowed_callers` in anthropic.json and "
                "openai.responses.json; the intent map's `programmatic`). A record tool never is; every call "
                "still goes through this table."
            ),
            "",
            ", ".join(_code(name) for name in sorted(coded)),
        ]
    lines += _limits_section(rows)
    lines += _after_table(ir, rows)
    return "\n".join(lines).rstrip() + "\n"


def _kept_lines(ir: ApiIR, table: PolicyTable) -> dict[int, str]:
    """``id(row) -> _row_line(row)`` for each row of `table` that is its tool's own (``tool.policy``),
    kept with the tool when the build cache keeps a record of it (`toolgen.emit.derived`: the line is a
    pure function of the tool's content); the other rows' lines are left to the caller."""
    return {
        id(row): derived(tool, POLICY_LINE, partial(_row_line, row))
        for tool, row in zip(ir.tools, table.tools, strict=False)
        if row is tool.policy and has_record(tool)
    }


#: what a tool's record names its row's line in POLICY.md by (`policy_markdown`)
POLICY_LINE = "policy-md-row 1"


def _limits_section(rows: list[PolicyRow]) -> list[str]:
    """The "Limits" section (only when a row has limits): each limited tool's limits, counted across
    every worker sharing the receipt store when a request is sent (docs/runtime.md, "Limits")."""
    limited = [r for r in rows if r.limits]
    if not limited:
        return []
    lines = [
        "",
        "## Limits",
        "",
        (
            "Counted when a request is sent, across every worker sharing the receipt store; a call over a "
            "limit sends nothing and is answered `rate_limited` with `retry_after`."
        ),
        "",
        "| tool | limits |",
        "|---|---|",
    ]
    for r in limited:
        lines.append(f"| {_code(r.tool)} | {'; '.join(_md(limit.describe()) for limit in r.limits)} |")
    return lines


def grouped_rows(ir: ApiIR | PolicyTable) -> list[tuple[str | None, list[PolicyRow]]]:
    """`ordered_rows` grouped by toolset: toolsets by name, then the tools in none."""
    groups: dict[str | None, list[PolicyRow]] = {}
    for r in ordered_rows(ir):
        groups.setdefault(r.toolset, []).append(r)
    return sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))


def _toolset_heading(ir: ApiIR | PolicyTable, name: str | None) -> str:
    if name is None:
        return "### Tools in no toolset"
    toolset = next((t for t in ir.toolsets if t.name == name), None)
    if toolset is None:
        return f"### Toolset {_code(name)}"
    return f"### Toolset {_code(name)} ({toolset.loading}): {_md(toolset.description)}"


def toolsets_markdown(ir: ApiIR | PolicyTable) -> list[str]:
    """The "Toolsets" section: each toolset's loading, description and tools (eager / deferred)."""
    counts: dict[str | None, list[int]] = {}
    for row in ordered_rows(ir):
        pair = counts.setdefault(row.toolset, [0, 0])
        pair[0 if row.loading == "eager" else 1] += 1
    lines = [
        "## Toolsets",
        "",
        (
            "Tools are grouped into toolsets (namespaces). `eager` tools are in every catalog up front; "
            "`deferred` tools are found by tool search (a tool's own loading wins over its toolset's)."
        ),
        "",
        "| toolset | loading | description | tools (eager / deferred) |",
        "|---|---|---|---|",
    ]
    for toolset in ir.toolsets:
        eager, deferred = counts.get(toolset.name, [0, 0])
        lines.append(
            f"| {_code(toolset.name)} | {toolset.loading} | {_md(toolset.description)} | "
            f"{eager} / {deferred} |"
        )
    if None in counts:
        eager, deferred = counts[None]
        lines.append(f"| (none) | — | — | {eager} / {deferred} |")
    return lines


def _row_line(r: PolicyRow) -> str:
    effect = f"**{r.effect}**" if r.effect == "destructive" else r.effect
    approval = "**required**" if r.approval == "required" else ("never" if r.mode == "record" else "—")
    if r.approval_when is not None:
        approval = f"**required** when {_code(r.approval_when)} holds (or cannot be evaluated)"
    if r.idempotency is None:
        idem = "—"
    elif r.idempotency.send_in == "none":
        idem = f"{_code(r.idempotency.arg)} (receipts only)"
    else:
        idem = f"{_code(r.idempotency.arg)} → {r.idempotency.send_in} {_code(r.idempotency.wire_name or '')}"
        idem += (
            " (deduplicated by the API)"
            if r.idempotency.honoured_by_api
            else " (not deduplicated: never re-sent)"
        )
    if r.mode == "preview":  # a preview sends nothing: no retry, no timeout
        retry = timeout = "—"
    else:
        retry = (
            "none"
            if r.retry.max_attempts <= 1
            else f"{r.retry.max_attempts}× within {_ms(r.retry.deadline_ms)}"
        )
        timeout = _ms(r.timeout_ms)
    pages = "—" if r.pagination is None else f"{r.pagination.style}, ≤{r.pagination.max_page_size}"
    out = []
    if r.output.fields:
        out.append(f"{len(r.output.fields)} field{'s' if len(r.output.fields) != 1 else ''}")
    out.append(f"≤{_bytes(r.output.max_bytes)}")
    if r.output.redact:
        out.append("redacts " + ", ".join(_code(p) for p in r.output.redact))
    deferred = " (deferred)" if r.loading == "deferred" else ""
    return (
        f"| {_code(r.tool)}{deferred} | {r.mode} | {effect} | {operation_cell(r)} "
        f"| {', '.join(_code(p) for p in r.permission) or '—'} | {approval} | {idem} | {retry} "
        f"| {timeout} | {pages} | {'; '.join(out)} | {_executes(r)} |"
    )


def operation_cell(r: PolicyRow) -> str:
    """The "operation" cell: ``METHOD /path``, or for a composite its pattern and step count."""
    if r.composite is not None:
        count = len(r.composite.steps)
        return f"composite: {r.composite.pattern} of {count} step{'s' if count != 1 else ''}"
    return _code(r.method + " " + r.path)


def _mapping_text(value: MappingValue) -> str:
    if isinstance(value, InputRef):
        return "$input" + value.pointer
    if isinstance(value, StepRef):
        return f"${value.step}{value.pointer}"
    return json.dumps(_plain_literal(value.value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _plain_literal(value: Any) -> Any:
    if isinstance(value, (InputRef, StepRef)):
        return _mapping_text(value)
    if isinstance(value, dict):
        return {k: _plain_literal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_literal(v) for v in value]
    return value


def _step_key_array(record_tool: str, step_id: str) -> str:
    """What a write step's key digests, as POLICY.md shows it: the JSON array ``[record tool, record
    key, step id]`` with ``<record key>`` in the key's place (`toolgen.runtime.pipeline.idempotency.step_key`)."""
    return f"[{json.dumps(record_tool, ensure_ascii=False)}, <record key>, {json.dumps(step_id, ensure_ascii=False)}]"


def composites_markdown(rows: list[PolicyRow]) -> list[str]:
    """The "Composite tools" section of POLICY.md: per composite (its record row when it writes), each
    step in plan order with its operation, the policy it runs under and where its arguments come from
    (nothing when there are no composites)."""
    chosen = [r for r in rows if r.composite is not None and r.mode != "preview"]
    if not chosen:
        return []
    lines = [
        "",
        "## Composite tools",
        "",
        (
            "Each step runs under its own row, in the call path's order: the runtime checks its permission, "
            "validates its arguments, applies its timeout (within what is left of the composite's deadline), "
            "counts its limits when it sends and validates its answer, as for a tool of that operation. "
            "A composite that "
            "writes is previewed as a whole and approved once; each write step sends its own idempotency key: "
            "`tgs-` and the hex SHA-256 of the JSON array of the record tool, the record key and the step id "
            "(cut to 36 characters in all, or to the step's key parameter's `maxLength` when that is shorter, "
            "never below 20), the same on every resumed record; record tools refuse a caller's key of that "
            "form."
        ),
    ]
    for r in chosen:
        plan = r.composite
        assert plan is not None
        switch = f", switch {_code(_mapping_text(plan.switch))}" if plan.switch is not None else ""
        lines += [
            "",
            f"### {_code(r.tool)} ({plan.pattern}{switch})",
            "",
            (
                "| step | when | operation | mode | effect | permission | approval | idempotency key | timeout "
                "| arguments |"
            ),
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for step in plan.steps:
            s = step.row
            idem = (
                "—"
                if s.idempotency is None
                else (
                    f"{_code(s.idempotency.arg)} = `tgs-` + the hex SHA-256 of {_code(_step_key_array(r.tool, step.id))}"
                    + (
                        f" → {s.idempotency.send_in} {_code(s.idempotency.wire_name or '')}"
                        if s.idempotency.send_in != "none"
                        else " (receipts only)"
                    )
                )
            )
            effect = f"**{s.effect}**" if s.effect == "destructive" else s.effect
            args = "; ".join(f"{_code(a)} ← {_code(_mapping_text(v))}" for a, v in step.args.items()) or "—"
            lines.append(
                f"| {_code(step.id)} | {_code(step.when) if step.when is not None else '—'} | "
                f"{_code(s.operation_id)} {_code(s.method + ' ' + s.path)} | {s.mode} | {effect} | "
                f"{', '.join(_code(p) for p in s.permission) or '—'} | {s.approval} | {idem} | "
                f"{_ms(s.timeout_ms)} | {args} |"
            )
        members = "; ".join(f"{_code(m)} ← {_code(_mapping_text(v))}" for m, v in plan.output.items())
        lines += ["", f"Result: {members or '(empty)'}."]
    return lines


def _after_table(ir: ApiIR, rows: list[PolicyRow]) -> list[str]:
    lines: list[str] = []
    auths: dict[tuple[str, str, str, str], list[str]] = {}
    for r in rows:
        for a in r.auth:
            auths.setdefault((a.scheme, a.kind, f"{a.location} {a.wire_name}", a.secret), []).append(r.tool)
    lines += [
        "",
        "## Credentials",
        "",
        (
            "Injected by the runtime from the named secret (an environment variable by default); never a "
            "tool argument."
        ),
        "",
    ]
    if auths:
        lines += ["| scheme | kind | sent as | secret | tools |", "|---|---|---|---|---|"]
        for (scheme, kind, sent, secret), tools in sorted(auths.items()):
            lines.append(
                f"| {_code(scheme)} | {kind} | {_code(sent)} | {_code(secret)} | "
                f"{', '.join(_code(t) for t in tools)} |"
            )
    else:
        lines.append("None: the spec declares no security requirement for these operations.")

    lines += ["", "## Arguments and where they are sent", ""]
    for r in rows:
        if r.mode == "preview" or r.composite is not None:
            continue
        lines.append(
            f"<details><summary>{_code(r.tool)}: {_code(r.method + ' ' + r.path)}, "
            f"{'no' if r.body_encoding == 'none' else r.body_encoding} body</summary>"
        )
        lines.append("")
        if not r.bindings and not r.fixed and r.pagination is None:
            lines.append("No arguments.")
        else:
            lines += ["| argument | sent in | wire name | required | null means |", "|---|---|---|---|---|"]
            for b in r.bindings:
                lines.append(
                    f"| {_code(b.arg)} | {b.location} | {_code(b.wire_name) or '(whole body)'} | "
                    f"{'yes' if b.required else 'no'} | {b.null_means} |"
                )
            if r.pagination is not None:
                p = r.pagination
                lines.append(
                    f"| {_code(p.cursor_arg)} | runtime cursor | {_code(p.cursor_param or 'Link header')} "
                    f"| no | first page |"
                )
                lines.append(
                    f"| {_code(p.page_size_arg)} | query | {_code(p.limit_param or '')} | no | "
                    f"default {p.default_page_size} |"
                )
            for f in r.fixed:
                lines.append(
                    f"| (fixed) | {f.location} | {_code(f.wire_name)} | always | value "
                    f"{_code(repr(f.value))}"
                    + (f", the only value the spec admits ({_code(f.source)})" if f.source else "")
                    + " |"
                )
        lines += ["", "</details>", ""]
    lines += composites_markdown(rows)
    lines += narrowed_markdown(rows)
    lines += rewrites_markdown(rows)
    lines += non_strict_markdown(ir)
    return lines


def non_strict_markdown(ir: ApiIR) -> list[str]:
    """The "Non-strict tools" section of POLICY.md: the tools whose intent asks for ``strict: false``
    (nothing when there are none). Tools a provider cannot take strict are listed in REPORT.md."""
    chosen = [t.name for t in ir.tools if not t.strict]
    if not chosen:
        return []
    return [
        "",
        "## Non-strict tools",
        "",
        (
            "Non-strict by the intent map's choice (`strict: false`): OpenAI receives them with `strict: false` "
            "and their natural argument schema (no reshaped arguments), Anthropic never marks them strict; the "
            "runtime still validates every call against the canonical schema. Tools non-strict because of a "
            'provider limit are listed in REPORT.md ("Strict tools").'
        ),
        "",
        ", ".join(_code(n) for n in chosen),
    ]


def narrowed_markdown(rows: list[PolicyRow]) -> list[str]:
    """The "Arguments narrowed by the intent map" section of POLICY.md: one line per distinct change
    (narrowed schema, description override, hidden) with the intents that make it."""
    lines = [
        "",
        "## Arguments narrowed by the intent map",
        "",
        (
            "Where the intent map narrows an argument (`args`), toolgen proved at build time that every value "
            "the narrowed schema accepts is valid under the spec's schema; the catalogs show, and the runtime "
            "validates against, the narrowed schema."
        ),
        "",
    ]
    seen: set[str] = set()
    changes: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        if not r.narrowed or r.intent in seen:
            continue
        seen.add(r.intent)
        for n in r.narrowed:
            changes.setdefault((n.arg, _narrowed_text(n)), []).append(r.intent)
    if not changes:
        return [*lines, "None: every argument has the spec's schema."]
    lines += ["| argument | change | intents |", "|---|---|---|"]
    for (arg, change), intents in sorted(changes.items(), key=lambda kv: (kv[1][0], kv[0])):
        lines.append(f"| {_code(arg)} | {change} | {', '.join(_code(i) for i in intents)} |")
    return lines


def _narrowed_text(n: NarrowedArg) -> str:
    if n.hidden:
        return "hidden (never sent)"
    parts = []
    if n.schema is not None:
        parts.append(
            "schema " + _code(json.dumps(n.schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
        )
    if n.description is not None:
        parts.append("description " + _code(n.description))
    return "; ".join(parts)
