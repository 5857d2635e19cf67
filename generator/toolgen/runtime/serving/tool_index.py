"""Tool search: rank the tools of a generated package for a request phrased in plain words.

Input: a generated package (the policy rows of ``policy.json`` and the entries of ``mcp.json``, or a
loaded `Registry`) and a query such as ``"get rid of the bug label on issue 12"``. Output: a ranked
list of `Hit` (tool, toolset, score, operation), never a tool whose permission the caller's scopes
lack.

One ranking everywhere: `toolgen search`, the Python API (`ToolIndex.search`, `Registry`-based
`index_for`) and the MCP meta-tool (`toolgen.runtime.serving.search_tools.ToolSearch`, its contract in
`toolgen.search.tool`) all call `ToolIndex.search`. The index documents are built at `toolgen build` time
(``search.json`` beside ``policy.json``, by
`toolgen.search.text_index.search_documents`); `ToolIndex.from_dir` loads them and falls back to building
them from ``policy.json`` + ``mcp.json`` with the same function when the file is absent or of another
format, so both paths give the same ranking. A file that is present but not used (unreadable,
malformed, or indexing other tools than the package's, or its tools with other permissions than
``policy.json`` gives them: no document at all while the package has tools would answer every
search with nothing, and a stale permission would let scope filtering list a tool the caller's
scopes hide) is said in `ToolIndex.warnings` (`checked_search`),
which `toolgen search` and `toolgen serve` print.

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
gets a multiplicative boost (a related class a smaller one). A request that names the one thing it acts
on by a value ("delete virtual machine 740", `toolgen.search.text_index.names_one`) boosts the operations
whose path acts on one item (``/virtual-machines/{id}/``, not the bulk ``/virtual-machines/``). Writes are one operation with two tools
(``preview_*`` + ``record_*``): the hit names the tool that acts (``record_*``), or the preview when
only the preview is allowed. Results are deterministic: score, then tool name.

Only the documents that can reach the first `limit` places are scored: the index reads FTS5's postings
back at load (`toolgen.runtime.serving.postings.Postings`: each token's share of ``bm25()`` per row,
checked against SQLite's own scores) and ranks by MaxScore over them (`bounded_ranking`), with the same
scores to the float as asking SQLite; when the postings are refused, a word is not one token or too
many documents share the highest bounds, SQLite ranks, as before (`ToolIndex._ranked`).
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ...pointer import SURROGATE_ESCAPE, lone_surrogate_pointer
from ...policy.format import read_policy
from ...search.dense_index import DenseIndex, is_dense, load_dense, warn_once
from ...search.text_index import (
    COVERAGE_WEIGHT,
    EXACT_BOOST,
    FAMILY_PENALTY,
    HEAD_NOUN_WEIGHT,
    HEAD_WEIGHT,
    ITEM_BOOST,
    READS,
    RELATED,
    RELATED_BOOST,
    SEARCH_FORMAT,
    STOP_WORDS,
    STRUCTURE,
    TABLES,
    analyse_query,
    content_terms,
    item_path,
    names_one,
    query_terms,
    search_documents,
    split_words,
)
from ...search.vector_index import FUSION_WEIGHT, SEMANTIC_FORMAT, Embedder, SemanticIndex
from ..identity import missing_of, scope_set
from .postings import Asked, Postings, bounded_ranking, lexical_hits, phrase

__all__ = ["STOP_WORDS", "Hit", "IndexWarning", "ToolIndex", "checked_search", "query_terms", "split_words"]

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


@dataclass(frozen=True)
class IndexWarning:
    """A ``search.json`` beside a package that tool search does not use, and why (`checked_search`):
    `code` is ``search_index_unreadable`` (not JSON, of another format, malformed) or
    ``search_index_mismatch`` (its documents do not index the package's tools, each once with its
    policy permission: none while the package has some, other ones, one twice, another permission), or
    ``search_dense_unavailable`` (the dense option's model, extra or ``search.vectors`` is missing or
    does not match: the ranking is then the lexical one); `file` the file's path; `message` what is
    wrong; `hint` what to do. The index then analyses the package itself (the documents the build writes), so search
    keeps working; the warning says the shipped file is wrong."""

    code: str
    file: str
    message: str
    hint: str = "rebuild the package (`toolgen build`) so its search.json indexes its tools"

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "file": self.file, "message": self.message, "hint": self.hint}

    def __str__(self) -> str:
        return f"{self.file}: {self.message}; {self.hint}"


@dataclass
class _Doc:
    intent: str
    tools: list[tuple[str, frozenset[str]]]  # (tool, its permission scopes), the acting tool first
    toolset: str | None
    operation: str
    actions: frozenset[str]


class ToolIndex:
    """An in-memory FTS5 index of a package's tools. Build it once, search it many times."""

    def __init__(
        self,
        policy: Mapping[str, Any],
        catalog: Sequence[Mapping[str, Any]],
        *,
        documents: Sequence[Mapping[str, Any]] | None = None,
        semantic: Any = None,
        embedder: Embedder | None = None,
        dense: DenseIndex | None = None,
    ) -> None:
        """Index `policy` (the ``policy.json`` object) and `catalog` (the ``mcp.json`` entries); with
        `documents` (the ``documents`` of a ``search.json`` written by `toolgen build`), index those
        instead of analysing the package again. Either way the documents are those of
        `toolgen.search.text_index.search_documents`.

        `semantic`: the ``semantic`` value of that ``search.json`` (`toolgen.search.vector_index`), written
        when the project opts in (toolgen.yaml ``search: {semantic: lsa}``). Without a usable one
        (absent, as by default; malformed; made by an embedder that is neither stored nor given as
        `embedder`; or numpy not installed) the ranking is the lexical one alone, and numpy is not
        imported when there is none. `dense`: the dense option's index (``search: {semantic: onnx}``,
        loaded by `from_dir` / `from_registry` from the package's ``search.vectors``), fused with the
        lexical ranking by reciprocal rank (`toolgen.search.dense_index.DenseIndex.fuse`)."""
        #: why a package's ``search.json`` was not used (`from_dir`, `from_registry`: `checked_search`)
        self.warnings: tuple[IndexWarning, ...] = ()
        docs = documents if documents is not None else search_documents(policy, catalog)
        self._semantic = None if is_dense(semantic) else SemanticIndex.load(semantic, len(docs), embedder)
        self._dense = dense
        self._db = sqlite3.connect(":memory:")
        for table, (
            columns,
            _,
        ) in TABLES.items():  # contentless: search reads rowids and bm25, never the text
            self._db.execute(
                f"CREATE VIRTUAL TABLE {table} USING fts5("
                f"{', '.join(c for c, _ in columns)}, content='', tokenize='porter unicode61')"
            )
        self._docs: list[_Doc] = []
        for rowid, document in enumerate(docs, 1):
            fields = document.get("fields") or {}
            self._docs.append(
                _Doc(
                    intent=str(document.get("intent")),
                    tools=[
                        (str(tool), frozenset(str(s) for s in scopes))
                        for tool, scopes in document.get("tools") or []
                    ],
                    toolset=str(document["toolset"]) if document.get("toolset") else None,
                    operation=str(document.get("operation")),
                    actions=frozenset(str(a) for a in document.get("actions") or []),
                )
            )
            for table, (columns, _) in TABLES.items():
                self._db.execute(
                    f"INSERT INTO {table}(rowid, {', '.join(c for c, _ in columns)}) "
                    f"VALUES (?, {', '.join('?' for _ in columns)})",
                    (rowid, *(str(fields.get(c) or "") for c, _ in columns)),
                )

        paths = {
            str(r.get("intent") or r.get("tool")): str((r.get("operation") or {}).get("path") or "")
            for r in policy.get("tools", []) or []
            if isinstance(r, Mapping) and not r.get("composite")
        }
        #: the documents whose operation acts on one item (`toolgen.search.text_index.item_path`)
        self._items = frozenset(i for i, d in enumerate(self._docs, 1) if item_path(paths.get(d.intent, "")))
        #: the tables' postings, read back from FTS5 (None when its scores cannot be reproduced here): a
        #: query scores only the documents that can rank (`toolgen.runtime.serving.postings`)
        self._postings = Postings.load(self._db, TABLES, len(docs), _probes(docs))

    # -- constructors ----------------------------------------------------------------------------

    @classmethod
    def from_dir(cls, path: str | Path, *, embedder: Embedder | None = None) -> ToolIndex:
        """Index the generated package in folder `path`: the documents of its ``search.json`` when it
        holds a readable one of this format that indexes the package's tools, else ``policy.json`` +
        ``mcp.json`` analysed here (same documents, same ranking), with the reason in `warnings`
        (`checked_search`). Raises OSError / ValueError when ``policy.json`` or ``mcp.json`` is
        missing or not JSON, and `toolgen.policy.format.PolicyFormatError` (a ValueError, located) when
        ``policy.json`` is not of this format."""
        folder = Path(path)
        policy = read_policy(folder / "policy.json").to_json()
        catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
        documents, semantic, warning = checked_search(folder / SEARCH_FILE, policy)
        dense, unused = _dense_of(folder, semantic, documents, embedder)
        index = cls(policy, catalog, documents=documents, semantic=semantic, embedder=embedder, dense=dense)
        index.warnings = tuple(w for w in (warning, unused) if w is not None)
        return index

    @classmethod
    def from_registry(cls, registry: Any, *, embedder: Embedder | None = None) -> ToolIndex:
        """Index the tools of a loaded `toolgen.runtime.Registry`: with the documents of the
        ``search.json`` beside the package it was loaded from (`Registry.from_dir`), as `from_dir`
        does (`warnings` included), else analysed here."""
        source = getattr(registry, "source", None)
        documents, semantic, warning = (
            checked_search(Path(source) / SEARCH_FILE, registry.policy)
            if source is not None
            else (None, None, None)
        )
        dense, unused = (
            _dense_of(Path(source), semantic, documents, embedder) if source is not None else (None, None)
        )
        index = cls(
            registry.policy,
            registry.catalog(),
            documents=documents,
            semantic=semantic,
            embedder=embedder,
            dense=dense,
        )
        index.warnings = tuple(w for w in (warning, unused) if w is not None)
        return index

    def _term_rows(self, terms: Iterable[str]) -> dict[tuple[str, str], set[int]]:
        """(term, table) → the documents whose text in that table contains the term (FTS5 matching,
        so stemmed), for each distinct term of `terms` and each table but the derived ``verbs``: what
        `_coverage` and `_matching` read, asked of SQLite once per term and table."""
        return {
            (term, table): {
                rowid
                for (rowid,) in self._db.execute(
                    f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (phrase(term),)
                )
            }
            for term in dict.fromkeys(terms)
            for table in TABLES
            if table != "f_verbs"
        }

    def _coverage(
        self, terms: list[str], rows: Mapping[tuple[str, str], set[int]] | None = None
    ) -> dict[int, float]:
        """Per document, the share of the request's distinct terms that its name, title, keywords,
        object, path nouns, arguments or description contain (`rows`: `_term_rows` of `terms`): a
        document that names every thing the request names beats one that matches a single rare word
        many times. Without `rows` they are asked here."""
        distinct = list(dict.fromkeys(terms))
        if not distinct:
            return {}
        rows = self._term_rows(distinct) if rows is None else rows
        found: Counter[int] = Counter()
        for term in distinct:
            found.update(set().union(*(rows[term, table] for table in STRUCTURE)))
        return {rowid: n / len(distinct) for rowid, n in found.items()}

    def _matching(self, terms: list[str], rows: Mapping[tuple[str, str], set[int]] | None = None) -> set[int]:
        """The documents whose text (any field but the derived ``verbs``) contains one of `terms`
        (`rows`: `_term_rows` of `terms`, asked here when not given)."""
        rows = self._term_rows(terms) if rows is None else rows
        return set().union(*(found for (term, _), found in rows.items() if term in terms)) if terms else set()

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
        asked = Asked(
            terms=terms,
            own=own,
            last=[t[1:] for t in head if t.startswith("^")],  # the head noun of a compound object
            head=[t for t in head if not t.startswith("^")],  # the request's object
            # a request's own action when it is specific (search, cancel, refund) is a thing it asks for too
            content=content_terms([*(t for t in terms if not t.startswith("act")), *sorted(actions)]),
            actions=actions,
            one="create" not in actions and names_one(query),  # "delete virtual machine 740"
            held=held,
        )
        similarity = None
        if self._semantic is not None:
            similarity = self._semantic.similarity(
                " ".join(content_terms([t for t in terms if not t.startswith("act")]))
            )
            if not similarity.any():
                similarity = None
        ranked = None
        if similarity is None and self._postings is not None:
            if self._dense is None:
                ranked = bounded_ranking(
                    self._postings, asked, self._entry, self._most, limit, _CEILING, _FIRST
                )
            else:
                ranked = self._dense_top(query, asked, limit)
        if ranked is None:
            ranked = self._ranked(asked, limit, prune=similarity is None and self._dense is None)
            if similarity is not None:
                ranked = self._fuse(ranked, similarity, limit)
            if self._dense is not None:
                ranked = self._dense.fuse(query, ranked, lambda rowid: self._visible_tool(rowid, held), limit)
        # best first: score, then tool name; only the `limit` best are made into hits
        return [
            Hit(tool, self._docs[rowid - 1].toolset, -negative, self._docs[rowid - 1].operation)
            for negative, tool, rowid in heapq.nsmallest(limit, ranked)
        ]

    def _entry(
        self, asked: Asked, rowid: int, total: float, coverage: float
    ) -> tuple[float, str, int] | None:
        """(-score rounded, the tool that acts, rowid) of document `rowid` whose bm25 total (summed over the
        tables, weighted) is `total` and which names `coverage` of the request's own terms, or None when
        the caller's scopes allow none of its tools."""
        doc = self._docs[rowid - 1]
        held = asked.held
        tool = next((t for t, need in doc.tools if held is None or not missing_of(need, held)), None)
        if tool is None:
            return None
        score = total * (1 - COVERAGE_WEIGHT + COVERAGE_WEIGHT * coverage)
        score *= _action_factor(asked.actions, doc.actions)
        if asked.one and rowid in self._items:
            score *= 1 + ITEM_BOOST
        return (-round(score, 6), tool, rowid)

    def _most(self, asked: Asked, rowid: int) -> float:
        """The most `_entry` can multiply document `rowid`'s total by for `asked` (full coverage; its
        action factor and one-item boost), with a margin for the order of the float products; 0 when the
        caller's scopes allow none of its tools."""
        doc = self._docs[rowid - 1]
        held = asked.held
        if held is not None and all(missing_of(need, held) for _, need in doc.tools):
            return 0.0
        factor = (1 - COVERAGE_WEIGHT + COVERAGE_WEIGHT * 1.0) * _action_factor(asked.actions, doc.actions)
        if asked.one and rowid in self._items:
            factor *= 1 + ITEM_BOOST
        return factor * (1 + 1e-9)

    def _ranked(self, asked: Asked, limit: int, *, prune: bool) -> list[tuple[float, str, int]]:
        """The lexical ranking as SQLite's ``bm25()`` gives it: every matched document's entry
        (`_entry`), or with `prune` only those that can reach the first `limit` places."""
        totals: dict[int, float] = {}
        match = " OR ".join(dict.fromkeys(phrase(t) for t in asked.terms))
        for table, (columns, table_weight) in TABLES.items():
            weights = ", ".join(str(w) for _, w in columns)
            get = totals.get
            for rowid, raw in self._db.execute(
                f"SELECT rowid, bm25({table}, {weights}) FROM {table} WHERE {table} MATCH ?", (match,)
            ):
                totals[rowid] = get(rowid, 0.0) - raw * table_weight
        for words, weight in ((asked.last, HEAD_NOUN_WEIGHT), (asked.head, HEAD_WEIGHT)):
            if words:  # the head noun of a compound object, then the request's object, against the operation's object
                match_head = " OR ".join(dict.fromkeys(phrase(t) for t in words))
                for rowid, raw in self._db.execute(
                    "SELECT rowid, bm25(f_object) FROM f_object WHERE f_object MATCH ?", (match_head,)
                ):
                    totals[int(rowid)] = totals.get(int(rowid), 0.0) - float(raw) * weight
        term_rows = self._term_rows([*asked.own, *asked.content])
        coverage = self._coverage(asked.own, term_rows)
        matched = self._matching(asked.content, term_rows)

        def scored(rowid: int) -> tuple[float, str, int] | None:
            return self._entry(asked, rowid, totals[rowid], coverage.get(rowid, 0.0))

        rest: Iterable[int] = matched.intersection(totals)  # the others matched only derived action words
        ranked: list[tuple[float, str, int]] = []
        if prune and len(matched) > _FIRST * limit:
            # score the documents of the highest bm25 totals first; a document whose total times
            # `_CEILING` (the most the factors can multiply it by) stays below the limit-th score so far
            # cannot reach the first `limit` places: it is not scored (the same hits, less work). Not
            # with the dense option: its fusion reads the rank of every lexical hit
            first = heapq.nlargest(_FIRST * limit, rest, key=totals.__getitem__)
            ranked = [hit for hit in map(scored, first) if hit is not None]
            rest = set(rest).difference(first)
            if len(ranked) >= limit:
                floor = (-heapq.nsmallest(limit, ranked)[-1][0] - 1e-6) / _CEILING
                if floor > 0:
                    rest = [rowid for rowid in rest if totals[rowid] >= floor]
        ranked += [hit for hit in map(scored, rest) if hit is not None]
        return ranked

    def _dense_top(self, query: str, asked: Asked, limit: int) -> list[tuple[float, str, int]] | None:
        """The entries of the dense option's fusion that can take the first `limit` places, from the
        lexical ranking's first `_DENSE_LEXICAL` × `limit` places (`bounded_ranking`) and the nearest
        documents (`toolgen.search.dense_index.DenseIndex.fuse_top`), or None when those cannot settle
        them (the caller then fuses the whole lexical ranking)."""
        assert self._dense is not None and self._postings is not None
        depth = _DENSE_LEXICAL * limit
        lexical = bounded_ranking(self._postings, asked, self._entry, self._most, depth, _CEILING, _FIRST)
        if lexical is None:
            return None
        similarity = self._dense.similarity(query)
        if similarity is None or not len(similarity):
            return lexical  # the model failed on the request: the lexical ranking, as `fuse` gives it
        top = heapq.nsmallest(depth, lexical)
        pick = partial(self._visible_tool, held=asked.held)
        fused = None
        if len(lexical) < depth:  # fewer hits than places: `lexical` holds every one
            fused = self._dense.fuse_top(similarity, top, None, pick, limit)
        elif (hit := lexical_hits(self._postings, asked, self._most)) is not None:
            fused = self._dense.fuse_top(similarity, top, hit, pick, limit)
        if fused is None:
            ranked = self._ranked(asked, limit, prune=False)
            fused = self._dense.fuse(query, ranked, pick, limit, similarity=similarity)
        return fused

    def _visible_tool(self, rowid: int, held: Any) -> str | None:
        """The tool of document `rowid` that the caller's scopes `held` allow (None: no filtering)."""
        return next(
            (t for t, need in self._docs[rowid - 1].tools if held is None or not missing_of(need, held)), None
        )

    def _fuse(
        self, ranked: list[tuple[float, str, int]], similarity: Any, limit: int
    ) -> list[tuple[float, str, int]]:
        """The lexical ranking `ranked` ((-score, tool, rowid)) with each score multiplied by
        ``1 + FUSION_WEIGHT × max(0, similarity)``, the document's cosine similarity to the request
        in the semantic space (`toolgen.search.vector_index`). Only documents that name a word of the
        request are ranked: meaning reorders them and brings in none that names nothing. A document
        whose lexical score times ``1 + FUSION_WEIGHT`` stays below the `limit`-th best lexical score
        cannot reach the first `limit` places and is left out (the same hits, less work)."""
        if len(ranked) > limit:
            floor = -heapq.nsmallest(limit, ranked)[-1][0] / (1 + FUSION_WEIGHT) - 1e-6
            ranked = [entry for entry in ranked if -entry[0] >= floor]
        return [
            (-round(-negative * (1 + FUSION_WEIGHT * max(0.0, float(similarity[rowid - 1]))), 6), tool, rowid)
            for negative, tool, rowid in ranked
        ]


