"""Resource bounds: schemas that explode when inlined and operations with thousands of parameters are
reported against the intent map's budgets (`budgets.max_schema_nodes`, `budgets.max_schema_depth`,
`budgets.max_parameters`), promptly and in bounded memory; never a hang or an exhausted machine.

An explicit tool over a budget is an error (exit 2, the budget named, nothing written); an operation
taken by an include group is skipped with a warning that says why, and the rest of the API builds.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import run
from tests.support.profiles import examples

from toolgen.compile.schema import limit_depth, project_schema, schema_nodes

MEMORY_LIMIT = 2 * 1024**3  # address space of the child build: far below what inlining these would take


def _spec(kind: str, n: int) -> dict[str, Any]:
    schemas: dict[str, Any] = {}
    body: dict[str, Any] = {"$ref": "#/components/schemas/S0"}
    params: list[dict[str, Any]] = []
    if kind == "wide":  # S0 = anyOf of n refs to S1, S1 = anyOf of n refs to S2, ...: n^8 nodes inlined
        for i in range(8):
            schemas[f"S{i}"] = (
                {"anyOf": [{"$ref": f"#/components/schemas/S{i + 1}"} for _ in range(n)]}
                if i < 7
                else {"type": "object", "properties": {"a": {"type": "string"}}}
            )
    elif kind == "deep":  # a chain of n nested objects
        for i in range(n):
            schemas[f"S{i}"] = (
                {"type": "object", "properties": {"next": {"$ref": f"#/components/schemas/S{i + 1}"}}}
                if i < n - 1
                else {"type": "string"}
            )
    elif kind == "params":
        params = [{"name": f"p{i}", "in": "query", "schema": {"type": "string"}} for i in range(n)]
        body = {"type": "object", "properties": {"x": {"type": "string"}}}
    big: dict[str, Any] = {
        "operationId": "big",
        "parameters": params,
        "requestBody": {"content": {"application/json": {"schema": body}}},
        "responses": {"204": {"description": "done"}},
    }
    return {
        "openapi": "3.0.3",
        "info": {"title": "budgets", "version": "1"},
        "paths": {
            "/big": {"post": big},
            "/small": {"get": {"operationId": "small", "responses": {"204": {"description": "ok"}}}},
        },
        "components": {"schemas": schemas},
    }


def _write(tmp: Path, kind: str, n: int, body: str) -> Path:
    spec = tmp / f"{kind}.json"
    spec.write_text(json.dumps(_spec(kind, n)), encoding="utf-8")
    intent = tmp / f"{kind}.yaml"
    intent.write_text(f"toolgen: 1\nspec: {spec.name}\napi: {{name: {kind}}}\n{body}", encoding="utf-8")
    return intent


def _build_bounded(intent: Path, out: Path) -> tuple[int, str, float]:
    """`toolgen build` in a child process with a memory cap; returns (exit code, stderr, seconds)."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    start = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgen",
            "build",
            str(intent),
            "--out",
            str(out),
            "-q",
            "--emit",
            "openai,anthropic,mcp,policy,report",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=cap,
        cwd=intent.parent,
    )
    return proc.returncode, proc.stderr, time.monotonic() - start


EXPLICIT = "tools:\n  big: {operation: big, effect: write, approval: required}\n"
INCLUDE = 'include: [{match: "*"}]\n'
CASES = [
    ("wide", 12, "schema-too-large", "budgets.max_schema_nodes"),
    ("deep", 400, "schema-too-large", "budgets.max_schema_depth"),
    ("params", 5000, "operation-too-many-parameters", "budgets.max_parameters"),
]


@pytest.mark.parametrize("kind,n,code,budget", CASES)
def test_explicit_tool_over_a_budget_is_a_located_error(
    tmp_path: Path, kind: str, n: int, code: str, budget: str
) -> None:
    intent = _write(tmp_path, kind, n, EXPLICIT)
    rc, err, seconds = _build_bounded(intent, tmp_path / "out")
    assert rc == 2, err
    assert f"error[{code}]" in err and budget in err and f"{kind}.json:" in err
    assert "Traceback" not in err and "nothing was written" in err
    assert not (tmp_path / "out").exists()
    assert seconds < 60


