"""Determinism at scale: include-everything builds of real specs with recursive schemas, in two
processes with different hash seeds, give byte-identical trees (the tickets build has its own test in
test_build.py). Stripe: 452 operations, a 65-schema recursion group; JSON outputs and REPORT.md; and
again with toolsets from paths and every tool deferred (the Responses catalog, search.json).
Vercel: self-referencing schemas, every artifact including the Python package. The first process
computes models.py inline (TOOLGEN_WORKERS=0), the second in its forked worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.build import REAL

EVERYTHING = '{match: "*"}'
CASES = [
    ("stripe.json", "openai,anthropic,mcp,policy,report", EVERYTHING),
    ("vercel.json", "openai,anthropic,mcp,policy,report,python", EVERYTHING),
    # toolsets from paths, every tool deferred: openai.responses.json, search.json, the up-front views
    (
        "stripe.json",
        "openai,anthropic,mcp,gemini,policy,report",
        '{match: "*", toolset: from_path, loading: deferred}',
    ),
]


def _tree(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("spec,emit,include", CASES)
def test_include_everything_build_is_byte_identical_across_hash_seeds(
    tmp_path: Path, spec: str, emit: str, include: str
) -> None:
    if not (REAL / spec).exists():
        pytest.skip("../shared/specs/real is not available")
    intent = tmp_path / "api.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(REAL / spec))}\napi: {{name: api}}\ninclude: [{include}]\n",
        encoding="utf-8",
    )
    trees, stderr = [], []
    for seed, workers in (("0", "0"), ("31337", "")):  # models.py computed inline, then in the worker
        out = tmp_path / f"out{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "TOOLGEN_WORKERS": workers}
        proc = subprocess.run(
            [sys.executable, "-m", "toolgen", "build", intent.name, "--out", out.name, "--emit", emit],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        trees.append(_tree(out))
        stderr.append(proc.stderr)
    assert sorted(trees[0]) == sorted(trees[1])
    different = [name for name in trees[0] if trees[0][name] != trees[1][name]]
    assert not different, f"{spec}: files differ between hash seeds: {different}"
    text = b"".join(trees[0].values()).decode("utf-8")
    assert str(tmp_path) not in text  # no absolute paths of this machine
    assert "info[schema-cycle]" in stderr[0]  # the recursion was really exercised
