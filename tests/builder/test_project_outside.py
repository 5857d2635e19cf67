"""toolgen.yaml's output paths (``apis[].out``, ``schema_out``) stay inside the folder that holds
it (`toolgen.builder.project.outputs_outside`): a path that resolves outside it (``..``, an absolute
path, a symbolic link inside the folder to a folder outside) is a located ``project-output-outside``
error naming the key and its line, and `toolgen build` (with or without ``--check``) writes nothing
anywhere; ``--allow-outside-project`` lets it through."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolgen.cli import main

SPEC = """openapi: 3.1.0
info: {title: t, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /a:
    get:
      operationId: getA
      responses: {"200": {description: ok}}
"""
MAP = """toolgen: 1
spec: ../spec.yaml
api: {name: t}
tools:
  get_a: {operation: getA, effect: read, permission: 't:read', description: Read A.}
"""


def project(tmp_path: Path, out: str, schema_out: str | None = None) -> Path:
    """A project of one API in `tmp_path/p/q` (so that `..` twice is still under `tmp_path`), with a
    link `inside -> p/q/real` and a link `outside -> tmp_path/elsewhere`."""
    root = tmp_path / "p" / "q"
    (root / "intent_maps").mkdir(parents=True)
    (root / "spec.yaml").write_text(SPEC, encoding="utf-8")
    (root / "intent_maps" / "t.yaml").write_text(MAP, encoding="utf-8")
    (root / "real").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(root / "real", root / "inside")
    os.symlink(tmp_path / "elsewhere", root / "outside")
    text = f"toolgen: 1\napis:\n  - name: t\n    intent_map: intent_maps/t.yaml\n    out: {out}\n"
    if schema_out is not None:
        text += f"schema_out: {schema_out}\n"
    (root / "toolgen.yaml").write_text(text, encoding="utf-8")
    return root


def tree(tmp_path: Path) -> list[str]:
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))


OUTSIDE = ["../escaped", "../../escaped/t", "generated/../../escaped", "outside/t", "outside", "ABSOLUTE/t"]


@pytest.mark.parametrize("check", [False, True], ids=["build", "check"])
@pytest.mark.parametrize("out", OUTSIDE)
def test_an_out_outside_the_project_is_refused_located_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str, check: bool
) -> None:
    out = out.replace("ABSOLUTE", str(tmp_path / "elsewhere"))
    monkeypatch.chdir(project(tmp_path, out))
    before = tree(tmp_path)
    result = CliRunner().invoke(main, ["build", "--no-cache", *(["--check"] if check else [])])
    assert result.exit_code == 2, result.output
    assert re.search(
        r"toolgen\.yaml:5:5 \(#/apis/0/out\): error\[project-output-outside\]: apis\[0\]\.out \(API 't'\)",
        result.output,
    ), result.output
    assert "--allow-outside-project" in result.output
    assert tree(tmp_path) == before


def test_schema_out_outside_the_project_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, "generated/t", "../schema.json"))
    before = tree(tmp_path)
    result = CliRunner().invoke(main, ["build"])
    assert result.exit_code == 2, result.output
    assert "toolgen.yaml:6:1 (#/schema_out): error[project-output-outside]: schema_out" in result.output
    assert tree(tmp_path) == before


@pytest.mark.parametrize(
    "out", ["generated/t", "./generated/../generated/t", "inside/t", "real/../generated/t"]
)
def test_an_out_inside_the_project_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    root = project(tmp_path, out)
    monkeypatch.chdir(root)
    result = CliRunner().invoke(main, ["build", "--no-cache", "-q"])
    assert result.exit_code == 0, result.output
    assert (root / out / "policy.json").is_file()
    assert not any((tmp_path / "elsewhere").iterdir())


def test_the_flag_lets_an_out_outside_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project(tmp_path, "outside/t", "../schema.json"))
    result = CliRunner().invoke(main, ["build", "--no-cache", "-q", "--allow-outside-project"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "elsewhere" / "t" / "policy.json").is_file()
    assert (tmp_path / "p" / "schema.json").is_file()
