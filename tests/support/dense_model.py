"""A tiny sentence-embedding model and tokenizer the dense option's tests write themselves (never
downloaded weights): a ``tokenizers`` WordLevel tokenizer over a given vocabulary, and an ONNX graph
(the ``onnx`` package's helper API) that looks each token up in an embedding table (Gather) and
multiplies it by the attention mask: output ``last_hidden_state`` of shape [batch, sequence, dims]."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

DIMENSIONS = 16


def write_tokenizer(path: Path, words: Sequence[str]) -> dict[str, int]:
    """A WordLevel tokenizer.json over ``[PAD]``, ``[UNK]`` and `words` (lower-cased, split on
    whitespace and punctuation); returns its vocabulary."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    vocab = {"[PAD]": 0, "[UNK]": 1}
    for word in words:
        vocab.setdefault(word.lower(), len(vocab))
    tok = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(path))
    return vocab


def write_model(
    path: Path,
    vocab: Mapping[str, int],
    *,
    same: Mapping[str, str] | None = None,
    seed: int = 7,
    input_name: str = "input_ids",
    output_name: str = "last_hidden_state",
    pad_sensitive: bool = False,
) -> None:
    """An ONNX embedding-lookup model for `vocab`: a seeded random vector per token (``[PAD]`` and
    ``[UNK]`` zero), a word of `same` sharing the vector of the word it maps to. `pad_sensitive`: every
    token's output also gets the number of padding positions in its row added, as a model whose float
    sums change with the padding would (a text's vector then depends on the texts padded beside it)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    table = np.random.default_rng(seed).standard_normal((len(vocab), DIMENSIONS)).astype(np.float32)
    table[:2] = 0.0
    for word, twin in (same or {}).items():
        table[vocab[word]] = table[vocab[twin]]
    nodes = [
        helper.make_node("Gather", ["table", input_name], ["tokens"], axis=0),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axis"], ["mask3"]),
        helper.make_node("Mul", ["tokens", "mask3"], ["masked" if pad_sensitive else output_name]),
    ]
    if pad_sensitive:
        nodes += [
            helper.make_node("Sub", ["one", "mask3"], ["pads"]),
            helper.make_node("ReduceSum", ["pads", "seq_axis"], ["pad_count"], keepdims=1),
            helper.make_node("Add", ["masked", "pad_count"], [output_name]),
        ]
    graph = helper.make_graph(
        nodes,
        "tiny-embedder",
        [
            helper.make_tensor_value_info(input_name, TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info(output_name, TensorProto.FLOAT, ["batch", "sequence", DIMENSIONS])],
        [
            numpy_helper.from_array(table, "table"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "axis"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "seq_axis"),
            numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.write_bytes(model.SerializeToString())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
