"""Stage `emit`: IR -> files in memory (`dict[str, bytes]`, relative path -> content).

Input: the `ApiIR` (and the catalogs built from it). Output: the catalogs (`catalogs`: one per
dialect, and `toolgen.dialects.deferred_views` for toolsets and deferred tools), the policy table
(`policy`: policy.json, POLICY.md), the tool-search index (`search`: search.json), the up-front cost
(`upfront`), REPORT.md (`report`) and the Python package (`python`, whose only way to write spec
text into code is `pyliteral`). Nothing here touches the disk; `write` does. Every JSON file is serialised by `json_bytes` (sorted keys, two-space indent,
UTF-8, final newline), so output is byte-identical across runs.
"""

from __future__ import annotations

import hashlib
import io
import json
import marshal
import pickle
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from json.encoder import encode_basestring
from typing import Any, TypeVar

from ..remember import Remember, computed

_V = TypeVar("_V")


def piece_key(*parts: Any) -> str:
    """The key of a piece computed from `parts`: SHA-256 of their content. JSON-like values (dicts,
    lists, tuples, strings, numbers, booleans, None) are written by `marshal` format 2, which keeps
    their types apart (``1``, ``1.0``, ``True``; ``1`` and ``"1"`` as keys; tuples and lists) and
    their order, and knows nothing of which objects are shared: equal content gives an equal key,
    however the value was built or read back. Anything else is pickled.

    A part that is an object of `known_contents` (the very object, not an equal one) is written as
    the digest it was registered with (bytes: no JSON value is written so), not walked again."""
    known = _KNOWN[-1] if _KNOWN else None
    if known:
        parts = tuple(_known_part(p, known) for p in parts)
    try:
        data = b"m" + marshal.dumps(parts, 2)
    except ValueError:  # not plain data (a dataclass), or nested past marshal's depth
        data = b"p" + content_pickle(parts)
    return hashlib.sha256(data).hexdigest()


#: the registers of the `known_contents` scopes in progress (the innermost last)
_KNOWN: list[dict[int, tuple[Any, bytes]]] = []
#: beside each register: ``id(obj) -> (obj, record)``, where the values `derived` from a known object
#: are kept (`keep_derived`)
_RECORDS: list[dict[int, tuple[Any, dict[str, Any]]]] = []


def _known_part(part: Any, known: dict[int, tuple[Any, bytes]]) -> Any:
    found = known.get(id(part))
    return found[1] if found is not None and found[0] is part else part


@contextmanager
def known_contents() -> Iterator[Callable[[Any, str], None]]:
    """A scope in which `piece_key` knows the content of some objects by a digest: yields
    ``register(obj, digest)``, where `digest` must name everything `obj`'s content is a pure function
    of (the build cache's catalog entries: their table, key and dialect,
    `toolgen.builder.catalog_pieces.CatalogMemo`), and `obj` must not be changed while the scope lasts
    (the stages after the catalogs only read them).
    A tool object keyed for its tokens, its conformance and its JSON is then not serialised three
    times. The register holds each object, so no other object takes its ``id()`` meanwhile."""
    register: dict[int, tuple[Any, bytes]] = {}
    records: dict[int, tuple[Any, dict[str, Any]]] = {}
    _KNOWN.append(register)
    _RECORDS.append(records)

    def add(obj: Any, digest: str) -> None:
        register[id(obj)] = (obj, b"known content " + digest.encode("ascii"))

    try:
        yield add
    finally:
        _KNOWN.remove(register)
        _RECORDS.remove(records)


def keep_derived(obj: Any, record: dict[str, Any]) -> None:
    """In the innermost `known_contents` scope in progress (none: nothing is kept), keep the values
    `derived` from `obj` in `record`: read from it when there, added to it when computed. `obj` must be
    registered in that scope, and `record` hold only values derived from an object of the same
    digest: the caller keeps it with the object (the build cache's catalog entries,
    `toolgen.builder.catalog_pieces`), so a later build finds them without a key or a table."""
    if _RECORDS:
        _RECORDS[-1][id(obj)] = (obj, record)


def has_record(obj: Any) -> bool:
    """Whether the innermost `known_contents` scope in progress keeps a record of the values derived from
    this very object (`keep_derived`)."""
    found = _RECORDS[-1].get(id(obj)) if _RECORDS else None
    return found is not None and found[0] is obj


def known_from(obj: Any, source: Any, name: str) -> bool:
    """Say that `obj` is a pure function of `source`'s content and of what `name` names (a policy row's
    JSON of its IR tool: ``"policy-row 2"``), in the innermost `known_contents` scope in progress, when
    `source` is known there (else nothing): `obj` is then known to `piece_key` by `source`'s digest and
    `name`, not walked. `obj` must not be changed while the scope lasts. Returns whether it was."""
    known = _KNOWN[-1].get(id(source)) if _KNOWN else None
    if known is None or known[0] is not source:
        return False
    _KNOWN[-1][id(obj)] = (obj, known[1] + b" " + name.encode("utf-8"))
    return True


