"""Provider limits known before the work: a deferred Anthropic catalog over the tool-search limit is
split into parts by toolset, each a request catalog within the limit; what no split can meet (one
toolset, or the eager tools, over the limit) is a located lint error found on the IR, before any
catalog is built, never an internal error after minutes of emitting.

Anthropic's tool search carries at most 10,000 tools (docs/provider-rules.md F.2). The real case
(an API of 11,000+ operations, every toolset deferred) takes minutes to build; here the limit is
lowered for the test (`DialectOptions.anthropic_search_limit`: the same code path), and one test
builds the real-size shape (5,001 writes in one toolset, 10,004 tools with the tool-search tool) to
see the error arrive without building catalogs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.benchmarks import benchmark_module
from tests.support.build import run

from toolgen.builder.build import build_api
from toolgen.builder.output_files import Output, write_outputs
from toolgen.compile.ir import Tool
from toolgen.diagnostics import DiagnosticError
from toolgen.dialects import DialectOptions, check_deferred, deferred_views
from toolgen.dialects._parts import plan_namespaces, plan_parts
from toolgen.dialects.anthropic import ANTHROPIC_MAX_SEARCH_TOOLS, check_anthropic_catalog
from toolgen.search.tool import openai_search_function


def _spec(writes: int, kinds: int = 1) -> dict[str, Any]:
    """`writes` POST operations spread over `kinds` tags (``kind0``, ``kind1``, ...) and a ping."""
    paths: dict[str, Any] = {
        f"/things{i}": {
            "post": {
                "operationId": f"create_thing_{i}",
                "summary": f"Create a thing of kind {i}.",
                "tags": [f"kind{i % kinds}"],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "properties": {"name": {"type": "string"}}}
                        }
                    }
                },
                "responses": {"201": {"description": "created"}},
            }
        }
        for i in range(writes)
    }
    paths["/ping"] = {
        "get": {
            "operationId": "ping",
            "summary": "Check the API is up.",
            "tags": ["core"],
            "responses": {"204": {"description": "up"}},
        }
    }
    return {"openapi": "3.0.3", "info": {"title": "many", "version": "1"}, "paths": paths}


ONE_TOOLSET = """toolgen: 1
spec: many.json
api: {name: many}
toolsets:
  core: {description: Health checks., loading: eager}
  things: {description: The things., loading: deferred}
include:
  - {match: ping, toolset: core}
  - {match: "*", toolset: things}
"""

#: every tag its own toolset, deferred (what `toolgen init` drafts for a large API)
BY_TAG = """toolgen: 1
spec: many.json
api: {name: many}
toolsets:
  core: {description: Health checks., loading: eager}
  kind0: {description: Things of kind 0., loading: deferred}
  kind1: {description: Things of kind 1., loading: deferred}
  kind2: {description: Things of kind 2., loading: deferred}
  kind3: {description: Things of kind 3., loading: deferred}
include:
  - {match: ping, toolset: core}
  - {match: "*", toolset: from_tag}
