"""Compiled bytecode for the suite's own processes when the environment says not to write any.

With ``PYTHONDONTWRITEBYTECODE`` set (as some CI images and containers do), Python compiles every
module of toolgen from source again in each process: both pytest-xdist workers and every ``toolgen``
subprocess a test starts pay about 0.3 CPU s for it before doing any work (measured on the 2-core
machine the README's timing comes from). `prepare` compiles ``generator/`` and ``tests/support/``
once, before the workers start, into a bytecode prefix under ``.pytest_cache/`` (never beside the
sources, which is what the setting asks for), and exports that prefix (``PYTHONPYCACHEPREFIX``) so the
workers and their subprocesses read it. Python checks each cached file against its source's
modification time and size, so an edited module is compiled afresh, never run stale.

Nothing happens when bytecode may be written (Python's own cache then does the work) or when the
caller chose a prefix already.
"""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

PREFIX_ENV = "PYTHONPYCACHEPREFIX"


def prepare(repo: Path) -> Path | None:
    """Compile the suite's sources into ``<repo>/.pytest_cache/bytecode`` and point this process and
    its children at it; returns the prefix, or None when nothing needed doing.

    Call it only in the process that starts the xdist workers (not in a worker: they inherit it).
    Compilation errors are left to the import that meets them (they are reported there, located).
    """
    if not sys.flags.dont_write_bytecode or os.environ.get(PREFIX_ENV) or sys.pycache_prefix:
        return None
    prefix = repo / ".pytest_cache" / "bytecode"
    prefix.mkdir(parents=True, exist_ok=True)
    sys.pycache_prefix = str(prefix)
    os.environ[PREFIX_ENV] = str(prefix)
    for folder in (repo / "generator", repo / "tests" / "support"):
        compileall.compile_dir(folder, quiet=2, workers=1)
    return prefix
