"""Token counts of catalog text with the o200k_base encoding (offline, via bpe-openai)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import bpe_openai

    return bpe_openai.get_encoding("o200k_base")


def count_tokens(text: str) -> int:
    """Number of o200k_base tokens in `text`."""
    return len(_encoding().encode(text, disallowed_special=()))
