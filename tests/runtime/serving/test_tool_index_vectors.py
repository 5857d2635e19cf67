"""The semantic half of tool search (`toolgen.search.vector_index`, the ``search: {semantic: lsa}``
option of toolgen.yaml): vectors stored deterministically,
an association the API's own text teaches is learned, fusion never pads results with tools that
match nothing, and an embedder the runtime does not have falls back to the lexical ranking."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.runtime.serving.tool_index import ToolIndex
from toolgen.search.text_index import analyse_query, content_terms
from toolgen.search.vector_index import (
    DIGITS,
    FUSION_WEIGHT,
    LSA_NAME,
    Embedder,
    LsaEmbedder,
    SemanticIndex,
    semantic_index,
    stem_terms,
)

REPO = Path(__file__).resolve().parents[3]
GENERATED = REPO / "generated"


def _doc(intent: str, name: str, title: str, obj: str, body: str, action: str) -> dict[str, Any]:
    return {
        "intent": intent,
        "tools": [[intent, []]],
        "toolset": None,
        "operation": intent,
        "actions": [action],
        "fields": {
            "name": name,
            "title": title,
            "keywords": "",
            "object": obj,
            "nouns": obj,
            "verbs": f"{action} act{action}",
            "args": "",
            "body": body,
            "output": "",
        },
    }


#: a small e-signature API: the envelope operations talk of signing and signers, the others of
#: users and branding; "signature" and "signer" appear in some envelope operations only
DOCS = [
    _doc(
        "create_envelope",
        "create envelope",
        "create an envelope",
        "envelopes",
        "send documents to signers for signature envelope",
        "create",
    ),
    _doc(
        "get_envelope",
        "get envelope",
        "get an envelope",
        "envelopes",
        "the envelope status and its signers signature progress",
        "get",
    ),
    _doc(
        "void_envelope",
        "void envelope",
        "void an envelope",
        "envelopes",
        "void an envelope so its signers can no longer sign",
        "void",
    ),
    _doc(
        "list_envelopes",
        "list envelopes",
        "list envelopes",
        "envelopes",
        "the envelopes sent for signing by signers",
        "list",
    ),
    _doc(
        "resend_envelope",
        "resend envelope",
        "resend an envelope",
        "envelopes",
        "remind the signers of an envelope to sign",
        "create",
    ),
    _doc("get_user", "get user", "get a user", "users", "the profile of an account user and email", "get"),
    _doc(
        "list_users", "list users", "list users", "users", "the users of the account and their email", "list"
    ),
    _doc(
        "delete_user",
        "delete user",
        "delete a user",
        "users",
        "close the account of a user by email",
        "delete",
    ),
    _doc(
        "get_brand", "get brand", "get a brand", "brands", "the logo and colours of the account brand", "get"
    ),
    _doc(
        "update_brand",
        "update brand",
        "update a brand",
        "brands",
        "change the logo and colours of a brand",
        "update",
    ),
    _doc("list_brands", "list brands", "list brands", "brands", "the brands of the account logo", "list"),
    _doc(
        "update_user",
        "update user",
        "update a user",
        "users",
        "change the signature image of a user",
        "update",
    ),
]


def _index(semantic: Any = None, embedder: Embedder | None = None) -> ToolIndex:
    """The index of `DOCS` with `semantic` (default: their LSA vectors)."""
    return ToolIndex(
        {},
        [],
        documents=DOCS,
        semantic=semantic_index(DOCS) if semantic is None else semantic,
        embedder=embedder,
    )


def test_stems_are_the_lexical_index_stems() -> None:
    assert stem_terms(["Signers signing envelopes", ""]) == [{"signer": 1, "sign": 1, "envelop": 1}, {}]


def test_the_stored_vectors_are_deterministic_and_rounded() -> None:
    first = json.dumps(semantic_index(DOCS), sort_keys=True)
    assert first == json.dumps(semantic_index(json.loads(json.dumps(DOCS))), sort_keys=True)
    value = json.loads(first)
    assert value["embedder"] == LSA_NAME and len(value["documents"]) == len(DOCS)
    numbers = [x for row in value["documents"] for x in row]
    numbers += [x for idf, vector in value["model"]["terms"].values() for x in (idf, *vector)]
    assert numbers and all(round(x, DIGITS) == x for x in numbers)
    assert all(abs(np.linalg.norm(row) - 1) < 1e-3 for row in value["documents"])
    assert LsaEmbedder.from_json(value["model"]) is not None
    assert LsaEmbedder.from_json({"dimensions": 3, "terms": {"x": [1.0, [0.1]]}}) is None


@pytest.mark.parametrize("api", ["github", "stripe"])
def test_the_option_stores_the_vectors_the_runtime_would_compute(api: str) -> None:
    """What `search_json` writes with ``search: {semantic: lsa}`` for the repository's packages."""
    from toolgen.emit.search_index import search_json

    policy = json.loads((GENERATED / api / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((GENERATED / api / "mcp.json").read_text(encoding="utf-8"))
    written = json.loads(json.dumps(search_json(policy, catalog, [], semantic="lsa")))
    assert written["semantic"] == json.loads(json.dumps(semantic_index(written["documents"])))
    with pytest.raises(ValueError, match=r"search\.semantic"):
        search_json(policy, catalog, [], semantic="bert")


def test_an_association_the_api_text_teaches_is_learned() -> None:
    """ "signature" is in two envelope operations' text and in one user operation's; the envelope
    operations keep company with the same words (signers, sign), so the word lands near them, and
    the user operation that says it ranks below the envelope ones that do."""
    index = SemanticIndex.load(semantic_index(DOCS), len(DOCS))
    assert index is not None
    similarity = dict(zip((d["intent"] for d in DOCS), index.similarity("signature"), strict=True))
    envelopes = [similarity[k] for k in ("void_envelope", "list_envelopes", "resend_envelope")]
    others = [similarity[k] for k in ("get_user", "list_users", "delete_user", "get_brand", "update_brand")]
    assert min(envelopes) > max(others) + 0.25
    assert min(similarity["create_envelope"], similarity["get_envelope"]) > similarity["update_user"] + 0.3
    lexical = [h.tool for h in ToolIndex({}, [], documents=DOCS, semantic={}).search("signature")]
    fused = [h.tool for h in _index().search("signature")]
    assert sorted(fused) == sorted(lexical) == ["create_envelope", "get_envelope", "update_user"]
    assert lexical.index("update_user") < lexical.index("get_envelope") and fused[-1] == "update_user"


def test_gibberish_matches_nothing() -> None:
    assert _index().search("qwzxv flurbix") == []
    index = SemanticIndex.load(semantic_index(DOCS), len(DOCS))
    assert index is not None and index.similarity("qwzxv").tolist() == [0.0] * len(DOCS)


WORDS = sorted(
    {w for d in DOCS for f in ("name", "body") for w in d["fields"][f].split()}
    | {"qwzxv", "payment", "invoice", "delete", "show", "all", "my", "the"}
)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5))
def test_fusion_never_pads_with_tools_that_match_nothing(words: list[str]) -> None:
    """With the semantic ranking fused in, the hits are exactly the lexical index's (every one names a
    content word of the request), in the same number: meaning reorders, it brings in nothing."""
    query = " ".join(words)
    fused = _index().search(query, limit=20)
    lexical = ToolIndex({}, [], documents=DOCS, semantic={}).search(query, limit=20)
    assert sorted(h.tool for h in fused) == sorted(h.tool for h in lexical)
    terms, _, _, actions = analyse_query(query)
    named = _index()._matching(content_terms([*terms, *sorted(actions)]))
    rows = {d["intent"]: i + 1 for i, d in enumerate(DOCS)}
    assert all(rows[h.tool] in named for h in fused)