"""


def _write(tmp: Path, writes: int, intents: str = ONE_TOOLSET, kinds: int = 1) -> Path:
    (tmp / "many.json").write_text(json.dumps(_spec(writes, kinds)), encoding="utf-8")
    intent = tmp / "many.yaml"
    intent.write_text(intents, encoding="utf-8")
    return intent


def _build(
    intent: Path,
    out: Path,
    limit: int,
    emit: tuple[Any, ...] = ("anthropic", "mcp", "policy", "report"),
    responses: int = 128,
) -> dict[str, bytes]:
    built = build_api(
        intent,
        out,
        emit=emit,
        base=intent.parent,
        dialect_options=DialectOptions(anthropic_search_limit=limit, responses_limit=responses),
    )
    assert not built.errors, built.errors
    write_outputs([Output(out, built.files)])
    return built.files


def test_the_default_limit_is_the_providers() -> None:
    assert DialectOptions().anthropic_search_limit == ANTHROPIC_MAX_SEARCH_TOOLS == 10_000


def test_over_the_limit_the_catalog_is_split_by_toolset_within_the_limit(tmp_path: Path) -> None:
    """12 writes over 4 tags: 24 deferred tools in 4 toolsets of 6, 1 eager tool; 10 tools per
    request leave room for 8 deferred ones: one toolset per part."""
    intent = _write(tmp_path, 12, BY_TAG, kinds=4)
    files = _build(intent, tmp_path / "out", 10)
    assert "anthropic.json" not in files
    index = json.loads(files["anthropic.parts.json"])
    assert index["limit"] == 10 and index["every_part"] == 2 and index["source"].startswith("F.2")
    assert [p["toolsets"] for p in index["parts"]] == [["kind0"], ["kind1"], ["kind2"], ["kind3"]]
    policy = json.loads(files["policy.json"])
    toolset_of = {row["tool"]: row["toolset"] for row in policy["tools"]}
    seen: list[str] = []
    for k, part in enumerate(index["parts"], 1):
        assert part["file"] == f"anthropic.{k}.json"
        catalog = json.loads(files[part["file"]])
        assert len(catalog) == part["tools"] <= 10
        assert check_anthropic_catalog(catalog, max_search_tools=10) == []
        assert catalog[-1]["type"] == "tool_search_tool_bm25_20251119"
        tools = [e["name"] for e in catalog[:-1]]
        assert "get_ping" in tools and all(
            "defer_loading" not in e for e in catalog if e["name"] == "get_ping"
        )
        deferred = [e["name"] for e in catalog if e.get("defer_loading") is True]
        assert {toolset_of[t] for t in deferred} == set(part["toolsets"])
        seen += deferred
    assert sorted(seen) == sorted(t for t, s in toolset_of.items() if s != "core")  # each exactly once
    report = files["REPORT.md"].decode()
    assert "anthropic.1.json" in report and "4 parts" in report
    assert "catalog-provider-limit" not in report


def test_toolsets_share_a_part_while_they_fit(tmp_path: Path) -> None:
    """20 tools per request: 18 deferred tools fit, so three toolsets of 6 share the first part."""
    intent = _write(tmp_path, 12, BY_TAG, kinds=4)
    index = json.loads(_build(intent, tmp_path / "out", 20)["anthropic.parts.json"])
    assert [p["toolsets"] for p in index["parts"]] == [["kind0", "kind1", "kind2"], ["kind3"]]
    assert [p["tools"] for p in index["parts"]] == [20, 8]


def test_a_responses_catalog_over_its_limit_is_split_by_namespace(tmp_path: Path) -> None:
    """3 top-level entries per request: the eager namespace `core` and `tool_search` are in every
    part, so each part holds one namespace of deferred functions."""
    from toolgen.dialects import check_responses_catalog

    intent = _write(tmp_path, 12, BY_TAG, kinds=4)
    files = _build(intent, tmp_path / "out", 10_000, emit=("openai", "policy", "report"), responses=3)
    assert "openai.responses.json" not in files
    index = json.loads(files["openai.responses.parts.json"])
    assert index["every_part"] == 2 and [p["toolsets"] for p in index["parts"]] == [
        [f"kind{k}"] for k in range(4)
    ]
    for k in range(1, len(index["parts"]) + 1):
        catalog = json.loads(files[f"openai.responses.{k}.json"])
        assert [e.get("name", e["type"]) for e in catalog] == ["core", f"kind{k - 1}", "tool_search"]
        assert check_responses_catalog(catalog, max_tools=3) == []
    assert "`openai.responses` catalog is split into 4 parts" in files["REPORT.md"].decode()
    result = run(
        "catalog",
        str(tmp_path / "out"),
        "--dialect",
        "openai.responses",
        "--scopes",
        "many:write",
        "--toolset",
        "kind3",
    )
    assert result.exit_code == 0, result.output
    assert [e.get("name", e["type"]) for e in json.loads(result.output)] == ["kind3", "tool_search"]


def test_under_the_limit_the_catalog_is_one_file(tmp_path: Path) -> None:
    intent = _write(tmp_path, 5)  # 10 + 1 + the tool-search tool: 12
    files = _build(intent, tmp_path / "out", 12, emit=("anthropic", "policy"))
    assert len(json.loads(files["anthropic.json"])) == 12
    assert "anthropic.parts.json" not in files and "anthropic.1.json" not in files


def test_split_catalogs_conform_to_the_sdk_types(tmp_path: Path) -> None:
    """Every part and every other emitted catalog validates with the providers' official SDK types."""
    pytest.importorskip("anthropic")
    pytest.importorskip("openai")

    corpuslib = benchmark_module("corpuslib")
    check_catalog = corpuslib.check_catalog

    intent = _write(tmp_path, 12, BY_TAG, kinds=4)
    files = _build(intent, tmp_path / "out", 10, emit=("openai", "anthropic", "mcp", "policy"))
    files = _build(intent, tmp_path / "out2", 10, emit=("openai", "anthropic", "mcp", "policy"), responses=3)
    checked = []
    for name, data in sorted(files.items()):
        stem = name[:-5]
        dialect = stem.rsplit(".", 1)[0] if stem.rsplit(".", 1)[-1].isdigit() else stem
        if dialect not in ("openai", "openai.responses", "anthropic", "mcp"):
            continue
        result = check_catalog(dialect, json.loads(data))
        assert result.failures == [], (name, result.failures[:3])
        checked.append(name)
    assert checked == [
        "anthropic.1.json",
        "anthropic.2.json",
        "anthropic.3.json",
        "anthropic.4.json",
        "mcp.json",
        "openai.json",
        "openai.responses.1.json",
        "openai.responses.2.json",
        "openai.responses.3.json",
        "openai.responses.4.json",
    ]


