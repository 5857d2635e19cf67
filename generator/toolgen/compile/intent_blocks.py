"""An intent map's YAML tree assembled from its tools' blocks, each parsed once and remembered.

Input: the text of an intent map and a `toolgen.remember.Remember`. Output: the tree ruamel.yaml's
round trip gives for the whole text (`load_blocks`), as far as toolgen reads it: the same keys and
plain values (str, int, float, bool, None) in the same order, and every key's and item's 0-based line
and column (``node.lc.key(k)``, ``node.lc.item(i)``, what `toolgen.compile.sourcemap.locate_ruamel`
reads); or None, and the caller parses the text whole.

Why: ruamel.yaml's round trip is pure Python, about a second for `toolgen init`'s draft of GitHub
(1,807 tools, 11,500 lines); after one tool's edit, the other 1,806 blocks are the same text.

The rule. The text splits where toolgen's own drafts split it: a line ``tools:`` at column 0; its
block runs to the next line that starts at column 0 with anything but ``#``; in it, a tool's block
starts at each line that holds a plain key indented by two spaces (``  name:``). Each block is parsed
alone, with its line numbers (blocks keep their columns; their lines are moved by where they start),
and the rest of the text (the skeleton) with the tools' lines blank. The result is the whole text's
tree when

- the text holds no tab, no carriage return or other line break than ``\\n``, no directive (``%``)
  and no byte-order mark (a block parsed alone would read these otherwise or not at all);
- no block scalar keeps its trailing line breaks (``|+``, ``>+``, ``|2+``...): the blank lines that
  follow a block belong to such a scalar in the whole text, and to nothing when the block is alone;
- the skeleton parses to a mapping whose ``tools`` is null, at that line;
- every block parses, alone, to a mapping of one key, its own name, at column 2 of its first line; no
  name comes twice (the whole text's parse refuses a duplicate key); the lines before the first block
  are blank or comments;
- every mapping and sequence in a block is ruamel's plain one (no ``!!omap``, ``!!set``), every key a
  string, every scalar a str, int, float, bool or null, and no container appears twice (no alias to
  a mapping or a sequence: `toolgen.compile.load.checked_tree` bounds those on the whole text's tree).

Anything that could make a block's reading depend on its neighbours fails one of these: a quoted
scalar or flow collection running on past the block's end leaves the block unparseable; an alias to
an anchor of another block, or of the skeleton, is undefined in the block; an anchor used by the
skeleton is undefined there; a block scalar's lines are indented deeper than two spaces. Each
block's reading is remembered under the SHA-256 of its text, so only an edited block is parsed again;
so is the skeleton's when it keeps to the last rule (else it is parsed each time).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from functools import partial
from typing import Any

from ..remember import Remember
from ..yaml_text import NOT_SCALAR, plain_scalar

#: a tool's block starts at a plain key indented by two spaces
_BLOCK_START = re.compile(r"  ([A-Za-z0-9_][A-Za-z0-9_.-]*):(?: |$)")
#: what a block must not hold (module docstring): tabs, other line breaks, a byte-order mark
_REFUSED = re.compile("[\t\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\ufeff]")
#: a block scalar header with the keep chomping indicator (module docstring)
_KEEP = re.compile(r"[|>](?:\+[1-9]?|[1-9]\+)[ ]*(?:#.*)?$", re.MULTILINE)
_TOOLS = "tools:"
#: deeper than any intent map: a block nested deeper is parsed whole (which refuses it, located)
_MAX_DEPTH = 64

Parse = Callable[[str], Any]


class _Positions:
    """The ``lc`` of a mapping or a sequence: each key's or item's 0-based line and column."""

    __slots__ = ("_at",)

    def __init__(self, at: dict[str, tuple[int, int]] | list[tuple[int, int]]) -> None:
        self._at = at

    def key(self, key: str) -> tuple[int, int]:
        if not isinstance(self._at, dict):
            raise KeyError(key)
        return self._at[key]

    def item(self, index: int) -> tuple[int, int]:
        if not isinstance(self._at, list):
            raise KeyError(index)
        return self._at[index]


class LocatedMap(dict[str, Any]):
    """A mapping of the tree with its keys' positions (`lc`), as ruamel's `CommentedMap` has them."""

    lc: _Positions


class LocatedSeq(list[Any]):
    """A sequence of the tree with its items' positions (`lc`), as ruamel's `CommentedSeq` has them."""

    lc: _Positions


def load_blocks(text: str, parse: Parse, remember: Remember) -> Any | None:
    """The tree of `text` (module docstring) from its skeleton and its tools' blocks, each block's
    reading remembered by its text through `remember`; None when `text` is not split by the
    module's rule (the caller parses it whole). `parse`: ruamel.yaml's round-trip load of a text
    (it may raise: the caller's whole parse reports the error)."""
    if _REFUSED.search(text) or text.startswith("%") or "\n%" in text or _KEEP.search(text):
        return None
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line == _TOOLS or line.startswith(_TOOLS + " ")]
    if len(starts) != 1 or lines[starts[0]].rstrip() != _TOOLS:
        return None
    first = starts[0] + 1
    end = next((i for i in range(first, len(lines)) if lines[i][:1] not in ("", " ", "#")), len(lines))
    blocks = _blocks(lines, first, end)
    if blocks is None:
        return None
    root = _skeleton("\n".join(lines[:first] + [""] * (end - first) + lines[end:]), parse, remember)
    if not isinstance(root, dict) or "tools" not in root or root["tools"] is not None:
        return None
    try:
        if tuple(getattr(root, "lc").key("tools")) != (starts[0], 0):  # noqa: B009 - ruamel's own attribute
            return None
    except (AttributeError, KeyError, TypeError):
        return None
    tools = LocatedMap()
    at: dict[str, tuple[int, int]] = {}
    for name, start, stop in blocks:
        block = "\n".join(lines[start:stop]) + "\n"
        key = f"intent-block 1 {name} {hashlib.sha256(block.encode('utf-8', 'surrogatepass')).hexdigest()}"
        reading = remember(key, partial(_reading, block, name, parse))
        if not reading:
            return None
        at[name] = (start, 2)
        tools[name] = _located(reading[0], start)
    tools.lc = _Positions(at)
    root["tools"] = tools
    return root