class SynonymEmbedder:
    """A toy embedder standing for a real model: it knows that a letter is an envelope."""

    name = "toy-synonyms"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            words = text.split()
            out.append(
                [
                    float(sum(w in ("envelope", "envelopes", "letter") for w in words)),
                    float(sum(w in ("user", "users", "person") for w in words)),
                    0.01,
                ]
            )
        return out


def test_an_embedder_given_at_build_time_is_used_only_when_the_runtime_has_it() -> None:
    stored = json.loads(json.dumps(semantic_index(DOCS, SynonymEmbedder())))
    assert stored["embedder"] == "toy-synonyms" and stored["model"] is None
    assert isinstance(SynonymEmbedder(), Embedder)
    lexical = ToolIndex({}, [], documents=DOCS, semantic={})
    # with the embedder: a "letter" is an envelope, so of the operations that name email or signers,
    # the envelope ones score higher (by 1 + FUSION_WEIGHT: their cosine is about 1), the user ones not
    query = "email the signers a letter"
    with_model = {h.tool: h.score for h in _index(stored, SynonymEmbedder()).search(query, limit=20)}
    plain = {h.tool: h.score for h in lexical.search(query, limit=20)}
    assert sorted(with_model) == sorted(plain) and len(plain) > 3
    for tool, score in plain.items():
        expected = score * (1 + FUSION_WEIGHT) if "envelope" in tool else score
        assert with_model[tool] == pytest.approx(expected, rel=1e-3), tool
    # without it (or with another one of another name) the ranking is the lexical one alone
    other = type("Other", (SynonymEmbedder,), {"name": "other"})()
    for index in (_index(stored), _index(stored, other)):
        assert index._semantic is None
        for q in (query, "list the users", "void the envelope", "brand logo"):
            assert index.search(q) == lexical.search(q)


