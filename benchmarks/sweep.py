"""Build every real spec of the shared corpus with an include-everything intent map and record what happens.

Run on demand (the slow test `tests/test_real_specs.py` calls `sweep_spec` for each spec, one test per spec):

    python benchmarks/sweep.py [--shared ../shared] [--only stripe,github-api.github.com]
    python benchmarks/sweep.py --scaling [--spec PATH ...] [--replicate stripe.json:25 ...]

``--scaling`` measures what a user pays: for each spec (default: xkcd, Notion, Asana, Stripe, GitHub
from ``<shared>/specs/real/``; ``--spec`` takes any OpenAPI file instead, repeatable; ``--replicate
SPEC:N`` adds SPEC N times over, `benchmarks/replicate.py`) it runs the include-everything build three
times in fresh processes (`benchmarks/buildcost.py`): the JSON outputs without lint, the same with
lint and REPORT.md, and the default build (every artifact: catalogs, policy, REPORT.md with lint,
the Python package), and
records operations, seconds, CPU seconds, peak memory, output bytes, the longest generated Python file
and the time to import the generated package. Results: ``benchmarks/results/scaling.md`` (+ ``.json``).

For each spec in ``<shared>/specs/real/`` it writes an intent map ``include: [{match: "*"}]`` into a
temporary folder, builds it in-process with the JSON outputs (``openai,anthropic,mcp,policy``), checks
every catalog with `toolgen.dialects.check_catalog` (no per-request tool cap), checks that every
operation is either covered by a tool or skipped with a diagnostic, and records: operations, tools,
skipped operations by reason code, warnings by code, o200k catalog tokens per dialect and the build
time. Results go to ``benchmarks/results/sweep.md`` and ``sweep.json``.

The Swagger 2.0 Petstore is read as OpenAPI 3.0 (`toolgen.compile.swagger2`) and must build like the others.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = REPO / ".." / "shared"
RESULTS = REPO / "benchmarks" / "results"
JSON_OUTPUTS = ("openai", "anthropic", "mcp", "policy")
#: specs that must not build, and the error code they must give instead
EXPECTED_ERRORS: dict[str, str] = {}


@dataclass
class SpecResult:
    spec: str
    openapi: str = ""
    operations: int = 0
    covered: int = 0
    tools: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # reason code -> operations
    warnings: dict[str, int] = field(default_factory=dict)  # diagnostic code -> count
    dialect_warnings: int = 0  # e.g. tools that cannot be strict (free-form objects)
    strict_openai: int = 0  # tools emitted with strict: true
    strict_anthropic: int = 0  # tools sent with strict: true (within one request's budgets)
    tokens: dict[str, int] = field(default_factory=dict)  # dialect -> o200k tokens of the catalog
    seconds: float = 0.0  # in-process build of the JSON outputs (load + lower + emit + conformance)
    error: str | None = None  # expected error code (exit 2), if the spec must not build
    violations: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # operations neither covered nor skipped (bugs)


def real_specs(shared: Path = DEFAULT_SHARED) -> list[Path]:
    folder = shared / "specs" / "real"
    return sorted(p for p in folder.iterdir() if p.suffix in (".json", ".yaml", ".yml"))


def include_everything_map(spec: Path, folder: Path, name: str) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(spec.resolve()))}\napi: {{name: {name}}}\n"
        'include: [{match: "*"}]\n',
        encoding="utf-8",
    )
    return path


def api_name(spec: Path) -> str:
    import re

    name = re.sub(r"[^a-z0-9]+", "_", spec.stem.lower()).strip("_")
    return name if not name[0].isdigit() else "_" + name


def sweep_spec(spec: Path, *, tokens: bool = True) -> SpecResult:
    """Build `spec` with an include-everything intent map (in memory) and check the result."""
    from toolgen.builder.build import build_api
    from toolgen.diagnostics import DiagnosticError
    from toolgen.dialects import check_catalog, names

    result = SpecResult(spec.name)
    with tempfile.TemporaryDirectory() as tmp:
        name = api_name(spec)
        intent = include_everything_map(spec, Path(tmp), name)
        start = time.perf_counter()
        try:
            build = build_api(intent, Path(tmp) / "out", emit=JSON_OUTPUTS, run_lint=False)
        except DiagnosticError as exc:
            result.seconds = round(time.perf_counter() - start, 3)
            codes = sorted({d.code for d in exc.diagnostics if d.severity == "error"})
            result.error = ",".join(codes)
            result.openapi = _openapi_version(spec)
            return result
        result.seconds = round(time.perf_counter() - start, 3)
    ir = build.ir
    result.operations = len(ir.operations)
    result.covered = len(ir.covered)
    result.tools = len(ir.tools)
    result.skipped = dict(sorted(Counter(s.code for s in ir.skipped).items()))
    result.warnings = dict(
        sorted(Counter(d.code for d in build.diagnostics if d.severity == "warning").items())
    )
    result.dialect_warnings = len(build.catalogs.warnings)
    result.strict_openai = sum(1 for t in build.catalogs["openai"] if t["function"].get("strict") is True)
    covered, skipped = set(ir.covered), {s.operation.pointer for s in ir.skipped}
    result.dropped = [
        f"{op.method} {op.path}"
        for op in ir.operations
        if op.pointer not in covered and op.pointer not in skipped
    ]
    for dialect, tools in build.catalogs.by_dialect().items():
        for v in check_catalog(dialect, tools, max_tools=None):
            result.violations.append(v.render())
    result.strict_anthropic = sum(1 for t in build.catalogs["anthropic"] if t.get("strict") is True)
    result.violations.extend(_anthropic_budget_left(build.catalogs["anthropic"]))
    if tokens:
        from toolgen.emit.build_report import measure

        sizes = measure(build.catalogs)
        result.tokens = {d: sum(s.tokens.get(d, 0) for s in sizes) for d in names()}
    result.openapi = _openapi_version(spec)
    return result


def _anthropic_budget_left(tools: list[dict[str, Any]]) -> list[str]:
    """Tools left non-strict although the strict subset can express them and the request's budgets
    (20 strict tools, 24 optional, 16 union parameters) have room for them."""
    from toolgen.dialects.anthropic import (
        ANTHROPIC_MAX_OPTIONAL,
        ANTHROPIC_MAX_STRICT_TOOLS,
        ANTHROPIC_MAX_UNIONS,
        _strict_blockers,
        strict_budget,
        strict_form,
    )

    strict = [t for t in tools if t.get("strict") is True]
    count = len(strict)
    optional = sum(strict_budget(t["input_schema"])[0] for t in strict)
    unions = sum(strict_budget(t["input_schema"])[1] for t in strict)
    out = []
    for tool in tools:
        if tool.get("strict") is True:
            continue
        schema = strict_form(tool["input_schema"])
        if _strict_blockers(schema):
            continue
        opt, uni = strict_budget(schema)
        if (
            count + 1 <= ANTHROPIC_MAX_STRICT_TOOLS
            and optional + opt <= ANTHROPIC_MAX_OPTIONAL
            and unions + uni <= ANTHROPIC_MAX_UNIONS
        ):
            out.append(f"anthropic:{tool['name']}: could be strict within the request's budgets")
    return out


def _openapi_version(spec: Path) -> str:
    text = spec.read_text(encoding="utf-8")[:4000]
    import re

    m = re.search(r"""["']?(openapi|swagger)["']?\s*:\s*["']?([0-9.]+)""", text)
    return f"{'swagger ' if m and m.group(1) == 'swagger' else ''}{m.group(2)}" if m else "?"


def check(result: SpecResult) -> list[str]:
    """What is wrong with one sweep result (empty list = the spec passes the sweep)."""
    problems: list[str] = []
    expected = EXPECTED_ERRORS.get(result.spec)
    if expected is not None:
        if result.error != expected:
            problems.append(f"expected error {expected}, got {result.error or 'a successful build'}")
        return problems
    if result.error:
        problems.append(f"build failed: {result.error}")
        return problems
    if result.dropped:
        problems.append(f"{len(result.dropped)} operations silently dropped: {result.dropped[:5]}")
    if result.covered + sum(result.skipped.values()) != result.operations:
        problems.append(
            f"covered {result.covered} + skipped {sum(result.skipped.values())} != "
            f"operations {result.operations}"
        )
    if result.violations:
        problems.append(f"{len(result.violations)} conformance violations: {result.violations[:3]}")
    if result.strict_openai != result.tools:
        problems.append(f"only {result.strict_openai} of {result.tools} OpenAI tools are strict")
    if result.tools and not result.strict_anthropic:
        problems.append("no Anthropic tool is strict")
    if result.operations and not result.tools:
        problems.append("no tools")
    return problems


def markdown(results: list[SpecResult]) -> str:
    lines = [
        "# Sweep: every real spec, include-everything intent map",
        "",
        (
            "Generated by `python benchmarks/sweep.py` (also run, one test per spec, by `tests/test_real_specs.py`). "
            'Each spec in `../shared/specs/real/` is built in-process with `include: [{match: "*"}]` and the JSON '
            "outputs (openai, anthropic, mcp, policy); every catalog passes `toolgen.dialects.check_catalog`; every "
            "operation is covered by a tool or skipped with a diagnostic. Tokens: o200k_base, compact JSON of each "
            "tool, summed per catalog. Seconds: load + lower + emit + conformance check, one run, 2 cores."
        ),
        "",
        (
            "| spec | OpenAPI | operations | covered | skipped (reason) | tools | strict (openai) | warnings by code "
            "| tokens openai / anthropic / mcp | build s |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.error:
            lines.append(
                f"| `{r.spec}` | {r.openapi} | — | — | — | — | — | error `{r.error}` (exit 2, expected) "
                f"| — | {r.seconds:.2f} |"
            )
            continue
        skipped = ", ".join(f"{n} `{c}`" for c, n in r.skipped.items()) or "0"
        warnings = ", ".join(f"`{c}` {n}" for c, n in r.warnings.items()) or "none"
        tokens = " / ".join(f"{r.tokens.get(d, 0):,}" for d in ("openai", "anthropic", "mcp"))
        lines.append(
            f"| `{r.spec}` | {r.openapi} | {r.operations:,} | {r.covered:,} | {skipped} | {r.tools:,} "
            f"| {r.strict_openai:,} | {warnings} | {tokens} | {r.seconds:.2f} |"
        )
    ok = [r for r in results if not r.error]
    lines += [
        "",
        (
            f"Totals over the {len(ok)} specs that build: {sum(r.operations for r in ok):,} operations, "
            f"{sum(r.covered for r in ok):,} covered, {sum(sum(r.skipped.values()) for r in ok):,} skipped, "
            f"{sum(r.tools for r in ok):,} tools ({sum(r.strict_openai for r in ok):,} OpenAI-strict), "
            f"{sum(r.seconds for r in ok):.1f} s of builds."
        ),
        "",
        (
            "Warning codes: `name-shortened` (an operationId longer than the 64-character tool-name limit, cut with a "
            "stable hash suffix), `schema-cycle` (one warning per group of mutually recursive schemas, kept as "
            "`$defs`), `spec-schema-invalid` (a schema object that is not valid for the document's OpenAPI version, "
            "read leniently), `name-collision` (two operations that sanitise to one tool name)."
        ),
    ]
    problems = [(r.spec, p) for r in results for p in check(r)]
    lines += ["", "Problems: " + ("none." if not problems else "")]
    for spec, p in problems:
        lines.append(f"- `{spec}`: {p}")
    return "\n".join(lines) + "\n"


SCALING_SPECS = ("xkcd.json", "notion.json", "asana.json", "stripe.json", "github-api.github.com.json")


def scaling(specs: list[Path], labels: dict[Path, str] | None = None) -> list[dict[str, object]]:
    """Three include-everything builds of each spec, each in a fresh process: bare (the JSON outputs,
    no lint stage), checked (the JSON outputs with the lint stage and REPORT.md: what the issue calls
    report and lint) and default (every artifact, the package's import timed too)."""
    from buildcost import DEFAULT, JSON_ONLY, measure

    rows: list[dict[str, object]] = []
    for spec in specs:
        label = (labels or {}).get(spec, spec.name)
        bare = measure(spec, JSON_ONLY, lint=False)
        checked = measure(spec, JSON_ONLY + ",report")
        default = measure(spec, DEFAULT, write=True)
        print(
            f"{label:32} bare {bare['seconds']:7.2f} s  lint+report {checked['seconds']:7.2f} s  "
            f"default {default['seconds']:7.2f} s {default['peak_mb']:7.0f} MB "
            f"import {default.get('import_seconds', 0):.2f} s",
            file=sys.stderr,
        )
        rows.append({"spec": label, "json_only": bare, "checked": checked, "default": default})
    return rows


def replicated(spec: Path, n: int, folder: Path) -> Path:
    """`spec` n times over (`benchmarks/replicate.py`), written into `folder`."""
    from replicate import replicate

    doc = json.loads(spec.read_text(encoding="utf-8"))
    target = folder / f"{spec.stem}-x{n}.json"
    target.write_text(json.dumps(replicate(doc, n)), encoding="utf-8")
    return target


def scaling_markdown(rows: list[dict[str, object]], env: str) -> str:
    lines = [
        "# Build cost by spec size: include-everything intent map",
        "",
        (
            "Generated by `python benchmarks/sweep.py --scaling` ("
            + env
            + "). Each build runs in a fresh process "
            "(`benchmarks/buildcost.py`); seconds are the wall time of `build_api` after imports; CPU adds the "
            "process's and its models.py worker's (`toolgen.builder.worker`); peak is the build process's "
            "peak resident "
            "memory (imports included) plus the worker's. Bare: the JSON outputs (openai, anthropic, mcp, policy) "
            "without the lint stage. Lint + report: the same with the lint stage and REPORT.md (token counts). "
            "Default: every artifact, what `toolgen build` writes: the JSON outputs, POLICY.md, REPORT.md with "
            "the lint stage, and the Python package (`__init__.py` reading policy.json and mcp.json; `models.py` "
            "from datamodel-code-generator + black, computed in the worker). Import: `import <package>` in a "
            "fresh interpreter; first use: reading `POLICY` and `MCP_TOOLS` (policy.json, mcp.json) after it. "
            "`NAME ×N` rows are the spec N times over (`benchmarks/replicate.py`: paths repeated under a prefix, "
            "components shared). One run per cell: read ratios, not hundredths."
        ),
        "",
        (
            "| spec | operations | tools | bare s | lint + report s | (lint + report) / bare | default s (CPU) "
            "| default peak MB | output bytes | bytes per operation | models.py lines | import s | first use of the data s |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        j, c, d = row["json_only"], row["checked"], row["default"]
        assert isinstance(j, dict) and isinstance(c, dict) and isinstance(d, dict)
        lines.append(
            f"| `{row['spec']}` | {d['operations']:,} | {d['tools']:,} | {j['seconds']:.2f} | {c['seconds']:.2f} "
            f"| {c['seconds'] / max(j['seconds'], 1e-9):.2f} | {d['seconds']:.2f} ({d['cpu_seconds']:.2f}) "
            f"| {d['peak_mb']:,.0f} | {d['output_bytes']:,} | {d['output_bytes'] / max(d['operations'], 1):,.0f} "
            f"| {d['python_lines'].get('models.py', 0):,} | {d.get('import_seconds', 0):.3f} "
            f"| {d.get('data_seconds', 0):.3f} |"
        )
    files = ("openai.json", "anthropic.json", "mcp.json", "policy.json", "search.json", "models.py")
    lines += [
        "",
        (
            "These catalogs measure build cost, not catalogs a provider takes: an include-everything map makes every "
            "tool eager with no toolset, so `openai.json` and `gemini.json` of Stripe ×25 send 17,275 tools in a "
            "request that carries 128. `limits.md` builds the same spec from its `toolgen init` draft (toolsets, "
            "deferred, the Anthropic catalog split into parts) and checks every file against its provider's limit."
        ),
        "",
        "## Output bytes per operation, by file (default build)",
        "",
        (
            "Every catalog dialect needs self-contained tools: an OpenAI function's `parameters`, an Anthropic "
            "tool's `input_schema`, an MCP `Tool`'s `inputSchema`/`outputSchema` and a Gemini declaration each "
            "carry their whole JSON Schema, so a schema two tools reach is written into both. toolgen inlines "
            "schemas (keeping `$defs` only for recursive groups) and bounds each output schema by "
            "`defaults.output_depth` and the schema node budget, so a tool's bytes do not grow with the API: the "
            "bytes per operation below stay flat from a spec to the same spec 25 times over. Definitions are "
            "shared where the format is toolgen's own: `models.py` (one class per distinct argument schema and "
            "per distinct nested object) and policy.json (no schemas; request bindings only)."
        ),
        "",
        "| spec | " + " | ".join(files) + " |",
        "|---|" + "---|" * len(files),
    ]
    for row in rows:
        d = row["default"]
        assert isinstance(d, dict)
        ops = max(d["operations"], 1)
        lines.append(
            f"| `{row['spec']}` | " + " | ".join(f"{d['files'].get(f, 0) / ops:,.0f}" for f in files) + " |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument("--only", default="", help="comma-separated spec stems")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--scaling", action="store_true", help="time JSON-only and default builds per spec")
    parser.add_argument("--spec", type=Path, action="append", default=[], help="an OpenAPI file (repeatable)")
    parser.add_argument(
        "--replicate",
        action="append",
        default=[],
        metavar="SPEC:N",
        help="with --scaling, also a JSON spec of <shared>/specs/real/ (or a path) N times over, "
        "e.g. stripe.json:25 (repeatable)",
    )
    args = parser.parse_args(argv)
    if args.scaling:
        import os
        import platform

        specs = args.spec or [args.shared / "specs" / "real" / name for name in SCALING_SPECS]
        labels: dict[Path, str] = {}
        scratch = tempfile.TemporaryDirectory()
        for item in args.replicate:
            name, _, times = item.rpartition(":")
            source = Path(name) if Path(name).exists() else args.shared / "specs" / "real" / name
            target = replicated(source, int(times), Path(scratch.name))
            specs.append(target)
            labels[target] = f"{source.name} ×{int(times)}"
        rows = scaling(specs, labels)
        scratch.cleanup()
        env = f"python {platform.python_version()}, {os.cpu_count()} CPUs"
        text = scaling_markdown(rows, env)
        print(text)
        if not args.spec:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "scaling.md").write_text(text, encoding="utf-8")
            (args.out / "scaling.json").write_text(
                json.dumps(rows, indent=2, sort_keys=True) + "\n", encoding="utf-8"
            )
        return 0
    if args.spec:
        results = [sweep_spec(spec) for spec in args.spec]
        for r in results:
            print(
                f"{r.spec:32} ops={r.operations:5} tools={r.tools:5} {r.seconds:6.2f}s  "
                f"{'; '.join(check(r)) or 'ok'}",
                file=sys.stderr,
            )
        return 1 if any(check(r) for r in results) else 0
    specs = real_specs(args.shared)
    if args.only:
        wanted = {s.strip() for s in args.only.split(",")}
        specs = [s for s in specs if s.stem in wanted or s.name in wanted]
    results = []
    for spec in specs:
        r = sweep_spec(spec)
        results.append(r)
        status = "; ".join(check(r)) or "ok"
        print(
            f"{r.spec:32} ops={r.operations:5} tools={r.tools:5} skipped={sum(r.skipped.values()):3} "
            f"{r.seconds:6.2f}s  {status}",
            file=sys.stderr,
        )
    # the slowest spec first would hide the small ones; keep the corpus order (by name)
    if not args.only:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "sweep.md").write_text(markdown(results), encoding="utf-8")
        (args.out / "sweep.json").write_text(
            json.dumps([asdict(r) for r in results], indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
    return 1 if any(check(r) for r in results) else 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "generator"))
    sys.path.insert(0, str(REPO / "benchmarks"))
    raise SystemExit(main())
