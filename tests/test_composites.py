"""Composite tools, the build side (docs/composites.md): the intent map's `composites:`, the plan in
policy.json (typed, round trip, refusal of malformed members), the lowering (step rows from the
ordinary tools' code, derived arguments, effect, permission, approval) and every located error."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.build import REPO, build

from toolgen.policy.format import (
    InputRef,
    LiteralValue,
    PolicyFormatError,
    StepRef,
    from_json,
    read_policy,
)

TICKETS = REPO / "specs" / "tickets.yaml"
TICKET_TOOLS = (
    (REPO / "intent_maps" / "tickets.yaml").read_text().split("\ntools:\n", 1)[1].split("\ncomposites:", 1)[0]
)

PIPELINE = """composites:
  followup_on_ticket:
    pattern: pipeline
    description: Read a ticket, then add a follow-up note to it.
    steps:
      - id: ticket
        operation: getTicket
        args: {ticket_id: $input/ticket_id}
      - id: followup
        operation: addFollowup
        args: {ticket_id: $ticket/id, note: $input/note, visibility: internal}
"""


def _with_tools(body: str) -> str:
    return "auth:\n  oauth: {secret: TICKETS_TOKEN}\ntools:\n" + TICKET_TOOLS + "\n" + body


# ---------------------------------------------------------------------------------------------
# policy.json: the plan's types


@pytest.mark.parametrize("api", ["tickets", "github", "stripe"])
def test_committed_composite_rows_read_back_typed(api: str) -> None:
    table = read_policy(REPO / "generated" / api / "policy.json")
    composites = [r for r in table.tools if r.composite is not None]
    assert composites, f"{api} has a composite example"
    for row in composites:
        assert row.operation_id == row.method == row.path == "" and row.to_json()["operation"] is None
        assert row.to_json()["request"] == {
            "bindings": [],
            "content_type": None,
            "encoding": "none",
            "fixed": [],
            "max_body_bytes": None,
        }
        plan = row.composite
        assert plan is not None
        seen: set[str] = set()
        for step in plan.steps:
            assert set(step.needs) <= seen  # a valid execution order
            seen.add(step.id)
            assert step.row.composite is None and step.row.tool.endswith("." + step.id)
    assert from_json(table.to_json()) == table


_pointer = st.lists(st.text(alphabet="ab/~0", max_size=3), max_size=3).map(
    lambda ts: "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in ts)
)
_ref = st.one_of(st.builds(InputRef, _pointer), st.builds(StepRef, st.sampled_from(["a", "b_2"]), _pointer))
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=4))
_keys = st.sampled_from(["$ref", "$literal", "pointer", "x", "step"])
_literal = st.recursive(
    st.one_of(_scalar, _ref),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)),
    max_leaves=8,
)


@given(value=st.one_of(_ref, st.builds(LiteralValue, _literal)))
def test_mapping_values_round_trip(value: Any) -> None:
    """A literal object that looks like a reference (a `$ref` or `$literal` member) stays a literal."""
    table = read_policy(REPO / "generated" / "tickets" / "policy.json")
    row = next(r for r in table.tools if r.composite is not None)
    assert row.composite is not None
    step = row.composite.steps[0]
    changed = replace(step, args={"ticket_id": value})
    plan = replace(row.composite, steps=(changed, *row.composite.steps[1:]))
    table2 = replace(table, tools=tuple(replace(r, composite=plan) if r is row else r for r in table.tools))
    again = from_json(json.loads(json.dumps(table2.to_json())))
    assert again == table2


def _composite_row_json(api: str = "tickets") -> tuple[dict[str, Any], int]:
    data = json.loads((REPO / "generated" / api / "policy.json").read_text())
    index = next(i for i, r in enumerate(data["tools"]) if r["tool"] == "record_escalate_ticket")
    return data, index


@pytest.mark.parametrize(
    "change, pointer",
    [
        (lambda r: r.update(composite=None), "/composite"),
        (lambda r: r.update(operation={"id": "x", "method": "GET", "path": "/"}), "/operation"),
        (lambda r: r["composite"].update(pattern="loop"), "/composite/pattern"),
        (lambda r: r["composite"]["steps"][0].update(needs=["followup"]), "/composite/steps/0/needs"),
        (
            lambda r: r["composite"]["steps"][1]["args"].update(note={"$ref": "elsewhere", "pointer": ""}),
            "/composite/steps/1/args/note/$ref",
        ),
        (
            lambda r: r["composite"]["steps"][1]["args"].update(note={"pointer": "/x"}),
            "/composite/steps/1/args/note",
        ),
        (
            lambda r: r["composite"]["steps"][1]["args"].update(note={"$ref": "input", "pointer": "x"}),
            "/composite/steps/1/args/note/pointer",
        ),
        (lambda r: r["composite"]["steps"][1]["row"].update(mode="write"), "/composite/steps/1/row/mode"),
        (lambda r: r["composite"]["steps"][1].pop("input_schema"), "/composite/steps/1/input_schema"),
        (
            lambda r: r["composite"].update(switch={"$ref": "step", "step": "a", "pointer": ""}),
            "/composite/switch/$ref",
        ),
    ],
)
def test_malformed_plan_is_refused_at_its_pointer(change: Any, pointer: str) -> None:
    data, index = _composite_row_json()
    change(data["tools"][index])
    with pytest.raises(PolicyFormatError) as caught:
        from_json(data, "policy.json")
    assert caught.value.pointer == f"/tools/{index}{pointer}", caught.value


# ---------------------------------------------------------------------------------------------
# lowering


def test_pipeline_with_a_write_is_a_previewed_pair(tmp_path: Path) -> None:
    built = build(tmp_path, TICKETS, _with_tools(PIPELINE))
    names = built.names()
    assert "preview_followup_on_ticket" in names and "record_followup_on_ticket" in names
    record, preview = built.row("record_followup_on_ticket"), built.row("preview_followup_on_ticket")
    assert (record["mode"], record["effect"], record["approval"]) == ("record", "write", "required")
    assert record["record"] == {"arguments": "preview", "preview_ttl_s": 900}
    assert record["idempotency"] == {"arg": "action_id", "in": "none", "name": None, "honoured_by_api": False}
    assert (
        record["permission"] == ["ticket:read", "ticket:write"]
        and preview["permission"] == record["permission"]
    )
    assert preview["composite"] == record["composite"] and preview["effect"] == "read"
    steps = record["composite"]["steps"]
    assert [s["id"] for s in steps] == ["ticket", "followup"] and steps[1]["needs"] == ["ticket"]
    assert steps[1]["args"] == {
        "ticket_id": {"$ref": "step", "step": "ticket", "pointer": "/id"},
        "note": {"$ref": "input", "pointer": "/note"},
        "visibility": {"$literal": "internal"},
    }
    # the write step is lowered by the ordinary tools' code: the same request as record_ticket_followup
    ordinary, step_row = built.row("record_ticket_followup"), steps[1]["row"]
    for member in ("request", "auth", "idempotency", "success_status", "permission", "effect", "retry"):
        assert step_row[member] == ordinary[member], member
    assert (step_row["tool"], step_row["mode"], step_row["approval"]) == (
        "record_followup_on_ticket.followup",
        "record",
        "never",
    )
    assert (
        step_row["record"] == {"arguments": "full", "preview_ttl_s": None}
        and step_row["output"]["fields"] == []
    )
    assert steps[0]["row"]["output"]["fields"] == [] and steps[0]["row"]["mode"] == "read"
    # derived arguments: the step arguments' own schemas; the idempotency key is the runtime's to fill
    schema = built.tool("mcp", "preview_followup_on_ticket")["inputSchema"]
    assert schema["required"] == ["ticket_id", "note"] and schema["additionalProperties"] is False
    assert schema["properties"]["ticket_id"]["pattern"] == "^T-[0-9]+$"
    assert "action_id" in steps[1]["input_schema"]["required"] and "action_id" not in steps[1]["args"]
    record_tool = built.tool("mcp", "record_followup_on_ticket")
    assert record_tool["inputSchema"]["required"] == ["preview_id", "action_id"]
    assert record_tool["annotations"]["readOnlyHint"] is False


def test_read_composite_in_every_dialect_strict(tmp_path: Path) -> None:
    body = _with_tools("""composites:
  ticket_view:
    pattern: branch
    description: One ticket as its details or its history.
    switch: $input/view
    steps:
      - {id: details, when: details, operation: getTicket, args: {ticket_id: $input/ticket_id}}
      - {id: history, when: history, operation: getTicketHistory, args: {ticket_id: $input/ticket_id}}
