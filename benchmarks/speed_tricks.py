"""What a speed trick of the build saves: the same `toolgen` steps run by several copies of toolgen's
code, interleaved, each in fresh processes.

    python benchmarks/speed_tricks.py --variant NAME=GENERATOR_DIR[,VAR=VALUE...] ... [--reps 7]
                                      [--spec PATH] [--steps draft,project]

Each variant is a folder holding the `toolgen` package (this repository's ``generator``, or a copy
of it with one trick taken out) and environment variables to set (``TOOLGEN_WORKERS=0``). Steps:

- ``draft``: `toolgen init`'s draft of ``--spec`` (default: GitHub's REST API from
  ``../shared/specs/real``), built as the project `init` writes, each variant in its own copy with
  its own cache (the cache's key holds the code's digest): the cold build that fills the cache (one
  run each), then ``--reps`` rounds of a warm ``build --check`` and of a rebuild after a new
  description of the first tool (issue 39's two figures, `benchmarks/incremental.py --draft`);
- ``project``: this repository's ``toolgen build --no-cache --check`` (three small APIs, no cache)
  and ``toolgen lint --strict``, ``--reps`` rounds;
- ``serve``: ``toolgen serve generated/tickets --http`` (one worker, a SQLite receipt file) over the
  tickets API's example server, started afresh for each variant in each round, and ``--agents``
  concurrent MCP clients making ``--calls`` calls each of ``get_ticket`` (`serve_load.cell`): the
  server process's CPU seconds over those calls (from ``/proc``, start-up not counted).

Within a round every variant runs each step, in an order that rotates from round to round, so a
drift of the shared machine's load hits every variant alike. Reported: the median CPU seconds (user
+ system of the process and its children) of each step and variant, the range in brackets, and the
difference from the first variant. The variants' built files must be equal byte for byte.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from incremental import DEFAULT_SPEC, _cpu, _describe_first_tool, _tree
from serve_load import TICKETS_TOKEN, cell, free_port, stop, wait_http

REPO = Path(__file__).resolve().parents[1]


class Variant:
    """One copy of toolgen's code and the environment it runs with."""

    def __init__(self, text: str) -> None:
        name, _, rest = text.partition("=")
        folder, *settings = rest.split(",")
        self.name = name
        self.generator = Path(folder).resolve()
        self.env = dict(setting.split("=", 1) for setting in settings)

    def environment(self, cache: Path) -> dict[str, str]:
        env = {
            **os.environ,
            "TOOLGEN_CACHE": "1",
            "TOOLGEN_CACHE_DIR": str(cache),
            "PYTHONPATH": str(self.generator),
        }
        env.pop("TOOLGEN_WORKERS", None)
        return {**env, **self.env}


