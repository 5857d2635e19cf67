"""Token counts: the Rust counter loaded on its own and bpe-openai's public encoder agree."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import REPO
from tests.support.profiles import examples

from toolgen.tokens import _count_in_chunks, _counter, count_tokens


@cache
def _public() -> Any:
    """bpe-openai's public encoder, made when a test first needs it (not at collection, where every
    xdist worker would pay for it)."""
    import bpe_openai

    return bpe_openai.get_encoding("o200k_base")


def _both(text: str) -> tuple[int, int]:
    return count_tokens(text), _count_in_chunks(_public(), text)


def test_the_fast_counter_is_the_rust_one_not_the_fallback() -> None:
    assert getattr(_counter(), "__name__", "") == "count"  # the fallback is a lambda over the public API


def test_counts_agree_on_every_committed_catalog_tool() -> None:
    for api in ("tickets", "github", "stripe"):
        for dialect in ("mcp", "openai", "anthropic", "gemini"):
            for tool in json.loads(
                (REPO / "generated" / api / f"{dialect}.json").read_text(encoding="utf-8")
            ):
                text = json.dumps(tool, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                a, b = _both(text)
                assert a == b, (api, dialect)


def test_special_token_text_counts_as_plain_text() -> None:
    a, b = _both("<|endoftext|> and <|fim_prefix|> and <|endofprompt|>")
    assert a == b > 3


@settings(max_examples=examples(200))
@given(st.text(max_size=400))
def test_counts_agree_on_any_text(text: str) -> None:
    a, b = _both(text)
    assert a == b


def _long(fragments: list[str], length: int) -> str:
    """`fragments` joined over and over until the text holds at least `length` characters."""
    unit = "".join(fragments)
    return (unit * (length // len(unit) + 1))[:length]


#: texts of more than one chunk of the public encoder: prose (the chunks used to be cut after a
#: space, which moved the space from the word after it: +2 tokens on 240,000 characters), compact
#: JSON, and characters of four tokens each (a 100,000-character chunk was over the encoder's
#: 200,000-token limit and raised)
LONG_TEXTS = [
    "hello world " * 20_000,
    "Describe the ticket, then list its notes. " * 5_000,
    "ab,cd " * 40_000,
    json.dumps(
        [
            {
                "name": f"get_item_{i}",
                "description": "Read one item, by id. Returns its fields.",
                "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
            }
            for i in range(2_000)
        ],
        separators=(",", ":"),
    ),
    "\U000f0001" * 120_000,
    "d\U0002a6d6 " * 60_000,
]


@pytest.mark.parametrize("text", LONG_TEXTS, ids=range(len(LONG_TEXTS)))
def test_counts_agree_on_long_texts(text: str) -> None:
    assert len(text) > 100_000
    a, b = _both(text)
    assert a == b


_WORDS = st.sampled_from(
    [
        "ticket",
        "Ticket",
        "id",
        "note's",
        "42",
        "1999",
        " ",
        "  ",
        "\n",
        ",",
        '":"',
        "{",
        "}",
        "é",
        "日本語",
        "\u0301",
        "'",
        "\t",
        "--",
        "/",
    ]
)


@settings(max_examples=examples(40))
@given(
    st.lists(st.one_of(_WORDS, st.text(max_size=12)), min_size=1, max_size=60).filter(lambda f: "".join(f)),
    st.integers(min_value=100_001, max_value=240_000),
)
def test_counts_agree_on_any_long_text(fragments: list[str], length: int) -> None:
    """Above 100,000 characters the fallback counts in chunks; the sum is the single pass's count
    (REPORT.md gives the same figures whichever counter a machine has)."""
    text = _long(fragments, length)
    a, b = _both(text)
    assert a == b
