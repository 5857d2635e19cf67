"""The size and complexity gate (`.ci/guardrails.py`): the committed tree keeps to its baseline, and a
planted violation, a grown one or a stale baseline entry fails the gate; `--update` only shrinks."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support.build import REPO

SCRIPT = REPO / ".ci" / "guardrails.py"
BASELINE = Path(".ci") / "guardrails-baseline.txt"

# a function with 26 branches: over the limits of C901 (25) and PLR0912 (20)
TANGLED = (
    "def tangled(x: int) -> int:\n"
    + "".join(f"    if x == {n}:\n        return {n}\n" for n in range(26))
    + "    return -1\n"
)


def _gate(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--root", str(root), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scanned folders and the baseline, copied; each test restores what it changes."""
    root = tmp_path_factory.mktemp("tree")
    ignore = shutil.ignore_patterns("__pycache__", ".*", "*.json", "*.yaml", "*.md", "*.txt")
    for top in ("generator", "tests", "benchmarks"):
        shutil.copytree(REPO / top, root / top, ignore=ignore)
    (root / ".ci").mkdir()
    shutil.copy(REPO / BASELINE, root / BASELINE)
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    return root


def test_the_committed_tree_keeps_to_its_baseline() -> None:
    done = _gate(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "none new" in done.stdout


def test_a_new_complex_function_fails(copy: Path) -> None:
    planted = copy / "generator" / "toolgen" / "planted.py"
    planted.write_text(TANGLED, encoding="utf-8")
    try:
        done = _gate(copy)
        assert done.returncode == 1
        assert "new: generator/toolgen/planted.py::tangled  C901  27" in done.stdout
        assert "new: generator/toolgen/planted.py::tangled  PLR0912  26" in done.stdout
        before = (copy / BASELINE).read_text(encoding="utf-8")
        refused = _gate(copy, "--update")
        assert refused.returncode == 1 and "nothing written" in refused.stdout
        assert (copy / BASELINE).read_text(encoding="utf-8") == before
    finally:
        planted.unlink()
    assert _gate(copy).returncode == 0


def test_a_noqa_comment_does_not_pass_the_gate(copy: Path) -> None:
    planted = copy / "tests" / "planted.py"
    planted.write_text(TANGLED.replace("-> int:\n", "-> int:  # noqa: C901, PLR0912\n", 1), encoding="utf-8")
    try:
        assert _gate(copy).returncode == 1
    finally:
        planted.unlink()


def test_a_module_over_the_line_limit_fails(copy: Path) -> None:
    planted = copy / "benchmarks" / "planted.py"
    planted.write_text("X = 1\n" * 801, encoding="utf-8")
    try:
        done = _gate(copy)
        assert done.returncode == 1
        assert "new: benchmarks/planted.py  module-lines  801" in done.stdout
    finally:
        planted.unlink()


def test_a_baselined_module_may_not_grow_and_must_be_lowered_when_it_shrinks(copy: Path) -> None:
    # a module over the limit, listed at its size (planted: the committed baseline may list none)
    planted = copy / "benchmarks" / "planted.py"
    text = "X = 1\n\n" * 401  # 802 lines
    original = (copy / BASELINE).read_text(encoding="utf-8")
    try:
        planted.write_text(text, encoding="utf-8")
        (copy / BASELINE).write_text(
            original + "benchmarks/planted.py  module-lines  802\n", encoding="utf-8"
        )
        assert _gate(copy).returncode == 0
        planted.write_text(text + "\n", encoding="utf-8")
        grew = _gate(copy)
        assert grew.returncode == 1 and "grew: " in grew.stdout
        lines = text.splitlines(keepends=True)
        lines.remove("\n")  # one blank line fewer
        planted.write_text("".join(lines), encoding="utf-8")
        shrank = _gate(copy)
        assert shrank.returncode == 1 and "shrank: " in shrank.stdout
    finally:
        planted.unlink()
        (copy / BASELINE).write_text(original, encoding="utf-8")


def test_a_stale_entry_fails_until_update_drops_it(copy: Path) -> None:
    original = (copy / BASELINE).read_text(encoding="utf-8")
    try:
        (copy / BASELINE).write_text(original + "generator/toolgen/gone.py::f  C901  30\n", encoding="utf-8")
        stale = _gate(copy)
        assert stale.returncode == 1 and "gone: generator/toolgen/gone.py::f  C901  30" in stale.stdout
        updated = _gate(copy, "--update")
        assert updated.returncode == 0, updated.stdout
        assert (copy / BASELINE).read_text(encoding="utf-8") == original
        assert _gate(copy).returncode == 0
    finally:
        (copy / BASELINE).write_text(original, encoding="utf-8")


def test_ruffs_per_file_ignores_are_the_baselines_files(copy: Path) -> None:
    """Ruff leaves exactly the files with a baselined function to the gate: an ignore missing (ruff
    would fail on a function the gate accepts) or left over (ruff would pass a new function there
    that only the gate holds) fails, naming the line to write."""
    original = (copy / "pyproject.toml").read_text(encoding="utf-8")
    # an entry of the committed ignores: a file of the baseline's functions and its rules
    found = re.search(r'^("[^"]+" = \[(?:"(?:C901|PLR0912|PLR0915)"(?:, )?)+\])\n', original, re.MULTILINE)
    assert found is not None
    entry = found.group(0)
    try:
        (copy / "pyproject.toml").write_text(original.replace(entry, ""), encoding="utf-8")
        missing = _gate(copy)
        assert missing.returncode == 1
        assert f"must read {found.group(1)}" in missing.stdout
        extra = '"generator/toolgen/naming.py" = ["PLR0915"]\n'
        (copy / "pyproject.toml").write_text(original.replace(entry, entry + extra), encoding="utf-8")
        left = _gate(copy)
        assert left.returncode == 1 and '"generator/toolgen/naming.py" = [] without PLR0915' in left.stdout
    finally:
        (copy / "pyproject.toml").write_text(original, encoding="utf-8")
    assert _gate(copy).returncode == 0


def test_ruffs_limits_are_the_gates(copy: Path) -> None:
    original = (copy / "pyproject.toml").read_text(encoding="utf-8")
    assert "max-branches = 20\n" in original
    try:
        (copy / "pyproject.toml").write_text(
            original.replace("max-branches = 20\n", "max-branches = 25\n"), encoding="utf-8"
        )
        done = _gate(copy)
        assert done.returncode == 1 and "sets PLR0912's limit to 25, the gate's is 20" in done.stdout
    finally:
        (copy / "pyproject.toml").write_text(original, encoding="utf-8")


def test_ci_runs_the_gate() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    steps = [line.split("#")[0].strip() for line in script]
    assert {"python .ci/guardrails.py", "mypy", "ruff check generator tests benchmarks"} <= set(steps)
    assert steps.index("python .ci/guardrails.py") < steps.index('python -m pytest -n 4 -q -m "not slow"')