""")
    built = build(tmp_path, TICKETS, body, emit="openai,anthropic,gemini,mcp,policy,report")
    mcp = built.tool("mcp", "get_ticket_view")
    assert mcp["inputSchema"]["properties"]["view"]["enum"] == ["details", "history"]
    assert mcp["inputSchema"]["required"] == ["view"]  # a branch's step arguments are optional
    assert mcp["annotations"]["readOnlyHint"] is True
    assert built.tool("openai", "get_ticket_view")["function"]["strict"] is True
    assert built.tool("gemini", "get_ticket_view")["name"] == "get_ticket_view"
    assert built.tool("anthropic", "get_ticket_view")["input_schema"]["properties"]["view"]["enum"]
    row = built.row("get_ticket_view")
    assert row["composite"]["switch"] == {"$ref": "input", "pointer": "/view"}
    assert [s["when"] for s in row["composite"]["steps"]] == ["details", "history"]
    # the step intent's redaction reaches the combined result
    assert row["output"]["redact"] == ["details.requester.phone"]
    assert row["timeout_ms"] == 5000  # the longest branch
    report = (built.out / "REPORT.md").read_text()
    assert "composite: branch of 2 steps" in report


def test_output_schema_follows_the_step_answers(tmp_path: Path) -> None:
    body = _with_tools(
        PIPELINE.replace(
            "visibility: internal}",
            "visibility: internal}\n    output:\n"
            "      subject: $ticket/subject\n      note: $followup/note\n",
        )
    )
    built = build(tmp_path, TICKETS, body)
    schema = built.tool("mcp", "record_followup_on_ticket")["outputSchema"]
    assert schema["properties"]["subject"] == {"maxLength": 200, "type": "string"}
    assert schema["properties"]["steps"]["items"]["properties"]["id"]["enum"] == ["ticket", "followup"]
    jsonschema.validate({"subject": "Hi", "note": "x", "steps": [{"id": "ticket", "state": "done"}]}, schema)


def test_stripe_example_pipeline_projects_its_result() -> None:
    table = read_policy(REPO / "generated" / "stripe" / "policy.json")
    row = table.row("get_customer_open_invoices")
    assert row is not None and row.composite is not None
    invoices = row.composite.step("invoices")
    assert invoices is not None and invoices.needs == ("customer",)
    assert invoices.args["customer"] == StepRef("customer", "/id")
    assert invoices.args["status"] == LiteralValue("open")
    assert row.permission == ("customers:read", "invoices:read")
    assert "customer.phone" in row.output.redact  # get_customer redacts phone


# ---------------------------------------------------------------------------------------------
# located errors: each rule, with a map that breaks only it


def _composite(steps: str, pattern: str = "pipeline", more: str = "") -> str:
    return _with_tools(
        f"composites:\n  combo:\n    pattern: {pattern}\n    description: Combined.\n{more}"
        f"    steps:\n{steps}"
    )


_READ_A = "      - {id: a, operation: getTicket, args: {ticket_id: $input/ticket_id}}\n"
_READ_H = "      - {id: h, operation: getTicketHistory, args: {ticket_id: $input/ticket_id}}\n"


@pytest.mark.parametrize(
    "body, code, where",
    [
        (
            _composite(_READ_A + "      - {id: b, operation: getTiket, args: {}}\n"),
            "composite-step-operation-unknown",
            "#/composites/combo/steps/1/operation",
        ),
        (
            _composite(_READ_A + "      - {id: b, operation: getTicketHistory, args: {ticket_id: $c/id}}\n"),
            "composite-reference-unknown",
            "#/composites/combo/steps/1/args/ticket_id",
        ),
        (
            _composite("      - {id: b, operation: getTicketHistory, args: {ticket_id: $a/id}}\n" + _READ_A),
            "composite-reference-later",
            "#/composites/combo/steps/0/args",
        ),
        (
            _composite("      - {id: a, operation: getTicket, args: {ticket_id: $a/id}}\n"),
            "composite-cycle",
            "#/composites/combo/steps/0/args",
        ),
        (
            _composite("      - {id: a, operation: getTicket, args: {}}\n"),
            "composite-argument-unmapped",
            "#/composites/combo/steps/0",
        ),
        (
            _composite(
                "      - {id: a, operation: getTicket, args: {ticket_id: $input/ticket_id, tid: x}}\n"
            ),
            "composite-argument-unknown",
            "#/composites/combo/steps/0/args/tid",
        ),
        (
            _composite(
                _READ_A
                + "      - {id: b, operation: getTicketHistory, args: {ticket_id: $a/followup_count}}\n"
            ),
            "composite-mapping-type",
            "#/composites/combo/steps/1/args/ticket_id",
        ),
        (
            _composite("      - {id: l, operation: listTickets, args: {status: archived}}\n"),
            "composite-mapping-type",
            "#/composites/combo/steps/0/args/status",
        ),
        (
            _composite(
                _READ_A + "      - id: w\n        operation: addFollowup\n"
                "        args: {ticket_id: $input/ticket_id, note: $input/note, visibility: internal}\n",
                "aggregate",
            ),
            "composite-aggregate-write",
            "#/composites/combo/steps/1/operation",
        ),
        (
            _composite(_READ_A + _READ_H, "aggregate")
            .replace("$input/ticket_id}}\n      - {id: h", "$input/ticket_id}}\n      - {id: h")
            .replace(
                "getTicketHistory, args: {ticket_id: $input/ticket_id}",
                "getTicketHistory, args: {ticket_id: $a/id}",
            ),
            "composite-reference-aggregate",
            "#/composites/combo/steps/1/args",
        ),
        (
            _composite(
                _READ_A + "      - id: w\n        operation: addFollowup\n"
                "        args: {ticket_id: $a/id, note: $input/note, visibility: internal}\n",
                more="    effect: read\n",
            ),
            "composite-override-looser",
            "#/composites/combo/effect",
        ),
        (
            _composite(
                _READ_A + "      - id: w\n        operation: addFollowup\n"
                "        args: {ticket_id: $a/id, note: $input/note, visibility: internal}\n",
                more="    approval: never\n",
            ),
            "composite-override-looser",
            "#/composites/combo/approval",
        ),
        (
            _composite(
                "      - {id: a, when: x, operation: getTicket, args: {ticket_id: $input/ticket_id}}\n"
                "      - {id: h, operation: getTicketHistory, args: {ticket_id: $input/ticket_id}}\n",
                "branch",
                "    switch: $input/view\n",
            ),
            "composite-when-missing",
            "#/composites/combo/steps/1",
        ),
        (
            _composite(
                "      - {id: a, when: x, operation: getTicket, args: {ticket_id: $input/ticket_id}}\n"
                "      - {id: h, when: x, operation: getTicketHistory, args: {ticket_id: $input/ticket_id}}\n",
                "branch",
                "    switch: $input/view\n",
            ),
            "composite-when-duplicate",
            "#/composites/combo/steps/1/when",
        ),
        (
            _composite(
                _READ_A + "      - {id: l, operation: listTickets, args: {limit: $input/ticket_id}}\n"
            ),
            "composite-argument-incompatible",
            "#/composites/combo/steps/1/args/limit",
        ),
        (
            _composite(
                "      - {id: a, operation: getTicket, args: {ticket_id: input/ticket_id}}\n".replace(
                    "input/ticket_id", "$in-put/x"
                )
            ),
            "composite-reference-invalid",
            "#/composites/combo/steps/0/args/ticket_id",
        ),
        (
            _composite("      - {id: a, operation: getTicket, args: {ticket_id: {x: $input/t}}}\n"),
            "composite-input-undeclared",
            "#/composites/combo/steps/0/args/ticket_id",
        ),
        (
            _composite(_READ_A + _READ_A.replace("ticket_id: $input", "ticket_id: $input")),
            "composite-step-id",
            "#/composites/combo/steps/1/id",
        ),
        (
            _composite(_READ_A + _READ_H, "aggregate", "    output: {errors: $a}\n"),
            "composite-output-reserved",
            "#/composites/combo/output/errors",
        ),
        (
            _composite(_READ_A, more="    output_fields: [a.nothing_here]\n"),
            "composite-output-field-unknown",
            "#/composites/combo/output_fields",
        ),
        # an input reference must name an argument every dialect can carry, and a pointer escape is ~0 or ~1
        *[
            (
                _composite(f"      - {{id: a, operation: getTicket, args: {{ticket_id: {ref}}}}}\n"),
                "composite-reference-invalid",
                "#/composites/combo/steps/0/args/ticket_id",
            )
            for ref in ("$input/", "$input/a~1b", "$input/9lives", "$input/t~2x")
        ],
        (
            _composite(_READ_A + "      - {id: b, operation: getTicketHistory, args: {ticket_id: $a/~2x}}\n"),
            "composite-reference-invalid",
            "#/composites/combo/steps/1/args/ticket_id",
        ),
    ],
)
def test_composite_mistake_is_a_located_error(tmp_path: Path, body: str, code: str, where: str) -> None:
    built = build(tmp_path, TICKETS, body, expect=2)
    lines = [line for line in built.result.output.splitlines() if f"error[{code}]" in line]
    assert lines and any(f"({where})" in line and "api.yaml:" in line for line in lines), built.result.output
    assert not (tmp_path / "out").exists()


def test_unknown_key_in_a_step_is_located(tmp_path: Path) -> None:
    body = _composite("      - {id: a, operation: getTicket, arg: {ticket_id: $input/ticket_id}}\n")
    built = build(tmp_path, TICKETS, body, expect=2)
    assert "unknown key `arg`" in built.result.output and "did you mean `args`?" in built.result.output
    assert "#/composites/combo/steps/0/arg" in built.result.output


# ---------------------------------------------------------------------------------------------
# the incremental build cache


def test_editing_a_step_operation_rebuilds_the_composite_like_a_cold_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The catalog memo and the manifest key a composite on its steps' spec subtrees: an edit of a
    step operation's schema reaches the composite's arguments and plan in a cached build, byte for
    byte as in a build without the cache."""
    from tests.support.build import run

    monkeypatch.setenv("TOOLGEN_CACHE", "1")
    monkeypatch.setenv("TOOLGEN_CACHE_DIR", str(tmp_path / "cache"))
    spec = tmp_path / "spec.yaml"
    spec.write_text(TICKETS.read_text())
    intent = tmp_path / "api.yaml"
    intent.write_text("toolgen: 1\nspec: spec.yaml\napi: {name: api}\n" + _with_tools(PIPELINE))
    cached, cold = tmp_path / "cached", tmp_path / "cold"

    def tree(folder: Path) -> dict[str, bytes]:
        return {
            p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
        }

    assert run("build", str(intent), "--out", str(cached), "-q").exit_code == 0
    before = json.loads((cached / "mcp.json").read_text())
    text = spec.read_text()
    assert "note: {type: string, minLength: 1, maxLength: 2000}" in text
    spec.write_text(
        text.replace(
            "note: {type: string, minLength: 1, maxLength: 2000}",
            "note: {type: string, minLength: 1, maxLength: 1500}",
        )
    )
    assert run("build", str(intent), "--out", str(cached), "-q").exit_code == 0
    assert run("build", str(intent), "--out", str(cold), "-q", "--no-cache").exit_code == 0
    assert tree(cached) == tree(cold)
    after = json.loads((cached / "mcp.json").read_text())

    def note(tools: list[dict[str, Any]]) -> Any:
        tool = next(t for t in tools if t["name"] == "preview_followup_on_ticket")
        return tool["inputSchema"]["properties"]["note"]["maxLength"]

    assert (note(before), note(after)) == (2000, 1500)
    row = next(
        r
        for r in json.loads((cached / "policy.json").read_text())["tools"]
        if r["tool"] == "record_followup_on_ticket"
    )
    assert row["composite"]["steps"][1]["input_schema"]["properties"]["note"]["maxLength"] == 1500


