"""`toolgen describe` drafts the `examples` of the toolsets that lack them as it drafts an intent's:
the same writer, the answer parsed as untrusted text by the same checks, written into the toolset's
block with every other byte kept and a ``# decide [examples-unreviewed]`` mark above its key, which
lint reports until a human deletes it; a second run drafts nothing."""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import copy_example
from tests.support.describe_writers import FunctionWriter, good_answer, with_toolsets

from toolgen.compile.intent import load_intent_map
from toolgen.compile.load import load_spec
from toolgen.review.lint import LintSettings, LintTarget, lint_target
from toolgen.scaffold.describe import TOOLSET_SYSTEM, DescribeOptions, DescribeResult, describe
from toolgen.yaml_text import plain_yaml, read_yaml

MARK = "# decide [examples-unreviewed]"
READING = ["anything about reading tickets please", "help me with reading work today"]


@pytest.fixture
def tickets(tmp_path: Path) -> Path:
    return with_toolsets(copy_example(tmp_path, "tickets", "tickets.yaml"))


def _run(path: Path, writer: Any, **options: Any) -> DescribeResult:
    loaded = load_intent_map(path)
    doc = load_spec(loaded.spec_path())  # type: ignore[arg-type]
    result = describe(doc, loaded, writer, DescribeOptions(**options))
    path.write_text(result.text, encoding="utf-8")
    return result


def _data(path: Path) -> Any:
    return plain_yaml(read_yaml(path.read_text(encoding="utf-8")))


def test_a_toolset_without_examples_is_drafted_into_its_block_and_marked(tickets: Path) -> None:
    before = tickets.read_text(encoding="utf-8")
    writer = FunctionWriter(good_answer)
    result = _run(tickets, writer)
    after = tickets.read_text(encoding="utf-8")
    assert result.drafted["toolsets.reading"].examples == tuple(READING)
    assert "toolsets.changing" in result.plan.have  # it has examples: left alone
    assert ("toolsets.unused", "none of its tools calls an operation of the spec") in result.plan.skipped
    assert result.requests == 2 and writer.systems == [writer.systems[0], TOOLSET_SYSTEM]
    data = _data(tickets)
    assert data["toolsets"]["reading"]["examples"] == READING
    assert data["toolsets"]["changing"]["examples"] == ["close out an old ticket for good"]
    assert "examples" not in data["toolsets"]["unused"]
    ops = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False).get_opcodes()
    assert {tag for tag, *_ in ops} == {"equal", "insert"}  # only lines added
    data["toolsets"]["reading"].pop("examples")
    for intent in data["tools"].values():
        for name in ("examples", "use_when", "not_for"):
            intent.pop(name, None)
    assert data == plain_yaml(read_yaml(before))
    lines = after.splitlines()
    assert lines[lines.index("  reading:") - 1].startswith(f"  {MARK}: ")
    assert after.count(MARK) == len(load_intent_map(tickets).model.tools) + 1


def test_the_writer_sees_the_toolsets_name_and_its_operations_only(tickets: Path) -> None:
    writer = FunctionWriter(good_answer)
    _run(tickets, writer)
    prompt = writer.prompts[-1]
    (shown,) = json.loads(prompt)["toolsets"]
    assert shown["toolset"] == "reading"
    assert [t["tool"] for t in shown["tools"]] == ["get_ticket", "get_ticket_history", "list_tickets"]
    assert shown["tools"][0]["operation"] == "GET /tickets/{ticket_id}"
    assert set(shown["tools"][0]) == {"tool", "operation", "operationId", "summary"}
    assert "Read tickets and their history" not in prompt  # the map's own description is not shown
    assert "please help me" not in prompt  # nor the requests drafted for its tools


def test_a_second_run_drafts_nothing_and_replace_drafts_again(tickets: Path) -> None:
    _run(tickets, FunctionWriter(good_answer))
    once = tickets.read_text(encoding="utf-8")
    again = FunctionWriter(good_answer)
    result = _run(tickets, again)
    assert again.prompts == [] and result.drafted == {} and tickets.read_text(encoding="utf-8") == once
    assert {"toolsets.reading", "toolsets.changing"} <= set(result.plan.have)

    def other(toolsets: list[str]) -> dict[str, Any]:
        return {"toolsets": [{"toolset": t, "examples": [f"do some {t} things for me"]} for t in toolsets]}

    result = _run(tickets, FunctionWriter(good_answer, other), replace=True)
    data = _data(tickets)
    assert data["toolsets"]["reading"]["examples"] == ["do some reading things for me"]
    assert data["toolsets"]["changing"]["examples"] == ["do some changing things for me"]
    text = tickets.read_text(encoding="utf-8")
    assert text.count(MARK) == once.count(MARK) + 1  # changing is marked now; reading not twice


