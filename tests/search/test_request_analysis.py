"""What `toolgen.search.text_index.analyse_query` reads from how a request is said: a clause that says
what it does not want, the verb a "stop ...ing" request undoes, "open" before an item named by its id,
an imperative verb the word tables do not know, "me" as the object, and a question answered yes or no.
Each rule is shown beside the request it must leave alone."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgen.search.text_index import analyse_query


def _terms(query: str) -> list[str]:
    return analyse_query(query)[0]


def _actions(query: str) -> set[str]:
    return analyse_query(query)[3]


@pytest.mark.parametrize(
    ("query", "said"),
    [
        (
            "unplug the scratch disk from worker-9 without deleting the disk itself",
            "unplug the scratch disk from worker-9",
        ),
        ("take the urgent tag off task 12 - don't delete the tag itself", "take the urgent tag off task 12"),
        (
            "take the urgent tag off task 12 - don\u2019t delete the tag itself",
            "take the urgent tag off task 12",
        ),
        ("which device models (not individual devices) do we have?", "which device models do we have?"),
        ("remove Ravi from portfolio 8 but leave the portfolio untouched", "remove Ravi from portfolio 8"),
    ],
)
def test_a_negated_clause_says_nothing_to_search_for(query: str, said: str) -> None:
    assert analyse_query(query) == analyse_query(said)


def test_a_negated_clause_ends_at_a_comma_a_bracket_or_a_dash() -> None:
    assert "albums" in _terms("I don't want the featured playlists, I want the new albums")
    assert "playlists" not in _terms("I don't want the featured playlists, I want the new albums")
    assert "version" in _terms("(not for an issue) the remote links of version 10200")
    assert "user" in _terms("follow the person - not the playlist - the user wizzler")


@given(st.lists(st.sampled_from(["list", "the", "open", "issues", "labels", "repo", "all"]), min_size=1))
def test_words_before_a_negation_are_kept(words: list[str]) -> None:
    query = " ".join(words)
    assert analyse_query(f"{query} without deleting the disk") == analyse_query(query)


def test_the_verb_a_stop_request_undoes_asks_for_no_action() -> None:
    assert _actions("stop showing the effort field on project 12") == {"delete"}
    assert "showing" in _terms("stop showing the effort field on project 12")
    # a verb no action class names is kept as it was (its synonyms join it)
    assert _actions("stop watching acme/web") == {"delete"}
    assert {"unwatch", "watch", "subscription"} <= set(_terms("stop watching acme/web"))
    assert "get" in _actions("show the effort field on project 12")


def test_open_reads_an_item_named_by_its_id_and_creates_otherwise() -> None:
    assert _actions("open template 5c1f7a2e-0000-4b7d-9a55-3f9e1d2c4b6a and show its roles") == {"list"}
    assert _actions("open dashboard 10000") == {"get"}
    assert "create" in _actions("open an issue about the crash")
    assert "create" in _actions("open the editor for template 5c1f7a2e-0000-4b7d-9a55-3f9e1d2c4b6a")
    assert "create" in _actions("open port 8443 on the default network with a new firewall rule")


def test_an_unknown_leading_verb_is_not_overruled_by_read_words_after_it() -> None:
    assert _actions("watch acme/web so I get notified about all activity") == set()
    assert _actions("clear all the fields of recipient 2") == set()
    assert _actions("list all the fields of recipient 2") == {"list"}
    assert "list" in _actions("I'd like to see all invoices")  # "like to": no imperative verb


def test_me_as_the_object_is_the_authenticated_user() -> None:
    assert {"authenticated", "user"} <= set(_terms("who's following me?"))
    assert {"authenticated", "user"} <= set(_terms("issues assigned to me"))
    assert "authenticated" not in _terms("show me the open issues")
    assert "authenticated" not in _terms("give me the invoices")
    assert "authenticated" not in _terms("pull the console log for me")


def test_a_yes_no_question_asks_to_check() -> None:
    assert "check" in _terms("have I already saved the podcast 5CfCWKI5pZ28U0uOzXkDHe?")
    assert "check" in _terms("Is the audiobook 18yVqkdbdRvS24c0Ilj2ci already in my library?")
    assert "check" not in _terms("which podcasts have I saved?")
    assert "check" not in _terms("save the podcast 5CfCWKI5pZ28U0uOzXkDHe")


def test_an_adverb_of_degree_is_no_word_to_search_for() -> None:
    assert analyse_query("delete task 12 entirely") == analyse_query("delete task 12")
    assert analyse_query("remove the link type altogether") == analyse_query("remove the link type")
    assert "permanently" in _terms("delete the repo permanently")  # a kind of delete, not emphasis