# ---------------------------------------------------------------------------------------------
# toolgen diff


def _plan_rows() -> tuple[Any, Any]:
    table = read_policy(REPO / "generated" / "tickets" / "policy.json")
    row = table.row("record_escalate_ticket")
    ordinary = table.row("record_ticket_followup")
    assert row is not None and row.composite is not None and ordinary is not None
    return row, ordinary


def _with_steps(row: Any, *steps: Any) -> Any:
    return replace(row, composite=replace(row.composite, steps=tuple(steps)))


def _kinds_of(old: Any, new: Any) -> set[tuple[str, bool]]:
    from toolgen.review.diff import compare_tool

    return {(c.kind, c.risky) for c in compare_tool("tickets", new.tool, old, new, None, None)}


def test_diff_a_write_step_added_is_risky() -> None:
    row, _ = _plan_rows()
    ticket, followup = row.composite.steps
    read_only = _with_steps(row, ticket)
    assert ("composite-write-step-added", True) in _kinds_of(read_only, row)
    assert ("composite-step-removed", False) in _kinds_of(row, read_only)
    # a step that turns from a read into a write is a write step added too
    as_read = replace(followup, row=replace(followup.row, effect="read"))
    assert ("composite-write-step-added", True) in _kinds_of(_with_steps(row, ticket, as_read), row)