def _run(args: list[str], env: dict[str, str], cwd: Path, expect: int = 0) -> float:
    """CPU seconds of one `toolgen` run in a fresh process (its children included)."""
    before = _cpu()
    proc = subprocess.run(
        [sys.executable, "-m", "toolgen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    if proc.returncode != expect:
        raise SystemExit(f"toolgen {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return round(_cpu() - before, 3)


def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system) `pid` has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def serve_cpu(variant: Variant, folder: Path, base_url: str, agents: int, calls: int) -> float:
    """The server's CPU seconds over `agents` × `calls` calls of ``get_ticket`` (`serve_load.cell`)."""
    import anyio

    env = {**variant.environment(folder / "cache"), "TICKETS_TOKEN": TICKETS_TOKEN}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolgen",
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
            str(folder / f"receipts-{variant.name}.sqlite3"),
        ],
        cwd=folder,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        url = next(
            (
                line.split("serving MCP on ", 1)[1].split()[0]
                for line in proc.stderr
                if "serving MCP on " in line
            ),
            None,
        )
        if url is None:
            raise SystemExit("toolgen serve did not start")
        anyio.run(cell, url, "get_ticket", 1, 1)  # every import and first-call cost paid before counting
        before = _process_cpu(proc.pid)
        result = anyio.run(cell, url, "get_ticket", agents, calls)
        seconds = _process_cpu(proc.pid) - before
        if result["errors"]:
            raise SystemExit(f"{variant.name}: {result['errors']} calls failed: {result['first_error']}")
        return round(seconds, 3)
    finally:
        stop(proc)


def measure(
    variants: list[Variant], steps: list[str], reps: int, spec: Path, agents: int = 32, calls: int = 50
) -> dict[str, dict[str, list[float]]]:
    """{step: {variant: CPU seconds of each run}}."""
    runs: dict[str, dict[str, list[float]]] = {}

    def record(step: str, variant: Variant, seconds: float) -> None:
        runs.setdefault(step, {}).setdefault(variant.name, []).append(seconds)
        print(f"{step:45} {variant.name:12} {seconds:7.3f}", file=sys.stderr, flush=True)

    for variant in variants:
        compileall.compile_dir(variant.generator / "toolgen", quiet=1)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if "draft" in steps:
            seed = tmp / "seed"
            seed.mkdir()
            shutil.copy(spec, seed / spec.name)
            _run(["init", spec.name, "--name", "api"], variants[0].environment(tmp / "seed-cache"), seed)
            for variant in variants:
                shutil.copytree(seed, tmp / variant.name)
                env = variant.environment(tmp / f"{variant.name}-cache")
                seconds = _run(["build", "-q"], env, tmp / variant.name)
                record("draft: cold, empty cache (one run)", variant, seconds)
        api = None
        if "serve" in steps:
            api_port = free_port()
            api = subprocess.Popen(
                [sys.executable, "-m", "toolgen.testing.tickets_server", "--port", str(api_port)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=variants[0].environment(tmp / "api-cache"),
            )
            wait_http(api_port)
        try:
            _rounds(variants, steps, reps, tmp, record, api_port if api is not None else 0, agents, calls)
        finally:
            if api is not None:
                stop(api)  # type: ignore[arg-type]
        if "draft" in steps:
            first = _tree(tmp / variants[0].name / "generated" / "api")
            for variant in variants[1:]:
                if _tree(tmp / variant.name / "generated" / "api") != first:
                    raise SystemExit(f"{variant.name} built other files than {variants[0].name}")
    return runs


def _rounds(
    variants: list[Variant],
    steps: list[str],
    reps: int,
    tmp: Path,
    record: Callable[[str, Variant, float], None],
    api_port: int,
    agents: int,
    calls: int,
) -> None:
    """`reps` rounds of every step for every variant, the variants' order rotating."""
    for rep in range(reps):
        order = variants[rep % len(variants) :] + variants[: rep % len(variants)]
        for variant in order:
            if "draft" in steps:
                env, cwd = variant.environment(tmp / f"{variant.name}-cache"), tmp / variant.name
                record("draft: --check, nothing changed", variant, _run(["build", "-q", "--check"], env, cwd))
                _describe_first_tool(cwd / "intent_maps" / "api.yaml", f"Use this tool first (edited {rep}).")
                record("draft: rebuild, one description", variant, _run(["build", "-q"], env, cwd))
            if "project" in steps:
                env = variant.environment(tmp / f"{variant.name}-cache")
                record(
                    "project: build --no-cache --check",
                    variant,
                    _run(["build", "-q", "--no-cache", "--check"], env, REPO),
                )
                record("project: lint --strict", variant, _run(["lint", "--strict"], env, REPO))
            if "serve" in steps:
                record(
                    f"serve: {agents} agents x {calls} calls (server CPU s)",
                    variant,
                    serve_cpu(variant, tmp, f"http://127.0.0.1:{api_port}/v1", agents, calls),
                )


def table(runs: dict[str, dict[str, list[float]]], variants: list[Variant]) -> str:
    """A Markdown table: step, then per variant the median CPU seconds (range) and the difference."""
    head = "| step | " + " | ".join(v.name for v in variants) + " |"
    lines = [head, "|---|" + "---:|" * len(variants)]
    for step, by_variant in runs.items():
        base = statistics.median(by_variant[variants[0].name])
        cells = []
        for variant in variants:
            values = by_variant[variant.name]
            median = statistics.median(values)
            cell = f"{median:.2f}"
            if len(values) > 1:
                cell += f" ({min(values):.2f}–{max(values):.2f})"
            if variant is not variants[0]:
                cell += f", {median - base:+.2f}"
            cells.append(cell)
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", action="append", required=True, help="NAME=GENERATOR_DIR[,VAR=VALUE...]")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    parser.add_argument("--steps", default="draft,project")
    parser.add_argument("--agents", type=int, default=32)
    parser.add_argument("--calls", type=int, default=50, help="calls per agent (serve)")
    parser.add_argument("--json", type=Path, help="also write every run's figures here")
    args = parser.parse_args()
    variants = [Variant(text) for text in args.variant]
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = os.getloadavg()[0]
    runs = measure(variants, args.steps.split(","), args.reps, args.spec, args.agents, args.calls)
    print(
        f"{started}, load {load:.1f} at the start and {os.getloadavg()[0]:.1f} at the end, {args.reps} rounds"
    )
    print(table(runs, variants))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
