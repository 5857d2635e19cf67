"""Kernel `search_dense`: the binary file of the documents' dense vectors, ``search.vectors``.

Input: the index documents of ``search.json`` (`dense_texts`: the text each one is embedded from) and
their vectors from an `toolgen.search.onnx_embedder.OnnxEmbedder`. Output: `encode` -> the file's
bytes; `decode` -> `Sidecar` (the header and the dequantised vectors) or a `SidecarError` saying why
the bytes are refused; `same_pins` -> whether two such files were made from the same inputs by the
same model (what ``toolgen build --check`` compares).

Layout (all integers little-endian)::

    b"TOOLGEN-VECTORS 2\\n"                  the magic (18 bytes; 1 was the format without vectors_sha256)
    u32 H, then H bytes                     the header: UTF-8 JSON, keys sorted, no spaces
    f32 × count                             each vector's scale
    i8 × count × dimensions                 the vectors, row by row

The header is ``{"count", "dimensions", "documents_sha256", "max_tokens", "model_sha256",
"quantisation": "int8-per-vector", "tokenizer_sha256", "vectors_sha256"}``: ``vectors_sha256`` is the
SHA-256 of the bytes after the header (the scales and the vectors), so a bit flipped anywhere in the
file is refused by `decode` (in the header, by its JSON or by a pin that no longer matches
``search.json``'s), never read as a vector. Quantisation is per vector: the scale of a
vector ``v`` is ``max|v_i| / 127`` and its components are ``round(v_i / scale)``, so a component is
read back within ``scale / 2`` of its value (at most 1/254 for a unit vector), and the vector
within ``sqrt(dimensions) × scale / 2`` in L2 norm. The vectors are 4 + dimensions bytes each
(388 for 384 dimensions: 4.2 MB at 11,000 operations).

A model run's last bits can differ between CPUs, so the vector bytes are not compared by
``--check``: the header is, but for ``vectors_sha256``, and it names every input (the documents'
hash, the model's and the tokenizer's hash, the length texts are cut to). The same header means the
same inputs.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAGIC",
    "QUANTISATION",
    "SIDECAR_FILE",
    "Sidecar",
    "SidecarError",
    "decode",
    "dense_texts",
    "documents_sha256",
    "encode",
    "is_sha256_hex",
    "same_pins",
]

#: the file name, beside ``search.json``
SIDECAR_FILE = "search.vectors"
MAGIC = b"TOOLGEN-VECTORS 2\n"
#: the magic of the files of format 1 (no ``vectors_sha256``), refused with a word on rebuilding
_OLDER = b"TOOLGEN-VECTORS 1\n"
QUANTISATION = "int8-per-vector"
#: the document fields a dense text is made of, in this order: what names the operation, what it is
#: for in users' words, and what its description says (argument and output names stay out)
DENSE_FIELDS = ("title", "name", "keywords", "examples", "body")
#: bounds a header must keep: a file cannot make the reader allocate more than it holds
_MAX_HEADER = 4096
_MAX_DIMENSIONS = 8192
_HEX64 = frozenset("0123456789abcdef")


def is_sha256_hex(value: object) -> bool:
    """Whether `value` is a SHA-256 digest as this file spells one: 64 lower-case hex digits."""
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX64


class SidecarError(ValueError):
    """``search.vectors`` bytes that are not a file `encode` writes (the message says what is wrong)."""


@dataclass(frozen=True)
class Sidecar:
    """A decoded ``search.vectors``: its header and its vectors dequantised (numpy, count × dimensions)."""

    header: dict[str, Any]
    vectors: Any


def dense_texts(documents: Sequence[Mapping[str, Any]]) -> list[str]:
    """The text each document is embedded from: its `DENSE_FIELDS` joined by ". " (the fields'
    analysed words: split, lower-case, abbreviations spelled out)."""
    out = []
    for document in documents:
        fields = document.get("fields") or {}
        out.append(". ".join(text for c in DENSE_FIELDS if (text := str(fields.get(c) or "").strip())))
    return out


def documents_sha256(texts: Sequence[str]) -> str:
    """The SHA-256 (hex) of the dense texts (JSON list, UTF-8): what the vectors were made from. A
    lone surrogate (which a build never writes, but a hand-edited search.json may hold) is hashed as
    its own code unit ("surrogatepass"), so the hash of any text is defined and never raises."""
    text = json.dumps(list(texts), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def encode(
    vectors: Sequence[Sequence[float]],
    *,
    model_sha256: str,
    tokenizer_sha256: str,
    documents: str,
    max_tokens: int,
) -> bytes:
    """The ``search.vectors`` bytes of `vectors` (one row per document, each of one length, finite).
    Raises ValueError for rows of unequal length or a value that is not finite."""
    import numpy as np

    rows = (
        np.asarray(vectors, dtype=np.float64).reshape(len(vectors), -1) if len(vectors) else np.zeros((0, 0))
    )
    if not np.isfinite(rows).all():
        raise ValueError("a vector holds a value that is not finite")
    peak = np.abs(rows).max(axis=1) if rows.size else np.zeros(len(rows))
    scales = (peak / 127.0).astype(np.float32)
    safe = np.where(scales == 0, 1.0, scales.astype(np.float64))[:, None]
    quantised = np.clip(np.rint(rows / safe), -127, 127).astype(np.int8)
    payload = scales.astype("<f4").tobytes() + quantised.tobytes()
    header = {
        "count": int(rows.shape[0]),
        "dimensions": int(rows.shape[1]) if rows.ndim == 2 else 0,
        "documents_sha256": documents,
        "max_tokens": int(max_tokens),
        "model_sha256": model_sha256,
        "quantisation": QUANTISATION,
        "tokenizer_sha256": tokenizer_sha256,
        "vectors_sha256": hashlib.sha256(payload).hexdigest(),
    }
    head = json.dumps(header, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return b"".join([MAGIC, struct.pack("<I", len(head)), head, payload])


def _header(data: bytes) -> tuple[dict[str, Any], int]:
    """(the checked header, the offset its payload starts at). Raises `SidecarError`."""
    if data.startswith(_OLDER):
        raise SidecarError("it is of an older format (1, without vectors_sha256)")
    if not data.startswith(MAGIC):
        raise SidecarError("it does not start with the search.vectors magic")
    start = len(MAGIC) + 4
    if len(data) < start:
        raise SidecarError("it is cut short in its header")
    (size,) = struct.unpack("<I", data[len(MAGIC) : start])
    if size > _MAX_HEADER or len(data) < start + size:
        raise SidecarError(
            f"its header length {size} is over {_MAX_HEADER} bytes or past the end of the file"
        )
    try:
        header = json.loads(data[start : start + size].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SidecarError(f"its header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise SidecarError("its header is not a JSON object")
    for key in ("count", "dimensions", "max_tokens"):
        value = header.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise SidecarError(f"its header's {key} is not a whole number ≥ 0")
    if not 1 <= header["dimensions"] <= _MAX_DIMENSIONS and header["count"]:
        raise SidecarError(
            f"its header's dimensions {header['dimensions']} is not from 1 to {_MAX_DIMENSIONS}"
        )
    for key in ("documents_sha256", "model_sha256", "tokenizer_sha256", "vectors_sha256"):
        value = header.get(key)
        if not is_sha256_hex(value):
            raise SidecarError(f"its header's {key} is not a SHA-256 in lower-case hex")
    if header.get("quantisation") != QUANTISATION:
        raise SidecarError(
            f"its quantisation is {str(header.get('quantisation'))[:40]!r}, not {QUANTISATION!r}"
        )
    return header, start + size


def decode(data: bytes) -> Sidecar:
    """The header and the dequantised vectors of ``search.vectors`` bytes. Raises `SidecarError` for
    bytes `encode` does not write: another magic, a header that is not the JSON object above, a
    length other than the header says (truncated or with bytes after), scales and vectors whose
    SHA-256 is not the header's ``vectors_sha256`` (a bit flipped), a scale that is negative or not
    finite. Never reads past the file, never allocates more than it holds."""
    import numpy as np

    header, offset = _header(data)
    count, dims = header["count"], header["dimensions"]
    expected = offset + count * 4 + count * dims
    if len(data) != expected:
        raise SidecarError(
            f"it has {len(data)} bytes, not the {expected} its header says "
            f"({count} vectors of {dims} dimensions)"
        )
    if hashlib.sha256(memoryview(data)[offset:]).hexdigest() != header["vectors_sha256"]:
        raise SidecarError("its vectors are not the ones its header's vectors_sha256 names (damaged)")
    scales = np.frombuffer(data, dtype="<f4", count=count, offset=offset).astype(np.float64)
    if not np.isfinite(scales).all() or (scales < 0).any():
        raise SidecarError("a vector's scale is negative or not finite")
    if (scales > 1.0 / 127.0 * 1.001).any():
        raise SidecarError("a vector's scale is larger than a unit vector's can be")
    values = np.frombuffer(data, dtype=np.int8, count=count * dims, offset=offset + count * 4)
    vectors = values.reshape(count, dims).astype(np.float32) * scales[:, None].astype(np.float32)
    return Sidecar(header, vectors)


def same_pins(a: bytes, b: bytes) -> bool:
    """Whether two ``search.vectors`` files have the same header but for ``vectors_sha256`` (same
    inputs, same model, same tokenizer, same cut) and each holds exactly what its header says: what
    ``toolgen build --check`` compares instead of the vector bytes, which a model run on another CPU
    may round differently."""
    try:
        first, second = decode(a).header, decode(b).header
    except SidecarError:
        return False
    return {**first, "vectors_sha256": ""} == {**second, "vectors_sha256": ""}
