"""The benchmark scripts still run against what toolgen generates now (a benchmark that fails at
HEAD measures nothing): each is run end to end here with tiny sizes; no figure is asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.build import REPO

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "generator"), str(REPO)])}


def _run(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=REPO, env=ENV, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout


def test_runtime_overhead_runs_reads_and_approved_writes() -> None:
    out = _run(
        "benchmarks/runtime_overhead.py", "--reads", "10", "--writes", "5", "--rounds", "1", "--no-redis"
    )
    assert "reads : bare" in out and "writes: bare" in out


def test_buildcost_measures_a_default_build_with_its_worker(tmp_path: Path) -> None:
    spec = REPO / "specs" / "stripe.slice.json"
    out = json.loads(_run("benchmarks/buildcost.py", str(spec)).strip().splitlines()[-1])
    assert out["emit"].split(",") == ["openai", "anthropic", "mcp", "policy", "report", "python"]
    assert out["files"]["models.py"] > 0 and out["peak_mb"] >= out["process_peak_mb"] > 0
    assert set(out["stages"]) >= {"load", "lower", "catalogs", "emit"}


def test_replicate_makes_a_spec_n_times_as_large(tmp_path: Path) -> None:
    target = tmp_path / "x3.json"
    _run("benchmarks/replicate.py", str(REPO / "specs" / "stripe.slice.json"), "3", str(target))
    original = json.loads((REPO / "specs" / "stripe.slice.json").read_text(encoding="utf-8"))
    tripled = json.loads(target.read_text(encoding="utf-8"))
    assert len(tripled["paths"]) == 3 * len(original["paths"])
    assert tripled["components"] == original["components"]
    ids = [
        op["operationId"]
        for item in tripled["paths"].values()
        for op in item.values()
        if isinstance(op, dict) and "operationId" in op
    ]
    assert len(ids) == len(set(ids))
