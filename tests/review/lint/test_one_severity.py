"""One finding, one severity: the build, `toolgen lint` in every format and REPORT.md agree.

The registry of codes (`toolgen.codes.table`, whose lint rules `toolgen.review.lint.rules.RULES`
lists) is the only severity table: a diagnostic the build emits at a fixed severity is emitted at
its code's severity, and lint passes build diagnostics through unchanged (configured severities
apply to both alike)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from toolgen.cli import main
from toolgen.codes import CODES

GENERATOR = Path(__file__).resolve().parents[3] / "generator" / "toolgen"

RECURSIVE = """openapi: 3.1.0
info: {title: Trees, version: "1"}
paths:
  /folders:
    get:
      operationId: listFolders
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Folder"}}
components:
  schemas:
    Folder:
      type: object
      properties:
        name: {type: string}
        children: {type: array, items: {$ref: "#/components/schemas/Folder"}}
"""


def test_the_build_emits_every_rule_at_the_rule_table_severity() -> None:
    """Every `sink.error/warning/info("code", ...)` and `Diagnostic("code", "sev", ...)` in the
    generator uses the severity the registry gives that code."""
    call = re.compile(r"\.(error|warning|info)\(\s*\"([a-z0-9-]+)\"")
    made = re.compile(r"Diagnostic\(\s*\"([a-z0-9-]+)\",\s*\"(error|warning|info)\"")
    seen: list[tuple[str, str, str]] = []
    for path in sorted(GENERATOR.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        seen += [(m.group(2), m.group(1), path.name) for m in call.finditer(text)]
        seen += [(m.group(1), m.group(2), path.name) for m in made.finditer(text)]
    assert any(code == "schema-cycle" for code, _, _ in seen)  # the scan finds what it must judge
    wrong = [
        (code, sev, where, CODES[code].severity)
        for code, sev, where in seen
        if code in CODES and CODES[code].severity != sev
    ]
    assert not wrong, wrong


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_schema_cycle_has_one_severity_everywhere(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "trees.yaml").write_text(RECURSIVE, encoding="utf-8")
    (tmp_path / "api.yaml").write_text(
        'toolgen: 1\nspec: trees.yaml\napi: {name: trees}\ninclude: [{match: "*"}]\n', encoding="utf-8"
    )
    built = _invoke("build", "api.yaml", "--out", "out", "--emit", "mcp,report")
    assert built.exit_code == 0, built.output
    text = _invoke("lint", "api.yaml")
    as_json = json.loads(_invoke("lint", "api.yaml", "--format", "json").stdout)
    sarif = json.loads(_invoke("lint", "api.yaml", "--format", "sarif").stdout)
    github = _invoke("lint", "api.yaml", "--format", "github").stdout
    assert "info[schema-cycle]" in built.stderr and "warning[schema-cycle]" not in built.stderr
    assert "info[schema-cycle]" in text.stdout and "warning[schema-cycle]" not in text.stdout
    assert {f["severity"] for f in as_json["findings"] if f["code"] == "schema-cycle"} == {"info"}
    results = sarif["runs"][0]["results"]
    assert {r["level"] for r in results if r["ruleId"] == "schema-cycle"} == {"note"}
    cycle_lines = [line for line in github.splitlines() if "schema-cycle" in line]
    assert cycle_lines and all(line.startswith("::notice") for line in cycle_lines)
    report = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")
    assert "schema-cycle" not in report.split("## Warnings", 1)[1]  # the report's Warnings hold warnings
