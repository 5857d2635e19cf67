"""Programmatic callers (``allowed_callers``): the intent map's ``programmatic`` (or
``defaults.programmatic``) lets model-written code call a read tool or a preview tool; anthropic.json
then carries ``["direct", "code_execution_20260120"]`` and openai.responses.json ``["direct",
"programmatic"]``. A record tool or an approval-gated tool never does: a map that asks for it is
refused (``programmatic-record``, located), and the catalogs never emit it whatever the IR says.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.builder.build import ApiBuild, build_api
from toolgen.diagnostics import DiagnosticError
from toolgen.dialects import check_catalog, check_responses_catalog
from toolgen.dialects._base import allows_code_callers
from toolgen.dialects.anthropic import CODE_EXECUTION_TYPE

OK = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "w", "version": "1"},
    "paths": {
        f"/w{i}": {
            "get": {"operationId": f"get{i}", "responses": OK},
            "post": {
                "operationId": f"post{i}",
                "responses": OK,
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "properties": {"a": {"type": "string"}}}
                        }
                    },
                },
            },
        }
        for i in range(3)
    },
}
CODE = ["direct", CODE_EXECUTION_TYPE]
PROGRAMMATIC = ["direct", "programmatic"]


def _build(tmp: Path, intents: str) -> ApiBuild:
    (tmp / "spec.json").write_text(json.dumps(SPEC, indent=1), encoding="utf-8")
    intent = tmp / "w.yaml"
    intent.write_text(f"toolgen: 1\nspec: spec.json\napi: {{name: w}}\n{intents}", encoding="utf-8")
    return build_api(intent, tmp / "out", emit=("anthropic", "openai", "mcp", "policy"), base=tmp)


def _callers(built: ApiBuild) -> tuple[dict[str, Any], dict[str, Any]]:
    """Tool name -> allowed_callers (None: absent) in anthropic.json and in openai.responses.json."""
    anthropic = {e["name"]: e.get("allowed_callers") for e in built.catalogs["anthropic"]}
    responses: dict[str, Any] = {}
    for entry in built.catalogs.deferred.files.get("openai.responses.json", []):
        for fn in entry.get("tools", [entry]) if entry.get("type") == "namespace" else [entry]:
            if fn.get("type") == "function":
                responses[fn["name"]] = fn.get("allowed_callers")
    return anthropic, responses


MAP = """\
tools:
  get_w: {operation: get0, effect: read, permission: "w:read", programmatic: [read]}
  post_w:
    operation: post0
    effect: write
    permission: "w:write"
    approval: required
    idempotency: {key: action_id, send_as: none}
    programmatic: [preview]
  get_plain: {operation: get1, effect: read, permission: "w:read"}
