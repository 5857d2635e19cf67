"""With the dense option, `ToolIndex.search` ranks exactly as the fusion first written: the whole lexical
ranking (`tests.support.search_reference.reference_ranked`) fused by `DenseIndex.fuse`, which sorts every
lexical hit. The index fuses only the lexical ranking's first places with the nearest documents, and
falls back to the whole ranking when those cannot settle the first `limit` places
(`DenseIndex.fuse_top`). Same tools, same order, same scores to the float, on the GitHub package built
with the tests' tiny ONNX model (`tests.support.dense_model`, written by the tests) and on its documents
and vectors replicated (ties in both rankings)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

import numpy as np
from tests.search.test_dense_option import UNSEEN, _build, _search, _vocabulary
from tests.support.dense_model import write_model, write_tokenizer
from tests.support.profiles import examples
from tests.support.search_reference import reference_fused

from toolgen.builder.output_files import write_outputs
from toolgen.runtime.serving.tool_index import ToolIndex
from toolgen.search.dense_index import DenseIndex

REPO = Path(__file__).resolve().parents[2]
BLIND = REPO / "benchmarks" / "queries" / "blind"


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ToolIndex]:
    """The GitHub package built with the dense option and the tests' tiny model, and its documents and
    vectors replicated 12 times under other tool names."""
    scratch = tmp_path_factory.mktemp("vocabulary")
    folder = tmp_path_factory.mktemp("project")
    (folder / "models").mkdir()
    vocab = write_tokenizer(folder / "models" / "tokenizer.json", _vocabulary(scratch))
    write_model(folder / "models" / "tiny.onnx", vocab, same={UNSEEN: "lock"})
    write_outputs(_build(folder, _search(folder)))
    built = folder / "out" / "github"
    index = ToolIndex.from_dir(built)
    assert index._dense is not None and not index.warnings
    policy = json.loads((built / "policy.json").read_text(encoding="utf-8"))
    documents = json.loads((built / "search.json").read_text(encoding="utf-8"))["documents"]
    rows: list[dict[str, Any]] = []
    replicated: list[dict[str, Any]] = []
    copies = 12
    for k in range(copies):
        rows += [
            {**row, "tool": f"{row['tool']}_{k}", "intent": f"{row.get('intent') or row['tool']}_{k}"}
            for row in policy["tools"]
        ]
        replicated += [
            {**doc, "intent": f"{doc['intent']}_{k}", "tools": [[f"{t}_{k}", s] for t, s in doc["tools"]]}
            for doc in documents
        ]
    dense = DenseIndex(np.tile(index._dense._vectors, (copies, 1)), index._dense._embedder)
    return {"github": index, "replicated": ToolIndex({"tools": rows}, [], documents=replicated, dense=dense)}


def _requests() -> list[str]:
    return [
        str(q["q"])
        for path in sorted(BLIND.glob("*.yaml"))
        for q in yaml.safe_load(path.read_text(encoding="utf-8"))["queries"]
    ]


@pytest.mark.parametrize("name", ["github", "replicated"])
def test_the_blind_requests_fuse_as_the_whole_ranking_does(
    indexes: dict[str, ToolIndex], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = indexes[name]
    assert index._postings is not None
    whole: list[str] = []
    ranked = index._ranked

    def counted(*args: Any, **kwargs: Any) -> Any:
        whole.append(args[0])
        return ranked(*args, **kwargs)

    monkeypatch.setattr(index, "_ranked", counted)
    requests = [*_requests()[:: 2 if name == "github" else 6], f"{UNSEEN} it"]
    for query in requests:
        for limit in (1, 5, 20):
            assert index.search(query, limit=limit) == reference_fused(index, query, limit=limit), (
                query,
                limit,
            )
    # the first places settle almost every request without the whole lexical ranking
    assert len(whole) < len(requests) / 4, (len(whole), len(requests))


def test_scopes_fuse_as_the_whole_ranking_does(indexes: dict[str, ToolIndex]) -> None:
    for index in indexes.values():
        scopes = sorted({s for d in index._docs for _, need in d.tools for s in need})
        for held in (scopes[::2], scopes[1::3]):
            for query in _requests()[::9]:
                assert index.search(query, scopes=held, limit=5) == reference_fused(index, query, held, 5), (
                    query,
                    held,
                )


WORDS = ["list", "get", "delete", "the", "all", "repos", "issue", "label", "PR", "comment", "org", "team"]
WORDS += ["lock", UNSEEN, "merge", "12", "from", "which", "stop", "following", "star", "secret", "it"]


@settings(max_examples=examples(60), deadline=None)
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=10), limit=st.integers(0, 12))
def test_generated_requests_fuse_as_the_whole_ranking_does(
    indexes: dict[str, ToolIndex], words: list[str], limit: int
) -> None:
    query = " ".join(words)
    for index in indexes.values():
        assert index.search(query, limit=limit) == reference_fused(index, query, limit=limit), (query, limit)


def test_a_model_that_fails_on_the_request_ranks_lexically(
    indexes: dict[str, ToolIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`DenseIndex.similarity` None (the model failed): the lexical ranking, as `fuse` returns it."""
    index = indexes["replicated"]
    assert index._dense is not None
    monkeypatch.setattr(index._dense, "similarity", lambda text: None)
    for query in _requests()[::11]:
        assert index.search(query, limit=5) == reference_fused(index, query, limit=5), query


def test_first_places_that_cannot_settle_fall_back_to_the_whole_ranking(
    indexes: dict[str, ToolIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the lexical ranking's first `limit` places alone, a lexical hit below them could still take a
    place by its dense share: `fuse_top` says so (None) and the whole ranking is fused, the same hits."""
    from toolgen.runtime.serving import tool_index

    monkeypatch.setattr(tool_index, "_DENSE_LEXICAL", 1)
    index = indexes["replicated"]
    whole: list[str] = []
    ranked = index._ranked

    def counted(*args: Any, **kwargs: Any) -> Any:
        whole.append(args[0])
        return ranked(*args, **kwargs)

    monkeypatch.setattr(index, "_ranked", counted)
    for query in _requests()[::13]:
        assert index.search(query, limit=5) == reference_fused(index, query, limit=5), query
    assert whole
