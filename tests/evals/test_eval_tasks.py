"""The eval task file: drafts from the three example packages, the fixed split rule, located errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgen.diagnostics import DiagnosticError
from toolgen.evals.draft import draft_tasks
from toolgen.evals.tasks import SPLITS, Constraint, dump_tasks, load_tasks, split_for

ROOT = Path(__file__).resolve().parents[2]
APIS = ("tickets", "github", "stripe")


def _draft(api: str) -> str:
    package = ROOT / "generated" / api
    policy = json.loads((package / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((package / "mcp.json").read_text(encoding="utf-8"))
    return dump_tasks(draft_tasks(policy, catalog, package=f"../generated/{api}"))


@pytest.mark.parametrize("api", APIS)
def test_committed_task_files_are_the_current_drafts(api: str) -> None:
    assert (ROOT / "evals" / f"{api}.yaml").read_text(encoding="utf-8") == _draft(api)


@pytest.mark.parametrize("api", APIS)
def test_every_intent_has_five_positives_three_negatives_and_writes_a_multi_step(api: str) -> None:
    tasks = load_tasks(ROOT / "evals" / f"{api}.yaml")
    policy = json.loads((ROOT / "generated" / api / "policy.json").read_text(encoding="utf-8"))
    intents = {r["intent"] for r in policy["tools"] if r["composite"] is None}
    previewed = {r["intent"] for r in policy["tools"] if r["mode"] == "preview"}
    kinds = Counter((t.tool, t.kind) for t in tasks.tasks)
    for intent in intents:
        assert kinds[(intent, "positive")] >= 5
        assert sum(kinds[(intent, k)] for k in ("near_neighbour", "no_tool", "read_only")) >= 3
        assert kinds[(intent, "multi_step")] == (1 if intent in previewed else 0)
    for task in tasks.tasks:
        if task.kind == "multi_step":
            assert task.writes == 1 and task.approve and (task.expect_tool or "").startswith("preview_")
        else:
            assert task.writes == 0 and not task.approve
        if task.kind == "no_tool":
            assert task.expect_tool is None
        if task.kind == "read_only":
            assert task.expect_tool is None or policy_mode(policy, task.expect_tool) == "read"
    held = sum(t.split == "held-out" for t in tasks.tasks)
    assert 0 < held < len(tasks.tasks) / 2


def policy_mode(policy: dict[str, Any], tool: str) -> str:
    return str(next(r["mode"] for r in policy["tools"] if r["tool"] == tool))


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=60))
def test_the_split_is_a_function_of_api_and_id(api: str, task_id: str) -> None:
    assert split_for(api, task_id) in SPLITS
    assert split_for(api, task_id) == split_for(api, task_id)


def test_the_split_rule_holds_out_about_one_in_five() -> None:
    held = sum(split_for("x", f"t/{i}") == "held-out" for i in range(5000))
    assert 900 < held < 1100


def _write(tmp_path: Path, body: str) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mcp.json").write_text(
        json.dumps(
            [
                {
                    "name": "get_ticket",
                    "inputSchema": {"type": "object", "properties": {"ticket_id": {"type": "string"}}},
                }
            ]
        )
    )
    path = tmp_path / "t.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def _errors(path: Path) -> list[str]:
    with pytest.raises(DiagnosticError) as caught:
        load_tasks(path)
    return [d.render() for d in caught.value.diagnostics]


def test_errors_name_file_line_column_pointer_and_fix(tmp_path: Path) -> None:
    task_id = next(f"a/{i}" for i in range(100) if split_for("tickets", f"a/{i}") == "dev")
    path = _write(
        tmp_path,
        f"""toolgen_eval: 1
api: tickets
package: pkg
tasks:
  - id: {task_id}
    tool: get_ticket
    kind: positive
    prompt: Show T-1.
    expect:
      tool: get_tickets
  - id: {task_id}x
    tool: get_ticket
    kind: positive
    prompt: Show T-1.
    expect:
      tool: get_ticket
      args:
        - {{pointer: /ticket, equals: T-1}}
  - id: {task_id}
    tool: get_ticket
    kind: sideways
    prompt: Show T-1.
    expect: {{tool: null}}
    split: held-out
""",
    )
    errors = _errors(path)
    assert any(
        "t.yaml:10:7 (#/tasks/0/expect/tool): error[eval-tool]" in e and "get_tickets" in e for e in errors
    )
    assert any(
        "(#/tasks/1/expect/args/0/pointer): error[eval-pointer]" in e and "use one of: ticket_id" in e
        for e in errors
    )
    assert any("t.yaml:21:5 (#/tasks/2/kind): error[eval-field]" in e for e in errors)


def test_a_split_written_against_the_rule_is_refused(tmp_path: Path) -> None:
    task_id = next(f"a/{i}" for i in range(100) if split_for("tickets", f"a/{i}") == "dev")
    path = _write(
        tmp_path,
        f"""toolgen_eval: 1
api: tickets
package: pkg
tasks:
  - id: {task_id}
    tool: get_ticket
    kind: no_tool
    prompt: Hello.
    expect: {{tool: null}}
    split: held-out
""",
    )
    [error] = _errors(path)
    assert "t.yaml:10:5 (#/tasks/0/split): error[eval-split]" in error and "write `split: dev`" in error


def test_a_missing_package_is_located_at_package(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("toolgen_eval: 1\napi: x\npackage: nowhere\ntasks:\n  - {id: a}\n", encoding="utf-8")
    [error] = _errors(path)
    assert "t.yaml:3:1 (#/package): error[eval-package]" in error and "toolgen build" in error


@pytest.mark.parametrize(
    ("constraint", "args", "holds"),
    [
        (Constraint("/a", "equals", 12), {"a": 12}, True),
        (Constraint("/a", "equals", 12), {"a": "12"}, False),
        (Constraint("/a", "contains", "Refund"), {"a": "a refund please"}, True),
        (Constraint("/a", "contains", "x"), {"a": ["x", "y"]}, True),
        (Constraint("/a", "contains", "z"), {"a": ["x", "y"]}, False),
        (Constraint("/a/b", "present", True), {"a": {"b": None}}, False),
        (Constraint("/a/b", "present", False), {"a": {}}, True),
        (Constraint("/a", "equals", 1), "not json", False),
    ],
)
def test_predicates(constraint: Constraint, args: object, holds: bool) -> None:
    assert constraint.holds(args) is holds
