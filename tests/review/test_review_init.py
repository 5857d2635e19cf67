"""`toolgen init`: the draft of the widgets fixture spec (effects, scopes, idempotency, pagination,
hints, names), refusal to overwrite, located errors; and the sweep over every real spec in
../shared/specs/real (slow): the draft is valid YAML and a valid intent map, lints with warnings
only, and builds."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import SHARED

from toolgen.compile.intent import intent_map_json_schema
from toolgen.naming import tool_name_problem
from toolgen.review.lint import LintSettings, LintTarget, lint_target

BUILD_EMIT = "openai,anthropic,mcp,policy"  # the Python package emit is slow on huge maps
REAL = SHARED / "specs" / "real"
# specs the loader itself rejects (so `toolgen build` cannot read them either): init must fail the same
# located way; remove an entry when the loader learns to read the spec
UNREADABLE: dict[str, str] = {}


def _init(cli: Callable[..., Any], spec: Path | str, out: str, *more: str) -> Any:
    return cli("init", str(spec), "--out", out, *more)


def _check_draft(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(intent_map_json_schema()).validate(data)
    return data  # type: ignore[no-any-return]


def test_draft_of_the_fixture_spec(project: Path, cli: Callable[..., Any]) -> None:
    result = _init(cli, "specs/widgets.yaml", "drafts/widgets.yaml")
    assert result.exit_code == 0, result.stderr
    text = (project / "drafts" / "widgets.yaml").read_text(encoding="utf-8")
    data = _check_draft(project / "drafts" / "widgets.yaml")
    assert data["spec"] == "../specs/widgets.yaml"
    assert data["api"] == {"name": "widgets"}
    tools = data["tools"]
    assert len(tools) == 10
    assert tools["list_widgets"]["effect"] == "read"
    assert tools["list_widgets"]["permission"] == "widget:read"
    assert tools["list_widgets"]["pagination"] == {"style": "cursor", "items": "data", "cursor": "cursor",
                                                   "limit": "limit", "next": "next_cursor"}
    assert tools["create_widget"]["idempotency"] == {"key": "action_id", "send_as": "header:Idempotency-Key"}
    assert tools["update_widget"]["idempotency"] == {"key": "action_id", "send_as": "none"}
    assert tools["delete_widget"] == {"operation": "deleteWidget", "effect": "destructive",
                                      "permission": "widget:delete", "approval": "required",
                                      "idempotency": {"key": "action_id", "send_as": "none"}, "toolset": "widgets"}
    # one toolset per tag, eager in a draft this small, and every tool of the tag in it
    assert set(data["toolsets"]) == {t["toolset"] for t in tools.values() if "toolset" in t}
    assert all(spec["loading"] == "eager" for spec in data["toolsets"].values())
    assert tools["list_gadgets"]["permission"] == "widgets:read"  # an apiKey operation: <api>:read
    # comments: tag groups, decisions and projection hints
    assert "# === widgets (8 operations) ===" in text
    assert "approval: required  # destructive: keep it" in text
    assert "# decide: `never` for low-risk writes" in text
    assert "from: id, name, color, tags" in text
    assert "# description: the spec has none" in text
    findings = lint_target(LintTarget(project / "drafts" / "widgets.yaml"), LintSettings()).findings
    assert not [d.render() for d in findings if d.severity == "error"]
    build = cli("build", "drafts/widgets.yaml", "--out", "generated/draft", "-q")
    assert build.exit_code == 0, build.stderr
    policy = json.loads((project / "generated" / "draft" / "policy.json").read_text(encoding="utf-8"))
    assert {r["tool"] for r in policy["tools"]} >= {"list_widgets", "preview_delete_widget", "record_delete_widget"}


def test_names_are_valid_unique_and_fit_with_the_prefix(project: Path, cli: Callable[..., Any]) -> None:
    spec = yaml.safe_load((project / "specs" / "widgets.yaml").read_text(encoding="utf-8"))
    long_id = "createAVeryLongWidgetOperationNameThatGoesOnAndOnForMoreThanSixtyFourCharacters"
    spec["paths"]["/widgets"]["post"]["operationId"] = long_id
    spec["paths"]["/widgets/{widget_id}"]["patch"]["operationId"] = long_id + "Too"
    spec["paths"]["/widgets/search"]["get"]["operationId"] = "create-widget"  # snake_cases like createWidget
    (project / "specs" / "long.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    assert _init(cli, "specs/long.yaml", "drafts/long.yaml").exit_code == 0
    tools = _check_draft(project / "drafts" / "long.yaml")["tools"]
    names = []
    for key, intent in tools.items():
        full = [key] if intent["effect"] == "read" else ["preview_" + key, "record_" + key]
        assert all(tool_name_problem(n) is None for n in full), full
        names += full
    assert len(names) == len(set(names))
    assert cli("build", "drafts/long.yaml", "--out", "generated/long", "-q", "--emit", "mcp,policy").exit_code == 0


def test_refuses_to_overwrite_without_force(project: Path, cli: Callable[..., Any]) -> None:
    assert _init(cli, "specs/widgets.yaml", "intent_maps/new.yaml").exit_code == 0
    before = (project / "intent_maps" / "clean.yaml").read_text(encoding="utf-8")
    result = _init(cli, "specs/widgets.yaml", "intent_maps/clean.yaml")
    assert result.exit_code == 2
    assert "intent_maps/clean.yaml: error[init-file-exists]" in result.stderr and "--force" in result.stderr
    assert (project / "intent_maps" / "clean.yaml").read_text(encoding="utf-8") == before
    assert _init(cli, "specs/widgets.yaml", "intent_maps/clean.yaml", "--force").exit_code == 0
    assert (project / "intent_maps" / "clean.yaml").read_text(encoding="utf-8") != before


def test_default_out_and_name(project: Path, cli: Callable[..., Any]) -> None:
    result = cli("init", "specs/widgets.yaml", "--name", "gizmos")
    assert result.exit_code == 0, result.stderr
    assert _check_draft(project / "intent_maps" / "gizmos.yaml")["api"] == {"name": "gizmos"}
    assert cli("init", "specs/widgets.yaml", "--name", "Bad-Name").exit_code == 2


def test_swagger_1_2_and_missing_spec_are_located_errors(project: Path, cli: Callable[..., Any]) -> None:
    (project / "specs" / "old.json").write_text('{\n  "swagger": "1.2",\n  "info": {"title": "x", "version": "1"},\n'
                                                '  "paths": {}\n}\n', encoding="utf-8")
    result = _init(cli, "specs/old.json", "drafts/old.yaml")
    assert result.exit_code == 2
    assert "specs/old.json:2:3 (#/swagger): error[spec-version-unsupported]" in result.stderr
    assert not (project / "drafts" / "old.yaml").exists()
    assert _init(cli, "specs/none.yaml", "drafts/none.yaml").exit_code == 2


def test_init_drafts_a_swagger2_spec(project: Path, cli: Callable[..., Any]) -> None:
    (project / "specs" / "v2.yaml").write_text("""swagger: '2.0'
