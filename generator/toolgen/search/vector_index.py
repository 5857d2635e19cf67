"""Kernel `search_vectors`: what the words of an API mean to each other, learned from the API's own
text, so that tool search can reach an operation through words its name never says.

Input: the index documents of `toolgen.search.text_index.search_documents` (their analysed field texts),
or an `Embedder` a user supplies. Output: `semantic_index` -> the JSON value stored beside the
documents in ``search.json`` (``semantic``); `SemanticIndex` -> its loaded form, which turns a
request's terms into a vector and scores every operation against it by cosine similarity.

An option, off by default: a build writes these vectors only when the project asks for them
(toolgen.yaml ``search: {semantic: lsa}``, `SEMANTIC_BACKENDS`), into a ``search.json`` of format
`SEMANTIC_FORMAT`; without it ``search.json`` holds the lexical documents alone. numpy (the
``semantic`` extra) is imported on first use (`numpy`), never by a default build or a lexical search;
a runtime without it ranks a format-3 file lexically.

The built-in backend, `LsaEmbedder`, is latent semantic analysis: a term × operation matrix (porter
stems, as SQLite FTS5 ``porter unicode61`` makes them; weight ``(1 + log tf) × idf`` with a field's
weight) factored by a truncated SVD (randomised range finder with a fixed seed, numpy only, no
downloaded weights). A term's vector is its row of ``U``; an operation's vector is the sum of its
terms' vectors (``X^T U = V Σ``, the fold-in), as is a request's, so a request word that never
appears in an operation's text still lands near the operations whose documentation uses the words it
keeps company with ("signature" near the envelope operations of an e-signature API).

Any other `Embedder` (a local model, a provider's embeddings) can be given at build time: its
document vectors are stored with its name, and the runtime uses them only when it is handed an
embedder of the same name to embed the request; otherwise search is the lexical index alone.

Determinism: the SVD's random start is seeded, each singular vector's sign is fixed (its largest
component positive), and every stored number is rounded (`DIGITS`), so the same documents give
byte-identical JSON on one platform.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .text_index import STOP_WORDS

__all__ = [
    "DIMENSIONS",
    "FUSION_WEIGHT",
    "LSA_NAME",
    "SEMANTIC_BACKENDS",
    "SEMANTIC_FORMAT",
    "Embedder",
    "LsaEmbedder",
    "SemanticIndex",
    "SemanticUnavailable",
    "numpy",
    "semantic_index",
    "stem_terms",
]

#: the ``format`` of a ``search.json`` that carries ``semantic`` (the lexical one is
#: `toolgen.search.text_index.SEARCH_FORMAT`)
SEMANTIC_FORMAT = 4
#: the values of toolgen.yaml ``search.semantic``: the backends a build can store vectors of
SEMANTIC_BACKENDS = ("lsa",)

#: the name `LsaEmbedder` stores its vectors under (``search.json`` ``semantic.embedder``)
LSA_NAME = "lsa-spec-v1"
#: dimensions of the latent space, at most; an API gets one per `DOCUMENTS_PER_DIMENSION` operations
#: (at least 2): a space almost as wide as the number of operations learns no association
DIMENSIONS = 96
DOCUMENTS_PER_DIMENSION = 8
#: digits every stored number is rounded to
DIGITS = 4
#: the largest norm a stored document vector may have: 1, and the rounding to `DIGITS` digits of
#: each of up to `DIMENSIONS` components (at most 96 × 0.00005 in all)
_UNIT_SLACK = 1.01
#: fusion: a lexical score is multiplied by 1 + FUSION_WEIGHT × max(0, cosine similarity) (fitted on
#: the development halves of the blind request sets, the same for every API)
FUSION_WEIGHT = 0.25
#: the weight of each field's words in the term × operation matrix: what names an operation (its
#: names, title, keywords, object and path) and its description. Argument and output member names
#: stay out (shared by most operations of an API, they blur the space), as do the derived ``verbs``
FIELD_WEIGHTS: dict[str, float] = {
    "name": 2.0,
    "title": 2.0,
    "keywords": 2.0,
    "object": 2.0,
    "nouns": 1.0,
    "body": 0.5,
}
_SEED = 20261202
_OVERSAMPLE = 10
_POWER_ITERATIONS = 3


@runtime_checkable
class Embedder(Protocol):
    """A text embedder for tool search: `name` says which model made the vectors (stored with them),
    `embed` maps texts to vectors of one length (a list of floats per text, same order)."""

    @property
    def name(self) -> str:
        """The model's name, stored with its vectors."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text (`texts` in order); every vector of one call has the same length."""
        ...


