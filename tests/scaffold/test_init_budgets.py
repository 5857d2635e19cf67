"""`toolgen init` drafts the remedy for request bodies too large for a model: it hides their largest
optional members (`hide:`), says so in a comment above the intent, and the draft then builds with no
budget raised and no `tool-too-large` finding; a read whose response is too large whole gets its
top-level fields as `output.fields`. Shapes of real APIs, made small: DocuSign's
create-envelope (a few members expanding to hundreds of thousands of schema nodes) and its
document-tabs update (thousands of optional properties, 1.79 MB of schema)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml


def _spec() -> dict[str, Any]:
    # `explodes`: anyOf of 12 refs, 7 levels deep: 12^7 (35 million) nodes once inlined
    schemas: dict[str, Any] = {
        f"S{i}": {"anyOf": [{"$ref": f"#/components/schemas/S{i + 1}"}] * 12} for i in range(7)
    }
    schemas["S7"] = {"type": "object", "properties": {"a": {"type": "string"}}}
    tabs = {
        f"tab{i:05d}": {"type": "string", "description": f"The value of tab {i}, as the signer sees it. " * 3}
        for i in range(2_000)
    }
    schemas["Tabs"] = {"type": "object", "properties": tabs}

    def write(op_id: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
        return {
            "post": {
                "operationId": op_id,
                "summary": f"{op_id} summary.",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "required": required, "properties": properties}
                        }
                    },
                },
                "responses": {"204": {"description": "done"}},
            }
        }

    return {
        "openapi": "3.0.3",
        "info": {"title": "Envelopes", "version": "1"},
        "components": {"schemas": schemas},
        "paths": {
            "/envelopes": write(
                "createEnvelope",
                {
                    "subject": {"type": "string"},
                    "status": {"type": "string", "enum": ["created", "sent"]},
                    "composite": {"$ref": "#/components/schemas/S0"},
                    "recipients": {"type": "array", "items": {"$ref": "#/components/schemas/S1"}},
                },
                ["subject"],
            ),
            "/tabs": write(
                "putTabs",
                {
                    "documentId": {"type": "string"},
                    "tabs": {"$ref": "#/components/schemas/Tabs"},
                    "note": {"type": "string"},
                },
                ["documentId"],
            ),
            "/small": write("createSmall", {"name": {"type": "string"}}, ["name"]),
            # a read whose response explodes: the envelope list, a total and a composite summary
            "/envelopes/status": {
                "get": {
                    "operationId": "listStatus",
                    "summary": "List envelope statuses.",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "object",
                                        "properties": {
                                            "envelopes": {
                                                "type": "array",
                                                "items": {"$ref": "#/components/schemas/S1"},
                                            },
                                            "totalSetSize": {"type": "string"},
                                            "composite": {"$ref": "#/components/schemas/S0"},
                                        },
                                    }
                                }
                            },
                        }
                    },
                }
            },
        },
    }


@pytest.fixture
def drafted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]) -> tuple[Path, str]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "envelopes.json").write_text(json.dumps(_spec()), encoding="utf-8")
    assert cli("init", "envelopes.json").exit_code == 0
    return tmp_path, (tmp_path / "intent_maps" / "envelopes.yaml").read_text(encoding="utf-8")


def test_init_hides_the_largest_optional_members_and_says_so(drafted: tuple[Path, str]) -> None:
    _, text = drafted
    tools = yaml.safe_load(text)["tools"]
    assert tools["create_envelope"]["hide"] == [
        "composite",
        "recipients",
    ]  # largest first; `subject` required
    assert tools["put_tabs"]["hide"] == ["tabs"]
    assert "hide" not in tools["create_small"]
    assert "# hide: 2 of the body's 4 members drafted hidden, largest first" in text
    assert "# Operations left out" not in text


def test_init_projects_a_response_too_large_whole_to_its_top_level_fields(
    drafted: tuple[Path, str], cli: Callable[..., Any]
) -> None:
    root, text = drafted
    tools = yaml.safe_load(text)["tools"]
    # `composite` alone is over the budget even one level deep (its anyOf branches stay on its level)
    assert tools["list_status"]["output"] == {"fields": ["envelopes", "totalSetSize"]}
    assert (
        "drafted as its 2 top-level fields, one level deep (left out, too large even so: composite)" in text
    )
    result = cli("build", "-q")
    assert result.exit_code == 0, result.stdout + result.stderr
    tools = {
        t["name"]: t for t in json.loads((root / "generated" / "envelopes" / "mcp.json").read_text("utf-8"))
    }
    assert set(tools["list_status"]["outputSchema"]["properties"]) == {"envelopes", "totalSetSize"}


def test_the_draft_builds_with_no_budget_raised_and_no_tool_too_large(
    drafted: tuple[Path, str], cli: Callable[..., Any]
) -> None:
    root, text = drafted
    assert "budgets" not in yaml.safe_load(text)
    result = cli("build", "-q")
    assert result.exit_code == 0, result.stdout + result.stderr
    report = (root / "generated" / "envelopes" / "REPORT.md").read_text(encoding="utf-8")
    assert "tool-too-large" not in report and "schema-too-large" not in report
    tools = {
        t["name"]: t for t in json.loads((root / "generated" / "envelopes" / "mcp.json").read_text("utf-8"))
    }
    assert set(tools["preview_create_envelope"]["inputSchema"]["properties"]) == {"subject", "status"}


def test_without_the_drafted_hide_the_tool_is_flagged(
    drafted: tuple[Path, str], cli: Callable[..., Any]
) -> None:
    root, text = drafted
    data = yaml.safe_load(text)
    del data["tools"]["put_tabs"]["hide"]
    (root / "intent_maps" / "envelopes.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    result = cli("lint", "intent_maps/envelopes.yaml")
    out = result.stdout + result.stderr
    assert "warning[tool-too-large]: tool `preview_put_tabs` is" in out
    assert "`hide: [tabs]`" in out


def test_drafted_intents_are_the_written_drafts_intents(drafted: tuple[Path, str]) -> None:
    """`drafted_intents` (what the blind search benchmark builds the too-large operations from) gives
    each operation's key and the intent members the written draft holds, `hide:` included."""
    from toolgen.compile.load import load_spec
    from toolgen.diagnostics import DiagnosticSink
    from toolgen.scaffold.init import drafted_intents

    folder, text = drafted
    written = yaml.safe_load(text)["tools"]
    quick = drafted_intents(load_spec(folder / "envelopes.json", sink=DiagnosticSink()), "envelopes")
    assert sorted(key for key, _ in quick.values()) == sorted(written)
    for key, intent in quick.values():
        for member in ("operation", "effect", "permission", "toolset", "hide"):
            assert intent.get(member) == written[key].get(member), (key, member)
    assert quick["/paths/~1envelopes/post"][1]["hide"] == ["composite", "recipients"]