def test_one_toolset_over_the_limit_is_a_located_error_before_any_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = _write(tmp_path, 6)  # 6 writes: 12 deferred tools in `things`, 1 eager, the tool-search tool: 14

    def no_catalogs(*_: Any, **__: Any) -> Any:
        raise AssertionError("catalogs were built although a provider limit already refuses them")

    monkeypatch.setattr("toolgen.builder.build.build_catalogs", no_catalogs)
    with pytest.raises(DiagnosticError) as caught:
        build_api(
            intent, tmp_path / "out", base=tmp_path, dialect_options=DialectOptions(anthropic_search_limit=12)
        )
    [found] = caught.value.diagnostics
    assert found.code == "catalog-provider-limit" and found.severity == "error"
    assert found.location is not None
    assert (found.location.file, found.location.line, found.location.col) == ("many.yaml", 6, 3)
    assert found.location.pointer == "/toolsets/things"
    assert "toolset 'things' has 12 deferred tools" in found.message and "carry 14" in found.message
    assert found.hint is not None and "give part of its intents" in found.hint and "--emit" in found.hint
    assert not (tmp_path / "out").exists()


def test_too_many_eager_tools_say_to_defer_more(tmp_path: Path) -> None:
    intent = _write(
        tmp_path,
        6,
        ONE_TOOLSET.replace(
            "things: {description: The things., loading: deferred}",
            "things: {description: The things., loading: eager}",
        ).replace(
            "core: {description: Health checks., loading: eager}",
            "core: {description: Health checks., loading: deferred}",
        ),
    )
    with pytest.raises(DiagnosticError) as caught:
        build_api(
            intent, tmp_path / "out", base=tmp_path, dialect_options=DialectOptions(anthropic_search_limit=12)
        )
    [found] = caught.value.diagnostics
    assert "12 eager tools" in found.message and found.hint is not None and "defer more tools" in found.hint


def test_lint_reports_the_limit_without_building_catalogs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolgen.compile.intent import load_intent_map
    from toolgen.compile.load import load_spec
    from toolgen.compile.lower import lower
    from toolgen.diagnostics import DiagnosticSink
    from toolgen.review.lint import LintInput, lint_api

    intent = _write(tmp_path, 6)

    def no_catalogs(*_: Any, **__: Any) -> Any:
        raise AssertionError("lint built catalogs although a provider limit already refuses them")

    monkeypatch.setattr("toolgen.review.lint.lint_context.build_catalogs", no_catalogs)
    loaded = load_intent_map(intent)
    sink = DiagnosticSink()
    doc = load_spec(tmp_path / "many.json", sink=sink)
    ir = lower(doc, loaded, sink, "many")
    found = lint_api(LintInput(doc, loaded, ir, [], options=DialectOptions(anthropic_search_limit=12)))
    assert [d.code for d in found if d.severity == "error"] == ["catalog-provider-limit"]


