"""What the build cache keeps of each catalog entry: the entry, and the values later stages derive from it.

Input: the IR's tools (after the lowering's last pass, `add_routing_notes`), the dialect options and a
`Cache`. Output: `CatalogMemo`, the ``entry(dialect, tool)`` that
`toolgen.emit.dialect_catalogs.build_catalogs` calls, each entry computed by `Dialect.catalog_entry`
or read back, exactly as a build without the cache computes it.

One table per environment (`environment_key`: toolgen's code), dialect options and API holds, for
each final tool, a **record**: its entry in each dialect, and the values the later stages derived
from each entry object as `build_catalogs` returned it (`toolgen.emit.derived`): its compact JSON's
bytes and o200k tokens (`toolgen.emit.build_report.measure`), whether it keeps its dialect's rules
(`toolgen.builder.incremental.conformance_problems`), what Anthropic's strict choice reads of it
(`Dialect.select_facts`) and its indented JSON in the catalog file (`toolgen.emit.json_bytes`); and, in
the slot `TOOL_VALUES`, the values the later stages derived from the IR tool itself: its policy row's
line in POLICY.md (`toolgen.emit.policy.policy_markdown`, for a row that is the tool's own: no
argument rewrites). A record is keyed by the digest of the tool's content (`toolgen.emit.content_pickle`
of the final `Tool`: every field, in order, so a description another tool's routing note rewrote is
another key), or by the digest the lowering already has of it
(`toolgen.builder.incremental.LastTools.content_digest`: the one kept with the tool the last build
made, or for a routing note's tool one naming that tool and its new description), so a tool an edit
did not reach is not serialised to be found. Each derived value is a pure function of an entry, so of
that key and the table's (the dialect options), or of the tool's content alone (a policy row is
``tool.policy``, one of its fields, and its line in POLICY.md reads that row alone): a tool an edit
did not reach costs one record read back (one unpickling for its four entries and their values), where
each entry and each value cost a key of its own (a digest), a look-up in the table of its kind and an
unpickling; and its policy row's JSON is not even made (`toolgen.emit.policy.table_json`: its indented
JSON and its search document are found by the tool's digest).

The later stages derive values only from the very object the memo returned (`toolgen.emit.derived`
looks it up by identity): an object a whole-catalog stage made anew (a tool Anthropic's budget made
strict, a deferred view's entry) is keyed by its content as before, in the tables of
`toolgen.builder.incremental.Pieces`. A record that is not a pair of entries and of dicts of immutable
values (another format, a truncated or foreign payload) is not read: the tool's entries are computed
again, and their values with them.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from ..compile.ir import Tool
from ..dialects import Dialect, DialectOptions
from ..emit import content_digest, immutable_value, keep_derived
from ..emit.dialect_catalogs import Entry
from .cache import Cache, canonical, digest, environment_key
from .incremental import PieceTable

#: the record's format, in the table's key: a table of another format is another table
RECORD_FORMAT = "catalog-record 2"
#: the record's slot, beside its dialects', for the values derived from the IR tool itself (no dialect's name)
TOOL_VALUES = "tool"


class CatalogMemo:
    """`toolgen.emit.dialect_catalogs.build_catalogs`'s ``entry(dialect, tool)`` answered from the cache.

    One table per environment, dialect options and API (`api`: a build keeps only the records it
    used, so two APIs of a project sharing one table would drop each other's): `record_key` of the
    tool's content -> the pickled record (module docstring), a `PieceTable`. Read once when the build
    starts; `save`, once the files are made, keeps the records this build used, with the values its
    stages derived. A record is unpickled when its tool is asked for, its entries are this build's own
    objects, and a record written again is made from its payload unpickled again: what a later stage
    does to an entry (selection, deferred views) never reaches the table. `register`: told each tool
    object it returns with the digests of its table and key and its dialect
    (`toolgen.emit.known_contents`), so the later stages' keys of that object need not serialise it
    and the values they derive from it are kept in its record (`toolgen.emit.keep_derived`); and each
    IR `Tool` with the digest of its content, the values derived from it kept in its record's slot
    `TOOL_VALUES` (what `toolgen.emit.policy` derives from its policy row). `known`: the digest of a
    tool's content the lowering already has (`toolgen.builder.incremental.LastTools.content_digest`),
    None when it has none."""

    def __init__(
        self,
        cache: Cache,
        options: DialectOptions,
        register: Callable[[Any, str], None] | None = None,
        api: str = "",
        known: Callable[[Tool], str | None] | None = None,
    ) -> None:
        #: the table's key (kind ``catalog``): the environment, the record's format, the options, the API
        self.key = digest(
            "catalog", environment_key(), RECORD_FORMAT, canonical(asdict(options)), f"api {api}"
        )
        self._table = PieceTable(cache, "catalog", self.key)
        self._register = register
        self._known = known
        self._used: dict[str, _Record] = {}  # record key -> the record as this build uses it
        self._computed = 0
        self._last: tuple[Tool | None, str, _Record | None] = (None, "", None)

    @property
    def computed(self) -> int:
        """How many entries this build computed (the others were read back)."""
        return self._computed

    def __call__(self, dialect: Dialect, tool: Tool) -> Entry:
        if tool is not self._last[0]:  # each tool is asked for in every dialect in turn: one record
            content = (self._known(tool) if self._known is not None else None) or content_digest(tool)
            key = record_key(content)
            found = self._used.get(key) or self._read(key)
            self._last = (tool, key, found)
            if self._register is not None:  # known by its content to the later stages' keys (its policy row),
                self._register(tool, f"tool {content}")  # what they derive from it kept in its record
                keep_derived(tool, found.derived.setdefault(TOOL_VALUES, {}))
        _, key, record = self._last
        assert record is not None
        self._used[key] = record
        entry = record.entries.pop(dialect.name, None)  # an object of this build's own unpickling
        if entry is None:
            made = pickle.dumps(dialect.catalog_entry(tool), protocol=5)
            record.made[dialect.name] = made
            entry = pickle.loads(made)
            self._computed += 1
        if self._register is not None:  # the object is a pure function of the table, the tool's key and
            self._register(entry[0], f"{self.key} {key} {dialect.name}")  # the dialect: the three name it
            keep_derived(entry[0], record.derived.setdefault(dialect.name, {}))
        return entry

    def _read(self, key: str) -> _Record:
        """The record of `key` as the table holds it; an empty one when there is none or it is not a
        record (module docstring)."""
        payload = self._table.get(key)
        found = _loaded(payload) if payload is not None else None
        if found is None:
            return _Record(None, {}, {})
        entries, derived = found
        return _Record(payload, entries, derived)

    def save(self) -> None:
        """Keep the records this build used for the next, each with the values derived from its entries
        (`PieceTable.save`: a record read back, to which nothing was added, is written as it was read)."""
        self._table.save({key: record.payload_now() for key, record in self._used.items()})


def record_key(content: str) -> str:
    """The key of a tool's record in its table: `content` is the SHA-256 (hex) of the final tool's
    `toolgen.emit.content_pickle`."""
    return digest("tool", content)


class _Record:
    """One tool's record as a build uses it: `payload` as read (None: there was none), the `entries` read
    back and not yet returned (by dialect), the entries `made` in this build (pickled, by dialect), and
    the values `derived` from each dialect's entry."""

    def __init__(
        self, payload: bytes | None, entries: dict[str, Entry], derived: dict[str, dict[str, Any]]
    ) -> None:
        self.payload = payload
        self.entries = entries
        self.derived = derived
        self.made: dict[str, bytes] = {}
        self._values = self._count()

    def _count(self) -> int:
        return sum(map(len, self.derived.values()))

    def payload_now(self) -> bytes:
        """What the table keeps of this record now: the payload read when nothing was made or derived
        since; else the entries as read (unpickled again: what this build did to its objects does not
        reach the table) and as made, with the values derived."""
        if self.payload is not None and not self.made and self._count() == self._values:
            return self.payload
        read = _loaded(self.payload) if self.payload is not None else None
        entries = {
            **(read[0] if read is not None else {}),
            **{d: pickle.loads(m) for d, m in self.made.items()},
        }
        return pickle.dumps((entries, self.derived), protocol=5)


def _loaded(payload: bytes) -> tuple[dict[str, Entry], dict[str, dict[str, Any]]] | None:
    """A record's entries (by dialect: an entry is a triple of a dict and two tuples) and the values
    derived from them (by dialect: a dict of str to what `toolgen.emit.derived` keeps), or None when
    `payload` is not such a pair (another format, truncated or foreign)."""
    try:
        found = pickle.loads(payload)
    except Exception:  # noqa: BLE001 - a payload of another format: computed again
        return None
    if not (type(found) is tuple and len(found) == 2 and type(found[0]) is dict and type(found[1]) is dict):
        return None
    entries, derived = found
    if not all(
        type(e) is tuple
        and len(e) == 3
        and type(e[0]) is dict
        and type(e[1]) is tuple
        and type(e[2]) is tuple
        for e in entries.values()
    ) or not all(
        type(values) is dict and all(type(k) is str and immutable_value(v) for k, v in values.items())
        for values in derived.values()
    ):
        return None
    return entries, derived


def catalog_memo(
    cache: Cache | None,
    options: DialectOptions,
    register: Callable[[Any, str], None] | None = None,
    api: str = "",
    known: Callable[[Tool], str | None] | None = None,
) -> CatalogMemo | None:
    """A `CatalogMemo` of the API named `api` when there is a cache."""
    return CatalogMemo(cache, options, register, api, known) if cache is not None else None
