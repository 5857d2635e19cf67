"""Where a tool-search query's time goes: the slowest requests of a large package, profiled one by one.

    python benchmarks/search_profile.py FOLDER [--build SPEC N] [--queries FILE.yaml] [--top 10]
                                       [--runs 3] [--functions 8]

Loads the generated package in FOLDER (`ToolIndex.from_dir`; with ``--build SPEC N``, first builds SPEC
repeated N times into it, as `search_scale.py` does) and runs every request of ``--queries`` (default:
the development half of ``queries/blind/github.yaml``) ``--runs`` times, taking each request's least
CPU time (the figure the machine's other load disturbs least). Prints, for the ``--top`` slowest: the
CPU and wall milliseconds, the request's terms with the number of documents each matches per field
table (``f_core``, ...: what SQLite's ``bm25()`` walks), how many documents match any term and how many
the scoring visits; then a cProfile of one more run of each (the ``--functions`` entries of most own
time).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tool_search_blind import BLIND, load_set


def build(spec: Path, n: int, folder: Path) -> None:
    """Build `spec` repeated `n` times, include-everything, into `folder` / ``out``."""
    from replicate import replicate

    from toolgen.builder.build import build_api
    from toolgen.dialects import DialectOptions

    folder.mkdir(parents=True, exist_ok=True)
    big = folder / f"big{spec.suffix}"
    big.write_text(json.dumps(replicate(json.loads(spec.read_text(encoding="utf-8")), n)), encoding="utf-8")
    intent = folder / "big.yaml"
    intent.write_text(
        f'toolgen: 1\nspec: {json.dumps(str(big))}\napi: {{name: big}}\ninclude: [{{match: "*"}}]\n',
        encoding="utf-8",
    )
    result = build_api(intent, folder / "out", base=folder, dialect_options=DialectOptions())
    (folder / "out").mkdir(exist_ok=True)
    for name in ("policy.json", "mcp.json", "search.json", "search.vectors"):
        if name in result.files:
            (folder / "out" / name).write_bytes(result.files[name])


def term_statistics(index: Any, query: str) -> dict[str, Any]:
    """The request's terms and, per term, the documents it matches in each field table."""
    from toolgen.search.text_index import TABLES, analyse_query

    terms, _, head, actions = analyse_query(query)
    terms = [*terms, *(f"act{a}" for a in sorted(actions))]
    per_term = {}
    matched: set[int] = set()
    for term in dict.fromkeys(terms):
        counts = {}
        for table in TABLES:
            rows = {
                r
                for (r,) in index._db.execute(
                    f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (f'"{term}"',)
                )
            }
            counts[table] = len(rows)
            matched |= rows
        per_term[term] = counts
    return {"terms": per_term, "head": head, "actions": sorted(actions), "matched": len(matched)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--build", nargs=2, metavar=("SPEC", "N"))
    parser.add_argument("--queries", type=Path, default=BLIND / "github.yaml")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--functions", type=int, default=8)
    args = parser.parse_args(argv)
    if args.build:
        build(Path(args.build[0]), int(args.build[1]), args.folder)
    from toolgen.runtime.serving.tool_index import ToolIndex

    package = args.folder / "out" if (args.folder / "out" / "policy.json").is_file() else args.folder
    start = time.perf_counter()
    index = ToolIndex.from_dir(package)
    print(f"loaded {len(index):,} operations in {time.perf_counter() - start:.2f} s", flush=True)
    _, _, blind = load_set(args.queries)
    queries = [q.text for q in blind if q.part == "dev"]
    best: dict[str, tuple[float, float]] = {}
    for _ in range(args.runs):
        for text in queries:
            wall, cpu = time.perf_counter(), time.process_time()
            index.search(text, limit=5)
            cpu, wall = 1000 * (time.process_time() - cpu), 1000 * (time.perf_counter() - wall)
            if text not in best or cpu < best[text][0]:
                best[text] = (cpu, wall)
    slowest = sorted(best, key=lambda t: -best[t][0])[: args.top]
    for text in slowest:
        cpu, wall = best[text]
        stats = term_statistics(index, text)
        print(f"\n{cpu:6.1f} CPU ms {wall:6.1f} wall ms  {text!r}")
        print(
            f"  actions {stats['actions']}, head {stats['head']}, documents matching any term: {stats['matched']:,}"
        )
        for term, counts in stats["terms"].items():
            print(f"  {term:>16}: " + " ".join(f"{t[2:]}={n}" for t, n in counts.items()))
        profile = cProfile.Profile()
        profile.enable()
        index.search(text, limit=5)
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(args.functions)
        print("\n".join("  " + line for line in out.getvalue().splitlines()[6:] if line.strip()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