def test_without_the_anthropic_catalog_the_build_goes_through(tmp_path: Path) -> None:
    """`--emit` leaving Anthropic out: no preflight error, no conformance failure."""
    intent = _write(tmp_path, 6)
    files = _build(intent, tmp_path / "out", 12, emit=("openai", "mcp", "gemini", "policy", "report"))
    assert not any(name.startswith("anthropic") for name in files)
    assert len(json.loads(files["mcp.json"])) == 13
    assert "catalog-provider-limit" not in files["REPORT.md"].decode()


def test_toolgen_catalog_finds_the_parts(tmp_path: Path) -> None:
    intent = _write(tmp_path, 12, BY_TAG, kinds=4)
    out = tmp_path / "out"
    _build(intent, out, 10)
    result = run("catalog", str(out), "--dialect", "anthropic", "--scopes", "many:write")
    assert result.exit_code == 2 and "split into 4 parts" in result.output and "--toolset" in result.output
    result = run(
        "catalog",
        str(out),
        "--dialect",
        "anthropic",
        "--scopes",
        "many:read,many:write",
        "--toolset",
        "kind2",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == json.loads((out / "anthropic.3.json").read_text(encoding="utf-8"))
    result = run("catalog", str(out), "--dialect", "anthropic", "--scopes", "many:read", "--part", "1")
    assert result.exit_code == 0, result.output
    assert [e["name"] for e in json.loads(result.output)] == ["get_ping", "tool_search_tool_bm25"]
    result = run("catalog", str(out), "--dialect", "anthropic", "--scopes", "", "--toolset", "nope")
    assert result.exit_code == 2 and "kind0" in result.output


@pytest.mark.slow  # lowers 10,002 tools; the small-limit tests above cover the same rule fast
def test_the_real_limit_is_refused_in_seconds(tmp_path: Path) -> None:
    """10,002 deferred tools (5,001 writes) in one toolset: the error comes after lowering, before
    the minutes that building four catalogs of 10,003 tools would take."""
    intent = _write(tmp_path, 5001)
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "toolgen", "build", str(intent), "--out", str(tmp_path / "out")],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    seconds = time.monotonic() - start
    assert proc.returncode == 2, proc.stderr
    assert "many.yaml:6:3 (#/toolsets/things): error[catalog-provider-limit]" in proc.stderr
    assert "10,004" in proc.stderr and "Traceback" not in proc.stderr and not (tmp_path / "out").exists()
    assert seconds < 120


@pytest.mark.slow  # lowers 10,002 tools; the small-limit tests above cover the same rule fast
def test_turning_the_rule_off_does_not_turn_the_limit_into_an_internal_error(tmp_path: Path) -> None:
    intent = _write(tmp_path, 5001)
    (tmp_path / "toolgen.yaml").write_text(
        "toolgen: 1\napis:\n  - {name: many, intent_map: many.yaml, out: out}\nschema_out: null\n"
        "lint:\n  severity: {catalog-provider-limit: 'off'}\n",
        encoding="utf-8",
    )
    result = run("build", "--project", str(tmp_path / "toolgen.yaml"))
    assert result.exit_code == 2, result.output
    assert "error[catalog-provider-limit]" in result.output and "internal error" not in result.output
    assert intent.exists() and not (tmp_path / "out").exists()


def _tool(name: str, toolset: str | None, deferred: bool) -> Tool:
    """What `plan_parts` reads of a tool: its name, toolset and loading (the views: whether code calls it)."""
    policy = SimpleNamespace(toolset=toolset, loading="deferred" if deferred else "eager")
    return cast(Tool, SimpleNamespace(name=name, policy=policy, programmatic=False))


