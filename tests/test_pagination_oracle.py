"""The pagination benchmark's oracle (`benchmarks/pagination_drafts.py`, `pages`) and how it reads a
draft: written apart from `toolgen.compile.pagination`, so that it can count what init misses.

Its second correction: a field that pages a list nested in another member (Spotify's album
``tracks.next`` beside ``available_markets``) says nothing about a next page of the operation; a
page object's own ``next`` (``playlists.next`` beside ``playlists.items``) and a paging container's
(``links.more``) still do.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.support.benchmarks import benchmark_module

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
bench = benchmark_module("pagination_drafts")


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


LIST = {"type": "array", "items": _obj(id={"type": "string"})}
TEXT = {"type": "string"}


def _get(answer: dict[str, Any], *params: str) -> dict[str, Any]:
    return {
        "parameters": [{"name": p, "in": "query", "schema": TEXT} for p in params],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": answer}}}},
    }


def test_a_single_object_with_a_paged_sub_list_does_not_page() -> None:
    album = _obj(
        available_markets={"type": "array", "items": TEXT},
        name=TEXT,
        tracks=_obj(items=LIST, next=TEXT, total={"type": "integer"}),
    )
    assert bench.pages(_get(album, "market"), [], {}) is None
    # the same sub-list paged by a parameter of the operation still counts, by its parameter
    found = bench.pages(_get(album, "offset"), [], {})
    assert found is not None and found["params"] == ["offset"] and found["answer"] == []


def test_a_page_object_and_a_paging_container_still_page() -> None:
    playlists = _obj(message=TEXT, playlists=_obj(items=LIST, next=TEXT))
    found = bench.pages(_get(playlists), [], {})
    assert found is not None and found["list"] == "playlists.items" and found["answer"] == ["playlists.next"]
    npr = _obj(items=LIST, links=_obj(more={"type": "array", "items": _obj(href=TEXT)}))
    found = bench.pages(_get(npr), [], {})
    assert found is not None and found["answer"] == ["links.more"]


def test_the_marked_paginations_of_a_draft_are_read_per_intent() -> None:
    text = """tools:
  # decide [pagination-undecided]: ...
  list_a:
    operation: A
    effect: read
    pagination: {style: link, items: data}  # decide
  list_b:
    operation: B
    pagination: {style: cursor, items: data, cursor: c, next: n}  # detected; check it
  get_c:
    operation: C
    effect: read
toolsets:
  a: {description: x}
"""
    assert bench._marked_paginations(text) == {"list_a"}
