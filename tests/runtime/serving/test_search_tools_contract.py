"""One contract for the ``search_tools`` meta-tool (`toolgen.search.tool`), end to end on the
generated GitHub package (deferred toolsets ``pulls`` and ``repos``): the entry the build lists in
the up-front MCP catalog, the entry it writes into ``search.json`` and the entry `toolgen serve`
lists over the official MCP client are one and the same, and a real call's answer conforms to that
entry's ``outputSchema``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.support.runtime_env import mcp_json

from toolgen.builder.build import ApiBuild, build_api
from toolgen.dialects.mcp import check_mcp_catalog
from toolgen.runtime import Actor, Registry
from toolgen.search.tool import DEFAULT_LIMIT, SEARCH_TOOL_NAME, mcp_search_tool

pytest.importorskip("mcp")

REPO = Path(__file__).resolve().parents[3]
GITHUB = REPO / "generated" / "github"
POLICY_ROWS: list[dict[str, Any]] = json.loads((GITHUB / "policy.json").read_text(encoding="utf-8"))["tools"]
ALL_SCOPES = sorted({str(s) for row in POLICY_ROWS for s in row.get("permission") or []})


@pytest.fixture(scope="module")
def github_build() -> ApiBuild:
    """generated/github built again in memory, from the repository's intent map and vendored spec."""
    return build_api(REPO / "intent_maps" / "github.yaml", GITHUB, base=REPO)


def _dump(tool: Any) -> dict[str, Any]:
    dumped: dict[str, Any] = tool.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


def test_the_built_entry_is_the_kernel_entry_over_the_deferred_toolsets(github_build: ApiBuild) -> None:
    deferred = sorted({str(r["toolset"]) for r in POLICY_ROWS if r["loading"] == "deferred"})
    assert {"pulls", "repos"} <= set(deferred)  # (and a few deferred tools of `issues`)
    upfront = github_build.catalogs.deferred.upfront["mcp"]
    listed = [e for e in upfront if e["name"] == SEARCH_TOOL_NAME]
    written = json.loads(github_build.files["search.json"])["search_tool"]
    on_disk = json.loads((GITHUB / "search.json").read_text(encoding="utf-8"))["search_tool"]
    assert listed == [written] == [on_disk] == [mcp_search_tool(deferred)]
    assert check_mcp_catalog(upfront) == []


@pytest.mark.anyio
async def test_the_served_entry_is_the_built_one_and_its_answer_conforms(github_build: ApiBuild) -> None:
    from mcp import Client

    from toolgen.runtime.serving.mcp_server import build_server

    on_disk = json.loads((GITHUB / "search.json").read_text(encoding="utf-8"))["search_tool"]
    upfront = github_build.catalogs.deferred.upfront["mcp"]
    registry = Registry.from_dir(GITHUB, base_url="http://127.0.0.1:9")  # a search sends no request
    async with Client(build_server(registry, Actor.of("admin", ALL_SCOPES))) as client:
        listed = (await client.list_tools()).tools
        served = next(_dump(t) for t in listed if t.name == SEARCH_TOOL_NAME)
        assert served == on_disk
        # a caller holding every scope is listed exactly the build's up-front MCP catalog
        assert sorted((_dump(t) for t in listed), key=lambda e: e["name"]) == sorted(
            upfront, key=lambda e: e["name"]
        )
        found = await client.call_tool(SEARCH_TOOL_NAME, {"query": "merge the pull request", "limit": 4})
        assert found.is_error is False, found
        answer = found.structured_content
        jsonschema.Draft202012Validator(served["outputSchema"]).validate(answer)
        assert answer["hits"][0] == {
            **answer["hits"][0],
            "tool": "record_merge_pull_request",
            "toolset": "pulls",
        }
        names = [t["name"] for t in answer["tools"]]
        assert "record_merge_pull_request" in names and "record_merge_pull_request" not in [
            t.name for t in listed
        ]
        assert len(answer["hits"]) <= 4
    async with Client(build_server(registry, Actor.of("agent", ["issues:read"]))) as client:
        listed = (await client.list_tools()).tools
        assert (
            next(_dump(t) for t in listed if t.name == SEARCH_TOOL_NAME) == on_disk
        )  # the same for everyone
        found = await client.call_tool(SEARCH_TOOL_NAME, {"query": "merge the pull request"})
        answer = found.structured_content
        jsonschema.Draft202012Validator(on_disk["outputSchema"]).validate(answer)
        rows = {r["tool"]: r for r in POLICY_ROWS}
        assert all(set(rows[h["tool"]]["permission"]) <= {"issues:read"} for h in answer["hits"])
        assert all(set(rows[t["name"]]["permission"]) <= {"issues:read"} for t in answer["tools"])
        bad = await client.call_tool(SEARCH_TOOL_NAME, {"query": "x" * 501})
        assert bad.is_error is True and mcp_json(bad)["error"]["code"] == "invalid_arguments"
    await registry.aclose()


