"""Hostile eval inputs end in a located exit 2 (or are shown safely), fast: a task file of YAML
aliases that would expand to billions of values, a task id no exchange file can be named after, and a
``results.json`` whose text holds terminal control sequences."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.cli import main
from toolgen.diagnostics import DiagnosticError
from toolgen.evals.tasks import load_tasks

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "evals" / "runs" / "tickets-anthropic-scripted"
PACKAGE = (ROOT / "generated" / "tickets").as_posix()

#: the billion laughs, as a task file: 9 levels of 9 aliases each (9**9 = 387,420,489 prompts)
LAUGHS = "\n".join(
    [
        "toolgen_eval: 1",
        "api: tickets",
        f"package: {PACKAGE}",
        "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]",
        *(
            f"l{i}: &l{i} [*l{i - 1}, *l{i - 1}, *l{i - 1}, *l{i - 1}, *l{i - 1}, *l{i - 1}, *l{i - 1}, *l{i - 1}, "
            f"*l{i - 1}]"
            for i in range(1, 9)
        ),
        "tasks:",
        "- {id: a, tool: get_ticket, kind: positive, prompt: p,",
        "   expect: {tool: get_ticket, args: [{pointer: /ticket_id, equals: *l8}]}}",
        "",
    ]
)


def _task_file(tmp_path: Path, task_id: str) -> Path:
    path = tmp_path / "tasks.yaml"
    path.write_text(
        json.dumps(
            {
                "toolgen_eval": 1,
                "api": "tickets",
                "package": PACKAGE,
                "tasks": [
                    {
                        "id": task_id,
                        "tool": "get_ticket",
                        "kind": "positive",
                        "prompt": "Show ticket T-102.",
                        "expect": {"tool": "get_ticket", "writes": 0},
                    }
                ],
            },
            ensure_ascii=any(0xD800 <= ord(c) <= 0xDFFF for c in task_id),
        ),
        encoding="utf-8",
    )
    return path


def test_a_task_file_of_aliases_is_refused_at_once_located(tmp_path: Path) -> None:
    path = tmp_path / "laughs.yaml"
    path.write_text(LAUGHS, encoding="utf-8")
    assert len(LAUGHS.encode()) < 1000
    started = time.monotonic()
    with pytest.raises(DiagnosticError) as caught:
        load_tasks(path)
    assert time.monotonic() - started < 5
    [d] = caught.value.diagnostics
    assert d.location is not None
    assert d.code == "eval-yaml" and (d.location.line, d.location.col) == (4, 5), d.render()
    assert "anchor" in d.message and "write" in (d.hint or "")
    started = time.monotonic()
    done = CliRunner().invoke(main, ["eval", "run", "tickets", "--tasks", str(path), "--replay", str(RUN)])
    assert done.exit_code == 2 and "laughs.yaml:4:5" in done.output, done.output
    assert time.monotonic() - started < 10


def test_an_alias_alone_is_refused_too(tmp_path: Path) -> None:
    path = tmp_path / "alias.yaml"
    path.write_text(
        LAUGHS.replace("l0: &l0", "l0: &l0 ").split("l1:")[0] + "l1: *l0\ntasks: []\n", encoding="utf-8"
    )
    with pytest.raises(DiagnosticError) as caught:
        load_tasks(path)
    where = caught.value.diagnostics[0].location
    assert where is not None and where.line == 4


@pytest.mark.parametrize(
    "task_id", ["a\x00b", "x" * 300, "a\x1b[2Jb", "a\u202eb", "/".join(["\u4e00" * 40] * 3), "", "\ud800"]
)
def test_a_task_id_no_file_can_be_named_after_is_a_located_exit_2(tmp_path: Path, task_id: str) -> None:
    path = _task_file(tmp_path, task_id)
    with pytest.raises(DiagnosticError) as caught:
        load_tasks(path)
    [d] = caught.value.diagnostics
    assert d.location is not None and d.location.pointer == "/tasks/0/id" and d.location.line, d.render()
    done = CliRunner().invoke(
        main,
        [
            "eval",
            "run",
            "tickets",
            "--tasks",
            str(path),
            "--provider",
            "anthropic",
            "--scripted",
            "--runs",
            "1",
            "--record",
            str(tmp_path / "rec"),
        ],
    )
    assert done.exit_code == 2, (done.exit_code, done.output)
    assert "tasks.yaml:1:" in done.output and "/tasks/0/id" in done.output


@settings(max_examples=examples(60), deadline=None)
@given(task_id=st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=130))
def test_every_accepted_task_id_names_an_exchange_file(
    tmp_path_factory: pytest.TempPathFactory, task_id: str
) -> None:
    folder = tmp_path_factory.mktemp("ids")
    try:
        [task] = load_tasks(_task_file(folder, task_id)).tasks
    except DiagnosticError:
        return
    target = folder / (task.id.replace("/", "--") + ".json")  # toolgen.evals.runner's exchange file
    target.write_text("{}", encoding="utf-8")
    assert target.read_text(encoding="utf-8") == "{}"


def test_eval_report_prints_no_terminal_control_sequence(tmp_path: Path) -> None:
    shutil.copytree(RUN, tmp_path / "run")
    results = json.loads((RUN / "results.json").read_text(encoding="utf-8"))
    evil = "T\x1b]0;pwned\x07\x1b[2J\u009b31m\u202e"
    results["meta"]["model"] = "model" + evil
    first = results["runs"][0][0]
    first["task"] = first["task"] + evil
    first["error"] = "boom" + evil
    first["text"] = "said" + evil
    (tmp_path / "run" / "results.json").write_text(json.dumps(results), encoding="utf-8")
    for fmt in ("markdown", "json"):
        done = CliRunner().invoke(main, ["eval", "report", str(tmp_path / "run"), "--format", fmt])
        assert done.exit_code == 0, done.output
        raw = [c for c in done.output if c in "\x1b\x07\u009b\u202e"]
        assert not raw, (fmt, raw)
        assert "\\u001b" in done.output, fmt
        if fmt == "json":
            json.loads(done.output)  # still JSON, with the same values
