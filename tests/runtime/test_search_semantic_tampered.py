"""A tampered ``search.json`` of the semantic format (`toolgen.search_vectors.SEMANTIC_FORMAT`): the
file ships inside a generated package, where a pull request can change it. Whatever its
``semantic`` value holds (wrong dimensions, NaN or infinity, numbers too large for a float, text
where numbers go, missing members, a dimension count that would allocate gigabytes per request),
loading the index never raises and a search neither raises nor stalls: an unusable ``semantic``
value is dropped at load and the ranking is the lexical one, the hits it gives without the vectors."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest

from toolgen.runtime import Actor, Registry
from toolgen.runtime.search import ToolIndex
from toolgen.runtime.search_tool import ToolSearch
from toolgen.search_vectors import SEMANTIC_FORMAT, SemanticIndex, semantic_index

pytest.importorskip("numpy")

PACKAGE = Path(__file__).resolve().parents[2] / "generated" / "tickets"
QUERIES = ["delete a ticket", "what happened to the ticket", "add a followup", "list open tickets"]


@pytest.fixture(scope="module")
def semantic_file() -> dict[str, Any]:
    """The generated tickets package's search.json, with the vectors the option writes (format 3)."""
    if not (PACKAGE / "search.json").is_file():
        pytest.skip("generated/tickets is not built")
    lexical = json.loads((PACKAGE / "search.json").read_text(encoding="utf-8"))
    return {**lexical, "format": SEMANTIC_FORMAT, "semantic": semantic_index(lexical["documents"])}


def _lsa_terms(value: dict[str, Any]) -> dict[str, Any]:
    terms: dict[str, Any] = value["semantic"]["model"]["terms"]
    return terms


def _first_term(value: dict[str, Any]) -> list[Any]:
    entry: list[Any] = next(iter(_lsa_terms(value).values()))
    return entry


def _tamper(kind: str, value: dict[str, Any]) -> None:
    semantic = value["semantic"]
    model = semantic["model"]
    if kind == "idf text":
        _first_term(value)[0] = "heavy"
    elif kind == "idf object":
        _first_term(value)[0] = {"x": 1}
    elif kind == "idf huge integer":
        _first_term(value)[0] = 10**400
    elif kind == "component text":
        _first_term(value)[1][0] = "0.5"
    elif kind == "component null":
        _first_term(value)[1][0] = None
    elif kind == "idf nan":
        for entry in _lsa_terms(value).values():
            entry[0] = float("nan")
    elif kind == "component infinity":
        for entry in _lsa_terms(value).values():
            entry[1][0] = float("inf")
    elif kind == "document nan":
        semantic["documents"][0][0] = float("nan")
    elif kind == "document infinity":
        for row in semantic["documents"]:
            row[0] = float("inf")
    elif kind == "document text":
        semantic["documents"][0][0] = "0.25"
    elif kind == "document width":
        semantic["documents"] = [row + [0.0] for row in semantic["documents"]]
    elif kind == "document huge":
        semantic["documents"][0][0] = 1e300
    elif kind == "ragged documents":
        semantic["documents"][0] = semantic["documents"][0][:-1]
    elif kind == "dimensions":
        model["dimensions"] = 10**9
        model["terms"] = {}
        semantic["documents"] = [[0.5] for _ in semantic["documents"]]
    elif kind == "dimensions bool":
        model["dimensions"] = True
        model["terms"] = {t: [1.0, [1.0]] for t in model["terms"]}
    elif kind == "no model":
        del semantic["model"]
    elif kind == "no documents":
        del semantic["documents"]
    elif kind == "terms list":
        model["terms"] = list(model["terms"])
    elif kind == "term entry short":
        _lsa_terms(value)[next(iter(_lsa_terms(value)))] = [1.0]
    else:
        raise AssertionError(kind)


KINDS = ["idf text", "idf object", "idf huge integer", "component text", "component null", "idf nan",
         "component infinity", "document nan", "document infinity", "document text", "document huge", "document width",
         "ragged documents", "dimensions", "dimensions bool", "no model", "no documents", "terms list",
         "term entry short"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_tampered_semantic_value_falls_back_to_the_lexical_ranking(
        tmp_path: Path, semantic_file: dict[str, Any], kind: str) -> None:
    value = copy.deepcopy(semantic_file)
    assert SemanticIndex.load(value["semantic"], len(value["documents"])) is not None  # untouched: used
    _tamper(kind, value)
    assert SemanticIndex.load(value["semantic"], len(value["documents"])) is None
    for name in ("policy.json", "mcp.json"):
        (tmp_path / name).write_bytes((PACKAGE / name).read_bytes())
    (tmp_path / "search.json").write_text(json.dumps(value), encoding="utf-8")  # NaN and Infinity as Python writes them
    lexical = ToolIndex.from_dir(PACKAGE)  # the repository's package: format 2, no vectors
    started = time.process_time()
    index = ToolIndex.from_dir(tmp_path)
    for query in QUERIES:
        assert index.search(query, limit=5) == lexical.search(query, limit=5), (kind, query)
    assert time.process_time() - started < 20  # no request allocates per tampered dimension
    search = ToolSearch(Registry.from_dir(tmp_path, base_url="http://127.0.0.1:9"))
    scopes = {str(s) for row in json.loads((PACKAGE / "policy.json").read_text(encoding="utf-8"))["tools"]
              for s in row.get("permission") or []}
    result = search.run({"query": QUERIES[0], "limit": 5}, Actor.of("reader", sorted(scopes)))
    assert result.ok and result.result is not None and result.result["hits"]
    json.dumps(result.result, allow_nan=False)  # every score a JSON number
