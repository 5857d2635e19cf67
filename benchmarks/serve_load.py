"""Serving under concurrent agents: `toolgen serve --http` (1 and N workers) against FastMCP's
OpenAPI server, same API, same upstream, same client, one run.

    python benchmarks/serve_load.py [--agents 1,8,32] [--calls 25] [--workers 2] [--rounds 2]
                                    [--baseline PATH_TO_TOOLGEN --baseline-name NAME]

Needs the ``bench`` extra (FastMCP) beside the ``dev`` one. Starts the tickets API
(``python -m toolgen.testing.tickets_server``) once, then each server as its own process:

- ``toolgen serve generated/tickets --http 127.0.0.1:0 --no-auth --scopes ticket:read`` with a
  SQLite receipt file, once with one worker and once with ``--workers N``;
- FastMCP: ``FastMCP.from_openapi`` over ``specs/tickets.yaml`` with an ``httpx.AsyncClient`` on the
  same upstream and its credential, served over Streamable HTTP (``run(transport="http")``).

For each server and each number of concurrent agents, every agent opens its own official MCP client
(``mcp.Client`` over Streamable HTTP, its own HTTP connection) and makes ``--calls`` calls of the read
tool for one ticket (toolgen's ``get_ticket``, FastMCP's ``getTicket``), after one warm-up call.
Reported per cell: calls per second (the counted calls over the wall time from the first agent's
first counted call to the last agent's last; connecting and the warm-up are not counted), latency p50/p95/p99 (ms, per call,
as the client sees it), errors, and the server's peak resident memory (VmHWM of the server process
and its workers, MB). Servers and agent counts are interleaved over ``--rounds`` rounds so drift on
a shared machine hits every side alike: odd rounds take the servers in one order, even rounds in
the reverse order, so a drift in the machine's load does not favour the side that comes first. The
machine's 1-minute load average is sampled before every cell (its minimum, median and maximum are
reported). ``--baseline`` adds another ``toolgen`` executable (an earlier version, installed in
its own environment) as one more 1-worker side, to measure a change before and after in the same
run. The medians over the rounds are printed and written to ``benchmarks/results/serve_load.md``
(+ ``.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
TICKETS_TOKEN = "test-token-7f3a"
TOOLGEN = str(Path(sys.executable).parent / "toolgen")

FASTMCP_SERVER = """
import sys, httpx, yaml
from fastmcp import FastMCP
spec_path, base_url, token, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
spec = yaml.safe_load(open(spec_path, encoding="utf-8"))
client = httpx.AsyncClient(base_url=base_url, headers={"Authorization": "Bearer " + token}, timeout=30)
server = FastMCP.from_openapi(openapi_spec=spec, client=client, name="tickets")
print("ready", flush=True)
server.run(transport="http", host="127.0.0.1", port=port, show_banner=False, log_level="warning",
           stateless_http=True)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tree_peak_mb(pid: int) -> float:
    """Peak resident memory (VmHWM) of `pid` and its live children, MB (Linux)."""
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    total = 0
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def wait_http(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port} after {timeout:.0f} s")


def start_toolgen(
    base_url: str, workers: int, folder: Path, executable: str = TOOLGEN
) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, TICKETS_TOKEN=TICKETS_TOKEN)
    proc = subprocess.Popen(
        [
            executable,
            "serve",
            str(REPO / "generated" / "tickets"),
            "--http",
            "127.0.0.1:0",
            "--no-auth",
            "--scopes",
            "ticket:read",
            "--base-url",
            base_url,
            "--receipts",
            str(folder / f"receipts-{workers}.sqlite3"),
            "--workers",
            str(workers),
        ],
        cwd=folder,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if "serving MCP on " in line:
            url = line.split("serving MCP on ", 1)[1].split()[0]
            time.sleep(0.5 if workers > 1 else 0.0)  # the workers' servers start after the URL is printed
            return proc, url
    raise SystemExit("toolgen serve did not start")


def start_fastmcp(base_url: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            FASTMCP_SERVER,
            str(REPO / "specs" / "tickets.yaml"),
            base_url,
            TICKETS_TOKEN,
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    wait_http(port)
    return proc, f"http://127.0.0.1:{port}/mcp"


async def agent(
    url: str,
    tool: str,
    calls: int,
    latencies: list[float],
    errors: list[str],
    spans: list[tuple[float, float]],
) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), cache=None) as client,
    ):
        await client.call_tool(tool, {"ticket_id": "T-102"})  # warm-up: not counted
        began = time.perf_counter()
        for _ in range(calls):
            start = time.perf_counter()
            result = await client.call_tool(tool, {"ticket_id": "T-102"})
            latencies.append(time.perf_counter() - start)
            if result.is_error:
                errors.append(
                    str(getattr(result.content[0], "text", ""))[:200] if result.content else "error"
                )
        spans.append((began, time.perf_counter()))


