"""`toolgen eval from-audit`: failed calls of a real audit log (the runtime's JSON-lines sink, calls
against the loopback tickets API) become draft tasks that `load_tasks` and `eval run` accept, with no
argument value copied; a line that is not an event is a located refusal; a log without failures is
exit 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.build import REPO, run
from tests.support.runtime_env import READER, WRITER, load_package

from toolgen.evals.from_audit import PER_FAILURE, draft_from_audit, failed_calls
from toolgen.evals.tasks import load_tasks
from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.audit import JsonlAuditSink, audit_text
from toolgen.testing.tickets_server import TicketsServer

TICKETS = REPO / "generated" / "tickets"
PLANTED = "T-9planted"


def _audit_log(path: Path, invalid: int = 1) -> Path:
    """An audit log of real calls: `invalid` calls with a bad ticket id, one a reader may not make,
    one record with a preview_id nobody issued, and one that succeeds."""
    policy, catalog = load_package("tickets")
    sink = JsonlAuditSink(path)
    with TicketsServer() as server:
        registry = Registry(
            policy,
            list(catalog),
            base_url=server.base_url,
            credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
            receipts=MemoryReceiptStore(),
            audit=sink,
            cursor_key=b"k" * 32,
        )
        for _ in range(invalid):
            assert not registry.call("get_ticket", {"ticket_id": PLANTED + "!"}, actor=READER).ok
        assert not registry.call(
            "preview_ticket_followup",
            {"ticket_id": "T-102", "note": PLANTED, "visibility": "public"},
            actor=READER,
        ).ok
        assert not registry.call(
            "record_ticket_followup", {"preview_id": "sha256:" + "0" * 64, "action_id": "a"}, actor=WRITER
        ).ok
        assert registry.call("get_ticket", {"ticket_id": "T-102"}, actor=Actor.of("r", ["ticket:read"])).ok
        registry.close()
    sink.close()
    return path


def test_failed_calls_become_draft_tasks_eval_accepts(tmp_path: Path) -> None:
    log = _audit_log(tmp_path / "audit.jsonl")
    out = tmp_path / "evals" / "tickets.audit.yaml"
    done = run("eval", "from-audit", str(TICKETS), str(log), "--out", str(out))
    assert done.exit_code == 0, done.output
    text = out.read_text(encoding="utf-8")
    assert PLANTED not in text  # the log holds no argument value, and nothing invents one
    tasks = {t.id: t for t in load_tasks(out).tasks}
    assert set(tasks) == {
        "audit/get_ticket/invalid_arguments/1",
        "audit/preview_ticket_followup/permission_denied/1",
        "audit/record_ticket_followup/preview_not_found/1",
    }
    invalid = tasks["audit/get_ticket/invalid_arguments/1"]
    assert (invalid.kind, invalid.expect_tool) == (
        "positive",
        "get_ticket",
    ) and "/ticket_id" in invalid.prompt
    denied = tasks["audit/preview_ticket_followup/permission_denied/1"]
    assert (denied.kind, denied.expect_tool) == ("no_tool", None)
    unknown = tasks["audit/record_ticket_followup/preview_not_found/1"]
    assert (unknown.kind, unknown.expect_tool, unknown.writes, unknown.approve) == (
        "multi_step",
        "preview_ticket_followup",
        1,
        True,
    )
    assert all(t.prompt.startswith("DRAFT, label me:") for t in tasks.values())
    again = run("eval", "from-audit", str(TICKETS), str(log), "--out", str(out))
    assert again.exit_code == 2 and "--force" in again.output  # a labelled file is never overwritten silently


def test_eval_run_accepts_the_drafts(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    log = _audit_log(tmp_path / "audit.jsonl")
    out = tmp_path / "tasks.yaml"
    assert run("eval", "from-audit", str(TICKETS), str(log), "--out", str(out)).exit_code == 0
    ran = run(
        "eval",
        "run",
        str(TICKETS),
        "--provider",
        "anthropic",
        "--model",
        "scripted",
        "--scripted",
        "--runs",
        "1",
        "--tasks",
        str(out),
        "--out",
        str(tmp_path / "run"),
    )
    assert ran.exit_code == 0, ran.output
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert len(json.dumps(results)) > 0 and "audit/get_ticket/invalid_arguments/1" in json.dumps(results)


def test_at_most_a_few_tasks_per_tool_and_failure(tmp_path: Path) -> None:
    log = _audit_log(tmp_path / "audit.jsonl", invalid=PER_FAILURE + 2)
    with log.open(encoding="utf-8") as lines:
        calls = failed_calls(lines, "audit.jsonl")
    assert sum(c.code == "invalid_arguments" for c in calls) == PER_FAILURE + 2
    policy, catalog = load_package("tickets")
    drafted = draft_from_audit(
        calls, "tickets", "p", {t["name"]: t for t in catalog}, {r["tool"]: r for r in policy["tools"]}
    )
    assert sum(t.id.startswith("audit/get_ticket/invalid_arguments/") for t in drafted.tasks) == PER_FAILURE


def test_a_line_that_is_not_an_event_is_located(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text(
        '{"call_id": "a", "tool": "t", "step": "result", "decision": "ok"}\n{not json\n', encoding="utf-8"
    )
    done = run("eval", "from-audit", str(TICKETS), str(log), "--out", str(tmp_path / "t.yaml"))
    assert done.exit_code == 2 and "audit.jsonl:2:1" in done.output and "eval-audit" in done.output
    log.write_text("[1, 2]\n", encoding="utf-8")
    assert (
        "audit.jsonl:1:1"
        in run("eval", "from-audit", str(TICKETS), str(log), "--out", str(tmp_path / "t.yaml")).output
    )


def test_a_log_without_failures_drafts_nothing(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text(
        '{"call_id": "a", "tool": "get_ticket", "step": "result", "decision": "ok", "code": null}\n'
        '{"call_id": "b", "tool": "get_ticket", "step": "result", "decision": "error", '
        '"code": "upstream_error"}\n',
        encoding="utf-8",
    )
    done = run("eval", "from-audit", str(TICKETS), str(log), "--out", str(tmp_path / "t.yaml"))
    assert done.exit_code == 1 and "no failed call to draft" in done.output
    assert not (tmp_path / "t.yaml").exists()


RESULT = (
    '{"call_id": "a", "tool": "get_ticket", "step": "result", "decision": "error", "code": "unknown_tool"'
)


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("[" * 100_000, "not JSON"),
        (RESULT + ', "ts": 1e300}', "ts"),
        (RESULT + ', "ts": -1e20}', "ts"),
        (RESULT + ', "ts": ' + "9" * 400 + "}", "ts"),
        (RESULT + ', "ts": NaN}', "ts"),
    ],
)
def test_a_line_no_runtime_writes_is_located_never_an_internal_error(
    tmp_path: Path, line: str, what: str
) -> None:
    """JSON nested past Python's recursion limit, and a time that is no Unix time (beyond a double,
    before 1970 or after 9999, not a number), are refused at their line like any other bad line."""
    log = tmp_path / "audit.jsonl"
    log.write_text(line + "\n", encoding="utf-8")
    done = run("eval", "from-audit", str(TICKETS), str(log), "--out", str(tmp_path / "t.yaml"))
    assert done.exit_code == 2 and "audit.jsonl:1:1" in done.output, done.output
    assert "eval-audit" in done.output and what in done.output and not (tmp_path / "t.yaml").exists()


@pytest.mark.parametrize("name", ["", " ", "no_such\ntool: x", "t" * 5000])
def test_whatever_tool_name_a_model_sent_the_draft_loads(tmp_path: Path, name: str) -> None:
    """An unknown tool's name is the model's text, written to the log as the runtime audits it
    (`audit_text`: a line break escaped, 5,000 characters cut to 200 with the length and digest;
    a call of the tool ``""`` is audited too): the file drafted from it always loads, and a call
    that named no tool drafts nothing."""
    policy, catalog = load_package("tickets")
    log = tmp_path / "audit.jsonl"
    sink = JsonlAuditSink(log)
    registry = Registry(
        policy,
        list(catalog),
        base_url="http://127.0.0.1:9",
        credentials=StaticCredentials({}),
        receipts=MemoryReceiptStore(),
        audit=sink,
        cursor_key=b"k" * 32,
    )
    assert registry.call(name, {}, actor=READER).error.code == "unknown_tool"  # type: ignore[union-attr]
    assert not registry.call("get_ticket", {"ticket_id": "!"}, actor=READER).ok
    registry.close()
    sink.close()
    out = tmp_path / "t.yaml"
    assert run("eval", "from-audit", str(TICKETS), str(log), "--out", str(out)).exit_code == 0
    tools = [t.tool for t in load_tasks(out).tasks]
    assert tools == (["get_ticket"] if not name.strip() else [audit_text(name), "get_ticket"])


def test_tool_names_that_spell_the_same_id_draft_distinct_ids(tmp_path: Path) -> None:
    """An id keeps the safe characters of a tool's name, 64 at most: names a model sent that differ
    only elsewhere (``x y`` and ``x_y``, a shared 64-character prefix) draft tasks with distinct
    ids, so the file loads."""
    names = ["x y", "x_y", "a" * 64 + "1", "a" * 64 + "2"]
    log = tmp_path / "audit.jsonl"
    events = [
        {
            "call_id": f"c{i}",
            "tool": name,
            "step": "result",
            "decision": "error",
            "code": "unknown_tool",
            "ts": 1,
        }
        for i, name in enumerate(names)
    ]
    log.write_text("".join(json.dumps(event) + "\n" for event in events), encoding="utf-8")
    out = tmp_path / "t.yaml"
    assert run("eval", "from-audit", str(TICKETS), str(log), "--out", str(out)).exit_code == 0
    tasks = load_tasks(out).tasks
    assert [t.tool for t in tasks] == names
    assert [t.id for t in tasks] == [
        "audit/x_y/unknown_tool/1",
        "audit/x_y/unknown_tool/2",
        f"audit/{'a' * 64}/unknown_tool/1",
        f"audit/{'a' * 64}/unknown_tool/2",
    ]
