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

import pytest
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


#: the plain path: click's own exit, with the interpreter's teardown
_PLAIN = """
import sys
from toolgen.cli import main
main(sys.argv[1:], prog_name="toolgen")
"""


def _run(args: list[str], cwd: Path, program: str = _PROGRAM) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLGEN_CACHE": "0", "PYTHONPATH": str(REPO / "generator")}
    return subprocess.run(
        [sys.executable, "-c", program, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


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


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_ending_at_once_is_the_plain_exit_less_the_teardown(tmp_path: Path) -> None:
    """The equivalence the early end is kept under (benchmarks/results/speed_tricks.md): a build, a
    stale --check and a refused build give the exit code, stdout, stderr and files that click's own
    exit gives, in two copies of the same inputs."""
    runs: dict[str, list[tuple[int, str, str]]] = {}
    trees: dict[str, dict[str, bytes]] = {}
    for side, program in (("at once", _PROGRAM), ("plain", _PLAIN)):
        folder = tmp_path / side.replace(" ", "_")
        folder.mkdir()
        intent = _write_inputs(folder, _fresh_state())
        seen = []
        build = ["build", intent.name, "--out", "out"]
        for args in (build, [*build, "--check"], ["build", "missing.yaml", "--out", "out"]):
            done = _run(args, folder, program)
            seen.append((done.returncode, done.stdout, done.stderr.replace("teardown ran\n", "")))
            if args is build:  # the --check that follows is stale
                (folder / "out" / "POLICY.md").write_text("edited\n", encoding="utf-8")
        runs[side], trees[side] = seen, _files(folder / "out")
    assert [code for code, _, _ in runs["plain"]] == [0, 1, 2]
    assert runs["at once"] == runs["plain"]
    assert trees["at once"] == trees["plain"]


#: the build as a program, then whether it kept its builds (`toolgen.cli.exits.keep_until_exit`)
_KEEPING = """
import os, sys
from toolgen.cli import exits, run
sys.argv = ["toolgen", *sys.argv[1:]]
real_exit = os._exit
def report(code):
    kept = [type(b).__name__ for objects in exits._KEPT for group in objects for b in group]
    print("kept", ",".join(kept), file=sys.stderr)
    sys.stderr.flush()
    real_exit(code)
os._exit = report
run()
"""


def test_a_build_as_a_program_keeps_its_builds_to_the_end_and_in_process_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a program, the build's outputs and builds are kept until the process ends (never freed: it
    ends at once); called in-process (click's runner), nothing is kept, so nothing outlives the call."""
    from tests.support.build import run

    from toolgen.cli import exits

    intent = _write_inputs(tmp_path, _fresh_state())
    built = _run(["build", intent.name, "--out", "out"], tmp_path, _KEEPING)
    assert built.returncode == 0, built.stderr
    assert "kept Output,ApiBuild" in built.stderr
    monkeypatch.chdir(tmp_path)
    assert run("build", intent.name, "--out", "again").exit_code == 0
    assert exits._KEPT == []
