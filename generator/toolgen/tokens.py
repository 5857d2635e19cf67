"""Kernel `tokens`: token counts of catalog text with the o200k_base encoding (offline, via bpe-openai).

Input: text (a catalog's compact JSON). Output: its number of o200k_base tokens."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import bpe_openai

    return bpe_openai.get_encoding("o200k_base")


CHUNK_CHARS = 100_000


def count_tokens(text: str) -> int:
    """Number of o200k_base tokens in `text`. Long texts are counted in chunks cut at a comma or
    space (the encoder refuses huge inputs), which can differ from a single pass by a token a chunk."""
    enc = _encoding()
    total = 0
    start = 0
    while start < len(text):
        end = min(len(text), start + CHUNK_CHARS)
        if end < len(text):
            cut = max(text.rfind(",", start, end), text.rfind(" ", start, end))
            end = cut + 1 if cut > start else end
        total += len(enc.encode(text[start:end], disallowed_special=()))
        start = end
    return total
