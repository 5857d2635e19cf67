"""Kernel `tokens`: token counts of catalog text with the o200k_base encoding (offline, via bpe-openai).

Input: text (a catalog's compact JSON). Output: its number of o200k_base tokens."""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _counter() -> Any:
    """A callable counting o200k_base tokens of a string.

    bpe-openai's Rust tokenizer counts directly. Importing the `bpe_openai` package first decodes the
    merge tables of every encoding it ships in Python (about 0.45 s, paid by every build and lint),
    which counting does not need; so the extension module is loaded on its own, and the package's
    public API is the fallback when that is not possible (another layout of the package). Both count
    the same: special-token text counts as plain text."""
    try:
        import importlib.machinery
        import importlib.util
        from pathlib import Path

        spec = importlib.util.find_spec("bpe_openai")
        folder = Path(spec.origin).parent if spec is not None and spec.origin else None
        library = next(folder.glob("_bindings*.so"), None) if folder is not None else None
        if library is not None:
            loader = importlib.machinery.ExtensionFileLoader("bpe_openai._bindings", str(library))
            module_spec = importlib.util.spec_from_file_location(
                "bpe_openai._bindings", library, loader=loader
            )
            if module_spec is not None:
                module = importlib.util.module_from_spec(module_spec)
                loader.exec_module(module)
                return module.tokenizer_for_encoding("o200k_base").count
    except Exception:  # noqa: BLE001, S110 - any problem: the public API below counts the same
        pass
    import bpe_openai

    encoding = bpe_openai.get_encoding("o200k_base")
    return lambda text: _count_in_chunks(encoding, text)


#: characters the fallback gives the public encoder at once, when it can: the encoder refuses more
#: than 200,000 tokens, and a character is at most 4 tokens (its UTF-8 bytes)
CHUNK_CHARS = 50_000
#: the public encoder refuses a text of this many characters or more
MAX_ENCODE_CHARS = 1_000_000


def _word_end(text: str, i: int) -> bool:
    """True when o200k_base's pre-tokenizer always splits `text` between ``text[i - 1]`` and
    ``text[i]``, whatever comes before or after: a letter or digit ends a piece when a character
    follows that no piece continues with (not a letter, digit, combining mark, nor the ``'`` of a
    contraction such as ``'s``), and a piece never depends on the text before it. Counts are
    additive over such cuts (BPE runs inside each piece)."""
    before, after = unicodedata.category(text[i - 1])[0], unicodedata.category(text[i])[0]
    return before in "LN" and after not in "LNM" and text[i] != "'"


def _chunk_end(text: str, start: int) -> int:
    """Where the chunk from `start` ends: the text's end when it is within `CHUNK_CHARS`, else the
    last word end (`_word_end`) within it, else the first one after it that the encoder still
    takes (a long piece, e.g. a run of letters), else `CHUNK_CHARS` on (the only inexact cut)."""
    limit = start + CHUNK_CHARS
    if len(text) <= limit:
        return len(text)
    for i in range(limit, start, -1):
        if _word_end(text, i):
            return i
    for i in range(limit + 1, min(len(text), start + MAX_ENCODE_CHARS - 1)):
        if _word_end(text, i):
            return i
    return len(text) if len(text) - start < MAX_ENCODE_CHARS else limit


def _count_in_chunks(encoding: Any, text: str) -> int:
    """The fallback's count: the public encoder refuses huge inputs (1,000,000 characters, 200,000
    tokens), so a long text is counted in chunks cut where o200k_base's pre-tokenizer always splits
    (`_chunk_end`): the sum is the single pass's count. A chunk the encoder refuses (a piece of
    more than 200,000 tokens) is counted `CHUNK_CHARS` at a time."""
    total = 0
    start = 0
    while start < len(text):
        end = _chunk_end(text, start)
        try:
            total += len(encoding.encode(text[start:end], disallowed_special=()))
        except Exception:  # noqa: BLE001 - the encoder's token limit (its error type is not public)
            end = start + CHUNK_CHARS
            total += len(encoding.encode(text[start:end], disallowed_special=()))
        start = end
    return total


def count_tokens(text: str) -> int:
    """Number of o200k_base tokens in `text` (special-token text counts as plain text)."""
    return int(_counter()(text))