@pytest.mark.parametrize("kind,n,code,budget", CASES)
def test_include_group_skips_the_operation_with_a_warning(
    tmp_path: Path, kind: str, n: int, code: str, budget: str
) -> None:
    intent = _write(tmp_path, kind, n, INCLUDE)
    rc, err, seconds = _build_bounded(intent, tmp_path / "out")
    assert rc == 0, err
    assert seconds < 60
    report = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")
    assert "skipped, " in report and f"`{code}`" in report
    assert "`POST /big`" in report  # named among the operations not covered
    names = [t["name"] for t in json.loads((tmp_path / "out" / "mcp.json").read_text(encoding="utf-8"))]
    assert names == ["get_small"]


def test_budgets_are_configurable(tmp_path: Path) -> None:
    """The same operation builds once the intent map raises the budget, and fails when it is lowered."""
    intent = _write(tmp_path, "params", 600, "budgets: {max_parameters: 1000}\n" + EXPLICIT)
    result = run("build", str(intent), "--out", str(tmp_path / "out"), "-q", "--emit", "mcp,policy")
    assert result.exit_code == 0, result.output
    intent = _write(tmp_path, "wide", 3, "budgets: {max_schema_nodes: 100}\n" + EXPLICIT)
    result = run("build", str(intent), "--out", str(tmp_path / "out2"), "-q", "--emit", "mcp,policy")
    assert result.exit_code == 2 and "budget 100 nodes" in result.output, result.output
    intent = _write(tmp_path, "wide", 3, "budgets: {max_schema_nodes: 100000}\n" + EXPLICIT)
    result = run("build", str(intent), "--out", str(tmp_path / "out3"), "-q", "--emit", "mcp,policy")
    assert result.exit_code == 0, result.output


# --- limit_depth(max_nodes=...) decides exactly like counting the full result ---------------------


def _schemas() -> st.SearchStrategy[dict[str, Any]]:
    leaf: st.SearchStrategy[dict[str, Any]] = st.sampled_from(
        [
            {"type": "string"},
            {"type": "integer"},
            {},
            {"type": ["string", "null"]},
            {"$ref": "#/$defs/R"},
            {"type": "array"},
            {"type": "object"},
        ]
    )
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.builds(
                lambda p: {"type": "object", "properties": p},
                st.dictionaries(st.sampled_from("abcdef"), inner, max_size=4),
            ),
            st.builds(lambda i: {"type": "array", "items": i}, inner),
            st.builds(lambda b: {"anyOf": b}, st.lists(inner, min_size=1, max_size=3)),
            st.builds(lambda n, t: {"not": n, "type": t}, inner, st.sampled_from(["object", "string"])),
            st.builds(lambda a: {"type": "object", "additionalProperties": a}, inner),
        ),
        max_leaves=25,
    )


