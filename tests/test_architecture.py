"""The package layout is the architecture: `lint-imports` checks the import contracts of pyproject.toml
(`[tool.importlinter]`): the pipeline's layers (kernel <- compile <- dialects <- emit <- review <- build
<- cli), a runtime that depends on the kernel only, click imported by `toolgen.cli` alone, no import
cycles in any package, and private modules used only inside their package."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from tests.support.build import REPO


def _lint_imports() -> str | None:
    exe = Path(sys.executable).parent / "lint-imports"
    return str(exe) if exe.exists() else shutil.which("lint-imports")


def test_the_contracts_are_configured() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    contracts = {c["id"]: c for c in config["contracts"]}
    assert {"layers", "runtime", "click", "acyclic"} <= set(contracts)
    layers = contracts["layers"]["layers"]
    # the CLI on top; the kernel at the bottom: diagnostics and its peers, over the text escaping they render with
    # and the registry of the codes they are made with
    assert layers[0] == "cli" and layers[-2].startswith("diagnostics")
    assert set(layers[-1].split(" | ")) == {"codes", "shown_text"}
    assert contracts["click"]["forbidden_modules"] == ["click"]
    assert "toolgen.cli" not in contracts["click"]["source_modules"]


def test_ci_runs_lint_imports_after_lint() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    steps = [line.strip() for line in script]
    assert steps.index("lint-imports") == steps.index("toolgen lint --strict") + 1


def test_imports_keep_the_contracts() -> None:
    exe = _lint_imports()
    if exe is None:
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    proc = subprocess.run([exe, "--no-cache"], check=False, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
