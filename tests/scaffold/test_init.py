"""`toolgen init`: the draft of the widgets fixture spec (effects, scopes, idempotency, pagination,
hints, names), refusal to overwrite, located errors; and the sweep over every real spec in
../shared/specs/real (slow): the draft is valid YAML and a valid intent map, lints with warnings
only, and builds. The drafted effects are tested in `test_init_effects.py`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.build import SHARED
from tests.support.init_drafts import check_draft, write_spec

from toolgen.naming import tool_name_problem
from toolgen.review.lint import LintSettings, LintTarget, lint_target

BUILD_EMIT = "openai,anthropic,mcp,policy"  # the Python package emit is slow on huge maps
REAL = SHARED / "specs" / "real"
# specs the loader itself rejects (so `toolgen build` cannot read them either): init must fail the same
# located way; remove an entry when the loader learns to read the spec
UNREADABLE: dict[str, str] = {}


def _init(cli: Callable[..., Any], spec: Path | str, out: str, *more: str) -> Any:
    return cli("init", str(spec), "--out", out, *more)


def test_draft_of_the_fixture_spec(project: Path, cli: Callable[..., Any]) -> None:
    result = _init(cli, "specs/widgets.yaml", "drafts/widgets.yaml")
    assert result.exit_code == 0, result.stderr
    text = (project / "drafts" / "widgets.yaml").read_text(encoding="utf-8")
    data = check_draft(project / "drafts" / "widgets.yaml")
    assert data["spec"] == "../specs/widgets.yaml"
    assert data["api"] == {"name": "widgets"}
    tools = data["tools"]
    assert len(tools) == 10
    assert tools["list_widgets"]["effect"] == "read"
    assert tools["list_widgets"]["permission"] == "widget:read"
    assert tools["list_widgets"]["pagination"] == {
        "style": "cursor",
        "items": "data",
        "cursor": "cursor",
        "limit": "limit",
        "next": "next_cursor",
    }
    assert tools["create_widget"]["idempotency"] == {
        "key": "action_id",
        "send_as": "header:Idempotency-Key",
        "honoured_by_api": True,
    }
    assert tools["update_widget"]["idempotency"] == {"key": "action_id", "send_as": "none"}
    assert tools["delete_widget"] == {
        "operation": "deleteWidget",
        "effect": "destructive",
        "permission": "widget:delete",
        "approval": "required",
        "idempotency": {"key": "action_id", "send_as": "none"},
        "toolset": "widgets",
    }
    # one toolset per tag, eager in a draft this small, and every tool of the tag in it
    assert set(data["toolsets"]) == {t["toolset"] for t in tools.values() if "toolset" in t}
    assert all(spec["loading"] == "eager" for spec in data["toolsets"].values())
    assert tools["list_gadgets"]["permission"] == "widgets:read"  # an apiKey operation: <api>:read
    # comments: tag groups, decisions and projection hints
    assert "# === widgets (8 operations) ===" in text
    assert "approval: required  # destructive: keep it" in text
    assert "approval: required  # the safe default; `never` only for low-risk writes" in text
    assert "from: id, name, color, tags" in text
    assert "# description: the spec has none" in text
    findings = lint_target(LintTarget(project / "drafts" / "widgets.yaml"), LintSettings()).findings
    assert not [d.render() for d in findings if d.severity == "error"]
    build = cli("build", "drafts/widgets.yaml", "--out", "generated/draft", "-q")
    assert build.exit_code == 0, build.stderr
    policy = json.loads((project / "generated" / "draft" / "policy.json").read_text(encoding="utf-8"))
    assert {r["tool"] for r in policy["tools"]} >= {
        "list_widgets",
        "preview_delete_widget",
        "record_delete_widget",
    }


def test_names_are_valid_unique_and_fit_with_the_prefix(project: Path, cli: Callable[..., Any]) -> None:
    spec = yaml.safe_load((project / "specs" / "widgets.yaml").read_text(encoding="utf-8"))
    long_id = "createAVeryLongWidgetOperationNameThatGoesOnAndOnForMoreThanSixtyFourCharacters"
    spec["paths"]["/widgets"]["post"]["operationId"] = long_id
    spec["paths"]["/widgets/{widget_id}"]["patch"]["operationId"] = long_id + "Too"
    spec["paths"]["/widgets/search"]["get"]["operationId"] = "create-widget"  # snake_cases like createWidget
    (project / "specs" / "long.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    assert _init(cli, "specs/long.yaml", "drafts/long.yaml").exit_code == 0
    tools = check_draft(project / "drafts" / "long.yaml")["tools"]
    names = []
    for key, intent in tools.items():
        full = [key] if intent["effect"] == "read" else ["preview_" + key, "record_" + key]
        assert all(tool_name_problem(n) is None for n in full), full
        names += full
    assert len(names) == len(set(names))
    assert (
        cli("build", "drafts/long.yaml", "--out", "generated/long", "-q", "--emit", "mcp,policy").exit_code
        == 0
    )


def test_refuses_to_overwrite_without_force(project: Path, cli: Callable[..., Any]) -> None:
    assert _init(cli, "specs/widgets.yaml", "intent_maps/new.yaml").exit_code == 0
    before = (project / "intent_maps" / "clean.yaml").read_text(encoding="utf-8")
    result = _init(cli, "specs/widgets.yaml", "intent_maps/clean.yaml")
    assert result.exit_code == 2
    assert "intent_maps/clean.yaml: error[init-file-exists]" in result.stderr and "--force" in result.stderr
    assert (project / "intent_maps" / "clean.yaml").read_text(encoding="utf-8") == before
    assert _init(cli, "specs/widgets.yaml", "intent_maps/clean.yaml", "--force").exit_code == 0
    assert (project / "intent_maps" / "clean.yaml").read_text(encoding="utf-8") != before


def test_force_replaces_the_map_whole_keeping_its_mode(project: Path, cli: Callable[..., Any]) -> None:
    """--force writes the new draft beside the old map, flushed, then renamed over it (`replace_file`):
    the file keeps its permission bits and no temporary file is left."""
    target = project / "intent_maps" / "clean.yaml"
    target.chmod(0o640)
    assert _init(cli, "specs/widgets.yaml", "intent_maps/clean.yaml", "--force").exit_code == 0
    assert target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in target.parent.iterdir() if p.name.endswith(".tmp")) == []


def test_default_out_and_name(project: Path, cli: Callable[..., Any]) -> None:
    result = cli("init", "specs/widgets.yaml", "--name", "gizmos")
    assert result.exit_code == 0, result.stderr
    assert check_draft(project / "intent_maps" / "gizmos.yaml")["api"] == {"name": "gizmos"}
    assert cli("init", "specs/widgets.yaml", "--name", "Bad-Name").exit_code == 2


def test_swagger_1_2_and_missing_spec_are_located_errors(project: Path, cli: Callable[..., Any]) -> None:
    (project / "specs" / "old.json").write_text(
        '{\n  "swagger": "1.2",\n  "info": {"title": "x", "version": "1"},\n  "paths": {}\n}\n',
        encoding="utf-8",
    )
    result = _init(cli, "specs/old.json", "drafts/old.yaml")
    assert result.exit_code == 2
    assert "specs/old.json:2:3 (#/swagger): error[spec-version-unsupported]" in result.stderr
    assert not (project / "drafts" / "old.yaml").exists()
    assert _init(cli, "specs/none.yaml", "drafts/none.yaml").exit_code == 2


def test_init_drafts_a_swagger2_spec(project: Path, cli: Callable[..., Any]) -> None:
    (project / "specs" / "v2.yaml").write_text(
        """swagger: '2.0'
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
""",
        encoding="utf-8",
    )
    result = _init(cli, "specs/v2.yaml", "drafts/v2.yaml")
    assert result.exit_code == 0, result.stderr
    data = check_draft(project / "drafts" / "v2.yaml")
    assert {t["operation"] for t in data["tools"].values()} == {"listThings", "createThing"}


def _real_specs() -> list[str]:
    if not REAL.is_dir():
        return []
    return sorted(p.name for p in REAL.iterdir() if p.suffix in (".json", ".yaml") and p.is_file())


@pytest.mark.slow
@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/specs/real is not present")
@pytest.mark.parametrize("spec", _real_specs())
def test_init_on_real_spec(
    spec: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
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
    data = check_draft(tmp_path / out)
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
    print(
        f"\n{spec}: {len(data['tools'])} intents; init {t_init:.1f}s, lint {t_lint:.1f}s, build {t_build:.1f}s"
    )


def test_init_completes_the_project(project: Path, cli: Callable[..., Any]) -> None:
    """init writes `auth:` with the secrets it chose, adds the API to toolgen.yaml (comments kept),
    and the next steps it prints keep `toolgen build --check` green."""
    config = project / "toolgen.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "# a closing comment\n", encoding="utf-8")
    assert cli("build", "-q").exit_code == 0
    result = cli("init", "specs/widgets.yaml", "--name", "gizmos")
    assert result.exit_code == 0, result.stderr
    data = check_draft(project / "intent_maps" / "gizmos.yaml")
    assert data["auth"] == {"oauth": {"secret": "GIZMOS_OAUTH"}, "apiKey": {"secret": "GIZMOS_APIKEY"}}
    text = config.read_text(encoding="utf-8")
    assert "# The review-workflow fixture project (tests/review)." in text and "# a closing comment" in text
    assert "# no Python package: keeps the hook tests fast" in text
    entries = yaml.safe_load(text)["apis"]
    assert entries[-1] == {
        "name": "gizmos",
        "intent_map": "intent_maps/gizmos.yaml",
        "out": "generated/gizmos",
    }
    assert "toolgen build gizmos" in result.stderr and "toolgen build --check" in result.stderr
    assert "export GIZMOS_APIKEY=... GIZMOS_OAUTH=..." in result.stderr
    assert cli("build", "gizmos", "-q").exit_code == 0
    assert cli("build", "--check", "-q").exit_code == 0
    again = cli("init", "specs/widgets.yaml", "--name", "gizmos", "--force")
    assert again.exit_code == 0 and "already lists an API named 'gizmos'" in again.stderr
    assert config.read_text(encoding="utf-8") == text


def test_init_creates_the_project_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "api.yaml").write_text(_NOTES_SPEC, encoding="utf-8")
    result = cli("init", "api.yaml")
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load((tmp_path / "toolgen.yaml").read_text(encoding="utf-8")) == {
        "toolgen": 1,
        "apis": [{"name": "api", "intent_map": "intent_maps/api.yaml", "out": "generated/api"}],
    }
    text = (tmp_path / "intent_maps" / "api.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(text)["auth"] == {"oauth": {"secret": "API_TOKEN"}}
    # the POST inherits the top-level read scope: a hint says to check it
    assert (
        "check this: POST changes data, but its scope (notes:read, inherited from the spec's top-level "
        "security) says read" in text
    )
    assert "permission: notes:read  # check this" in text
    # the Markdown tag description stays readable: plain words, wrapped, no link targets or marks
    assert (
        "# === notes (2 operations) ===\n  # Notes are short texts. See the notes guide for limits and"
        in text
    )
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


def test_a_large_draft_defers_its_toolsets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    """More intents than a model should see up front: the drafted toolsets are deferred (found by
    tool search), the build accepts them and REPORT.md's up-front cost stays small."""
    from toolgen.scaffold.init import EAGER_INTENTS

    paths = {
        f"/things{i}/{{id}}": {
            "get": {
                "operationId": f"getThing{i}",
                "tags": [f"group{i % 3}"],
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}},
            }
        }
        for i in range(EAGER_INTENTS + 1)
    }
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "Things", "version": "1"},
        "paths": paths,
        "tags": [{"name": "group0", "description": "The **first** group. More words."}],
    }
    monkeypatch.chdir(tmp_path)
    (tmp_path / "things.json").write_text(json.dumps(spec), encoding="utf-8")
    assert cli("init", "things.json").exit_code == 0
    data = yaml.safe_load((tmp_path / "intent_maps" / "things.yaml").read_text(encoding="utf-8"))
    # the tag's first sentence, then the resources its operations act on (at most six, by name on a tie)
    assert data["toolsets"] == {
        "group0": {
            "description": "The first group. Tools for things0, things12, things15, things18, things3, "
            "things6.",
            "loading": "deferred",
        },
        "group1": {
            "description": "Operations tagged group1. Tools for things1, things10, things13, things16, "
            "things19, things4.",
            "loading": "deferred",
        },
        "group2": {
            "description": "Operations tagged group2. Tools for things11, things14, things17, things2, "
            "things20, things5.",
            "loading": "deferred",
        },
    }
    assert cli("build", "-q").exit_code == 0
    policy = json.loads((tmp_path / "generated" / "things" / "policy.json").read_text(encoding="utf-8"))
    assert {r["loading"] for r in policy["tools"]} == {"deferred"}


