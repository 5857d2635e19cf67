"""`tests/support/bytecode.py`: under PYTHONDONTWRITEBYTECODE the suite's sources are compiled once
into a prefix under .pytest_cache (never beside the sources), children read it, and an edited module
is never run from stale bytecode."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(code: str, cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _project(tmp_path: Path) -> Path:
    (tmp_path / "generator" / "pkg").mkdir(parents=True)
    (tmp_path / "generator" / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (tmp_path / "tests" / "support").mkdir(parents=True)
    (tmp_path / "tests" / "support" / "__init__.py").write_text("")
    return tmp_path


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
    env.update(extra)
    return env


PREPARE = textwrap.dedent(f"""
    import sys; sys.path.insert(0, {str(REPO)!r})
    from pathlib import Path
    from tests.support.bytecode import prepare
    import os, subprocess
    prefix = prepare(Path.cwd())
    print(prefix)
    child = subprocess.run([sys.executable, "-c",
        "import sys; sys.path.insert(0, 'generator'); import pkg, tomllib; "
        "print(pkg.__cached__, pkg.VALUE); print(tomllib.__cached__)"],
        capture_output=True, text=True, check=True)
    print(child.stdout.strip())
""")


def test_compiled_into_the_prefix_and_read_by_children(tmp_path: Path) -> None:
    project = _project(tmp_path)
    out = _run(PREPARE, project, _env(PYTHONDONTWRITEBYTECODE="1")).splitlines()
    prefix = project / ".pytest_cache" / "bytecode"
    assert out[0] == str(prefix)
    cached, value = out[1].rsplit(" ", 1)
    assert value == "1"
    assert cached.startswith(str(prefix)) and Path(cached).is_file()
    assert not list(project.rglob("generator/**/__pycache__")), "bytecode written beside the sources"
    # a standard-library module the child compiled is kept in the prefix for the next process
    stdlib = out[2]
    assert stdlib.startswith(str(prefix)) and Path(stdlib).is_file(), stdlib


def test_an_edited_module_is_not_run_stale(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _run(PREPARE, project, _env(PYTHONDONTWRITEBYTECODE="1"))
    module = project / "generator" / "pkg" / "__init__.py"
    module.write_text("VALUE = 22\n")  # another size: Python's check sees the change
    out = _run(PREPARE, project, _env(PYTHONDONTWRITEBYTECODE="1")).splitlines()
    assert out[1].endswith(" 22")


def test_nothing_done_when_bytecode_may_be_written(tmp_path: Path) -> None:
    project = _project(tmp_path)
    out = _run(PREPARE, project, _env()).splitlines()
    assert out[0] == "None"
    assert not (project / ".pytest_cache").exists()