info: {title: x, version: '1'}
host: api.example.com
basePath: /v1
paths:
  /things:
    get:
      operationId: listThings
      parameters: [{name: tag, in: query, type: array, items: {type: string}}]
      responses: {'200': {description: ok, schema: {type: array, items: {$ref: '#/definitions/Thing'}}}}
    post:
      operationId: createThing
      parameters: [{name: body, in: body, required: true, schema: {$ref: '#/definitions/Thing'}}]
      responses: {'201': {description: created}}
definitions:
  Thing: {type: object, properties: {name: {type: string}}}
""", encoding="utf-8")
    result = _init(cli, "specs/v2.yaml", "drafts/v2.yaml")
    assert result.exit_code == 0, result.stderr
    data = _check_draft(project / "drafts" / "v2.yaml")
    assert {t["operation"] for t in data["tools"].values()} == {"listThings", "createThing"}


def _real_specs() -> list[str]:
    if not REAL.is_dir():
        return []
    return sorted(p.name for p in REAL.iterdir() if p.suffix in (".json", ".yaml") and p.is_file())


@pytest.mark.slow
@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/specs/real is not present")
@pytest.mark.parametrize("spec", _real_specs())
def test_init_on_real_spec(spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           cli: Callable[..., Any]) -> None:
    monkeypatch.chdir(tmp_path)
    out = "intent_maps/draft.yaml"
    t0 = time.perf_counter()
    result = _init(cli, REAL / spec, out)
    t_init = time.perf_counter() - t0
    if spec in UNREADABLE:
        assert result.exit_code == 2, "the loader reads this spec now: remove it from UNREADABLE"
        assert f"error[{UNREADABLE[spec]}]" in result.stderr and f"{spec}:" in result.stderr
        return
    assert result.exit_code == 0, result.stderr
    data = _check_draft(tmp_path / out)
    assert data["tools"]
    t1 = time.perf_counter()
    lint = lint_target(LintTarget(tmp_path / out), LintSettings())
    t_lint = time.perf_counter() - t1
    assert not lint.bad_input
    assert not [d.render() for d in lint.findings if d.severity == "error"][:5]
    t2 = time.perf_counter()
    build = cli("build", out, "--out", "generated/draft", "-q", "--emit", BUILD_EMIT)
    t_build = time.perf_counter() - t2
    assert build.exit_code == 0, build.stderr[-3000:]
    print(f"\n{spec}: {len(data['tools'])} intents; init {t_init:.1f}s, lint {t_lint:.1f}s, build {t_build:.1f}s")


def test_init_completes_the_project(project: Path, cli: Callable[..., Any]) -> None:
    """init writes `auth:` with the secrets it chose, adds the API to toolgen.yaml (comments kept),
    and the next steps it prints keep `toolgen build --check` green."""
    config = project / "toolgen.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "# a closing comment\n", encoding="utf-8")
    assert cli("build", "-q").exit_code == 0
    result = cli("init", "specs/widgets.yaml", "--name", "gizmos")
    assert result.exit_code == 0, result.stderr
    data = _check_draft(project / "intent_maps" / "gizmos.yaml")
    assert data["auth"] == {"oauth": {"secret": "GIZMOS_OAUTH"}, "apiKey": {"secret": "GIZMOS_APIKEY"}}
    text = config.read_text(encoding="utf-8")
    assert "# The review-workflow fixture project (tests/review)." in text and "# a closing comment" in text
    assert "# no Python package: keeps the hook tests fast" in text
    entries = yaml.safe_load(text)["apis"]
    assert entries[-1] == {"name": "gizmos", "intent_map": "intent_maps/gizmos.yaml", "out": "generated/gizmos"}
    assert "toolgen build gizmos" in result.stderr and "toolgen build --check" in result.stderr
    assert "export GIZMOS_APIKEY=... GIZMOS_OAUTH=..." in result.stderr
    assert cli("build", "gizmos", "-q").exit_code == 0
    assert cli("build", "--check", "-q").exit_code == 0
    again = cli("init", "specs/widgets.yaml", "--name", "gizmos", "--force")
    assert again.exit_code == 0 and "already lists an API named 'gizmos'" in again.stderr
    assert config.read_text(encoding="utf-8") == text


def test_init_creates_the_project_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       cli: Callable[..., Any]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "api.yaml").write_text(_NOTES_SPEC, encoding="utf-8")
    result = cli("init", "api.yaml")
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load((tmp_path / "toolgen.yaml").read_text(encoding="utf-8")) == {
        "toolgen": 1, "apis": [{"name": "api", "intent_map": "intent_maps/api.yaml", "out": "generated/api"}]}
    text = (tmp_path / "intent_maps" / "api.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(text)["auth"] == {"oauth": {"secret": "API_TOKEN"}}
    # the POST inherits the top-level read scope: a hint says to check it
    assert "check this: POST changes data, but its scope (notes:read, inherited from the spec's top-level " \
           "security) says read" in text
    assert "permission: notes:read  # check this" in text
    # the Markdown tag description stays readable: plain words, wrapped, no link targets or marks
    assert "# === notes (2 operations) ===\n  # Notes are short texts. See the notes guide for limits and" in text
    assert "](" not in text and "**" not in text and "##" not in text.split("tools:")[1]
    assert yaml.safe_load(text)["toolsets"]["notes"]["description"].startswith("Notes are short texts.")
    assert cli("build", "-q").exit_code == 0
    assert cli("build", "--check", "-q").exit_code == 0


_NOTES_SPEC = """\
openapi: 3.1.0
info: {title: Notes, version: '1'}
servers: [{url: 'https://notes.example.com/v1'}]
security: [{oauth: ['notes:read']}]
tags:
  - name: notes
    description: |
      ## Notes

      Notes are **short** texts. See [the notes guide](https://example.com/guide) for limits and
      `formatting` rules, and *never* store secrets in them: every note is visible to every member
      of the workspace, including guests invited to a single project, and to the audit export.

      A second paragraph that the comment leaves out.
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        clientCredentials:
          tokenUrl: https://notes.example.com/token
          scopes: {'notes:read': Read notes, 'notes:write': Write notes}
paths:
  /notes:
    get:
      operationId: listNotes
      tags: [notes]
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {type: array, items: {type: object, properties: {id: {type: string}}}}
    post:
      operationId: createNote
      tags: [notes]
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, properties: {text: {type: string}}, required: [text]}
      responses:
        '201':
          description: created
          content:
            application/json:
              schema: {type: object, properties: {id: {type: string}}}