"""


def test_reads_and_previews_may_be_called_from_code_records_never(tmp_path: Path) -> None:
    built = _build(tmp_path, MAP)
    anthropic, responses = _callers(built)
    assert anthropic == {"get_w": CODE, "preview_post_w": CODE, "record_post_w": None, "get_plain": None}
    assert responses == {
        "get_w": PROGRAMMATIC,
        "preview_post_w": PROGRAMMATIC,
        "record_post_w": None,
        "get_plain": None,
    }
    assert check_catalog("anthropic", built.catalogs["anthropic"]) == []
    assert (
        check_responses_catalog(built.catalogs.deferred.files["openai.responses.json"], max_tools=128) == []
    )
    policy_md = built.files["POLICY.md"].decode()
    assert "## Called from model-written code" in policy_md and "`get_w`, `preview_post_w`" in policy_md


def test_the_catalogs_pass_the_sdk_types(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    pytest.importorskip("openai")
    from anthropic.types import ToolParam
    from openai.types.responses import ToolParam as ResponsesToolParam
    from pydantic import TypeAdapter

    built = _build(tmp_path, MAP)
    for entry in built.catalogs["anthropic"]:
        TypeAdapter(ToolParam).validate_python(entry)
    for entry in built.catalogs.deferred.files["openai.responses.json"]:
        TypeAdapter(ResponsesToolParam).validate_python(entry)


def test_by_default_every_tool_is_called_directly(tmp_path: Path) -> None:
    built = _build(
        tmp_path, MAP.replace(", programmatic: [read]", "").replace("    programmatic: [preview]\n", "")
    )
    anthropic, responses = _callers(built)
    assert set(anthropic.values()) == {None} and responses == {}
    assert "model-written code" not in built.files["POLICY.md"].decode()
    assert (
        "openai.responses.json" not in built.catalogs.deferred.files
    )  # no toolset, nothing deferred or coded


def test_the_defaults_apply_to_include_groups(tmp_path: Path) -> None:
    built = _build(
        tmp_path,
        "defaults: {programmatic: [read, preview], approval_write: never}\n"
        'include: [{match: "*", permission: "w:all"}]\n',
    )
    anthropic, _ = _callers(built)
    coded = {name for name, callers in anthropic.items() if callers == CODE}
    assert coded and all(not name.startswith("record_") for name in coded)
    assert {name for name in anthropic if name.startswith(("get", "preview_"))} == coded


@pytest.mark.parametrize(
    ("intents", "line", "pointer"),
    [
        (
            MAP.replace("programmatic: [preview]", "programmatic: [preview, record]"),
            12,
            "/tools/post_w/programmatic",
        ),
        ("defaults: {programmatic: [record]}\n" + MAP, 4, "/defaults/programmatic"),
    ],
)
def test_a_map_that_lets_code_call_a_record_tool_is_refused(
    tmp_path: Path, intents: str, line: int, pointer: str
) -> None:
    with pytest.raises(DiagnosticError) as caught:
        _build(tmp_path, intents)
    refused = [d for d in caught.value.diagnostics if d.code == "programmatic-record"]
    assert refused and all(d.severity == "error" for d in refused)
    assert refused[0].location is not None and refused[0].location.file.endswith("w.yaml")
    assert (refused[0].location.line, refused[0].location.pointer) == (line, pointer)


def test_a_record_caller_carried_in_by_a_yaml_alias_or_merge_key_is_refused(tmp_path: Path) -> None:
    """The check reads the composed map: a ``programmatic`` list with ``record`` reaches an intent
    through an alias or a merge key (``<<: *base``) as surely as written out, and is refused there."""
    merged = """tools:
  base: &base
    operation: get0
    effect: read
    programmatic: &modes [read, preview, record]
  post_w:
    <<: *base
    operation: post0
    effect: write
    approval: never
    idempotency: {key: action_id, send_as: none}
  post_x:
    operation: post1
    effect: write
    approval: never
    idempotency: {key: k, send_as: none}
    programmatic: *modes
