"""Descriptions that route: what a tool is not for, and which tool is, from the operations themselves.

Input: every `Tool` one build lowered. Output: the same tools, the description of each read and
record tool ending with at most `MAX_NOTES` notes of the form ``Not for <what>: use <tool>.``, one
per near neighbour found among the operations of the build:

- list and get: ``GET /x`` is not for one by ``id`` when ``GET /x/{id}`` exists (the get says
  "one ... by id" in its own first line; a "not for listing" note on it made every get tool match
  requests to list in a BM25 tool search, so it is not written);
- the undo of an action: a create or set (``POST``/``PUT``) and the ``DELETE`` of the same path or
  of the one item below it (``PUT /user/starred/{owner}/{repo}`` and its ``DELETE``; ``POST /x`` and
  ``DELETE /x/{id}``), each names the other;
- create and change: ``POST /x`` and ``PATCH``/``PUT /x/{id}`` (the create is not for changing an
  existing one, the change not for a new one).

The description a model reads so says, in this order, what the tool does (the intent's or the
spec's words, `text.summary_of`), its preconditions (effect, approval, paging: `text.describe_tool`)
and then the neighbours it is not. Why: a model choosing among sibling tools picks the right one
when each says what it is not for (the lint rule ``description-no-when-not-to-use``); the notes come
last so that the first sentence stays the tool's own. A tool whose intent gives its own description
gets none (the author's words stand), and a note is left out when the description already names
that tool or when it would make the description longer
than `DESCRIPTION_LIMIT`. Composite tools and previews get none (a preview's description names its
record tool already). Deterministic: neighbours are found from methods and paths only, in a fixed
order. Pure: no IO.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from dataclasses import replace

from ...naming import has_word
from ..ir import Tool, Toolset
from .toolsets import with_resources

#: at most this many routing notes per tool
MAX_NOTES = 2
#: the longest description a note may produce (lint's `description-too-long` limit)
DESCRIPTION_LIMIT = 1024

_PARAM = re.compile(r"^\{[^{}]+\}$")


def _split(path: str) -> list[str]:
    return [s for s in path.split("/") if s]


def _parent(path: str) -> tuple[str, str] | None:
    """(the path without its last segment, the last segment's parameter name) when `path` ends in a
    single path parameter (``/x/{id}`` -> (``/x``, ``id``)), else None."""
    parts = _split(path)
    if len(parts) < 2 or not _PARAM.match(parts[-1]):
        return None
    return "/" + "/".join(parts[:-1]), parts[-1][1:-1]


def _key(path: str) -> str:
    """A path without its trailing slash and with parameter names dropped, so that ``/x/{id}/`` and
    ``/x/{x_id}`` meet."""
    return "/" + "/".join("{}" if _PARAM.match(s) else s for s in _split(path))


def add_routing_notes(tools: list[Tool], authored: AbstractSet[str] = frozenset()) -> list[Tool]:
    """`tools` with routing notes appended to the descriptions of read and record tools (the module
    docstring), except those named in `authored` (their intent gives its own description: the
    author's routing stands; they are still named as neighbours); tools keep their order, and a
    tool that gets no note is the same object."""
    acting: dict[tuple[str, str], str] = {}
    item: dict[str, str] = {}  # path key -> the name of its last path parameter
    for tool in tools:
        row = tool.policy
        if row.composite is not None or row.mode not in ("read", "record") or not row.path:
            continue
        acting.setdefault((row.method.upper(), _key(row.path)), tool.name)
        below = _parent(row.path)
        if below is not None:
            item.setdefault(_key(row.path), below[1])
    out: list[Tool] = []
    for tool in tools:
        row = tool.policy
        if (
            row.composite is not None
            or row.mode not in ("read", "record")
            or not row.path
            or tool.name in authored
        ):
            out.append(tool)
            continue
        notes = _notes(row.method.upper(), row.path, acting, item, tool.name)
        text = tool.description
        added = 0
        for what, other in notes:
            if added == MAX_NOTES:
                break
            if has_word(text, other):
                continue
            note = f" Not for {what}: use {other}."
            if len(text) + len(note) > DESCRIPTION_LIMIT:
                break
            text += note
            added += 1
        out.append(tool if text == tool.description else replace(tool, description=text))
    return out


def _notes(
    method: str, path: str, acting: dict[tuple[str, str], str], item: dict[str, str], me: str
) -> list[tuple[str, str]]:
    """(what the tool is not for, the tool that is) for each neighbour of ``method path``, nearest
    first."""
    key = _key(path)
    parent = _parent(path)
    parent_key = _key(parent[0]) if parent else None
    child_key = key.rstrip("/") + "/{}"
    found: list[tuple[str, str]] = []

    def add(what: str, other_method: str, other_key: str | None) -> None:
        other = acting.get((other_method, other_key)) if other_key is not None else None
        if other is not None and other != me and all(o != other for _, o in found):
            found.append((what, other))

    if method == "GET":
        add(f"one by {item.get(child_key, 'id')}", "GET", child_key)
    elif method in ("POST", "PUT"):
        add("undoing it", "DELETE", key)
        if method == "POST":
            add("undoing it", "DELETE", child_key)
            add("changing an existing one", "PATCH", child_key)
            add("changing an existing one", "PUT", child_key)
        elif parent is not None:
            add("a new one", "POST", parent_key)
    elif method == "PATCH":
        if parent is not None:
            add("a new one", "POST", parent_key)
    elif method == "DELETE":
        add("undoing it", "PUT", key)
        add("undoing it", "POST", key)
        if parent is not None:
            add("undoing it", "POST", parent_key)
    return found


def describe_toolsets(toolsets: tuple[Toolset, ...], tools: list[Tool]) -> tuple[Toolset, ...]:
    """`toolsets` with each toolset made from a tag or a path (not a declared one: its author's words
    stand) saying which resources its tools act on (`with_resources`, over the paths of its read
    and record tools), so a model knows when to open it before it searches."""
    paths: dict[str, list[str]] = {}
    for tool in tools:
        row = tool.policy
        if row.toolset is None or row.composite is not None or row.mode == "preview" or not row.path:
            continue
        paths.setdefault(row.toolset, []).append(row.path)
    return tuple(
        toolset
        if toolset.origin == "declared" or toolset.name not in paths
        else replace(toolset, description=with_resources(toolset.description, paths[toolset.name]))
        for toolset in toolsets
    )
