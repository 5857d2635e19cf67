"""The postings of tool search's FTS5 tables, read back once, so that a query scores only the documents
that can still rank (`toolgen.runtime.serving.tool_index.ToolIndex.search`).

Input: the in-memory SQLite database of a `ToolIndex` (its contentless FTS5 tables, ``porter
unicode61``) and the tables' columns and bm25 weights (`toolgen.search.text_index.TABLES`). Output: a
`Postings` holding, per table and token, the documents that contain the token (rowids, ascending), each
one's share of FTS5's ``bm25()`` score and the largest share (the token's bound).

SQLite's ``bm25(table, w1, w2, ...)`` (fts5_aux.c) scores a row for a query of phrases ``p1 OR p2 ...`` as
``-Σ_i idf_i × f_i × (k1 + 1) / (f_i + k1 × (1 - b + b × D / avgdl))`` with ``k1 = 1.2``, ``b = 0.75``,
``f_i`` the phrase's occurrences in the row weighted by their column's weight (added one at a time, in
column order), ``D`` the row's tokens, ``avgdl`` the table's tokens per row, and ``idf_i =
log((N - n_i + 0.5) / (n_i + 0.5))`` (``1e-6`` when not positive) over the table's ``N`` rows, ``n_i`` of
which hold the phrase. A phrase of one token thus adds the same share to every query it is in:
`Postings` computes each share once, from the table's own postings (``fts5vocab``, so tokens are the
tokenizer's, stemmed), in the same order of floating-point operations. `Postings.load` checks its shares
against SQLite's ``bm25()`` on each table for one probe query (up to 6 words of the first documents'
text, every row it matches) and refuses (None) when a score differs in a single bit (another SQLite, a
compiler that fuses multiply-adds) or SQLite refuses the probe: the caller then asks SQLite, as before.
The probe is a sample, not a proof for every token: the equivalence tests compare whole rankings.
"""

from __future__ import annotations

import heapq
import math
import sqlite3
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...search.text_index import HEAD_NOUN_WEIGHT, HEAD_WEIGHT, STRUCTURE, TABLES

__all__ = ["K1", "Asked", "B", "Key", "Postings", "bounded_ranking", "lexical_hits", "phrase"]

#: FTS5's bm25 parameters (fts5_aux.c, ``fts5Bm25Function``): term-frequency saturation and length normalisation
K1 = 1.2
B = 0.75
#: how many query words `Postings.tokens` remembers (a bounded cache: a server answers arbitrary requests)
_TOKEN_CACHE = 1 << 16

Tables = Mapping[str, tuple[tuple[tuple[str, float], ...], float]]


def phrase(word: str) -> str:
    """`word` as an FTS5 string (a phrase of a MATCH): in double quotes, a double quote in it doubled
    (SQLite FTS5 query syntax, "Strings"), so no word can end the string or add an operator."""
    return '"' + word.replace('"', '""') + '"'


@dataclass(frozen=True)
class Key:
    """The postings of one token in one table: `rowids` ascending, `shares` each row's share of bm25's
    score (positive), `bound` the largest share."""

    rowids: array[int]
    shares: array[float]
    bound: float

    def share(self, rowid: int) -> float | None:
        """The share of row `rowid`, or None when it does not hold the token."""
        i = bisect_left(self.rowids, rowid)
        if i < len(self.rowids) and self.rowids[i] == rowid:
            return self.shares[i]
        return None

    def holds(self, rowid: int) -> bool:
        """Whether row `rowid` holds the token."""
        i = bisect_left(self.rowids, rowid)
        return i < len(self.rowids) and self.rowids[i] == rowid


