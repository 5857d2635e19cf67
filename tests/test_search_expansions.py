"""Search expansions in the intent map: `examples` (requests in users' words, per intent and per
toolset), `use_when` and `not_for`. Tool search indexes the examples in their own table, the
descriptions carry the guidance, the `Not for:` sentence never makes a tool match, the runtime's
fallback analysis ranks as `search.json` does, and lint checks the requests: length, duplicates, and a
request that tool search ranks on another tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.support.build import TICKETS_SPEC_PATH, build

from toolgen.cli import main
from toolgen.runtime.serving.tool_index import SEARCH_FILE, ToolIndex
from toolgen.search.text_index import search_documents

#: words no text of the Tickets API uses: only an example can make a tool match them
CHASE = "chase up the stale complaints"
NOT_FOR = "bulk exports of archived paperwork"

MAP = f"""
auth:
  oauth: {{secret: TICKETS_TOKEN}}
toolsets:
  support:
    description: Support tickets and their history.
    examples: ["what happened to the printer jam case"]
tools:
  list_tickets:
    operation: listTickets
    effect: read
    permission: ticket:read
    toolset: support
    examples: ["{CHASE}", "which customers are still waiting"]
    use_when: the user wants several tickets at once
    not_for: {NOT_FOR}
    pagination: {{style: cursor, cursor: starting_after, limit: limit, items: data, has_more: has_more,
                 cursor_from_item: id}}
  get_ticket:
    operation: getTicket
    effect: read
    permission: ticket:read
    toolset: support
  ticket_history:
    operation: getTicketHistory
    effect: read
    permission: ticket:read
"""


def _index(folder: Path) -> ToolIndex:
    return ToolIndex.from_dir(folder)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("expansions"), TICKETS_SPEC_PATH, MAP, emit="mcp,policy").out


def test_rows_and_toolsets_carry_the_examples_and_not_for(built: Path) -> None:
    policy = json.loads((built / "policy.json").read_text(encoding="utf-8"))
    row = next(r for r in policy["tools"] if r["tool"] == "list_tickets")
    assert row["examples"] == [CHASE, "which customers are still waiting"]
    assert row["not_for"] == NOT_FOR
    other = next(r for r in policy["tools"] if r["tool"] == "get_ticket")
    assert other["examples"] == [] and other["not_for"] is None
    assert policy["toolsets"] == [
        {
            "name": "support",
            "description": "Support tickets and their history.",
            "loading": "eager",
            "origin": "declared",
            "examples": ["what happened to the printer jam case"],
        }
    ]


def test_the_description_says_when_to_use_it_and_what_not_for(built: Path) -> None:
    entry = next(
        e for e in json.loads((built / "mcp.json").read_text(encoding="utf-8")) if e["name"] == "list_tickets"
    )
    assert "Use when: the user wants several tickets at once." in entry["description"]
    assert f"Not for: {NOT_FOR}." in entry["description"]


def test_a_request_in_an_example_s_words_finds_its_tool(built: Path) -> None:
    hits = _index(built).search(CHASE)
    assert hits and hits[0].tool == "list_tickets", hits


def test_without_the_example_the_same_request_finds_nothing(tmp_path: Path) -> None:
    plain = build(tmp_path, TICKETS_SPEC_PATH, MAP.replace(f'"{CHASE}", ', ""), emit="mcp,policy").out
    assert [h.tool for h in _index(plain).search(CHASE)] != ["list_tickets"]
    assert not any(h.tool == "list_tickets" for h in _index(plain).search("chase stale complaints"))


def test_a_toolset_example_reaches_each_of_its_tools_and_no_other(built: Path) -> None:
    found = {h.tool for h in _index(built).search("printer jam case", limit=10)}
    assert found == {"list_tickets", "get_ticket"}


def test_what_a_tool_is_not_for_never_makes_it_match(built: Path) -> None:
    assert _index(built).search(NOT_FOR) == []
    fields = json.loads((built / SEARCH_FILE).read_text(encoding="utf-8"))["documents"]
    body = next(d for d in fields if d["intent"] == "list_tickets")["fields"]["body"]
    assert "archiv" not in body and "paperwork" not in body


def test_the_fallback_analysis_ranks_as_the_written_index(built: Path) -> None:
    policy = json.loads((built / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((built / "mcp.json").read_text(encoding="utf-8"))
    written = json.loads((built / SEARCH_FILE).read_text(encoding="utf-8"))["documents"]
    assert search_documents(policy, catalog) == written
    analysed = ToolIndex(policy, catalog)
    for query in (CHASE, "printer jam case", "which customers are still waiting"):
        assert analysed.search(query) == _index(built).search(query)


def _lint(tmp_path: Path, body: str) -> tuple[int, str]:
    intent = tmp_path / "api.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(TICKETS_SPEC_PATH))}\napi: {{name: api}}\n{body}",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["lint", str(intent)], catch_exceptions=False)
    return result.exit_code, result.output


def test_lint_reports_short_duplicate_and_misranked_requests_at_their_lines(tmp_path: Path) -> None:
    body = MAP.replace('"which customers are still waiting"', '"refund", "list the tickets history"') + (
        '    examples: ["list the tickets history"]\n'
    )  # ticket_history's own request, also on list_tickets
    code, out = _lint(tmp_path, body)
    lines = body.count("\n")
    assert code == 0, out
    assert "examples-length" in out and "'refund' has 1 word(s)" in out
    assert (
        "examples-duplicate" in out
        and "ticket_history: request 'list the tickets history' is also given for list_tickets" in out
    )
    assert "example-ranks-other" in out
    # located in the map: the duplicate at ticket_history's examples (the map's last line)
    dup = next(line for line in out.splitlines() if "examples-duplicate" in line)
    assert f"api.yaml:{lines + 3}:" in dup, dup


def test_a_map_whose_requests_rank_their_own_tools_has_no_finding(tmp_path: Path) -> None:
    code, out = _lint(tmp_path, MAP)
    assert code == 0
    assert not any(
        rule in out for rule in ("examples-length", "examples-duplicate", "example-ranks-other")
    ), out


@pytest.mark.parametrize(
    "bad,problem",
    [
        ('examples: ["   "]', "examples.0"),
        ('examples: ["ab"]', "examples.0"),
        (f"examples: {json.dumps(['one more request'] * 11)}", "examples"),
        ('use_when: ""', "use_when"),
        (f'not_for: "{"x" * 301}"', "not_for"),
    ],
)
def test_expansions_out_of_bounds_are_located_errors(tmp_path: Path, bad: str, problem: str) -> None:
    body = MAP.replace(
        "    toolset: support\n    examples:", f"    {bad}\n    toolset: support\n    examples:", 1
    )
    body = body.replace(f'    examples: ["{CHASE}", "which customers are still waiting"]\n', "", 1)
    code, out = _lint(tmp_path, body)
    assert code != 0 and problem in out and "api.yaml:" in out, out


INCLUDED = f"""
auth:
  oauth: {{secret: TICKETS_TOKEN}}
