"""toolgen against FastMCP (`FastMCP.from_openapi`) on the same inputs, in one run.

Run on demand (not part of the test suite); FastMCP is the `bench` extra (`pip install -e ".[bench]"`):

    python benchmarks/vs_fastmcp.py [--reps 5] [--fastmcp-reps 3] [--shared ../shared] [--skip-stripe]

1. Catalog size for the same 16 GitHub operations (issues list-for-repo/get/create/update/create-comment/
   list-comments/add-labels/remove-label/lock, repos get/delete, search issues-and-pull-requests, pulls
   list/get/create/merge): o200k tokens of what an MCP client receives from `tools/list`. toolgen: the
   committed `generated/github/mcp.json` (built from `intent_maps/github.yaml`). FastMCP: a server built by
   `FastMCP.from_openapi` from the GitHub spec filtered to those 16 operations, its tools listed through
   `fastmcp.Client` and serialised as the MCP `Tool` objects a client gets (`model_dump(by_alias=True,
   exclude_none=True)`). Both sides: compact JSON (sorted keys) of ``{"tools": [...]}``. Also checked:
   every toolgen tool is OpenAI-strict and carries its effect and approval (policy row + MCP annotations).
2. Build time of the whole GitHub spec and the whole Stripe spec: toolgen with an include-everything intent
   map, three dialects + policy (JSON outputs, `build_api` in-process: load, lower, emit, conformance
   check), versus FastMCP reading the same file, building its server and listing its tools. Every
   repetition runs in a fresh process (toolgen and FastMCP alternate); the time is measured inside the
   process after imports; medians are compared. The wall time of the whole process (interpreter start
   and imports included) is reported too.

Results: printed, and written to `benchmarks/results/vs_fastmcp.md` (+ `.json`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
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


def worker_toolgen(spec: Path) -> dict[str, Any]:
    from toolgen.build import build_api

    with tempfile.TemporaryDirectory() as tmp:
        intent = Path(tmp) / "api.yaml"
        intent.write_text(f"toolgen: 1\nspec: {json.dumps(str(spec))}\napi: {{name: api}}\n"
                          'include: [{match: "*"}]\n', encoding="utf-8")
        start = time.perf_counter()
        built = build_api(intent, Path(tmp) / "out", emit=JSON_OUTPUTS, run_lint=False)  # type: ignore[arg-type]
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "tools": len(built.ir.tools), "operations": len(built.ir.operations),
            "bytes": sum(len(b) for b in built.files.values())}


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
    start = time.perf_counter()
    data = json.loads(spec.read_text(encoding="utf-8"))
    tools = fastmcp_list(data)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "tools": len(tools), "bytes": len(compact({"tools": tools}).encode("utf-8"))}


def run_worker(kind: str, spec: Path) -> dict[str, Any]:
    """One measurement in a fresh interpreter; adds the process's wall time (start-up and imports)."""
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


def time_comparison(shared: Path, spec_name: str, reps: int, fast_reps: int) -> dict[str, Any]:
    spec = shared / "specs" / "real" / spec_name
    ours: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    for i in range(max(reps, fast_reps)):  # alternate, so drift on a shared machine hits both sides
        if i < reps:
            ours.append(run_worker("toolgen", spec))
            print(f"  {spec_name} toolgen #{i + 1}: {ours[-1]['seconds']:.2f} s", file=sys.stderr)
        if i < fast_reps:
            theirs.append(run_worker("fastmcp", spec))
            print(f"  {spec_name} fastmcp #{i + 1}: {theirs[-1]['seconds']:.2f} s", file=sys.stderr)
    med = statistics.median
    return {
        "spec": spec_name,
        "toolgen": {"median_s": med(r["seconds"] for r in ours), "runs_s": [r["seconds"] for r in ours],
                    "median_wall_s": med(r["wall"] for r in ours), "tools": ours[0]["tools"],
                    "operations": ours[0]["operations"], "output_bytes": ours[0]["bytes"]},
        "fastmcp": {"median_s": med(r["seconds"] for r in theirs), "runs_s": [r["seconds"] for r in theirs],
                    "median_wall_s": med(r["wall"] for r in theirs), "tools": theirs[0]["tools"],
                    "catalog_bytes": theirs[0]["bytes"]},
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
    lines += ["", "</details>", "", "## 2. Build time, whole spec", "",
              ("toolgen: include-everything intent map, openai + anthropic + mcp + policy (JSON outputs), in-process "
              "`build_api` (load, lower, emit, conformance check of every catalog). FastMCP: read the same file, "
              "`FastMCP.from_openapi`, list the tools through `fastmcp.Client`. Each run in a fresh process, timed "
              "after imports; medians. Wall = the whole process including interpreter start-up and imports."),
              "",
              ("| spec | toolgen tools | FastMCP tools | toolgen median | FastMCP median | ratio | target | "
              "toolgen wall | FastMCP wall |"),
              "|---|---|---|---|---|---|---|---|---|"]
    targets = {GITHUB_SPEC: 0.5, STRIPE_SPEC: 0.2}
    for r in times:
        ratio_t = r["toolgen"]["median_s"] / r["fastmcp"]["median_s"]
        target = targets.get(r["spec"], 1.0)
        lines.append(
            f"| `{r['spec']}` ({r['toolgen']['operations']:,} operations) | {r['toolgen']['tools']:,} | "
            f"{r['fastmcp']['tools']:,} | {r['toolgen']['median_s']:.2f} s | {r['fastmcp']['median_s']:.2f} s | "
            f"**{ratio_t:.3f}** | ≤ {target} ({'met' if ratio_t <= target else 'missed'}) | "
            f"{r['toolgen']['median_wall_s']:.2f} s | {r['fastmcp']['median_wall_s']:.2f} s |")
    lines += ["", "Runs (s): " + "; ".join(
        f"{r['spec']}: toolgen {', '.join(f'{x:.2f}' for x in r['toolgen']['runs_s'])} / FastMCP "
        f"{', '.join(f'{x:.2f}' for x in r['fastmcp']['runs_s'])}" for r in times) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("KIND", "SPEC"), help=argparse.SUPPRESS)
    parser.add_argument("--shared", type=Path, default=REPO / ".." / "shared")
    parser.add_argument("--reps", type=int, default=5, help="toolgen repetitions per spec")
    parser.add_argument("--fastmcp-reps", type=int, default=3, help="FastMCP repetitions per spec")
    parser.add_argument("--skip-stripe", action="store_true", help="time GitHub only (FastMCP needs ~1 min on Stripe)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.worker:
        kind, spec = args.worker
        result = worker_toolgen(Path(spec)) if kind == "toolgen" else worker_fastmcp(Path(spec))
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
    for spec in [GITHUB_SPEC] + ([] if args.skip_stripe else [STRIPE_SPEC]):
        print(f"2. build time, {spec}...", file=sys.stderr)
        r = time_comparison(args.shared, spec, args.reps, args.fastmcp_reps)
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
    raise SystemExit(main())
