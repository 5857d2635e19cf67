"""Kernel `search_dense`: the dense option of tool search, from the build's pins to the runtime's fusion.

Input, at build time: the index documents of ``search.json`` and the pinned model (`DenseModel`, from
toolgen.yaml ``search: {semantic: onnx, ...}``). Output: `dense_files` -> the ``semantic`` value of
``search.json`` (which model, pinned by hash, and which documents the vectors were made from; no
float in it) and the bytes of its sidecar ``search.vectors`` (`toolgen.search.dense_sidecar`).

At run time: `load_dense` -> a `DenseIndex` over the sidecar's vectors and the model, or the reason
there is none (the extra not installed, the model or its tokenizer missing or of another hash, the
sidecar absent, refused or made from other documents or by another model). Tool search then ranks
lexically and says why once (`warn_once`): a stale vector never ranks anything.
`DenseIndex.fuse` merges the lexical ranking with the dense one by weighted reciprocal rank fusion
(Cormack, Clarke and Büttcher, SIGIR 2009): ``1 / (RRF_K + lexical rank) + DENSE_WEIGHT /
(RRF_K + dense rank)``, over the lexical hits and the `DENSE_DEPTH` nearest operations the caller's
scopes allow, so an operation whose text shares no word with the request can still be found.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .dense_check import REBUILD, DenseProblem, checked_sidecar
from .dense_sidecar import SIDECAR_FILE, dense_texts, documents_sha256, encode
from .onnx_embedder import MAX_TOKENS, DenseModelError, DenseUnavailable, OnnxEmbedder, dense_modules
from .vector_index import Embedder

__all__ = [
    "DENSE_DEPTH",
    "DENSE_NAME",
    "DENSE_WEIGHT",
    "RRF_K",
    "DenseIndex",
    "DenseModel",
    "dense_files",
    "is_dense",
    "load_dense",
    "pinned_embedder",
    "warn_once",
]

#: ``search.json`` ``semantic.embedder`` of the dense option
DENSE_NAME = "onnx"
#: reciprocal rank fusion's constant and the weight of the dense ranking against the lexical one (1:
#: equal), chosen on the development halves of the blind request sets with all-MiniLM-L6-v2 (best mean
#: MRR of k in {20, 60} × weight in {0.25, 0.5, 1, 2}, with and without the expansions;
#: benchmarks/results/search_dense.md): the lexical ranking leads, the model reorders and fills in
RRF_K = 20
DENSE_WEIGHT = 0.25
#: how many of the nearest operations by the model (those the caller may see) join the fusion
DENSE_DEPTH = 50

_LOG = logging.getLogger("toolgen.search")
_WARNED: set[str] = set()
_LOCK = threading.Lock()
_EMBEDDERS: dict[tuple[str, str, str], OnnxEmbedder] = {}


def warn_once(message: str) -> None:
    """Log `message` as a warning of the ``toolgen.search`` logger, once per process."""
    with _LOCK:
        if message in _WARNED:
            return
        _WARNED.add(message)
    _LOG.warning("%s", message)


@dataclass(frozen=True)
class DenseModel:
    """The pinned model of the dense option, as a build reads it: `model` and `tokenizer` the files
    (resolved), their SHA-256 pins, and `model_ref` / `tokenizer_ref` the way ``search.json`` names
    them (relative to the generated package's folder, ``/``-separated: never a path of one machine)."""

    model: Path
    model_sha256: str
    tokenizer: Path
    tokenizer_sha256: str
    model_ref: str
    tokenizer_ref: str
    max_tokens: int = MAX_TOKENS


def dense_files(
    documents: Sequence[Mapping[str, Any]], pins: DenseModel, embedder: Embedder | None = None
) -> tuple[dict[str, Any], bytes]:
    """(the ``semantic`` value of ``search.json``, the ``search.vectors`` bytes) for `documents`:
    each document's `toolgen.search.dense_sidecar.dense_texts` embedded by the pinned model
    (`embedder`: one already loaded, of the same name). Raises `DenseUnavailable`, `DenseModelError`."""
    texts = dense_texts(documents)
    digest = documents_sha256(texts)
    if embedder is None:
        embedder = pinned_embedder(
            pins.model, pins.model_sha256, pins.tokenizer, pins.tokenizer_sha256, pins.max_tokens
        )
    vectors = embedder.embed(texts) if texts else []
    value = {
        "embedder": DENSE_NAME,
        "documents_sha256": digest,
        "max_tokens": pins.max_tokens,
        "model": {"path": pins.model_ref, "sha256": pins.model_sha256},
        "tokenizer": {"path": pins.tokenizer_ref, "sha256": pins.tokenizer_sha256},
        "vectors": SIDECAR_FILE,
    }
    sidecar = encode(
        vectors,
        model_sha256=pins.model_sha256,
        tokenizer_sha256=pins.tokenizer_sha256,
        documents=digest,
        max_tokens=pins.max_tokens,
    )
    return value, sidecar


def is_dense(value: Any) -> bool:
    """Whether a ``search.json`` ``semantic`` value is the dense option's."""
    return isinstance(value, Mapping) and value.get("embedder") == DENSE_NAME


def pinned_embedder(
    model: Path, model_sha256: str, tokenizer: Path, tokenizer_sha256: str, max_tokens: int = MAX_TOKENS
) -> OnnxEmbedder:
    """`OnnxEmbedder.load` of these files and pins, loaded once per process (by file, hash and cut;
    a file changed on disk after its load is not read again). Raises as `OnnxEmbedder.load`."""
    model, tokenizer = model.resolve(), tokenizer.resolve()
    key = (str(model), model_sha256, f"{tokenizer}\0{tokenizer_sha256}\0{max_tokens}")
    with _LOCK:
        found = _EMBEDDERS.get(key)
    if found is None:
        found = OnnxEmbedder.load(model, model_sha256, tokenizer, tokenizer_sha256, max_tokens=max_tokens)
        with _LOCK:
            _EMBEDDERS[key] = found
    return found


def load_dense(
    folder: Path,
    value: Mapping[str, Any],
    documents: Sequence[Mapping[str, Any]],
    embedder: Embedder | None = None,
) -> tuple[DenseIndex | None, DenseProblem | None]:
    """(the dense index of the package in `folder`, None) or (None, why there is none): `value` is
    the ``semantic`` value of its ``search.json`` (`is_dense`), `documents` its documents. The
    sidecar must be one `toolgen.search.dense_check.checked_sidecar` serves (one vector per document,
    made from these documents' texts by the model and tokenizer `value` pins, undamaged); the model
    (`embedder` when it has the pinned name, else the files `value` names, relative to `folder`,
    checked against their hashes) must embed to the sidecar's width. Never raises."""
    try:
        dense_modules()
    except DenseUnavailable as exc:
        return None, DenseProblem(str(folder / "search.json"), str(exc), "pip install -e '.[dense]'")
    sidecar, problem = checked_sidecar(folder, value, documents)
    if sidecar is None:
        return None, problem
    model, tokenizer = value["model"], value["tokenizer"]
    try:
        if embedder is None or embedder.name != f"onnx:{model['sha256']}:{tokenizer['sha256']}":
            embedder = pinned_embedder(
                folder / model["path"],
                model["sha256"],
                folder / tokenizer["path"],
                tokenizer["sha256"],
                value["max_tokens"],
            )
        width = len(embedder.embed(["tool search"])[0])
    except (DenseModelError, DenseUnavailable) as exc:
        return None, DenseProblem(
            str(folder / model["path"]),
            str(exc),
            "put the pinned model and tokenizer where search.json names them (toolgen never downloads "
            "one), or rebuild the package with the model it should use",
        )
    if sidecar.vectors.shape[0] and width != sidecar.vectors.shape[1]:
        return None, DenseProblem(
            str(folder / SIDECAR_FILE),
            f"the model embeds {width} dimensions, it holds {sidecar.vectors.shape[1]}",
            REBUILD,
        )
    return DenseIndex(sidecar.vectors, embedder), None


class DenseIndex:
    """The documents' dense vectors (count × dimensions, from the sidecar) and the model that embeds
    a request in their space."""

    def __init__(self, vectors: Any, embedder: Embedder) -> None:
        self._vectors = vectors
        self._embedder = embedder

    def similarity(self, text: str) -> Any | None:
        """Per document (in order), the cosine similarity of `text` to it (numpy array), or None
        when the model fails on it (a warning is logged once)."""
        np, _, _ = dense_modules()
        try:
            query = np.asarray(self._embedder.embed([text])[0], dtype=np.float32)
        except (DenseModelError, ValueError) as exc:
            warn_once(f"tool search ranks lexically: the dense model failed on a request ({exc})")
            return None
        if query.shape != (self._vectors.shape[1],) or not np.isfinite(query).all():
            return None
        return self._vectors @ query

    def fuse(
        self,
        query: str,
        ranked: list[tuple[float, str, int]],
        pick: Callable[[int], str | None],
        limit: int,
        similarity: Any = None,
    ) -> list[tuple[float, str, int]]:
        """`ranked` (the lexical ranking: (-score, tool, rowid), rowid from 1) fused with the dense
        ranking of `query` by weighted reciprocal rank (module docstring): the same entries with the
        fused score, plus the `DENSE_DEPTH` (at least `limit`) nearest documents for which `pick(rowid)`
        names a tool the caller may use. `ranked` unchanged when the model fails on `query`.
        `similarity`: `similarity(query)` when the caller has it already."""
        if similarity is None:
            similarity = self.similarity(query)
        if similarity is None or not len(similarity):
            return ranked
        return _fused(sorted(ranked), self.nearest(similarity, pick, limit))

    def nearest(
        self, similarity: Any, pick: Callable[[int], str | None], limit: int
    ) -> list[tuple[int, str]]:
        """(rowid, tool) of the `DENSE_DEPTH` (at least `limit`) documents nearest by `similarity` for
        which `pick(rowid)` names a tool, nearest first (ties: the lower rowid first)."""
        np, _, _ = dense_modules()
        depth = max(DENSE_DEPTH, limit)
        out: list[tuple[int, str]] = []
        for index in np.argsort(-similarity, kind="stable"):
            rowid = int(index) + 1
            visible = pick(rowid)
            if visible is not None:
                out.append((rowid, visible))
                if len(out) >= depth:
                    break
        return out

    def fuse_top(
        self,
        similarity: Any,
        top: list[tuple[float, str, int]],
        lexical: Callable[[int], bool] | None,
        pick: Callable[[int], str | None],
        limit: int,
    ) -> list[tuple[float, str, int]] | None:
        """What `fuse` gives for the first `limit` places, from the lexical ranking's first ``len(top)``
        entries alone (`top`, in order), or None when that cannot be known from them. `lexical(rowid)`:
        whether a document is a lexical hit at all (None: `top` holds every hit). A hit ranked below `top`
        scores at most ``1 / (RRF_K + len(top) + 1)`` lexically, plus its dense share if it is among the
        nearest: when that bound stays below the `limit`-th fused score known (with the rounding's margin),
        no such document can take a place, and the known entries are the fusion's."""
        nearest = self.nearest(similarity, pick, limit)
        known = {rowid for _, _, rowid in top}
        unknown = [
            rank
            for rank, (rowid, _) in enumerate(nearest, 1)
            if rowid not in known and lexical is not None and lexical(rowid)
        ]
        fused = _fused(top, nearest)
        if lexical is None:
            return fused
        missing = {nearest[rank - 1][0] for rank in unknown}
        fused = [entry for entry in fused if entry[2] not in missing]
        if len(fused) < limit:
            return None
        bound = 1.0 / (RRF_K + len(top) + 1) + (DENSE_WEIGHT / (RRF_K + min(unknown)) if unknown else 0.0)
        return fused if bound + 1e-9 < -sorted(fused)[limit - 1][0] else None


def _fused(
    ordered: list[tuple[float, str, int]], nearest: list[tuple[int, str]]
) -> list[tuple[float, str, int]]:
    """Weighted reciprocal rank fusion (module docstring) of the lexical ranking `ordered` (best first)
    and the dense one `nearest` ((rowid, tool), nearest first): (-fused score rounded, tool, rowid) of
    every document of either."""
    scores: dict[int, float] = {}
    tools: dict[int, str] = {}
    for rank, (_, tool, rowid) in enumerate(ordered, 1):
        scores[rowid] = 1.0 / (RRF_K + rank)
        tools[rowid] = tool
    for rank, (rowid, tool) in enumerate(nearest, 1):
        tools[rowid] = tool
        scores[rowid] = scores.get(rowid, 0.0) + DENSE_WEIGHT / (RRF_K + rank)
    return [(-round(score, 9), tools[rowid], rowid) for rowid, score in scores.items()]