def derived(obj: Any, what: str, compute: Callable[[], _V], otherwise: Callable[[], _V] | None = None) -> _V:
    """``compute()``, a pure function of `obj`'s content that `what` names (the function, its version and
    its other arguments: ``"o200k-object"``, ``"json '    ' 1"``), taken from `obj`'s record when the
    innermost `known_contents` scope keeps one for this very object (`keep_derived`) and kept in it
    otherwise. Without a record, ``otherwise()`` (the same value, found another way: through a
    `toolgen.remember.Remember` keyed by the object's content), or ``compute()``. The value must be
    immutable (None, a bool, number, string, bytes, or a tuple of these): it is shared by every use and
    stored as it is; another raises TypeError."""
    found = _RECORDS[-1].get(id(obj)) if _RECORDS else None
    if found is None or found[0] is not obj:
        return (otherwise or compute)()
    record = found[1]
    if what in record:
        kept: _V = record[what]
        return kept
    value = compute()
    if not immutable_value(value):
        raise TypeError(f"derived {what!r}: {type(value).__name__} is not an immutable value")
    record[what] = value
    return value


def immutable_value(value: Any) -> bool:
    """Whether `value` is what `derived` keeps: None, a bool, int, float, str or bytes, or a tuple of such
    values."""
    if value is None or type(value) in (bool, int, float, str, bytes):
        return True
    return type(value) is tuple and all(immutable_value(v) for v in value)


def also_known(obj: Any, digest: str) -> None:
    """Register `obj` with `digest` in the innermost `known_contents` scope in progress, if any (as
    its ``register`` does): for a stage that makes an object from known ones, as a pure function of
    what `digest` names (a policy row's JSON from its tool)."""
    if _KNOWN:
        _KNOWN[-1][id(obj)] = (obj, b"known content " + digest.encode("ascii"))


class LazyJson(Mapping[str, Any]):
    """A JSON object made by ``make()`` (a pure function) only when a member other than those of `facts`
    (``((name, value), ...)``: members known without making it) is asked for, or given made (`value`):
    the JSON of a policy row whose indented JSON and search document are found by its digest
    (`known_from`) is then never made at all. Each instance makes its own object (nothing made is
    shared with another object or build); `value` is that object, a plain dict. `json_bytes` writes
    it as that dict."""

    __slots__ = ("_facts", "_make", "_value")

    def __init__(
        self,
        make: Callable[[], dict[str, Any]],
        facts: tuple[tuple[str, Any], ...],
        value: dict[str, Any] | None = None,
    ) -> None:
        self._make = make
        self._facts = dict(facts)
        self._value = value

    def value(self) -> dict[str, Any]:
        """The object as a plain dict (made once, then the same dict). Raises TypeError when ``make()``
        gives anything else."""
        if self._value is None:
            made = self._make()
            if type(made) is not dict:
                raise TypeError(f"a lazy JSON object made {type(made).__name__}, not a dict")
            self._value = made
        return self._value

    def __getitem__(self, name: str) -> Any:
        if name in self._facts:
            return self._facts[name]
        return self.value()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.value())

    def __len__(self) -> int:
        return len(self.value())


