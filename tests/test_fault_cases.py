"""Generator-side assertions of the shared fault cases (../shared/cases/*/EXPECTED.md).

Each case is built with an include-everything intent map (effects inferred, see toolgen.compile.verbs). The
runtime-side assertions ("Runtime: ..." lines) live in tests/runtime/test_runtime_fault_cases.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.support.build import CASES, Built, build, case_spec, run

from toolgen.dialects import check_catalog

pytestmark = pytest.mark.skipif(not CASES.is_dir(), reason="../shared/cases is not available")
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
OPENAI_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}


def walk(node: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    yield pointer, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from walk(v, f"{pointer}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from walk(v, f"{pointer}/{i}")


def assert_conformant(built: Built) -> None:
    for dialect in ("openai", "anthropic", "mcp", "gemini"):
        if not (built.out / f"{dialect}.json").exists():
            continue
        assert check_catalog(dialect, built.json(f"{dialect}.json")) == [], dialect


def test_01_long_operation_ids_get_unique_stable_names(tmp_path: Path) -> None:
    built = build(tmp_path, case_spec("01"))
    assert_conformant(built)
    for dialect in ("openai", "anthropic", "mcp"):
        names = built.names(dialect)
        assert all(NAME.match(n) for n in names), names
        assert len(names) == len(set(names))
    rows = built.json("policy.json")["tools"]
    by_id: dict[str, Any] = {}
    for r in rows:
        by_id.setdefault(r["operation"]["id"], []).append(r)
    by_url = by_id["getWorkspaceAssistantConversationTranscriptAttachmentDownloadUrlById"]
    by_name = by_id["getWorkspaceAssistantConversationTranscriptAttachmentDownloadUrlByName"]
    assert by_url[0]["tool"] != by_name[0]["tool"]
    writes = by_id["createWorkspaceAssistantConversationTranscriptAnnotationForReviewer"]
    assert sorted(r["mode"] for r in writes) == ["preview", "record"]
    assert all(r["tool"].startswith(("preview_", "record_")) and len(r["tool"]) <= 64 for r in writes)
    # the policy table maps each shortened name back to the operation
    assert (
        by_url[0]["operation"]["path"] == "/workspaces/{ws}/transcripts/{tid}/attachments/{aid}/download-url"
    )
    # one warning per shortened name, quoting the operationId and the new name
    report = (built.out / "REPORT.md").read_text()
    shortened = [line for line in report.splitlines() if line.startswith("- `name-shortened`")]
    assert len(shortened) == 3
    for r in (by_url[0], by_name[0]):
        assert any(r["operation"]["id"] in line and r["tool"] in line for line in shortened)
    # deterministic: a second build gives the same names
    (tmp_path / "again").mkdir()
    again = build(tmp_path / "again", case_spec("01"))
    assert again.names() == built.names()


def test_01_explicit_name_over_64_is_an_error_naming_the_operation(tmp_path: Path) -> None:
    long = "x" * 60
    built = build(
        tmp_path,
        case_spec("01"),
        f"""tools:
  {long}:
    operation: createWorkspaceAssistantConversationTranscriptAnnotationForReviewer
    effect: write
    approval: required
