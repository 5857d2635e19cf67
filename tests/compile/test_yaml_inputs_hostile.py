"""toolgen's own YAML files (intent maps, toolgen.yaml) nested past what the YAML reader follows:
a located ``yaml-too-deep`` error and nothing written, never the reader's RecursionError as a message."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.build import REPO, run

from toolgen.builder.project import load_project
from toolgen.compile.load import MAX_DEPTH
from toolgen.diagnostics import DiagnosticError

SPEC = (REPO / "specs" / "tickets.yaml").as_posix()


def _header() -> str:
    return f'toolgen: 1\nspec: "{SPEC}"\napi: {{name: t}}\ninclude: [{{match: "*"}}]\n'


@pytest.mark.parametrize("levels", [MAX_DEPTH + 100, 3000])
@pytest.mark.parametrize("command", ["build", "lint"])
def test_an_intent_map_nested_too_deep_is_a_located_error(tmp_path: Path, levels: int, command: str) -> None:
    intent = tmp_path / "x.yaml"
    intent.write_text(_header() + "x-deep: " + "[" * levels + "]" * levels + "\n", "utf-8")
    args = (
        ["build", str(intent), "--out", str(tmp_path / "out"), "-q"]
        if command == "build"
        else ["lint", str(intent)]
    )
    result = run(*args)
    assert result.exit_code != 0 and "Traceback" not in result.output
    # the first bracket past MAX_DEPTH: line 5, after `x-deep: ` (8 characters) and MAX_DEPTH brackets
    assert f"x.yaml:5:{8 + MAX_DEPTH + 1}: error[yaml-too-deep]" in result.output, result.output
    assert "recursion" not in result.output and not (tmp_path / "out").exists()


def test_an_intent_map_indented_too_deep_is_refused_at_the_file(tmp_path: Path) -> None:
    lines = [" " * i + "k:" for i in range(1, 600)]
    intent = tmp_path / "x.yaml"
    intent.write_text(_header() + "x-deep:\n" + "\n".join(lines) + "\n" + " " * 600 + "v\n", "utf-8")
    result = run("lint", str(intent))
    assert result.exit_code != 0 and "x.yaml: error[yaml-too-deep]" in result.output, result.output


def test_a_project_file_nested_too_deep_is_a_located_error(tmp_path: Path) -> None:
    (tmp_path / "toolgen.yaml").write_text("toolgen: 1\napis: " + "[" * 400 + "]" * 400 + "\n", "utf-8")
    with pytest.raises(DiagnosticError) as caught:
        load_project(tmp_path / "toolgen.yaml")
    (diag,) = caught.value.diagnostics
    assert diag.code == "yaml-too-deep" and diag.location is not None
    assert (diag.location.line, diag.location.col) == (2, len("apis: ") + MAX_DEPTH + 1)
