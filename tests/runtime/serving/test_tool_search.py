"""Tool search (`toolgen.runtime.serving.tool_index`, `toolgen search`): ranking behaviour on the committed
packages, scope filtering, determinism, the CLI's JSON, and — when ../shared is at hand — the recall
of the GitHub query set on the include-everything build."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.benchmarks import benchmark_module
from tests.support.profiles import examples

from toolgen.cli import main
from toolgen.runtime import Actor, Registry
from toolgen.runtime.serving.tool_index import Hit, ToolIndex, query_terms, split_words

REPO = Path(__file__).resolve().parents[3]
GENERATED = REPO / "generated"


@pytest.fixture(scope="module")
def github() -> ToolIndex:
    return ToolIndex.from_dir(GENERATED / "github")


@pytest.fixture(scope="module")
def stripe() -> ToolIndex:
    return ToolIndex.from_dir(GENERATED / "stripe")


@pytest.fixture(scope="module")
def tickets() -> ToolIndex:
    return ToolIndex.from_dir(GENERATED / "tickets")


def first(index: ToolIndex, query: str, **kwargs: object) -> str:
    hits = index.search(query, **kwargs)  # type: ignore[arg-type]
    assert hits, query
    return hits[0].tool


# -- verbs, effects, nouns ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "get rid of the label",
        "remove the bug label from issue 12",
        "drop a label from an issue",
        "take the wontfix label off this issue",
        "erase a label on the issue",
    ],
)
def test_removal_phrasings_rank_the_label_removal_first(github: ToolIndex, query: str) -> None:
    assert first(github, query) == "record_remove_issue_label"


@pytest.mark.parametrize(
    ("query", "tool"),
    [
        ("delete the repository", "record_delete_repository"),
        ("get rid of this repo", "record_delete_repository"),
        ("add a label to the issue", "record_add_issue_labels"),
        ("open a new issue", "record_create_issue"),
        ("open a PR", "record_create_pull_request"),
        ("merge the PR", "record_merge_pull_request"),
        ("show me the pull request", "get_pull_request"),
        ("list open PRs", "list_pull_requests"),
        ("reply to the issue", "record_comment_on_issue"),
        ("lock the conversation", "record_lock_issue"),
        ("search issues mentioning a crash", "search_issues"),
        ("look up the repo details", "get_repository"),
    ],
)
def test_github_requests(github: ToolIndex, query: str, tool: str) -> None:
    assert first(github, query) == tool


@pytest.mark.parametrize(
    ("query", "tool"),
    [
        ("delete a customer", "record_delete_customer"),
        ("refund the charge", "record_refund_charge record_create_refund"),
        ("give the customer their money back", "record_refund_charge record_create_refund"),
        ("look up a customer", "get_customer"),
    ],
)
def test_stripe_requests(stripe: ToolIndex, query: str, tool: str) -> None:
    assert first(stripe, query) in tool.split()


def test_a_write_is_one_hit_naming_the_acting_tool(github: ToolIndex) -> None:
    hits = github.search("remove a label from an issue", limit=10)
    ops = [h.operation for h in hits]
    assert len(ops) == len(set(ops))  # preview + record are one operation, listed once
    assert hits[0] == Hit("record_remove_issue_label", "issues", hits[0].score, "issues/remove-label")


def test_tickets_delete_and_list(tickets: ToolIndex) -> None:
    assert first(tickets, "get rid of a ticket") == "record_ticket_delete"
    assert first(tickets, "show all tickets") == "list_tickets"
    assert first(tickets, "history of a ticket") == "get_ticket_history"


def test_query_terms_understand_phrases_abbreviations_and_plurals() -> None:
    terms, actions = query_terms("Get rid of the PRs' labels in my repo")
    assert actions == {"delete"}
    assert {"pull", "request", "repository", "labels"} <= set(terms)
    assert split_words("issues/list-for-repo getTicketById PRs") == [
        "issues",
        "list",
        "for",
        "repo",
        "get",
        "ticket",
        "by",
        "id",
        "prs",
    ]
    assert query_terms("list all customers")[1] == {"list"}
    assert query_terms("")[0] == []


# -- scopes -----------------------------------------------------------------------------------------


def test_scopes_filter_every_result(github: ToolIndex) -> None:
    rows = {r["tool"]: r for r in json.loads((GENERATED / "github" / "policy.json").read_text())["tools"]}
    for scopes in (["issues:read"], ["issues:read", "issues:write"], [], ["pull_requests:read"]):
        for query in (
            "delete the repository",
            "get rid of the label",
            "create an issue",
            "merge a PR",
            "issue",
        ):
            for hit in github.search(query, scopes=scopes, limit=50):
                assert set(rows[hit.tool]["permission"]) <= set(scopes), (scopes, query, hit)
    assert github.search("issue", scopes=["issues:read"], limit=50)
    assert all(
        h.tool != "record_delete_repository"
        for h in github.search("delete the repository", scopes=["issues:write"], limit=50)
    )


def test_a_tool_the_scopes_lack_is_never_returned(tickets: ToolIndex) -> None:
    assert all(
        h.tool != "record_ticket_delete" for h in tickets.search("delete the ticket", scopes=["ticket:read"])
    )
    assert (
        first(tickets, "delete the ticket", scopes=["ticket:read", "ticket:delete"]) == "record_ticket_delete"
    )


def test_from_registry_and_actor_scopes(tmp_path: Path) -> None:
    with Registry.from_dir(GENERATED / "github") as registry:
        index = ToolIndex.from_registry(registry)
    actor = Actor.of("a", ["issues:read"])
    assert [h.tool for h in index.search("list issues", scopes=actor.scopes)] == [
        h.tool for h in ToolIndex.from_dir(GENERATED / "github").search("list issues", scopes=actor.scopes)
    ]


# -- determinism ------------------------------------------------------------------------------------


def test_results_are_deterministic(github: ToolIndex) -> None:
    again = ToolIndex.from_dir(GENERATED / "github")
    for query in ("issue", "label", "delete", "pull request comments", "zzz"):
        assert github.search(query, limit=25) == again.search(query, limit=25)
    hits = github.search("issue", limit=25)
    assert hits == sorted(hits, key=lambda h: (-h.score, h.tool))


def test_deterministic_across_hash_seeds() -> None:
    code = (
        "import json; from toolgen.runtime.serving.tool_index import ToolIndex; "
        "print(json.dumps([h.to_json() for h in ToolIndex.from_dir('generated/github').search('issue', limit=20)]))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
            env=dict(os.environ, PYTHONHASHSEED=seed),
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outs) == 1


def test_edge_cases(github: ToolIndex) -> None:
    assert github.search("", limit=5) == []
    assert github.search("the of a", limit=5) == []
    assert github.search('"unbalanced * quote AND OR NEAR(', limit=3) is not None
    assert github.search("issue", limit=0) == []
    assert len(github.search("issue", limit=3)) == 3


# -- never padded ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "get me the flibbertigibbet",
        "delete the zork",
        "show all frobnicators",
        "list everything",
        "what is the quuxle of the blorp?",
        "stop frobbing the wibble",
    ],
)
def test_a_request_that_names_nothing_the_api_has_gets_no_tools(
    github: ToolIndex, stripe: ToolIndex, tickets: ToolIndex, query: str
) -> None:
    """Words of reading and writing alone ("get", "delete", "show all") match every tool that reads
    or writes; a request whose other words match no tool gets none, not the most common verbs'."""
    for index in (github, stripe, tickets):
        assert index.search(query, limit=10) == [], query


