"""Token counts: the Rust counter loaded on its own and bpe-openai's public encoder agree."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

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
            for tool in json.loads((REPO / "generated" / api / f"{dialect}.json").read_text(encoding="utf-8")):
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