def test_untagged_and_mixed_specs_get_toolsets_by_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    """Stripe's shape: no tags, so the toolsets come from the first path segment that is not a
    version; deferred past 20 intents. A tagged operation keeps its tag's toolset."""
    from toolgen.scaffold.init import EAGER_INTENTS

    paths: dict[str, Any] = {}
    for i in range(EAGER_INTENTS + 1):
        resource = ("customers", "charges", "invoices")[i % 3]
        paths[f"/v1/{resource}/{{id}}/part{i}"] = {
            "get": {
                "operationId": f"Get{resource.capitalize()}Part{i}",
                "summary": f"Get part {i}",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}},
            }
        }
    paths["/v1/tagged"] = {
        "get": {
            "operationId": "GetTagged",
            "tags": ["Reports"],
            "summary": "Get the report",
            "responses": {"200": {"description": "ok"}},
        }
    }
    spec = {"openapi": "3.0.0", "info": {"title": "Pay", "version": "1"}, "paths": paths}
    monkeypatch.chdir(tmp_path)
    write_spec(tmp_path, "pay.json", spec)
    assert cli("init", "pay.json", "--out", "draft.yaml", "--no-project").exit_code == 0
    data = check_draft(tmp_path / "draft.yaml")
    # each description: the path's or tag's words, then the resources its operations act on
    assert {
        k: (v["description"].split(" Tools for ")[0], v["loading"]) for k, v in data["toolsets"].items()
    } == {
        "charges": ("Operations under /charges.", "deferred"),
        "customers": ("Operations under /customers.", "deferred"),
        "invoices": ("Operations under /invoices.", "deferred"),
        "reports": ("Operations tagged Reports.", "deferred"),
    }
    assert data["toolsets"]["reports"]["description"] == "Operations tagged Reports. Tools for tagged."
    assert data["toolsets"]["charges"]["description"].endswith(
        " Tools for part1, part10, part13, part16, part19, part4."
    )
    assert data["tools"]["get_customers_part0"]["toolset"] == "customers"
    assert data["tools"]["get_tagged"]["toolset"] == "reports"
    text = (tmp_path / "draft.yaml").read_text(encoding="utf-8")
    assert "# === (no tag) /customers (7 operations) ===" in text
    assert cli("build", "draft.yaml", "--out", "gen", "-q", "--emit", "policy").exit_code == 0