class Postings:
    """Per table and token, the `Key` of FTS5's index (module docstring). Made by `load`."""

    def __init__(self, db: sqlite3.Connection, keys: dict[str, dict[str, Key]]) -> None:
        self._db = db
        self._keys = keys
        self._tokens: dict[str, tuple[str, ...]] = {}
        db.execute("CREATE VIRTUAL TABLE temp.q_words USING fts5(w, tokenize='porter unicode61')")
        db.execute("CREATE VIRTUAL TABLE temp.q_words_v USING fts5vocab(temp, q_words, instance)")

    @classmethod
    def load(
        cls, db: sqlite3.Connection, tables: Tables, rows: int, probes: Mapping[str, str]
    ) -> Postings | None:
        """The postings of the FTS5 tables `tables` of `db` (each holding `rows` rows, rowids 1 to `rows`),
        or None when a share computed here differs from SQLite's ``bm25()``: for each table, the query of
        the words of `probes[table]` (some document's text in that table) is scored both ways and every
        row compared."""
        keys: dict[str, dict[str, Key]] = {}
        for table, (columns, _) in tables.items():
            keys[table] = _table_keys(db, table, dict(columns), rows)
        postings = cls(db, keys)
        for table, (columns, _) in tables.items():
            words = list(dict.fromkeys(probes.get(table, "").split()))[:6]
            if words and not postings._agrees(table, columns, words):
                return None
        return postings

    def _agrees(self, table: str, columns: Sequence[tuple[str, float]], words: list[str]) -> bool:
        """Whether SQLite's bm25 of the query ``"w1" OR "w2" ...`` on `table` equals, for every row it
        matches, the sum of this index's shares (and matches the same rows)."""
        tokens = self.tokens(words)
        if tokens is None:
            return False
        keys = [self.key(table, t) for t in tokens]
        match = " OR ".join(phrase(w) for w in words)
        weights = ", ".join(str(w) for _, w in columns)
        found = 0
        try:
            for rowid, raw in self._db.execute(
                f"SELECT rowid, bm25({table}, {weights}) FROM {table} WHERE {table} MATCH ?", (match,)
            ):
                found += 1
                if self.score(keys, rowid) != raw:
                    return False
        except sqlite3.Error:  # a query SQLite refuses: no fast path, SQLite ranks every query
            return False
        return found == len(set().union(*(k.rowids for k in keys if k is not None)))

    def key(self, table: str, token: str) -> Key | None:
        """The postings of `token` in `table`, None when no row holds it."""
        return self._keys[table].get(token)

    def tokens(self, words: Iterable[str]) -> list[str] | None:
        """The token FTS5's tokenizer makes of each of `words` (as a quoted phrase of a MATCH), or None
        when one of them makes no token or more than one (the caller then asks SQLite)."""
        words = list(words)
        new = [w for w in dict.fromkeys(words) if w not in self._tokens]
        if new and len(self._tokens) + len(new) > _TOKEN_CACHE:
            self._tokens.clear()  # forget every word, then tokenize all of these again
            new = list(dict.fromkeys(words))
        if new:
            self._db.executemany("INSERT INTO temp.q_words(rowid, w) VALUES (?, ?)", enumerate(new, 1))
            made: dict[int, list[str]] = {}
            for doc, term in self._db.execute("SELECT doc, term FROM temp.q_words_v ORDER BY doc, offset"):
                made.setdefault(doc, []).append(term)
            self._db.execute("DELETE FROM temp.q_words")
            for i, word in enumerate(new, 1):
                self._tokens[word] = tuple(made.get(i, ()))
        out = []
        for word in words:
            made_of = self._tokens.get(word, ())
            if len(made_of) != 1:
                return None
            out.append(made_of[0])
        return out

    @staticmethod
    def score(keys: Sequence[Key | None], rowid: int) -> float | None:
        """SQLite's ``bm25()`` of row `rowid` for the query whose phrases have the postings `keys` (in the
        query's order; None for a phrase no row holds), or None when the row holds none of them."""
        total = 0.0
        found = False
        for key in keys:
            if key is not None:
                share = key.share(rowid)
                if share is not None:
                    total += share
                    found = True
        return -1.0 * total if found else None


