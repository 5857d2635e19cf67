"""The default build's cost, kept in check by the size of what it writes (never by timing it).

The time and memory of a build follow the bytes it emits and the Python it asks black to format: a
package that held its data as Python literals cost minutes and gigabytes on Stripe. These tests bound
the generated Python (lines per tool) and the catalogs (bytes per operation), on the committed
packages and on an include-everything build of GitHub's spec (slow).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest
from tests.support.build import REAL, REPO

from toolgen.builder.build import build_api

#: `__init__.py`: the module's own code and docstrings (64 lines with `catalog()`), plus one ARGUMENT_MODELS line per tool
INIT_FIXED_LINES = 70
#: `models.py`: GitHub's include-everything package has 7.0 lines per tool (12.6 before equal argument
#: schemas shared a class; the 24-tool slice in generated/ has 11.5): one class per distinct
#: argument schema, an alias line for each other tool, the shared nested objects and enums
MODELS_LINES_PER_TOOL = 12
#: bytes per operation of GitHub's include-everything catalogs (pretty-printed JSON); measured:
#: mcp 9,759, openai 3,170, anthropic 2,655, policy 3,975 (2,750 before policy format 2 wrote every
#: member of every row, `null` where there is nothing to say, so that the runtime can refuse a missing one)
CATALOG_BYTES_PER_OPERATION = {
    "mcp.json": 12_000,
    "openai.json": 4_000,
    "anthropic.json": 3_500,
    "policy.json": 4_500,
}


def _check_python(files: dict[str, bytes], tools: int) -> None:
    init = files["__init__.py"].decode("utf-8")
    assert init.count("\n") <= INIT_FIXED_LINES + tools, "__init__.py grew: does it hold data again?"
    assert "json.loads" in init and "policy.json" in init and "mcp.json" in init
    models = files["models.py"].decode("utf-8")
    assert models.count("\n") <= 20 + MODELS_LINES_PER_TOOL * tools


@pytest.mark.parametrize("api", ["tickets", "github", "stripe"])
def test_committed_packages_hold_no_data_literals(api: str) -> None:
    folder = REPO / "generated" / api
    tools = len(json.loads((folder / "mcp.json").read_text(encoding="utf-8")))
    _check_python({name: (folder / name).read_bytes() for name in ("__init__.py", "models.py")}, tools)


@pytest.mark.slow
@pytest.mark.skipif(
    not (REAL / "github-api.github.com.json").exists(), reason="../shared/specs/real is not available"
)
def test_include_everything_default_build_of_github_stays_small() -> None:
    spec = (REAL / "github-api.github.com.json").resolve()
    with tempfile.TemporaryDirectory() as tmp:
        intent = Path(tmp) / "github.yaml"
        intent.write_text(
            f'toolgen: 1\nspec: {json.dumps(str(spec))}\napi: {{name: github}}\ninclude: [{{match: "*"}}]\n',
            encoding="utf-8",
        )
        built = build_api(intent, Path(tmp) / "out")
    operations, tools = len(built.ir.operations), len(built.ir.tools)
    assert operations > 1000
    _check_python(built.files, tools)
    for name, limit in CATALOG_BYTES_PER_OPERATION.items():
        per_operation = len(built.files[name]) / operations
        assert per_operation <= limit, f"{name}: {per_operation:,.0f} bytes per operation (limit {limit:,})"


def _replicated_build(tmp: Path, n: int) -> dict[str, bytes]:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from replicate import replicate
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    spec = tmp / f"x{n}.json"
    spec.write_text(json.dumps(replicate(json.loads((REPO / "specs" / "stripe.slice.json").read_text()), n)))
    intent = tmp / f"x{n}.yaml"
    intent.write_text(
        f'toolgen: 1\nspec: {json.dumps(str(spec))}\napi: {{name: api}}\ninclude: [{{match: "*"}}]\n',
        encoding="utf-8",
    )
    return build_api(intent, tmp / "out", run_lint=False).files


def test_output_grows_linearly_with_operations_and_models_py_barely(tmp_path: Path) -> None:
    """The same operations four times over (paths repeated, components shared): every catalog grows
    by at most four times (no per-tool copy of something that grows with the API), and models.py
    only by one alias line per new tool (equal argument schemas share a class)."""
    one, four = _replicated_build(tmp_path, 1), _replicated_build(tmp_path, 4)
    for name in ("openai.json", "anthropic.json", "mcp.json", "policy.json", "search.json"):
        assert len(four[name]) <= 4.05 * len(one[name]), name
    tools = len(json.loads(one["mcp.json"]))
    assert four["models.py"].count(b"\n") <= one["models.py"].count(b"\n") + 3 * tools + 2