def test_diff_a_step_effect_widened_is_risky() -> None:
    row, _ = _plan_rows()
    ticket, followup = row.composite.steps
    wider = replace(followup, row=replace(followup.row, effect="destructive"))
    assert ("composite-step-effect-widened", True) in _kinds_of(row, _with_steps(row, ticket, wider))
    assert ("composite-step-effect-narrowed", False) in _kinds_of(_with_steps(row, ticket, wider), row)


def test_diff_a_step_permission_dropped_is_risky() -> None:
    row, _ = _plan_rows()
    ticket, followup = row.composite.steps
    open_door = replace(ticket, row=replace(ticket.row, permission=()))
    kinds = _kinds_of(row, _with_steps(row, open_door, followup))
    assert ("composite-step-permission-dropped", True) in kinds
    assert ("composite-step-permission-changed", False) in _kinds_of(
        _with_steps(row, open_door, followup), row
    )


def test_diff_approval_off_and_key_dropped_are_risky() -> None:
    row, _ = _plan_rows()
    ticket, followup = row.composite.steps
    assert ("approval-removed", True) in _kinds_of(row, replace(row, approval="never"))
    keyless = replace(followup, row=replace(followup.row, idempotency=None))
    assert ("composite-step-idempotency-removed", True) in _kinds_of(row, _with_steps(row, ticket, keyless))
    gated = replace(followup, row=replace(followup.row, approval="required"))
    assert ("composite-step-approval-removed", True) in _kinds_of(_with_steps(row, ticket, gated), row)