_SCOPES_SPEC = {
    "openapi": "3.0.0",
    "info": {"title": "Music", "version": "1"},
    "components": {
        "securitySchemes": {
            "oauth": {
                "type": "oauth2",
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "https://m.example.com/a",
                        "tokenUrl": "https://m.example.com/t",
                        "scopes": {
                            "library-read": "Read the library",
                            "library-modify": "Change the library",
                        },
                    }
                },
            }
        }
    },
    "security": [{"oauth": []}],
    "paths": {
        "/albums/{id}": {
            "get": {
                "operationId": "getAlbum",
                "summary": "Get an album",
                "tags": ["albums"],
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "ok"}},
            }
        },
        "/me/albums": {
            "put": {
                "operationId": "saveAlbums",
                "summary": "Save albums",
                "tags": ["library"],
                "security": [{"oauth": ["library-modify"]}],
                "responses": {"200": {"description": "ok"}},
            }
        },
    },
}


def test_operations_without_scopes_get_the_maps_own_permission(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    """Spotify's shape: the OAuth scheme declares scopes, an operation asks for none. The draft gives
    it `<api>:read` (not a made-up scope) and leaves the choice to a human: one `# decide
    [permission-undecided]` mark above `tools:`, where lint --strict reports it until it is deleted."""
    monkeypatch.chdir(tmp_path)
    write_spec(tmp_path, "music.json", _SCOPES_SPEC)
    result = cli("init", "music.json", "--out", "draft.yaml", "--no-project")
    assert result.exit_code == 0, result.stderr
    assert "1 decision left before `toolgen lint --strict` passes (1 permission-undecided)" in result.stderr
    tools = check_draft(tmp_path / "draft.yaml")["tools"]
    assert tools["get_album"]["permission"] == "music:read"
    assert tools["save_albums"]["permission"] == "library-modify"
    text = (tmp_path / "draft.yaml").read_text(encoding="utf-8")
    assert "`music:read` is this map's own permission" in text
    lines = text.splitlines()
    mark = next(
        i for i, line in enumerate(lines) if line.startswith("# decide [permission-undecided]: 1 operation ")
    )
    assert lines[mark + 1] == "tools:"
    lint = cli("lint", "--strict", "draft.yaml")
    assert lint.exit_code == 1
    assert (
        f"draft.yaml:{mark + 1}:1: error[permission-undecided]: 1 operation protected by an OAuth scheme"
        in lint.stdout
    )
    assert "toolgen lint: 1 error," in lint.stdout
    # the human keeps the name (granted to their actors) and deletes the mark: the draft passes
    (tmp_path / "draft.yaml").write_text("\n".join(lines[:mark] + lines[mark + 1 :]) + "\n", encoding="utf-8")
    assert cli("lint", "--strict", "draft.yaml").exit_code == 0
    # a typo of the scope an operation does ask for is still an error
    text = (
        (tmp_path / "draft.yaml")
        .read_text(encoding="utf-8")
        .replace("permission: library-modify", "permission: library-modfy")
    )
    (tmp_path / "draft.yaml").write_text(text, encoding="utf-8")
    lint = lint_target(LintTarget(tmp_path / "draft.yaml"), LintSettings())
    assert [d.code for d in lint.findings if d.severity == "error"] == ["scope-unknown"]


def test_decisions_left_are_marked_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    """What `lint --strict` would still reject (here: an operation without any description) is a
    `# decide [RULE]` note above the intent and a count on stderr; lint points at that intent."""
    spec = json.loads(json.dumps(_SCOPES_SPEC))
    del spec["paths"]["/albums/{id}"]["get"]["summary"]
    monkeypatch.chdir(tmp_path)
    write_spec(tmp_path, "music.json", spec)
    result = cli("init", "music.json", "--out", "draft.yaml", "--no-project")
    assert result.exit_code == 0, result.stderr
    assert (
        "2 decisions left before `toolgen lint --strict` passes (1 description-missing, 1 permission-undecided)"
        in result.stderr
    )
    lines = (tmp_path / "draft.yaml").read_text(encoding="utf-8").splitlines()
    marked = next(i for i, line in enumerate(lines) if "# decide [description-missing]" in line)
    assert lines[marked + 1].strip() == "get_album:"
    lint = cli("lint", "--strict", "draft.yaml")
    assert lint.exit_code == 1
    # reported at the mark itself (line marked + 1), the intent's pointer kept
    assert f"draft.yaml:{marked + 1}:3 (#/tools/get_album): error[description-missing]" in lint.stdout
    # the decision made (a description written) and the mark deleted: only the undecided permission is left
    lines[marked : marked + 2] = [
        "  get_album:",
        "    description: Get one album by id; not for listing albums.",
    ]
    (tmp_path / "draft.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lint = cli("lint", "--strict", "--format", "json", "draft.yaml")
    assert [f["code"] for f in json.loads(lint.stdout)["findings"] if f["severity"] == "error"] == [
        "permission-undecided"
    ]


def test_left_out_operations_say_why_and_how_to_include_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    """DocuSign's shape: a request body beyond the schema budget, here with every member required so
    that no drafted `hide` can bring it within the budget. The draft lists the operation with the
    build's reason and hint and its intent commented out; applying the remedy (a larger budget) and
    uncommenting the intent builds it."""

    def level(name: str, child: str | None, width: int) -> dict[str, Any]:
        item = {"$ref": f"#/components/schemas/{child}"} if child else {"type": "string"}
        return {name: {"type": "object", "properties": {f"{name.lower()}{i}": item for i in range(width)}}}

    schemas = {
        **level("Envelope", "Document", 12),
        **level("Document", "Tab", 12),
        **level("Tab", "Field", 12),
        **level("Field", None, 14),
    }  # 12 * 12 * 12 * 14 > 20,000 nodes once the $refs are inlined
    schemas["Envelope"]["required"] = sorted(schemas["Envelope"]["properties"])
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "Sign", "version": "1"},
        "components": {"schemas": schemas},
        "paths": {
            "/envelopes": {
                "post": {
                    "operationId": "createEnvelope",
                    "summary": "Create an envelope",
                    "tags": ["envelopes"],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {"schema": {"$ref": "#/components/schemas/Envelope"}}
                        },
                    },
                    "responses": {"201": {"description": "created"}},
                },
                "get": {
                    "operationId": "listEnvelopes",
                    "summary": "List envelopes",
                    "tags": ["envelopes"],
                    "responses": {"200": {"description": "ok"}},
                },
            }
        },
    }
    monkeypatch.chdir(tmp_path)
    write_spec(tmp_path, "sign.json", spec)
    (tmp_path / "toolgen.yaml").write_text("toolgen: 1\napis: []\n", encoding="utf-8")
    result = cli("init", "sign.json", "--out", "draft.yaml", "--no-project")
    assert result.exit_code == 0, result.stderr
    assert "1 operations left out" in result.stderr
    text = (tmp_path / "draft.yaml").read_text(encoding="utf-8")
    assert "# === Operations left out (1): the build cannot turn them into tools as drafted ===" in text
    assert "#   why: schema-too-large: " in text
    assert "#   to include it: " in text
    assert "#   create_envelope:\n#     operation: createEnvelope\n#     effect: write\n" in text
    assert "create_envelope" not in check_draft(tmp_path / "draft.yaml")["tools"]
    # the remedy: raise the budget, uncomment the intent
    start = text.index("#   create_envelope:")
    end = text.index("\n\n", start) if "\n\n" in text[start:] else len(text)
    block = text[start:end].splitlines()
    fixed = text[:start] + "\n".join(line[2:] for line in block) + text[end:]
    fixed = fixed.replace("api:\n", "budgets: {max_schema_nodes: 100000}\napi:\n", 1)
    (tmp_path / "draft.yaml").write_text(fixed, encoding="utf-8")
    assert "create_envelope" in check_draft(tmp_path / "draft.yaml")["tools"]
    build = cli("build", "draft.yaml", "--out", "gen", "-q", "--emit", "policy")
    assert build.exit_code == 0, build.stderr
    policy = json.loads((tmp_path / "gen" / "policy.json").read_text(encoding="utf-8"))
    assert "record_create_envelope" in {r["tool"] for r in policy["tools"]}


