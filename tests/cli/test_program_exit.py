"""`toolgen` as a program (`toolgen.cli.run`): after `toolgen build`, which leaves nothing to clean up
(`toolgen.cli.exits.may_end_at_once`), the process ends without the interpreter's teardown once
stdout and stderr are flushed, with the command's exit code and everything it printed; other
commands exit as usual."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.builder.test_cache import _fresh_state, _write_inputs
from tests.support.build import REPO

#: runs `toolgen.cli.run` with an exit hook that says whether the interpreter's teardown ran
_PROGRAM = """
import atexit, sys
atexit.register(lambda: print("teardown ran", file=sys.stderr))
from toolgen.cli import run
sys.argv = ["toolgen", *sys.argv[1:]]
run()
"""


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLGEN_CACHE": "0", "PYTHONPATH": str(REPO / "generator")}
    return subprocess.run([sys.executable, "-c", _PROGRAM, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def test_a_build_ends_without_teardown_with_its_code_and_output(tmp_path: Path) -> None:
    intent = _write_inputs(tmp_path, _fresh_state())
    built = _run(["build", intent.name, "--out", "out"], tmp_path)
    assert built.returncode == 0, built.stderr
    assert "toolgen: built 1 API" in built.stderr and "teardown ran" not in built.stderr
    assert json.loads((tmp_path / "out" / "policy.json").read_text(encoding="utf-8"))["api"] == "items"
    (tmp_path / "out" / "POLICY.md").write_text("edited\n", encoding="utf-8")
    stale = _run(["build", intent.name, "--out", "out", "--check"], tmp_path)
    assert stale.returncode == 1
    assert stale.stderr.rstrip().endswith("run `toolgen build` and commit the result.")  # flushed to the end
    assert "POLICY.md" in stale.stderr and "teardown ran" not in stale.stderr
    bad = _run(["build", "missing.yaml", "--out", "out"], tmp_path)
    assert bad.returncode == 2 and "nothing was written" in bad.stderr and "teardown ran" not in bad.stderr


def test_other_commands_exit_as_usual(tmp_path: Path) -> None:
    shown = _run(["schema"], tmp_path)
    assert shown.returncode == 0 and "teardown ran" in shown.stderr
    assert json.loads(shown.stdout)
