"""`toolgen eval init|run|report` on the command line: drafts, the committed recorded run, replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "evals" / "runs" / "tickets-anthropic-scripted"


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(ROOT)
    return CliRunner()


def test_init_writes_the_draft_and_refuses_to_overwrite(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "tickets.yaml"
    done = cli.invoke(main, ["eval", "init", "tickets", "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "42 tasks" in done.output and "10 held out" in done.output
    committed = (ROOT / "evals" / "tickets.yaml").read_text(encoding="utf-8").splitlines()
    written = out.read_text(encoding="utf-8").splitlines()
    assert [line for line in written if not line.startswith("package:")] == [
        line for line in committed if not line.startswith("package:")
    ]
    again = cli.invoke(main, ["eval", "init", "tickets", "--out", str(out)])
    assert again.exit_code == 2 and "--force" in again.output


def test_report_of_the_committed_run_is_its_report(cli: CliRunner) -> None:
    done = cli.invoke(main, ["eval", "report", str(RUN)])
    assert done.exit_code == 0, done.output
    assert done.output == (RUN / "REPORT.md").read_text(encoding="utf-8")
    assert "Scripted model" in done.output and "not a\n> language model" in done.output
    as_json = json.loads(cli.invoke(main, ["eval", "report", str(RUN), "--format", "json"]).output)
    assert set(as_json["splits"]) == {"dev", "held-out", "all"}
    assert len(as_json["splits"]["all"]["selection"]["per_run"]) == as_json["meta"]["runs"] == 3


def test_replay_of_the_committed_run_reproduces_it_offline(cli: CliRunner, tmp_path: Path) -> None:
    done = cli.invoke(
        main,
        [
            "eval",
            "run",
            "tickets",
            "--replay",
            str(RUN),
            "--only",
            "ticket_followup/*",
            "--out",
            str(tmp_path),
        ],
    )
    assert done.exit_code == 0, done.output
    replayed = json.loads((tmp_path / "results.json").read_text())
    recorded = json.loads((RUN / "results.json").read_text())
    assert replayed["meta"]["provider"] == "anthropic" and replayed["meta"]["scripted"] is True

    def strip(run: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in o.items() if k != "latency_s"}
            for o in run
            if o["task"].startswith("ticket_followup/")
        ]

    assert len(strip(replayed["runs"][0])) == 9
    assert [strip(r) for r in replayed["runs"]] == [strip(r) for r in recorded["runs"]]
    assert all(o["error"] is None for r in replayed["runs"] for o in r)


def test_run_without_a_key_or_with_a_bad_task_file_is_bad_input(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    done = cli.invoke(main, ["eval", "run", "tickets", "--provider", "openai", "--model", "m"])
    assert done.exit_code == 2 and "OPENAI_API_KEY" in done.output
    bad = tmp_path / "t.yaml"
    bad.write_text("toolgen_eval: 2\napi: tickets\npackage: x\ntasks: []\n", encoding="utf-8")
    done = cli.invoke(
        main, ["eval", "run", "tickets", "--provider", "openai", "--model", "m", "--tasks", str(bad)]
    )
    assert done.exit_code == 2
    assert "t.yaml:1:1 (#/toolgen_eval): error[eval-format]" in done.output
