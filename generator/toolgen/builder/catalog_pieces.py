"""What the build cache keeps of each catalog entry: the entry, and the values later stages derive from it.

Input: the IR's tools (after the lowering's last pass, `add_routing_notes`), the dialect options and a
`Cache`. Output: `CatalogMemo`, the ``entry(dialect, tool)`` that
`toolgen.emit.dialect_catalogs.build_catalogs` calls, each entry computed by `Dialect.catalog_entry`
or read back, exactly as a build without the cache computes it.

One table per environment (`environment_key`: toolgen's code), dialect options and API holds, for
each (dialect, final tool), a **record**: the entry, pickled, and the values the later stages derived
from the entry object as `build_catalogs` returned it (`toolgen.emit.derived`): its compact JSON's
bytes and o200k tokens (`toolgen.emit.build_report.measure`), whether it keeps its dialect's rules
(`toolgen.builder.incremental.conformance_problems`), what Anthropic's strict choice reads of it
(`Dialect.select_facts`) and its indented JSON in the catalog file (`toolgen.emit.json_bytes`). A record
is keyed by the digest of the dialect's name and the tool's content (`toolgen.emit.content_pickle` of
the final `Tool`: every field, in order, so a description another tool's routing note rewrote is
another key). Each derived value is a pure function of the entry, so of that key and the table's: a
tool an edit did not reach costs one record read back, where each value cost a key of its own (a
digest) and a look-up in the table of its kind.

The later stages derive values only from the very object the memo returned (`toolgen.emit.derived`
looks it up by identity): an object a whole-catalog stage made anew (a tool Anthropic's budget made
strict, a deferred view's entry) is keyed by its content as before, in the tables of
`toolgen.builder.incremental.Pieces`. A record that is not a pair of an entry's pickle and a dict of
immutable values (another format, a truncated or foreign payload) is not read: the entry is computed
again, and its values with it.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from ..compile.ir import Tool
from ..dialects import Dialect, DialectOptions
from ..emit import content_pickle, immutable_value, keep_derived
from ..emit.dialect_catalogs import Entry
from .cache import Cache, canonical, digest, environment_key
from .incremental import PieceTable

#: the record's format, in the table's key: a table of another format is another table
RECORD_FORMAT = "catalog-record 1"


class CatalogMemo:
    """`toolgen.emit.dialect_catalogs.build_catalogs`'s ``entry(dialect, tool)`` answered from the cache.

    One table per environment, dialect options and API (`api`: a build keeps only the records it
    used, so two APIs of a project sharing one table would drop each other's): the digest of
    ``(dialect name, the SHA-256 of the tool's content)`` -> the pickled record (module docstring), a
    `PieceTable`. Read once when the build starts; `save`, once the files are made, keeps the records
    this build used, with the values its stages derived. The entry is unpickled on each use: what a
    later stage does to an entry (selection, deferred views) never reaches the table. `register`:
    told each tool object it returns with the digests of its table and key
    (`toolgen.emit.known_contents`), so the later stages' keys of that object need not serialise it
    and the values they derive from it are kept in its record (`toolgen.emit.keep_derived`); and each
    IR `Tool` with the SHA-256 of its content (the key of its policy row's JSON,
    `toolgen.emit.policy.table_json`)."""

    def __init__(
        self,
        cache: Cache,
        options: DialectOptions,
        register: Callable[[Any, str], None] | None = None,
        api: str = "",
    ) -> None:
        #: the table's key (kind ``catalog``): the environment, the record's format, the options, the API
        self.key = digest(
            "catalog", environment_key(), RECORD_FORMAT, canonical(asdict(options)), f"api {api}"
        )
        self._table = PieceTable(cache, "catalog", self.key)
        self._register = register
        #: key -> (the payload read back, or None when computed; the entry's pickle; its record; the
        #: record's size when read)
        self._used: dict[str, tuple[bytes | None, bytes, dict[str, Any], int]] = {}
        self._computed = 0
        self._last: tuple[Tool | None, str] = (None, "")

    @property
    def computed(self) -> int:
        """How many entries this build computed (the others were read back)."""
        return self._computed

    def __call__(self, dialect: Dialect, tool: Tool) -> Entry:
        if (
            tool is not self._last[0]
        ):  # each tool is asked for in every dialect in turn: pickled and hashed once
            self._last = (tool, hashlib.sha256(content_pickle(tool)).hexdigest())
            if (
                self._register is not None
            ):  # and known by its content to the later stages' keys (its policy row)
                self._register(tool, f"tool {self._last[1]}")
        key = digest(dialect.name, self._last[1])
        used = self._used.get(key) or self._read(key)
        if used is None:
            made = pickle.dumps(dialect.catalog_entry(tool), protocol=5)
            used = (None, made, {}, 0)
            self._computed += 1
        self._used[key] = used
        entry: Entry = pickle.loads(used[1])
        if self._register is not None:  # the object is a pure function of the table and the key (two digests
            self._register(entry[0], f"{self.key} {key}")  # of fixed length: the pair names both)
            keep_derived(entry[0], used[2])
        return entry

    def _read(self, key: str) -> tuple[bytes | None, bytes, dict[str, Any], int] | None:
        """The record of `key` as the table holds it, or None when there is none or it is not a record
        (module docstring)."""
        payload = self._table.get(key)
        if payload is None:
            return None
        try:
            found = pickle.loads(payload)
        except Exception:  # noqa: BLE001 - a payload of another format: computed again
            return None
        if not (
            type(found) is tuple
            and len(found) == 2
            and type(found[0]) is bytes
            and type(found[1]) is dict
            and all(type(k) is str and immutable_value(v) for k, v in found[1].items())
        ):
            return None
        return payload, found[0], found[1], len(found[1])

    def save(self) -> None:
        """Keep the records this build used for the next, each with the values derived from it
        (`PieceTable.save`: a record read back and not added to is written as it was read)."""
        self._table.save(
            {
                key: payload
                if payload is not None and len(record) == size
                else pickle.dumps((made, record), protocol=5)
                for key, (payload, made, record, size) in self._used.items()
            }
        )


def catalog_memo(
    cache: Cache | None,
    options: DialectOptions,
    register: Callable[[Any, str], None] | None = None,
    api: str = "",
) -> CatalogMemo | None:
    """A `CatalogMemo` of the API named `api` when there is a cache."""
    return CatalogMemo(cache, options, register, api) if cache is not None else None