#: the most `ToolIndex.search` multiplies a document's bm25 total by (full coverage, the exact action
#: boost, no penalty, the one-item boost), with a margin for the order of the float products: a
#: document whose total times this stays below a score already found cannot outrank it
_CEILING = (
    (1 - COVERAGE_WEIGHT + COVERAGE_WEIGHT * 1.0)
    * max(1.0, 1 + EXACT_BOOST, 1 + RELATED_BOOST)
    * max(1.0, 1 - FAMILY_PENALTY)
    * max(1.0, 1 + ITEM_BOOST)
    * (1 + 1e-9)
)
#: with the dense option, how many lexical places per place asked for `ToolIndex._dense_top` ranks exactly:
#: a lexical hit below them scores at most 1 / (RRF_K + 8 × limit + 1) lexically in the fusion
_DENSE_LEXICAL = 8
#: how many documents per place asked for `ToolIndex.search` scores first, by bm25 total, to find
#: the score the others must be able to reach
_FIRST = 4


def _probes(documents: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Per table, some words of its text (of the first, middle and last documents) for `Postings.load` to
    check its scores against SQLite's on."""
    out: dict[str, str] = {}
    picks = [documents[i] for i in sorted({0, len(documents) // 2, len(documents) - 1})] if documents else []
    for table, (columns, _) in TABLES.items():
        words: list[str] = []
        for document in picks:
            fields = document.get("fields") or {}
            words += " ".join(str(fields.get(c) or "") for c, _ in columns).split()[:2]
        out[table] = " ".join(words)
    return out


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


def _dense_of(
    folder: Path, semantic: Any, documents: Sequence[Mapping[str, Any]] | None, embedder: Embedder | None
) -> tuple[DenseIndex | None, IndexWarning | None]:
    """The dense index of the package in `folder` when its ``search.json`` (`semantic`, `documents`)
    asks for one and it loads, else (None, why not: ``search_dense_unavailable``, naming the file
    at fault and what to do; also logged once).
    The search is then the lexical one: never an error, never stale vectors."""
    if documents is None or not is_dense(semantic):
        return None, None
    dense, problem = load_dense(folder, semantic, documents, embedder)
    if problem is None:
        return dense, None
    warn_once(
        f"{problem.file}: {problem.message}; the dense ranking is off, tool search ranks lexically: {problem.hint}"
    )
    return None, IndexWarning(
        "search_dense_unavailable",
        problem.file,
        f"{problem.message}; the dense ranking is off, tool search ranks lexically",
        problem.hint,
    )


def load_search(path: Path) -> tuple[list[Mapping[str, Any]] | None, Any]:
    """(the index documents of a ``search.json`` file, its ``semantic`` value or None), of the
    lexical format or the semantic one (`SEMANTIC_FORMAT`), or (None, None) when the file is absent,
    unreadable, not JSON, of another format or malformed (the caller then analyses the package
    itself). `checked_search` also says why, and checks the documents against the package."""
    documents, semantic, _ = _read_search(path)
    return documents, semantic


def checked_search(
    path: Path, policy: Mapping[str, Any]
) -> tuple[list[Mapping[str, Any]] | None, Any, IndexWarning | None]:
    """`load_search`, checked against the package it sits in (`policy`: its ``policy.json`` object):
    the documents are used only when they name exactly the package's tools, each once and with the
    permission its policy row gives it (every row's ``tool`` and ``permission``), as the build
    writes them: `ToolIndex.search` filters by the scopes the documents carry. Otherwise (None, None, an `IndexWarning`):
    a file present but unreadable, not JSON, of another format or malformed
    (``search_index_unreadable``; malformed: not the shape `toolgen.search.text_index.search_documents`
    writes), or whose documents index other tools than the package's, one twice, or one with
    another permission (``search_index_mismatch``): most plainly no document at all while the package has tools, which
    would otherwise answer every search with nothing. An absent file gives no warning (a package
    without one is analysed here, by design); so does an empty index of a package without tools."""
    documents, semantic, problem = _read_search(path)
    if problem is not None:
        return (
            None,
            None,
            IndexWarning(
                "search_index_unreadable",
                str(path),
                f"not a tool-search index this "
                f"runtime reads ({problem}): tool search analyses the package instead",
            ),
        )
    if documents is None:
        return None, None, None
    rows = policy.get("tools") if isinstance(policy, Mapping) else None
    # each tool with its permission, as `toolgen.search.text_index.search_documents` writes it from the policy
    wanted = Counter(
        (str(row.get("tool")), tuple(sorted({str(s) for s in row.get("permission") or []})))
        for row in rows or []
        if isinstance(row, Mapping)
    )
    found = Counter(
        (tool, tuple(sorted(set(scopes)))) for document in documents for tool, scopes in document["tools"]
    )
    if found == wanted:
        return documents, semantic, None
    tools, indexed = {tool for tool, _ in wanted}, {tool for tool, _ in found}
    missing, extra = sorted(tools - indexed), sorted(indexed - tools)
    named = Counter(tool for tool, _ in found.elements())
    twice = sorted(tool for tool, n in named.items() if n > 1)
    other = sorted({tool for tool, _ in found - wanted} & tools - set(twice))
    if not documents:
        what = f"it has no documents, while the package has {len(tools)} tool{'s' if len(tools) != 1 else ''}"
    else:
        parts = (
            [f"{len(missing)} of the package's tools are not in it (e.g. {_some(missing)})"]
            if missing
            else []
        )
        parts += [f"it names {len(extra)} tools the package lacks (e.g. {_some(extra)})"] if extra else []
        parts += [f"it names {len(twice)} tools more than once (e.g. {_some(twice)})"] if twice else []
        parts += (
            [f"it gives {len(other)} tools another permission than policy.json does (e.g. {_some(other)})"]
            if other
            else []
        )
        what = " and ".join(parts)
    return (
        None,
        None,
        IndexWarning(
            "search_index_mismatch",
            str(path),
            f"the index is not this package's: {what}; tool search analyses the package instead",
        ),
    )


def _some(names: list[str]) -> str:
    """The first three of `names`, each cut to 60 characters."""
    return ", ".join(n if len(n) <= 60 else n[:59] + "…" for n in names[:3])


def _read_search(path: Path) -> tuple[list[Mapping[str, Any]] | None, Any, str | None]:
    """(documents, semantic, None), (None, None, None) for an absent file, or (None, None, why the
    present file is not read: unreadable, not JSON, of another format, malformed, or holding a lone
    surrogate, named by its JSON pointer)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None, None
    except (OSError, ValueError) as exc:
        return None, None, f"cannot read it: {exc}"
    try:
        data = json.loads(text)
    except ValueError as exc:
        return None, None, f"not JSON: {exc}"
    except RecursionError:
        return None, None, "not JSON this runtime reads: nested too deep"
    if not isinstance(data, dict) or data.get("format") not in (SEARCH_FORMAT, SEMANTIC_FORMAT):
        found = data.get("format") if isinstance(data, dict) else None
        return None, None, f"format {repr(found)[:60]}, not {SEARCH_FORMAT!r} or {SEMANTIC_FORMAT!r}"
    documents = data.get("documents")
    if not isinstance(documents, list) or not all(_well_formed(d) for d in documents):
        return None, None, "its documents are malformed"
    # a ``\ud800`` escaped without its pair (a hand edit: the build writes none) parses to text no
    # UTF-8 holds, which SQLite's index refuses: said here, at its pointer, instead of failing the load
    at = lone_surrogate_pointer(data) if SURROGATE_ESCAPE.search(text) else None
    if at is not None:
        why = f"the string at {at} holds a lone UTF-16 surrogate (an escape such as \\ud800 without its pair)"
        return None, None, f"{why}, which is not Unicode text"
    return documents, data.get("semantic"), None


def _well_formed(document: Any) -> bool:
    """Whether `document` has the shape `toolgen.search.text_index.search_documents` writes: ``intent``,
    ``operation`` and ``toolset`` strings (or null), ``actions`` a list of strings, ``fields`` an
    object of strings, ``tools`` a list of [tool, [scope, ...]] of strings."""
    text = (str, type(None))
    return (
        isinstance(document, dict)
        and all(isinstance(document.get(k), text) for k in ("intent", "operation", "toolset"))
        and isinstance(actions := document.get("actions", []), list)
        and all(isinstance(a, str) for a in actions)
        and isinstance(fields := document.get("fields"), dict)
        and all(isinstance(v, text) for v in fields.values())
        and isinstance(tools := document.get("tools"), list)
        and all(
            isinstance(t, list)
            and len(t) == 2
            and isinstance(t[0], str)
            and isinstance(t[1], list)
            and all(isinstance(s, str) for s in t[1])
            for t in tools
        )
    )
