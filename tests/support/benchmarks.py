"""The benchmarks' own modules, loaded by the tests that check them: `benchmarks/` is a folder of
scripts, not a package, so each is loaded from its file once per process, under ``toolgen_bench_<stem>``
(registered in `sys.modules` before it runs: its dataclasses look their module up)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.support.build import REPO


def benchmark_module(stem: str) -> ModuleType:
    """``benchmarks/<stem>.py`` as a module (the same object for every caller of the process). Raises
    whatever the script raises when it is imported, leaving nothing registered."""
    name = f"toolgen_bench_{stem}"
    known = sys.modules.get(name)
    if known is not None:
        return known
    found = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{stem}.py")
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module
    try:
        found.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
