"""What tool search costs on a very large API: the index's share of the build, and query latency.

    python benchmarks/search_scale.py SPEC N [--queries FILE.yaml] [--options none,lsa,onnx]
                                     [--model M.onnx --tokenizer tokenizer.json] [--write]

Builds SPEC repeated N times (`replicate.py`: paths under prefixes, components shared) with an
include-everything intent map and every artifact (what `toolgen build` writes), in this process,
and measures, once per search option (``--options``: ``none``, the default index, lexical; ``lsa``,
toolgen.yaml ``search: {semantic: lsa}``, the vectors too; ``onnx``, the dense option, with the model
and tokenizer of ``--model`` / ``--tokenizer``, or without them the tests' tiny embedding-lookup model
(`tests.support.dense_model`, 16 dimensions, written here): what the sidecar, its loading and the
fusion cost, not what a real encoder's inference adds per query; each a build of its own):

- ``build_s``: wall time of `toolgen.builder.build.build_api`, which includes writing ``search.json``
  (``build_cpu_s``: CPU time of this process and of the worker that writes models.py);
- ``index_s`` / ``index_cpu_s``: wall and CPU time of `toolgen.emit.search_index.search_json` on that
  build's policy table and MCP catalog (the index's part of the build, computed again on the same
  inputs) and its share of the rest of the build (wall; CPU, the figure a loaded machine keeps);
- ``load_s``: `ToolIndex.from_dir` on the written package (reading ``search.json`` into FTS5);
- per-query latency of `ToolIndex.search` after loading (mean, median, p95 and max, wall and CPU, in ms)
  over the requests of
  ``--queries`` (default: the development half of ``queries/blind/github.yaml``), each run 3 times;
- ``rss_after_load_mb``: the process's resident memory once the index is loaded (Linux), and
  ``peak_rss_mb`` its peak over the whole run (the build's included), in MiB.

Prints one JSON object per option; ``--write`` also writes ``benchmarks/results/search_scale.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from replicate import replicate
from tool_search_blind import BLIND, load_set

REPO = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the worker that writes models.py)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _rss_mb() -> int | None:
    """The resident memory of this process now, in MiB (Linux ``/proc/self/statm``), or None elsewhere."""
    try:
        pages = int(Path("/proc/self/statm").read_text(encoding="ascii").split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20)


def _dense_pins(
    folder: Path, out: Path, queries: list[str], model: Path | None, tokenizer: Path | None
) -> Any:
    """The `DenseModel` of the ``onnx`` option: `model` and `tokenizer`, or the tests' tiny model over
    the words of `queries` and of the documents (written into `folder`)."""
    from toolgen.search.dense_index import DenseModel
    from toolgen.search.onnx_embedder import file_sha256

    if model is None or tokenizer is None:
        sys.path.insert(0, str(REPO))
        from tests.support.dense_model import write_model, write_tokenizer

        words = sorted({w.lower() for q in queries for w in q.replace(".", " ").split()})
        model, tokenizer = folder / "tiny.onnx", folder / "tokenizer.json"
        write_model(model, write_tokenizer(tokenizer, words))
    return DenseModel(
        model.resolve(),
        file_sha256(model),
        tokenizer.resolve(),
        file_sha256(tokenizer),
        os.path.relpath(model.resolve(), out),
        os.path.relpath(tokenizer.resolve(), out),
    )


def measure(
    spec: Path,
    n: int,
    queries: list[str],
    semantic: str | None = None,
    *,
    model: Path | None = None,
    tokenizer: Path | None = None,
) -> dict[str, Any]:
    from toolgen.builder.build import build_api
    from toolgen.dialects import DialectOptions
    from toolgen.emit.search_index import dense_search, search_json
    from toolgen.runtime.serving.tool_index import ToolIndex

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        doc = json.loads(spec.read_text(encoding="utf-8"))
        big = folder / f"big{spec.suffix}"
        big.write_text(json.dumps(replicate(doc, n)), encoding="utf-8")
        intent = folder / "big.yaml"
        intent.write_text(
            f'toolgen: 1\nspec: {json.dumps(str(big))}\napi: {{name: big}}\ninclude: [{{match: "*"}}]\n',
            encoding="utf-8",
        )
        dense = _dense_pins(folder, folder / "out", queries, model, tokenizer) if semantic == "onnx" else None
        start, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
        build = build_api(
            intent,
            folder / "out",
            base=folder,
            dialect_options=DialectOptions(semantic_search=semantic, dense=dense),
        )
        build_s = time.perf_counter() - start
        build_cpu = time.process_time() - cpu + _children_cpu() - children
        out = folder / "out"
        out.mkdir()
        for name in ("policy.json", "mcp.json", "search.json", "search.vectors"):
            if name in build.files:
                (out / name).write_bytes(build.files[name])
        policy = json.loads(build.files["policy.json"])
        catalog = json.loads(build.files["mcp.json"])
        start, cpu = time.perf_counter(), time.process_time()
        value = search_json(
            policy,
            catalog,
            build.catalogs.deferred.searchable,
            semantic=None if dense is not None else semantic,
        )
        if dense is not None:
            dense_search(value, dense)
        index_s, index_cpu = time.perf_counter() - start, time.process_time() - cpu
        start = time.perf_counter()
        index = ToolIndex.from_dir(out)
        load_s = time.perf_counter() - start
        if index.warnings:
            raise RuntimeError(f"the index does not use what the build wrote: {index.warnings[0]}")
        loaded_rss = _rss_mb()
        times: list[float] = []
        cpu_times: list[float] = []
        for _ in range(3):
            for text in queries:
                start, cpu = time.perf_counter(), time.process_time()
                index.search(text, limit=5)
                times.append(1000 * (time.perf_counter() - start))
                cpu_times.append(1000 * (time.process_time() - cpu))
        times.sort()
        cpu_times.sort()
        return {
            "option": semantic or "none",
            "spec": spec.name,
            "copies": n,
            "operations": len({r["intent"] for r in policy["tools"]}),
            "tools": len(policy["tools"]),
            "build_s": round(build_s, 2),
            "build_cpu_s": round(build_cpu, 2),
            "index_s": round(index_s, 2),
            "index_share_of_rest": round(index_s / max(1e-9, build_s - index_s), 3),
            "index_cpu_s": round(index_cpu, 2),
            "index_cpu_share_of_rest": round(index_cpu / max(1e-9, build_cpu - index_cpu), 3),
            "query_cpu_ms_mean": round(statistics.fmean(cpu_times), 2),
            "search_json_bytes": len(build.files["search.json"]),
            "load_s": round(load_s, 2),
            "vectors_bytes": len(build.files.get("search.vectors", b"")),
            "model": "tiny (tests)"
            if dense is not None and model is None
            else (model.name if model else None),
            "queries": len(queries),
            "query_ms_mean": round(statistics.fmean(times), 2),
            "query_ms_p95": round(times[int(0.95 * (len(times) - 1))], 2),
            "query_ms_max": round(times[-1], 2),
            "query_ms_median": round(statistics.median(times), 2),
            "query_cpu_ms_median": round(statistics.median(cpu_times), 2),
            "query_cpu_ms_p95": round(cpu_times[int(0.95 * (len(cpu_times) - 1))], 2),
            "query_cpu_ms_max": round(cpu_times[-1], 2),
            "rss_after_load_mb": loaded_rss,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg()[0],
        }


def render(results: list[dict[str, Any]]) -> str:
    r = results[0]
    loads = ", ".join(f"{x['load_average']:.1f}" for x in results)
    lines = [
        "# Tool search at scale",
        "",
        (
            f"`python benchmarks/search_scale.py {r['spec']} {r['copies']}`: the spec {r['copies']} times over "
            "(`replicate.py`), include-everything, every artifact, one build per search option in one process "
            f"(python {r['python']}, {r['cpus']} CPUs, load average "
            f"{loads} at the end of each). *none* is the "
            "default index (lexical); *lsa* the semantic option (toolgen.yaml `search: {semantic: lsa}`); *onnx* "
            "the dense option (`search: {semantic: onnx, ...}`) with the model named in its row (*tiny (tests)*: "
            "the tests' 16-dimension embedding lookup, so the figures are the sidecar's, the fusion's and "
            "onnxruntime's per-call cost, not a real encoder's inference). The "
            "index's part is `search_json` run again on the build's own policy table and MCP catalog; queries "
            "are the development half of the blind GitHub set, each run 3 times after loading."
        ),
        "",
        (
            "| option | operations | tools | build s (CPU s) | index s (CPU s) | index / rest of build, wall (CPU) "
            "| search.json bytes | search.vectors bytes | load s | query ms mean (CPU) | median (CPU) | p95 (CPU) "
            "| max (CPU) | RSS after load MiB | peak RSS MiB |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['option']}{' (' + str(r['model']) + ')' if r.get('model') else ''} | {r['operations']:,} | {r['tools']:,} | {r['build_s']:.1f} ({r['build_cpu_s']:.1f}) "
            f"| {r['index_s']:.2f} ({r['index_cpu_s']:.2f}) "
            f"| {100 * r['index_share_of_rest']:.1f}% ({100 * r['index_cpu_share_of_rest']:.1f}%) "
            f"| {r['search_json_bytes']:,} | {r.get('vectors_bytes', 0):,} | {r['load_s']:.2f} "
            f"| {r['query_ms_mean']:.1f} ({r['query_cpu_ms_mean']:.1f}) "
            f"| {r['query_ms_median']:.1f} ({r['query_cpu_ms_median']:.1f}) "
            f"| {r['query_ms_p95']:.1f} ({r['query_cpu_ms_p95']:.1f}) "
            f"| {r['query_ms_max']:.1f} ({r['query_cpu_ms_max']:.1f}) "
            f"| {r['rss_after_load_mb']} | {r['peak_rss_mb']:,} |"
        )
    return "\n".join([*lines, ""])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("spec", type=Path)
    parser.add_argument("n", type=int)
    parser.add_argument("--queries", type=Path, default=BLIND / "github.yaml")
    parser.add_argument(
        "--options",
        default="none,lsa",
        help="comma-separated search options to build with: none (the default index), lsa, onnx",
    )
    parser.add_argument("--model", type=Path, help="onnx: the ONNX model (default: the tests' tiny model)")
    parser.add_argument("--tokenizer", type=Path, help="onnx: the model's tokenizer.json")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    _, _, blind = load_set(args.queries)
    queries = [q.text for q in blind if q.part == "dev"]
    results = []
    for option in args.options.split(","):
        results.append(
            measure(
                args.spec,
                args.n,
                queries,
                None if option == "none" else option,
                model=args.model,
                tokenizer=args.tokenizer,
            )
        )
        print(json.dumps(results[-1], indent=1), flush=True)
    if args.write:
        (REPO / "benchmarks" / "results" / "search_scale.md").write_text(render(results), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
