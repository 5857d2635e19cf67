"""`toolgen`, the command line: one module per command, the only package that imports click.

    toolgen build · lint · init · describe · diff · vendor · call · serve · approve · search · catalog · schema · eval

Each command's module is imported when the command runs (`toolgen build` imports no runtime, server
or eval code). Input: the command line. Output: what each command prints, and the exit code. Every command
shares one exit-code table (`toolgen.cli.exits`): 0 ok · 1 check or lint failed ·
2 bad input (spec, intent map, project file, arguments) · 3 internal error. User mistakes are printed
as located diagnostics (`file:line:col: error[code]: message` + hint), never as tracebacks.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator, MutableMapping
from importlib import import_module
from types import ModuleType

import click

from .. import __version__
from .exits import as_program, ends_at_once

#: command name -> (module of this package, attribute): each module is imported when its command is
#: first looked up, so `toolgen build` does not import the runtime, the server or the eval harness
_COMMANDS = {
    "build": ("build_cmd", "build_command"),
    "schema": ("schema_cmd", "schema_command"),
    "call": ("call", "call_command"),
    "serve": ("serve", "serve_command"),
    "lint": ("lint", "lint_command"),
    "init": ("init_cmd", "init_command"),
    "describe": ("describe_cmd", "describe_command"),
    "diff": ("diff_cmd", "diff_command"),
    "vendor": ("vendor", "vendor_command"),
    "search": ("search_cmd", "search_command"),
    "catalog": ("catalog", "catalog_command"),
    "approve": ("approve", "approve_command"),
    "eval": ("eval", "eval_group"),
}


def _imported(name: str) -> ModuleType:
    """The module `name`, imported with the cyclic garbage collector paused: an import makes
    classes, functions and modules that live as long as the process (cycles each, never garbage),
    and the collections their allocations trigger walk them all again, 25 ms of `toolgen build`'s
    imports. The collector's state is restored; what the import dropped is collected later."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return import_module(name)
    finally:
        if was_enabled:
            gc.enable()


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
            command = getattr(_imported(f"{__name__}.{module}"), attribute)
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


def run() -> None:
    """`toolgen` as a program (the console script, ``python -m toolgen``): `main`, whose exit code
    the process ends with. After a command that says it leaves nothing to clean up
    (`toolgen.cli.exits.may_end_at_once`: `toolgen build`), the process ends once stdout and stderr
    are flushed (`os._exit`), without the interpreter's teardown; otherwise it exits as usual."""
    as_program()
    try:
        main()
    except SystemExit as exc:
        if not ends_at_once():
            raise
        code = exc.code
        try:
            if code is not None and not isinstance(code, int):
                print(code, file=sys.stderr)  # as the interpreter prints a SystemExit's message
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):  # a closed or broken stream: the usual exit reports it
            raise exc from None
        os._exit(0 if code is None else code if isinstance(code, int) else 1)


__all__ = ["main", "run"]
