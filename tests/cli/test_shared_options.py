"""The option blocks that several commands share are each declared once (`toolgen.cli.options`):
`call` and `serve` take the same actor and registry options, `eval run`, `describe` and `init
--describe` the same provider options. Factoring them changed no command's ``--help``: each is
compared with the text it had before (tests/cli/golden/help-*.txt), and the shared options are the
same `click.Option` settings in every command that takes them."""

from __future__ import annotations

import os
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from toolgen.cli import main

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_ENV = "TOOLGEN_UPDATE_GOLDEN"
COMMANDS = {
    "call": ["call"],
    "serve": ["serve"],
    "eval-run": ["eval", "run"],
    "describe": ["describe"],
    "init": ["init"],
}


def _help(args: list[str]) -> str:
    result = CliRunner().invoke(main, [*args, "--help"], terminal_width=100, prog_name="toolgen")
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_is_as_it_was(name: str) -> None:
    path = GOLDEN / f"help-{name}.txt"
    actual = _help(COMMANDS[name])
    if os.environ.get(UPDATE_ENV) == "1":
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8"), (
        f"`toolgen {' '.join(COMMANDS[name])} --help` changed; if intended, refresh tests/cli/golden with "
        f"{UPDATE_ENV}=1 python -m pytest tests/cli/test_shared_options.py"
    )


def _options(args: list[str]) -> dict[str, dict[str, object]]:
    command: click.Command = main
    for name in args:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None
        command = found
    return {p.name: p.to_info_dict() for p in command.params if isinstance(p, click.Option) and p.name}


@pytest.mark.parametrize(
    ("first", "second", "shared"),
    [
        ("call", "serve", ["base_url", "receipts_spec", "audit_log"]),
        ("eval-run", "describe", ["model", "base_url", "api_key_env"]),
        ("describe", "init", ["provider", "model", "base_url", "api_key_env", "record", "replay"]),
    ],
)
def test_shared_options_are_the_same_in_each_command(first: str, second: str, shared: list[str]) -> None:
    one, other = _options(COMMANDS[first]), _options(COMMANDS[second])
    for name in shared:
        assert one[name] == other[name], name
