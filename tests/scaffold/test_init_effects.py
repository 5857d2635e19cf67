"""`toolgen init`'s drafted effects: a GET whose action says it changes something (the AWS Query
shape, ``/#Action=DeleteDBInstance``) is never drafted a read, the effects the build reports are the
draft's, `toolgen lint` flags a read whose action says delete, and include groups infer their effects
from the words of their operations.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.init_drafts import check_draft, write_spec

from toolgen.review.lint import LintSettings, LintTarget, lint_target


def _aws_op(action: str, doc: str) -> dict[str, Any]:
    return {
        "operationId": f"GET_{action}",
        "description": f"<p>{doc}</p>",
        "parameters": [
            {"name": "DBInstanceIdentifier", "in": "query", "required": True, "schema": {"type": "string"}},
            {
                "name": "Action",
                "in": "query",
                "required": True,
                "schema": {"type": "string", "enum": [action]},
            },
        ],
        "responses": {"200": {"description": "Success"}},
    }


#: the AWS Query shape (RDS, ElastiCache, CloudFormation): every action is a GET on `/#Action=X`
_AWS_QUERY = {
    "openapi": "3.0.0",
    "info": {"title": "Amazon RDS", "version": "2014-10-31"},
    "servers": [{"url": "https://rds.example.com"}],
    "paths": {
        "/#Action=DeleteDBInstance": {"get": _aws_op("DeleteDBInstance", "Deletes a DB instance.")},
        "/#Action=RebootDBInstance": {"get": _aws_op("RebootDBInstance", "Reboots a DB instance.")},
        "/#Action=DescribeDBInstances": {"get": _aws_op("DescribeDBInstances", "Describes DB instances.")},
        "/?Action=TerminateInstances": {
            "get": {
                "parameters": [
                    {"name": "InstanceId", "in": "query", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"200": {"description": "Success"}},
            }
        },
        "/things/search": {
            "post": {
                "operationId": "searchThings",
                "summary": "Search things",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "properties": {"q": {"type": "string"}}}
                        }
                    }
                },
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/things/{id}": {
            "get": {
                "operationId": "getThing",
                "summary": "Creates the thing when it is missing",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}


def test_a_get_that_changes_is_never_drafted_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    """The AWS Query shape: the effect comes from the Action (and operationId, path, summary), not the
    method. The destructive and write GETs need approval, their MCP tools are not read-only, the
    doubtful ones carry a `# decide:` note, and lint --strict finds no effect rule on the draft."""
    monkeypatch.chdir(tmp_path)
    write_spec(tmp_path, "rds.json", _AWS_QUERY)
    result = cli("init", "rds.json", "--out", "draft.yaml", "--no-project")
    assert result.exit_code == 0, result.stderr
    text = (tmp_path / "draft.yaml").read_text(encoding="utf-8")
    tools = check_draft(tmp_path / "draft.yaml")["tools"]
    by_op = {t["operation"]: t for t in tools.values()}
    assert by_op["GET_DeleteDBInstance"]["effect"] == "destructive"
    assert by_op["GET_DeleteDBInstance"]["approval"] == "required"
    assert by_op["GET_RebootDBInstance"]["effect"] == "write"
    assert by_op["GET_RebootDBInstance"]["approval"] == "required"
    assert by_op["GET /?Action=TerminateInstances"]["effect"] == "destructive"
    assert by_op["GET_DescribeDBInstances"]["effect"] == "read"
    assert by_op["searchThings"]["effect"] == "read"  # a POST that searches, with a note to decide
    assert by_op["getThing"]["effect"] == "write"  # the words disagree: a write until a human decides
    assert "# effect: GET, but its Action `DeleteDBInstance` says `delete`: drafted destructive" in text
    assert (
        "# decide [effect-undecided]: POST, but its operationId `searchThings` says `search`: drafted read"
        in text
    )
    assert (
        "# decide [effect-undecided]: GET, but its summary `Creates the thing when it is missing` says `create`"
        in text
    )
    lint = lint_target(LintTarget(tmp_path / "draft.yaml"), LintSettings())
    codes = {d.code for d in lint.findings}
    assert not codes & {
        "effect-read-names-change",
        "effect-write-on-safe-method",
        "effect-contradicts-method",
    }
    # the two effects in doubt are open decisions, reported at their marks until a human deletes them
    lines = text.splitlines()
    marks = [i + 1 for i, line in enumerate(lines) if line.strip().startswith("# decide [effect-undecided]")]
    undecided = [d for d in lint.findings if d.code == "effect-undecided"]
    assert len(marks) == 2 and sorted(d.location.line or 0 for d in undecided if d.location) == marks
    assert {d.location.pointer for d in undecided if d.location} == {
        f"/tools/{key}" for key, t in tools.items() if t["operation"] in ("searchThings", "getThing")
    }
    (tmp_path / "decided.yaml").write_text(
        "\n".join(line for n, line in enumerate(lines, 1) if n not in marks) + "\n", encoding="utf-8"
    )
    decided = lint_target(LintTarget(tmp_path / "decided.yaml"), LintSettings())
    assert "effect-undecided" not in {d.code for d in decided.findings}
    assert cli("build", "draft.yaml", "--out", "gen", "-q", "--emit", "mcp,policy").exit_code == 0
    mcp = json.loads((tmp_path / "gen" / "mcp.json").read_text(encoding="utf-8"))
    hints = {t["name"]: t.get("annotations", {}) for t in mcp}
    record = next(n for n in hints if n.startswith("record_") and "delete_db_instance" in n)
    assert hints[record].get("readOnlyHint") is not True and hints[record].get("destructiveHint") is True
    assert hints[next(n for n in hints if "describe_db_instances" in n)].get("readOnlyHint") is True


def test_drafted_effects_are_the_drafts_effects(tmp_path: Path) -> None:
    """`drafted_effects` (what the corpus effect check reads, without lowering the map) gives every
    intent of the draft its drafted effect, under the draft's key."""
    from toolgen.compile.load import load_spec
    from toolgen.diagnostics import DiagnosticSink
    from toolgen.scaffold.init import draft_intent_map, drafted_effects

    write_spec(tmp_path, "rds.json", _AWS_QUERY)
    doc = load_spec(tmp_path / "rds.json", sink=DiagnosticSink())
    draft = yaml.safe_load(
        draft_intent_map(
            doc,
            api="rds",
            spec_ref="rds.json",
            out=tmp_path / "d.yaml",
            command="toolgen init",
            decisions=False,
        ).text
    )["tools"]
    quick = {key: (op.key, effect) for op, key, effect in drafted_effects(doc, "rds")}
    assert {k: t["effect"] for k, t in draft.items()} == {k: quick[k][1] for k in draft}
    assert {quick[k][1] for k in draft} == {"read", "write", "destructive"}