include: [{{match: "*"}}]
examples:
  listTickets: ["{CHASE}"]
  GET /tickets/{{ticket_id}}/history: ["what happened to the printer jam case"]
"""


def test_top_level_examples_reach_the_tools_an_include_group_makes(tmp_path: Path) -> None:
    out = build(tmp_path, TICKETS_SPEC_PATH, INCLUDED, emit="mcp,policy").out
    policy = json.loads((out / "policy.json").read_text(encoding="utf-8"))
    examples = {r["tool"]: r["examples"] for r in policy["tools"] if r["examples"]}
    history = next(r["tool"] for r in policy["tools"] if r["operation"]["id"] == "getTicketHistory")
    listing = next(r["tool"] for r in policy["tools"] if r["operation"]["id"] == "listTickets")
    assert examples == {listing: [CHASE], history: ["what happened to the printer jam case"]}
    assert _index(out).search(CHASE)[0].tool == listing


def test_top_level_examples_of_an_unknown_operation_are_a_located_error(tmp_path: Path) -> None:
    body = INCLUDED + '  getTickt: ["find the ticket about the printer"]\n'
    code, out = _lint(tmp_path, body)
    assert code != 0 and "examples-operation-unknown" in out and "'getTickt' is not an operation" in out, out
    assert f"api.yaml:{3 + body.count(chr(10))}:" in out, out


def test_the_description_carries_the_requests_that_fit_and_search_indexes_them_once(built: Path) -> None:
    entry = next(
        e for e in json.loads((built / "mcp.json").read_text(encoding="utf-8")) if e["name"] == "list_tickets"
    )
    assert f'Examples: "{CHASE}"; "which customers are still waiting". Read-only.' in entry["description"]
    documents = json.loads((built / SEARCH_FILE).read_text(encoding="utf-8"))["documents"]
    fields = next(d for d in documents if d["intent"] == "list_tickets")["fields"]
    assert "chase" in fields["examples"] and "chase" not in fields["body"] and "exampl" not in fields["body"]


def test_requests_beyond_the_description_budget_are_left_out_of_it_not_out_of_search(tmp_path: Path) -> None:
    many = [f"request number {n} about overdue complaint {n}" for n in range(10)]
    body = MAP.replace("defaults:", "") + "defaults: {description_max_chars: 280}\n"
    body = body.replace(f'["{CHASE}", "which customers are still waiting"]', json.dumps(many))
    out = build(tmp_path, TICKETS_SPEC_PATH, body, emit="mcp,policy").out
    entry = next(
        e for e in json.loads((out / "mcp.json").read_text(encoding="utf-8")) if e["name"] == "list_tickets"
    )
    shown = entry["description"].split("Examples: ", 1)[1]
    assert 0 < shown.count('"') // 2 < len(many)
    assert len(entry["description"].split(" Read-only.")[0]) <= 280
    row = next(
        r
        for r in json.loads((out / "policy.json").read_text(encoding="utf-8"))["tools"]
        if r["tool"] == "list_tickets"
    )
    assert row["examples"] == many
    assert _index(out).search("overdue complaint 9")[0].tool == "list_tickets"
