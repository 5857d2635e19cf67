"""The sweep: every real spec of ../shared/specs/real builds with an include-everything intent map.

One test per spec (xdist spreads them). Each build must finish without a traceback, every catalog must
pass the dialect checker (no per-request tool cap), and every operation must be covered by a tool or
skipped with a diagnostic (the Swagger 2.0 Petstore too, read as OpenAPI 3.0).
The same function writes benchmarks/results/sweep.md (`python benchmarks/sweep.py`).
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
from tests.support.build import REAL, REPO

_spec = importlib.util.spec_from_file_location("toolgen_bench_sweep", REPO / "benchmarks" / "sweep.py")
assert _spec is not None and _spec.loader is not None
sweep = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = sweep
_spec.loader.exec_module(sweep)

SPECS = sorted(p.name for p in REAL.iterdir()) if REAL.is_dir() else []
SPECS = [s for s in SPECS if s.endswith((".json", ".yaml", ".yml"))]


@pytest.mark.slow
@pytest.mark.skipif(not SPECS, reason="../shared/specs/real is not available")
@pytest.mark.parametrize("name", SPECS)
def test_real_spec_builds(name: str) -> None:
    result = sweep.sweep_spec(REAL / name, tokens=False)
    problems = sweep.check(result)
    assert not problems, f"{name}: " + "; ".join(problems)
    if result.error is None:
        assert result.tools > 0
        assert result.covered + sum(result.skipped.values()) == result.operations
