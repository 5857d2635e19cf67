"""The default build's cost, kept in check by the size of what it writes (never by timing it).

The time and memory of a build follow the bytes it emits and the Python it asks black to format: a
package that held its data as Python literals cost minutes and gigabytes on Stripe. These tests bound
the generated Python (lines per tool) and the catalogs (bytes per operation), on the committed
packages and on an include-everything build of GitHub's spec (slow).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from tests.support.build import REAL, REPO

from toolgen.build import build_api

#: `__init__.py`: the module's own code and docstrings, plus one ARGUMENT_MODELS line per tool
INIT_FIXED_LINES = 60
#: `models.py`: GitHub's include-everything package has 7.0 lines per tool (12.6 before equal argument
#: schemas shared a class; the 24-tool slice in generated/ has 11.5): one class per distinct
#: argument schema, an alias line for each other tool, the shared nested objects and enums
MODELS_LINES_PER_TOOL = 12
#: bytes per operation of GitHub's include-everything catalogs (pretty-printed JSON); measured:
#: mcp 9,759, openai 3,170, anthropic 2,655, policy 2,750
CATALOG_BYTES_PER_OPERATION = {"mcp.json": 12_000, "openai.json": 4_000, "anthropic.json": 3_500,
                               "policy.json": 3_500}


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
@pytest.mark.skipif(not (REAL / "github-api.github.com.json").exists(), reason="../shared/specs/real is not available")
def test_include_everything_default_build_of_github_stays_small() -> None:
    spec = (REAL / "github-api.github.com.json").resolve()
    with tempfile.TemporaryDirectory() as tmp:
        intent = Path(tmp) / "github.yaml"
        intent.write_text(f"toolgen: 1\nspec: {json.dumps(str(spec))}\napi: {{name: github}}\n"
                          'include: [{match: "*"}]\n', encoding="utf-8")
        built = build_api(intent, Path(tmp) / "out")
    operations, tools = len(built.ir.operations), len(built.ir.tools)
    assert operations > 1000
    _check_python(built.files, tools)
    for name, limit in CATALOG_BYTES_PER_OPERATION.items():
        per_operation = len(built.files[name]) / operations
        assert per_operation <= limit, f"{name}: {per_operation:,.0f} bytes per operation (limit {limit:,})"
