"""The cost of one toolgen build of one spec, measured in a fresh process.

    python benchmarks/buildcost.py SPEC [--emit LIST] [--write DIR] [--no-lint]

Builds SPEC (any OpenAPI file) with an include-everything intent map (``include: [{match: "*"}]``) in
this process and prints one JSON object: operations, tools, ``seconds`` (wall time of `build_api`,
after imports), ``cpu_seconds`` (this process's and the worker's that computes models.py beside it),
``peak_mb`` (peak resident memory, imports included: this process's plus the worker's, an upper
bound as the two overlap; each is also given),
``output_bytes`` (every file the build produced) and the timings of its stages. ``--emit`` picks the
artifacts (default: all of them, what `toolgen build` writes); ``--write DIR`` also writes the files
and, when the Python package is among them, times importing it in another fresh process
(``import_seconds``; ``data_seconds``: first use of ``POLICY`` and ``MCP_TOOLS``, which reads the
JSON files; ``import_peak_mb``); ``--no-lint`` skips the lint stage (the build then counts no
tokens unless REPORT.md is asked for).

`measure(spec, emit)` runs this script in a subprocess, so each measurement starts from an empty heap
and its peak memory is its own; `sweep.py --scaling` and `vs_fastmcp.py` use it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
JSON_ONLY = "openai,anthropic,mcp,policy"
DEFAULT = "openai,anthropic,mcp,policy,report,python"


def _peak_mb() -> float:
    """Peak resident memory of this process in MB: VmHWM (reset by exec, unlike ru_maxrss, which a
    child started by fork + exec inherits), else ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build_here(spec: Path, emit: str, write: Path | None, lint: bool = True) -> dict[str, Any]:
    from toolgen.builder.build import build_api

    with tempfile.TemporaryDirectory() as tmp:
        intent = Path(tmp) / "api.yaml"
        intent.write_text(
            f"toolgen: 1\nspec: {json.dumps(str(spec.resolve()))}\napi: {{name: api}}\n"
            'include: [{match: "*"}]\n',
            encoding="utf-8",
        )
        cpu, children, start = time.process_time(), _children_cpu(), time.perf_counter()
        built = build_api(intent, Path(tmp) / "out", emit=tuple(emit.split(",")), run_lint=lint)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        worker_cpu = _children_cpu() - children
    own_peak, worker_peak = (
        _peak_mb(),
        round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
    )
    result: dict[str, Any] = {
        "spec": spec.name,
        "emit": emit,
        "lint": lint,
        "operations": len(built.ir.operations),
        "tools": len(built.ir.tools),
        # the worker process that computes models.py beside the build (toolgen.builder.worker) counts too: CPU
        # is both processes'; peak memory the sum of both peaks (they overlap in time)
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu + worker_cpu, 3),
        "worker_cpu_seconds": round(worker_cpu, 3),
        "peak_mb": round(own_peak + worker_peak, 1),
        "process_peak_mb": own_peak,
        "worker_peak_mb": worker_peak,
        "output_bytes": sum(len(b) for b in built.files.values()),
        "files": {name: len(b) for name, b in sorted(built.files.items())},
        "python_lines": {
            name: b.count(b"\n") for name, b in sorted(built.files.items()) if name.endswith(".py")
        },
        "stages": {k: round(v, 3) for k, v in built.seconds.items()},
    }
    if write is not None:
        package = write / "api"
        package.mkdir(parents=True, exist_ok=True)
        for name, content in built.files.items():
            (package / name).write_bytes(content)
        if "__init__.py" in built.files:
            result.update(_time_import(write))
    return result


_IMPORT = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
start = time.perf_counter()
import api
seconds = time.perf_counter() - start
start = time.perf_counter()
api.POLICY, api.MCP_TOOLS
load = time.perf_counter() - start
hwm = [l for l in open("/proc/self/status").read().splitlines() if l.startswith("VmHWM:")]
print(json.dumps({"import_seconds": round(seconds, 3), "data_seconds": round(load, 3),
                  "import_tools": len(api.MCP_TOOLS),
                  "import_peak_mb": round(int(hwm[0].split()[1]) / 1024, 1) if hwm else None}))
"""


def _time_import(root: Path) -> dict[str, Any]:
    """`import api` (the generated package, not its models), then its data, in a fresh interpreter."""
    proc = subprocess.run(
        [sys.executable, "-c", _IMPORT, str(root)], capture_output=True, text=True, check=True, timeout=600
    )
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def measure(
    spec: Path, emit: str = DEFAULT, *, write: bool = False, lint: bool = True, timeout: float = 3600
) -> dict[str, Any]:
    """`build_here` in a fresh interpreter (peak memory is this build's alone)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO / "generator"), os.environ.get("PYTHONPATH", "")]),
    }
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, str(Path(__file__).resolve()), str(spec), "--emit", emit]
        if write:
            cmd += ["--write", tmp]
        if not lint:
            cmd.append("--no-lint")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"build of {spec.name} ({emit}) failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec", type=Path)
    parser.add_argument("--emit", default=DEFAULT)
    parser.add_argument("--write", type=Path, default=None)
    parser.add_argument(
        "--no-lint", action="store_true", help="skip the lint stage (`build_api(run_lint=False)`)"
    )
    args = parser.parse_args(argv)
    print(json.dumps(build_here(args.spec, args.emit, args.write, lint=not args.no_lint)))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "generator"))
    raise SystemExit(main())
