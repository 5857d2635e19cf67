"""`toolgen.naming.has_word`: the word-boundary test routing notes and lint use on tool names,
checked against `re`'s ``\\b`` on generated texts (the rule it replaces)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.naming import has_word

#: letters, digits, the name characters ``_`` and ``-``, spaces, punctuation and a non-ASCII letter
#: and digit, so both sides of every boundary occur
ALPHABET = st.sampled_from(list("ab_-1 .,é٣"))


@settings(max_examples=examples(400))
@given(st.text(ALPHABET, max_size=24), st.text(ALPHABET, min_size=1, max_size=5))
def test_has_word_agrees_with_the_regex_boundary(text: str, word: str) -> None:
    assert has_word(text, word) == bool(re.search(rf"\b{re.escape(word)}\b", text))


@settings(max_examples=examples(200))
@given(
    st.text(ALPHABET, max_size=10), st.text(ALPHABET, min_size=1, max_size=5), st.text(ALPHABET, max_size=10)
)
def test_a_word_set_apart_by_spaces_is_found(before: str, word: str, after: str) -> None:
    text = f"{before} {word} {after}"
    assert has_word(text, word) == bool(re.search(rf"\b{re.escape(word)}\b", text))


def test_tool_names_in_descriptions() -> None:
    assert has_word("Not for one by id: use get_issue.", "get_issue")
    assert not has_word("Not for one by id: use get_issues.", "get_issue")
    assert not has_word("use preview_get_issue", "get_issue")
    assert not has_word("anything", "")