async def cell(url: str, tool: str, agents: int, calls: int) -> dict[str, Any]:
    import anyio

    latencies: list[float] = []
    errors: list[str] = []
    spans: list[tuple[float, float]] = []
    async with anyio.create_task_group() as tg:
        for _ in range(agents):
            tg.start_soon(agent, url, tool, calls, latencies, errors, spans)
    wall = max(end for _, end in spans) - min(begin for begin, _ in spans)
    ordered = sorted(latencies)

    def pct(q: float) -> float:
        return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "calls": len(latencies),
        "wall_s": wall,
        "per_s": len(latencies) / wall,
        "p50_ms": pct(0.5),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "errors": len(errors),
        "first_error": errors[:1],
    }


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=40)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str] | None = None) -> int:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--agents", default="1,8,32")
    parser.add_argument("--calls", type=int, default=25, help="calls per agent per cell")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", help="another toolgen executable, served as one more 1-worker side")
    parser.add_argument("--baseline-name", default="baseline", help="how the results name the baseline")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    counts = [int(n) for n in args.agents.split(",") if n]
    import fastmcp

    api_port = free_port()
    api = subprocess.Popen(
        [sys.executable, "-m", "toolgen.testing.tickets_server", "--port", str(api_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base_url = f"http://127.0.0.1:{api_port}/v1"
    wait_http(api_port)
    sides: dict[str, tuple[str, int, str]] = {
        "toolgen, 1 worker": ("toolgen", 1, TOOLGEN),
        f"toolgen, {args.workers} workers": ("toolgen", args.workers, TOOLGEN),
        "FastMCP from_openapi": ("fastmcp", 1, ""),
    }
    if args.baseline:
        sides[f"toolgen {args.baseline_name}, 1 worker"] = ("toolgen", 1, args.baseline)
    loads: list[float] = []
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {name: {n: [] for n in counts} for name in sides}
    peaks: dict[str, list[float]] = {name: [] for name in sides}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                order = list(sides.items()) if r % 2 == 0 else list(reversed(sides.items()))
                for name, (kind, workers, executable) in order:
                    if kind == "toolgen":
                        proc, url = start_toolgen(base_url, workers, Path(tmp), executable)
                        tool = "get_ticket"
                    else:
                        proc, url = start_fastmcp(base_url)
                        tool = "getTicket"
                    try:
                        for n in counts:
                            loads.append(os.getloadavg()[0])
                            result = anyio.run(cell, url, tool, n, args.calls)
                            runs[name][n].append(result)
                            print(
                                f"round {r + 1} {name:<22} {n:>3} agents: {result['per_s']:7.1f} calls/s, "
                                f"p50 {result['p50_ms']:6.1f} ms, p99 {result['p99_ms']:7.1f} ms, "
                                f"errors {result['errors']}",
                                file=sys.stderr,
                            )
                        peaks[name].append(tree_peak_mb(proc.pid))
                    finally:
                        stop(proc)
    finally:
        stop(api)  # type: ignore[arg-type]
    env = {
        "python": platform.python_version(),
        "fastmcp": fastmcp.__version__,
        "cpus": os.cpu_count(),
        "1-minute load average before each cell (min / median / max)": " / ".join(
            f"{x:.1f}" for x in (min(loads), statistics.median(loads), max(loads))
        ),
        "rounds": f"{args.rounds}, the servers' order reversed every other round",
    }
    lines = [
        "# Serving under concurrent agents: toolgen vs FastMCP",
        "",
        f"Generated by `python benchmarks/serve_load.py --agents {args.agents} --calls {args.calls} --workers "
        f"{args.workers} --rounds {args.rounds}"
        + (f" --baseline TOOLGEN --baseline-name {args.baseline_name}" if args.baseline else "")
        + f"` on {time.strftime('%Y-%m-%d')} ("
        + ", ".join(f"{k} {v}" for k, v in env.items())
        + "). Medians over the rounds; the read tool of "
        "the tickets API for one ticket, each agent its own MCP client and HTTP connection, the same "
        "upstream for every server. Absolute figures depend on the machine's load; compare rows.",
        "",
        "| server | agents | calls/s | p50 ms | p95 ms | p99 ms | errors | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    summary: dict[str, Any] = {
        "env": env,
        "cells": {},
        "rounds": {
            name: {
                str(n): [{k: round(v, 2) if isinstance(v, float) else v for k, v in c.items()} for c in cells]
                for n, cells in by_count.items()
            }
            for name, by_count in runs.items()
        },
        "peaks_mb": peaks,
    }
    for name in sides:
        peak = statistics.median(peaks[name]) if peaks[name] else 0.0
        for n in counts:
            cells = runs[name][n]
            med = {k: statistics.median(c[k] for c in cells) for k in ("per_s", "p50_ms", "p95_ms", "p99_ms")}
            errs = sum(c["errors"] for c in cells)
            summary["cells"][f"{name} / {n}"] = {**med, "errors": errs, "peak_mb": peak}
            lines.append(
                f"| {name} | {n} | {med['per_s']:.1f} | {med['p50_ms']:.1f} | {med['p95_ms']:.1f} | "
                f"{med['p99_ms']:.1f} | {errs} | {peak:.0f} |"
            )
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "serve_load.md").write_text(text, encoding="utf-8")
        (RESULTS / "serve_load.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
