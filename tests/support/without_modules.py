"""Run `toolgen` as a program with some packages impossible to import, as on a machine where an
optional extra is not installed: ``python without_modules.py MOD[,MOD...] ARGS...`` runs
``toolgen ARGS...`` with a meta path finder, first in `sys.meta_path`, that refuses each named
module and every submodule of it with the `ModuleNotFoundError` a missing package raises.

`toolgen_without` runs it as a subprocess and returns the completed process (text, captured)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


class _Refuse(MetaPathFinder):
    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if any(fullname == n or fullname.startswith(n + ".") for n in self.names):
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


def toolgen_without(
    modules: Sequence[str],
    args: Sequence[str],
    *,
    cwd: Path = ROOT,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`toolgen ARGS` in a subprocess (cwd `cwd`, stdin closed) where `modules` cannot be imported."""
    environ = dict(os.environ if env is None else env)
    environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "generator"), environ.get("PYTHONPATH")) if p
    )
    return subprocess.run(
        [sys.executable, __file__, ",".join(modules), *args],
        cwd=cwd,
        env=environ,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _main() -> None:
    sys.meta_path.insert(0, _Refuse([n for n in sys.argv[1].split(",") if n]))
    sys.argv = ["toolgen", *sys.argv[2:]]
    from toolgen.cli import run

    run()


if __name__ == "__main__":
    _main()