@given(
    st.lists(st.tuples(st.sampled_from([None, "a", "b", "c", "d", "e"]), st.booleans()), max_size=60),
    st.integers(min_value=2, max_value=30),
)
def test_plan_parts_keeps_toolsets_whole_and_parts_within_the_limit(
    spec: list[tuple[str | None, bool]], limit: int
) -> None:
    tools = [_tool(f"t{i}", toolset, deferred) for i, (toolset, deferred) in enumerate(spec)]
    plan = plan_parts(tools, limit)
    assert plan == plan_parts(tools, limit)  # deterministic
    deferred = [t for t in tools if t.policy.loading == "deferred"]
    held = [name for part in plan.parts for name in part.tools]
    assert sorted(held) == sorted(t.name for t in deferred)  # every deferred tool exactly once
    order = [name for part in plan.parts for name in part.toolsets]
    assert len(order) == len(set(order))  # a toolset is never cut
    assert order == sorted(order, key=lambda n: (n is not None, n or ""))
    over = {name for name, _ in plan.over}
    for part in plan.parts:
        if not over.intersection(part.toolsets):
            assert plan.sent(part) <= limit or not part.tools
    if deferred and len(deferred) + plan.fixed <= limit:
        assert not plan.split


def test_a_rebuild_replaces_the_parts_of_an_earlier_split(tmp_path: Path) -> None:
    """The parts are toolgen's files: a folder holding them is replaced, not refused as foreign."""
    from toolgen.builder.output_files import check_destinations

    intent = _write(tmp_path, 12, BY_TAG, kinds=4)
    out = tmp_path / "out"
    _build(intent, out, 10, emit=("openai", "anthropic", "policy"), responses=3)
    assert (out / "anthropic.4.json").exists() and (out / "openai.responses.parts.json").exists()
    built = build_api(intent, out, emit=("openai", "anthropic", "policy"), base=tmp_path)
    assert check_destinations([Output(out, built.files)], [intent, tmp_path / "many.json"]) == []
    write_outputs([Output(out, built.files)])
    assert sorted(p.name for p in out.iterdir()) == [
        "POLICY.md",
        "anthropic.json",
        "openai.json",
        "openai.responses.json",
        "policy.json",
        "search.json",
    ]


@given(
    st.lists(st.tuples(st.sampled_from([None, "a", "b", "c", "d", "e"]), st.booleans()), max_size=60),
    st.integers(min_value=2, max_value=8),
)
def test_plan_namespaces_repeats_what_every_request_needs(
    spec: list[tuple[str | None, bool]], limit: int
) -> None:
    """Functions of no toolset and namespaces with an eager function are in every part; the other
    namespaces are each in exactly one; a part is over the limit only when the repeated entries are."""
    tools = [_tool(f"t{i}", toolset, deferred) for i, (toolset, deferred) in enumerate(spec)]
    plan = plan_namespaces(tools, limit)
    eager_sets = {t for t, deferred in spec if t is not None and not deferred}
    deferred_sets = {t for t, _ in spec if t is not None} - eager_sets
    loose = sum(1 for t, _ in spec if t is None)
    assert plan.fixed == loose + len(eager_sets) + (1 if any(d for _, d in spec) else 0)
    placed = [name for part in plan.parts for name in part.toolsets]
    assert sorted(placed, key=str) == sorted(deferred_sets, key=str)
    for part in plan.parts:
        assert part.size == len(part.toolsets)
        assert plan.sent(part) <= limit or plan.fixed + 1 > limit or not plan.split


def test_the_generated_package_reads_a_part_by_toolset(tmp_path: Path) -> None:
    intent = _write(tmp_path, 12, BY_TAG, kinds=4)
    out = tmp_path / "many_pkg"
    _build(intent, out, 10, emit=("anthropic", "mcp", "policy", "python"))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import json, many_pkg as p\n"
                "part = p.catalog('anthropic', toolset='kind1')\n"
                "print(json.dumps([len(part), len(p.catalog('anthropic', part=4)), len(p.catalog())]))\n"
                "try:\n    p.catalog('anthropic')\nexcept ValueError as exc:\n    print(exc)\n"
            ),
        ],
        check=False,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    sizes, refusal = proc.stdout.splitlines()
    assert json.loads(sizes) == [8, 8, 25]  # get_ping, 6 deferred tools, the tool-search tool; mcp.json whole
    assert "split into 4 parts" in refusal and "anthropic.parts.json" in refusal


