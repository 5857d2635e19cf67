"""Two versions of tool search's query path on one loaded package, request by request in turn.

    python benchmarks/search_interleaved.py FOLDER --old OLD_tool_index.py [--old-dense OLD_dense_index.py]
                                           [--queries FILE.yaml] [--runs 3]

On a shared machine the load moves between two runs more than a change moves a query's time: this
loads the generated package in FOLDER twice in one process, once with this checkout's
`toolgen.runtime.serving.tool_index` and once with an older copy of that module (``--old``, e.g.
``git show REV:generator/toolgen/runtime/serving/tool_index.py > old.py``; it is imported as a sibling
module, so its relative imports read this checkout's kernel), and runs every request of ``--queries``
(default: the development half of ``queries/blind/github.yaml``) ``--runs`` times, the old and the new
code alternating request by request so that both see the same load. With the dense option's package,
``--old-dense`` gives the older `toolgen.search.dense_index` whose ``DenseIndex.fuse`` the old code calls.
Checks that both give the same hits for every request, and prints per version the median, mean, p95 and
slowest query in wall and CPU milliseconds and the load average before and after.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tool_search_blind import BLIND, load_set


def _module(path: Path, name: str) -> Any:
    """The module in file `path`, imported as `name` (a sibling of the module it stands in for)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _summary(wall: list[float], cpu: list[float]) -> dict[str, float]:
    wall, cpu = sorted(wall), sorted(cpu)
    p95 = int(0.95 * (len(wall) - 1))
    return {
        "median_ms": round(statistics.median(wall), 1),
        "median_cpu_ms": round(statistics.median(cpu), 1),
        "mean_ms": round(statistics.fmean(wall), 1),
        "mean_cpu_ms": round(statistics.fmean(cpu), 1),
        "p95_ms": round(wall[p95], 1),
        "p95_cpu_ms": round(cpu[p95], 1),
        "max_ms": round(wall[-1], 1),
        "max_cpu_ms": round(cpu[-1], 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--old", type=Path, required=True)
    parser.add_argument("--old-dense", type=Path)
    parser.add_argument("--queries", type=Path, default=BLIND / "github.yaml")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    from toolgen.runtime.serving.tool_index import ToolIndex

    old_module = _module(args.old, "toolgen.runtime.serving._old_tool_index")
    package = args.folder / "out" if (args.folder / "out" / "policy.json").is_file() else args.folder
    indexes = {"new": ToolIndex.from_dir(package), "old": old_module.ToolIndex.from_dir(package)}
    if args.old_dense is not None and indexes["old"]._dense is not None:
        old_dense = _module(args.old_dense, "toolgen.search._old_dense_index")
        current = indexes["old"]._dense
        indexes["old"]._dense = old_dense.DenseIndex(current._vectors, current._embedder)
    for name, index in indexes.items():
        if index.warnings:
            raise RuntimeError(f"{name}: the index does not use what the build wrote: {index.warnings[0]}")
    _, _, blind = load_set(args.queries)
    queries = [q.text for q in blind if q.part == "dev"]
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in indexes}
    load_before = os.getloadavg()[0]
    for run in range(args.runs):
        for i, text in enumerate(queries):
            order = ("old", "new") if (i + run) % 2 == 0 else ("new", "old")
            hits = {}
            for name in order:
                wall, cpu = time.perf_counter(), time.process_time()
                hits[name] = indexes[name].search(text, limit=5)
                times[name][1].append(1000 * (time.process_time() - cpu))
                times[name][0].append(1000 * (time.perf_counter() - wall))
            if [h.to_json() for h in hits["old"]] != [h.to_json() for h in hits["new"]]:
                raise AssertionError(f"the two versions rank {text!r} differently: {hits}")
    result = {
        "operations": len(indexes["new"]),
        "dense": indexes["new"]._dense is not None,
        "queries": len(queries),
        "runs": args.runs,
        "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        **{name: _summary(*times[name]) for name in ("old", "new")},
    }
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
