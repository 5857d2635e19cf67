"""`toolgen build` runs with the cyclic garbage collector paused from its inputs' digest to its end
(`toolgen.builder.build.gc_paused`) and imports its command's module with it paused, yet runs the
Python package's stage with the collector (the command's pause is the outermost, and the collector
ran before it): each state restored afterwards."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import copy_example, run

import toolgen.builder.build as build_module
from toolgen.builder.build import _gc_resumed, gc_paused
from toolgen.cli import _imported, build_cmd


def test_a_pause_inside_a_pause_resumes_the_collector_for_the_package_stage() -> None:
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
            with _gc_resumed():
                assert gc.isenabled() and gc.get_freeze_count() > 0
            assert not gc.isenabled() and gc.get_freeze_count() == 0
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:  # a caller that paused the collector itself keeps it paused throughout
        with gc_paused(), gc_paused(), _gc_resumed():
            assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_build_command_pauses_the_collector_around_its_inputs_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLGEN_CACHE", "1")
    monkeypatch.setenv("TOOLGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOOLGEN_WORKERS", "0")
    seen: dict[str, bool] = {}
    from toolgen.builder.incremental import inputs_key as digest
    from toolgen.emit.python import package_files as package

    def recording_digest(*args: Any, **kwargs: Any) -> Any:
        seen.setdefault("digest", gc.isenabled())
        return digest(*args, **kwargs)

    def recording_package(*args: Any, **kwargs: Any) -> Any:
        seen["package"] = gc.isenabled()
        return package(*args, **kwargs)

    monkeypatch.setattr(build_cmd, "inputs_key", recording_digest)
    monkeypatch.setattr(build_module, "package_files", recording_package)
    intent = copy_example(tmp_path, "tickets", "tickets.yaml")
    assert gc.isenabled()
    result = run("build", str(intent), "--out", str(tmp_path / "out"), "-q")
    assert result.exit_code == 0, result.output
    assert seen == {"digest": False, "package": True}
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_a_command_module_is_imported_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    class Finder:
        """Records the collector's state when the import system looks the module up."""

        def find_spec(self, name: str, *args: Any) -> None:
            if name == "json.tool":
                seen.append(gc.isenabled())

    monkeypatch.delitem(sys.modules, "json.tool", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    assert _imported("json.tool").__name__ == "json.tool"
    assert seen == [False] and gc.isenabled()
