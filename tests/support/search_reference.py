"""The oracle of tool search's equivalence tests: the lexical ranking as it was first written (every
matched document scored in full, SQLite's ``bm25()`` asked one table at a time, coverage and matching
asked one term and one table at a time), and the dense option's fusion over the whole of it. The index's
own path prunes the documents that cannot reach the first places and scores from FTS5's postings; the
tests hold it to these, to the float."""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from toolgen.runtime.identity import missing_of, scope_set
from toolgen.runtime.serving.tool_index import Hit, ToolIndex, _action_factor
from toolgen.search.text_index import (
    COVERAGE_WEIGHT,
    HEAD_NOUN_WEIGHT,
    HEAD_WEIGHT,
    ITEM_BOOST,
    STRUCTURE,
    TABLES,
    analyse_query,
    content_terms,
    names_one,
)


def reference(index: ToolIndex, query: str, scopes: Iterable[str] | None = None, limit: int = 5) -> list[Hit]:
    """The lexical ranking scored in full: every document that matches a term gets its exact score;
    the `limit` best as hits."""
    if limit <= 0:
        return []
    return [
        Hit(tool, index._docs[rowid - 1].toolset, -negative, index._docs[rowid - 1].operation)
        for negative, tool, rowid in heapq.nsmallest(limit, reference_ranked(index, query, scopes))
    ]


def reference_fused(
    index: ToolIndex, query: str, scopes: Iterable[str] | None = None, limit: int = 5
) -> list[Hit]:
    """The dense option's ranking as it was first written: the whole lexical ranking
    (`reference_ranked`) fused with the dense one as `DenseIndex.fuse` did, sorting every lexical hit
    (numpy: the dense option's tests only)."""
    import numpy as np

    from toolgen.search.dense_index import DENSE_DEPTH, DENSE_WEIGHT, RRF_K

    assert index._dense is not None
    if limit <= 0:
        return []
    if not analyse_query(query)[0]:
        return []
    held = None if scopes is None else scope_set(scopes)
    ranked = reference_ranked(index, query, scopes)
    similarity = index._dense.similarity(query)
    if similarity is not None and len(similarity):  # the fusion as first written (DenseIndex.fuse)
        scores: dict[int, float] = {}
        tools: dict[int, str] = {}
        for rank, (_, tool, rowid) in enumerate(sorted(ranked), 1):
            scores[rowid] = 1.0 / (RRF_K + rank)
            tools[rowid] = tool
        depth, rank = max(DENSE_DEPTH, limit), 0
        for position in np.argsort(-similarity, kind="stable"):
            rowid = int(position) + 1
            visible = tools.get(rowid) or index._visible_tool(rowid, held)
            if visible is None:
                continue
            rank += 1
            tools[rowid] = visible
            scores[rowid] = scores.get(rowid, 0.0) + DENSE_WEIGHT / (RRF_K + rank)
            if rank >= depth:
                break
        ranked = [(-round(score, 9), tools[rowid], rowid) for rowid, score in scores.items()]
    return [
        Hit(tool, index._docs[rowid - 1].toolset, -negative, index._docs[rowid - 1].operation)
        for negative, tool, rowid in heapq.nsmallest(limit, ranked)
    ]


def reference_ranked(
    index: ToolIndex, query: str, scopes: Iterable[str] | None = None
) -> list[tuple[float, str, int]]:
    """Every lexical hit's entry (-score rounded, tool, rowid), each scored in full through SQLite."""
    terms, own, head, actions = analyse_query(query)
    if not terms:
        return []
    db = index._db
    held = None if scopes is None else scope_set(scopes)
    terms += [f"act{a}" for a in sorted(actions)]
    match = " OR ".join(dict.fromkeys(f'"{t}"' for t in terms))
    totals: dict[int, float] = {}
    for table, (columns, table_weight) in TABLES.items():
        weights = ", ".join(str(w) for _, w in columns)
        for rowid, raw in db.execute(
            f"SELECT rowid, bm25({table}, {weights}) FROM {table} WHERE {table} MATCH ?", (match,)
        ):
            totals[rowid] = totals.get(rowid, 0.0) - raw * table_weight
    last = [t[1:] for t in head if t.startswith("^")]
    head = [t for t in head if not t.startswith("^")]
    for words, weight in ((last, HEAD_NOUN_WEIGHT), (head, HEAD_WEIGHT)):
        if words:
            for rowid, raw in db.execute(
                "SELECT rowid, bm25(f_object) FROM f_object WHERE f_object MATCH ?",
                (" OR ".join(dict.fromkeys(f'"{t}"' for t in words)),),
            ):
                totals[rowid] = totals.get(rowid, 0.0) - float(raw) * weight
    distinct = list(dict.fromkeys(own))
    found: dict[int, int] = {}
    for term in distinct:
        rows: set[int] = set()
        for table in STRUCTURE:
            rows.update(
                r for (r,) in db.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (f'"{term}"',))
            )
        for rowid in rows:
            found[rowid] = found.get(rowid, 0) + 1
    coverage = {rowid: n / len(distinct) for rowid, n in found.items()}
    one = "create" not in actions and names_one(query)
    content = content_terms([*(t for t in terms if not t.startswith("act")), *sorted(actions)])
    matched: set[int] = set()
    if content:
        any_term = " OR ".join(dict.fromkeys(f'"{t}"' for t in content))
        for table in TABLES:
            if table != "f_verbs":
                matched.update(
                    r for (r,) in db.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (any_term,))
                )
    ranked: list[tuple[float, str, int]] = []
    for rowid in matched.intersection(totals):
        doc = index._docs[rowid - 1]
        tool = next((t for t, need in doc.tools if held is None or not missing_of(need, held)), None)
        if tool is None:
            continue
        score = totals[rowid] * (1 - COVERAGE_WEIGHT + COVERAGE_WEIGHT * coverage.get(rowid, 0.0))
        score *= _action_factor(actions, doc.actions)
        if one and rowid in index._items:
            score *= 1 + ITEM_BOOST
        ranked.append((-round(score, 6), tool, rowid))
    return ranked