def _blocks(lines: list[str], first: int, end: int) -> list[tuple[str, int, int]] | None:
    """Each tool's name and lines ``[start, stop)`` between `first` and `end`; None when a line
    before the first block is not blank or a comment, a name comes twice, or there is no block."""
    heads = [(m.group(1), i) for i in range(first, end) if (m := _BLOCK_START.match(lines[i]))]
    if not heads or len({name for name, _ in heads}) != len(heads):
        return None
    if any(lines[i].strip() and not lines[i].lstrip().startswith("#") for i in range(first, heads[0][1])):
        return None
    stops = [i for _, i in heads[1:]] + [end]
    return [(name, start, stop) for (name, start), stop in zip(heads, stops, strict=True)]


def _skeleton(text: str, parse: Parse, remember: Remember) -> Any | None:
    """The skeleton's tree: from its reading remembered by its text when it is plain (`_record`),
    else parsed; None when it does not parse. Its 11,500 blank lines (a draft's tools) cost ruamel's
    scanner more than the one edited block does."""
    key = f"intent-skeleton 1 {hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"
    reading = remember(key, partial(_skeleton_reading, text, parse))
    if reading:
        return _located(reading[0], 0)
    try:
        return parse(text)
    except Exception:  # noqa: BLE001 - the whole text's parse says what is wrong
        return None


def _skeleton_reading(text: str, parse: Parse) -> tuple[Any, ...]:
    """What `_skeleton` keeps of the skeleton: a 1-tuple of its tree as `_record` gives it; ``()``
    when it does not parse to ruamel's plain mapping or holds what `_record` refuses."""
    try:
        root = parse(text)
    except Exception:  # noqa: BLE001 - the whole text's parse says what is wrong
        return ()
    from ruamel.yaml.comments import CommentedMap

    if type(root) is not CommentedMap:
        return ()
    try:
        return (_record(root, set(), 0),)
    except (_NotPlain, KeyError, TypeError, AttributeError):
        return ()


def _reading(block: str, name: str, parse: Parse) -> tuple[Any, ...]:
    """What `load_blocks` keeps of one block (its text alone): a 1-tuple of its value's tree as
    nested ``("m", [(key, line, col, child), ...])`` and ``("s", [(line, col, child), ...])`` with
    plain scalars, lines counted from the block's first; ``()`` when the block breaks the module's rule."""
    try:
        root = parse(block)
    except Exception:  # noqa: BLE001 - the whole text's parse says what is wrong
        return ()
    from ruamel.yaml.comments import CommentedMap

    try:
        if type(root) is not CommentedMap or list(root) != [name] or tuple(root.lc.key(name)) != (0, 2):
            return ()
        return (_record(root[name], set(), 0),)
    except (_NotPlain, KeyError, TypeError, AttributeError):
        return ()


class _NotPlain(Exception):
    """A block holds what `load_blocks` does not assemble (module docstring)."""


def _record(node: Any, seen: set[int], depth: int) -> Any:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq, merge_attrib

    value = plain_scalar(node)  # each scalar as `toolgen.yaml_text.plain_yaml` reads it
    if value is not NOT_SCALAR:
        return value
    if depth > _MAX_DEPTH or id(node) in seen:
        raise _NotPlain
    seen.add(id(node))
    if type(node) is CommentedMap:
        if getattr(node, merge_attrib, None):  # `<<` merge keys: parsed whole
            raise _NotPlain
        out = []
        for key, value in node.items():
            if not isinstance(key, str):
                raise _NotPlain
            line, col = node.lc.key(key)
            out.append((str(key), line, col, _record(value, seen, depth + 1)))
        return ("m", out)
    if type(node) is CommentedSeq:
        return ("s", [(*node.lc.item(i), _record(value, seen, depth + 1)) for i, value in enumerate(node)])
    raise _NotPlain


def _located(reading: Any, start: int) -> Any:
    """A block's `_reading` as the tree's nodes, its lines moved by `start` (the block's first line)."""
    if type(reading) is not tuple:
        return reading
    kind, entries = reading
    if kind == "m":
        node: LocatedMap | LocatedSeq = LocatedMap()
        at: dict[str, tuple[int, int]] = {}
        for key, line, col, child in entries:
            node[key] = _located(child, start)
            at[key] = (line + start, col)
        node.lc = _Positions(at)
        return node
    seq = LocatedSeq(_located(child, start) for _, _, child in entries)
    seq.lc = _Positions([(line + start, col) for line, col, _ in entries])
    return seq