def test_the_blind_benchmark_builds_left_out_operations_as_init_drafts_them(tmp_path: Path) -> None:
    """`benchmarks/tool_search.py`'s include-everything build: an operation the include group leaves
    out with `schema-too-large` is built from init's draft (its `hide:`), carrying the examples the
    map's top-level section gave it; every other tool is the include group's, unchanged."""
    from tests.support.benchmarks import benchmark_module

    bench = benchmark_module("tool_search")
    (tmp_path / "envelopes.json").write_text(json.dumps(_spec()), encoding="utf-8")
    extra = 'examples:\n  createEnvelope: ["send the contract to Ana for signing"]\n'
    built: dict[bool, dict[str, Any]] = {}
    for as_init in (False, True):
        (tmp_path / str(as_init)).mkdir()
        policy, _ = bench.build_package(
            tmp_path / "envelopes.json", "envelopes", tmp_path / str(as_init), extra, left_out_as_init=as_init
        )
        built[as_init] = {t["tool"]: t for t in policy["tools"]}
    made = {n: t for n, t in built[True].items() if t["operation"]["id"] == "createEnvelope"}
    assert not any(t["operation"]["id"] == "createEnvelope" for t in built[False].values())
    assert sorted(made) == ["preview_create_envelope", "record_create_envelope"]
    record = made["record_create_envelope"]
    assert record["examples"] == ["send the contract to Ana for signing"]
    assert [b["arg"] for b in record["request"]["bindings"]] == ["subject", "status"]  # the rest hidden
    assert {n: t for n, t in built[True].items() if n not in made} == built[False]
