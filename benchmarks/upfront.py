"""Measure the up-front cost of include-everything catalogs with toolsets from tags, deferred.

    python benchmarks/upfront.py [--shared ../shared] [--only github,stripe]

For each API this builds the whole spec from ``<shared>/specs/real/`` with an intent map that takes
every operation, names each operation's toolset after its first tag (GitHub) or, for a spec without
tags, its path's first resource segment (Stripe), and defers every tool:

    include: [{match: "*", toolset: from_tag, loading: deferred}]     # from_path for Stripe

and reports, per dialect, the o200k tokens a model sees before it searches (`toolgen.emit.upfront`,
the figures REPORT.md shows), next to the whole catalog. It writes ``benchmarks/results/upfront.md``.
The target (issue 14): at most 2,000 tokens up front in every dialect for GitHub.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SHARED = REPO / ".." / "shared"
RESULTS = REPO / "benchmarks" / "results"
SPECS = {"github": "github-api.github.com.json", "stripe": "stripe.json"}
#: how each spec's operations are grouped: GitHub's by their tags; Stripe's document has no tags, so
#: by their path's first resource segment
GROUPING = {"github": "from_tag", "stripe": "from_path"}
TARGET = 2_000


@dataclass
class Row:
    view: str
    file: str
    entries: int
    tokens: int


@dataclass
class ApiResult:
    api: str
    operations: int
    tools: int
    toolsets: int
    grouping: str
    largest_namespace: tuple[str, int]
    full: dict[str, int]
    rows: list[Row]
    seconds: float


def measure(api: str, shared: Path) -> ApiResult:
    """Build `api` include-everything, toolsets from tags, every tool deferred; its up-front costs."""
    from toolgen.builder.build import build_api
    from toolgen.dialects import names, namespace_advice
    from toolgen.emit.upfront import upfront_costs

    spec = (shared / "specs" / "real" / SPECS[api]).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        intent = folder / f"{api}.yaml"
        intent.write_text(
            f"toolgen: 1\nspec: {json.dumps(str(spec))}\napi: {{name: {api}}}\n"
            f'include: [{{match: "*", toolset: {GROUPING[api]}, loading: deferred}}]\n',
            encoding="utf-8",
        )
        t0 = time.perf_counter()
        build = build_api(intent, folder / "out", emit=(*names(), "policy", "report"), run_lint=False)
        seconds = time.perf_counter() - t0
    views = build.catalogs.deferred
    full = {d: sum(s.tokens.get(d, 0) for s in build.sizes) for d in names()}
    advice = list(
        dict.fromkeys(
            namespace_advice(
                [e for catalog in views.catalogs_of("openai.responses").values() for e in catalog]
            )
        )
    )
    largest = max(advice, key=lambda a: (a[1], a[0])) if advice else ("", 0)
    rows = [Row(c.view, c.file, c.entries, c.tokens) for c in upfront_costs(views)]
    return ApiResult(
        api,
        len(build.ir.operations),
        len(build.ir.tools),
        len(build.ir.toolsets),
        GROUPING[api],
        largest,
        full,
        rows,
        seconds,
    )


def render(results: list[ApiResult]) -> str:
    lines = [
        "# Up-front cost of include-everything catalogs",
        "",
        (
            '`python benchmarks/upfront.py`: every operation of the spec (`include: [{match: "*", toolset: '
            "from_tag, loading: deferred}]`), each operation's toolset named after its first tag (Stripe's "
            "document has no tags: `toolset: from_path`, its path's first resource segment), every tool "
            'deferred. *Up front* is what a model sees before it searches (REPORT.md, "Up-front cost"): '
            "o200k tokens of the compact JSON of each entry. *Whole catalog* is every tool sent in full. "
            f"Target: at most {TARGET:,} tokens up front in every dialect."
        ),
        "",
    ]
    for r in results:
        lines += [
            f"## {r.api}",
            "",
            (
                f"{r.operations:,} operations, {r.tools:,} tools in {r.toolsets} toolsets (`{r.grouping}`)"
                + (
                    f" (largest namespace `{r.largest_namespace[0]}`: {r.largest_namespace[1]} functions)"
                    if r.largest_namespace[1]
                    else ""
                )
                + f"; built in {r.seconds:.1f} s."
            ),
            "",
            "| dialect | file | entries up front | tokens up front | whole catalog | within target |",
            "|---|---|---|---|---|---|",
        ]
        for row in r.rows:
            whole = r.full.get(row.view.split("-")[0], 0)
            ok = "yes" if row.tokens <= TARGET else "**no**"
            lines.append(
                f"| {row.view} | `{row.file}` | {row.entries:,} | {row.tokens:,} | {whole:,} | {ok} |"
            )
        lines.append("")
    lines += [
        (
            "OpenAI Chat Completions and Gemini have no deferred loading: their client sends the eager entries "
            "and a client-run `search_tools` entry, and adds the found entries from `openai.json` / `gemini.json` "
            "to its next request. Anthropic's figure counts the tool-search tool's entry; the API adds its own "
            "instructions for it."
        ),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument("--only", default=",".join(SPECS))
    args = parser.parse_args(argv)
    if not (args.shared / "specs" / "real").is_dir():
        print(f"no specs under {args.shared}/specs/real", file=sys.stderr)
        return 2
    results = [measure(api, args.shared) for api in args.only.split(",")]
    text = render(results)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "upfront.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