def test_diff_other_plan_changes_are_listed_not_risky() -> None:
    row, _ = _plan_rows()
    ticket, followup = row.composite.steps
    moved = replace(followup, args={**followup.args, "visibility": LiteralValue("public")})
    assert _kinds_of(row, _with_steps(row, ticket, moved)) == {("composite-step-changed", False)}
    assert _kinds_of(row, row) == set()


def test_lint_reports_composite_mistakes_located(tmp_path: Path) -> None:
    from tests.support.build import run

    intent = tmp_path / "api.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(TICKETS))}\napi: {{name: api}}\n"
        + _composite("      - {id: a, operation: getTicket, args: {}}\n")
    )
    result = run("lint", str(intent))
    assert result.exit_code != 0
    assert (
        "error[composite-argument-unmapped]" in result.output
        and "(#/composites/combo/steps/0)" in result.output
    )


def test_search_index_names_a_composite_by_its_steps() -> None:
    index = json.loads((REPO / "generated" / "tickets" / "search.json").read_text())
    docs = {d["intent"]: d for d in index["documents"]}
    assert docs["escalate_ticket"]["operation"] == "composite: getTicket → addFollowup"
    assert docs["escalate_ticket"]["actions"] == ["create"]  # its write step posts
    assert docs["ticket_view"]["operation"] == "composite: getTicket, getTicketHistory"
    assert docs["ticket_view"]["actions"] == ["get"]


