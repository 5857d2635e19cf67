"""The sweep: every real spec of ../shared/specs/real builds with an include-everything intent map.

One test per spec (xdist spreads them). Each build must finish without a traceback, every catalog must
pass the dialect checker (no per-request tool cap), and every operation must be covered by a tool or
skipped with a diagnostic (the Swagger 2.0 Petstore too, read as OpenAPI 3.0).
The same function writes benchmarks/results/sweep.md (`python benchmarks/sweep.py`).
"""

from __future__ import annotations

import pytest
from tests.support.benchmarks import benchmark_module
from tests.support.build import REAL

sweep = benchmark_module("sweep")

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