@settings(
    max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    verb=st.sampled_from(
        ["get", "list all", "delete", "create a new", "show me every", "update the", "remove"]
    ),
    word=st.text(alphabet="qxzjv", min_size=9, max_size=14),
)
def test_generic_verbs_never_pad_results(tickets: ToolIndex, verb: str, word: str) -> None:
    assert tickets.search(f"{verb} {word}", limit=5) == []


def test_every_hit_names_a_word_of_the_request(tickets: ToolIndex) -> None:
    """A request that names one thing gets only tools whose text names it or a word it expands to
    (history: events, log, audit); tools that name none of them are never padded in."""
    from toolgen.search.text_index import analyse_query

    hits = tickets.search("show the history", limit=10)
    assert hits and hits[0].tool == "get_ticket_history"
    terms = set(analyse_query("show the history")[0])
    documents = json.loads((GENERATED / "tickets" / "search.json").read_text(encoding="utf-8"))["documents"]
    text = {tool: " ".join(doc["fields"].values()) for doc in documents for tool, _ in doc["tools"]}
    for hit in hits:
        assert terms & set(text[hit.tool].split()), hit.tool
    assert not {"get_ticket", "list_tickets", "record_ticket_delete"} & {h.tool for h in hits}


def _follows() -> ToolIndex:
    """Follow, unfollow and list the followed artists: a hand-made package of the shape of Spotify's."""
    rows: list[dict[str, object]] = []
    entries: list[dict[str, object]] = []
    for tool, method, path, title in (
        ("record_follow_artists", "PUT", "/me/following", "Follow artists"),
        ("record_unfollow_artists", "DELETE", "/me/following", "Unfollow artists"),
        ("get_followed", "GET", "/me/following", "Get followed artists"),
    ):
        rows.append(
            {
                "tool": tool,
                "intent": tool.removeprefix("record_"),
                "mode": "read" if method == "GET" else "record",
                "effect": "read" if method == "GET" else "write",
                "permission": [],
                "operation": {"id": tool.removeprefix("record_"), "method": method, "path": path},
            }
        )
        entries.append(
            {
                "name": tool,
                "title": title,
                "description": f"{title} for the current user.",
                "inputSchema": {"type": "object", "properties": {"ids": {"type": "string"}}},
            }
        )
    return ToolIndex({"tools": rows}, entries)