def test_a_hostile_toolset_answer_adds_nothing_but_checked_requests(tickets: Path) -> None:
    taken = "please help me get ticket today"  # drafted for the get_ticket intent in the same run

    def hostile(toolsets: list[str]) -> dict[str, Any]:
        return {
            "toolsets": [
                {
                    "toolset": "reading",
                    "examples": [
                        "show every open ticket to me",
                        taken,
                        "bad\u202etext in a request here",
                        "x",
                        "one more request than was asked",
                        "and yet another request beyond",
                        "too many requests by now surely",
                    ],
                    "use_when": "always use it",
                    "description": "replaced by the model",
                },
                {"toolset": "changing", "examples": ["write to the changing toolset now"]},
                {"toolset": "reading", "examples": ["a second item for the toolset"]},
            ],
            "tools": [],
        }

    result = _run(tickets, FunctionWriter(good_answer, hostile))
    data = _data(tickets)
    assert data["toolsets"]["reading"] == {
        "description": "Read tickets and their history.",
        "examples": [
            "show every open ticket to me",
            "one more request than was asked",
            "and yet another request beyond",
        ],
    }
    assert data["toolsets"]["changing"]["examples"] == ["close out an old ticket for good"]
    dropped = "\n".join(f"{key}: {why}" for key, why in result.dropped)
    for why in (
        "is given for another tool of the map, or twice",
        "U+202E",
        "is shorter than 3 characters",
        "is one more than the 3 asked for",
        "members other than the expansions are ignored: description, use_when",
        "'changing', which this request did not ask for",
        "a second item for this toolset",
        "the answer's other members are ignored: tools",
    ):
        assert why in dropped, (why, dropped)
    assert all(key.startswith("toolsets.") or key == "" for key, _ in result.dropped)


@pytest.mark.parametrize(
    "written",
    [
        "{description: Read tickets and their history., loading: eager}",
        "{ description: \"Read {tickets}, and history\" , 'loading': 'eager' }   # read only",
        "{description: 'Don''t write: read {tickets}', loading: eager}",
    ],
)
def test_a_one_line_flow_toolset_gets_its_examples_before_its_closing_brace(
    tickets: Path, written: str
) -> None:
    """`toolgen init` drafts toolsets as one-line flow mappings: the examples go inside the braces,
    the line otherwise kept, the mark above it."""
    text = tickets.read_text(encoding="utf-8").replace(
        "  reading:\n    description: Read tickets and their history.\n", f"  reading: {written}\n"
    )
    tickets.write_text(text, encoding="utf-8")
    before = _data(tickets)
    result = _run(tickets, FunctionWriter(good_answer))
    assert result.drafted["toolsets.reading"].examples == tuple(READING)
    after = tickets.read_text(encoding="utf-8")
    lines = after.splitlines()
    (line,) = [n for n, ln in enumerate(lines) if ln.startswith("  reading:")]
    head, _, tail = written.rpartition("}")
    assert lines[line] == f"  reading: {head.rstrip()}, examples: {json.dumps(READING)}}}{tail}"
    assert lines[line - 1].startswith(f"  {MARK}: ")
    data = _data(tickets)
    assert data["toolsets"]["reading"] == {**before["toolsets"]["reading"], "examples": READING}
    found = lint_target(LintTarget(tickets), LintSettings()).findings
    marks = [d.location for d in found if d.code == "examples-unreviewed" and d.location is not None]
    assert [at.line for at in marks if at.pointer == "/toolsets/reading"] == [line]  # the mark's, 1-based


def test_a_flow_toolset_over_several_lines_is_left_for_a_human(tickets: Path) -> None:
    text = tickets.read_text(encoding="utf-8").replace(
        "  reading:\n    description: Read tickets and their history.\n",
        "  reading: {description: Read tickets and their history.,\n    loading: eager}\n",
    )
    tickets.write_text(text, encoding="utf-8")
    result = _run(tickets, FunctionWriter(good_answer))
    assert "toolsets.reading" not in result.drafted
    why = "its toolset is not a block mapping nor a one-line flow mapping (write its expansions by hand)"
    assert ("toolsets.reading", why) in result.dropped
    assert tickets.read_text(encoding="utf-8").count("reading: {description") == 1
    assert "examples" not in _data(tickets)["toolsets"]["reading"]


def test_lint_reports_a_toolsets_mark_until_it_is_deleted(tickets: Path) -> None:
    _run(tickets, FunctionWriter(good_answer))
    strict = LintSettings()
    found = [d for d in lint_target(LintTarget(tickets), strict).findings if d.code == "examples-unreviewed"]
    pointers = {d.location.pointer for d in found if d.location is not None}
    assert "/toolsets/reading" in pointers and len(found) == len(load_intent_map(tickets).model.tools) + 1
    lines = tickets.read_text(encoding="utf-8").splitlines(keepends=True)
    at = lines.index("  reading:\n") - 1
    tickets.write_text("".join(lines[:at] + lines[at + 1 :]), encoding="utf-8")
    found = [d for d in lint_target(LintTarget(tickets), strict).findings if d.code == "examples-unreviewed"]
    assert "/toolsets/reading" not in {d.location.pointer for d in found if d.location is not None}


def test_toolsets_count_toward_max_tools(tickets: Path) -> None:
    writer = FunctionWriter(good_answer)
    result = _run(tickets, writer, max_tools=5)
    assert "toolsets.reading" in result.plan.later and "toolsets.reading" not in result.drafted
    assert all("toolsets" not in json.loads(p) for p in writer.prompts)
    result = _run(tickets, FunctionWriter(good_answer), max_tools=5)
    assert list(result.drafted) == ["toolsets.reading"]