def test_a_deferred_composite_is_found_by_tool_search(tmp_path: Path) -> None:
    body = _with_tools(
        'toolsets:\n  views: {description: "Ticket views.", loading: deferred}\n'
        + """composites:
  ticket_view:
    pattern: branch
    toolset: views
    keywords: [timeline]
    description: One ticket as its details or its history.
    switch: $input/view
    steps:
      - {id: details, when: details, operation: getTicket, args: {ticket_id: $input/ticket_id}}
      - {id: history, when: history, operation: getTicketHistory, args: {ticket_id: $input/ticket_id}}
"""
    )
    built = build(tmp_path, TICKETS, body, emit="anthropic,mcp,policy,report")
    row = built.row("get_ticket_view")
    assert (row["toolset"], row["loading"], row["keywords"]) == ("views", "deferred", ["timeline"])
    assert built.tool("anthropic", "get_ticket_view")["defer_loading"] is True
    docs = {d["intent"]: d for d in built.json("search.json")["documents"]}
    assert "timeline" in docs["ticket_view"]["fields"]["keywords"]


def test_a_billion_laughs_intent_map_is_a_located_error_not_a_hang(tmp_path: Path) -> None:
    """YAML aliases nested ten deep in a composite's literal expand to 10^9 values: refused as the
    spec loader refuses them, before any stage walks the tree."""
    laughs = "x-laughs:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]\n" for i in range(1, 9)
    )
    body = _composite("      - {id: a, operation: listTickets, args: {status: *l8}}\n").replace(
        "composites:", laughs + "composites:"
    )
    built = build(tmp_path, TICKETS, body, expect=2)
    assert "error[spec-alias-expansion]" in built.result.output and "api.yaml" in built.result.output
    assert not (tmp_path / "out").exists()


def test_an_inputs_name_that_is_no_argument_name_is_located(tmp_path: Path) -> None:
    body = _composite(_READ_A, more='    inputs: {"a/b": {type: string}}\n')
    built = build(tmp_path, TICKETS, body, expect=2)
    lines = [line for line in built.result.output.splitlines() if "error[intent-invalid]" in line]
    assert lines and "(#/composites/combo/inputs/a~1b)" in lines[0] and "api.yaml:" in lines[0], (
        built.result.output
    )
