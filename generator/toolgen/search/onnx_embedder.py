"""Kernel `search_dense`: a sentence-embedding model the user supplies, run locally, as an `Embedder`.

Input: the path of an ONNX sentence-embedding model and of its ``tokenizer.json`` (Hugging Face
``tokenizers`` format), each pinned by its SHA-256 (toolgen.yaml ``search: {semantic: onnx, model:
..., model_sha256: ..., tokenizer: ..., tokenizer_sha256: ...}``). Output: `OnnxEmbedder`, whose
`OnnxEmbedder.embed` maps texts to unit vectors (lists of floats, one length per model).

Nothing is ever downloaded: the files are read from disk, their bytes hashed, and a file whose hash is
not the pinned one is refused (`DenseModelError`) before it is parsed. The model runs with
``onnxruntime`` and the tokenizer with ``tokenizers`` (the ``dense`` extra, no torch), both imported
on first use (`dense_modules`): a default build and a lexical search never import them.

The graph must have the signature of a sentence-transformers export: inputs ``input_ids`` and
``attention_mask`` (``token_type_ids`` optional, sent as zeros), integer tensors of shape [batch,
sequence]; an output that is either per token, [batch, sequence, dimensions] (``last_hidden_state``
or ``token_embeddings``, or the only output), mean-pooled over the attention mask, or already pooled,
[batch, dimensions] (``sentence_embedding`` or ``pooler_output``). Any other signature is refused
with what was found and what is expected. Every text is cut to `MAX_TOKENS` tokens (the model's
special tokens included), and every vector is L2-normalised. Each text is run through the model on
its own (`BATCH` is 1): its vector is a function of its text alone, never of the texts it would be
padded beside in a batch (padding changes the model's float sums), which the build cache's
embeddings rely on (`toolgen.builder.dense_cache`); on one CPU thread it is also cheaper than padded
batches (all-MiniLM-L6-v2, 128 GitHub operation texts: 1.9 CPU s alone against 5.1 in batches of 32).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_TOKENS",
    "DenseModelError",
    "DenseUnavailable",
    "OnnxEmbedder",
    "dense_modules",
    "file_sha256",
]

#: the longest token sequence a text is cut to (sentence-transformers' MiniLM models use 256)
MAX_TOKENS = 256
#: texts embedded per model run: one, so that a text's vector never depends on the texts beside it
BATCH = 1
#: the extra that holds the runtime libraries, named in every error about them
EXTRA = "dense"
_INPUTS_REQUIRED = frozenset({"input_ids", "attention_mask"})
_INPUTS_KNOWN = _INPUTS_REQUIRED | {"token_type_ids"}
_TOKEN_OUTPUTS = ("last_hidden_state", "token_embeddings")
_POOLED_OUTPUTS = ("sentence_embedding", "pooler_output")


class DenseUnavailable(ImportError):
    """The dense option needs ``onnxruntime``, ``tokenizers`` and numpy, which are not installed
    (the ``dense`` extra: ``pip install -e ".[dense]"`` in a clone of toolgen)."""


class DenseModelError(ValueError):
    """A model or tokenizer file that cannot be used: missing, unreadable, of another SHA-256 than
    its pin, not parseable, or a graph of another signature than a sentence embedder's. The message
    names the file and what to do."""


def dense_modules() -> tuple[Any, Any, Any]:
    """(numpy, onnxruntime, tokenizers), imported on first use. Raises `DenseUnavailable` naming the
    extra when one of them is not installed."""
    try:
        import numpy as np
        import onnxruntime
        import tokenizers
    except ImportError as exc:
        raise DenseUnavailable(
            f"the dense search option needs onnxruntime and tokenizers ({exc.name} is not "
            f"installed): pip install -e '.[{EXTRA}]' in a clone of toolgen"
        ) from exc
    return np, onnxruntime, tokenizers


def file_sha256(path: Path) -> str:
    """The SHA-256 (hex) of the file at `path`. Raises OSError when it cannot be read."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _pinned_bytes(path: Path, sha256: str, what: str) -> bytes:
    """The bytes of `path` when their SHA-256 is `sha256`. Raises `DenseModelError` otherwise."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DenseModelError(
            f"{what} {path}: cannot be read ({exc.strerror or exc}); put the file there, "
            "or point the option at it"
        ) from None
    found = hashlib.sha256(data).hexdigest()
    if found != sha256.lower():
        raise DenseModelError(
            f"{what} {path}: its SHA-256 is {found}, not the pinned {sha256}; use the pinned "
            f"file, or pin this one (its {what}_sha256) after checking where it came from"
        )
    return data


def _rank(arg: Any) -> int | None:
    shape = getattr(arg, "shape", None)
    return len(shape) if isinstance(shape, (list, tuple)) else None


def _pick_output(outputs: Sequence[Any]) -> tuple[str, bool]:
    """(the output to read, whether it is per token and so is mean-pooled). Raises `DenseModelError`."""
    by_name = {o.name: o for o in outputs}
    for name in _POOLED_OUTPUTS:
        if name in by_name and _rank(by_name[name]) == 2:
            return name, False
    for name in _TOKEN_OUTPUTS:
        if name in by_name and _rank(by_name[name]) == 3:
            return name, True
    if len(outputs) == 1 and _rank(outputs[0]) in (2, 3):
        return outputs[0].name, _rank(outputs[0]) == 3
    raise DenseModelError(
        "an output of shape [batch, sequence, dimensions] (last_hidden_state, token_embeddings) "
        "or [batch, dimensions] (sentence_embedding, pooler_output)"
    )


@dataclass(frozen=True)
class _Graph:
    inputs: frozenset[str]
    integer: dict[str, str]  # input name -> numpy integer dtype name
    output: str
    pooled_per_token: bool


def _signature(session: Any, path: Path) -> _Graph:
    """The graph's inputs and the output to read, checked against a sentence embedder's signature."""
    inputs = {i.name: i for i in session.get_inputs()}
    outputs = list(session.get_outputs())
    found = (
        f"inputs {sorted(inputs)} and outputs "
        f"{[(o.name, list(o.shape) if isinstance(o.shape, (list, tuple)) else o.shape) for o in outputs]}"
    )
    problem = None
    if not _INPUTS_REQUIRED <= set(inputs) <= _INPUTS_KNOWN:
        problem = "inputs input_ids and attention_mask (and optionally token_type_ids)"
    elif any(
        inputs[n].type not in ("tensor(int64)", "tensor(int32)") or _rank(inputs[n]) != 2 for n in inputs
    ):
        problem = "integer inputs of shape [batch, sequence]"
    if problem is None:
        try:
            name, per_token = _pick_output(outputs)
        except DenseModelError as exc:
            problem = str(exc)
    if problem is not None:
        raise DenseModelError(
            f"model {path}: not a sentence-embedding graph toolgen can run: it has {found}; "
            f"expected {problem} (a sentence-transformers ONNX export)"
        )
    integer = {n: "int32" if inputs[n].type == "tensor(int32)" else "int64" for n in inputs}
    return _Graph(frozenset(inputs), integer, name, per_token)


class OnnxEmbedder:
    """A local ONNX sentence-embedding model and its tokenizer, pinned by SHA-256 (`load`).

    `name` is ``onnx:<model sha256>:<tokenizer sha256>``: the vectors of one model are never read
    with another. `embed` returns one unit vector per text (`dimensions` floats), the zero vector for
    a text with no tokens."""

    def __init__(
        self,
        session: Any,
        tokenizer: Any,
        graph: _Graph,
        model_sha256: str,
        tokenizer_sha256: str,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._graph = graph
        self.model_sha256 = model_sha256
        self.tokenizer_sha256 = tokenizer_sha256
        self.max_tokens = max_tokens
        self._pad = 0

    @property
    def name(self) -> str:
        return f"onnx:{self.model_sha256}:{self.tokenizer_sha256}"

    @classmethod
    def load(
        cls,
        model: Path,
        model_sha256: str,
        tokenizer: Path,
        tokenizer_sha256: str,
        *,
        max_tokens: int = MAX_TOKENS,
        threads: int = 1,
    ) -> OnnxEmbedder:
        """The embedder of the model file `model` and the tokenizer file `tokenizer`, each refused
        unless its bytes hash to its pin. The bytes hashed are the bytes parsed (the file is read
        once). `threads`: onnxruntime's intra-op threads (1: one core, the same sums on every run).
        Raises `DenseUnavailable` (the extra is not installed) and `DenseModelError` (a file is
        missing, of another hash, not parseable, or not a sentence embedder's graph)."""
        _, ort, tokenizers = dense_modules()
        model_bytes = _pinned_bytes(model, model_sha256, "model")
        tokenizer_bytes = _pinned_bytes(tokenizer, tokenizer_sha256, "tokenizer")
        try:
            tok = tokenizers.Tokenizer.from_str(tokenizer_bytes.decode("utf-8"))
        except Exception as exc:  # noqa: BLE001 - the tokenizers binding raises its own exception types
            raise DenseModelError(
                f"tokenizer {tokenizer}: not a tokenizer.json the tokenizers library reads: {str(exc)[:200]}"
            ) from None
        tok.no_padding()
        tok.enable_truncation(max_length=max_tokens)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(
                model_bytes, sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
            raise DenseModelError(
                f"model {model}: not an ONNX model onnxruntime runs: {str(exc)[:200]}"
            ) from None
        embedder = cls(
            session,
            tok,
            _signature(session, model),
            model_sha256.lower(),
            tokenizer_sha256.lower(),
            max_tokens,
        )
        pad = tok.token_to_id("[PAD]")
        embedder._pad = int(pad) if pad is not None else 0
        return embedder

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text (float lists of one length). Raises `DenseModelError` when the
        model answers with another shape than its signature says, or with a value that is not finite."""
        np, _, _ = dense_modules()
        out: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            out.extend(self._batch(np, [str(t) for t in texts[start : start + BATCH]]).tolist())
        return out

    def _batch(self, np: Any, texts: list[str]) -> Any:
        encodings = self._tokenizer.encode_batch(texts)
        width = max([len(e.ids) for e in encodings] + [1])
        ids = np.full((len(texts), width), self._pad, dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.int64)
        for i, encoding in enumerate(encodings):
            ids[i, : len(encoding.ids)] = encoding.ids
            mask[i, : len(encoding.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        graph = self._graph
        result = self._session.run(
            [graph.output], {n: feeds[n].astype(graph.integer[n]) for n in graph.inputs}
        )[0]
        result = np.asarray(result, dtype=np.float64)
        if graph.pooled_per_token:
            if result.ndim != 3 or result.shape[:2] != ids.shape:
                raise DenseModelError(
                    f"the model answered shape {list(result.shape)}, not [batch, sequence, dims]"
                )
            weights = mask[:, :, None].astype(np.float64)
            result = (result * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        elif result.ndim != 2 or result.shape[0] != len(texts):
            raise DenseModelError(f"the model answered shape {list(result.shape)}, not [batch, dimensions]")
        if not np.isfinite(result).all():
            raise DenseModelError("the model answered a value that is not finite")
        norms = np.linalg.norm(result, axis=1, keepdims=True)
        return result / np.where(norms == 0, 1.0, norms)
