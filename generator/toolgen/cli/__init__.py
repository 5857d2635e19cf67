"""`toolgen`, the command line: one module per command, the only package that imports click.

    toolgen build · lint · init · diff · vendor · call · serve · approve · search · catalog · schema · eval

Input: the command line. Output: what each command prints, and the exit code. Every command
shares one exit-code table (`toolgen.cli.exits`): 0 ok · 1 check or lint failed ·
2 bad input (spec, intent map, project file, arguments) · 3 internal error. User mistakes are printed
as located diagnostics (`file:line:col: error[code]: message` + hint), never as tracebacks.
"""

from __future__ import annotations

import importlib

import click

from .. import __version__

#: command -> (module of this package, attribute): a command's module (and what it imports: the
#: runtime for `call`, the build for `build`) is imported only when that command runs or is listed
_COMMANDS: dict[str, tuple[str, str]] = {
    "build": ("build", "build_command"), "schema": ("schema", "schema_command"), "call": ("call", "call_command"),
    "serve": ("serve", "serve_command"), "lint": ("lint", "lint_command"), "init": ("init", "init_command"),
    "diff": ("diff", "diff_command"), "vendor": ("vendor", "vendor_command"), "search": ("search", "search_command"),
    "catalog": ("catalog", "catalog_command"), "approve": ("approve", "approve_command"), "eval": ("eval", "eval_group"),
}


class _Commands(click.Group):
    """The command group, importing each command's module on first use (`toolgen build` need not
    import the runtime: 0.3 s of every build's start-up)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        found = _COMMANDS.get(cmd_name)
        if found is None:
            return None
        command: click.Command = getattr(importlib.import_module(f".{found[0]}", __name__), found[1])
        return command


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="toolgen")
def main() -> None:
    """Compile OpenAPI specs + intent maps into strict, policy-enforced agent tools."""


__all__ = ["main"]
