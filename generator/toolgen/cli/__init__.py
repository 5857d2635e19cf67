"""`toolgen`, the command line: one module per command, the only package that imports click.

    toolgen build · lint · init · diff · vendor · call · serve · approve · search · catalog · schema · eval

Each command's module is imported when the command runs (`toolgen build` imports no runtime, server
or eval code). Input: the command line. Output: what each command prints, and the exit code. Every command
shares one exit-code table (`toolgen.cli.exits`): 0 ok · 1 check or lint failed ·
2 bad input (spec, intent map, project file, arguments) · 3 internal error. User mistakes are printed
as located diagnostics (`file:line:col: error[code]: message` + hint), never as tracebacks.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from importlib import import_module

import click

from .. import __version__

#: command name -> (module of this package, attribute): each module is imported when its command is
#: first looked up, so `toolgen build` does not import the runtime, the server or the eval harness
_COMMANDS = {
    "build": ("build", "build_command"), "schema": ("schema", "schema_command"),
    "call": ("call", "call_command"), "serve": ("serve", "serve_command"), "lint": ("lint", "lint_command"),
    "init": ("init", "init_command"), "diff": ("diff", "diff_command"), "vendor": ("vendor", "vendor_command"),
    "search": ("search", "search_command"), "catalog": ("catalog", "catalog_command"),
    "approve": ("approve", "approve_command"), "eval": ("eval", "eval_group"),
}


class _LazyCommands(MutableMapping[str, click.Command]):
    """The group's command table (`click.Group.commands`): every name of `_COMMANDS`, each command
    imported on first access; commands added later (`add_command`) are kept as given."""

    def __init__(self) -> None:
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._loaded:
            if name not in _COMMANDS:
                raise KeyError(name)
            module, attribute = _COMMANDS[name]
            command = getattr(import_module(f"{__name__}.{module}"), attribute)
            assert isinstance(command, click.Command)
            self._loaded[name] = command
        return self._loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        raise TypeError("toolgen's commands cannot be removed")

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*_COMMANDS, *self._loaded]))

    def __len__(self) -> int:
        return len(set(_COMMANDS) | set(self._loaded))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="toolgen")
def main() -> None:
    """Compile OpenAPI specs + intent maps into strict, policy-enforced agent tools."""


main.commands = _LazyCommands()

__all__ = ["main"]