def test_a_spec_description_too_long_is_drafted_shorter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    """AWS's shape: an operation whose spec text alone nearly fills the build's description budget, so
    the tool's description (with what the build adds) passes lint's 1,024 characters. init drafts
    `description:` from the spec's own sentences, short enough, and says so; lint --strict passes."""
    sentence = "This call stores a new widget with every setting it is given and starts it right away. "
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "Long", "version": "1"},
        "paths": {
            "/widgets": {
                "post": {
                    "operationId": "createWidget",
                    "summary": "Create a widget",
                    "description": sentence * 14,
                    "parameters": [
                        {"name": "name", "in": "query", "required": True, "schema": {"type": "string"}}
                    ],
                    "responses": {"201": {"description": "created"}},
                }
            }
        },
    }
    monkeypatch.chdir(tmp_path)
    write_spec(tmp_path, "long.json", spec)
    result = cli("init", "long.json", "--out", "draft.yaml", "--no-project")
    assert result.exit_code == 0, result.stderr
    assert "`toolgen lint --strict` passes on the draft as written" in result.stderr
    description = check_draft(tmp_path / "draft.yaml")["tools"]["create_widget"]["description"]
    assert description.startswith("Create a widget. This call stores") and description.endswith("right away.")
    assert len(description) < 1024
    assert "description: the spec's text would make a" in (tmp_path / "draft.yaml").read_text(
        encoding="utf-8"
    )
    assert cli("lint", "--strict", "draft.yaml").exit_code == 0


