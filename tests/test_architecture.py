"""The package layout is the architecture: `lint-imports` checks the import contracts of pyproject.toml
(`[tool.importlinter]`): the pipeline's layers (kernel <- search <- policy <- compile <- dialects <- emit
<- review <- scaffold <- builder <- evals <- cli), a runtime that depends on the kernel only and whose
rooms are layered (stores <- call <- pipeline <- transport <- serving), click imported by `toolgen.cli`
alone, no import cycles in any package, and private modules used only inside their package. The rooms
keep their names apart: at most 8 loose modules at the top of the package, no two modules and no two
test files of one file name (CONTRIBUTING.md, "Where each concern lives")."""

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
    assert {"layers", "runtime", "runtime-rooms", "policy", "search", "click", "acyclic"} <= set(contracts)
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


def test_ci_checks_ruffs_rules_and_format_over_the_same_trees() -> None:
    """CI runs ruff's rules and its format check over generator/, tests/ and benchmarks/ (a tree left out
    of one of them would drift unnoticed)."""
    commands = [
        line.split("#")[0].split() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    ]
    assert ["ruff", "check", "generator", "tests", "benchmarks"] in commands
    assert ["ruff", "format", "--check", "generator", "tests", "benchmarks"] in commands


def test_imports_keep_the_contracts() -> None:
    exe = _lint_imports()
    if exe is None:
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    proc = subprocess.run(
        [exe, "--no-cache"], check=False, cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_at_most_eight_loose_modules_at_the_top_of_the_package() -> None:
    package = REPO / "generator" / "toolgen"
    loose = sorted(p.name for p in package.glob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert len(loose) <= 8, f"loose modules at the top of toolgen/ (put new ones in a room): {loose}"


def _shared_file_names(paths: list[Path], root: Path) -> dict[str, list[str]]:
    by_name: dict[str, list[str]] = {}
    for path in paths:
        by_name.setdefault(path.name, []).append(path.relative_to(root).as_posix())
    return {name: sorted(where) for name, where in sorted(by_name.items()) if len(where) > 1}


def test_no_two_modules_share_a_file_name() -> None:
    package = REPO / "generator" / "toolgen"
    modules = [
        p
        for p in package.rglob("*.py")
        if p.name not in ("__init__.py", "__main__.py") and "__pycache__" not in p.parts
    ]
    assert _shared_file_names(modules, package) == {}


def test_no_two_test_files_share_a_file_name() -> None:
    # pytest imports a test file outside a package by its file name (the rootdir's `prepend` mode)
    tests = REPO / "tests"
    files = [p for p in tests.rglob("test_*.py") if not (p.parent / "__init__.py").exists()]
    assert _shared_file_names(files, tests) == {}


def test_the_name_checks_find_a_shared_name(tmp_path: Path) -> None:
    for where in ("a/build.py", "b/build.py", "c/cache.py"):
        (tmp_path / where).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / where).write_text("", encoding="utf-8")
    found = _shared_file_names(sorted(tmp_path.rglob("*.py")), tmp_path)
    assert found == {"build.py": ["a/build.py", "b/build.py"]}
