"""The source map of a loaded document: JSON pointer -> 1-based line and column in its text.

Input: the text of a JSON document (scanned along the wanted pointers only, with the C decoder
skipping everything else) or a ruamel.yaml round-trip tree (which records the position of every
key). Output: ``(line, col)`` pairs; a pointer that does not exist gets the position of its longest
existing prefix. `SpecDocument.locate` (`toolgen.compile.load`), the intent map and the project file
use it to put every diagnostic at ``file:line:col``.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from ..pointer import parse_pointer


def locate_ruamel(root: Any, tokens: list[str]) -> tuple[int, int]:
    """Line/col (1-based) of the node at `tokens` in a ruamel round-trip tree."""
    node = root
    best = (1, 1)
    for token in tokens:
        lc = getattr(node, "lc", None)
        if isinstance(node, dict) and token in node:
            if lc is not None:
                try:
                    line, col = lc.key(token)
                    best = (line + 1, col + 1)
                except (KeyError, TypeError):
                    pass
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            if lc is not None:
                try:
                    line, col = lc.item(int(token))
                    best = (line + 1, col + 1)
                except (KeyError, TypeError):
                    pass
            node = node[int(token)]
        else:
            break
    return best


def yaml_nodes(text: str, loader: Any = None) -> Any:
    """The representation tree of YAML `text` (PyYAML's `compose` with `loader`, by default the C
    loader when it is available): every node knows its start line and column, and nothing is
    constructed, so this is the cheap way to locate many pointers in a large spec (a ruamel round
    trip of GitHub's spec as YAML costs tens of seconds). Raises `yaml.YAMLError` on text that does
    not parse."""
    import yaml

    return yaml.compose(text, Loader=loader or getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def locate_yaml(root: Any, tokens: list[str]) -> tuple[int, int]:
    """Line/col (1-based) of the node at `tokens` in a `yaml_nodes` tree: the key of a mapping entry,
    the item of a sequence (as `locate_ruamel` reports them); the deepest node found otherwise."""
    import yaml

    node = root
    best = (1, 1)
    for token in tokens:
        if isinstance(node, yaml.MappingNode):
            match = None
            for key, value in node.value:  # the last duplicate wins, as in the loaded data
                if isinstance(key, yaml.ScalarNode) and key.value == token:
                    match = (key, value)
            if match is None:
                break
            best = (match[0].start_mark.line + 1, match[0].start_mark.column + 1)
            node = match[1]
        elif isinstance(node, yaml.SequenceNode) and token.isdigit() and int(token) < len(node.value):
            node = node.value[int(token)]
            best = (node.start_mark.line + 1, node.start_mark.column + 1)
        else:
            break
    return best


_K = TypeVar("_K")
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def locate_json_many(text: str, pointers: list[str]) -> dict[str, tuple[int, int]]:
    """Line/col (1-based) of many JSON pointers in one pass over `text`.

    Descends only into members on the way to a wanted pointer and skips every other value with the
    C decoder. A pointer that does not exist gets the position of its longest existing prefix.
    """
    offsets, _ = _scan_json(text, pointers, ())
    wanted_offsets: dict[str, int] = {}
    for pointer in pointers:
        tokens = tuple(parse_pointer(pointer))
        while tokens not in offsets:
            tokens = tokens[:-1]
        wanted_offsets[pointer] = offsets[tokens]
    return _line_cols(text, wanted_offsets)


def json_members(text: str, objects: list[str]) -> dict[str, list[tuple[str, tuple[int, int]]]]:
    """For each JSON pointer of `objects` that names an object of `text`: its members' keys as written,
    each with the line/col (1-based) of the key, in document order, repeated keys included (which
    the parsed data has lost). One pass, as `locate_json_many`."""
    _, members = _scan_json(text, objects, objects)
    offsets = {
        (pointer, i): offset for pointer, found in members.items() for i, (_, offset) in enumerate(found)
    }
    positions = _line_cols(text, offsets)
    return {
        pointer: [(key, positions[(pointer, i)]) for i, (key, _) in enumerate(found)]
        for pointer, found in members.items()
    }


def _scan_json(
    text: str, pointers: list[str], objects: Sequence[str]
) -> tuple[dict[tuple[str, ...], int], dict[str, list[tuple[str, int]]]]:
    """(offset of each existing prefix of `pointers`, the members (key, offset) of each object of
    `objects`, which must be among `pointers`)."""
    trie: dict[str, Any] = {}
    for pointer in pointers:
        node = trie
        for token in parse_pointer(pointer):
            node = node.setdefault(token, {})
    listed = {tuple(parse_pointer(p)): p for p in objects}
    members: dict[str, list[tuple[str, int]]] = {}
    offsets: dict[tuple[str, ...], int] = {(): _WS.match(text, 0).end()}  # type: ignore[union-attr]

    def walk(pos: int, node: dict[str, Any], path: tuple[str, ...]) -> None:
        if pos >= len(text) or (not node and path not in listed):
            return
        ch = text[pos]
        if ch == "{":
            own = None
            if (
                path in listed
            ):  # a later occurrence of the same member replaces an earlier one, as in the data
                own = members[listed[path]] = []
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
            while pos < len(text) and text[pos] != "}":
                key_start = pos
                key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
                if own is not None:
                    own.append((key, key_start))
                pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if key in node:
                    offsets[(*path, key)] = key_start
                    walk(pos, node[key], (*path, key))
                _, pos = _DECODER.raw_decode(text, pos)
                pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                if pos < len(text) and text[pos] == ",":
                    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
        elif ch == "[":
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
            index = 0
            while pos < len(text) and text[pos] != "]":
                token = str(index)
                if token in node:
                    offsets[(*path, token)] = pos
                    walk(pos, node[token], (*path, token))
                _, pos = _DECODER.raw_decode(text, pos)
                pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                if pos < len(text) and text[pos] == ",":
                    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                index += 1

    # text and data disagree (cannot happen for text we parsed): best effort
    with contextlib.suppress(ValueError, IndexError):
        walk(offsets[()], trie, ())
    return offsets, members


def _line_cols(text: str, offsets: Mapping[_K, int]) -> dict[_K, tuple[int, int]]:
    """Each offset of `offsets` as a 1-based (line, col), in one forward sweep over `text`."""
    result: dict[_K, tuple[int, int]] = {}
    line, line_start, cursor = 1, 0, 0
    for name, offset in sorted(offsets.items(), key=lambda kv: kv[1]):
        line += text.count("\n", cursor, offset)
        nl = text.rfind("\n", cursor, offset)
        if nl >= 0:
            line_start = nl + 1
        cursor = offset
        result[name] = (line, offset - line_start + 1)
    return result


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col
