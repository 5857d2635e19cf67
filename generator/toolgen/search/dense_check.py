"""Kernel `search_dense`: whether a package's ``search.vectors`` may be served beside its ``search.json``.

Input: the package's folder, the ``semantic`` value of its ``search.json`` (the dense option's pins:
`toolgen.search.dense_index.is_dense`) and its documents. Output: `checked_sidecar` -> the decoded
`toolgen.search.dense_sidecar.Sidecar`, or a `DenseProblem` naming the file, what is wrong with it
and what to do. The file is read once: the bytes checked are the bytes whose vectors are served.

The sidecar is served only when all of these hold, each checked against ``search.json`` (never
against the sidecar's own word):

- ``search.json``'s ``semantic`` value is well formed (the pins, ``max_tokens``, ``vectors``);
- its ``documents_sha256`` is the hash of the documents it holds (`dense_sidecar.documents_sha256` of
  their `dense_sidecar.dense_texts`), so the pins speak of these documents in this order;
- ``search.vectors`` is there, readable, and decodes (`dense_sidecar.decode`: its magic and format,
  its length, its ``vectors_sha256``, so a truncation or a flipped bit is refused);
- its header names the same documents' hash, model hash, tokenizer hash and ``max_tokens`` as
  ``search.json``, and holds one vector per document.

Anything else is a `DenseProblem` whose hint is to rebuild the package: tool search then ranks
lexically (`toolgen.search.dense_index.load_dense`), the fallback the dense option documents; a vector
made from other documents, by another model, or damaged never ranks anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .dense_sidecar import (
    SIDECAR_FILE,
    Sidecar,
    SidecarError,
    decode,
    dense_texts,
    documents_sha256,
    is_sha256_hex,
)

__all__ = ["REBUILD", "DenseProblem", "checked_sidecar"]

#: what to do about a sidecar that is not this ``search.json``'s
REBUILD = "rebuild the package (`toolgen build`), which writes search.vectors with its search.json"


@dataclass(frozen=True)
class DenseProblem:
    """Why the dense ranking of a package is off: `file` the file it is about (a path as the runtime
    was given it), `message` what is wrong with it, `hint` what to do."""

    file: str
    message: str
    hint: str

    def __str__(self) -> str:
        return f"{self.file}: {self.message}; {self.hint}"


def _pin(value: Any) -> str | None:
    """The sha256 of a ``model`` / ``tokenizer`` member, or None when the member is malformed."""
    if not isinstance(value, Mapping):
        return None
    path, sha = value.get("path"), value.get("sha256")
    return sha if isinstance(path, str) and path and is_sha256_hex(sha) else None


def _wanted(value: Mapping[str, Any], documents: Sequence[Mapping[str, Any]]) -> dict[str, Any] | str:
    """The header a sidecar of these pins and documents has (but for ``dimensions``, the
    quantisation and ``vectors_sha256``), or what is wrong with the ``semantic`` value."""
    model, tokenizer = _pin(value.get("model")), _pin(value.get("tokenizer"))
    max_tokens = value.get("max_tokens")
    if (
        model is None
        or tokenizer is None
        or value.get("vectors") != SIDECAR_FILE
        or not isinstance(max_tokens, int)
        or isinstance(max_tokens, bool)
        or not 1 <= max_tokens <= 1 << 16
    ):
        return "its semantic value is malformed (the pins, max_tokens or vectors)"
    digest = documents_sha256(dense_texts(documents))
    if value.get("documents_sha256") != digest:
        return "its semantic value's documents_sha256 is not the hash of the documents it holds"
    return {
        "count": len(documents),
        "documents_sha256": digest,
        "max_tokens": max_tokens,
        "model_sha256": model,
        "tokenizer_sha256": tokenizer,
    }


def checked_sidecar(
    folder: Path, value: Mapping[str, Any], documents: Sequence[Mapping[str, Any]]
) -> tuple[Sidecar | None, DenseProblem | None]:
    """(the decoded ``search.vectors`` of the package in `folder`, None) when it may be served beside
    the ``search.json`` whose ``semantic`` value is `value` and whose documents are `documents` (the
    module docstring's list), else (None, the problem). Reads the file once; never raises."""
    wanted = _wanted(value, documents)
    if isinstance(wanted, str):
        return None, DenseProblem(str(folder / "search.json"), wanted, REBUILD)
    path = folder / SIDECAR_FILE
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, DenseProblem(str(path), f"it cannot be read ({exc.strerror or exc})", REBUILD)
    try:
        sidecar = decode(data)
    except SidecarError as exc:
        return None, DenseProblem(str(path), f"it is refused: {exc}", REBUILD)
    except ImportError as exc:  # numpy, which the dense extra installs
        return None, DenseProblem(
            str(path), f"it cannot be read without numpy ({exc})", "pip install -e '.[dense]'"
        )
    header = sidecar.header
    if header.get("count") != wanted["count"]:
        return None, DenseProblem(
            str(path),
            f"it holds {header.get('count')} vectors, and search.json {wanted['count']} documents",
            REBUILD,
        )
    other = [
        key
        for key in ("documents_sha256", "model_sha256", "tokenizer_sha256", "max_tokens")
        if header.get(key) != wanted[key]
    ]
    if other:
        return None, DenseProblem(
            str(path),
            f"it was not made from this search.json's documents by its pinned model and tokenizer "
            f"(its {', '.join(other)} differ)",
            REBUILD,
        )
    return sidecar, None