def test_stop_doing_asks_for_the_undo() -> None:
    """ "stop following X" asks for what undoes following (the un-verb), not for following."""
    from toolgen.search.text_index import analyse_query

    terms, _, _, actions = analyse_query("stop following that artist")
    assert "delete" in actions and {"unfollow", "follow"} <= set(terms)
    _, _, _, actions = analyse_query("accept a dispute and stop fighting it")  # not the request's verb
    assert "delete" not in actions
    assert first(_follows(), "stop following this artist") == "record_unfollow_artists"
    assert first(_follows(), "follow this artist") == "record_follow_artists"


# -- CLI --------------------------------------------------------------------------------------------


def test_cli_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("TOOLGEN_SCOPES", raising=False)
    result = CliRunner().invoke(
        main, ["search", "github", "get rid of the label", "--format", "json", "--limit", "3"]
    )
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert len(hits) == 3
    assert all(set(h) == {"tool", "toolset", "score", "operation"} for h in hits)
    assert hits[0]["tool"] == "record_remove_issue_label" and hits[0]["operation"] == "issues/remove-label"
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_cli_text_scopes_and_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("TOOLGEN_SCOPES", raising=False)
    result = CliRunner().invoke(main, ["search", "generated/tickets", "delete a ticket"])
    assert result.exit_code == 0 and result.stdout.splitlines()[0].split()[1] == "record_ticket_delete"
    result = CliRunner().invoke(
        main, ["search", "tickets", "delete a ticket", "--scopes", "ticket:read", "--format", "json"]
    )
    assert result.exit_code == 0 and "record_ticket_delete" not in result.stdout
    monkeypatch.setenv("TOOLGEN_SCOPES", "ticket:read")
    result = CliRunner().invoke(main, ["search", "tickets", "delete a ticket", "--format", "json"])
    assert "record_ticket_delete" not in result.stdout
    result = CliRunner().invoke(main, ["search", "tickets", "delete the zork"])
    assert result.exit_code == 0 and result.stdout == "" and "no matching tool" in result.stderr
    result = CliRunner().invoke(main, ["search", "tickets", "delete the zork", "--format", "json"])
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    result = CliRunner().invoke(main, ["search", "no-such-api", "x"])
    assert result.exit_code == 2 and "neither a folder" in result.stderr
    result = CliRunner().invoke(main, ["search", "tickets", "x", "--limit", "0"])
    assert result.exit_code == 2


def test_cli_text_shows_a_weak_hit_as_weak_not_as_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hits that name only words most operations name score far below 0.001; the text shows their
    order of magnitude, as the JSON gives the score, so none reads as a padded 0.000."""
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("TOOLGEN_SCOPES", raising=False)
    args = ["search", "github", "merge a pull request", "--scopes", "issues:read"]
    hits = json.loads(CliRunner().invoke(main, [*args, "--format", "json"]).stdout)
    weak = [h for h in hits if 0 < h["score"] < 0.001]
    assert weak, hits  # the scopes leave only issue tools, which name "pull request" in passing
    lines = CliRunner().invoke(main, args).stdout.splitlines()
    assert len(lines) == len(hits)
    for hit, line in zip(hits, lines, strict=True):
        shown = float(line.split()[2])
        assert shown > 0 and abs(shown - hit["score"]) <= max(0.0005, hit["score"] * 0.05), (line, hit)


# -- quality on the include-everything GitHub build ---------------------------------------------------


_BENCH = REPO / "benchmarks" / "tool_search.py"
_SHARED = REPO / ".." / "shared"


@pytest.mark.skipif(
    not (_SHARED / "specs" / "real" / "github-api.github.com.json").is_file(),
    reason="../shared/specs/real is not available",
)
def test_github_query_set_recall_at_5() -> None:
    bench = benchmark_module("tool_search")
    result = bench.evaluate("github", _SHARED)
    ours = result.scores[("toolgen", "all", "all")]
    base = result.scores[("plain bm25", "all", "all")]
    assert ours.n >= 50
    assert ours.at5 / ours.n >= 0.9, ours.misses
    assert ours.at5 > base.at5
