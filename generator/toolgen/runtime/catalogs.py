"""A generated package's catalog files, split ones included: what `toolgen catalog` prints and the
generated package's `catalog()` returns.

Input: a package folder, a catalog name (``mcp``, ``openai``, ``openai.responses``, ``anthropic``,
``gemini``: the file ``<name>.json``) and, for a split catalog, the toolset or the part wanted.
Output: the catalog as the build wrote it (a JSON list), or `CatalogError` saying what is missing.

A catalog over its provider's per-request limit is written as parts (today Anthropic's, over 10,000
tools with tool search: ``anthropic.1.json``, ``anthropic.2.json``, ...) with the index
``<name>.parts.json`` (docs/generated-format.md, "Split catalogs"); ``<name>.json`` is then absent.
A part is a whole request catalog, so a host picks the one holding the toolsets it needs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

JSON = Any


class CatalogError(ValueError):
    """A catalog that cannot be read as asked: absent, not JSON, split without a choice of part, or
    no part holding the toolset. The message says which and what to pass."""


def parts_index(folder: Path, name: str) -> dict[str, JSON] | None:
    """The index of catalog `name`'s parts (``<name>.parts.json``), or None when it is not split.
    Raises `CatalogError` when the index is not a JSON object with a ``parts`` list."""
    path = folder / f"{name}.parts.json"
    if not path.is_file():
        return None
    try:
        index = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CatalogError(f"cannot read {path.name}: {exc}") from exc
    if not isinstance(index, dict) or not isinstance(index.get("parts"), list):
        raise CatalogError(f"{path.name} is not a catalog index (an object with a `parts` list)")
    return index


def read_catalog(folder: Path, name: str, *, toolset: str | None = None, part: int | None = None) -> JSON:
    """The catalog `name` of the package in `folder`: ``<name>.json``, or, when it is split, the part
    holding `toolset` or the part numbered `part` (1-based, as ``anthropic.<part>.json``). Either is
    ignored for a catalog that is not split. Raises `CatalogError` (module docstring)."""
    index = parts_index(folder, name)
    if index is None:
        return _read(folder / f"{name}.json")
    parts = [p for p in index["parts"] if isinstance(p, dict)]
    if part is not None:
        if not 1 <= part <= len(parts):
            raise CatalogError(f"the {name} catalog has parts 1 to {len(parts)}, not {part}")
        return _read(folder / str(parts[part - 1].get("file")))
    if toolset is not None:
        for entry in parts:
            if toolset in entry.get("toolsets", []):
                return _read(folder / str(entry.get("file")))
        known = sorted(str(t) for p in parts for t in p.get("toolsets", []) if t is not None)
        raise CatalogError(
            f"no part of the {name} catalog holds toolset {toolset!r} (its deferred toolsets: "
            f"{', '.join(known[:20])}{' ...' if len(known) > 20 else ''})"
        )
    raise CatalogError(
        f"the {name} catalog is split into {len(parts)} parts ({index.get('source', 'a provider limit')}): "
        f"choose the part holding a toolset, or one by number (1 to {len(parts)}); "
        f"{name}.parts.json lists the toolsets of each"
    )


def _read(path: Path) -> JSON:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CatalogError(f"cannot read {path.name}: {exc}") from exc


__all__ = ["CatalogError", "parts_index", "read_catalog"]
