"""toolgen.yaml ``dialects: {gemini: {parameters: json_schema}}``: Gemini declarations with
``parametersJsonSchema`` (C.3) instead of the OpenAPI-subset ``parameters``, off by default.

A copy of the Stripe project (its metadata maps are reshaped for Gemini by default): the setting
changes gemini.json and only gemini.json (and the policy table's Gemini rewrites, which disappear:
the runtime receives canonical values), the Gemini checker accepts it and still refuses a bad
``parametersJsonSchema``, a per-API value wins over the project's, a bad value is a located error in
toolgen.yaml, and the repository's own build (no setting) keeps ``parameters``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import REPO, run
from tests.support.recording_server import RecordingServer

from toolgen.builder.project import load_project
from toolgen.dialects import check_catalog
from toolgen.dialects.gemini import check_gemini_catalog
from toolgen.runtime import Actor, Registry
from toolgen.runtime.call.credentials import StaticCredentials
from toolgen.runtime.stores import MemoryReceiptStore

API = "  - {name: stripe, intent_map: intent_maps/stripe.yaml, out: generated/stripe%s}\n"


def _project(tmp: Path, project: str = "", api: str = "") -> Path:
    root = tmp / "proj"
    (root / "specs").mkdir(parents=True)
    (root / "intent_maps").mkdir()
    shutil.copy(REPO / "specs" / "stripe.slice.json", root / "specs" / "stripe.slice.json")
    shutil.copy(REPO / "intent_maps" / "stripe.yaml", root / "intent_maps" / "stripe.yaml")
    (root / "toolgen.yaml").write_text("toolgen: 1\n" + project + "apis:\n" + API % api, encoding="utf-8")
    return root


def _build(root: Path) -> tuple[int, str]:
    cwd = Path.cwd()
    os.chdir(root)
    try:
        result = run("build", "-q")
    finally:
        os.chdir(cwd)
    return result.exit_code, result.output


def _files(root: Path) -> dict[str, bytes]:
    out = root / "generated" / "stripe"
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.fixture(scope="module")
def default_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    root = _project(tmp_path_factory.mktemp("default"))
    code, output = _build(root)
    assert code == 0, output
    return _files(root)


@pytest.fixture(scope="module")
def json_schema_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = _project(
        tmp_path_factory.mktemp("json_schema"), "dialects:\n  gemini: {parameters: json_schema}\n"
    )
    code, output = _build(root)
    assert code == 0, output
    return root


def test_default_is_the_openapi_subset_and_matches_the_committed_build(
    default_files: dict[str, bytes],
) -> None:
    declarations = json.loads(default_files["gemini.json"])
    assert all("parameters" in d and "parametersJsonSchema" not in d for d in declarations)
    committed = REPO / "generated" / "stripe"
    for name in ("gemini.json", "openai.json", "policy.json"):
        assert default_files[name] == (committed / name).read_bytes(), name
    assert all(t.gemini_parameters == "schema" for t in load_project(REPO / "toolgen.yaml").targets)


def test_json_schema_changes_gemini_json_and_drops_the_gemini_rewrites(
    json_schema_root: Path, default_files: dict[str, bytes]
) -> None:
    files = _files(json_schema_root)
    assert set(files) == set(default_files)
    changed = {name for name in files if files[name] != default_files[name]}
    assert changed == {"gemini.json", "gemini.interactions.json", "policy.json", "POLICY.md", "REPORT.md"}
    declarations = json.loads(files["gemini.json"])
    assert all("parametersJsonSchema" in d and "parameters" not in d for d in declarations)
    interactions = {
        e["name"]: e for e in json.loads(files["gemini.interactions.json"]) if e["type"] == "function"
    }
    assert all(interactions[d["name"]]["parameters"] == d["parametersJsonSchema"] for d in declarations)
    update = next(d for d in declarations if d["name"] == "preview_update_customer")
    metadata = json.dumps(update["parametersJsonSchema"]["properties"]["metadata"])
    assert "additionalProperties" in metadata and "JSON-encoded" not in metadata  # the map as a map
    before = json.loads(default_files["policy.json"])["tools"]
    after = json.loads(files["policy.json"])["tools"]
    assert any("gemini" in row["dialect_rewrites"] for row in before)
    assert not any("gemini" in row["dialect_rewrites"] for row in after)
    assert [{k: v for k, v in r.items() if k != "dialect_rewrites"} for r in before] == [
        {k: v for k, v in r.items() if k != "dialect_rewrites"} for r in after
    ]
    assert [r["dialect_rewrites"].get("openai") for r in before] == [
        r["dialect_rewrites"].get("openai") for r in after
    ]
    assert check_catalog("gemini", declarations) == []


def test_the_gemini_checker_still_refuses_a_bad_json_schema() -> None:
    def rules(decl: dict[str, Any]) -> set[str]:
        return {v.rule for v in check_gemini_catalog([{"name": "t", "description": "d", **decl}])}

    good = {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "additionalProperties": False,
    }
    assert rules({"parametersJsonSchema": good}) == set()
    assert rules({"parametersJsonSchema": {"type": "array", "items": {}}}) == {"C.3-root"}
    assert rules({"parametersJsonSchema": {"type": "object", "properties": {"a": {"type": "array"}}}}) == {
        "E.4-array-items"
    }
    assert rules(
        {"parametersJsonSchema": {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}}
    ) == {"C.3-ref-resolves"}
    assert rules(
        {
            "parametersJsonSchema": {
                "type": "object",
                "properties": {"a": {"type": "string", "nullable": True}},
            }
        }
    ) == {"C.3-nullable"}
    assert rules({"parametersJsonSchema": {"type": "object", "properties": {"a": {"minLength": "x"}}}}) == {
        "C.3-json-schema"
    }
    assert "C.1-schema-fields" in rules(
        {"parametersJsonSchema": good, "parameters": {"type": "OBJECT", "properties": {}}}
    )


def test_a_per_api_value_wins_over_the_project(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        "dialects:\n  gemini: {parameters: json_schema}\n",
        ", dialects: {gemini: {parameters: schema}}",
    )
    assert [t.gemini_parameters for t in load_project(root / "toolgen.yaml").targets] == ["schema"]
    root2 = _project(tmp_path / "b", "", ", dialects: {gemini: {parameters: json_schema}}")
    assert [t.gemini_parameters for t in load_project(root2 / "toolgen.yaml").targets] == ["json_schema"]


@pytest.mark.parametrize(
    ("project", "api", "where"),
    [
        (
            "dialects:\n  gemini: {parameters: jsonschema}\n",
            "",
            ("toolgen.yaml:3:", "dialects.gemini.parameters"),
        ),
        ("dialects:\n  gemini: {parametersJsonSchema: true}\n", "", ("toolgen.yaml:3:", "unknown key")),
        ("dialects:\n  claude: {}\n", "", ("toolgen.yaml:3:", "dialects.claude")),
        (
            "",
            ", dialects: {gemini: {parameters: 1}}",
            ("toolgen.yaml:3:", "apis.0.dialects.gemini.parameters"),
        ),
    ],
)
def test_a_bad_value_is_a_located_error_and_nothing_is_written(
    tmp_path: Path, project: str, api: str, where: tuple[str, str]
) -> None:
    root = _project(tmp_path, project, api)
    code, output = _build(root)
    assert code == 2, output
    for text in where:
        assert text in output, output
    assert "project-invalid" in output
    assert not (root / "generated").exists()


@pytest.fixture
def recorder() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


def test_the_runtime_takes_canonical_values_in_the_gemini_dialect(
    json_schema_root: Path, recorder: RecordingServer
) -> None:
    args = {"customer": "cus_1", "metadata": {"order": "7"}}
    actor = Actor.of("t", ("customers:write",))
    with Registry.from_dir(
        json_schema_root / "generated" / "stripe",
        base_url=recorder.base_url,
        credentials=StaticCredentials({"STRIPE_SECRET_KEY": "sk_test_dummy"}),
        receipts=MemoryReceiptStore(),
        cursor_key=b"c" * 32,
    ) as reg:
        canonical = reg.call("preview_update_customer", args, actor=actor)
        gemini = reg.call("preview_update_customer", args, actor=actor, dialect="gemini")
        assert canonical.result is not None and gemini.result is not None, gemini.to_json()
        assert gemini.result["request"] == canonical.result["request"]
        # the JSON text the subset view asks for is not decoded any more
        text = reg.call(
            "preview_update_customer", {**args, "metadata": '{"order": "7"}'}, actor=actor, dialect="gemini"
        )
        assert not text.ok and text.error is not None and text.error.code == "invalid_arguments"