class SemanticUnavailable(ImportError):
    """The semantic ranking needs numpy, which is not installed (the ``semantic`` extra: ``pip install -e ".[semantic]"`` in a clone of toolgen)."""


def numpy() -> Any:
    """The numpy module, imported on first use: the semantic ranking is an option (toolgen.yaml
    ``search: {semantic: lsa}``), so neither a default build nor the lexical runtime imports it.
    Raises `SemanticUnavailable` when numpy is not installed."""
    try:
        import numpy as np
    except ImportError as exc:
        raise SemanticUnavailable(
            "the semantic search option needs numpy: pip install -e '.[semantic]' in a clone of toolgen"
        ) from exc
    return np


_STEMMERS = threading.local()


def stem_terms(texts: Sequence[str]) -> list[dict[str, int]]:
    """Per text, its porter stems and their counts, as SQLite FTS5 ``porter unicode61`` tokenises
    it (the lexical index's own stemming, so both rankings see the same terms). One in-memory
    database per thread does the work, emptied after each call."""
    db = getattr(_STEMMERS, "db", None)
    if db is None:
        db = sqlite3.connect(":memory:")
        db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        _STEMMERS.db = db
    try:
        db.executemany(
            "INSERT INTO t(rowid, x) VALUES (?, ?)", [(i, text) for i, text in enumerate(texts, 1)]
        )
        out: list[dict[str, int]] = [{} for _ in texts]
        for term, doc in db.execute("SELECT term, doc FROM v"):
            counts = out[int(doc) - 1]
            counts[str(term)] = counts.get(str(term), 0) + 1
        return out
    finally:
        db.execute("DELETE FROM t")


def _document_terms(documents: Sequence[Mapping[str, Any]], stop: frozenset[str]) -> list[dict[str, float]]:
    """Per document, its stems weighted by the fields they occur in (`FIELD_WEIGHTS`)."""
    columns = list(FIELD_WEIGHTS)
    texts = [
        " ".join(w for w in str((d.get("fields") or {}).get(c) or "").split() if w not in stop)
        for d in documents
        for c in columns
    ]
    stems = stem_terms(texts)
    out: list[dict[str, float]] = []
    for i in range(len(documents)):
        weighted: dict[str, float] = {}
        for j, column in enumerate(columns):
            for term, n in stems[i * len(columns) + j].items():
                if term.isdigit():
                    continue
                weighted[term] = weighted.get(term, 0.0) + n * FIELD_WEIGHTS[column]
        out.append(weighted)
    return out


def _times(rows: Any, cols: Any, vals: Any, shape: tuple[int, int], dense: Any) -> Any:
    """The sparse matrix (COO `rows`, `cols`, `vals`, `shape`) times `dense` (shape[1] × r)."""
    np = numpy()
    out = np.zeros((shape[0], dense.shape[1]))
    for k in range(dense.shape[1]):
        out[:, k] = np.bincount(rows, weights=vals * dense[cols, k], minlength=shape[0])
    return out


def _product(a: Any, b: Any) -> Any:
    """``a @ b`` in numpy's own loops, not BLAS: a multi-threaded BLAS spins its threads after each
    call, which costs a shared machine more CPU than these thin products take."""
    np = numpy()
    return np.einsum("ij,jk->ik", a, b)


def _orthonormal(y: Any) -> Any:
    """An orthonormal basis of the columns of `y` (tall), through the eigendecomposition of the small
    Gram matrix ``yᵀy`` (done twice for accuracy); directions with no weight are dropped."""
    np = numpy()
    for _ in range(2):
        values, vectors = np.linalg.eigh(_product(y.T, y))
        keep = values > values.max() * 1e-12
        y = _product(y, vectors[:, keep] / np.sqrt(values[keep]))
    return y


def _truncated_svd(rows: Any, cols: Any, vals: Any, shape: tuple[int, int], k: int) -> tuple[Any, Any]:
    """(U, s) of the `k` largest singular values of a sparse matrix: a randomised range finder
    (seeded) with power iterations, then the eigendecomposition of the small projected Gram matrix.
    Each column of U has its largest-magnitude component positive (the sign SVD leaves free). Only
    products with thin matrices and eigendecompositions of (k + 10)² matrices: fast on any BLAS."""
    np = numpy()
    r = min(k + _OVERSAMPLE, min(shape))
    omega = np.random.default_rng(_SEED).standard_normal((shape[1], r))
    q = _orthonormal(_times(rows, cols, vals, shape, omega))
    for _ in range(_POWER_ITERATIONS):
        z = _orthonormal(_times(cols, rows, vals, (shape[1], shape[0]), q))
        q = _orthonormal(_times(rows, cols, vals, shape, z))
    b = _times(cols, rows, vals, (shape[1], shape[0]), q).T  # Qᵀ X, r × docs
    values, vectors = np.linalg.eigh(_product(b, b.T))  # ascending
    order = np.argsort(-values, kind="stable")[:k]
    u = _product(q, vectors[:, order])
    signs = np.sign(u[np.argmax(np.abs(u), axis=0), np.arange(u.shape[1])])
    signs[signs == 0] = 1.0
    return u * signs, np.sqrt(np.clip(values[order], 0.0, None))


