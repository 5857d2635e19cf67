"""The tool-search index built at `toolgen build` time (`search.json`): byte-identical across hash
seeds, the same documents the runtime would derive itself, really loaded by `ToolIndex.from_dir`
(a tampered file changes the ranking), and a clean fallback when it is absent or broken."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.cli import main
from toolgen.pointer import join_pointer
from toolgen.runtime import Actor, Registry
from toolgen.runtime.serving.search_tools import ToolSearch
from toolgen.runtime.serving.tool_index import ToolIndex, load_search
from toolgen.search.text_index import SEARCH_FORMAT, search_documents
from toolgen.search.tool import (
    DEFAULT_LIMIT,
    SEARCH_TOOL_INPUT_SCHEMA,
    SEARCH_TOOL_NAME,
    SEARCH_TOOL_OUTPUT_SCHEMA,
    search_arguments,
)
from toolgen.search.vector_index import SEMANTIC_FORMAT

REPO = Path(__file__).resolve().parents[3]
GENERATED = REPO / "generated"
QUERIES = (
    "merge the pull request",
    "get rid of the bug label on issue 12",
    "lock the conversation",
    "delete the repo",
    "who commented on the issue",
    "refund a charge",
    "cancel the subscription",
)


@pytest.fixture()
def github_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "github"
    shutil.copytree(GENERATED / "github", folder)
    return folder


def _ranked(index: ToolIndex, scopes: list[str] | None = None) -> list[list[dict[str, object]]]:
    return [[h.to_json() for h in index.search(q, limit=10, scopes=scopes)] for q in QUERIES]


@pytest.mark.parametrize("api", ["github", "stripe", "tickets"])
def test_build_time_documents_equal_the_runtime_analysis(api: str) -> None:
    folder = GENERATED / api
    written = json.loads((folder / "search.json").read_text(encoding="utf-8"))
    policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
    assert written["format"] == SEARCH_FORMAT
    assert written["documents"] == search_documents(policy, catalog)
    from_file = ToolIndex.from_dir(folder)
    analysed = ToolIndex(policy, catalog)
    assert _ranked(from_file) == _ranked(analysed)
    assert _ranked(from_file, ["issues:read"]) == _ranked(analysed, ["issues:read"])


def test_the_runtime_ranks_with_the_file(github_copy: Path) -> None:
    """A document edited in search.json changes what `from_dir` finds: the file is what is indexed."""
    path = github_copy / "search.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    doc = next(d for d in data["documents"] if d["intent"] == "lock_issue")
    doc["fields"]["keywords"] += " zebra"
    path.write_text(json.dumps(data), encoding="utf-8")
    hits = ToolIndex.from_dir(github_copy).search("zebra", limit=3)
    assert [h.tool for h in hits] == ["record_lock_issue"] and hits[0].toolset == "issues"
    path.unlink()
    assert ToolIndex.from_dir(github_copy).search("zebra", limit=3) == []


def test_a_registry_loaded_from_a_folder_ranks_with_its_search_json(github_copy: Path) -> None:
    """What `toolgen serve` searches (`ToolIndex.from_registry` over `Registry.from_dir`) is the
    build-time index too, not a second analysis; a registry built in memory analyses the package."""
    from toolgen.runtime import Registry

    path = github_copy / "search.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    doc = next(d for d in data["documents"] if d["intent"] == "lock_issue")
    doc["fields"]["keywords"] += " zebra"
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = Registry.from_dir(github_copy)
    assert loaded.source == github_copy
    assert [h.tool for h in ToolIndex.from_registry(loaded).search("zebra", limit=3)] == ["record_lock_issue"]
    in_memory = Registry(loaded.policy, list(loaded.catalog()))
    assert in_memory.source is None
    assert ToolIndex.from_registry(in_memory).search("zebra", limit=3) == []


@pytest.mark.parametrize(
    "content",
    [
        None,  # absent
        "{not json",  # unreadable
        json.dumps({"format": SEMANTIC_FORMAT + 1, "documents": []}),  # another format
        json.dumps({"format": SEARCH_FORMAT, "documents": "x"}),  # malformed
        json.dumps({"format": SEARCH_FORMAT, "documents": [{"fields": {}, "tools": [["t"]]}]}),
        json.dumps([1, 2]),
    ],
)
def test_a_missing_or_broken_index_falls_back_to_the_same_ranking(
    github_copy: Path, content: str | None
) -> None:
    expected = _ranked(ToolIndex.from_dir(GENERATED / "github"))
    path = github_copy / "search.json"
    if content is None:
        path.unlink()
    else:
        path.write_text(content, encoding="utf-8")
        assert load_search(path) == (None, None)
    assert _ranked(ToolIndex.from_dir(github_copy)) == expected


def test_search_json_is_byte_identical_across_hash_seeds(tmp_path: Path) -> None:
    intent = tmp_path / "gh.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(REPO / 'specs' / 'github.slice.json'))}\n"
        "api: {name: gh}\ntoolsets: {issues: {description: Issues., loading: eager}}\n"
        'include: [{match: "tag:issues", toolset: issues}, '
        '{match: "*", toolset: from_tag, loading: deferred}]\n',
        encoding="utf-8",
    )
    trees = []
    for seed in ("0", "4242"):
        out = tmp_path / f"out{seed}"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "toolgen",
                "build",
                intent.name,
                "--out",
                out.name,
                "-q",
                "--emit",
                "openai,anthropic,mcp,gemini,policy,report",
            ],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        trees.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert {"search.json", "openai.responses.json"} <= set(trees[0])
    assert trees[0] == trees[1]


def test_cli_json_hits_carry_the_toolset() -> None:
    result = CliRunner().invoke(
        main,
        ["search", str(GENERATED / "github"), "merge the pull request", "--format", "json", "--limit", "3"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert hits[0]["tool"] == "record_merge_pull_request" and hits[0]["toolset"] == "pulls"
    assert all(set(h) == {"tool", "toolset", "score", "operation"} for h in hits)


def test_the_head_of_a_compound_object_weighs_more() -> None:
    from toolgen.search.text_index import analyse_query

    head = analyse_query("add a repository secret for the actions")[2]
    assert "^secret" in head and "^repository" not in head
    assert not any(t.startswith("^") for t in analyse_query("add a secret")[2])  # one noun: no compound


def test_a_deferred_tool_found_by_search_is_still_checked_on_the_call() -> None:
    """Deferring a tool only changes what a model sees first: the runtime still knows it and still
    refuses a caller without its permission, before any request (no base URL is reachable here)."""
    policy = json.loads((GENERATED / "github" / "policy.json").read_text(encoding="utf-8"))
    rows = {r["tool"]: r for r in policy["tools"]}
    assert rows["record_merge_pull_request"]["loading"] == "deferred"
    hit = ToolIndex.from_dir(GENERATED / "github").search("merge the pull request", limit=1)[0]
    assert hit.tool == "record_merge_pull_request"
    registry = Registry.from_dir(GENERATED / "github", base_url="http://127.0.0.1:9")
    result = registry.call(
        hit.tool, {"preview_id": "p-1", "action_id": "a-1"}, actor=Actor.of("agent", ["issues:read"])
    )
    assert not result.ok and result.error is not None and result.error.code == "permission_denied"
    # and a caller whose scopes do not allow it never gets it from search
    assert all(
        h.tool != "record_merge_pull_request"
        for h in ToolIndex.from_dir(GENERATED / "github").search(
            "merge the pull request", scopes=["issues:read"], limit=20
        )
    )


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 30)
    | st.sampled_from([3.0, 2.5, 21.0])
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=6) | st.sampled_from(["a/b", "~0", "~"]), inner, max_size=3)
    ),
    max_leaves=8,
)
_QUERY = st.text(max_size=40) | st.sampled_from(QUERIES) | st.text(min_size=498, max_size=502)
_ARGS = st.one_of(
    _JSON,
    st.fixed_dictionaries({"query": _QUERY}, optional={"limit": _JSON, "extra": _JSON}),
    st.fixed_dictionaries({"query": st.sampled_from(QUERIES), "limit": st.integers(-1, 22)}),
)
_POLICY_ROWS = json.loads((GENERATED / "github" / "policy.json").read_text(encoding="utf-8"))["tools"]
_SCOPES = sorted({str(s) for row in _POLICY_ROWS for s in row.get("permission") or []})


@pytest.fixture(scope="module")
def github_search() -> tuple[ToolSearch, dict[str, dict[str, Any]]]:
    """The meta-tool over the generated GitHub package (no base URL is reachable: a search sends no
    request) and the package's ``mcp.json`` entries by name."""
    catalog = json.loads((GENERATED / "github" / "mcp.json").read_text(encoding="utf-8"))
    registry = Registry.from_dir(GENERATED / "github", base_url="http://127.0.0.1:9")
    return ToolSearch(registry), {str(t["name"]): t for t in catalog}


