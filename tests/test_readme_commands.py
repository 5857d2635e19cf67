"""README.md's command table names every command of `toolgen --help`, each with every option it takes.

Attacks: a command added to the CLI without a row, a row for a command that no longer exists, and an
option added to (or renamed in) a command without the README saying so.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from toolgen.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def _rows() -> dict[str, str]:
    """`toolgen CMD ...` synopsis of each row of README's command table, by command name."""
    rows: dict[str, str] = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        found = re.match(r"^\| `toolgen ([a-z]+)([^`]*)` \|", line)
        if found:
            rows[found.group(1)] = found.group(2)
    return rows


def test_every_command_has_a_row_and_every_row_a_command() -> None:
    assert isinstance(main, click.Group)
    assert sorted(_rows()) == sorted(main.commands)


def test_every_option_of_every_command_is_in_its_row() -> None:
    assert isinstance(main, click.Group)
    rows = _rows()
    missing = []
    for name, command in main.commands.items():
        for param in command.params:
            if not isinstance(param, click.Option) or "--help" in param.opts:
                continue
            if not any(
                re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", rows.get(name, "")) for opt in param.opts
            ):
                missing.append(f"toolgen {name} {param.opts[-1]}")
    assert not missing, f"README's command table lacks: {missing}"
