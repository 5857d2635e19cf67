"""A tampered ``search.json`` of the semantic format (`toolgen.search.vector_index.SEMANTIC_FORMAT`): the
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
from toolgen.runtime.serving.search_tools import ToolSearch
from toolgen.runtime.serving.tool_index import ToolIndex
from toolgen.search.vector_index import SEMANTIC_FORMAT, SemanticIndex, semantic_index

pytest.importorskip("numpy")

PACKAGE = Path(__file__).resolve().parents[3] / "generated" / "tickets"
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


def _set_first(column: int, index: int | None, to: Any) -> Any:
    """Set the first LSA term's idf (`column` 0) or one component (`column` 1, `index`) to `to`."""

    def tamper(value: dict[str, Any]) -> None:
        if index is None:
            _first_term(value)[column] = to
        else:
            _first_term(value)[column][index] = to

    return tamper


def _set_all(column: int, index: int | None, to: Any) -> Any:
    """As `_set_first`, for every LSA term."""

    def tamper(value: dict[str, Any]) -> None:
        for entry in _lsa_terms(value).values():
            if index is None:
                entry[column] = to
            else:
                entry[column][index] = to

    return tamper


def _document(to: Any, every: bool = False) -> Any:
    """Set the first component of the first document's vector (or of every one) to `to`."""

    def tamper(value: dict[str, Any]) -> None:
        for row in value["semantic"]["documents"][: None if every else 1]:
            row[0] = to

    return tamper


def _huge_dimensions(value: dict[str, Any]) -> None:
    value["semantic"]["model"].update(dimensions=10**9, terms={})
    value["semantic"]["documents"] = [[0.5] for _ in value["semantic"]["documents"]]


def _bool_dimensions(value: dict[str, Any]) -> None:
    model = value["semantic"]["model"]
    model.update(dimensions=True, terms={t: [1.0, [1.0]] for t in model["terms"]})


def _short_entry(value: dict[str, Any]) -> None:
    _lsa_terms(value)[next(iter(_lsa_terms(value)))] = [1.0]


def _wider(value: dict[str, Any]) -> None:
    value["semantic"]["documents"] = [[*row, 0.0] for row in value["semantic"]["documents"]]


def _ragged(value: dict[str, Any]) -> None:
    value["semantic"]["documents"][0] = value["semantic"]["documents"][0][:-1]


def _terms_list(value: dict[str, Any]) -> None:
    value["semantic"]["model"]["terms"] = list(value["semantic"]["model"]["terms"])


TAMPER: dict[str, Any] = {
    "idf text": _set_first(0, None, "heavy"),
    "idf object": _set_first(0, None, {"x": 1}),
    "idf huge integer": _set_first(0, None, 10**400),
    "component text": _set_first(1, 0, "0.5"),
    "component null": _set_first(1, 0, None),
    "idf nan": _set_all(0, None, float("nan")),
    "component infinity": _set_all(1, 0, float("inf")),
    "document nan": _document(float("nan")),
    "document infinity": _document(float("inf"), every=True),
    "document text": _document("0.25"),
    "document huge": _document(1e300),
    "document width": _wider,
    "ragged documents": _ragged,
    "dimensions": _huge_dimensions,
    "dimensions bool": _bool_dimensions,
    "no model": lambda value: value["semantic"].pop("model"),
    "no documents": lambda value: value["semantic"].pop("documents"),
    "terms list": _terms_list,
    "term entry short": _short_entry,
}


@pytest.mark.parametrize("kind", sorted(TAMPER))
def test_a_tampered_semantic_value_falls_back_to_the_lexical_ranking(
    tmp_path: Path, semantic_file: dict[str, Any], kind: str
) -> None:
    value = copy.deepcopy(semantic_file)
    assert SemanticIndex.load(value["semantic"], len(value["documents"])) is not None  # untouched: used
    TAMPER[kind](value)
    assert SemanticIndex.load(value["semantic"], len(value["documents"])) is None
    for name in ("policy.json", "mcp.json"):
        (tmp_path / name).write_bytes((PACKAGE / name).read_bytes())
    (tmp_path / "search.json").write_text(
        json.dumps(value), encoding="utf-8"
    )  # NaN and Infinity as Python writes them
    lexical = ToolIndex.from_dir(PACKAGE)  # the repository's package: format 2, no vectors
    started = time.process_time()
    index = ToolIndex.from_dir(tmp_path)
    for query in QUERIES:
        assert index.search(query, limit=5) == lexical.search(query, limit=5), (kind, query)
    assert time.process_time() - started < 20  # no request allocates per tampered dimension
    search = ToolSearch(Registry.from_dir(tmp_path, base_url="http://127.0.0.1:9"))
    scopes = {
        str(s)
        for row in json.loads((PACKAGE / "policy.json").read_text(encoding="utf-8"))["tools"]
        for s in row.get("permission") or []
    }
    result = search.run({"query": QUERIES[0], "limit": 5}, Actor.of("reader", sorted(scopes)))
    assert result.ok and result.result is not None and result.result["hits"]
    json.dumps(result.result, allow_nan=False)  # every score a JSON number
