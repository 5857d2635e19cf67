"""Spec slicing: the part of a large OpenAPI document that an intent map needs, with provenance.

Input: a loaded document (plain JSON values), the JSON pointers of the operations to keep (the
operations an intent map turns into tools), and the provenance of the full document. Output: a new
OpenAPI document holding those operations (with their path items' shared ``parameters``), every
value they reach through local ``$ref``s, transitively, the security schemes, servers, top-level
security and the tags the kept operations use, plus an ``x-toolgen-slice`` object:

    {"source": "<name of the full document>", "version": "<its info.version>",
     "sha256": "<hex digest of its bytes>", "operations": <count>}

A build from the slice gives the same tools, catalogs, policy and package as a build from the full
document, because every value the compiler reads for those operations is copied verbatim, at the
same JSON pointer. Where a ``$ref`` points inside an array, the whole array is kept (array indexes
must not move). Pure: no IO; `slice_document` raises `SliceError` for a ``$ref`` it cannot follow.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from ..pointer import PointerError, escape_token, parse_pointer, ref_to_pointer, resolve_pointer

#: The key under which a slice records where it came from.
PROVENANCE_KEY = "x-toolgen-slice"
_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})
_TOP_LEVEL = ("openapi", "jsonSchemaDialect", "servers", "security")


class SliceError(ValueError):
    """A reference the slice cannot follow; `pointer` is where the reference stands."""

    def __init__(self, message: str, pointer: str):
        super().__init__(message)
        self.pointer = pointer


def document_sha256(data: bytes) -> str:
    """The hex SHA-256 of a document's bytes, as recorded in a slice's provenance."""
    return hashlib.sha256(data).hexdigest()


def _refs(value: Any, at: str) -> Iterable[tuple[str, str]]:
    """(pointer of the ``$ref``, its target) for every ``$ref`` string inside `value` (iterative)."""
    stack: list[tuple[Any, str]] = [(value, at)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                yield where + "/$ref", ref
            for key, child in node.items():
                if isinstance(child, (dict, list)):
                    stack.append((child, f"{where}/{escape_token(str(key))}"))
        elif isinstance(node, list):
            for index, child in enumerate(node):
                if isinstance(child, (dict, list)):
                    stack.append((child, f"{where}/{index}"))


def _keepable(data: Any, pointer: str) -> str:
    """`pointer`, cut back to the array that holds it when it runs through one (the whole array is
    kept so that indexes stay valid)."""
    node = data
    walked = ""
    for token in parse_pointer(pointer):
        if isinstance(node, list):
            return walked
        node = node[token] if isinstance(node, dict) else node
        walked += "/" + escape_token(token)
    return walked


def _covered(pointer: str, kept: set[str]) -> bool:
    """Whether `pointer` or one of its ancestors is already kept."""
    if pointer in kept:
        return True
    parts = pointer.split("/")
    return any("/".join(parts[:i]) in kept for i in range(1, len(parts)))


def _place(out: dict[str, Any], data: Any, pointer: str) -> None:
    """Copy the value at `pointer` of `data` to the same pointer of `out`, creating objects on the
    way (their keys in the source's order, so the slice reads like the original)."""
    tokens = parse_pointer(pointer)
    source: Any = data
    target: Any = out
    for depth, token in enumerate(tokens):
        source = source[token]
        if depth == len(tokens) - 1:
            target[token] = copy.deepcopy(source)
        else:
            target = target.setdefault(token, {})


def _reorder(out: Any, data: Any) -> Any:
    """`out` with each object's keys in the order the source document has them."""
    if isinstance(out, dict) and isinstance(data, dict):
        ordered = {k: _reorder(out[k], data.get(k)) for k in data if k in out}
        ordered.update({k: v for k, v in out.items() if k not in ordered})
        return ordered
    return out


def slice_document(
    data: Mapping[str, Any], operations: Iterable[str], *, source: str, sha256: str
) -> dict[str, Any]:
    """The slice of `data` that keeps the operations at the pointers `operations` (``/paths/<path>/
    <method>``); `source` and `sha256` describe the full document for the provenance record.

    Raises `SliceError` for an external or dangling ``$ref`` (naming where it stands), `ValueError`
    for a pointer that is not an operation."""
    kept: set[str] = set()
    pending: list[str] = []

    def keep(pointer: str) -> None:
        pointer = _keepable(data, pointer)
        if not _covered(pointer, kept):
            kept.add(pointer)
            pending.append(pointer)

    ops = sorted(set(operations))
    for pointer in ops:
        tokens = parse_pointer(pointer)
        if len(tokens) != 3 or tokens[0] != "paths" or tokens[2] not in _METHODS:
            raise ValueError(f"{pointer!r} is not an operation pointer (/paths/<path>/<method>)")
        keep(pointer)
        item = data["paths"][tokens[1]]
        for key in item:
            if key not in _METHODS:  # the path item's shared parameters, servers, summary, $ref
                keep(f"/paths/{escape_token(tokens[1])}/{escape_token(key)}")
    for key in _TOP_LEVEL:
        if key in data:
            keep("/" + key)
    schemes = (data.get("components") or {}).get("securitySchemes")
    if isinstance(schemes, dict):
        keep("/components/securitySchemes")
    while pending:
        pointer = pending.pop()
        for where, ref in _refs(resolve_pointer(data, pointer), pointer):
            target = ref_to_pointer(ref)
            if target is None:
                raise SliceError(
                    f"the $ref {ref!r} points outside the document; slice a bundled document", where
                )
            try:
                resolve_pointer(data, target)
            except PointerError:
                raise SliceError(f"the $ref {ref!r} does not resolve", where) from None
            keep(target)
    out: dict[str, Any] = {}
    for pointer in sorted(kept):
        if not _covered(pointer, kept - {pointer}):
            _place(out, data, pointer)
    info = dict(data.get("info") or {})
    out["info"] = info
    used_tags = {t for p in ops for t in (resolve_pointer(data, p).get("tags") or []) if isinstance(t, str)}
    tags = [t for t in data.get("tags") or [] if isinstance(t, dict) and t.get("name") in used_tags]
    if tags:
        out["tags"] = copy.deepcopy(tags)
    out = _reorder(out, data)
    out[PROVENANCE_KEY] = {
        "source": source,
        "version": str(info.get("version", "")),
        "sha256": sha256,
        "operations": len(ops),
    }
    return out


__all__ = ["PROVENANCE_KEY", "SliceError", "document_sha256", "slice_document"]