"""
    with pytest.raises(DiagnosticError) as caught:
        _build(tmp_path, merged)
    found = caught.value.diagnostics
    refused = sorted(d.message.split("`")[1] for d in found if d.code == "programmatic-record")
    assert refused == ["base", "post_w", "post_x"], found


def test_the_catalogs_refuse_a_record_tool_whatever_the_ir_says(tmp_path: Path) -> None:
    built = _build(tmp_path, MAP)
    tools = {t.name: t for t in built.ir.tools}
    record = replace(tools["record_post_w"], programmatic=True)
    assert not allows_code_callers(record)
    gated_read = replace(tools["get_w"], policy=replace(tools["get_w"].policy, approval="required"))
    assert not allows_code_callers(gated_read)
    assert allows_code_callers(tools["get_w"]) and allows_code_callers(tools["preview_post_w"])


def test_the_checks_refuse_unknown_callers() -> None:
    schema = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    tool = {"name": "t", "description": "d", "input_schema": schema}
    assert check_catalog("anthropic", [{**tool, "allowed_callers": CODE}]) == []
    for bad in (["programmatic"], [], ["direct", "direct"], "direct"):
        assert [v.rule for v in check_catalog("anthropic", [{**tool, "allowed_callers": bad}])] == [
            "F.2-allowed-callers"
        ], bad
    fn = {"type": "function", "name": "t", "description": "d", "parameters": schema, "strict": True}
    assert check_responses_catalog([{**fn, "allowed_callers": PROGRAMMATIC}]) == []
    for bad in ([CODE_EXECUTION_TYPE], [], ["programmatic", "programmatic"]):
        assert [v.rule for v in check_responses_catalog([{**fn, "allowed_callers": bad}])] == [
            "F.1-allowed-callers"
        ], bad


MODES = st.lists(st.sampled_from(["read", "preview"]), unique=True, max_size=2)


@st.composite
def _maps(draw: st.DrawFn) -> str:
    lines = [f"defaults: {{programmatic: {json.dumps(draw(MODES))}}}", "tools:"]
    for i in range(3):
        effect = draw(st.sampled_from(["read", "write", "destructive"]))
        approval = draw(st.sampled_from(["never", "required"]))
        own = draw(st.one_of(st.none(), MODES))
        op = f"get{i}" if effect == "read" else f"post{i}"
        extra = f", programmatic: {json.dumps(own)}" if own is not None else ""
        if effect == "read":
            lines.append(f'  t{i}: {{operation: {op}, effect: read, permission: "w:r"{extra}}}')
        else:
            preview = ", preview: false" if approval == "never" and draw(st.booleans()) else ""
            lines.append(
                f'  t{i}: {{operation: {op}, effect: {effect}, permission: "w:w", approval: {approval}, '
                f"idempotency: {{key: action_id, send_as: none}}{preview}{extra}}}"
            )
    return "\n".join(lines) + "\n"


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(intents=_maps())
def test_no_map_lets_code_call_a_record_or_an_approval_gated_tool(tmp_path: Path, intents: str) -> None:
    """Over random maps (effects, approvals, previews, `programmatic` per intent and in defaults), a tool
    that carries a programmatic caller in any catalog is a read or preview tool without approval."""
    built = _build(tmp_path, intents)
    rows = {t.name: t.policy for t in built.ir.tools}
    anthropic, responses = _callers(built)
    for name, callers in [*anthropic.items(), *responses.items()]:
        if callers is not None:
            assert rows[name].mode in ("read", "preview") and rows[name].approval == "never", (name, intents)
            assert callers in (CODE, PROGRAMMATIC)
        if rows[name].mode == "record" or rows[name].approval == "required":
            assert callers is None


def test_toolgen_diff_reports_code_callers_added_as_risky(tmp_path: Path) -> None:
    from tests.support.build import run

    from toolgen.review.diff import diff_surfaces
    from toolgen.review.diff_inputs import read_dir

    (tmp_path / "spec.json").write_text(json.dumps(SPEC, indent=1), encoding="utf-8")
    plain = MAP.replace(", programmatic: [read]", "").replace("    programmatic: [preview]\n", "")
    for name, body in (("old", plain), ("new", MAP)):
        intent = tmp_path / f"{name}.yaml"
        intent.write_text(f"toolgen: 1\nspec: spec.json\napi: {{name: w}}\n{body}", encoding="utf-8")
        assert run("build", str(intent), "--out", str(tmp_path / name), "-q").exit_code == 0
    widened = diff_surfaces(read_dir(tmp_path / "old"), read_dir(tmp_path / "new"))
    assert [(c.tool, c.kind, c.risky) for c in widened.changes] == [
        ("get_w", "code-callers-added", True),
        ("preview_post_w", "code-callers-added", True),
    ]
    narrowed = diff_surfaces(read_dir(tmp_path / "new"), read_dir(tmp_path / "old"))
    assert {(c.tool, c.kind, c.risky) for c in narrowed.changes} == {
        ("get_w", "code-callers-removed", False),
        ("preview_post_w", "code-callers-removed", False),
    }
