"""`toolgen diff [BASE_REF | OLD_DIR NEW_DIR] [--format markdown|json] [--fail-on risky|any|never]`.

Input: two versions of the generated folder (a git ref and the working tree, or two folders).
Output: the tool-surface diff of `toolgen.review.diff` as Markdown (a pull-request comment) or JSON;
exit 1 when `--fail-on` says the changes found must fail the check.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import click

from ..diagnostics import DiagnosticError
from ..review.diff import diff_surfaces, render_json, render_markdown
from ..review.diff_inputs import read_dir, read_git
from .exits import ExitCode, guarded, print_diagnostics


@click.command("diff")
@click.argument("refs", nargs=-1, metavar="[BASE_REF | OLD_DIR NEW_DIR]")
@click.option(
    "--dir",
    "directory",
    default="generated",
    show_default=True,
    help="The generated folder compared at BASE_REF and in the working tree.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True
)
@click.option(
    "--fail-on",
    type=click.Choice(["risky", "any", "never"]),
    default="never",
    show_default=True,
    help="Exit 1 when a risky change (or any change) is found.",
)
@guarded
def diff_command(
    refs: tuple[str, ...], directory: str, fmt: str, fail_on: Literal["risky", "any", "never"]
) -> None:
    """Compare the generated tool surface: BASE_REF (default HEAD) vs the working tree, or OLD_DIR vs NEW_DIR.

    Risky changes come first: tools removed or renamed, effect widened, approval removed,
    permission changed, idempotency key removed, new required or removed arguments.
    """
    if len(refs) > 2:
        raise click.UsageError("pass BASE_REF, or OLD_DIR NEW_DIR")
    try:
        _diff(refs, directory, fmt, fail_on)
    except DiagnosticError as exc:  # diff writes nothing: say so without "nothing was written"
        print_diagnostics(exc.diagnostics)
        n = sum(1 for d in exc.diagnostics if d.severity == "error")
        click.echo(f"toolgen diff: {n} error{'s' if n != 1 else ''}; no diff was made.", err=True)
        sys.exit(ExitCode.BAD_INPUT)


def _diff(refs: tuple[str, ...], directory: str, fmt: str, fail_on: str) -> None:
    if len(refs) == 2:
        old, new = read_dir(Path(refs[0])), read_dir(Path(refs[1]))
        base, head = refs[0], refs[1]
    else:
        ref = refs[0] if refs else "HEAD"
        old, new = read_git(ref, directory), read_dir(Path(directory))
        base, head = f"{ref}:{directory}", "working tree"
    result = diff_surfaces(old, new)
    render = render_json if fmt == "json" else render_markdown
    click.echo(render(result, base, head), nl=False)
    if (fail_on == "risky" and result.risky) or (fail_on == "any" and result.changes):
        sys.exit(ExitCode.CHECK_FAILED)