def _rounded(matrix: Any) -> list[list[float]]:
    """The rows of `matrix` rounded to `DIGITS`, as Python floats (no ``-0.0``)."""
    np = numpy()
    rows: list[list[float]] = (np.round(np.asarray(matrix, dtype=float), DIGITS) + 0.0).tolist()
    return rows


def _unit(matrix: Any) -> Any:
    np = numpy()
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


@dataclass(frozen=True)
class LsaEmbedder:
    """Latent semantic analysis fitted on one API's documents (`fit`). `terms`: stem → (idf, vector);
    `embed` folds a text's stems into the space (sum of idf-weighted term vectors, unit length; the
    zero vector when no word of it is known)."""

    terms: Mapping[str, tuple[float, tuple[float, ...]]]
    dimensions: int
    name: str = LSA_NAME

    @classmethod
    def fit(
        cls,
        documents: Sequence[Mapping[str, Any]],
        stop_words: frozenset[str] = STOP_WORDS,
        dimensions: int = DIMENSIONS,
    ) -> tuple[LsaEmbedder, list[list[float]]]:
        """The embedder learned from `documents` (``search.json`` documents) and each document's
        unit vector (in order). Terms in fewer than two documents are left out (they associate with
        nothing but their own operation, which the lexical index finds already)."""
        np = numpy()
        weighted = _document_terms(documents, stop_words)
        df: dict[str, int] = {}
        for terms in weighted:
            for term in terms:
                df[term] = df.get(term, 0) + 1
        vocabulary = sorted(t for t, n in df.items() if n >= 2)
        n_docs = len(documents)
        k = min(dimensions, max(2, n_docs // DOCUMENTS_PER_DIMENSION), len(vocabulary) - 1, n_docs - 1)
        if k < 2:
            return cls({}, 0), [[] for _ in documents]
        ids = {t: i for i, t in enumerate(vocabulary)}
        idf = {t: math.log(n_docs / df[t]) + 1.0 for t in vocabulary}
        rows, cols, vals = [], [], []
        for j, terms in enumerate(weighted):
            for term in sorted(terms):
                if term in ids:
                    rows.append(ids[term])
                    cols.append(j)
                    tf = terms[term]  # weighted count: ≥ 1 is damped by its log, a fraction kept as it is
                    vals.append((1.0 + math.log(tf) if tf >= 1 else tf) * idf[term])
        r, c, v = np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(vals)
        u, _ = _truncated_svd(r, c, v, (len(vocabulary), n_docs), k)
        scale = float(np.abs(u).max()) or 1.0
        u = u / scale
        vectors = _rounded(u)
        embedder = cls({t: (round(idf[t], DIGITS), tuple(vectors[i])) for i, t in enumerate(vocabulary)}, k)
        stored = np.array([embedder.terms[t][1] for t in vocabulary])
        docs = _unit(_times(c, r, v, (n_docs, len(vocabulary)), stored))
        return embedder, _rounded(docs)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for counts in stem_terms(texts):
            vector = [0.0] * self.dimensions
            for term in sorted(counts):
                known = self.terms.get(term)
                if known is None:
                    continue
                weight = known[0] * (1.0 + math.log(counts[term]))
                vector = [a + weight * b for a, b in zip(vector, known[1], strict=True)]
            norm = math.sqrt(sum(a * a for a in vector))
            out.append([a / norm for a in vector] if norm else vector)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "dimensions": self.dimensions,
            "terms": {t: [idf, list(vector)] for t, (idf, vector) in sorted(self.terms.items())},
        }

    @classmethod
    def from_json(cls, value: Any) -> LsaEmbedder | None:
        """The embedder `to_json` wrote, or None when `value` is not one: ``dimensions`` an integer
        from 1 to `DIMENSIONS` (what `fit` makes), every idf and vector component a finite JSON
        number (not text, not a boolean), every vector of ``dimensions`` components."""
        if not isinstance(value, Mapping) or not isinstance(value.get("terms"), Mapping):
            return None
        dims = value.get("dimensions")
        if not isinstance(dims, int) or isinstance(dims, bool) or not 1 <= dims <= DIMENSIONS:
            return None
        terms: dict[str, tuple[float, tuple[float, ...]]] = {}
        for term, entry in value["terms"].items():
            if not (
                isinstance(entry, list)
                and len(entry) == 2
                and isinstance(entry[1], list)
                and len(entry[1]) == dims
                and _finite_numbers([entry[0], *entry[1]])
            ):
                return None
            terms[str(term)] = (float(entry[0]), tuple(float(x) for x in entry[1]))
        return cls(terms, dims)


def _finite_numbers(values: Sequence[Any]) -> bool:
    """Whether every value is a JSON number (int or float, not bool) that a float holds finitely."""
    for x in values:
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            return False
        try:
            if not math.isfinite(x):
                return False
        except OverflowError:  # an integer beyond any float
            return False
    return True


def semantic_index(
    documents: Sequence[Mapping[str, Any]], embedder: Embedder | None = None
) -> dict[str, Any]:
    """The ``semantic`` value of ``search.json``: ``{"embedder": name, "documents": [[float, ...],
    ...] (one unit vector per document, in order), "model": ...}``. Without `embedder`, LSA is
    fitted on `documents` and ``model`` holds its term vectors (the runtime embeds requests with
    them); with one, each document's text is embedded by it and ``model`` is None (the runtime needs
    an embedder of that name)."""
    np = numpy()
    if embedder is None:
        lsa, vectors = LsaEmbedder.fit(documents)
        return {"embedder": lsa.name, "model": lsa.to_json(), "documents": vectors}
    texts = [" ".join(str((d.get("fields") or {}).get(c) or "") for c in FIELD_WEIGHTS) for d in documents]
    raw = np.array(embedder.embed(texts), dtype=float) if texts else np.zeros((0, 0))
    return {
        "embedder": str(embedder.name),
        "model": None,
        "documents": _rounded(_unit(raw)) if len(raw) else [],
    }


class SemanticIndex:
    """The loaded ``semantic`` value: an operation's cosine similarity to a request."""

    def __init__(self, vectors: Any, embedder: Embedder) -> None:
        self._vectors = vectors  # documents × dims, unit rows
        self._embedder = embedder

    @classmethod
    def load(cls, value: Any, count: int, embedder: Embedder | None = None) -> SemanticIndex | None:
        """The index of a stored ``semantic`` value for `count` documents, or None when it is absent,
        malformed (a vector holding anything but finite JSON numbers, rows of unequal length, LSA
        vectors of another width than its model's, a model `LsaEmbedder.from_json` refuses), of
        another count, or made by an embedder that is neither stored (LSA) nor given, or when numpy
        (the ``semantic`` extra) is not installed: the ranking is then the lexical one. Never raises."""
        if not isinstance(value, Mapping) or not isinstance(value.get("documents"), list):
            return None
        name = value.get("embedder")
        model: Embedder | None = LsaEmbedder.from_json(value.get("model")) if name == LSA_NAME else None
        if model is None and embedder is not None and embedder.name == name:
            model = embedder
        documents = value["documents"]
        if model is None or len(documents) != count or count == 0:
            return None
        if not all(isinstance(row, list) and _finite_numbers(row) for row in documents):
            return None  # text, booleans, NaN or infinity where a vector's numbers go
        try:
            vectors = numpy().array(documents, dtype=float)
        except (SemanticUnavailable, TypeError, ValueError):
            return None
        if vectors.ndim != 2 or (isinstance(model, LsaEmbedder) and vectors.shape[1] != model.dimensions):
            return None
        np = numpy()  # a component past the slack is refused first, so the norms cannot overflow
        if (np.abs(vectors) > _UNIT_SLACK).any() or (np.linalg.norm(vectors, axis=1) > _UNIT_SLACK).any():
            return None  # the stored rows are unit vectors (or zero): a cosine is then at most 1
        return cls(vectors, model)

    def similarity(self, text: str) -> Any:
        """Per document (in order), the cosine similarity of `text` to it (numpy array); all zeros
        when no word of `text` is known to the embedder, or the embedder's vector is not finite."""
        np = numpy()
        query = np.array(self._embedder.embed([text])[0], dtype=float)
        if query.shape != (self._vectors.shape[1],) or not query.any() or not np.isfinite(query).all():
            return np.zeros(self._vectors.shape[0])
        return np.einsum("ij,j->i", self._vectors, query)