def test_marks_carry_their_findings() -> None:
    """`apply_marks`: a finding of a marked rule at a marked intent (or the whole map) moves to its mark,
    a spec finding to the mark naming its place, a mark rule's mark is a finding of its own, and a
    finding no mark carries stays where it was."""
    from toolgen.diagnostics import Diagnostic, SourceLocation
    from toolgen.review.lint.marks import apply_marks, parse_marks

    text = (
        "toolgen: 1\n# decide [catalog-too-many-tools]: too many\ntools:\n\n  # a note\n"
        "  # decide [output-unprojected-large]: project it\n  # decide [effect-undecided]: POST says query\n"
        "  get_a:\n    operation: getA\n  # decide [body-required-absent]: spec.json:7:9 (#/paths/x): optional\n"
        "  post_b:  # trailing\n    operation: postB\n"
    )
    marks = parse_marks(text)
    assert [(m.rule, m.line, m.col, m.owner) for m in marks] == [
        ("catalog-too-many-tools", 2, 1, ""),
        ("output-unprojected-large", 6, 3, "get_a"),
        ("effect-undecided", 7, 3, "get_a"),
        ("body-required-absent", 10, 3, "post_b"),
    ]
    findings = [
        Diagnostic(
            "output-unprojected-large",
            "warning",
            "large",
            SourceLocation("m.yaml", 8, 3, "/tools/get_a/output"),
        ),
        Diagnostic("catalog-too-many-tools", "warning", "many", SourceLocation("m.yaml", 3, 1, "/tools")),
        Diagnostic(
            "body-required-absent", "warning", "optional", SourceLocation("spec.json", 7, 9, "/paths/x")
        ),
        Diagnostic("pagination-missing", "warning", "lists", SourceLocation("m.yaml", 8, 3, "/tools/get_a")),
    ]
    placed = {
        (d.code, d.location.line if d.location else None, d.location.pointer if d.location else None)
        for d in apply_marks(findings, marks, "m.yaml")
    }
    assert placed == {
        ("output-unprojected-large", 6, "/tools/get_a/output"),
        ("catalog-too-many-tools", 2, "/tools"),
        ("body-required-absent", 10, None),
        ("pagination-missing", 8, "/tools/get_a"),
        ("effect-undecided", 7, "/tools/get_a"),
    }
