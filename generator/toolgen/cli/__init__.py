"""`toolgen`, the command line: one module per command, the only package that imports click.

    toolgen build · lint · init · diff · vendor · call · serve · approve · search · catalog · schema · eval

Input: the command line. Output: what each command prints, and the exit code. Every command
shares one exit-code table (`toolgen.cli.exits`): 0 ok · 1 check or lint failed ·
2 bad input (spec, intent map, project file, arguments) · 3 internal error. User mistakes are printed
as located diagnostics (`file:line:col: error[code]: message` + hint), never as tracebacks.
"""

from __future__ import annotations

import click

from .. import __version__
from .approve import approve_command
from .build import build_command
from .call import call_command
from .catalog import catalog_command
from .diff import diff_command
from .eval import eval_group
from .init import init_command
from .lint import lint_command
from .schema import schema_command
from .search import search_command
from .serve import serve_command
from .vendor import vendor_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="toolgen")
def main() -> None:
    """Compile OpenAPI specs + intent maps into strict, policy-enforced agent tools."""


for _command in (build_command, schema_command, call_command, serve_command, lint_command, init_command,
                 diff_command, vendor_command, search_command, catalog_command, approve_command, eval_group):
    main.add_command(_command)

__all__ = ["main"]