def test_each_entry_is_a_fresh_value() -> None:
    """A caller that edits the entry it got (a server adding ``_meta``, a test) changes no later entry
    and not the kernel's schemas."""
    from toolgen.search.tool import SEARCH_TOOL_OUTPUT_SCHEMA

    first = mcp_search_tool(["pulls"])
    first["outputSchema"]["properties"]["hits"]["items"]["required"].append("extra")
    first["inputSchema"]["properties"].clear()
    first["annotations"]["readOnlyHint"] = False
    again = mcp_search_tool(["pulls"])
    assert again["outputSchema"] == SEARCH_TOOL_OUTPUT_SCHEMA and "extra" not in json.dumps(again)
    assert (
        set(again["inputSchema"]["properties"]) == {"query", "limit"} and again["annotations"]["readOnlyHint"]
    )


def test_the_client_run_entries_are_the_kernel_entries_and_a_null_limit_is_the_default(
    github_build: ApiBuild,
) -> None:
    """The Chat Completions and Gemini up-front views end with the kernel's client-run entries over
    the same toolsets; the strict function's null `limit` is answered as the default (5 hits), while
    an integer out of range is still refused at `/limit`."""
    from toolgen.runtime.serving.search_tools import ToolSearch
    from toolgen.search.tool import DEFAULT_LIMIT, gemini_search_declaration, openai_search_function

    deferred = sorted({str(r["toolset"]) for r in POLICY_ROWS if r["loading"] == "deferred"})
    views = github_build.catalogs.deferred.upfront
    assert views["openai"][-1] == openai_search_function(deferred)
    assert views["gemini"][-1] == gemini_search_declaration(deferred)
    registry = Registry.from_dir(GITHUB, base_url="http://127.0.0.1:9")
    search, actor = ToolSearch(registry), Actor.of("admin", ALL_SCOPES)
    query = "list the pull requests"
    null = search.run({"query": query, "limit": None}, actor)
    absent = search.run({"query": query}, actor)
    assert null.ok and absent.ok and null.result is not None and absent.result is not None
    assert null.result["hits"] == absent.result["hits"] and len(null.result["hits"]) == DEFAULT_LIMIT
    over = search.run({"query": query, "limit": 21}, actor)
    assert not over.ok and over.error is not None and over.error.details["pointer"] == "/limit"


@pytest.mark.anyio
async def test_the_listed_input_schema_admits_exactly_what_the_server_answers(tmp_path: Path) -> None:
    """`toolgen serve` over stdio with the official MCP client: the `inputSchema` it lists for
    ``search_tools`` (MCP 2025-11-25: JSON Schema 2020-12, which the server MUST validate arguments
    against) and the server agree on every `limit` — null (the default, as the strict Chat Completions
    function sends it) is admitted by both; a string, zero and an integer past the maximum are refused
    by both. One contract, whatever client runs the search."""
    import shutil
    import sys

    from mcp import Client, StdioServerParameters

    toolgen = shutil.which("toolgen") or str(Path(sys.executable).parent / "toolgen")
    params = StdioServerParameters(
        command=toolgen,
        args=[
            "serve",
            str(GITHUB),
            "--scopes",
            ",".join(ALL_SCOPES),
            "--base-url",
            "http://127.0.0.1:9",
            "--receipts",
            str(tmp_path / "r.sqlite3"),
        ],
        env={"PATH": os.environ.get("PATH", "")},
        cwd=str(tmp_path),
    )
    async with Client(params) as client:
        listed = next(t for t in (await client.list_tools()).tools if t.name == SEARCH_TOOL_NAME)
        validator = jsonschema.Draft202012Validator(
            listed.input_schema, format_checker=jsonschema.FormatChecker()
        )
        for limit in (None, 1, 5, 20, "5", 0, 21, 2.5, True):
            args = {"query": "merge the pull request", "limit": limit}
            answer = await client.call_tool(SEARCH_TOOL_NAME, args)
            assert validator.is_valid(args) is (answer.is_error is False), (limit, mcp_json(answer))
            if limit is None:
                assert len(answer.structured_content["hits"]) == DEFAULT_LIMIT
