"""The catalog breakdown of `benchmarks/vs_fastmcp.py`: its parts must add up to the catalog's total,
with a small non-negative JSON envelope (a part counted twice, or one missed, shows up here)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support.benchmarks import benchmark_module
from tests.support.build import REPO

bench = benchmark_module("vs_fastmcp")

FASTMCP_LIKE = [
    {
        "name": "issues_get",
        "description": "Get an issue. " * 20,
        "inputSchema": {"type": "object", "properties": {"owner": {"type": "string"}}, "required": ["owner"]},
        "outputSchema": {
            "type": "object",
            "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
        },
    },
    {"name": "repos_delete", "description": "Delete.", "inputSchema": {"type": "object"}},
]


def _check(parts: dict[str, int], tools: int) -> None:
    """Parts sum to the total; the envelope (keys, braces, wrappers) is at most ~20 tokens a tool."""
    assert sum(parts[p] for p in bench.PARTS) == parts["total"]
    assert 0 <= parts["envelope"] <= 20 * tools + 0.05 * parts["total"], parts


@pytest.mark.parametrize("api", ["github", "stripe", "tickets"])
@pytest.mark.parametrize("dialect", ["mcp", "openai", "anthropic"])
def test_parts_of_committed_catalogs_sum_to_the_total(api: str, dialect: str) -> None:
    tools = json.loads((REPO / "generated" / api / f"{dialect}.json").read_text(encoding="utf-8"))
    parts = bench.catalog_parts(tools, dialect)
    _check(parts, len(tools))
    assert parts["inputs"] > 0 and parts["descriptions"] > 0 and parts["names"] > 0
    assert (parts["annotations"] > 0) == (dialect == "mcp")


@pytest.mark.parametrize("dialect", ["mcp", "openai", "anthropic"])
def test_fastmcp_tools_in_each_dialect(dialect: str) -> None:
    tools: list[dict[str, Any]] = bench.fastmcp_in_dialect(FASTMCP_LIKE, dialect)
    parts = bench.catalog_parts(tools, dialect)
    _check(parts, len(tools))
    assert (parts["outputs"] > 0) == (dialect == "mcp")  # only MCP carries output schemas
    if dialect == "openai":
        assert tools[0]["function"]["parameters"] == FASTMCP_LIKE[0]["inputSchema"]
    if dialect == "anthropic":
        assert tools[1]["input_schema"] == {"type": "object"}


def test_a_part_counted_twice_breaks_the_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    real = bench.tool_fields

    def doubled(tool: dict[str, Any], dialect: str) -> dict[str, Any]:
        fields = real(tool, dialect)
        return {**fields, "outputs": fields["inputs"]}  # inputs counted again as outputs

    monkeypatch.setattr(bench, "tool_fields", doubled)
    parts = bench.catalog_parts(bench.fastmcp_in_dialect(FASTMCP_LIKE, "anthropic"), "anthropic")
    with pytest.raises(AssertionError):
        _check(parts, len(FASTMCP_LIKE))


def test_breakdown_table_has_a_row_per_dialect_and_side() -> None:
    tools = {
        d: json.loads((REPO / "generated" / "github" / f"{d}.json").read_text(encoding="utf-8"))
        for d in bench.DIALECTS
    }
    cat = {
        "dialects": {
            d: {
                "toolgen": bench.catalog_parts(tools[d], d),
                "fastmcp": bench.catalog_parts(bench.fastmcp_in_dialect(FASTMCP_LIKE, d), d),
            }
            for d in bench.DIALECTS
        }
    }
    rows = bench.breakdown_table(cat)
    assert len(rows) == 2 + 2 * len(bench.DIALECTS)
    assert all(row.count("|") == rows[0].count("|") for row in rows)


def test_a_composite_row_counts_the_operations_of_its_steps() -> None:
    """A composite's policy row has no operation of its own (`operation: null`): the benchmark reads
    its steps' operations, so the committed GitHub package still covers exactly the 16 it compares."""
    rows = json.loads((REPO / "generated" / "github" / "policy.json").read_text(encoding="utf-8"))["tools"]
    composite = next(row for row in rows if row["tool"] == "get_issue_thread")
    assert composite["operation"] is None
    assert bench.row_operations(composite) == ["issues/get", "issues/list-comments", "pulls/get"]
    assert sorted({op for row in rows for op in bench.row_operations(row)}) == sorted(bench.SIXTEEN)


def test_composite_note_gives_the_catalog_without_composites() -> None:
    assert bench.composite_note({"tools": 3, "tokens": 120}, 2000) == []  # none, or a result from before
    [_, line] = bench.composite_note({"composites": ["get_thread"], "tokens_without_composites": 90}, 2000)
    assert (
        "1 is composite (`get_thread`" in line and "90 tokens, ratio **0.0450** (1/22.2; target: met)" in line
    )
    [_, line] = bench.composite_note({"composites": ["a", "b"], "tokens_without_composites": 150}, 2000)
    assert "2 are composite (`a`, `b`" in line and "target: missed" in line