def test_lint_flags_a_read_whose_action_says_delete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`effect-read-names-change`, located at the intent's `effect:` line, with the remedy."""
    monkeypatch.chdir(tmp_path)
    write_spec(tmp_path, "rds.json", _AWS_QUERY)
    (tmp_path / "map.yaml").write_text(
        "toolgen: 1\nspec: rds.json\napi: {name: rds}\ntools:\n"
        "  delete_db_instance:\n    operation: GET_DeleteDBInstance\n    effect: read\n    permission: rds:read\n"
        "  describe_db_instances:\n    operation: GET_DescribeDBInstances\n    effect: read\n"
        "    permission: rds:read\n",
        encoding="utf-8",
    )
    findings = [
        d
        for d in lint_target(LintTarget(tmp_path / "map.yaml"), LintSettings()).findings
        if d.code == "effect-read-names-change"
    ]
    assert len(findings) == 1
    (finding,) = findings
    assert finding.location is not None and finding.location.line == 7
    assert "Action `DeleteDBInstance` says `delete`" in finding.message
    assert finding.hint is not None and "set `effect: destructive` and `approval: required`" in finding.hint


def test_include_groups_infer_effects_from_the_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    """An include group's inferred effects follow the same words: the GET that deletes is destructive
    (previewed, approved); a POST that searches stays a write (no human sees a note there)."""
    monkeypatch.chdir(tmp_path)
    write_spec(tmp_path, "rds.json", _AWS_QUERY)
    (tmp_path / "map.yaml").write_text(
        "toolgen: 1\nspec: rds.json\napi: {name: rds}\ninclude: [{match: '*'}]\n", encoding="utf-8"
    )
    assert cli("build", "map.yaml", "--out", "gen", "-q", "--emit", "policy").exit_code == 0
    policy = json.loads((tmp_path / "gen" / "policy.json").read_text(encoding="utf-8"))
    effects = {r["tool"]: r["effect"] for r in policy["tools"]}
    assert effects["record_get_delete_db_instance"] == "destructive"
    assert effects["get_describe_db_instances"] == "read"
    assert effects["record_search_things"] == "write"
