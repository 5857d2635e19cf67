"""The exit-code table of every `toolgen` command, and `guarded`, which applies it.

    0 ok · 1 check or lint failed · 2 bad input (spec, intent map, project file, arguments) · 3 internal error

Input: a command function that raises `DiagnosticError` for bad input. Output: the same command,
printing located diagnostics (`file:line:col: error[code]: message` + hint) instead of tracebacks and
exiting with the code above. Set TOOLGEN_DEBUG=1 to see the traceback of an internal error.
"""

from __future__ import annotations

import enum
import functools
import os
import sys
import traceback
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

from ..diagnostics import Diagnostic, DiagnosticError

F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(enum.IntEnum):
    """The process exit codes shared by every `toolgen` command."""

    OK = 0
    CHECK_FAILED = 1
    BAD_INPUT = 2
    INTERNAL = 3


#: how to install an optional extra (``EXTRA_HINT.format(extra="mcp")``): toolgen is not published on
#: a package index, so an extra is installed from a clone of its repository
EXTRA_HINT = 'pip install -e ".[{extra}]" in your clone of toolgen (it is not on a package index)'


#: whether the command running leaves nothing to clean up at exit (`may_end_at_once`)
_END_AT_ONCE: list[bool] = []


def may_end_at_once() -> None:
    """Say that the command running leaves nothing to clean up when it exits: every file it wrote
    is closed (and renamed into place), no process or thread of its own still runs. `toolgen.cli.run`
    then ends the process as soon as stdout and stderr are flushed, without the interpreter's
    teardown (freeing every module and collecting: 0.05 to 0.1 CPU seconds after a build, a quarter
    of a `--check` answered by the build cache)."""
    _END_AT_ONCE.append(True)


def ends_at_once() -> bool:
    """Whether the command that ran said `may_end_at_once`."""
    return bool(_END_AT_ONCE)


#: set by `toolgen.cli.run` (`as_program`): the process ends when the command returns
_AS_PROGRAM: list[bool] = []
#: what `keep_until_exit` keeps
_KEPT: list[object] = []


def as_program() -> None:
    """Say that the process is `toolgen` as a program (`toolgen.cli.run`), which ends once the command
    returns: what a command keeps until then (`keep_until_exit`) is never freed."""
    _AS_PROGRAM.append(True)


def keep_until_exit(*objects: object) -> None:
    """Keep `objects` alive until the process ends, when it is `toolgen` as a program (`as_program`) and
    the command said `may_end_at_once`: the process then ends without freeing them. A build's IR,
    catalogs and files are millions of objects, whose freeing cost 0.04 CPU seconds on GitHub's drafted
    map for nothing. Called in-process (tests, a program importing `toolgen.cli.main`), nothing is kept."""
    if _AS_PROGRAM and _END_AT_ONCE:
        _KEPT.append(objects)


def print_diagnostics(diagnostics: Iterable[Diagnostic]) -> None:
    """Each diagnostic on stderr, as `Diagnostic.render` writes it: a line (and its hint), whatever
    spec text its fields hold, so spec text cannot forge log lines."""
    for d in diagnostics:
        click.echo(d.render(), err=True)


def guarded(func: F) -> F:
    """Map `DiagnosticError` to exit 2 and unexpected exceptions to exit 3, without tracebacks."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except DiagnosticError as exc:
            print_diagnostics(exc.diagnostics)
            n = sum(1 for d in exc.diagnostics if d.severity == "error")
            click.echo(f"toolgen: {n} error{'s' if n != 1 else ''}; nothing was written.", err=True)
            sys.exit(ExitCode.BAD_INPUT)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - an internal error: say so, point at the fix, no traceback by default
            if os.environ.get("TOOLGEN_DEBUG"):
                traceback.print_exc()
            click.echo(f"toolgen: internal error: {type(exc).__name__}: {exc}", err=True)
            click.echo(
                "  this is a toolgen bug; rerun with TOOLGEN_DEBUG=1 and report the traceback", err=True
            )
            sys.exit(ExitCode.INTERNAL)

    return wrapper  # type: ignore[return-value]