def _plain(value: Any) -> Any:
    """`value`, or the dict a `LazyJson` holds (`json.dumps`'s ``default``)."""
    if type(value) is LazyJson:
        return value.value()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def content_pickle(value: Any) -> bytes:
    """`value` pickled without the pickler's memo: an object reached twice is written twice, so the
    bytes depend on the content alone, not on which parts happen to be shared (an IR whose equal
    schemas were interned, or read back from the cache, pickles as one built afresh). `value` must
    not contain itself."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = (
        True  # no memo (deprecated for general use: it cannot write cycles, which JSON and the IR lack)
    )
    pickler.dump(value)
    return buffer.getvalue()


def content_digest(value: Any) -> str:
    """The SHA-256 (hex) of `value`'s `content_pickle`: what the build cache knows an IR tool by (its
    catalog record's key, `toolgen.builder.catalog_pieces`; the digest the last build's tools are kept
    with, `toolgen.builder.incremental.LastTools`)."""
    return hashlib.sha256(content_pickle(value)).hexdigest()


def json_bytes(value: Any, remember: Remember | None = None) -> bytes:
    """Deterministic JSON: sorted keys, 2-space indent, non-ASCII kept, final newline.

    Byte-identical to ``json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False)``; the standard
    library serialises indented JSON in pure Python through generators, which costs seconds on a
    catalog of thousands of tools, so plain JSON trees go through a flatter encoder (strings, numbers
    and keys still use the standard library's C routines); anything else takes the standard path.
    The outer two levels (a catalog's tools, the policy table's rows) are encoded one member at a
    time straight to bytes, so the peak is about twice the output, not the five times that building
    one string of the whole file and then encoding it cost (Stripe 25 times over: 650 MB of output).
    `remember`: each object in a list of the outer two levels (a catalog's tool, a policy row) is
    encoded through it, keyed by its content and indent (`piece_key`), so a build that changed one
    tool encodes that tool alone. A `LazyJson` object is written as the dict it holds.
    """
    if remember is computed:
        remember = None  # nothing is remembered: no piece's key (a digest of its content) is needed
    try:
        parts: list[bytes] = []
        _stream(value, "", parts, 2, remember, {})
    except (_Unsupported, RecursionError):
        text = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, default=_plain)
        return (text + "\n").encode("utf-8")
    parts.append(b"\n")
    return b"".join(parts)


def _stream(
    value: Any, indent: str, parts: list[bytes], levels: int, remember: Remember | None, seen: _Seen
) -> None:
    """Append `value`'s indented JSON to `parts`, its outer `levels` container levels member by member;
    the objects of its lists through `remember`, when given. `seen`: see `_indented`."""
    kind = type(value)
    if levels == 0 or (kind is not dict and kind is not list) or not value:
        parts.append(_indented(value, indent, seen).encode("utf-8"))
        return
    inner = indent + "  "
    if kind is dict:
        for key in value:
            if type(key) is not str:
                raise _Unsupported
        parts.append(b"{\n")
        for i, key in enumerate(sorted(value)):
            parts.append(((",\n" if i else "") + inner + encode_basestring(key) + ": ").encode("utf-8"))
            _stream(value[key], inner, parts, levels - 1, remember, seen)
        parts.append(("\n" + indent + "}").encode("utf-8"))
        return
    parts.append(b"[\n")
    for i, item in enumerate(value):
        parts.append(((",\n" if i else "") + inner).encode("utf-8"))
        if remember is not None and (type(item) is dict or type(item) is LazyJson):
            parts.append(
                derived(
                    item,
                    f"json {inner!r} {levels - 1}",
                    partial(_encoded, item, inner, levels - 1, seen),
                    partial(_remembered, item, inner, levels - 1, remember, seen),
                )
            )
        else:
            _stream(item.value() if type(item) is LazyJson else item, inner, parts, levels - 1, None, seen)
    parts.append(("\n" + indent + "]").encode("utf-8"))


def _remembered(value: Any, indent: str, levels: int, remember: Remember, seen: _Seen) -> bytes:
    """`_encoded` through `remember`, keyed by the value's content and the indent (`piece_key`; a
    `LazyJson` not known by a digest, by the dict it holds)."""
    part = value
    if type(value) is LazyJson and not (_KNOWN and _known_part(value, _KNOWN[-1]) is not value):
        part = value.value()
    return remember(piece_key("json", indent, levels, part), partial(_encoded, value, indent, levels, seen))


def _encoded(value: Any, indent: str, levels: int, seen: _Seen) -> bytes:
    parts: list[bytes] = []
    _stream(value.value() if type(value) is LazyJson else value, indent, parts, levels, None, seen)
    return b"".join(parts)


class _Unsupported(Exception):
    """A value `_indented` leaves to `json.dumps` (non-string keys, tuples, custom types...)."""


#: ``id(container) -> its JSON at indent ""`` once it was met twice (None after the first time), for one
#: `json_bytes` call, during which every container of the value stays alive (so ids are not reused)
_Seen = dict[int, "str | None"]


def _indented(value: Any, indent: str, seen: _Seen) -> str:
    """`value`'s indented JSON, its first line at the current position and the others after `indent`.

    A container object met again (the IR and the copy-on-write views share equal subtrees: one
    component schema inlined in hundreds of tools) is written once at indent ``""`` and re-indented
    on each use: JSON text holds a raw newline only between members (`encode_basestring` escapes
    those inside strings), so inserting `indent` after each newline gives exactly its text at `indent`."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is dict or kind is list:
        if not value:
            return "{}" if kind is dict else "[]"
        known = seen.get(id(value), _FIRST)
        if known is _FIRST:
            seen[id(value)] = None
            return _container(value, kind, indent, seen)
        if known is None:
            known = seen[id(value)] = _container(value, kind, "", seen)
        text: str = known
        return text.replace("\n", "\n" + indent) if indent else text
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int or kind is float:
        return json.dumps(value)
    raise _Unsupported


_FIRST: Any = object()


def _container(value: Any, kind: type, indent: str, seen: _Seen) -> str:
    inner = indent + "  "
    if kind is dict:
        for key in value:
            if type(key) is not str:
                raise _Unsupported
        return (
            "{\n"
            + inner
            + (",\n" + inner).join(
                [encode_basestring(k) + ": " + _indented(value[k], inner, seen) for k in sorted(value)]
            )
            + "\n"
            + indent
            + "}"
        )
    return (
        "[\n" + inner + (",\n" + inner).join([_indented(v, inner, seen) for v in value]) + "\n" + indent + "]"
    )


def compact_json(value: Any) -> str:
    """The compact form used to measure catalog bytes and tokens (what an SDK would send)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
