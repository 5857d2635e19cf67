"""models.py computed in a forked worker process: same bytes as inline, failures surface, nothing is
left running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import REPO

import toolgen.builder.build as build_module
from toolgen.builder import incremental, worker
from toolgen.builder.build import build_api
from toolgen.builder.worker import Pending, Worker, run_with


def _build(tmp: Path, api: str) -> dict[str, bytes]:
    return build_api(REPO / "intent_maps" / f"{api}.yaml", tmp / "out", base=REPO).files


@pytest.mark.parametrize("api", ["tickets", "github"])
def test_worker_and_inline_builds_are_byte_identical(
    api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLGEN_WORKERS", "0")
    inline = _build(tmp_path / "inline", api)
    monkeypatch.delenv("TOOLGEN_WORKERS")
    monkeypatch.setattr(worker, "worker_allowed", lambda: True)
    monkeypatch.setattr(build_module, "WORKER_MIN_TOOLS", 0)
    started: list[Pending[Any]] = []

    def spy(*args: Any, **kwargs: Any) -> Pending[Any]:
        pending = run_with(*args, **kwargs)
        started.append(pending)
        return pending

    monkeypatch.setattr(incremental, "run_with", spy)  # the build starts the package's job there
    forked = _build(tmp_path / "forked", api)
    assert [p.in_worker for p in started] == [True]
    assert forked == inline
    assert forked["models.py"] == (REPO / "generated" / api / "models.py").read_bytes()


def _raise(arg: str) -> list[str]:
    raise ValueError(f"bad {arg}")


def _die(arg: str) -> list[str]:
    os._exit(3)


def _sleep(arg: float) -> list[str]:
    time.sleep(arg)
    return ["woke"]


def _same(item: Any) -> Any:
    return item


def _slowly(item: int) -> tuple[int, int]:
    time.sleep(0.002)
    return os.getpid(), item * item


def _numbers(n: int) -> list[int]:
    return list(range(n))


class _Unpicklable(Exception):
    def __reduce__(self) -> Any:
        raise TypeError("no")


def _raise_unpicklable(arg: str) -> list[str]:
    raise _Unpicklable(arg)


def _run(prepare: Any, arg: Any, label: str = "x") -> Pending[Any]:
    return Worker(label).run(prepare, _same, list, arg)


def test_the_build_takes_over_half_of_what_is_left_and_the_order_holds() -> None:
    pending = Worker("x").run(_numbers, _slowly, list, 400)
    time.sleep(0.2)  # the worker is part-way through (400 items of 2 ms)
    results = pending.result()
    assert [square for _, square in results] == [i * i for i in range(400)]
    pids = {pid for pid, _ in results}
    assert os.getpid() in pids and len(pids) == 2  # both processes computed some


def test_a_worker_already_through_needs_no_help() -> None:
    pending = Worker("x").run(_numbers, _same, list, 5)
    time.sleep(0.5)
    assert pending.result() == [0, 1, 2, 3, 4]


def test_an_exception_in_the_worker_is_raised_in_the_caller() -> None:
    pending = _run(_raise, "input")
    assert pending.in_worker
    with pytest.raises(ValueError, match="bad input"):
        pending.result()


def test_an_exception_that_does_not_pickle_still_arrives_as_text() -> None:
    with pytest.raises(RuntimeError, match="_Unpicklable: oops"):
        _run(_raise_unpicklable, "oops").result()


class _TwoArguments(Exception):
    def __init__(self, text: str, code: int) -> None:
        super().__init__(f"{text} ({code})")


def _raise_two_arguments(arg: str) -> list[str]:
    raise _TwoArguments(arg, 7)


def test_an_exception_that_does_not_unpickle_still_arrives_as_text() -> None:
    # it pickles (as its class and args) but `_TwoArguments(*args)` fails: the build must not raise
    # a TypeError of its own while reading the outcome
    with pytest.raises(RuntimeError, match=r"_TwoArguments: oops \(7\)"):
        _run(_raise_two_arguments, "oops").result()


def _gone(pid: int) -> bool:
    """Whether `pid` has ended (a zombie has ended too: the parent that would reap it was killed)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