def test_deferred_chat_and_gemini_catalogs_are_counted_as_a_client_sends_them(tmp_path: Path) -> None:
    """65 writes deferred: 131 tools in openai.json and gemini.json (the pools), but a request carries
    the eager entry and `search_tools`: neither is over 128 tools per request."""
    intent = _write(tmp_path, 65)
    built = build_api(intent, tmp_path / "out", emit=("openai", "gemini", "policy"), base=tmp_path)
    limits = [d.message for d in built.diagnostics if d.code == "catalog-request-limits"]
    assert not any("openai" in m or "gemini" in m for m in limits), limits
    assert len(json.loads(built.files["openai.json"])) == len(json.loads(built.files["gemini.json"])) == 131
    views = built.catalogs.deferred
    assert [e["function"]["name"] for e in views.upfront["openai"]] == ["get_ping", "search_tools"]
    assert [e["name"] for e in views.upfront["gemini"]] == ["get_ping", "search_tools"]
    assert check_deferred(views, request_limits=True) == []


EAGER_AND_DEFERRED = """toolgen: 1
spec: many.json
api: {name: many}
toolsets:
  core: {description: Health checks., loading: eager}
  kind0: {description: Things of kind 0., loading: eager}
  kind1: {description: Things of kind 1., loading: deferred}
include:
  - {match: ping, toolset: core}
  - {match: "*", toolset: from_tag}
"""


def test_eager_tools_alone_over_128_are_still_reported_for_chat_and_gemini(tmp_path: Path) -> None:
    """130 writes over two tags: kind0 eager (65 writes, 130 tools), kind1 deferred. The up-front
    views carry 130 + get_ping + search_tools = 132 entries: a lint warning for both dialects (not a
    build error), and `check_deferred` with the request limits names A.1 and C.1."""
    intent = _write(tmp_path, 130, EAGER_AND_DEFERRED, kinds=2)
    built = build_api(intent, tmp_path / "out", emit=("openai", "gemini", "policy"), base=tmp_path)
    assert not built.errors, built.errors
    limits = [d for d in built.diagnostics if d.code == "catalog-request-limits"]
    for name in ("openai", "gemini"):
        assert any(
            d.message.startswith(f"the {name} catalog has 132 tools") and d.severity == "warning"
            for d in limits
        ), [d.message for d in limits]
    views = built.catalogs.deferred
    assert len(views.upfront["openai"]) == len(views.upfront["gemini"]) == 132
    rules = {(v.dialect, v.rule) for v in check_deferred(views, request_limits=True)}
    assert {("openai", "A.1-max-tools"), ("gemini", "C.1-max-tools")} <= rules, rules
    assert not any(v.rule.endswith("max-tools") for v in check_deferred(views))  # the build leaves it to lint


def _chat_entry(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": "d",
            "strict": True,
            "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
        },
    }


@given(st.lists(st.tuples(st.sampled_from([None, "a", "b"]), st.booleans()), max_size=200))
def test_the_upfront_chat_view_is_the_eager_functions_and_search_tools(
    spec: list[tuple[str | None, bool]],
) -> None:
    """Whatever the eager/deferred mix: with a deferred tool, the Chat Completions request carries the
    eager functions in catalog order then `search_tools`, within 128 exactly when at most 127 are
    eager; without one, the whole catalog (no search function)."""
    tools = [_tool(f"t{i}", toolset, deferred) for i, (toolset, deferred) in enumerate(spec)]
    catalog = [_chat_entry(t.name) for t in tools]
    views = deferred_views(tools, {"openai": catalog}, [])
    sent = views.request_view("openai", catalog)
    eager = [t.name for t in tools if t.policy.loading == "eager"]
    if views.deferred:
        assert [e["function"]["name"] for e in sent] == [*eager, "search_tools"]
        assert sent[-1] == openai_search_function(views.searchable)
        over = {v.rule for v in check_deferred(views, request_limits=True) if v.dialect == "openai"}
        assert ("A.1-max-tools" in over) is (len(eager) > 127)
        assert over <= {"A.1-max-tools"}, over
    else:
        assert sent == catalog
