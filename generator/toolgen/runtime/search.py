"""Tool search: rank the tools of a generated package for a request phrased in plain words.

Input: a generated package (the policy rows of ``policy.json`` and the entries of ``mcp.json``, or a
loaded `Registry`) and a query such as ``"get rid of the bug label on issue 12"``. Output: a ranked
list of `Hit` (tool, toolset, score, operation), never a tool whose permission the caller's scopes
lack.

One ranking everywhere: `toolgen search`, the Python API (`ToolIndex.search`, `Registry`-based
`index_for`) and the MCP meta-tool (`toolgen.runtime.search_tool.ToolSearch`, its contract in
`toolgen.search_tool`) all call `ToolIndex.search`. The index documents are built at `toolgen build` time (``search.json`` beside ``policy.json``, by
`toolgen.search_text.search_documents`); `ToolIndex.from_dir` loads them and falls back to building
them from ``policy.json`` + ``mcp.json`` with the same function when the file is absent or of another
format, so both paths give the same ranking.

The engine is SQLite FTS5 (stdlib ``sqlite3``, in memory) with its ``bm25`` ranking and the
``porter unicode61`` tokenizer (stemming: ``labels`` finds ``label``), over one document per
operation with weighted columns:

- ``name``: the tool name and operationId, split on ``_``, ``-``, ``/`` and camelCase;
- ``title``: the catalog title (or the operation summary);
- ``nouns``: the path's literal segments (``/repos/{owner}/{repo}/issues`` → repos, issues);
- ``verbs``: the operation's action class (list, get, search, create, update, delete or the path's
  action such as ``cancel``) with its everyday synonyms, its effect and mode;
- ``keywords``: an intent-map ``keywords`` list, when a policy row carries one;
- ``args``: the toolset's name, argument names and their descriptions;
- ``body``: the description, without the runtime's boilerplate.

The query is normalised the same way as the documents (API abbreviations such as ``PR``, ``repo``,
``sub`` are expanded on both sides), the phrases users say for an action ("get rid of", "show all",
"look up") become that action class, and stop words are dropped. The terms are OR-ed into one FTS5
``MATCH``; bm25 scores the documents, and a document whose action class agrees with the request's
gets a multiplicative boost (a related class a smaller one). Writes are one operation with two tools
(``preview_*`` + ``record_*``): the hit names the tool that acts (``record_*``), or the preview when
only the preview is allowed. Results are deterministic: score, then tool name.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..search_text import (
    COVERAGE_WEIGHT,
    EXACT_BOOST,
    FAMILY_PENALTY,
    HEAD_NOUN_WEIGHT,
    HEAD_WEIGHT,
    READS,
    RELATED,
    RELATED_BOOST,
    SEARCH_FORMAT,
    STOP_WORDS,
    STRUCTURE,
    TABLES,
    analyse_query,
    content_terms,
    query_terms,
    search_documents,
    split_words,
)
from ..search_vectors import FUSION_WEIGHT, SEMANTIC_FORMAT, Embedder, SemanticIndex
from .identity import permits, scope_set

__all__ = ["STOP_WORDS", "Hit", "ToolIndex", "query_terms", "split_words"]

#: the file `toolgen build` writes the index documents into, beside ``policy.json``
SEARCH_FILE = "search.json"

@dataclass(frozen=True)
class Hit:
    """One ranked result: the tool to call, its toolset (None when the package has none), the score
    (higher is better; comparable within one query) and the operation (operationId, or
    ``METHOD /path`` when the spec gives none)."""

    tool: str
    toolset: str | None
    score: float
    operation: str

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "toolset": self.toolset, "score": self.score, "operation": self.operation}


@dataclass
class _Doc:
    intent: str
    tools: list[tuple[str, frozenset[str]]]  # (tool, its permission scopes), the acting tool first
    toolset: str | None
    operation: str
    actions: frozenset[str]


class ToolIndex:
    """An in-memory FTS5 index of a package's tools. Build it once, search it many times."""

    def __init__(self, policy: Mapping[str, Any], catalog: Sequence[Mapping[str, Any]], *,
                 documents: Sequence[Mapping[str, Any]] | None = None, semantic: Any = None,
                 embedder: Embedder | None = None) -> None:
        """Index `policy` (the ``policy.json`` object) and `catalog` (the ``mcp.json`` entries); with
        `documents` (the ``documents`` of a ``search.json`` written by `toolgen build`), index those
        instead of analysing the package again. Either way the documents are those of
        `toolgen.search_text.search_documents`.

        `semantic`: the ``semantic`` value of that ``search.json`` (`toolgen.search_vectors`), written
        when the project opts in (toolgen.yaml ``search: {semantic: lsa}``). Without a usable one
        (absent, as by default; malformed; made by an embedder that is neither stored nor given as
        `embedder`; or numpy not installed) the ranking is the lexical one alone, and numpy is not
        imported when there is none."""
        docs = documents if documents is not None else search_documents(policy, catalog)
        self._semantic = SemanticIndex.load(semantic, len(docs), embedder)
        self._db = sqlite3.connect(":memory:")
        for table, (columns, _) in TABLES.items():
            self._db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5("
                             f"{', '.join(c for c, _ in columns)}, tokenize='porter unicode61')")
        self._docs: list[_Doc] = []
        for rowid, document in enumerate(docs, 1):
            fields = document.get("fields") or {}
            self._docs.append(_Doc(
                intent=str(document.get("intent")),
                tools=[(str(tool), frozenset(str(s) for s in scopes)) for tool, scopes in document.get("tools") or []],
                toolset=str(document["toolset"]) if document.get("toolset") else None,
                operation=str(document.get("operation")),
                actions=frozenset(str(a) for a in document.get("actions") or []),
            ))
            for table, (columns, _) in TABLES.items():
                self._db.execute(
                    f"INSERT INTO {table}(rowid, {', '.join(c for c, _ in columns)}) "
                    f"VALUES (?, {', '.join('?' for _ in columns)})",
                    (rowid, *(str(fields.get(c) or "") for c, _ in columns)))

    # -- constructors ----------------------------------------------------------------------------

    @classmethod
    def from_dir(cls, path: str | Path, *, embedder: Embedder | None = None) -> ToolIndex:
        """Index the generated package in folder `path`: the documents of its ``search.json`` when it
        holds a readable one of this format, else ``policy.json`` + ``mcp.json`` analysed here (same
        documents, same ranking). Raises OSError / ValueError when ``policy.json`` or ``mcp.json`` is
        missing or not JSON."""
        folder = Path(path)
        policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
        catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
        documents, semantic = load_search(folder / SEARCH_FILE)
        return cls(policy, catalog, documents=documents, semantic=semantic, embedder=embedder)

    @classmethod
    def from_registry(cls, registry: Any, *, embedder: Embedder | None = None) -> ToolIndex:
        """Index the tools of a loaded `toolgen.runtime.Registry`: with the documents of the
        ``search.json`` beside the package it was loaded from (`Registry.from_dir`), as `from_dir`
        does, else analysed here."""
        source = getattr(registry, "source", None)
        documents, semantic = load_search(Path(source) / SEARCH_FILE) if source is not None else (None, None)
        return cls(registry.policy, registry.catalog(), documents=documents, semantic=semantic, embedder=embedder)

    def _coverage(self, terms: list[str]) -> dict[int, float]:
        """Per document, the share of the request's distinct terms that its name, title, keywords,
        object, path nouns, arguments or description contain (FTS5 matching, so stemmed): a document
        that names every thing the request names beats one that matches a single rare word many times."""
        distinct = list(dict.fromkeys(terms))
        if not distinct:
            return {}
        found: dict[int, int] = {}
        for term in distinct:
            rows: set[int] = set()
            for table in STRUCTURE:
                rows.update(r for (r,) in self._db.execute(
                    f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (f'"{term}"',)))
            for rowid in rows:
                found[rowid] = found.get(rowid, 0) + 1
        return {rowid: n / len(distinct) for rowid, n in found.items()}

    def _matching(self, terms: list[str]) -> set[int]:
        """The documents whose text (any field but the derived ``verbs``) contains one of `terms`."""
        if not terms:
            return set()
        match = " OR ".join(dict.fromkeys(f'"{t}"' for t in terms))
        rows: set[int] = set()
        for table in TABLES:
            if table != "f_verbs":
                rows.update(r for (r,) in self._db.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?",
                                                           (match,)))
        return rows

    # -- search ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._docs)

    def search(self, query: str, *, scopes: Iterable[str] | None = None, limit: int = 5) -> list[Hit]:
        """The `limit` best tools for `query`, best first. With `scopes`, only tools whose permission
        those scopes satisfy are returned (``None``: no filtering — the runtime still checks every
        call)."""
        if limit <= 0:
            return []
        terms, own, head, actions = analyse_query(query)
        if not terms:
            return []
        held = None if scopes is None else scope_set(scopes)
        terms += [f"act{a}" for a in sorted(actions)]  # the action classes, indexed as act<class>
        match = " OR ".join(dict.fromkeys(f'"{t}"' for t in terms))
        totals: dict[int, float] = {}
        for table, (columns, table_weight) in TABLES.items():
            weights = ", ".join(str(w) for _, w in columns)
            get = totals.get
            for rowid, raw in self._db.execute(
                    f"SELECT rowid, bm25({table}, {weights}) FROM {table} WHERE {table} MATCH ?", (match,)):
                totals[rowid] = get(rowid, 0.0) - raw * table_weight
        last = [t[1:] for t in head if t.startswith("^")]  # the head noun of a compound object
        head = [t for t in head if not t.startswith("^")]
        if last:
            match_last = " OR ".join(dict.fromkeys(f'"{t}"' for t in last))
            for rowid, raw in self._db.execute(
                    "SELECT rowid, bm25(f_object) FROM f_object WHERE f_object MATCH ?", (match_last,)):
                totals[int(rowid)] = totals.get(int(rowid), 0.0) - float(raw) * HEAD_NOUN_WEIGHT
        if head:  # the request's object, matched against the operation's object
            match_head = " OR ".join(dict.fromkeys(f'"{t}"' for t in head))
            for rowid, raw in self._db.execute(
                    "SELECT rowid, bm25(f_object) FROM f_object WHERE f_object MATCH ?", (match_head,)):
                totals[int(rowid)] = totals.get(int(rowid), 0.0) - float(raw) * HEAD_WEIGHT
        coverage = self._coverage(own)
        # a request's own action when it is specific (search, cancel, refund) is a thing it asks for too
        matched = self._matching(content_terms([*(t for t in terms if not t.startswith("act")), *sorted(actions)]))
        similarity = None
        if self._semantic is not None:
            similarity = self._semantic.similarity(" ".join(content_terms([t for t in terms if not t.startswith("act")])))
            if not similarity.any():
                similarity = None
        ranked: list[tuple[float, str, int]] = []
        for rowid in matched.intersection(totals):  # the others matched only derived action words
            doc = self._docs[rowid - 1]
            tool = next((t for t, need in doc.tools if held is None or permits({"permission": need}, held)), None)
            if tool is None:
                continue
            score = totals[rowid] * (1 - COVERAGE_WEIGHT + COVERAGE_WEIGHT * coverage.get(rowid, 0.0))
            score *= _action_factor(actions, doc.actions)
            ranked.append((-round(score, 6), tool, rowid))
        if similarity is not None:
            ranked = self._fuse(ranked, similarity, limit)
        # best first: score, then tool name; only the `limit` best are made into hits
        return [Hit(tool, self._docs[rowid - 1].toolset, -negative, self._docs[rowid - 1].operation)
                for negative, tool, rowid in heapq.nsmallest(limit, ranked)]

    def _fuse(self, ranked: list[tuple[float, str, int]], similarity: Any, limit: int) -> list[tuple[float, str, int]]:
        """The lexical ranking `ranked` ((-score, tool, rowid)) with each score multiplied by
        ``1 + FUSION_WEIGHT × max(0, similarity)``, the document's cosine similarity to the request
        in the semantic space (`toolgen.search_vectors`). Only documents that name a word of the
        request are ranked: meaning reorders them and brings in none that names nothing. A document
        whose lexical score times ``1 + FUSION_WEIGHT`` stays below the `limit`-th best lexical score
        cannot reach the first `limit` places and is left out (the same hits, less work)."""
        if len(ranked) > limit:
            floor = -heapq.nsmallest(limit, ranked)[-1][0] / (1 + FUSION_WEIGHT) - 1e-6
            ranked = [entry for entry in ranked if -entry[0] >= floor]
        return [(-round(-negative * (1 + FUSION_WEIGHT * max(0.0, float(similarity[rowid - 1]))), 6), tool, rowid)
                for negative, tool, rowid in ranked]