@pytest.mark.parametrize(
    "semantic",
    [
        {
            "embedder": LSA_NAME,
            "model": {"dimensions": 2, "terms": {}},
            "documents": [[1.0, 0.0]],
        },  # wrong count
        {"embedder": LSA_NAME, "model": "x", "documents": [[1.0]] * len(DOCS)},  # no model
        {"embedder": "unknown", "model": None, "documents": [[1.0]] * len(DOCS)},  # an embedder not given
        [1, 2],
    ],
)
def test_a_broken_semantic_value_falls_back_to_the_lexical_ranking(semantic: Any) -> None:
    assert SemanticIndex.load(semantic, len(DOCS)) is None
    assert _index(semantic).search("signature") == ToolIndex({}, [], documents=DOCS, semantic={}).search(
        "signature"
    )
    assert [h.tool for h in _index(semantic).search("signature")] == [
        "create_envelope",
        "update_user",
        "get_envelope",
    ]


def test_a_search_json_without_vectors_ranks_lexically(tmp_path: Path) -> None:
    import shutil

    folder = tmp_path / "github"
    shutil.copytree(GENERATED / "github", folder)
    path = folder / "search.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert "semantic" not in data  # the default build writes none
    data["format"] = 3
    path.write_text(json.dumps(data), encoding="utf-8")  # a format-3 file without its vectors
    index = ToolIndex.from_dir(folder)
    assert index._semantic is None
    assert [h.tool for h in index.search("lock the conversation", limit=3)]


class FillerEmbedder:
    """Operations with more filler words are nearer the request: the boost favours the documents
    BM25 ranks lower, so fusion reorders the places."""

    name = "toy-filler"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(t.split().count("filler")), 3.0] if "filler" in t else [1.0, 0.0] for t in texts]


def test_the_first_places_do_not_depend_on_the_limit() -> None:
    """Fusion leaves out documents that cannot reach the first `limit` places; the hits of a small
    limit are the head of a large one's, and the boost does reorder them."""
    docs = [
        _doc(f"op{i:02}", f"op{i:02}", "alpha", "things", " ".join(["alpha", *["filler"] * i]), "get")
        for i in range(30)
    ]
    docs += [_doc(f"other{i:02}", f"other{i:02}", "beta", "others", "beta gamma", "get") for i in range(90)]
    stored = json.loads(json.dumps(semantic_index(docs, FillerEmbedder())))
    index = ToolIndex({}, [], documents=docs, semantic=stored, embedder=FillerEmbedder())
    lexical = ToolIndex({}, [], documents=docs, semantic={})
    full = index.search("alpha", limit=100)
    assert len(full) == 30 and [h.tool for h in full] != [h.tool for h in lexical.search("alpha", limit=100)]
    for limit in range(1, 30):
        assert index.search("alpha", limit=limit) == full[:limit], limit


def test_stemming_is_reentrant_across_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    texts = [f"signers signing envelopes {i}" for i in range(20)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda t: stem_terms([t]), texts))
    assert all(r == [{"signer": 1, "sign": 1, "envelop": 1, str(i): 1}] for i, r in enumerate(results))
