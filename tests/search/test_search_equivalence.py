"""`ToolIndex.search` ranks exactly as the plain ranking it speeds up: every matched document scored
in full, its coverage and matching found one term and one table at a time (`tests.support.search_reference`,
kept as the oracle); the index's own path scores from FTS5's postings only the documents whose upper
bound can reach the first `limit` places (`toolgen.runtime.serving.postings`). Same tools, same order,
same scores to the float, over the blind request sets and generated requests, with and without scopes,
on the repository's generated packages and on their documents replicated 40 times (ties)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples
from tests.support.search_reference import reference

from toolgen.runtime.serving.tool_index import ToolIndex, _action_factor
from toolgen.search.text_index import COVERAGE_WEIGHT, ITEM_BOOST, analyse_query, content_terms

REPO = Path(__file__).resolve().parents[2]
GENERATED = REPO / "generated"
BLIND = REPO / "benchmarks" / "queries" / "blind"
APIS = sorted(p.name for p in GENERATED.iterdir() if (p / "search.json").is_file())


def _blind_requests() -> list[str]:
    """Every request of the blind sets (benchmarks/queries/blind/*.yaml)."""
    return [
        str(q["q"])
        for path in sorted(BLIND.glob("*.yaml"))
        for q in yaml.safe_load(path.read_text(encoding="utf-8"))["queries"]
    ]


@pytest.fixture(scope="module", params=[*APIS, "replicated"])
def index(request: pytest.FixtureRequest) -> ToolIndex:
    return _INDEXES[request.param]


def test_the_blind_requests_rank_as_the_full_scoring_does(index: ToolIndex) -> None:
    requests = _blind_requests()
    assert len(requests) > 100, "the blind request sets were not read"
    for query in requests:
        for limit in (1, 5, 20):
            assert index.search(query, limit=limit) == reference(index, query, limit=limit), (query, limit)


def test_scope_filtering_ranks_as_the_full_scoring_does(index: ToolIndex) -> None:
    scopes = sorted({s for d in index._docs for _, need in d.tools for s in need})
    held = scopes[::3]
    for query in _blind_requests()[::4]:
        assert index.search(query, scopes=held, limit=5) == reference(index, query, held, 5), query


WORDS = [
    "list",
    "get",
    "delete",
    "create",
    "update",
    "the",
    "all",
    "repos",
    "repository",
    "issue",
    "issues",
    "label",
    "pull",
    "request",
    "PR",
    "comment",
    "user",
    "org",
    "team",
    "secret",
    "branch",
    "file",
    "12",
    "from",
    "in",
    "of",
    "show",
    "remove",
    "customer",
    "charge",
    "refund",
    "ticket",
    "cancel",
    "search",
    "webhook",
    "key",
    "ch_3MmlLr",
    "octocat/hello-world",
    "which",
    "what",
    "stop",
    "following",
    "star",
]


@settings(max_examples=examples(150), deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), limit=st.integers(0, 12))
def test_generated_requests_rank_as_the_full_scoring_does(words: list[str], limit: int) -> None:
    query = " ".join(words)
    for index in _INDEXES.values():
        assert index.search(query, limit=limit) == reference(index, query, limit=limit), (query, limit)


def _replicated(copies: int) -> ToolIndex:
    """The documents of every generated package, `copies` times over under other tool names: an index
    of many documents with equal texts, so equal scores (the tie-break by tool name) and a bound
    that prunes most of them."""
    rows: list[dict[str, Any]] = []
    documents: list[dict[str, Any]] = []
    for name in APIS:
        policy = json.loads((GENERATED / name / "policy.json").read_text(encoding="utf-8"))
        search = json.loads((GENERATED / name / "search.json").read_text(encoding="utf-8"))
        for k in range(copies):
            rows += [
                {**row, "tool": f"{row['tool']}_{k}", "intent": f"{row.get('intent') or row['tool']}_{k}"}
                for row in policy["tools"]
            ]
            documents += [
                {**doc, "intent": f"{doc['intent']}_{k}", "tools": [[f"{t}_{k}", s] for t, s in doc["tools"]]}
                for doc in search["documents"]
            ]
    return ToolIndex({"tools": rows}, [], documents=documents)


_INDEXES = {**{name: ToolIndex.from_dir(GENERATED / name) for name in APIS}, "replicated": _replicated(40)}


@pytest.mark.parametrize(
    "query",
    ["list all repos in the netflix org", "add @lee (already a GitHub user) to the acme org as a member"],
)
def test_the_bound_leaves_documents_unscored(monkeypatch: pytest.MonkeyPatch, query: str) -> None:
    """The pruning is exercised by the requests above: a common request scores (`ToolIndex._entry`) a
    small share of the documents it matches, through the postings (SQLite's ``bm25()`` is not asked),
    and still ranks as the full scoring does."""
    index = _INDEXES["replicated"]
    assert index._postings is not None, "the postings were refused: every search asks SQLite"
    expected = reference(index, query, limit=5)
    calls: list[int] = []
    entry = index._entry

    def counted(*args: Any) -> Any:
        calls.append(args[1])
        return entry(*args)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the bounded ranking fell back to SQLite's")

    monkeypatch.setattr(index, "_entry", counted)
    monkeypatch.setattr(index, "_ranked", refused)
    assert index.search(query, limit=5) == expected
    terms, _, _, actions = analyse_query(query)
    matched = index._matching(content_terms([*terms, *sorted(actions)]))
    assert 0 < len(calls) < len(matched) / 4, (len(calls), len(matched))


def test_the_ceiling_bounds_every_factor_a_score_can_get() -> None:
    """`_CEILING` is at least the product of the largest coverage factor, every pair of request and
    document action classes, and the one-item boost: a bound below it would prune a document that
    could rank."""
    from itertools import chain, combinations

    from toolgen.runtime.serving.tool_index import _CEILING

    classes = ["get", "list", "search", "create", "update", "delete", "cancel", "detach", "refund"]
    sets = [set(c) for c in chain.from_iterable(combinations(classes, n) for n in range(3))]
    for asked in sets:
        for has in sets:
            most = (1 - COVERAGE_WEIGHT + COVERAGE_WEIGHT * 1.0) * _action_factor(asked, frozenset(has))
            assert most * (1 + ITEM_BOOST) <= _CEILING and most <= _CEILING, (asked, has)


def test_every_index_here_ranks_through_its_postings() -> None:
    """The equivalence above is the postings' (not SQLite's ranking compared with itself): every index
    of these tests loaded them, their shares agreeing with SQLite's bm25()."""
    assert all(index._postings is not None for index in _INDEXES.values()), [
        name for name, index in _INDEXES.items() if index._postings is None
    ]


@settings(max_examples=examples(60), deadline=None)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=12),
    limit=st.integers(1, 12),
    pick=st.integers(1, 4),
)
def test_generated_requests_with_scopes_rank_as_the_full_scoring_does(
    words: list[str], limit: int, pick: int
) -> None:
    """Scopes that hide most tools: the bound of a document none of whose tools the caller may use is
    0, and the ranking is still the full scoring's."""
    query = " ".join(words)
    for index in (_INDEXES["replicated"], *(_INDEXES[name] for name in APIS[:2])):
        scopes = sorted({s for d in index._docs for _, need in d.tools for s in need})
        held = scopes[::pick]
        assert index.search(query, scopes=held, limit=limit) == reference(index, query, held, limit), (
            query,
            limit,
            held,
        )


def test_shares_that_differ_from_sqlites_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A share computed otherwise than SQLite computes bm25 (here: another k1) fails the check at load:
    the index asks SQLite for every query, and ranks as before."""
    from toolgen.runtime.serving import postings

    monkeypatch.setattr(postings, "K1", 1.25)
    name = APIS[0]
    index = ToolIndex.from_dir(GENERATED / name)
    assert index._postings is None
    for query in _blind_requests()[::7]:
        assert index.search(query, limit=5) == reference(index, query, limit=5), query


def test_a_word_the_tokenizer_splits_or_drops_asks_sqlite() -> None:
    """`Postings.tokens` gives FTS5's own token of each word (stemmed: repos → repo), remembered, and
    None for a word that makes no token or more than one; `bounded_ranking` then returns None."""
    from toolgen.runtime.serving.postings import Asked, bounded_ranking

    postings = _INDEXES[APIS[0]]._postings
    assert postings is not None
    assert postings.tokens(["repos", "labels", "repos"]) == ["repo", "label", "repo"]
    assert postings.tokens(["pull-request"]) is None
    assert postings.tokens(["---"]) is None
    asked = Asked(["pull-request"], [], [], [], ["pull-request"], set(), False, None)
    assert bounded_ranking(postings, asked, lambda *a: None, lambda *a: 1.0, 5, 2.0, 4) is None


def test_too_many_documents_at_the_top_ask_sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the phrases of the highest bounds hold more documents than `_POOL`, SQLite ranks (the same
    hits)."""
    from toolgen.runtime.serving import postings

    monkeypatch.setattr(postings, "_POOL", 3)
    index = _INDEXES["replicated"]
    asked_sqlite: list[int] = []
    ranked = index._ranked

    def counted(*args: Any, **kwargs: Any) -> Any:
        asked_sqlite.append(1)
        return ranked(*args, **kwargs)

    monkeypatch.setattr(index, "_ranked", counted)
    for query in _blind_requests()[::9]:
        assert index.search(query, limit=5) == reference(index, query, limit=5), query
    assert asked_sqlite


def test_the_token_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """The words `Postings.tokens` remembers are bounded (a server answers any request): past the
    bound it forgets them all and tokenizes again, with the same tokens."""
    from toolgen.runtime.serving import postings as module

    monkeypatch.setattr(module, "_TOKEN_CACHE", 4)
    postings = _INDEXES[APIS[0]]._postings
    assert postings is not None
    monkeypatch.setattr(postings, "_tokens", {})  # what other tests' requests left in it
    words = ["issues", "labels", "repositories", "comments", "users", "teams"]
    first = postings.tokens(words[:3])
    assert postings.tokens(words[3:]) == ["comment", "user", "team"]
    assert len(postings._tokens) <= 4 + 3
    assert postings.tokens(words[:3]) == first == ["issu", "label", "repositori"]


@settings(max_examples=examples(40), deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=8), pick=st.integers(1, 3))
def test_most_bounds_every_entry(words: list[str], pick: int) -> None:
    """`ToolIndex._most` (what the bounded ranking multiplies a document's bm25 total by, at most) is at
    least what `_entry` multiplies it by, at any coverage, for every document, and 0 exactly when the
    caller may use none of its tools: a ranking change in `_entry` that `_most` does not follow fails
    here."""
    from toolgen.runtime.identity import scope_set
    from toolgen.runtime.serving.postings import Asked

    query = " ".join(words)
    terms, own, head, actions = analyse_query(query)
    for name in APIS:
        index = _INDEXES[name]
        scopes = sorted({s for d in index._docs for _, need in d.tools for s in need})
        for held in (None, scope_set(scopes[::pick])):
            asked = Asked(terms, own, [], head, content_terms(terms), actions, len(words) % 2 == 0, held)
            for rowid in range(1, len(index) + 1):
                most = index._most(asked, rowid)
                for coverage in (0.0, 0.5, 1.0):
                    entry = index._entry(asked, rowid, 3.0, coverage)
                    assert (entry is None) == (most == 0.0), (query, rowid)
                    assert entry is None or -entry[0] <= 3.0 * most + 5e-7, (query, rowid, coverage)


@pytest.mark.parametrize("word", ['issue"', '"', 'a"b', 'NEAR("x" OR', "*"])
def test_a_word_with_fts5_syntax_in_a_document_neither_breaks_loading_nor_ranking(word: str) -> None:
    """`Postings.load` probes each table with words of the first documents' text: a word holding a
    double quote or an FTS5 operator (a hand-edited or hostile search.json) once made the probe a
    syntax error that escaped `ToolIndex` (the server failed at start). Words are quoted as FTS5
    strings (`phrase`), and the index ranks as the full scoring does."""
    name = APIS[0]
    search = json.loads((GENERATED / name / "search.json").read_text(encoding="utf-8"))
    policy = json.loads((GENERATED / name / "policy.json").read_text(encoding="utf-8"))
    documents = [dict(d) for d in search["documents"]]
    first = dict(documents[0])
    first["fields"] = {k: f"{word} {v}" if isinstance(v, str) else v for k, v in first["fields"].items()}
    documents[0] = first
    index = ToolIndex(policy, [], documents=documents)
    for query in _blind_requests()[::11]:
        assert index.search(query, limit=5) == reference(index, query, limit=5), query