def _action_factor(actions: set[str], doc_actions: frozenset[str]) -> float:
    """The multiplier of a document's score for the request's action classes (1 when it names none)."""
    factor = 1.0
    if actions:
        if doc_actions & actions:
            factor *= 1 + EXACT_BOOST
        elif any((a, b) in RELATED for a in actions for b in doc_actions):
            factor *= 1 + RELATED_BOOST
        if (actions <= READS) != (doc_actions <= READS):
            factor *= 1 - FAMILY_PENALTY  # a write for a read request, or a read for a write
    return factor


def load_search(path: Path) -> tuple[list[Mapping[str, Any]] | None, Any]:
    """(the index documents of a ``search.json`` file, its ``semantic`` value or None), of the
    lexical format or the semantic one (`SEMANTIC_FORMAT`), or (None, None) when the file is absent,
    unreadable, not JSON, of another format or malformed (the caller then analyses the package
    itself)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(data, dict) or data.get("format") not in (SEARCH_FORMAT, SEMANTIC_FORMAT):
        return None, None
    documents = data.get("documents")
    if not isinstance(documents, list) or not all(
            isinstance(d, dict) and isinstance(d.get("fields"), dict) and isinstance(d.get("tools"), list)
            and all(isinstance(t, list) and len(t) == 2 and isinstance(t[1], list) for t in d["tools"])
            for d in documents):
        return None, None
    return documents, data.get("semantic")
