"""Kernel `tokens`: token counts of catalog text with the o200k_base encoding (offline, via bpe-openai).

Input: text (a catalog's compact JSON). Output: its number of o200k_base tokens."""

from __future__ import annotations

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
            module_spec = importlib.util.spec_from_file_location("bpe_openai._bindings", library, loader=loader)
            if module_spec is not None:
                module = importlib.util.module_from_spec(module_spec)
                loader.exec_module(module)
                return module.tokenizer_for_encoding("o200k_base").count
    except Exception:  # noqa: BLE001, S110 - any problem: the public API below counts the same
        pass
    import bpe_openai

    encoding = bpe_openai.get_encoding("o200k_base")
    return lambda text: _count_in_chunks(encoding, text)


CHUNK_CHARS = 100_000


def _count_in_chunks(encoding: Any, text: str) -> int:
    """The public encoder refuses huge inputs: long texts are counted in chunks cut at a comma or
    space, which can differ from a single pass by a token a chunk."""
    total = 0
    start = 0
    while start < len(text):
        end = min(len(text), start + CHUNK_CHARS)
        if end < len(text):
            cut = max(text.rfind(",", start, end), text.rfind(" ", start, end))
            end = cut + 1 if cut > start else end
        total += len(encoding.encode(text[start:end], disallowed_special=()))
        start = end
    return total


def count_tokens(text: str) -> int:
    """Number of o200k_base tokens in `text` (special-token text counts as plain text)."""
    return int(_counter()(text))
