"""Duplicate keys in a spec's text: the members a JSON or YAML parser silently drops.

Input: the text of a JSON document, or the representation tree of a YAML one
(`toolgen.compile.sourcemap.yaml_nodes`). Output: one `DuplicateKey` per key written more than once
in one object, in document order: the JSON pointer of the object, the key, and the 1-based line and
column of each occurrence. Both readers keep the last occurrence and drop the others without a word
(RFC 8259 §4: "The names within an object SHOULD be unique"; YAML 1.2 §3.2.1.1 requires unique
keys, PyYAML does not check), so a spec with ``get`` written twice under one path loses an
operation. Real specs contain such keys (a repeated ``description``, ``example`` or response code),
so `toolgen.compile.load` reports each as a warning (``spec-duplicate-key``), not an error.

Cost: a JSON text is parsed once more by the C decoder, every object handed to a check that stops
at the first duplicate, no tree built and the collector paused (GitHub's 13 MB spec: 51 ms, Stripe's
2.5 MB: 16 ms, against 76 and 21 ms for their `json.loads`: best of 15 with the document loaded; a
cold `load_spec` of them takes about 1.7 and 0.7 s); only a text that has duplicates is parsed a
third time to find where they are. A YAML tree is walked (each node once, however many aliases point at it) only when the
loader saw a mapping lose keys (`toolgen.compile.load`), so a YAML spec without duplicates costs one
comparison per mapping. `load_spec` remembers the result by the text's `SpecDocument.content_key`,
so a build whose spec did not change runs neither.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..pointer import escape_token
from .sourcemap import json_members

__all__ = ["DuplicateKey", "json_duplicate_keys", "yaml_duplicate_keys"]


@dataclass(frozen=True)
class DuplicateKey:
    """A key written more than once in one object: `pointer` is the JSON pointer of the object (in
    the file's text), `key` the repeated key, `positions` the (line, column) of each occurrence in
    document order, 1-based (the last is the one the reader keeps)."""

    pointer: str
    key: str
    positions: tuple[tuple[int, int], ...]

    @property
    def member(self) -> str:
        """The JSON pointer of the member the reader keeps."""
        return f"{self.pointer}/{escape_token(self.key)}"


class _Found(Exception):
    """Raised out of the decoder at the first object with a repeated key."""


def _stop_at_duplicate(pairs: list[tuple[str, Any]]) -> None:
    if len(pairs) > 1 and len(dict(pairs)) != len(pairs):
        raise _Found


def json_duplicate_keys(text: str) -> tuple[DuplicateKey, ...]:
    """The duplicate keys of the JSON document `text` (which `json.loads` has read), in document
    order of the kept occurrence, inside the values the decoder keeps only. Raises nothing for a
    text `json.loads` reads."""
    try:  # the common case: no object repeats a key; no tree is built
        json.loads(text, object_pairs_hook=_stop_at_duplicate)
        return ()
    except _Found:
        pass
    repeated: dict[int, tuple[dict[str, Any], list[str]]] = {}  # each object held, so no id is reused

    def record(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            times: dict[str, int] = {}
            for key, _ in pairs:
                times[key] = times.get(key, 0) + 1
            repeated[id(obj)] = (obj, [key for key, n in times.items() if n > 1])
        return obj

    data = json.loads(text, object_pairs_hook=record)
    where: dict[str, list[str]] = {}  # pointer of each object with a repeated key -> those keys
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        node, pointer = stack.pop()
        if isinstance(node, dict):
            if id(node) in repeated:
                where[pointer] = repeated[id(node)][1]
            stack.extend((v, f"{pointer}/{escape_token(k)}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{pointer}/{i}") for i, v in enumerate(node))
    members = json_members(text, sorted(where))
    found: list[DuplicateKey] = []
    for pointer, keys in where.items():
        written: dict[str, list[tuple[int, int]]] = {}  # each key of the object -> where it is written
        for name, position in members.get(pointer, ()):
            written.setdefault(name, []).append(position)
        found.extend(DuplicateKey(pointer, key, tuple(written.get(key, ()))) for key in keys)
    return tuple(sorted(found, key=lambda d: d.positions[-1] if d.positions else (0, 0)))


def yaml_duplicate_keys(root: Any) -> tuple[DuplicateKey, ...]:
    """The duplicate keys of the YAML document whose representation tree is `root` (None for an
    empty document), compared as the loader's JSON values compare them (``200`` and ``'200'`` are
    one key, and so are ``1``, ``1.0`` and ``true``: `_loaded_keys`), in document order; inside the values the loader keeps only (as `json_duplicate_keys`:
    a dropped value's own duplicates are not read anyway). A merge key (``<<``) is not a duplicate:
    YAML lets the mapping's own keys override merged ones."""
    import yaml

    constructor = yaml.constructor.SafeConstructor()
    found: list[DuplicateKey] = []
    visited: set[int] = set()
    stack: list[tuple[Any, str]] = [(root, "")] if root is not None else []
    while stack:
        node, pointer = stack.pop()
        if id(node) in visited:
            continue  # an alias of a node already walked
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            kept: dict[str, Any] = {}  # each key as loaded -> the value the loader keeps
            for key, (where, value) in _loaded_keys(constructor, node).items():
                if len(where) > 1:
                    found.append(DuplicateKey(pointer, key, where))
                kept[key] = value
            stack.extend((value, f"{pointer}/{escape_token(key)}") for key, value in reversed(kept.items()))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, f"{pointer}/{i}") for i, item in reversed(list(enumerate(node.value))))
    return tuple(sorted(found, key=lambda d: d.positions[-1]))


def _loaded_keys(constructor: Any, node: Any) -> dict[str, tuple[tuple[tuple[int, int], ...], Any]]:
    """The keys of the mapping `node` as the loaded JSON holds them, in its order, each with the
    (line, column) of every occurrence that became it (the one whose value is read last) and the
    node of that value; merge keys and their entries left out. Two steps merge keys, as in
    `toolgen.compile.load`: PyYAML's dict keeps one key per Python value (``1``, ``1.0`` and ``true``
    are one: the first written, with the last value), then every key becomes its string (``1`` and
    ``'1'`` are one: the one PyYAML's dict holds later wins)."""
    import yaml

    by_value: dict[Any, tuple[str, list[tuple[int, int]], Any]] = {}
    for key_node, value in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
            continue
        key = _key_value(constructor, key_node)
        text, positions, _ = by_value.get(key, (key if isinstance(key, str) else str(key), [], None))
        positions.append((key_node.start_mark.line + 1, key_node.start_mark.column + 1))
        by_value[key] = (text, positions, value)  # an equal key keeps the first one's object, as a dict does
    loaded: dict[str, tuple[tuple[tuple[int, int], ...], Any]] = {}
    for text, positions, value in by_value.values():
        earlier = loaded.pop(text, ((), None))[0]
        dropped = sorted([*earlier, *positions[:-1]])
        loaded[text] = ((*dropped, positions[-1]), value)
    return loaded


def _key_value(constructor: Any, node: Any) -> Any:
    """A scalar key as PyYAML's loader makes it (a str, int, float, bool, None, date, ...); its text
    when it cannot be constructed or hashed (the loader read it, so this does not happen)."""
    if node.tag == "tag:yaml.org,2002:str":
        return str(node.value)
    try:
        value = constructor.construct_object(node)
        hash(value)
    except Exception:  # noqa: BLE001 - the loader read it; this is the key's text at worst
        return str(node.value)
    return value