""",
        expect=2,
    )
    assert "createWorkspaceAssistantConversationTranscriptAnnotationForReviewer" in built.result.output
    assert "tool-name-invalid" in built.result.output
    assert not (tmp_path / "out").exists()


def test_03_collision_safe_bindings(tmp_path: Path) -> None:
    built = build(tmp_path, case_spec("03"))
    assert_conformant(built)
    for name in ("preview_replace_widget", "record_replace_widget"):
        bindings = built.row(name)["request"]["bindings"]
        pairs = {(b["in"], b["name"]): b["arg"] for b in bindings if b["arg"] != "action_id"}
        assert set(pairs) == {("path", "id"), ("body", "id"), ("query", "label"), ("body", "label")}
        assert len(set(pairs.values())) == 4  # four distinct arguments
        # the model writes the arguments to the preview tool; the record tool executes that preview
        args_tool = name.replace("record_", "preview_")
        schema = built.tool("mcp", args_tool)["inputSchema"]
        assert set(pairs.values()) <= set(schema["properties"])
        # the two id arguments say where they go
        assert "path" in schema["properties"][pairs[("path", "id")]]["description"].lower()
        assert "body" in schema["properties"][pairs[("body", "id")]]["description"].lower()
        params = built.tool("openai", args_tool)["function"]["parameters"]
        label = params["properties"][pairs[("query", "label")]]
        assert "null" in label["type"]
        assert set(params["required"]) == set(params["properties"])


def test_05_recursive_schemas_kept_with_defs(tmp_path: Path) -> None:
    built = build(tmp_path, case_spec("05"))
    assert_conformant(built)
    tool = built.tool("mcp", "preview_create_folder_tree")
    schema = tool["inputSchema"]
    jsonschema.Draft202012Validator.check_schema(schema)
    body_ok = {"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}
    jsonschema.validate(body_ok, schema, cls=jsonschema.Draft202012Validator)
    openai = built.tool("openai", "preview_search_documents")["function"]["parameters"]
    for pointer, node in walk(openai):
        if (isinstance(node, dict) and node.get("type") == "object") or (
            isinstance(node, dict) and isinstance(node.get("type"), list) and "object" in node["type"]
        ):
            assert node.get("additionalProperties") is False, pointer
            assert set(node.get("required", [])) == set(node.get("properties", {})), pointer
        assert not (isinstance(node, dict) and "oneOf" in node), pointer
    assert "anyOf" not in openai
    linted = json.loads(run("lint", str(tmp_path / "api.yaml"), "--format", "json").stdout)["findings"]
    cycles = [f["message"] for f in linted if f["code"] == "schema-cycle" and f["severity"] == "info"]
    assert any("Folder -> Folder" in line for line in cycles)
    assert any(
        "Filter -> Compound -> Filter" in line or "Compound -> Filter -> Compound" in line for line in cycles
    )
    assert len(cycles) == 2


def test_08_nullable_becomes_null_types(tmp_path: Path) -> None:
    built = build(tmp_path, case_spec("08"))
    assert_conformant(built)
    tool = built.tool("mcp", "preview_create_item")  # the arguments; the record tool executes the preview
    record = built.tool("mcp", "record_create_item")
    assert all("nullable" not in str(k) for p, n in walk([tool, record]) if isinstance(n, dict) for k in n)
    validator = jsonschema.Draft202012Validator(tool["inputSchema"])
    assert validator.is_valid({"title": "t", "note": None})
    assert not validator.is_valid({"title": "t"})  # note is required (nullable)
    for arg in ("price", "tags", "region"):
        assert validator.is_valid({"title": "t", "note": None, arg: None}), arg
    jsonschema.validate(
        {"id": "x", "price": None}, record["outputSchema"], cls=jsonschema.Draft202012Validator
    )
    bindings = {b["name"]: b for b in built.row("record_create_item")["request"]["bindings"]}
    assert bindings["note"]["null"] == "send"
    assert bindings["price"]["null"] == bindings["tags"]["null"] == bindings["region"]["null"] == "omit"
    params = built.tool("openai", "preview_create_item")["function"]["parameters"]
    assert params["properties"]["title"]["type"] == "string"
    for arg in ("note", "price", "tags", "region"):
        assert "null" in params["properties"][arg]["type"], arg


def test_11_top_level_allof_merged_and_conflict_named(tmp_path: Path) -> None:
    built = build(tmp_path, case_spec("11"))
    tool = built.tool("mcp", "preview_create_ad_set_draft")
    props = tool["inputSchema"]["properties"]
    assert {"name", "notes", "campaignId", "budget", "accountId"} <= set(props)
    assert set(tool["inputSchema"]["required"]) >= {"name", "campaignId", "budget", "accountId"}
    assert "notes" not in tool["inputSchema"]["required"]
    ok = {
        "accountId": "a",
        "name": "n",
        "campaignId": "3fa85f64-5717-4562-b3fc-2c963f66afa6",
        "budget": {"amount": 5, "currency": "EUR"},
    }
    jsonschema.validate(ok, tool["inputSchema"], cls=jsonschema.Draft202012Validator)
    for _, node in walk(built.json("openai.json")):
        assert not (isinstance(node, dict) and "allOf" in node)
    # the conflicting operation is skipped, with a diagnostic naming both pointers and both types
    assert not any("conflicting" in n for n in built.names())
    report = (built.out / "REPORT.md").read_text()
    conflict = [line for line in report.splitlines() if line.startswith("- `schema-allof-conflict`")]
    assert conflict, report
    assert "DraftBase/properties/name" in conflict[0] and "allOf/1/properties/name" in conflict[0]
    assert "string" in conflict[0] and "integer" in conflict[0]


def test_13_ref_siblings_inlined_for_openai(tmp_path: Path) -> None:
    built = build(tmp_path, case_spec("13"))
    assert_conformant(built)
    params = built.tool("openai", "preview_save_user_info")["function"]["parameters"]
    for pointer, node in walk(params):
        if isinstance(node, dict) and "$ref" in node:
            assert set(node) == {"$ref"}, pointer
        assert not (isinstance(node, dict) and "default" in node), pointer
    text = json.dumps(params)
    assert "Postal address used for invoices" in text and "Role granted on creation" in text
    assert "viewer" in params["properties"]["role"]["description"]
    address = params["properties"]["address"]
    assert address["additionalProperties"] is False and set(address["required"]) == {"street", "city"}


def test_14_formats_per_dialect(tmp_path: Path) -> None:
    built = build(tmp_path, case_spec("14"))
    assert_conformant(built)
    params = built.tool("openai", "preview_scrape_page")["function"]["parameters"]["properties"]
    for name, node in params.items():
        if "format" in node:
            assert node["format"] in OPENAI_FORMATS and "string" in node["type"], name
    assert (
        "format" not in params["url"]
        and "format" not in params["token"]
        and "format" not in params["retries"]
    )
    assert params["startedAt"]["format"] == "date-time" and params["pageId"]["format"] == "uuid"
    assert "format: uri" in params["url"]["description"]
    mcp = built.tool("mcp", "preview_scrape_page")["inputSchema"]["properties"]
    assert mcp["url"]["format"] == "uri"
    assert "format" not in mcp["token"] and "format" not in mcp["retries"] and "format" not in mcp["ratio"]


def test_15_optional_fields_strict_widening_is_openai_only(tmp_path: Path) -> None:
    built = build(tmp_path, case_spec("15"))
    assert_conformant(built)
    params = built.tool("openai", "preview_extract_web_page")["function"]["parameters"]
    for pointer, node in walk(params):
        if isinstance(node, dict) and "properties" in node:
            assert node["additionalProperties"] is False and set(node["required"]) == set(
                node["properties"]
            ), pointer
    props = params["properties"]
    assert "anyOf" in props["urls"] and "null" not in json.dumps(props["urls"])
    assert None in props["depth"]["enum"]
    for arg in ("includeImages", "options"):
        assert "null" in json.dumps(props[arg]), arg
    for dialect, key in (("anthropic", "input_schema"), ("mcp", "inputSchema")):
        schema = built.tool(dialect, "preview_extract_web_page")[key]
        assert set(schema["required"]) == {"urls"}
        record = built.tool(dialect, "record_extract_web_page")[key]
        assert set(record["required"]) == {"preview_id", "action_id"}


def test_19_read_only_properties_never_in_inputs(tmp_path: Path) -> None:
    built = build(tmp_path, case_spec("19"))
    assert_conformant(built)
    for dialect, key in (("anthropic", "input_schema"), ("mcp", "inputSchema")):
        props = built.tool(dialect, "preview_update_project")[key]["properties"]
        assert {"name", "webhookSecret", "projectId"} <= set(props)
        assert not {"id", "senderId", "createdAt"} & set(props)
        assert set(built.tool(dialect, "record_update_project")[key]["properties"]) == {
            "preview_id",
            "action_id",
        }
    readonly = {b["name"] for b in built.row("record_update_project")["request"]["bindings"]}
    assert not {"id", "senderId", "createdAt"} & readonly  # nor sent from a stored preview
    mcp = built.tool("mcp", "preview_update_project")["inputSchema"]
    assert set(mcp["required"]) == {"projectId", "name"}
    out = built.tool("mcp", "get_project")["outputSchema"]
    assert {"id", "senderId", "createdAt", "name"} <= set(out["properties"])
    assert "webhookSecret" not in out["properties"]
    assert set(out["required"]) == {"id", "name", "senderId"}


def test_21_output_refs_resolve_and_any_stays_any(tmp_path: Path) -> None:
    built = build(tmp_path, case_spec("21"))
    assert_conformant(built)
    out = built.tool("mcp", "record_profile_columns")["outputSchema"]
    assert out["type"] == "object"
    sample = {
        "results": [
            {"metric": {"type": "numeric", "minVal": 2, "maxVal": 555}},
            {"metric": {"type": "string", "minLength": 2, "maxLength": 5}},
        ],
        "otherData": "x",
    }
    jsonschema.validate(sample, out, cls=jsonschema.Draft202012Validator)
    page = built.tool("mcp", "list_profiles")
    assert built.row("list_profiles")["pagination"]["style"] == "cursor"
    items = sample["results"]
    jsonschema.validate(
        {"items": items, "next_cursor": None}, page["outputSchema"], cls=jsonschema.Draft202012Validator
    )


def test_24_no_parameter_operations(tmp_path: Path) -> None:
    built = build(tmp_path, case_spec("24"))
    assert_conformant(built)
    for name in ("get_health", "get_current_user"):
        assert built.tool("openai", name)["function"]["parameters"] == {
            "type": "object",
            "properties": {},
            "required": [],
            "additionalProperties": False,
        }
        schema = built.tool("anthropic", name)["input_schema"]
        assert schema["type"] == "object" and schema.get("properties") == {}
        assert built.tool("mcp", name)["inputSchema"] == {"type": "object", "additionalProperties": False}
    row = built.row("get_current_user")
    assert row["request"]["bindings"] == []
    assert row["auth"] == [
        {
            "scheme": "bearerAuth",
            "kind": "bearer",
            "in": "header",
            "name": "Authorization",
            "secret": "API_TOKEN",
            "scopes": [],
            "per_caller": None,
        }
    ]
    assert built.row("get_health")["auth"] == []
    out = built.tool("mcp", "get_current_user")["outputSchema"]
    assert out["properties"]["user"]["type"] == "object"


CASE_DIRS = sorted(p.name for p in CASES.iterdir() if (p / "spec.yaml").is_file()) if CASES.is_dir() else []


@pytest.mark.slow
@pytest.mark.parametrize("case", CASE_DIRS)
def test_every_dialect_is_conformant_and_openai_fully_strict(case: str, tmp_path: Path) -> None:
    """Issue 12: every fault case, include-everything: 0 violations in every dialect, 100% OpenAI
    strict, Anthropic strict for at least one tool where any can be."""
    built = build(tmp_path, CASES / case / "spec.yaml", emit="openai,anthropic,mcp,gemini,policy,report")
    assert_conformant(built)
    openai = built.json("openai.json")
    assert all(t["function"]["strict"] is True for t in openai), case
    anthropic = built.json("anthropic.json")
    assert all(isinstance(t.get("strict"), bool) for t in anthropic)
    assert any(t["strict"] for t in anthropic) or "recursive" in case, case
