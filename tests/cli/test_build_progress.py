"""Progress of long builds: a transient rich bar fed by `lower` and the catalog emitter on a terminal,
plain lines (no bars, no control sequences) elsewhere."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from tests.support.build import REPO, run

from toolgen.builder.build import StepProgress, build_api
from toolgen.cli.build_cmd import _progress_printer, _TerminalProgress

TICKETS = REPO / "intent_maps" / "tickets.yaml"


class _Recorder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.steps_seen: dict[str, list[tuple[int, int]]] = {}

    def __call__(self, line: str) -> None:
        self.lines.append(line)

    def steps(self, label: str):  # type: ignore[no-untyped-def]
        from contextlib import contextmanager

        @contextmanager
        def cm():  # type: ignore[no-untyped-def]
            calls = self.steps_seen.setdefault(label, [])
            yield lambda done, total: calls.append((done, total))

        return cm()


def test_lower_and_emit_report_steps(tmp_path: Path) -> None:
    rec = _Recorder()
    assert isinstance(rec, StepProgress)
    built = build_api(TICKETS, tmp_path / "out", progress=rec)
    lowering = rec.steps_seen["tickets: lowering operations"]
    emitting = rec.steps_seen["tickets: emitting catalogs"]
    assert lowering and lowering[-1][0] == lowering[-1][1]  # ends complete
    assert [d for d, _ in lowering] == sorted(d for d, _ in lowering)
    assert emitting[-1] == (len(built.ir.tools), len(built.ir.tools))
    assert any("lowered" in line for line in rec.lines)


def test_terminal_progress_draws_a_bar_and_escapes_markup(tmp_path: Path) -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=100, highlight=False)
    progress = _TerminalProgress(console)
    progress("[bold]not markup[/bold] from a spec")
    with progress.steps("x: lowering operations") as advance:
        for i in range(1, 4):
            advance(i, 3)
    text = buffer.getvalue()
    assert "[bold]not markup[/bold]" in text
    assert "\x1b[" in text  # a terminal gets colours and the transient bar


def test_line_oriented_without_a_terminal(tmp_path: Path) -> None:
    assert not isinstance(_progress_printer(False), _TerminalProgress)  # pytest's stderr is no terminal
    assert _progress_printer(True) is None
    result = run("build", str(TICKETS), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(line.startswith("tickets: lowered") for line in lines)
    assert any(line.startswith("tickets: wrote") for line in lines)
    assert "\r" not in result.output and "\x1b" not in result.output