def _table_keys(
    db: sqlite3.Connection, table: str, weights: Mapping[str, float], rows: int
) -> dict[str, Key]:
    """The `Key` of every token of `table`, from its ``fts5vocab`` instances (term, row, column, in the
    index's order: by term, row, then position, which is the order bm25 adds a phrase's weights in)."""
    vocab = f"temp.v_{table}"
    db.execute(f"CREATE VIRTUAL TABLE {vocab} USING fts5vocab(main, {table}, instance)")
    try:
        lengths = [0] * (rows + 1)
        frequencies: dict[str, tuple[list[int], list[float]]] = {}
        term, doc, freq = None, -1, 0.0
        docs: list[int] = []
        freqs: list[float] = []
        for t, d, column in db.execute(f"SELECT term, doc, col FROM {vocab}"):
            lengths[d] += 1
            if t != term:
                if term is not None:
                    freqs.append(freq)
                term, doc, freq = t, d, 0.0
                docs, freqs = [d], []
                frequencies[t] = (docs, freqs)
            elif d != doc:
                freqs.append(freq)
                doc, freq = d, 0.0
                docs.append(d)
            freq += weights[column]
        if term is not None:
            freqs.append(freq)
    finally:
        db.execute(f"DROP TABLE {vocab}")
    if not frequencies:
        return {}  # no token: no row to score (and no average length to divide by)
    avgdl = float(sum(lengths)) / float(rows)
    norms = [K1 * (1 - B + B * float(n) / avgdl) for n in lengths]
    keys: dict[str, Key] = {}
    for t, (docs, freqs) in frequencies.items():
        hits = len(docs)
        idf = math.log((rows - hits + 0.5) / (hits + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        shares = array(
            "d", (idf * ((f * (K1 + 1.0)) / (f + norms[d])) for d, f in zip(docs, freqs, strict=True))
        )
        keys[t] = Key(array("l", docs), shares, max(shares))
    return keys


@dataclass(frozen=True)
class Asked:
    """A request as `ToolIndex.search` ranks it (`toolgen.search.text_index.analyse_query`): `terms` its
    search terms with ``act<class>`` for each action class (the phrases of each table's bm25), `own` the
    terms it names itself (the coverage), `last` / `head` the head noun of its compound object and its
    object (bm25 on ``f_object``, weighted `HEAD_NOUN_WEIGHT` / `HEAD_WEIGHT`), `content` the terms a
    document must name to be ranked, `actions` its action classes, `one` whether it names one item by a
    value, `held` the caller's scopes (None: no filtering)."""

    terms: list[str]
    own: list[str]
    last: list[str]
    head: list[str]
    content: list[str]
    actions: set[str]
    one: bool
    held: Any


#: what a document's entry is made of: (request, rowid, bm25 total, coverage) → (-score, tool, rowid) or None
Entry = Callable[[Asked, int, float, float], "tuple[float, str, int] | None"]
#: a margin for the order of floating-point sums: a bound times it is never below the value it bounds
_MARGIN = 1 + 1e-9
#: the most documents whose shares are added up before the first `limit` places are known; past it,
#: SQLite ranks
_POOL = 4096


def bounded_ranking(
    postings: Postings,
    asked: Asked,
    entry: Entry,
    most: Callable[[Asked, int], float],
    limit: int,
    ceiling: float,
    first: int,
) -> list[tuple[float, str, int]] | None:
    """The entries of every document that can reach the first `limit` places of the lexical ranking, each
    exactly as SQLite's ``bm25()`` and `entry` make it, or None when a word of the request is not one
    token, or too many documents share the highest bounds (the caller then asks SQLite).

    MaxScore (Turtle and Flood, 1995) over the phrases' bounds: the documents of the phrases of the
    highest bounds are scored first (at least `first` × `limit` of them, by their shares so far); the
    `limit`-th score so far is the score a document must reach. `ceiling` is the most `entry` multiplies
    any total by, `most(asked, rowid)` the most it multiplies document `rowid`'s by (0 when the caller may
    use none of its tools). The phrases whose bounds add up to less than the score over `ceiling` cannot
    lift a document there on their own: only the documents holding another phrase are candidates, and of
    those only the ones whose shares of those phrases plus the others' bounds, times `most`, reach it
    are scored. Every bound is taken with a margin for the order of floating-point sums (`_MARGIN`)."""
    plan = _Plan.of(postings, asked)
    if plan is None:
        return None
    return _Bounded(
        plan, lambda rowid: plan.entry(entry, asked, rowid), lambda rowid: most(asked, rowid)
    ).run(limit, ceiling, first)


def lexical_hits(
    postings: Postings, asked: Asked, most: Callable[[Asked, int], float]
) -> Callable[[int], bool] | None:
    """Whether a document is a hit of the lexical ranking of `asked` (it holds a phrase of a bm25 query
    and a content term, and `most(asked, rowid)` is not 0: the caller may use one of its tools), or None
    when a word of the request is not one token."""
    plan = _Plan.of(postings, asked)
    if plan is None:
        return None
    keys = [k for _, query in plan.queries for k in query if k is not None]

    def hit(rowid: int) -> bool:
        return (
            any(k.holds(rowid) for k in plan.matching)
            and any(k.holds(rowid) for k in keys)
            and most(asked, rowid) > 0
        )

    return hit


@dataclass(frozen=True)
class _Plan:
    """A request's phrases as postings: `queries` each bm25 query's weight and the `Key` of each of its
    phrases (None: no row holds it), in the order SQLite adds them; `named` per distinct own term, its
    keys in the `STRUCTURE` tables; `matching` the keys of the content terms in every table but
    ``f_verbs``; `distinct` the number of distinct own terms."""

    queries: list[tuple[float, list[Key | None]]]
    named: list[list[Key]]
    matching: list[Key]
    distinct: int

    @classmethod
    def of(cls, postings: Postings, asked: Asked) -> _Plan | None:
        plans = [(table, weight, asked.terms) for table, (_, weight) in TABLES.items()]
        plans += [
            ("f_object", weight, words)
            for words, weight in ((asked.last, HEAD_NOUN_WEIGHT), (asked.head, HEAD_WEIGHT))
            if words
        ]
        queries: list[tuple[float, list[Key | None]]] = []
        for table, weight, words in plans:
            tokens = postings.tokens(dict.fromkeys(words))
            if tokens is None:
                return None
            queries.append((weight, [postings.key(table, t) for t in tokens]))
        distinct = list(dict.fromkeys(asked.own))
        own_tokens, content_tokens = postings.tokens(distinct), postings.tokens(asked.content)
        if own_tokens is None or content_tokens is None:
            return None
        named = [[k for t in STRUCTURE if (k := postings.key(t, token)) is not None] for token in own_tokens]
        matching = [
            k
            for token in content_tokens
            for t in TABLES
            if t != "f_verbs"
            if (k := postings.key(t, token)) is not None
        ]
        return cls(queries, named, matching, len(distinct))

    def entry(self, entry: Entry, asked: Asked, rowid: int) -> tuple[float, str, int] | None:
        """`entry` of document `rowid` with its bm25 total and coverage as `ToolIndex._ranked` finds them
        through SQLite, or None when it holds no content term (it matched only derived action words)."""
        if not any(k.holds(rowid) for k in self.matching):
            return None
        total = 0.0
        for weight, keys in self.queries:
            raw = Postings.score(keys, rowid)
            if raw is not None:
                total = total - raw * weight
        coverage = (
            sum(1 for keys in self.named if any(k.holds(rowid) for k in keys)) / self.distinct
            if self.distinct
            else 0.0
        )
        return entry(asked, rowid, total, coverage)


class _Bounded:
    """One run of `bounded_ranking`: the units (a phrase of a bm25 query: its weighted bound, weight and
    key) by bound, highest first, and per document its weighted shares of the units taken so far."""

    def __init__(
        self,
        plan: _Plan,
        scored: Callable[[int], tuple[float, str, int] | None],
        most: Callable[[int], float],
    ) -> None:
        self.units = sorted(
            (
                (weight * key.bound, weight, key)
                for weight, keys in plan.queries
                for key in keys
                if key is not None
            ),
            key=lambda unit: -unit[0],
        )
        self.after = [0.0] * (len(self.units) + 1)  # after[i]: the bounds of units[i:] added up
        for i in range(len(self.units) - 1, -1, -1):
            self.after[i] = self.after[i + 1] + self.units[i][0]
        self.scored, self.most = scored, most
        self.shares: dict[int, float] = {}
        self.taken = 0
        self.done: set[int] = set()
        self.ranked: list[tuple[float, str, int]] = []
        self.factors: dict[int, float] = {}

    def take(self, among: list[int] | None = None) -> None:
        """Add the next unit's shares: to every document that holds it, or only to those of `among`."""
        _, weight, key = self.units[self.taken]
        self.taken += 1
        shares = self.shares
        if among is None:
            get = shares.get
            for rowid, share in zip(key.rowids, key.shares, strict=True):
                shares[rowid] = get(rowid, 0.0) + share * weight
        elif 2 * len(among) < len(key.rowids):
            for rowid in among:
                found = key.share(rowid)
                if found is not None:
                    shares[rowid] += found * weight
        else:
            wanted = set(among)
            for rowid, share in zip(key.rowids, key.shares, strict=True):
                if rowid in wanted:
                    shares[rowid] += share * weight

    def score_best(self, among: Iterable[int], count: int, limit: int, ceiling: float) -> float:
        """Score the `count` documents of the highest shares among `among` (not scored yet); the total a
        document must reach to rank, times `ceiling` (0 while fewer than `limit` are ranked)."""
        best = heapq.nlargest(count, (r for r in among if r not in self.done), key=self.shares.__getitem__)
        self.ranked.extend(hit for hit in map(self.scored, best) if hit is not None)
        self.done.update(best)
        if len(self.ranked) < limit:
            return 0.0
        return (-heapq.nsmallest(limit, self.ranked)[-1][0] - 1e-6) / ceiling

    def reach(self, rowid: int, floor: float, ceiling: float) -> bool:
        """Whether document `rowid` (not scored yet) can reach the score `floor` × `ceiling`."""
        if rowid in self.done:
            return False
        bound = (self.shares[rowid] + self.after[self.taken]) * _MARGIN
        if bound < floor:
            return False
        factor = self.factors.get(rowid)
        if factor is None:
            factor = self.factors[rowid] = self.most(rowid)
        return bound * factor >= floor * ceiling

    def run(self, limit: int, ceiling: float, first: int) -> list[tuple[float, str, int]] | None:
        units = self.units
        while self.taken < len(units) and (self.taken == 0 or len(self.shares) < first * limit):
            self.take()
        if len(self.shares) > _POOL and self.taken < len(units):
            return None
        floor, count = 0.0, first * limit
        while floor <= 0 and len(self.done) < len(self.shares):  # the highest shares so far, scored
            floor = self.score_best(self.shares, count, limit, ceiling)
            count *= 4
        if floor <= 0:  # fewer than `limit` can be ranked among these documents: score every one
            while self.taken < len(units):
                self.take()
            self.ranked += [
                hit for hit in map(self.scored, self.shares.keys() - self.done) if hit is not None
            ]
            return self.ranked
        # a document no unit taken so far holds gets at most the bounds of the rest: take units until
        # those cannot reach the floor; the rest only add at most their bounds to a document's shares
        while self.taken < len(units) and self.after[self.taken] * _MARGIN >= floor:
            self.take()
        floor = max(floor, self.score_best(self.shares, first * limit, limit, ceiling))
        candidates = [r for r in self.shares if self.reach(r, floor, ceiling)]
        while self.taken < len(units) and len(candidates) > first * limit:
            self.take(candidates)  # no other document can reach the floor
            floor = max(floor, self.score_best(candidates, limit, limit, ceiling))
            candidates = [r for r in candidates if self.reach(r, floor, ceiling)]
        self.ranked += [hit for hit in map(self.scored, candidates) if hit is not None]
        return self.ranked
