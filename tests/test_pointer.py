"""Tests for `toolgen.pointer`: RFC 6901 JSON pointers are read strictly. Every pointer the module
accepts round-trips through `escape_token`/`unescape_token`, and every text with a ``~`` that is not
``~0`` or ``~1`` (``~2``, a trailing ``~``) is refused with `PointerSyntaxError`, never read as literal
text."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.pointer import (
    PointerError,
    PointerSyntaxError,
    check_pointer,
    escape_token,
    join_pointer,
    parse_pointer,
    resolve_pointer,
    unescape_token,
)

#: token text over an alphabet dense in the characters RFC 6901 escapes
TOKEN_TEXT = st.text(alphabet=st.sampled_from("~/01a2%é"), max_size=8)
#: raw (escaped) token text: may hold well-formed escapes, bad ones, or none
RAW_TEXT = st.text(alphabet=st.sampled_from("~01a2/é"), max_size=12)
BAD = re.compile(r"~(?![01])")


@settings(max_examples=examples(400))
@given(st.lists(TOKEN_TEXT, max_size=5))
def test_every_joined_pointer_parses_back_to_its_tokens(tokens: list[str]) -> None:
    pointer = join_pointer("", *tokens)
    assert parse_pointer(pointer) == tokens
    assert check_pointer(pointer) == pointer


@settings(max_examples=examples(400))
@given(RAW_TEXT)
def test_a_raw_token_is_accepted_exactly_when_its_escapes_are_well_formed(raw: str) -> None:
    raw = raw.replace("/", "")  # one token: '/' separates tokens
    if BAD.search(raw):
        with pytest.raises(PointerSyntaxError):
            unescape_token(raw)
        with pytest.raises(PointerSyntaxError) as caught:
            parse_pointer("/a/" + raw)
        assert isinstance(caught.value, PointerError) and caught.value.text == "/a/" + raw
    else:
        assert escape_token(unescape_token(raw)) == raw  # accepted -> round-trips


@settings(max_examples=examples(400))
@given(RAW_TEXT)
def test_every_accepted_pointer_round_trips(raw: str) -> None:
    pointer = "/" + raw
    try:
        tokens = parse_pointer(pointer)
    except PointerSyntaxError:
        assert BAD.search(raw), f"{pointer!r} refused though its escapes are well formed"
        return
    assert not BAD.search(raw), f"{pointer!r} accepted though it holds a bad '~' escape"
    assert join_pointer("", *tokens) == pointer


@pytest.mark.parametrize("pointer", ["/a~2b", "/a~", "/~", "/x/~a", "/~~0", "/a~01/b~"])
def test_a_bad_escape_is_refused_not_read_as_text(pointer: str) -> None:
    data: dict[str, Any] = {"a~2b": 1, "a~": 2, "~": 3, "x": {"~a": 4}, "~~": 5, "a~1": {"b~": 6}}
    with pytest.raises(PointerSyntaxError, match="RFC 6901"):
        parse_pointer(pointer)
    with pytest.raises(PointerSyntaxError):
        resolve_pointer(data, pointer)


def test_well_formed_escapes_still_resolve() -> None:
    data = {"a/b": {"c~d": 1}, "~1": 2}
    assert resolve_pointer(data, "/a~1b/c~0d") == 1
    assert resolve_pointer(data, "/~01") == 2  # '~01' is '~1', not '/'
    assert resolve_pointer(data, "") == data


def test_a_pointer_without_a_leading_slash_is_a_syntax_error() -> None:
    with pytest.raises(PointerSyntaxError):
        parse_pointer("a/b")
