"""The repository as a new user meets it: a fresh clone with nothing beside it (no ../shared) builds
every API of the project file, and `toolgen build --check` is clean there. The installed toolgen is
reused; the clone is of the committed HEAD."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _toolgen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLGEN_SPEC_")}
    return subprocess.run(
        [sys.executable, "-m", "toolgen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.mark.long  # a clone and two builds of every API: run first (tests/conftest.py)
def test_a_fresh_clone_builds_and_checks_clean_with_nothing_beside_it(tmp_path: Path) -> None:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout")
    clone = tmp_path / "alone" / "toolgen"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(clone)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert not (clone.parent / "shared").exists()
    check = _toolgen("build", "--check", cwd=clone)
    assert check.returncode == 0, check.stdout + check.stderr
    build = _toolgen("build", cwd=clone)
    assert build.returncode == 0, build.stdout + build.stderr
    assert "built 3 APIs" in build.stdout + build.stderr
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout
    assert status == "", f"a build of a fresh clone changed committed files:\n{status}"
