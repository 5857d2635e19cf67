"""Toolsets and deferred loading: intent-map toolsets (explicit and from tags) with located errors,
the policy rows' `toolset`/`loading`/`keywords`, the catalogs that scale per dialect (each passing its
provider's checker, and the checkers catching broken ones), the up-front cost in REPORT.md, and the
`toolset-near-synonym` lint rule."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.benchmarks import benchmark_module
from tests.support.build import REPO, build

from toolgen.dialects import check_responses_catalog
from toolgen.dialects.anthropic import TOOL_SEARCH as ANTHROPIC_TOOL_SEARCH
from toolgen.dialects.anthropic import check_anthropic_catalog
from toolgen.dialects.gemini import check_gemini_catalog
from toolgen.dialects.mcp import check_mcp_catalog
from toolgen.dialects.openai import check_openai_catalog
from toolgen.review.lint.toolset_rules import Member, name_likeness, near_synonyms
from toolgen.search.tool import (
    SEARCH_TOOL_NAME,
    gemini_search_declaration,
    mcp_search_tool,
    openai_search_function,
)

TICKETS = REPO / "specs" / "tickets.yaml"
GITHUB = REPO / "specs" / "github.slice.json"
ALL = "openai,anthropic,mcp,gemini,policy,report"
FROM_TAG = 'include: [{match: "*", toolset: from_tag, loading: deferred}]\n'


# -- the intent map: located errors -------------------------------------------------------------


@pytest.mark.parametrize(
    "body, code, where",
    [
        (
            (
                "toolsets: {tickets: {description: Tickets.}}\n"
                "tools:\n  get_ticket: {operation: getTicket, effect: read, toolset: tikets}\n"
            ),
            "toolset-unknown",
            "api.yaml:6:",
        ),
        (
            ("toolsets: {tickets: {description: Tickets.}}\ninclude:\n  - {match: '*', toolset: tikets}\n"),
            "toolset-unknown",
            "api.yaml:6:",
        ),
        (
            "toolsets: {9tickets: {description: Tickets.}}\ntools:\n  get_ticket: {operation: getTicket, effect: read}\n",
            "toolset-name-invalid",
            "api.yaml:4:",
        ),
        (
            "toolsets: {'ti.ckets': {description: Tickets.}}\ntools:\n  get_ticket: {operation: getTicket, effect: read}\n",
            "toolset-name-invalid",
            "api.yaml:4:",
        ),
        ("toolsets: {from_tag: {description: Tickets.}}\n", "toolset-name-invalid", "api.yaml:4:"),
        ("toolsets: {from_path: {description: Tickets.}}\n", "toolset-name-invalid", "api.yaml:4:"),
        ("toolsets: {tickets: {description: Tickets., loading: lazy}}\n", "intent-invalid", "api.yaml:4:"),
        ("toolsets: {tickets: {loading: eager}}\n", "intent-invalid", "api.yaml:4:"),
        ("toolsets: {tickets: {description: '" + "x" * 201 + "'}}\n", "intent-invalid", "api.yaml:4:"),
        (
            "tools:\n  get_ticket: {operation: getTicket, effect: read, loading: later}\n",
            "intent-invalid",
            "api.yaml:5:",
        ),
        (
            (
                "tools:\n  search_tools: {operation: listTickets, effect: read}\n"
                "  get_ticket: {operation: getTicket, effect: read, loading: deferred}\n"
            ),
            "tool-name-reserved",
            "api.yaml:5:",
        ),
    ],
)
def test_toolset_mistake_is_a_located_error(tmp_path: Path, body: str, code: str, where: str) -> None:
    built = build(tmp_path, TICKETS, body, expect=2)
    assert f"error[{code}]" in built.result.output and where in built.result.output, built.result.output
    assert not (tmp_path / "out").exists()


def test_unknown_toolset_suggests_the_declared_one(tmp_path: Path) -> None:
    built = build(
        tmp_path,
        TICKETS,
        "toolsets: {tickets: {description: Tickets.}}\n"
        "tools:\n  get_ticket: {operation: getTicket, effect: read, toolset: tikets}\n",
        expect=2,
    )
    assert "did you mean `tickets`?" in built.result.output


def test_bad_loading_value_names_the_choices(tmp_path: Path) -> None:
    built = build(
        tmp_path, TICKETS, "toolsets: {tickets: {description: Tickets., loading: lazy}}\n", expect=2
    )
    assert "one of eager, deferred" in built.result.output


# -- placement: explicit, from tags, loading precedence ------------------------------------------


def test_rows_without_toolsets_carry_the_keys(tmp_path: Path) -> None:
    built = build(tmp_path, TICKETS)
    policy = built.json("policy.json")
    assert policy["toolsets"] == []
    for row in policy["tools"]:
        assert row["toolset"] is None and row["loading"] == "eager" and row["keywords"] == []
    assert not (built.out / "openai.responses.json").exists()  # no toolsets, nothing deferred
    assert all("defer_loading" not in t for t in built.json("anthropic.json"))


def test_toolsets_from_tags(tmp_path: Path) -> None:
    built = build(tmp_path, GITHUB, FROM_TAG, emit=ALL)
    policy = built.json("policy.json")
    toolsets = {t["name"]: t for t in policy["toolsets"]}
    assert sorted(toolsets) == ["issues", "pulls", "repos", "search"]
    assert toolsets["issues"] == {
        "name": "issues",
        "description": "Interact with GitHub Issues. Tools for issues, comments, labels, lock.",
        "loading": "deferred",
        "origin": "tag",
        "examples": [],
    }  # the include group's loading
    by_op = {r["operation"]["id"]: r for r in policy["tools"]}
    assert by_op["pulls/merge"]["toolset"] == "pulls" and by_op["repos/delete"]["toolset"] == "repos"
    assert by_op["search/issues-and-pull-requests"]["toolset"] == "search"
    assert all(r["loading"] == "deferred" for r in policy["tools"])  # the include group's loading


def test_declared_toolset_overrides_the_tag_and_a_tool_overrides_its_toolset(tmp_path: Path) -> None:
    body = (
        "toolsets:\n  issues: {description: Triage issues., loading: eager}\n"
        "  pulls: {description: Pull requests., loading: deferred}\n"
        "tools:\n  lock_issue: {operation: issues/lock, effect: write, approval: required, toolset: issues,"
        " loading: deferred, keywords: [freeze, '  ', freeze]}\n"
        "  get_pull: {operation: pulls/get, effect: read, toolset: issues}\n"
        'include: [{match: "tag:issues", toolset: from_tag}, {match: "tag:pulls", toolset: pulls}]\n'
    )
    built = build(tmp_path, GITHUB, body, emit=ALL)
    policy = built.json("policy.json")
    toolsets = {t["name"]: t for t in policy["toolsets"]}
    assert (
        toolsets["issues"]["description"] == "Triage issues." and toolsets["issues"]["origin"] == "declared"
    )
    rows = {r["tool"]: r for r in policy["tools"]}
    assert (
        rows["record_lock_issue"]["loading"] == "deferred"
        and rows["preview_lock_issue"]["loading"] == "deferred"
    )
    assert rows["record_lock_issue"]["keywords"] == ["freeze"]
    assert rows["get_pull"]["toolset"] == "issues" and rows["get_pull"]["loading"] == "eager"  # explicit wins
    assert rows["get_issues_get"]["toolset"] == "issues" and rows["get_issues_get"]["loading"] == "eager"
    pulls = [r for r in policy["tools"] if r["toolset"] == "pulls"]
    assert pulls and all(r["loading"] == "deferred" for r in pulls)  # from the toolset


def test_toolsets_from_paths(tmp_path: Path) -> None:
    built = build(
        tmp_path,
        TICKETS,
        "toolsets: {tickets: {description: Support tickets., loading: deferred}}\n"
        'include: [{match: "*", toolset: from_path}]\n',
        emit=ALL,
    )
    policy = built.json("policy.json")
    assert {r["toolset"] for r in policy["tools"]} == {"tickets"}
    assert policy["toolsets"] == [
        {
            "name": "tickets",
            "description": "Support tickets.",
            "loading": "deferred",
            "origin": "declared",
            "examples": [],
        }
    ]
    assert all(r["loading"] == "deferred" for r in policy["tools"])


def test_path_toolsets_skip_versions(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.0.3",
                "info": {"title": "t", "version": "1"},
                "paths": {
                    "/v1/customers/{id}": {
                        "get": {"operationId": "getCustomer", "responses": {"200": {"description": "ok"}}}
                    },
                    "/api/v2.1/payment_intents": {
                        "get": {"operationId": "listIntents", "responses": {"200": {"description": "ok"}}}
                    },
                },
            }
        )
    )
    built = build(
        tmp_path, spec, 'include: [{match: "*", toolset: from_path, loading: deferred}]\n', emit=ALL
    )
    toolsets = {t["name"]: t for t in built.json("policy.json")["toolsets"]}
    assert sorted(toolsets) == ["customers", "payment_intents"]
    assert toolsets["customers"] == {
        "name": "customers",
        "description": "Operations under /customers. Tools for customers.",
        "loading": "deferred",
        "origin": "path",
        "examples": [],
    }


@given(st.text(max_size=80))
def test_any_tag_gives_a_valid_toolset_name_or_none(tag: str) -> None:
    from toolgen.naming import TOOLSET_NAME_RE, toolset_from_tag, toolset_name_problem

    name = toolset_from_tag(tag)
    assert name is None or (TOOLSET_NAME_RE.match(name) and toolset_name_problem(name) is None)


def test_tag_names_become_valid_toolset_names() -> None:
    from toolgen.naming import TOOLSET_NAME_RE, toolset_from_tag

    for tag in ("Code Scanning", "code-scanning", "2fa", "x" * 100, "über"):
        name = toolset_from_tag(tag)
        assert name is not None and TOOLSET_NAME_RE.match(name), (tag, name)
    assert toolset_from_tag("---") is None


# -- catalogs that scale, per dialect -------------------------------------------------------------


@pytest.fixture(scope="module")
def deferred_build(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("deferred")
    body = (
        "toolsets: {issues: {description: Triage issues., loading: eager}}\n"
        'include: [{match: "tag:issues", toolset: issues}, {match: "*", toolset: from_tag, loading: deferred}]\n'
    )
    return build(tmp, GITHUB, body, emit=ALL)


def test_responses_catalog_has_namespaces_deferred_functions_and_tool_search(deferred_build: Any) -> None:
    catalog = deferred_build.json("openai.responses.json")
    assert check_responses_catalog(catalog, max_tools=128) == []
    namespaces = {e["name"]: e for e in catalog if e["type"] == "namespace"}
    assert sorted(namespaces) == ["issues", "pulls", "repos", "search"]
    assert catalog[-1] == {"type": "tool_search"}
    assert all("defer_loading" not in f for f in namespaces["issues"]["tools"])
    assert all(f["defer_loading"] is True for f in namespaces["pulls"]["tools"])
    assert all(
        isinstance(f["strict"], bool) and "function" not in f for n in namespaces.values() for f in n["tools"]
    )
    chat = {t["function"]["name"]: t["function"] for t in deferred_build.json("openai.json")}
    flat = {f["name"]: f for n in namespaces.values() for f in n["tools"]}
    assert sorted(flat) == sorted(chat)  # every tool, once
    assert all(flat[n]["parameters"] == chat[n]["parameters"] for n in chat)  # same strict parameters


def test_anthropic_catalog_defers_and_sends_the_tool_search_tool(deferred_build: Any) -> None:
    catalog = deferred_build.json("anthropic.json")
    assert check_anthropic_catalog(catalog) == []
    assert catalog[-1] == ANTHROPIC_TOOL_SEARCH
    rows = {r["tool"]: r for r in deferred_build.json("policy.json")["tools"]}
    for entry in catalog[:-1]:
        assert entry.get("defer_loading", False) is (rows[entry["name"]]["loading"] == "deferred")


def test_mcp_gemini_and_chat_upfront_views_conform() -> None:
    names = ["issues", "pulls"]
    assert check_mcp_catalog([mcp_search_tool(names)]) == []
    assert check_gemini_catalog([gemini_search_declaration(names)]) == []
    assert check_openai_catalog([openai_search_function(names)]) == []  # strict mode included
    assert "pulls" in mcp_search_tool(names)["description"]


def _corpuslib() -> Any:
    """benchmarks/corpuslib.py (the SDK catalog checks of the corpus harness), loaded once."""
    return benchmark_module("corpuslib")


def test_the_chat_search_function_is_strict_and_passes_the_sdk_type() -> None:
    """The Chat Completions `search_tools` function: the official SDK's `ChatCompletionFunctionToolParam`
    (no unknown key), strict, every property required, and the strict checker refuses it with the
    optional `limit` left out of `required`."""
    pytest.importorskip("openai")
    corpuslib = _corpuslib()
    entry = openai_search_function(["pulls"])
    assert corpuslib.check_catalog("openai", [entry]).failures == []
    fn = entry["function"]
    assert fn["strict"] is True and fn["name"] == SEARCH_TOOL_NAME
    params = fn["parameters"]
    assert set(params["required"]) == set(params["properties"]) and params["additionalProperties"] is False
    assert "null" in params["properties"]["limit"]["type"]
    loose = copy.deepcopy(entry)
    loose["function"]["parameters"]["required"] = ["query"]
    assert "A.2-required" in {v.rule for v in check_openai_catalog([loose])}


@pytest.mark.parametrize(
    "mutate, rule",
    [
        (lambda c: c.pop(), "F.1-tool-search"),  # deferred, no tool_search
        (lambda c: c.append({"type": "tool_search"}), "F.1-tool-search"),  # two tool_search entries
        (lambda c: c[0].__setitem__("defer_loading", True), "F.1-namespace-defer"),  # on the namespace itself
        (lambda c: c[0].__setitem__("description", " "), "F.1-namespace-description"),
        (lambda c: c[0].__setitem__("name", "has.dot"), "F.1-namespace-name"),
        (lambda c: c[0].__setitem__("tools", []), "F.1-namespace-tools"),
        (
            lambda c: c[0]["tools"].append(
                {"type": "namespace", "name": "x", "description": "x", "tools": []}
            ),
            "F.1-namespace-tools",
        ),
        (lambda c: c[0]["tools"][0].__setitem__("defer_loading", "yes"), "F.1-defer-loading"),
        (lambda c: c[0]["tools"][0].pop("strict"), "A.1-strict-explicit"),
        (lambda c: c[0]["tools"][0]["parameters"].pop("additionalProperties"), "A.2-additionalProperties"),
        (lambda c: c.append({"type": "web_search"}), "F.1-shape"),
        (lambda c: c.append(copy.deepcopy(c[0]["tools"][0])), "A.1-name-unique"),
    ],
)
def test_responses_checker_catches_broken_catalogs(deferred_build: Any, mutate: Any, rule: str) -> None:
    catalog = deferred_build.json("openai.responses.json")
    mutate(catalog)
    assert rule in {v.rule for v in check_responses_catalog(catalog)}


def test_responses_checker_caps_top_level_entries() -> None:
    fn = {
        "type": "function",
        "name": "f",
        "description": "",
        "strict": True,
        "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
    }
    catalog = [{**fn, "name": f"f{i}"} for i in range(129)]
    assert "A.1-max-tools" in {v.rule for v in check_responses_catalog(catalog, max_tools=128)}


@pytest.mark.parametrize(
    "mutate, rule",
    [
        (lambda c: c.pop(), "F.2-tool-search"),  # deferred, no search tool
        (lambda c: c[-1].__setitem__("type", "web_search_20250305"), "F.2-server-tool"),
        (lambda c: c[-1].__setitem__("name", "tool_search_tool_regex"), "F.2-server-tool"),
        (lambda c: c[-1].__setitem__("defer_loading", True), "F.2-tool-search"),
        (lambda c: c.append(dict(c[-1])), "F.2-tool-search"),  # two search tools
        (lambda c: c[0].__setitem__("defer_loading", 1), "F.2-defer-loading"),
        (
            lambda c: [t.__setitem__("defer_loading", True) for t in c],
            "F.2-tool-search",
        ),  # everything deferred
    ],
)
def test_anthropic_checker_catches_broken_deferred_catalogs(
    deferred_build: Any, mutate: Any, rule: str
) -> None:
    catalog = deferred_build.json("anthropic.json")
    mutate(catalog)
    assert rule in {v.rule for v in check_anthropic_catalog(catalog)}


# -- the up-front cost ----------------------------------------------------------------------------


def test_report_gives_the_upfront_cost_per_dialect(deferred_build: Any) -> None:
    from toolgen.search.text_index import split_words  # noqa: F401 - the kernel module imports cleanly
    from toolgen.tokens import count_tokens

    report = (deferred_build.out / "REPORT.md").read_text()
    rows = dict(
        re.findall(
            r"^\| (openai|openai-responses|anthropic|mcp|gemini|gemini-interactions) \| `[^`]+` \| "
            r".*? \| \d+ \| (\d+) \|$",
            report,
            re.MULTILINE,
        )
    )
    assert set(rows) == {"openai", "openai-responses", "anthropic", "mcp", "gemini", "gemini-interactions"}
    policy = deferred_build.json("policy.json")
    eager = {r["tool"] for r in policy["tools"] if r["loading"] == "eager"}
    searchable = sorted({r["toolset"] for r in policy["tools"] if r["loading"] == "deferred"})

    def tokens(entries: list[dict[str, Any]]) -> int:
        return sum(
            count_tokens(json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
            for e in entries
        )

    mcp = [t for t in deferred_build.json("mcp.json") if t["name"] in eager] + [mcp_search_tool(searchable)]
    assert int(rows["mcp"]) == tokens(mcp)
    anthropic = [t for t in deferred_build.json("anthropic.json") if not t.get("defer_loading")]
    assert int(rows["anthropic"]) == tokens(anthropic)
    # Chat Completions: the eager functions of openai.json, then the client-run search function
    chat = [t for t in deferred_build.json("openai.json") if t["function"]["name"] in eager]
    assert int(rows["openai"]) == tokens([*chat, openai_search_function(searchable)])
    assert int(rows["openai"]) < tokens(deferred_build.json("openai.json"))
    interactions = deferred_build.json("gemini.interactions.json")
    assert int(rows["gemini-interactions"]) == tokens([e for e in interactions if not e.get("defer_loading")])
    assert int(rows["gemini-interactions"]) < tokens(interactions)
    assert "## Toolsets" in report and "### Toolset `pulls`" in report
    policy_md = (deferred_build.out / "POLICY.md").read_text()
    assert "### Toolset `pulls` (deferred)" in policy_md and "(deferred) | record |" in policy_md


def test_search_meta_tool_lists_only_toolsets_with_deferred_tools(deferred_build: Any) -> None:
    search = deferred_build.json("search.json")
    tool = search["search_tool"]
    assert tool["name"] == SEARCH_TOOL_NAME and check_mcp_catalog([tool]) == []
    assert "pulls" in tool["description"] and "issues" not in tool["description"].split("toolsets:")[-1]


# -- lint: near-synonyms within a toolset ----------------------------------------------------------


def test_near_synonym_tools_in_one_toolset_are_a_located_warning(tmp_path: Path) -> None:
    body = (
        "toolsets: {t: {description: Tickets.}}\n"
        "tools:\n"
        "  get_ticket: {operation: getTicket, effect: read, toolset: t, description: Read one ticket by id.}\n"
        "  fetch_ticket: {operation: getTicket, effect: read, toolset: t, description: Show a ticket.}\n"
        "  list_tickets: {operation: listTickets, effect: read, toolset: t}\n"
    )
    built = build(tmp_path, TICKETS, body)
    report = (built.out / "REPORT.md").read_text()
    line = next(x for x in report.splitlines() if "toolset-near-synonym" in x and "`fetch_ticket`" in x)
    assert "`get_ticket`" in line and "api.yaml:" in line
    assert not any("toolset-near-synonym" in x and "list_tickets" in x for x in report.splitlines())


def test_near_synonyms_in_different_toolsets_are_not_reported(tmp_path: Path) -> None:
    body = (
        "toolsets: {t: {description: Tickets.}, u: {description: Other tickets.}}\n"
        "tools:\n"
        "  get_ticket: {operation: getTicket, effect: read, toolset: t, description: Read one ticket by id.}\n"
        "  fetch_ticket: {operation: getTicket, effect: read, toolset: u, description: Show a ticket.}\n"
    )
    built = build(tmp_path, TICKETS, body)
    assert "toolset-near-synonym" not in (built.out / "REPORT.md").read_text()


def test_near_synonyms_rules() -> None:
    def m(key: str, text: str = "") -> Member:
        return Member(key, (key,), text)

    assert name_likeness("remove_label", "delete_label") is not None
    assert name_likeness("list_issue_comments", "list_comments_issue") is not None
    assert name_likeness("get_issue", "get_issues") is not None
    assert name_likeness("create_label", "delete_label") is None  # opposite actions are not synonyms
    assert name_likeness("list_org_secrets", "list_repo_secrets") is None
    alike = "Create a new label for the issues of one repository."
    assert near_synonyms([m("add_label", alike), m("make_tag", alike)])
    told = [
        m("remove_label", "Remove one label. Use delete_label to delete it from the repository."),
        m("delete_label", "Delete a label from the repository."),
    ]
    assert near_synonyms(told) == []


def _every_pair(members: list[Member]) -> list[tuple[Member, Member, str]]:
    """`near_synonyms` by definition: every pair compared, in member order."""
    from toolgen.review.lint.toolset_rules import _names_other, text_likeness

    out = []
    for i, first in enumerate(members):
        for second in members[i + 1 :]:
            why = name_likeness(first.key, second.key) or text_likeness(first.description, second.description)
            if why and not (
                _names_other(first.description, second) or _names_other(second.description, first)
            ):
                out.append((first, second, why))
    return out


_WORDS = st.sampled_from(
    [
        "get",
        "fetch",
        "list",
        "all",
        "delete",
        "remove",
        "label",
        "labels",
        "issue",
        "issues",
        "repo",
        "comment",
        "new",
        "add",
        "query",
        "find",
    ]
)
_TEXT = st.lists(
    st.sampled_from(
        [
            "create",
            "label",
            "labels",
            "repository",
            "issue",
            "comment",
            "user",
            "team",
            "delete",
            "list",
            "every",
            "the",
            "one",
            "from",
            "a",
            "get_label",
        ]
    ),
    max_size=9,
).map(lambda ws: " ".join(ws) + ". Second sentence repository.")


@given(
    st.lists(
        st.tuples(st.lists(_WORDS, min_size=1, max_size=4).map("_".join), _TEXT),
        max_size=14,
        unique_by=lambda kt: kt[0],
    )
)
def test_near_synonyms_equals_comparing_every_pair(spec: list[tuple[str, str]]) -> None:
    """Only candidate pairs are compared (a toolset of thousands of intents has millions of pairs):
    the result is exactly that of comparing every pair, in the same order."""
    members = [Member(key, (key, f"record_{key}"), text) for key, text in spec]
    assert near_synonyms(members) == _every_pair(members)


def test_near_synonyms_of_a_large_toolset_compare_candidates_only() -> None:
    """10,000 intents with distinct names and descriptions (50 million pairs): seconds, not hours,
    and the alike pairs among them are still found."""
    import time

    def word(n: int) -> str:  # a distinct word per number (content words are letters only)
        return "w" + "".join(chr(ord("a") + int(d)) for d in str(n))

    members = [
        Member(
            f"get_thing_{n}",
            (f"get_thing_{n}",),
            f"Returns {word(n)} of {word(n * 7)} from {word(n * 13)} region {word(n * 17)}.",
        )
        for n in range(10_000)
    ]
    members.append(Member("fetch_thing_5", ("fetch_thing_5",), members[5].description))
    started = time.process_time()
    found = near_synonyms(members)
    assert time.process_time() - started < 20
    assert [(a.key, b.key) for a, b, _ in found] == [("get_thing_5", "fetch_thing_5")]


@pytest.mark.slow
def test_include_everything_github_costs_at_most_2000_tokens_up_front(tmp_path: Path) -> None:
    """Issue 14's target: the whole GitHub description (1,223 operations), toolsets from tags, every
    tool deferred: at most 2,000 o200k tokens up front in every dialect that defers."""
    from tests.support.build import REAL

    from toolgen.builder.build import build_api
    from toolgen.emit.upfront import upfront_costs

    spec = REAL / "github-api.github.com.json"
    if not spec.exists():
        pytest.skip("../shared/specs/real is not available")
    intent = tmp_path / "github.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(spec))}\napi: {{name: github}}\n{FROM_TAG}", encoding="utf-8"
    )
    built = build_api(
        intent, tmp_path / "out", emit=("openai", "anthropic", "mcp", "gemini", "policy"), run_lint=False
    )
    costs = {c.view: c.tokens for c in upfront_costs(built.catalogs.deferred)}
    views = ("openai", "openai-responses", "anthropic", "mcp", "gemini", "gemini-interactions")
    assert set(costs) == set(views)
    assert all(costs[v] <= 2_000 for v in views), costs
    assert (
        check_responses_catalog(built.catalogs.deferred.files["openai.responses.json"], max_tools=128) == []
    )


def test_a_responses_catalog_over_the_request_limit_is_reported(tmp_path: Path) -> None:
    from toolgen.builder.build import build_api
    from toolgen.review.lint import LintSettings

    intent = tmp_path / "gh.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(GITHUB))}\napi: {{name: gh}}\n"
        'include: [{match: "*", loading: deferred}]\n',
        encoding="utf-8",
    )
    flat = build_api(intent, tmp_path / "o1", lint=LintSettings(max_tools=5))
    assert any(
        d.code == "catalog-request-limits" and "Responses catalog" in d.message for d in flat.diagnostics
    )
    intent.write_text(intent.read_text().replace("loading: deferred", "toolset: from_tag, loading: deferred"))
    grouped = build_api(intent, tmp_path / "o2", lint=LintSettings(max_tools=5))
    assert not any(
        "Responses catalog" in d.message for d in grouped.diagnostics
    )  # 4 namespaces + tool_search