def _allowed(tool: str, scopes: set[str]) -> bool:
    row = next(r for r in _POLICY_ROWS if r["tool"] == tool)
    return set(row.get("permission") or []) <= scopes


def test_the_meta_tool_returns_full_definitions_of_allowed_tools(github_search: Any) -> None:
    search, by_name = github_search
    everyone = Actor.of("admin", _SCOPES)
    result = search.run({"query": "merge the pull request", "limit": 3}, everyone)
    assert result.ok and result.tool == SEARCH_TOOL_NAME
    answer = result.result
    jsonschema.validate(answer, SEARCH_TOOL_OUTPUT_SCHEMA)
    assert answer["hits"][0]["tool"] == "record_merge_pull_request" and len(answer["hits"]) == 3
    # the hits are the ranking of `toolgen search` (the index of search.json), with the caller's scopes
    index = ToolIndex.from_dir(GENERATED / "github")
    assert answer["hits"] == [
        h.to_json() for h in index.search("merge the pull request", scopes=_SCOPES, limit=3)
    ]
    # every definition is the mcp.json entry; a write's hit brings preview_* then record_*
    names = [t["name"] for t in answer["tools"]]
    assert all(t == by_name[t["name"]] for t in answer["tools"])
    assert names[:2] == ["preview_merge_pull_request", "record_merge_pull_request"]
    assert all(h["tool"] in names for h in answer["hits"]) and len(names) == len(set(names))
    # a caller with fewer scopes gets neither the hit nor the definitions it may not use
    reader = search.run({"query": "merge the pull request"}, Actor.of("agent", ["issues:read"]))
    assert reader.ok and reader.result["hits"]
    assert all(h["tool"] != "record_merge_pull_request" for h in reader.result["hits"])
    assert all(_allowed(t["name"], {"issues:read"}) for t in reader.result["tools"])
    assert all(_allowed(h["tool"], {"issues:read"}) for h in reader.result["hits"])


@settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(arguments=_ARGS, scopes=st.sets(st.sampled_from(_SCOPES), max_size=4))
def test_the_meta_tool_answers_any_arguments_as_its_input_schema_says(
    github_search: Any, arguments: Any, scopes: set[str]
) -> None:
    """Whatever the arguments and the caller: arguments the input schema accepts give an answer that
    its output schema accepts, holding only tools the caller may use; any other arguments give
    ``invalid_arguments`` naming where. Never an exception. A null ``limit`` is the default
    (`toolgen.search.tool.search_arguments`, what the strict Chat Completions function sends)."""
    search, by_name = github_search
    result = search.run(arguments, Actor.of("agent", scopes))
    assert result.tool == SEARCH_TOOL_NAME
    if jsonschema.Draft202012Validator(SEARCH_TOOL_INPUT_SCHEMA).is_valid(search_arguments(arguments)):
        assert result.ok, result.error
        jsonschema.validate(result.result, SEARCH_TOOL_OUTPUT_SCHEMA)
        assert len(result.result["hits"]) <= (arguments.get("limit") or DEFAULT_LIMIT)
        assert all(_allowed(h["tool"], scopes) for h in result.result["hits"])
        assert all(_allowed(t["name"], scopes) and t == by_name[t["name"]] for t in result.result["tools"])
    else:
        assert not result.ok and result.error is not None and result.error.code == "invalid_arguments"
        pointer = result.error.details["pointer"]  # the value's own, or the unexpected member's
        assert pointer in ("", "/query", "/limit") or (
            isinstance(arguments, dict) and pointer in {join_pointer("", k) for k in arguments}
        )
