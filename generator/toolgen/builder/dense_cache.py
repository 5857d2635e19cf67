"""The dense option's embeddings, remembered in the build cache: a build embeds only the texts it has not embedded before.

Input: the build cache (`toolgen.builder.cache.Cache`, or None: ``--no-cache``) and the pinned model
(`toolgen.search.dense_index.DenseModel`). Output: `dense_embedder` -> an `Embedder` the build hands to
`toolgen.emit.search_index.dense_search` in place of the model itself; its `CachedEmbedder.computed`
says how many texts this build ran through the model.

One entry per text, of kind ``dense-vector``, keyed by the digest of `embedding_settings` (the model's
and the tokenizer's SHA-256, the length texts are cut to, the source of the embedder's code, the
versions of onnxruntime, tokenizers and numpy, the machine's architecture) and the exact text the
model sees (`toolgen.search.dense_sidecar.dense_texts`). Its payload is the vector as the model gave it:
float64, little-endian, before the sidecar's quantisation. So a text whose document changed, or any
text under another model or tokenizer pin, is a miss; every other text is read back.

The sidecar a cached build writes is the bytes a build without the cache writes on the same machine
(a cache shared between machines of one architecture whose CPUs differ in vector instructions may
hold vectors that differ in their last bits; `build --check` compares pins, not vectors): an entry holds the
exact float64 the model computed for that text, and the model runs each text on its own
(`toolgen.search.onnx_embedder.BATCH` is 1), so a vector never depends on which other texts were
embedded in the same build. An entry is used only when the cache believes it (its header, length and
MAC: `Cache.get`) and it is a vector of this build: a whole number of float64, all finite, of unit or
zero length, and as long as every other vector of the build. Anything else is a miss, embedded again
and rewritten; when the vectors read back disagree on their length, none of them is used.

Not in the key: the rest of toolgen's code (`toolgen.builder.cache.environment_key`), which an
embedding does not depend on, so that editing toolgen does not re-embed thousands of texts.
"""

from __future__ import annotations

import json
import math
import platform
import struct
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from ..search import onnx_embedder
from ..search.dense_index import DenseModel, pinned_embedder
from ..search.onnx_embedder import OnnxEmbedder
from ..search.vector_index import Embedder
from .cache import Cache, digest

__all__ = ["KIND", "CachedEmbedder", "dense_embedder", "embedding_settings"]

#: the cache's kind of entry: one text's vector
KIND = "dense-vector"
#: the entry's layout: raise it when the payload changes
_FORMAT = 1
#: how far from 1 a unit vector's stored length may be (the model's vectors are normalised in float64)
_UNIT = 1e-6


def embedding_settings(embedder: OnnxEmbedder) -> str:
    """What, besides the text, decides the vector `embedder` gives it (canonical JSON): the model's
    and the tokenizer's SHA-256, ``max_tokens``, the embedder's code (the SHA-256 of
    `toolgen.search.onnx_embedder`'s source), the versions of the libraries that run it and the
    machine's architecture (a model run's last bits may differ on another)."""
    versions: dict[str, str | None] = {}
    for name in ("onnxruntime", "tokenizers", "numpy"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return json.dumps(
        {
            "format": _FORMAT,
            "model_sha256": embedder.model_sha256,
            "tokenizer_sha256": embedder.tokenizer_sha256,
            "max_tokens": embedder.max_tokens,
            "code": digest(Path(onnx_embedder.__file__).read_bytes()),
            "libraries": versions,
            "machine": platform.machine(),
        },
        sort_keys=True,
        separators=(",", ":"),
    )


def _vector(payload: bytes | None) -> tuple[float, ...] | None:
    """The vector an entry's payload holds, or None when it is not one a model gave (its length not a
    whole, non-zero number of float64, a value not finite, a length neither 0 nor 1)."""
    if payload is None or not payload or len(payload) % 8:
        return None
    values = struct.unpack(f"<{len(payload) // 8}d", payload)
    norm = sum(v * v for v in values)
    if not math.isfinite(norm):  # a NaN or an infinity anywhere
        return None
    if norm != 0.0 and abs(norm - 1.0) > _UNIT:
        return None
    return values


class CachedEmbedder:
    """The pinned model's `embed`, answered from the build cache where it can be (module docstring).

    `name` is the model's (``onnx:<model sha256>:<tokenizer sha256>``); `computed` counts the texts
    this object ran through the model (distinct texts: a text twice in one call is embedded once)."""

    def __init__(self, cache: Cache, embedder: OnnxEmbedder) -> None:
        self._cache = cache
        self._embedder = embedder
        self._settings = embedding_settings(embedder)
        self.computed = 0

    @property
    def name(self) -> str:
        return self._embedder.name

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, as `OnnxEmbedder.embed` gives it (the same floats). Raises as
        `OnnxEmbedder.embed` for the texts it runs through the model."""
        distinct = list(dict.fromkeys(str(t) for t in texts))
        keys = {text: digest(self._settings, text) for text in distinct}
        found = {text: _vector(self._cache.get(KIND, keys[text])) for text in distinct}
        known = {text: vector for text, vector in found.items() if vector is not None}
        if len({len(v) for v in known.values()}) > 1:
            known = {}  # entries that disagree on the model's width: none is believed
        missing = [text for text in distinct if text not in known]
        if missing:
            fresh = self._embedder.embed(missing)
            self.computed += len(missing)
            widths = {len(v) for v in fresh}
            if known and widths != {len(next(iter(known.values())))}:
                fresh = self._embedder.embed(distinct)  # the entries are of another width: embed all
                self.computed += len(distinct) - len(missing)
                missing, known = distinct, {}
            for text, vector in zip(missing, fresh, strict=True):
                known[text] = tuple(vector)
                self._cache.put(KIND, keys[text], struct.pack(f"<{len(vector)}d", *vector))
        return [list(known[str(t)]) for t in texts]


def dense_embedder(cache: Cache | None, pins: DenseModel) -> Embedder:
    """The embedder a build of the dense option runs: the pinned model (`pinned_embedder`, already
    checked by `toolgen.builder.build.dense_pins`), behind the build cache when there is one. Raises as
    `pinned_embedder`."""
    model = pinned_embedder(
        pins.model, pins.model_sha256, pins.tokenizer, pins.tokenizer_sha256, pins.max_tokens
    )
    return model if cache is None else CachedEmbedder(cache, model)
