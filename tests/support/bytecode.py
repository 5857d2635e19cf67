"""Cached bytecode for the suite's own processes when the environment says not to write any.

With ``PYTHONDONTWRITEBYTECODE`` set (as some CI images and containers do), nothing Python compiles is
kept: both pytest-xdist workers and every ``toolgen`` subprocess a test starts compile toolgen from
source before doing any work. Pointing them at a bytecode prefix (``PYTHONPYCACHEPREFIX``) is not
enough on its own: under a prefix Python reads bytecode *only* from the prefix, never the
``__pycache__`` folders the interpreter and the installed packages ship with, so a prefix holding
toolgen alone makes every process compile the standard library and the dependencies it imports
(about 0.55 CPU s more per ``toolgen call`` than with no prefix at all, measured on the 2-core machine
the README's timing comes from).

`prepare` therefore chooses a prefix under ``.pytest_cache/`` (never beside the sources, which is
what the setting asks for) and lets the suite's processes write into it: it exports the prefix and
drops ``PYTHONDONTWRITEBYTECODE`` from the environment the workers and their subprocesses inherit.
The first process to import a module (toolgen, the standard library, a dependency) compiles it into
the prefix and every later one reads it. ``generator/`` and ``tests/support/`` are compiled up front
so the workers, which start together, do not each compile toolgen. With a prefix set Python writes
bytecode nowhere else, and it checks each cached file against its source's modification time and
size, so an edited module is compiled afresh, never run stale.

Nothing happens when bytecode may be written (Python's own cache then does the work) or when the
caller chose a prefix already.
"""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

PREFIX_ENV = "PYTHONPYCACHEPREFIX"
NO_WRITE_ENV = "PYTHONDONTWRITEBYTECODE"


def prepare(repo: Path) -> Path | None:
    """Point this process and its children at the bytecode prefix ``<repo>/.pytest_cache/bytecode``,
    let them write into it, and compile the suite's sources there; returns the prefix, or None when
    nothing needed doing.

    Call it only in the process that starts the xdist workers (not in a worker: they inherit it).
    Compilation errors are left to the import that meets them (they are reported there, located).
    """
    if not sys.flags.dont_write_bytecode or os.environ.get(PREFIX_ENV) or sys.pycache_prefix:
        return None
    prefix = repo / ".pytest_cache" / "bytecode"
    prefix.mkdir(parents=True, exist_ok=True)
    sys.pycache_prefix = str(prefix)
    sys.dont_write_bytecode = False  # into the prefix only: with a prefix set nothing goes beside a source
    os.environ[PREFIX_ENV] = str(prefix)
    os.environ.pop(NO_WRITE_ENV, None)
    for folder in (repo / "generator", repo / "tests" / "support"):
        compileall.compile_dir(folder, quiet=2, workers=1)
    return prefix
