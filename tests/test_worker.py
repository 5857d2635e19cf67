"""models.py computed in a forked worker process: same bytes as inline, failures surface, nothing is
left running."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import REPO

import toolgen.build as build_module
from toolgen import worker
from toolgen.build import build_api
from toolgen.worker import Pending, run_beside


def _build(tmp: Path, api: str) -> dict[str, bytes]:
    return build_api(REPO / "intent_maps" / f"{api}.yaml", tmp / "out", base=REPO).files


@pytest.mark.parametrize("api", ["tickets", "github"])
def test_worker_and_inline_builds_are_byte_identical(api: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLGEN_WORKERS", "0")
    inline = _build(tmp_path / "inline", api)
    monkeypatch.delenv("TOOLGEN_WORKERS")
    monkeypatch.setattr(worker, "worker_allowed", lambda: True)
    monkeypatch.setattr(build_module, "WORKER_MIN_TOOLS", 0)
    started: list[Pending[Any]] = []

    def spy(*args: Any, **kwargs: Any) -> Pending[Any]:
        pending = run_beside(*args, **kwargs)
        started.append(pending)
        return pending

    monkeypatch.setattr(build_module, "run_beside", spy)
    forked = _build(tmp_path / "forked", api)
    assert [p.in_worker for p in started] == [True]
    assert forked == inline
    assert forked["models.py"] == (REPO / "generated" / api / "models.py").read_bytes()


def _raise(arg: str) -> str:
    raise ValueError(f"bad {arg}")


def _die(arg: str) -> str:
    os._exit(3)


def _sleep(arg: float) -> str:
    time.sleep(arg)
    return "woke"


class _Unpicklable(Exception):
    def __reduce__(self) -> Any:
        raise TypeError("no")


def _raise_unpicklable(arg: str) -> str:
    raise _Unpicklable(arg)


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "worker_allowed", lambda: True)


@pytest.mark.usefixtures("forking")
def test_an_exception_in_the_worker_is_raised_in_the_caller() -> None:
    pending = run_beside(_raise, "input", label="x", size=1, min_size=0)
    assert pending.in_worker
    with pytest.raises(ValueError, match="bad input"):
        pending.result()


@pytest.mark.usefixtures("forking")
def test_an_exception_that_does_not_pickle_still_arrives_as_text() -> None:
    pending = run_beside(_raise_unpicklable, "oops", label="x", size=1, min_size=0)
    with pytest.raises(RuntimeError, match="_Unpicklable: oops"):
        pending.result()


@pytest.mark.usefixtures("forking")
def test_a_worker_that_dies_is_a_clear_error() -> None:
    pending = run_beside(_die, "x", label="models.py", size=1, min_size=0)
    with pytest.raises(RuntimeError, match=r"computing models.py died \(exit code 3.*TOOLGEN_WORKERS=0"):
        pending.result()


@pytest.mark.usefixtures("forking")
def test_closing_stops_a_running_worker() -> None:
    pending = run_beside(_sleep, 600.0, label="x", size=1, min_size=0)
    process = pending._process
    assert process.is_alive()
    pid = process.pid
    with worker.closing(pending):
        pass
    assert pending._process is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped, not left behind


def test_a_build_that_fails_leaves_no_worker_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "worker_allowed", lambda: True)
    monkeypatch.setattr(build_module, "WORKER_MIN_TOOLS", 0)
    started: list[Pending[Any]] = []

    def slow(*args: Any, **kwargs: Any) -> Pending[Any]:
        pending = run_beside(_sleep, 600.0, label="models.py", size=1, min_size=0)
        started.append(pending)
        return pending

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("catalogs failed")

    monkeypatch.setattr(build_module, "run_beside", slow)
    monkeypatch.setattr(build_module, "build_catalogs", broken)
    with pytest.raises(RuntimeError, match="catalogs failed"):
        _build(tmp_path, "tickets")
    assert started and started[0]._process is None


def test_inline_when_told_or_when_small_or_threaded(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not run_beside(_sleep, 0.0, label="x", size=5, min_size=100).in_worker
    monkeypatch.setenv("TOOLGEN_WORKERS", "0")
    assert not worker.worker_allowed()
    monkeypatch.delenv("TOOLGEN_WORKERS")
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not worker.worker_allowed()  # forking a threaded process can copy a held lock
    finally:
        stop.set()
        thread.join()
    inline = run_beside(_sleep, 0.0, label="x", size=5, min_size=100)
    assert inline.result() == "woke"

