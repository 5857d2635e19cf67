"""toolgen against FastMCP (`FastMCP.from_openapi`) on the same inputs, in one run.

Run on demand (not part of the test suite); FastMCP is the `bench` extra (`pip install -e ".[bench]"`):

    python benchmarks/vs_fastmcp.py [--reps 3] [--fastmcp-reps 2] [--shared ../shared] [--skip-stripe]
                                    [--spec PATH ...] [--catalog-only]

1. Catalog size for the same 16 GitHub operations (issues list-for-repo/get/create/update/create-comment/
   list-comments/add-labels/remove-label/lock, repos get/delete, search issues-and-pull-requests, pulls
   list/get/create/merge): o200k tokens of what an MCP client receives from `tools/list`. toolgen: the
   committed `generated/github/mcp.json` (built from `intent_maps/github.yaml`). FastMCP: a server built by
   `FastMCP.from_openapi` from the GitHub spec filtered to those 16 operations, its tools listed through
   `fastmcp.Client` and serialised as the MCP `Tool` objects a client gets (`model_dump(by_alias=True,
   exclude_none=True)`). Both sides: compact JSON (sorted keys) of ``{"tools": [...]}``. Also checked:
   every toolgen tool is OpenAI-strict and carries its effect and approval (policy row + MCP annotations).
   The same for the OpenAI and Anthropic catalogs (toolgen's `openai.json`/`anthropic.json`; FastMCP's
   tools as a client adapter forwards them, `fastmcp_in_dialect`), each broken down into names,
   descriptions, input schemas, output schemas, annotations and the JSON envelope (`catalog_parts`),
   and the same again for the Stripe example (`intent_maps/stripe.yaml`) against FastMCP on the same
   Stripe operations. `--catalog-only` measures this part alone and keeps the previous build-time rows.
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
    "issues/list-for-repo",
    "issues/get",
    "issues/create",
    "issues/update",
    "issues/create-comment",
    "issues/list-comments",
    "issues/add-labels",
    "issues/remove-label",
    "issues/lock",
    "repos/get",
    "repos/delete",
    "search/issues-and-pull-requests",
    "pulls/list",
    "pulls/get",
    "pulls/create",
    "pulls/merge",
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

    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "tools": len(tools),
        "bytes": len(compact({"tools": tools}).encode("utf-8")),
        "peak_mb": _peak_mb(),
    }


def run_worker(kind: str, spec: Path) -> dict[str, Any]:
    """One measurement in a fresh interpreter; adds the process's wall time (start-up and imports).
    `kind`: ``toolgen`` (the default build), ``toolgen-json`` (JSON outputs only), ``toolgen-mcp`` (the
    MCP catalog only, what FastMCP makes; the lint stage still runs) or ``fastmcp``."""
    from buildcost import DEFAULT, JSON_ONLY, measure

    if kind.startswith("toolgen"):
        start = time.perf_counter()
        result = measure(spec, {"toolgen-json": JSON_ONLY, "toolgen-mcp": "mcp"}.get(kind, DEFAULT))
        result["wall"] = time.perf_counter() - start
        result["bytes"] = result["output_bytes"]
        return result
    start = time.perf_counter()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "generator"), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", kind, str(spec)],
        capture_output=True,
        text=True,
        timeout=1800,
        env=env,
        check=False,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} worker failed on {spec.name}:\n{proc.stderr[-3000:]}")
    answer: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    answer["wall"] = wall
    return answer


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


#: The parts of a catalog the breakdown counts. `envelope` is the rest: JSON keys, braces and the
#: per-tool wrappers (`{"type": "function", "function": ...}`), so the parts add up to the total exactly.
PARTS = ("names", "descriptions", "inputs", "outputs", "annotations", "envelope")
DIALECTS = ("mcp", "openai", "anthropic")


def tool_fields(tool: dict[str, Any], dialect: str) -> dict[str, Any]:
    """The parts of one catalog entry in `dialect` (``mcp``, ``openai``, ``anthropic``); None = absent."""
    if dialect == "openai":
        fn = tool["function"]
        return {
            "names": fn.get("name"),
            "descriptions": fn.get("description"),
            "inputs": fn.get("parameters"),
            "outputs": None,
            "annotations": None,
        }
    if dialect == "anthropic":
        return {
            "names": tool.get("name"),
            "descriptions": tool.get("description"),
            "inputs": tool.get("input_schema"),
            "outputs": None,
            "annotations": None,
        }
    names = {k: tool[k] for k in ("name", "title") if k in tool}
    return {
        "names": names,
        "descriptions": tool.get("description"),
        "inputs": tool.get("inputSchema"),
        "outputs": tool.get("outputSchema"),
        "annotations": tool.get("annotations"),
    }


def _part_tokens(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, str):
        return tokens(value)
    if isinstance(value, dict) and set(value) <= {"name", "title"}:  # names: the strings themselves
        return sum(tokens(v) for v in value.values() if isinstance(v, str))
    return tokens(compact(value))


def catalog_parts(tools: list[dict[str, Any]], dialect: str) -> dict[str, int]:
    """o200k tokens of the catalog ``{"tools": [...]}`` (`total`) and of its parts summed over the
    tools (`PARTS`); `envelope` = total - the other parts, so the parts sum to `total`."""
    out = {part: 0 for part in PARTS}
    for tool in tools:
        for part, value in tool_fields(tool, dialect).items():
            out[part] += _part_tokens(value)
    out["total"] = tokens(compact({"tools": tools}))
    out["envelope"] = out["total"] - sum(out[p] for p in PARTS if p != "envelope")
    return out


def fastmcp_in_dialect(tools: list[dict[str, Any]], dialect: str) -> list[dict[str, Any]]:
    """FastMCP's MCP tools as a client adapter sends them to a provider: OpenAI function tools
    (``parameters`` = ``inputSchema``, not strict) or Anthropic tools (``input_schema``); MCP as is."""
    if dialect == "openai":
        return [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t.get("description", ""),
                    "parameters": t.get("inputSchema", {"type": "object"}),
                },
            }
            for t in tools
        ]
    if dialect == "anthropic":
        return [
            {
                "name": t["name"],
                "description": t.get("description", ""),
                "input_schema": t.get("inputSchema", {"type": "object"}),
            }
            for t in tools
        ]
    return tools


def effect_and_approval_checks(
    mcp: list[dict[str, Any]], rows: dict[str, dict[str, Any]], strict: dict[str, bool]
) -> list[tuple[str, bool]]:
    """Per tool: OpenAI-strict, effect and approval in the policy row, MCP hints that match them, and
    approval stated in the description."""
    checks = []
    for tool in mcp:
        row = rows[tool["name"]]
        ann = tool.get("annotations", {})
        ok = (
            strict.get(tool["name"]) is True
            and row["effect"] in ("read", "write", "destructive")
            and row["approval"] in ("never", "required")
            and ann.get("readOnlyHint") is (row["mode"] != "record")
            and ann.get("destructiveHint") is (row["mode"] == "record" and row["effect"] == "destructive")
            and isinstance(ann.get("idempotentHint"), bool)
            and isinstance(ann.get("openWorldHint"), bool)
            and (row["mode"] != "record" or row["effect"] != "read")
            and (row["approval"] == "never" or "approv" in tool["description"].lower())
        )
        checks.append((tool["name"], ok))
    return checks


def row_operations(row: dict[str, Any]) -> list[str]:
    """The operationIds a policy row calls: its own, or a composite's steps' (its `operation` is null)."""
    if row["operation"] is not None:
        return [row["operation"]["id"]]
    return [op for step in row["composite"]["steps"] for op in row_operations(step["row"])]


def catalog_comparison(
    shared: Path, api: str = "github", spec_file: str = GITHUB_SPEC, expected_ops: list[str] | None = None
) -> dict[str, Any]:
    """toolgen's committed catalogs of `api` (``generated/<api>/``) against FastMCP on the same
    operations of the real spec `spec_file`, per dialect, with the per-part breakdown."""
    folder = REPO / "generated" / api
    catalogs = {d: json.loads((folder / f"{d}.json").read_text(encoding="utf-8")) for d in DIALECTS}
    policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    rows = {r["tool"]: r for r in policy["tools"]}
    toolgen_ops = sorted({op for r in rows.values() for op in row_operations(r)})
    if expected_ops is not None and toolgen_ops != sorted(expected_ops):
        raise SystemExit(f"generated/{api} covers {toolgen_ops}, not the benchmark operations")
    spec = json.loads((shared / "specs" / "real" / spec_file).read_text(encoding="utf-8"))
    fast_tools = fastmcp_list(filtered_spec(spec, toolgen_ops))
    strict = {t["function"]["name"]: t["function"].get("strict") is True for t in catalogs["openai"]}
    checks = effect_and_approval_checks(catalogs["mcp"], rows, strict)
    mcp = catalogs["mcp"]
    per_tool = {
        t["name"]: {
            **{p: _part_tokens(v) for p, v in tool_fields(t, "mcp").items()},
            "total": tokens(compact(t)),
        }
        for t in mcp
    }
    dialects = {
        d: {
            "toolgen": catalog_parts(catalogs[d], d),
            "fastmcp": catalog_parts(fastmcp_in_dialect(fast_tools, d), d),
        }
        for d in DIALECTS
    }
    toolgen_text = compact({"tools": mcp})
    composites = sorted(n for n, r in rows.items() if r["operation"] is None)
    plain = [
        tool for tool in mcp if tool["name"] not in composites
    ]  # the tools FastMCP has a counterpart for
    fast_text = compact({"tools": fast_tools})
    return {
        "api": api,
        "spec": spec_file,
        "operations": len(toolgen_ops),
        "dialects": dialects,
        "toolgen": {
            "tools": len(mcp),
            "operations": len(toolgen_ops),
            "tokens": dialects["mcp"]["toolgen"]["total"],
            "bytes": len(toolgen_text.encode("utf-8")),
            "per_tool": per_tool,
            "strict_tools": sum(strict.values()),
            "all_strict": all(strict.values()),
            "all_effect_approval": all(ok for _, ok in checks),
            "failing_checks": [name for name, ok in checks if not ok],
            "approval_required": sorted(n for n, r in rows.items() if r["approval"] == "required"),
            "composites": composites,
            "tokens_without_composites": tokens(compact({"tools": plain})),
        },
        "fastmcp": {
            "tools": len(fast_tools),
            "tokens": dialects["mcp"]["fastmcp"]["total"],
            "bytes": len(fast_text.encode("utf-8")),
            "input_schemas_strict_shaped": sum(
                1 for t in fast_tools if _strict_shaped(t.get("inputSchema", {}))
            ),
        },
    }


def _strict_shaped(schema: dict[str, Any]) -> bool:
    """Whether a schema would pass OpenAI strict as is (toolgen's own checker on a strict tool)."""
    from toolgen.dialects.openai import check_openai_catalog

    tool = {
        "type": "function",
        "function": {"name": "t", "description": "", "parameters": schema, "strict": True},
    }
    return not check_openai_catalog([tool])


# --- 2. build time ----------------------------------------------------------------------------------


def time_comparison(spec: Path, reps: int, fast_reps: int) -> dict[str, Any]:
    ours: list[dict[str, Any]] = []
    json_only: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    for i in range(max(reps, fast_reps)):  # alternate, so drift on a shared machine hits both sides
        if i < reps:
            ours.append(run_worker("toolgen", spec))
            print(
                f"  {spec.name} toolgen #{i + 1}: {ours[-1]['seconds']:.2f} s, {ours[-1]['peak_mb']:.0f} MB",
                file=sys.stderr,
            )
            json_only.append(run_worker("toolgen-json", spec))
            print(
                f"  {spec.name} toolgen JSON-only #{i + 1}: {json_only[-1]['seconds']:.2f} s", file=sys.stderr
            )
        if i < fast_reps:
            theirs.append(run_worker("fastmcp", spec))
            print(
                f"  {spec.name} fastmcp #{i + 1}: {theirs[-1]['seconds']:.2f} s, {theirs[-1]['peak_mb']:.0f} MB",
                file=sys.stderr,
            )
    med = statistics.median
    return {
        "spec": spec.name,
        "toolgen": {
            "median_s": med(r["seconds"] for r in ours),
            "runs_s": [r["seconds"] for r in ours],
            "median_cpu_s": med(r["cpu_seconds"] for r in ours),
            "median_wall_s": med(r["wall"] for r in ours),
            "tools": ours[0]["tools"],
            "peak_mb": max(r["peak_mb"] for r in ours),
            "operations": ours[0]["operations"],
            "output_bytes": ours[0]["bytes"],
            "stages": ours[0]["stages"],
        },
        "toolgen_json_only": {
            "median_s": med(r["seconds"] for r in json_only),
            "median_cpu_s": med(r["cpu_seconds"] for r in json_only),
            "peak_mb": max(r["peak_mb"] for r in json_only),
            "output_bytes": json_only[0]["bytes"],
        },
        "fastmcp": {
            "median_s": med(r["seconds"] for r in theirs),
            "runs_s": [r["seconds"] for r in theirs],
            "median_wall_s": med(r["wall"] for r in theirs),
            "tools": theirs[0]["tools"],
            "median_cpu_s": med(r["cpu_seconds"] for r in theirs),
            "peak_mb": max(r["peak_mb"] for r in theirs),
            "catalog_bytes": theirs[0]["bytes"],
        },
    }


# --- report -----------------------------------------------------------------------------------------


_API_NAMES = {"github": "GitHub", "stripe": "Stripe"}
TARGET = 0.05  # issue 13: the MCP catalog at most 1/20 of FastMCP's on the same operations
_PART_LABELS = {
    "names": "names (+ title)",
    "descriptions": "descriptions",
    "inputs": "input schemas",
    "outputs": "output schemas",
    "annotations": "annotations",
    "envelope": "JSON envelope",
}


def breakdown_table(cat: dict[str, Any]) -> list[str]:
    """Markdown rows: per dialect, toolgen and FastMCP, tokens per part, the total and the ratio."""
    lines = [
        "| dialect | side | " + " | ".join(_PART_LABELS[p] for p in PARTS) + " | total | toolgen / FastMCP |",
        "|---|---|" + "---|" * (len(PARTS) + 2),
    ]
    for dialect in DIALECTS:
        both = cat["dialects"][dialect]
        ratio = both["toolgen"]["total"] / both["fastmcp"]["total"]
        for side, label in (("toolgen", "toolgen"), ("fastmcp", "FastMCP")):
            parts = both[side]
            cells = " | ".join(f"{parts[p]:,}" for p in PARTS)
            verdict = f"**{ratio:.4f}** (1/{1 / ratio:.0f})" if side == "toolgen" else ""
            lines.append(f"| {dialect} | {label} | {cells} | {parts['total']:,} | {verdict} |")
    return lines


def composite_note(t: dict[str, Any], fastmcp_tokens: int) -> list[str]:
    """A markdown line on toolgen's composite tools, which FastMCP has no counterpart for: the catalog
    without them and its ratio (empty when there are none, or a result file from before they were counted)."""
    if not t.get("composites"):
        return []
    plain = t["tokens_without_composites"]
    ratio = plain / fastmcp_tokens
    return [
        "",
        (
            f"Of toolgen's tools, {len(t['composites'])} {'is' if len(t['composites']) == 1 else 'are'} composite ("
            f"{', '.join(f'`{n}`' for n in t['composites'])}: one tool over several of the same operations, "
            f"which FastMCP has no counterpart for). Without them: {plain:,} tokens, ratio **{ratio:.4f}** "
            f"(1/{1 / ratio:.1f}; target: {'met' if ratio <= TARGET else 'missed'})."
        ),
    ]


def catalog_section(cat: dict[str, Any], number: str) -> list[str]:
    t, f = cat["toolgen"], cat["fastmcp"]
    ops = cat["operations"]
    ratio = t["tokens"] / f["tokens"]
    lines = [
        (
            f"## {number}. Catalog size, the same {ops} {_API_NAMES.get(cat['api'], cat['api'])} operations "
            f"(`intent_maps/{cat['api']}.yaml`)"
        ),
        "",
        (
            'o200k tokens of the compact JSON `{"tools": [...]}`: for MCP what a client receives from `tools/list`; '
            "for OpenAI and Anthropic the request's `tools` array (toolgen: its own catalogs; FastMCP: its MCP tools as "
            "a client adapter forwards them: name, description, `inputSchema` as the parameters, not strict)."
        ),
        "",
        "| MCP `tools/list` | tools | tokens | tokens per operation | bytes |",
        "|---|---|---|---|---|",
        (
            f"| toolgen (`generated/{cat['api']}/mcp.json`) | {t['tools']} | {t['tokens']:,} | {t['tokens'] / ops:,.0f} "
            f"| {t['bytes']:,} |"
        ),
        (
            f"| FastMCP `from_openapi` (`{cat['spec']}` filtered to the {ops}) | {f['tools']} | {f['tokens']:,} "
            f"| {f['tokens'] / ops:,.0f} | {f['bytes']:,} |"
        ),
        "",
        (
            f"MCP ratio toolgen / FastMCP: **{ratio:.4f}** (1/{1 / ratio:.1f}; target ≤ 1/20 = 0.05: "
            f"{'met' if ratio <= TARGET else 'missed'})."
        ),
        *composite_note(t, f["tokens"]),
        "",
        (
            f"OpenAI-strict toolgen tools: {t['strict_tools']} of {t['tools']}; every tool carries its effect and "
            f"approval (policy row, all four MCP hints matching it, approval stated in the description): "
            f"**{t['all_effect_approval']}**"
            + (f" (failing: {', '.join(t['failing_checks'])})" if t["failing_checks"] else "")
            + ". "
            f"{ops} operations become {t['tools']} tools (each write is a `preview_*` + `record_*` pair; "
            f"{len(t['approval_required'])} record tools need approval). FastMCP input schemas that would pass OpenAI "
            f"strict as they are: {f['input_schemas_strict_shaped']} of {f['tools']}."
        ),
        "",
        (
            "Where the tokens go, per dialect (parts summed over the catalog; the JSON envelope is the rest, so each "
            "row adds up to its total):"
        ),
        "",
        *breakdown_table(cat),
    ]
    return lines


def markdown(
    cats: list[dict[str, Any]],
    times: list[dict[str, Any]],
    env: dict[str, str],
    times_note: str | None = None,
) -> str:
    t = cats[0]["toolgen"]
    lines = [
        "# toolgen vs FastMCP",
        "",
        "Generated by `python benchmarks/vs_fastmcp.py` (one run; "
        + ", ".join(f"{k} {v}" for k, v in env.items())
        + ").",
        "",
    ]
    for i, cat in enumerate(cats):
        lines += [*catalog_section(cat, f"1{'abcdefgh'[i]}" if len(cats) > 1 else "1"), ""]
    lines += [
        "<details><summary>toolgen tokens per tool, MCP, " + cats[0]["api"] + "</summary>",
        "",
        "| tool | total | names | descriptions | inputs | outputs | annotations |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, p in sorted(t["per_tool"].items(), key=lambda kv: -kv[1]["total"]):
        lines.append(
            f"| `{name}` | {p['total']} | {p['names']} | {p['descriptions']} | {p['inputs']} "
            f"| {p['outputs']} | {p['annotations']} |"
        )
    lines += [
        "",
        "</details>",
        "",
        "## 2. Build time and peak memory, whole spec",
        "",
        *([times_note, ""] if times_note else []),
        (
            "toolgen: include-everything intent map, the DEFAULT build (every artifact, as `toolgen build` "
            "writes it: openai, anthropic, mcp, policy.json, POLICY.md, REPORT.md with the lint stage, the "
            "Python package), in-process `build_api` timed after imports (`benchmarks/buildcost.py`); its "
            "JSON-only build (openai, anthropic, mcp, policy) for reference. FastMCP: read the same file, "
            "`FastMCP.from_openapi`, list the tools through `fastmcp.Client`. Each run in a fresh process; "
            "medians; peak = the process's peak resident memory, imports included (toolgen: plus its models.py "
            "worker's, `toolgen.builder.worker`; CPU is both processes')."
        ),
        "",
        (
            "| spec | toolgen tools | FastMCP tools | toolgen default | (CPU) | toolgen JSON-only | FastMCP | (CPU) "
            "| default / FastMCP | (CPU) | target | toolgen peak MB | FastMCP peak MB | toolgen output bytes |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
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
            f"| {r['toolgen']['output_bytes']:,} |"
        )
    lines += [
        "",
        "Runs (s): "
        + "; ".join(
            f"{r['spec']}: toolgen {', '.join(f'{x:.2f}' for x in r['toolgen']['runs_s'])} / FastMCP "
            f"{', '.join(f'{x:.2f}' for x in r['fastmcp']['runs_s'])}"
            for r in times
        )
        + ".",
    ]
    lines += [
        "",
        "Stages of the first toolgen default run (s): "
        + "; ".join(
            f"{r['spec']}: " + ", ".join(f"{k} {v:.2f}" for k, v in r["toolgen"]["stages"].items())
            for r in times
        )
        + ".",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=2, metavar=("KIND", "SPEC"), help=argparse.SUPPRESS)
    parser.add_argument("--shared", type=Path, default=REPO / ".." / "shared")
    parser.add_argument("--reps", type=int, default=3, help="toolgen repetitions per spec")
    parser.add_argument("--fastmcp-reps", type=int, default=2, help="FastMCP repetitions per spec")
    parser.add_argument(
        "--spec",
        type=Path,
        action="append",
        default=[],
        help="time this OpenAPI file instead of GitHub and Stripe (repeatable)",
    )
    parser.add_argument(
        "--skip-stripe", action="store_true", help="time GitHub only (FastMCP needs ~1 min on Stripe)"
    )
    parser.add_argument(
        "--catalog-only",
        action="store_true",
        help="measure the catalogs only; keep the build-time rows of the previous run",
    )
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

    env = {
        "toolgen": __version__,
        "fastmcp": fastmcp.__version__,
        "python": platform.python_version(),
        "cpus": str(os.cpu_count()),
    }
    cats = []
    for api, spec_file, expected in (("github", GITHUB_SPEC, SIXTEEN), ("stripe", STRIPE_SPEC, None)):
        print(f"1. catalog size ({api})...", file=sys.stderr)
        cat = catalog_comparison(args.shared, api, spec_file, expected)
        cats.append(cat)
        ratios = ", ".join(
            f"{d} {b['toolgen']['total'] / b['fastmcp']['total']:.4f}" for d, b in cat["dialects"].items()
        )
        print(
            f"   toolgen {cat['toolgen']['tokens']:,} MCP tokens ({cat['toolgen']['tools']} tools), FastMCP "
            f"{cat['fastmcp']['tokens']:,} ({cat['fastmcp']['tools']} tools): ratios {ratios}; strict "
            f"{cat['toolgen']['strict_tools']}/{cat['toolgen']['tools']}, effect+approval "
            f"{cat['toolgen']['all_effect_approval']}",
            file=sys.stderr,
        )
    times: list[dict[str, Any]] = []
    times_note = None
    previous = args.out / "vs_fastmcp.json"
    if args.catalog_only:
        if previous.exists():
            times = json.loads(previous.read_text(encoding="utf-8")).get("build_time") or []
        times_note = (
            "(`--catalog-only` run: the build-time rows below are the previous full run's, carried over "
            "from `vs_fastmcp.json`.)"
        )
    else:
        real = args.shared / "specs" / "real"
        for spec in args.spec or [real / GITHUB_SPEC] + ([] if args.skip_stripe else [real / STRIPE_SPEC]):
            print(f"2. build time, {spec.name}...", file=sys.stderr)
            r = time_comparison(spec, args.reps, args.fastmcp_reps)
            times.append(r)
            print(
                f"   toolgen median {r['toolgen']['median_s']:.2f} s, FastMCP median {r['fastmcp']['median_s']:.2f} "
                f"s: ratio {r['toolgen']['median_s'] / r['fastmcp']['median_s']:.3f}",
                file=sys.stderr,
            )
    text = markdown(cats, times, env, times_note)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "vs_fastmcp.md").write_text(text, encoding="utf-8")
    (args.out / "vs_fastmcp.json").write_text(
        json.dumps({"env": env, "catalog": cats, "build_time": times}, indent=2, sort_keys=True) + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "generator"))
    sys.path.insert(0, str(REPO / "benchmarks"))
    raise SystemExit(main())