"""


def test_a_large_draft_defers_its_toolsets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           cli: Callable[..., Any]) -> None:
    """More intents than a model should see up front: the drafted toolsets are deferred (found by
    tool search), the build accepts them and REPORT.md's up-front cost stays small."""
    from toolgen.review.init import EAGER_INTENTS

    paths = {f"/things{i}/{{id}}": {"get": {"operationId": f"getThing{i}", "tags": [f"group{i % 3}"],
                                            "parameters": [{"name": "id", "in": "path", "required": True,
                                                            "schema": {"type": "string"}}],
                                            "responses": {"200": {"description": "ok"}}}}
             for i in range(EAGER_INTENTS + 1)}
    spec = {"openapi": "3.1.0", "info": {"title": "Things", "version": "1"}, "paths": paths,
            "tags": [{"name": "group0", "description": "The **first** group. More words."}]}
    monkeypatch.chdir(tmp_path)
    (tmp_path / "things.json").write_text(json.dumps(spec), encoding="utf-8")
    assert cli("init", "things.json").exit_code == 0
    data = yaml.safe_load((tmp_path / "intent_maps" / "things.yaml").read_text(encoding="utf-8"))
    assert data["toolsets"] == {
        "group0": {"description": "The first group.", "loading": "deferred"},
        "group1": {"description": "Operations tagged group1.", "loading": "deferred"},
        "group2": {"description": "Operations tagged group2.", "loading": "deferred"}}
    assert cli("build", "-q").exit_code == 0
    policy = json.loads((tmp_path / "generated" / "things" / "policy.json").read_text(encoding="utf-8"))
    assert {r["loading"] for r in policy["tools"]} == {"deferred"}