_KILLED_BUILD = """
import sys, time
from tests.builder.test_worker import _numbers, _slowly
from toolgen.builder.worker import Worker
worker = Worker("models.py")
if sys.argv[1] == "busy":
    worker.run(_numbers, _slowly, list, 100_000)  # 200 s of items
print(worker.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")
@pytest.mark.parametrize("state", ["waiting", "busy"])
def test_a_killed_build_leaves_no_worker_behind(state: str) -> None:
    # the worker inherited the build's end of the pipe: it never saw end-of-file and waited (or
    # worked and then blocked sending) for ever once the build was killed (out of memory, SIGKILL)
    build = subprocess.Popen(
        [sys.executable, "-c", _KILLED_BUILD, state],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "generator"), str(REPO)])},
    )
    try:
        assert build.stdout is not None
        pid = int(build.stdout.readline())
        time.sleep(0.5)  # the worker is waiting for a job, or part-way through it
    finally:
        build.kill()
        build.wait()
    deadline = time.monotonic() + 10
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not _gone(pid):
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"worker {pid} still running after its build was killed")


def test_a_worker_that_dies_is_a_clear_error() -> None:
    pending = _run(_die, "x", "models.py")
    with pytest.raises(RuntimeError, match=r"computing models.py died \(exit code 3.*TOOLGEN_WORKERS=0"):
        pending.result()


def test_a_worker_dead_before_the_job_is_a_clear_error() -> None:
    # killed (say by the out-of-memory killer) while the build was still lowering the operations:
    # sending the job met a closed pipe and the build raised a bare BrokenPipeError
    worker_ = Worker("models.py")
    assert worker_.pid is not None
    os.kill(worker_.pid, signal.SIGKILL)
    os.waitid(os.P_PID, worker_.pid, os.WEXITED | os.WNOWAIT)  # dead, not yet reaped
    with pytest.raises(RuntimeError, match=r"computing models.py died \(exit code -9.*TOOLGEN_WORKERS=0"):
        worker_.run(_numbers, _same, list, 10)
    assert worker_.pid is None


@pytest.mark.parametrize("with_job", [True, False])
def test_closing_stops_a_worker_busy_or_waiting(with_job: bool) -> None:
    worker_ = Worker("x")
    if with_job:
        worker_.run(_sleep, _same, list, 600.0)
    pid = worker_.pid
    assert pid is not None
    with worker.closing(worker_):
        pass
    assert worker_.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped, not left behind


def _fail_to_warm() -> None:
    raise OSError("no warm-up here")


def test_a_warm_up_that_fails_costs_nothing_but_time() -> None:
    assert Worker("x", _fail_to_warm).run(_numbers, _same, list, 3).result() == [0, 1, 2]


def test_a_small_job_runs_inline_and_frees_the_worker() -> None:
    worker_ = Worker("x")
    pending = run_with(worker_, _sleep, _same, list, 0.0, size=5, min_size=100)
    assert not pending.in_worker and worker_.pid is None
    assert pending.result() == ["woke"]


def test_a_build_that_fails_leaves_no_worker_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "worker_allowed", lambda: True)
    started: list[Worker] = []

    def start(label: str, warm: Any = None) -> Worker:
        started.append(Worker(label, warm))
        return started[-1]

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("catalogs failed")

    monkeypatch.setattr(build_module, "start_worker", start)
    monkeypatch.setattr(build_module, "build_catalogs", broken)
    with pytest.raises(RuntimeError, match="catalogs failed"):
        _build(tmp_path, "tickets")
    assert started and started[0].pid is None


def test_no_worker_when_told_off_linux_or_threaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLGEN_WORKERS", "0")
    assert not worker.worker_allowed()
    assert worker.start_worker("x") is None
    monkeypatch.delenv("TOOLGEN_WORKERS")
    with monkeypatch.context() as patched:
        patched.setattr(sys, "platform", "darwin")  # system libraries there are not fork-safe
        assert not worker.worker_allowed()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not worker.worker_allowed()  # forking a threaded process can copy a held lock
    finally:
        stop.set()
        thread.join()


def test_one_cpu_still_gets_a_worker_that_does_not_warm_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """On one CPU the worker keeps the job's memory out of the build's; it does not warm up (that
    would compete with the build for the one CPU and be wasted on a job small enough to run inline)."""
    monkeypatch.delenv("TOOLGEN_WORKERS", raising=False)
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # pytest-xdist runs threads of its own
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    warmed: list[object] = []

    def fake_worker(label: str, warm: Callable[[], object] | None = None) -> Any:
        warmed.append(warm)
        return label

    def warm_up() -> None:
        pass

    monkeypatch.setattr(worker, "Worker", fake_worker)
    assert worker.worker_allowed()
    started: Any = worker.start_worker("x", warm_up)
    assert started == "x"
    assert warmed == [None]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    started = worker.start_worker("x", warm_up)
    assert started == "x"
    assert warmed == [None, warm_up]


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_a_plain_single_threaded_process_may_fork() -> None:
    code = (
        "import toolgen.builder.build as b, toolgen.builder.worker as w\n"
        "b.WORKER_MIN_TOOLS = 0\n"
        "used = []\n"
        "run = w.Worker.run\n"
        "w.Worker.run = lambda self, *a: used.append(self.pid) or run(self, *a)\n"
        "from pathlib import Path\n"
        f"b.build_api(Path({str(REPO / 'intent_maps' / 'tickets.yaml')!r}), Path('out'), base=Path({str(REPO)!r}))\n"
        "print(w.worker_allowed(), bool(used))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TOOLGEN_WORKERS"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["True", "True"]


def test_result_is_computed_once_and_asked_for_again() -> None:
    pending = Worker("x").run(_numbers, _same, list, 3)
    assert pending.result() == [0, 1, 2]
    assert pending.result() == [0, 1, 2]  # the worker is gone; the value stays
    failing = Worker("x").run(_raise, _same, list, "twice")
    for _ in range(2):
        with pytest.raises(ValueError, match="bad twice"):
            failing.result()
