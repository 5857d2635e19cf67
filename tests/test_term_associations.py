"""benchmarks/term_associations.py: the association table learned across APIs is deterministic, never
reads an excluded provider, relates words that keep company in several providers' operations; and
the expansion it was measured with never lets an operation that names only associated words outrank
one that names the request's own word, nor pads a request that names nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.benchmarks import benchmark_module

pytest.importorskip("numpy")
bench = benchmark_module("term_associations")


def _spec_of(ops: list[tuple[str, str]]) -> dict[str, Any]:
    """A spec whose operations are (path, summary) GETs."""
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            path: {
                "get": {
                    "summary": summary,
                    "operationId": f"op{i}",
                    "parameters": [{"$ref": "#/components/parameters/Key"}],
                }
            }
            for i, (path, summary) in enumerate(ops)
        },
        "components": {"parameters": {"Key": {"name": "apiKey", "in": "header"}}},
    }


def _corpus(root: Path) -> Path:
    api = root / "api"
    shops = ["shopa.com.json", "shopb.io.json", "shopc.net/v1.json", "shopc.net/v2.json"]
    for i, name in enumerate(shops):
        path = api / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(
                _spec_of(
                    [
                        ("/shipments", "Ship an order with a carrier"),
                        ("/shipments/{id}", "Track a shipment by carrier tracking number"),
                        ("/orders", "List the orders of a shopper"),
                        ("/weather", f"Forecast of the weather, run {i}"),
                    ]
                )
            ),
            encoding="utf-8",
        )
    # an excluded provider: its words must never reach the table
    (api / "stripe.com.json").write_text(
        json.dumps(
            _spec_of(
                [
                    ("/zorbles", "Ship zorbles with a carrier"),
                    ("/zorbles/{id}", "Ship a zorble with a carrier"),
                ]
                * 3
            )
        ),
        encoding="utf-8",
    )
    return root


def test_table_is_deterministic_and_reads_no_excluded_provider(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    settings = bench.Settings(min_specs=2, min_pair_specs=2, min_providers=2)
    first = json.dumps(bench.learn(corpus, settings), sort_keys=True)
    second = json.dumps(bench.learn(corpus, settings), sort_keys=True)
    assert first == second
    data = json.loads(first)
    assert data["provenance"]["specs"] == 4  # stripe.com left out
    assert "zorbl" not in first
    neighbours = dict(data["stems"]["ship"])
    assert "carrier" in neighbours and all(isinstance(n, int) and 1 <= n <= 100 for n in neighbours.values())
    assert "weather" not in neighbours  # never in the same operation as "ship"
    # a pair seen in one provider only (shopc.net's two versions) teaches nothing
    assert bench.learn(corpus, bench.Settings(min_specs=2, min_pair_specs=2, min_providers=5))["stems"] == {}


def _package() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    ops = [
        ("list_shipments", "/shipments", "List shipments to follow a delivery."),
        ("list_carriers", "/carriers", "List carriers and their tracking numbers."),
        ("list_orders", "/orders", "List the orders."),
    ]
    policy = {
        "tools": [
            {
                "tool": name,
                "intent": name,
                "effect": "read",
                "mode": "read",
                "operation": {"method": "GET", "path": path, "id": name},
                "permission": [],
            }
            for name, path, _ in ops
        ]
    }
    catalog = [
        {
            "name": name,
            "title": text,
            "description": text,
            "inputSchema": {"type": "object", "properties": {}},
        }
        for name, _, text in ops
    ]
    return policy, catalog


def test_expansion_never_outranks_an_exact_match_nor_pads() -> None:
    policy, catalog = _package()
    table = {"deliveri": (("carrier", 100),), "zork": (("carrier", 100), ("order", 100))}
    index = bench.ExpandedIndex(policy, catalog, table=table, weight=1.0, neighbours=8, least=1, gate="all")
    hits = [h.tool for h in index.search("show each delivery")]
    assert hits[0] == "list_shipments"  # names "delivery" itself
    assert "list_carriers" in hits  # brought in by its association only, ranked below
    scores = {h.tool: h.score for h in index.search("show each delivery")}
    assert scores["list_carriers"] < scores["list_shipments"]
    # a request naming nothing the API says finds nothing, whatever its words are associated with
    assert index.search("show each zork") == []
    # weight 0: the ranking of ToolIndex.search itself
    plain = bench.ExpandedIndex(policy, catalog, table=table, weight=0.0, neighbours=8, least=1, gate="all")
    assert [h.tool for h in plain.search("show each delivery")] == ["list_shipments"]
