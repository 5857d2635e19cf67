"""The source map of a loaded document: JSON pointer -> 1-based line and column in its text.

Input: the text of a JSON document (scanned along the wanted pointers only, with the C decoder
skipping everything else) or a ruamel.yaml round-trip tree (which records the position of every
key). Output: ``(line, col)`` pairs; a pointer that does not exist gets the position of its longest
existing prefix. `SpecDocument.locate` (`toolgen.compile.load`), the intent map and the project file
use it to put every diagnostic at ``file:line:col``.
"""

from __future__ import annotations

import json
import re
from typing import Any

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


def yaml_nodes(text: str) -> Any:
    """The representation tree of YAML `text` (PyYAML's `compose`, with the C loader when it is
    available): every node knows its start line and column, and nothing is constructed, so this is
    the cheap way to locate many pointers in a large spec (a ruamel round trip of GitHub's spec as
    YAML costs tens of seconds). Raises `yaml.YAMLError` on text that does not parse."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.compose(text, Loader=loader)


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


_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def locate_json_many(text: str, pointers: list[str]) -> dict[str, tuple[int, int]]:
    """Line/col (1-based) of many JSON pointers in one pass over `text`.

    Descends only into members on the way to a wanted pointer and skips every other value with the
    C decoder. A pointer that does not exist gets the position of its longest existing prefix.
    """
    trie: dict[str, Any] = {}
    for pointer in pointers:
        node = trie
        for token in parse_pointer(pointer):
            node = node.setdefault(token, {})
    offsets: dict[tuple[str, ...], int] = {(): _WS.match(text, 0).end()}  # type: ignore[union-attr]

    def walk(pos: int, node: dict[str, Any], path: tuple[str, ...]) -> None:
        if pos >= len(text) or not node:
            return
        ch = text[pos]
        if ch == "{":
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
            while pos < len(text) and text[pos] != "}":
                key_start = pos
                key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
                pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if key in node:
                    offsets[path + (key,)] = key_start
                    walk(pos, node[key], path + (key,))
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
                    offsets[path + (token,)] = pos
                    walk(pos, node[token], path + (token,))
                _, pos = _DECODER.raw_decode(text, pos)
                pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
                if pos < len(text) and text[pos] == ",":
                    pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                index += 1

    try:
        walk(offsets[()], trie, ())
    except (ValueError, IndexError):  # text and data disagree (cannot happen for text we parsed): best effort
        pass
    wanted_offsets: dict[str, int] = {}
    for pointer in pointers:
        tokens = tuple(parse_pointer(pointer))
        while tokens not in offsets:
            tokens = tokens[:-1]
        wanted_offsets[pointer] = offsets[tokens]
    # one forward sweep turns offsets into line/col
    result: dict[str, tuple[int, int]] = {}
    line, line_start, cursor = 1, 0, 0
    for pointer, offset in sorted(wanted_offsets.items(), key=lambda kv: kv[1]):
        line += text.count("\n", cursor, offset)
        nl = text.rfind("\n", cursor, offset)
        if nl >= 0:
            line_start = nl + 1
        cursor = offset
        result[pointer] = (line, offset - line_start + 1)
    return result


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col