@settings(max_examples=examples(200), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(body=_schemas(), recursive=_schemas(), depth=st.integers(1, 4), cap=st.integers(0, 60))
def test_limit_depth_with_a_node_budget_matches_counting(
    body: dict[str, Any], recursive: dict[str, Any], depth: int, cap: int
) -> None:
    schema = {
        **body,
        "$defs": {"R": {"type": "object", "properties": {"self": {"$ref": "#/$defs/R"}, "v": recursive}}},
    }
    full = limit_depth(schema, depth)
    bounded = limit_depth(schema, depth, max_nodes=cap)
    if schema_nodes(full) > cap:
        assert bounded is None
    else:
        assert bounded == full


@settings(max_examples=examples(200), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    members=st.dictionaries(st.sampled_from("abcd"), _schemas(), min_size=1, max_size=4),
    recursive=_schemas(),
    depth=st.integers(1, 4),
    data=st.data(),
)
def test_projecting_with_a_cut_is_projecting_then_cutting(
    members: dict[str, Any], recursive: dict[str, Any], depth: int, data: st.DataObject
) -> None:
    """`project_schema(depth=...)` cuts kept fields while copying them: the same schema as cutting the
    whole projection afterwards (what the build did before), and None once over `max_nodes`."""
    schema = {
        "type": "object",
        "properties": members,
        "$defs": {"R": {"type": "object", "properties": {"self": {"$ref": "#/$defs/R"}, "v": recursive}}},
    }
    fields = data.draw(st.lists(st.sampled_from(sorted(members)), min_size=1, unique=True))
    expected = limit_depth(project_schema(schema, fields), depth)
    cut = project_schema(schema, fields, depth=depth)
    assert cut == expected
    assert project_schema(schema, fields, depth=depth, max_nodes=100_000) == cut
    assert project_schema(schema, fields, depth=depth, max_nodes=0) is None  # a kept field builds a node


# --- the node budget applies to the body as the model sees it -------------------------------------


def _write_members(tmp: Path, body: str) -> Path:
    """`big`'s body: a small required member, a small optional one, and `huge`, an optional member
    that would expand to 12^7 (35 million) nodes inlined."""
    spec = _spec("wide", 12)
    spec["paths"]["/big"]["post"]["requestBody"]["required"] = True
    spec["paths"]["/big"]["post"]["requestBody"]["content"]["application/json"]["schema"] = {
        "type": "object",
        "required": ["title"],
        "properties": {
            "title": {"type": "string"},
            "note": {"type": "string"},
            "huge": {"$ref": "#/components/schemas/S0"},
        },
    }
    (tmp / "members.json").write_text(json.dumps(spec), encoding="utf-8")
    intent = tmp / "members.yaml"
    intent.write_text(f"toolgen: 1\nspec: members.json\napi: {{name: members}}\n{body}", encoding="utf-8")
    return intent


@pytest.mark.parametrize("narrowing", ["hide: [huge]", "args: {huge: {hide: true}}"])
def test_hiding_the_member_that_explodes_builds_without_raising_the_budget(
    tmp_path: Path, narrowing: str
) -> None:
    """The budget counts what the model sees: hiding the one huge member (by wire name, or its argument)
    is enough, and the hidden member is never expanded (the child's memory is capped far below it)."""
    intent = _write_members(
        tmp_path, f"tools:\n  big: {{operation: big, effect: write, approval: required, {narrowing}}}\n"
    )
    rc, err, seconds = _build_bounded(intent, tmp_path / "out")
    assert rc == 0, err
    assert seconds < 60
    tools = json.loads((tmp_path / "out" / "mcp.json").read_text(encoding="utf-8"))
    preview = next(t for t in tools if t["name"] == "preview_big")
    assert set(preview["inputSchema"]["properties"]) == {"title", "note"}


def test_a_body_over_the_budget_names_the_members_to_hide(tmp_path: Path) -> None:
    intent = _write_members(tmp_path, EXPLICIT)
    rc, err, seconds = _build_bounded(intent, tmp_path / "out")
    assert rc == 2, err
    assert "error[schema-too-large]" in err and "members.json:" in err and "budget 20,000 nodes" in err
    hint = err[err.index("hint:") :]
    assert "largest: huge (" in hint and "title" not in hint.split("largest:")[1]  # required: not to hide
    assert seconds < 60


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(alphabet="abcé ж-_.", max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(alphabet="abcé.", max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=examples(200), deadline=None, database=None)
@given(value=_JSON)
def test_json_size_is_the_compact_json_length(value: Any) -> None:
    """`json_size` counts the bytes of the compact JSON (no escapes in these strings), sharing or not."""
    from toolgen.compile.schema import json_size
    from toolgen.emit import compact_json

    expected = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    assert json_size(value, {}) == expected
    assert json_size([value, value], {}) == len(compact_json([value, value]).encode("utf-8"))


# --- the output budget counts the output as the model sees it (after output.fields) ----------------


def _response_spec(kind: str) -> dict[str, Any]:
    """GET /big answers an object: `id`, `detail` (with kind "wide", S0: 12^8 nodes once inlined) and
    100 plain string members."""
    spec = _spec("wide", 12)
    props: dict[str, Any] = {"id": {"type": "string"}, "detail": {"$ref": "#/components/schemas/S0"}}
    props.update({f"p{i}": {"type": "string"} for i in range(100)})
    if kind == "plain":
        del props["detail"]
    spec["paths"]["/big"] = {
        "get": {
            "operationId": "big",
            "responses": {
                "200": {
                    "description": "ok",
                    "content": {"application/json": {"schema": {"type": "object", "properties": props}}},
                }
            },
        }
    }
    return spec


def _write_response(tmp: Path, kind: str, body: str) -> Path:
    (tmp / f"{kind}.json").write_text(json.dumps(_response_spec(kind)), encoding="utf-8")
    intent = tmp / f"{kind}.yaml"
    intent.write_text(f"toolgen: 1\nspec: {kind}.json\napi: {{name: {kind}}}\n{body}", encoding="utf-8")
    return intent


def _output_schema(out: Path, tool: str) -> dict[str, Any]:
    catalog = json.loads((out / "mcp.json").read_text(encoding="utf-8"))
    return next(t["outputSchema"] for t in catalog if t["name"] == tool)


@pytest.mark.parametrize("output", ["{fields: [id]}", "{fields: [id, p1], depth: 3}", None])
def test_a_response_too_large_whole_builds_once_projected(tmp_path: Path, output: str | None) -> None:
    """The response expands to billions of nodes: the build neither fails on it nor expands it, as
    long as the output the model sees (projected, or cut to the levels that fit) is in budget."""
    line = f", output: {output}" if output else ""
    intent = _write_response(tmp_path, "wide", f"tools:\n  big: {{operation: big, effect: read{line}}}\n")
    rc, err, seconds = _build_bounded(intent, tmp_path / "out")
    assert rc == 0, err
    assert seconds < 60
    schema = _output_schema(tmp_path / "out", "big")
    assert schema_nodes(schema) <= 20_000
    assert ("p0" in schema["properties"]) is (output is None)
    assert "id" in schema["properties"]


def test_a_kept_field_that_explodes_is_a_located_error_without_expanding_it(tmp_path: Path) -> None:
    intent = _write_response(
        tmp_path, "wide", "tools:\n  big: {operation: big, effect: read, output: {fields: [id, detail]}}\n"
    )
    rc, err, seconds = _build_bounded(intent, tmp_path / "out")
    assert rc == 2, err
    assert seconds < 60 and "Traceback" not in err
    assert "error[schema-too-large]" in err and "more than 20,000 nodes" in err
    assert (
        "#/paths/~1big/get/responses/200/content/application~1json/schema" in err and "output.fields" in err
    )


def test_the_output_budget_applies_after_projection(tmp_path: Path) -> None:
    """101 members are over a budget of 50 nodes; two of them fit. The error names the response's
    pointer and the remedy."""
    budget = "budgets: {max_schema_nodes: 50}\n"
    intent = _write_response(tmp_path, "plain", budget + "tools:\n  big: {operation: big, effect: read}\n")
    result = run("build", str(intent), "--out", str(tmp_path / "out"), "-q", "--emit", "mcp,policy")
    assert result.exit_code == 2, result.output
    assert "error[schema-too-large]" in result.output and "budget 50 nodes" in result.output
    assert "output.fields" in result.output and "plain.json:" in result.output
    intent = _write_response(
        tmp_path,
        "plain",
        budget + "tools:\n  big: {operation: big, effect: read, output: {fields: [id, p1]}}\n",
    )
    result = run("build", str(intent), "--out", str(tmp_path / "out2"), "-q", "--emit", "mcp,policy")
    assert result.exit_code == 0, result.output
    assert set(_output_schema(tmp_path / "out2", "big")["properties"]) == {"id", "p1"}
