"""The CI files: `.pre-commit-hooks.yaml` entry points run (as subprocesses, in a copy of the widgets
fixture project) and fail when they should; `docs/examples/github-actions.yml` is valid YAML whose
`toolgen …` commands and options exist."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner
from tests.support.build import REPO
from tests.support.build import REVIEW_FIXTURE as FIXTURE

from toolgen.cli import main

HOOKS = REPO / ".pre-commit-hooks.yaml"
WORKFLOW = REPO / "docs" / "examples" / "github-actions.yml"


def _toolgen() -> str:
    exe = Path(sys.executable).parent / "toolgen"
    return str(exe) if exe.exists() else shutil.which("toolgen") or "toolgen"


def _run(entry: str, cwd: Path, *, in_process: bool = False) -> subprocess.CompletedProcess[str]:
    """A hook's `entry` run in `cwd` as pre-commit runs it (a process), or in-process by click (the
    same exit code, stdout and stderr, without a Python start-up)."""
    argv = shlex.split(entry)
    assert argv[0] == "toolgen"
    if not in_process:
        return subprocess.run(
            [_toolgen(), *argv[1:]],
            check=False,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "NO_COLOR": "1"},
        )
    here = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, argv[1:], env={"NO_COLOR": "1"})
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(argv, result.exit_code, result.stdout, result.stderr)


def test_pre_commit_hooks(tmp_path: Path) -> None:
    hooks = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"toolgen-lint", "toolgen-build-check"}
    for hook in hooks:
        assert hook["language"] == "python" and hook["pass_filenames"] is False
        assert {"name", "entry", "files"} <= set(hook)
        re.compile(hook["files"])
    assert re.search(by_id["toolgen-lint"]["files"], "intent_maps/github.yaml")
    assert re.search(by_id["toolgen-build-check"]["files"], "generated/tickets/policy.json")

    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    built = _run("toolgen build -q", project, in_process=True)
    assert built.returncode == 0, built.stderr
    for hook in hooks:  # each entry once as the process pre-commit starts
        ran = _run(hook["entry"], project)
        assert ran.returncode == 0, f"{hook['id']}: {ran.stdout}{ran.stderr}"
    # each hook fails on the problem it guards against
    clean = project / "intent_maps" / "clean.yaml"
    clean.write_text(
        clean.read_text(encoding="utf-8").replace(
            "description: Get one widget by id.", "description: Get one widget by its id."
        ),
        encoding="utf-8",
    )
    stale = _run(by_id["toolgen-build-check"]["entry"], project, in_process=True)
    assert stale.returncode == 1 and "stale" in stale.stderr
    clean.write_text(
        clean.read_text(encoding="utf-8").replace(
            "    approval: required\n    idempotency: "
            "{key: action_id, send_as: none}\n    description: "
            "Delete a widget",
            "    approval: never\n    idempotency: "
            "{key: action_id, send_as: none}\n    description: "
            "Delete a widget",
        ),
        encoding="utf-8",
    )
    failed = _run(by_id["toolgen-lint"]["entry"], project, in_process=True)
    assert failed.returncode == 1 and "destructive-without-approval" in failed.stdout


def _toolgen_commands(run: str) -> list[list[str]]:
    out = []
    for line in run.splitlines():
        line = line.split(">", 1)[0]
        if re.match(r"^\s*toolgen\b", line):
            out.append(shlex.split(line.replace("${{ github.base_ref }}", "main")))
    return out


def _check_command(argv: list[str]) -> None:
    ctx = click.Context(main)
    command = main.get_command(ctx, argv[1])
    assert command is not None, f"`toolgen {argv[1]}` is not a command"
    options = {
        opt for p in command.params if isinstance(p, click.Option) for opt in p.opts + p.secondary_opts
    }
    for arg in argv[2:]:
        if arg.startswith("-"):
            assert arg.split("=", 1)[0] in options, f"`toolgen {argv[1]}` has no option {arg}"
    command.make_context(argv[1], argv[2:], resilient_parsing=False)  # values and choices parse


def test_example_workflow() -> None:
    workflow: Any = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert workflow["name"] and workflow["jobs"]
    assert True in workflow or "on" in workflow  # PyYAML reads the `on` key as a boolean
    commands: list[list[str]] = []
    uses = []
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            uses.append(step.get("uses", ""))
            commands += _toolgen_commands(step.get("run", ""))
    assert any(u.startswith("actions/setup-python@") for u in uses)
    # toolgen is on no package index: a bare requirement `toolgen` would make pip fetch whatever PyPI
    # holds under that name, so the example installs from a pinned git URL
    package = workflow["env"]["TOOLGEN_PACKAGE"]
    assert package.startswith("toolgen @ git+https://") and "@" in package.rsplit("/", 1)[1], package
    assert [c[1] for c in commands] == ["lint", "build", "diff"]
    assert ["toolgen", "lint", "--strict", "--format", "github"] in commands
    assert ["toolgen", "build", "--check"] in commands
    for argv in commands:
        _check_command(argv)


def test_repository_ci_runs_lint_and_build_check() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "toolgen build --check" in script and "toolgen lint --strict" in script


@pytest.mark.parametrize("argv", [["toolgen", "lint", "--nope"], ["toolgen", "lnt"]])
def test_command_check_catches_typos(argv: list[str]) -> None:
    with pytest.raises((AssertionError, click.UsageError)):
        _check_command(argv)
