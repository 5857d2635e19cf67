"""toolgen against FastMCP (`FastMCP.from_openapi`) on the same inputs, in one run.

Run on demand (not part of the test suite); FastMCP is the `bench` extra (`pip install -e ".[bench]"`):

    python benchmarks/vs_fastmcp.py [--reps 3] [--fastmcp-reps 2] [--shared ../shared] [--skip-stripe]
                                    [--spec PATH ...]

1. Catalog size for the same 16 GitHub operations (issues list-for-repo/get/create/update/create-comment/
   list-comments/add-labels/remove-label/lock, repos get/delete, search issues-and-pull-requests, pulls
   list/get/create/merge): o200k tokens of what an MCP client receives from `tools/list`. toolgen: the
   committed `generated/github/mcp.json` (built from `intent_maps/github.yaml`). FastMCP: a server built by
   `FastMCP.from_openapi` from the GitHub spec filtered to those 16 operations, its tools listed through
   `fastmcp.Client` and serialised as the MCP `Tool` objects a client gets (`model_dump(by_alias=True,
   exclude_none=True)`). Both sides: compact JSON (sorted keys) of ``{"tools": [...]}``. Also checked:
   every toolgen tool is OpenAI-strict and carries its effect and approval (policy row + MCP annotations).
2. Build time and peak memory of the whole GitHub spec and the whole Stripe spec (or of each ``--spec``
   file): toolgen's DEFAULT build with an include-everything intent map (every artifact, what
   `toolgen build` writes: three catalogs, policy, REPORT.md with lint, the Python package;
   `benchmarks/buildcost.py`), and its JSON-only build for reference, versus FastMCP reading the same
   file, building its server and listing its tools. Every repetition runs in a fresh process (toolgen
   and FastMCP alternate); the time is measured inside the process after imports; medians are
   compared. Peak memory is each process's peak resident set (imports included).

Results: printed, and written to `benchmarks/results/vs_fastmcp.md` (+ `.json`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
GITHUB_SPEC = "github-api.github.com.json"
STRIPE_SPEC = "stripe.json"
SIXTEEN = [
    "issues/list-for-repo", "issues/get", "issues/create", "issues/update", "issues/create-comment",
    "issues/list-comments", "issues/add-labels", "issues/remove-label", "issues/lock",
    "repos/get", "repos/delete", "search/issues-and-pull-requests",
    "pulls/list", "pulls/get", "pulls/create", "pulls/merge",
]
JSON_OUTPUTS = ("openai", "anthropic", "mcp", "policy")


def compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tokens(text: str) -> int:
    from toolgen.tokens import count_tokens

    return count_tokens(text)


# --- workers (one fresh process per measurement) ----------------------------------------------------


def fastmcp_list(spec_data: dict[str, Any]) -> list[dict[str, Any]]:
    import asyncio
    import warnings

    from fastmcp import Client, FastMCP

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server = FastMCP.from_openapi(openapi_spec=spec_data, name="bench")

    async def listing() -> list[Any]:
        async with Client(server) as client:
            return list(await client.list_tools())

    tools = asyncio.run(listing())
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


def worker_fastmcp(spec: Path) -> dict[str, Any]:
    cpu, start = time.process_time(), time.perf_counter()
    data = json.loads(spec.read_text(encoding="utf-8"))
    tools = fastmcp_list(data)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    from buildcost import _peak_mb

    return {"seconds": seconds, "cpu_seconds": cpu, "tools": len(tools),
            "bytes": len(compact({"tools": tools}).encode("utf-8")), "peak_mb": _peak_mb()}


def run_worker(kind: str, spec: Path) -> dict[str, Any]:
    """One measurement in a fresh interpreter; adds the process's wall time (start-up and imports).
    `kind`: ``toolgen`` (the default build), ``toolgen-json`` (JSON outputs only) or ``fastmcp``."""
    from buildcost import DEFAULT, JSON_ONLY, measure

    if kind.startswith("toolgen"):
        start = time.perf_counter()
        result = measure(spec, JSON_ONLY if kind == "toolgen-json" else DEFAULT)
        result["wall"] = time.perf_counter() - start
        result["bytes"] = result["output_bytes"]
        return result
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "generator"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", kind, str(spec)],
                          capture_output=True, text=True, timeout=1800, env=env, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} worker failed on {spec.name}:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    return result


# --- 1. catalog size --------------------------------------------------------------------------------


def filtered_spec(spec: dict[str, Any], operation_ids: list[str]) -> dict[str, Any]:
    wanted = set(operation_ids)
    paths: dict[str, Any] = {}
    found: set[str] = set()
    for path, item in spec["paths"].items():
        kept = {}
        for key, value in item.items():
            if isinstance(value, dict) and value.get("operationId") in wanted:
                kept[key] = value
                found.add(value["operationId"])
            elif key in ("parameters", "servers", "summary", "description"):
                kept[key] = value
        if any(isinstance(v, dict) and "operationId" in v for v in kept.values()):
            paths[path] = kept
    missing = wanted - found
    if missing:
        raise SystemExit(f"operations not in the spec: {sorted(missing)}")
    return {**spec, "paths": paths}


def catalog_comparison(shared: Path) -> dict[str, Any]:
    mcp = json.loads((REPO / "generated" / "github" / "mcp.json").read_text(encoding="utf-8"))
    policy = json.loads((REPO / "generated" / "github" / "policy.json").read_text(encoding="utf-8"))
    openai = json.loads((REPO / "generated" / "github" / "openai.json").read_text(encoding="utf-8"))
    rows = {r["tool"]: r for r in policy["tools"]}
    toolgen_ops = sorted({r["operation"]["id"] for r in rows.values()})
    if toolgen_ops != sorted(SIXTEEN):
        raise SystemExit(f"generated/github covers {toolgen_ops}, not the 16 benchmark operations")
    toolgen_text = compact({"tools": mcp})
    spec = json.loads((shared / "specs" / "real" / GITHUB_SPEC).read_text(encoding="utf-8"))
    fast_tools = fastmcp_list(filtered_spec(spec, SIXTEEN))
    fast_text = compact({"tools": fast_tools})

    def parts(tool: dict[str, Any]) -> dict[str, int]:
        out = {"name+title": tokens(compact({k: tool.get(k) for k in ("name", "title") if k in tool})),
               "description": tokens(tool.get("description") or ""),
               "inputSchema": tokens(compact(tool.get("inputSchema", {}))),
               "outputSchema": tokens(compact(tool["outputSchema"])) if "outputSchema" in tool else 0,
               "annotations": tokens(compact(tool["annotations"])) if "annotations" in tool else 0}
        out["total"] = tokens(compact(tool))
        return out

    strict = {t["function"]["name"]: t["function"].get("strict") is True for t in openai}
    checks = []
    for tool in mcp:
        row = rows[tool["name"]]
        ann = tool.get("annotations", {})
        ok = (strict.get(tool["name"]) is True
              and row["effect"] in ("read", "write", "destructive") and row["approval"] in ("never", "required")
              and ann.get("readOnlyHint") is (row["mode"] != "record")
              and ann.get("destructiveHint") is (row["mode"] == "record" and row["effect"] == "destructive")
              and (row["mode"] != "record" or row["effect"] != "read")
              and (row["approval"] == "never" or "approv" in tool["description"].lower()))
        checks.append((tool["name"], ok))
    fast_strict_ready = sum(1 for t in fast_tools if _strict_shaped(t.get("inputSchema", {})))
    return {
        "toolgen": {"tools": len(mcp), "operations": len(toolgen_ops), "tokens": tokens(toolgen_text),
                    "bytes": len(toolgen_text.encode("utf-8")),
                    "per_tool": {t["name"]: parts(t) for t in mcp},
                    "all_strict": all(strict.values()), "all_effect_approval": all(ok for _, ok in checks),
                    "failing_checks": [name for name, ok in checks if not ok],
                    "approval_required": sorted(n for n, r in rows.items() if r["approval"] == "required")},
        "fastmcp": {"tools": len(fast_tools), "tokens": tokens(fast_text), "bytes": len(fast_text.encode("utf-8")),
                    "per_tool": {t["name"]: parts(t) for t in fast_tools},
                    "input_schemas_strict_shaped": fast_strict_ready},
    }


def _strict_shaped(schema: dict[str, Any]) -> bool:
    """Whether a schema would pass OpenAI strict as is (toolgen's own checker on a strict tool)."""
    from toolgen.dialects.openai import check_openai_catalog

    tool = {"type": "function", "function": {"name": "t", "description": "", "parameters": schema, "strict": True}}
    return not check_openai_catalog([tool])


# --- 2. build time ----------------------------------------------------------------------------------


def time_comparison(spec: Path, reps: int, fast_reps: int) -> dict[str, Any]:
    ours: list[dict[str, Any]] = []
    json_only: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    for i in range(max(reps, fast_reps)):  # alternate, so drift on a shared machine hits both sides
        if i < reps:
            ours.append(run_worker("toolgen", spec))
            print(f"  {spec.name} toolgen #{i + 1}: {ours[-1]['seconds']:.2f} s, {ours[-1]['peak_mb']:.0f} MB",
                  file=sys.stderr)
            json_only.append(run_worker("toolgen-json", spec))
            print(f"  {spec.name} toolgen JSON-only #{i + 1}: {json_only[-1]['seconds']:.2f} s", file=sys.stderr)
        if i < fast_reps:
            theirs.append(run_worker("fastmcp", spec))
            print(f"  {spec.name} fastmcp #{i + 1}: {theirs[-1]['seconds']:.2f} s, {theirs[-1]['peak_mb']:.0f} MB",
                  file=sys.stderr)
    med = statistics.median
    return {
        "spec": spec.name,
        "toolgen": {"median_s": med(r["seconds"] for r in ours), "runs_s": [r["seconds"] for r in ours],
                    "median_cpu_s": med(r["cpu_seconds"] for r in ours),
                    "median_wall_s": med(r["wall"] for r in ours), "tools": ours[0]["tools"],
                    "peak_mb": max(r["peak_mb"] for r in ours),
                    "operations": ours[0]["operations"], "output_bytes": ours[0]["bytes"],
                    "stages": ours[0]["stages"]},
        "toolgen_json_only": {"median_s": med(r["seconds"] for r in json_only),
                              "median_cpu_s": med(r["cpu_seconds"] for r in json_only),
                              "peak_mb": max(r["peak_mb"] for r in json_only),
                              "output_bytes": json_only[0]["bytes"]},
        "fastmcp": {"median_s": med(r["seconds"] for r in theirs), "runs_s": [r["seconds"] for r in theirs],
                    "median_wall_s": med(r["wall"] for r in theirs), "tools": theirs[0]["tools"],
                    "median_cpu_s": med(r["cpu_seconds"] for r in theirs),
                    "peak_mb": max(r["peak_mb"] for r in theirs), "catalog_bytes": theirs[0]["bytes"]},
    }


# --- report -----------------------------------------------------------------------------------------


def markdown(cat: dict[str, Any], times: list[dict[str, Any]], env: dict[str, str]) -> str:
    t, f = cat["toolgen"], cat["fastmcp"]
    ratio = t["tokens"] / f["tokens"]
    lines = [
        "# toolgen vs FastMCP",
        "",
        "Generated by `python benchmarks/vs_fastmcp.py` (one run; " + ", ".join(f"{k} {v}" for k, v in env.items())
        + ").",
        "",
        "## 1. Catalog size, the same 16 GitHub operations",
        "",
        "o200k tokens of the compact JSON `{\"tools\": [...]}` an MCP client receives from `tools/list`.",
        "",
        "| | tools | tokens | tokens per operation | bytes |",
        "|---|---|---|---|---|",
        (f"| toolgen (`generated/github/mcp.json`) | {t['tools']} | {t['tokens']:,} | {t['tokens'] / 16:,.0f} "
        f"| {t['bytes']:,} |"),
        (f"| FastMCP `from_openapi` (spec filtered to the 16) | {f['tools']} | {f['tokens']:,} | {f['tokens'] / 16:,.0f} "
        f"| {f['bytes']:,} |"),
        "",
        (f"Ratio toolgen / FastMCP: **{ratio:.4f}** (1/{1 / ratio:.0f}; target ≤ 1/20 = 0.05: "
        f"{'met' if ratio <= 0.05 else 'missed'})."),
        "",
        f"Every toolgen tool is OpenAI-strict: **{t['all_strict']}**; every tool carries its effect and approval "
        f"(policy row, MCP annotations, approval stated in the description): **{t['all_effect_approval']}**"
        + (f" (failing: {', '.join(t['failing_checks'])})" if t["failing_checks"] else "") + ". "
        f"toolgen's 16 operations become {t['tools']} tools (each write is a `preview_*` + `record_*` pair; "
        f"{len(t['approval_required'])} record tools need approval). FastMCP input schemas that would pass OpenAI "
        f"strict as they are: {f['input_schemas_strict_shaped']} of {f['tools']}.",
        "",
        ("Where the tokens go (sums over the catalog; parts are counted separately, so they add up to slightly "
        "less than the whole):"),
        "",
        "| | description | inputSchema | outputSchema | annotations | name + title |",
        "|---|---|---|---|---|---|",
    ]
    for label, side in (("toolgen", t), ("FastMCP", f)):
        sums = {k: sum(p[k] for p in side["per_tool"].values())
                for k in ("description", "inputSchema", "outputSchema", "annotations", "name+title")}
        lines.append(f"| {label} | {sums['description']:,} | {sums['inputSchema']:,} | {sums['outputSchema']:,} | "
                     f"{sums['annotations']:,} | {sums['name+title']:,} |")
    lines += ["", "<details><summary>toolgen tokens per tool</summary>", "",
              "| tool | total | description | inputSchema | outputSchema | annotations |", "|---|---|---|---|---|---|"]
    for name, p in sorted(t["per_tool"].items(), key=lambda kv: -kv[1]["total"]):
        lines.append(f"| `{name}` | {p['total']} | {p['description']} | {p['inputSchema']} | {p['outputSchema']} "
                     f"| {p['annotations']} |")
    lines += ["", "</details>", "", "## 2. Build time and peak memory, whole spec", "",
              ("toolgen: include-everything intent map, the DEFAULT build (every artifact, as `toolgen build` "
               "writes it: openai, anthropic, mcp, policy.json, POLICY.md, REPORT.md with the lint stage, the "
               "Python package), in-process `build_api` timed after imports (`benchmarks/buildcost.py`); its "
               "JSON-only build (openai, anthropic, mcp, policy) for reference. FastMCP: read the same file, "
               "`FastMCP.from_openapi`, list the tools through `fastmcp.Client`. Each run in a fresh process; "
               "medians; peak = the process's peak resident memory, imports included."),
              "",
              ("| spec | toolgen tools | FastMCP tools | toolgen default | (CPU) | toolgen JSON-only | FastMCP | (CPU) "
               "| default / FastMCP | (CPU) | target | toolgen peak MB | FastMCP peak MB | toolgen output bytes |"),
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    targets = {GITHUB_SPEC: 1.0, STRIPE_SPEC: 0.2}
    for r in times:
        ratio_t = r["toolgen"]["median_s"] / r["fastmcp"]["median_s"]
        target = targets.get(r["spec"])
        verdict = f"≤ {target} ({'met' if ratio_t <= target else 'missed'})" if target is not None else "–"
        lines.append(
            f"| `{r['spec']}` ({r['toolgen']['operations']:,} operations) | {r['toolgen']['tools']:,} | "
            f"{r['fastmcp']['tools']:,} | {r['toolgen']['median_s']:.2f} s | {r['toolgen']['median_cpu_s']:.2f} s "
            f"| {r['toolgen_json_only']['median_s']:.2f} s | {r['fastmcp']['median_s']:.2f} s "
            f"| {r['fastmcp']['median_cpu_s']:.2f} s | **{ratio_t:.3f}** "
            f"| {r['toolgen']['median_cpu_s'] / r['fastmcp']['median_cpu_s']:.3f} | {verdict} | {r['toolgen']['peak_mb']:,.0f} | {r['fastmcp']['peak_mb']:,.0f} "
            f"| {r['toolgen']['output_bytes']:,} |")
    lines += ["", "Runs (s): " + "; ".join(
        f"{r['spec']}: toolgen {', '.join(f'{x:.2f}' for x in r['toolgen']['runs_s'])} / FastMCP "
        f"{', '.join(f'{x:.2f}' for x in r['fastmcp']['runs_s'])}" for r in times) + "."]
    lines += ["", "Stages of the first toolgen default run (s): " + "; ".join(
        f"{r['spec']}: " + ", ".join(f"{k} {v:.2f}" for k, v in r["toolgen"]["stages"].items()) for r in times) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("KIND", "SPEC"), help=argparse.SUPPRESS)
    parser.add_argument("--shared", type=Path, default=REPO / ".." / "shared")
    parser.add_argument("--reps", type=int, default=3, help="toolgen repetitions per spec")
    parser.add_argument("--fastmcp-reps", type=int, default=2, help="FastMCP repetitions per spec")
    parser.add_argument("--spec", type=Path, action="append", default=[],
                        help="time this OpenAPI file instead of GitHub and Stripe (repeatable)")
    parser.add_argument("--skip-stripe", action="store_true", help="time GitHub only (FastMCP needs ~1 min on Stripe)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.worker:
        _kind, spec = args.worker  # only FastMCP runs here; toolgen runs in benchmarks/buildcost.py
        result = worker_fastmcp(Path(spec))
        print(json.dumps(result))
        return 0
    import platform

    import fastmcp

    from toolgen import __version__

    env = {"toolgen": __version__, "fastmcp": fastmcp.__version__, "python": platform.python_version(),
           "cpus": str(os.cpu_count())}
    print("1. catalog size (16 GitHub operations)...", file=sys.stderr)
    cat = catalog_comparison(args.shared)
    print(f"   toolgen {cat['toolgen']['tokens']:,} tokens ({cat['toolgen']['tools']} tools), FastMCP "
          f"{cat['fastmcp']['tokens']:,} tokens ({cat['fastmcp']['tools']} tools): ratio "
          f"{cat['toolgen']['tokens'] / cat['fastmcp']['tokens']:.4f}; all strict {cat['toolgen']['all_strict']}, "
          f"effect+approval {cat['toolgen']['all_effect_approval']}", file=sys.stderr)
    times = []
    real = args.shared / "specs" / "real"
    for spec in args.spec or [real / GITHUB_SPEC] + ([] if args.skip_stripe else [real / STRIPE_SPEC]):
        print(f"2. build time, {spec.name}...", file=sys.stderr)
        r = time_comparison(spec, args.reps, args.fastmcp_reps)
        times.append(r)
        print(f"   toolgen median {r['toolgen']['median_s']:.2f} s, FastMCP median {r['fastmcp']['median_s']:.2f} s: "
              f"ratio {r['toolgen']['median_s'] / r['fastmcp']['median_s']:.3f}", file=sys.stderr)
    text = markdown(cat, times, env)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "vs_fastmcp.md").write_text(text, encoding="utf-8")
    (args.out / "vs_fastmcp.json").write_text(json.dumps({"env": env, "catalog": cat, "build_time": times},
                                                         indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "generator"))
    sys.path.insert(0, str(REPO / "benchmarks"))
    raise SystemExit(main())
