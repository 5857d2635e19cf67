"""Running one pure, divisible stage in a worker process while the build goes on.

The build's longest stage on a large API is `models.py` (datamodel-code-generator, then black a
class at a time); it needs only the argument schemas, known once the operations are lowered, and
its result is text. So the build forks a worker process when it starts, while the process is still
small (the worker then holds its own work only, not a copy-on-write image of the parsed spec and
the IR), hands it the job once the operations are lowered, and builds the catalogs, the lint
findings, the policy table and the report meanwhile. When the build's own work is done and the
worker is not, the worker hands back half of the items it has left, and both CPUs finish the job.

A job is ``finish([each(x) for x in prepare(arg)])``: `prepare` and `each` run in the worker (and
`each` in the build for the items handed back), `finish` in the build. The value is the same either
way: `start_worker` gives no worker when one is not safe (no `fork`, other threads alive) or not wanted
(`TOOLGEN_WORKERS=0`), and then the job runs inline; an exception raised in the worker
is raised in the build. A worker does not outlive its build: `closing` stops it, and a build that
is killed closes the pipe, on which the worker ends.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

T = TypeVar("T")
A = TypeVar("A")

Prepare = Callable[[Any], list[Any]]
Each = Callable[[Any], Any]


class Pending(Generic[T]):
    """A value being computed in a worker process, or to be computed inline, on `result()`."""

    def __init__(self, compute: Callable[[], T], *, in_worker: bool) -> None:
        self._compute: Callable[[], T] | None = compute
        self._values: list[T] = []  # the value, once computed
        self._error: Exception | None = None  # or what computing it raised
        self.in_worker = in_worker  #: whether a worker process computes (most of) it

    def result(self) -> T:
        """The value, computed once (a second call returns it, or raises the same exception again).
        Re-raises what the job raised; RuntimeError if the worker died."""
        if self._compute is not None:
            compute, self._compute = self._compute, None
            try:
                self._values.append(compute())
            except Exception as exc:  # noqa: BLE001 - kept, raised again on every call
                self._error = exc
        if self._error is not None:
            raise self._error
        if not self._values:
            raise RuntimeError("the computation was interrupted (KeyboardInterrupt or exit)")
        return self._values[0]


class Worker:
    """A forked process that waits for one job (`run`), computes it and sends the outcome back."""

    def __init__(self, label: str, warm: Callable[[], object] | None = None) -> None:
        """Fork the worker. `warm` (a module-level function) runs in it while it waits for the job:
        the first-call costs of the libraries the job uses (imports, caches) are paid meanwhile."""
        self.label = label
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe(duplex=True)
        # the worker gets this process's end too (fork copies every descriptor) and closes it first:
        # otherwise it would never read end-of-file if this process were killed, and wait forever
        self._process: Any = context.Process(
            target=_serve, args=(child, self._conn, warm), daemon=True, name=f"toolgen: {label}"
        )
        self._process.start()
        child.close()

    @property
    def pid(self) -> int | None:
        """The worker's process id; None once it is closed."""
        return self._process.pid if self._process is not None else None

    def run(self, prepare: Prepare, each: Each, finish: Callable[[list[Any]], T], arg: Any) -> Pending[T]:
        """Send the job: `prepare` and `each` (module-level functions, pickled by reference) and `arg`
        (pickled); RuntimeError if the worker has died. On `result()`, the build asks for help: if
        the worker is still through its items, it hands back half of those left, which the build
        computes with `each` meanwhile."""
        if self._process is None:
            raise RuntimeError(f"the worker for {self.label} is closed")
        try:
            self._conn.send((prepare, each, arg))
        except OSError as exc:  # it died while waiting for the job
            raise self._died() from exc

        def compute() -> T:
            # the worker is through and has closed its end: its outcome is waiting
            with contextlib.suppress(OSError):
                self._conn.send("help")
            kind, value = self._receive()
            taken: list[Any] = []
            if kind == "share":
                taken = [each(item) for item in value]
                kind, value = self._receive()
            self.close()
            if kind == "error":
                raise value
            return finish([*value, *taken])

        return Pending(compute, in_worker=True)

    def _receive(self) -> tuple[str, Any]:
        try:
            message: tuple[str, Any] = self._conn.recv()
        except (EOFError, OSError) as exc:
            raise self._died() from exc
        return message

    def _died(self) -> RuntimeError:
        """The error for a worker that ended without an answer; reaps and closes it."""
        self._process.join(timeout=10)  # reap it, to tell why it ended
        code = self._process.exitcode
        self.close()
        return RuntimeError(
            f"the worker process computing {self.label} died (exit code {code}: out of "
            "memory, or killed); set TOOLGEN_WORKERS=0 to compute it inline"
        )

    def close(self) -> None:
        """Stop the worker if it still runs (a build that failed, or needed no job, does not wait)."""
        if self._process is None:
            return
        self._conn.close()
        if self._process.is_alive():
            self._process.terminate()
        self._process.join()
        self._process.close()
        self._process = None


def _serve(conn: Connection, build_end: Connection, warm: Callable[[], object] | None) -> None:
    """The worker: close its copy of the build's end of the pipe (`build_end`), collect garbage again
    (see `_collect_in_worker`), warm up, wait for the job, run it, send the outcome:
    ``("ok", results)``, or ``("error", exception)`` (as text when it does not pickle). A failure to
    warm up is ignored: the job then pays that cost, or raises it itself.

    Ctrl-C reaches the whole process group: the worker ignores it and the build, which sees it too,
    stops the worker (`Worker.close`). A build that is gone (killed, even by SIGKILL) closes the pipe:
    the worker reads end-of-file, waiting or at its next item, and ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    build_end.close()
    _collect_in_worker()
    if warm is not None:
        with contextlib.suppress(Exception):  # only an optimisation; the job reports real failures
            warm()
    try:
        prepare, each, arg = conn.recv()
    except (EOFError, OSError):
        return  # the build needed no job, or is gone
    try:
        outcome: tuple[str, Any] = ("ok", _work(prepare, each, arg, conn))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the build, which re-raises it
        outcome = ("error", exc)
    try:
        _send_outcome(conn, outcome)
    except OSError:
        pass  # the build is gone (killed, or failed and closed the pipe): nobody to tell
    finally:
        conn.close()


def _send_outcome(conn: Connection, outcome: tuple[str, Any]) -> None:
    """Send `outcome`; an exception that does not pickle, or does not unpickle (one whose
    `__init__` takes other arguments than its `args`), goes as RuntimeError text instead, so the
    build raises what happened rather than an error of its own while reading it."""
    try:
        if outcome[0] == "error":
            pickle.loads(pickle.dumps(outcome[1]))  # what the build will do when it reads it
        conn.send(outcome)
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - an exception that does not pickle is sent as text
        conn.send(("error", RuntimeError(f"{type(outcome[1]).__name__}: {outcome[1]} ({exc})")))


def _work(prepare: Prepare, each: Each, arg: Any, conn: Connection) -> list[Any]:
    """`each` over `prepare(arg)` from the front; when the build's "help" arrives, the second half of
    the items left go to it (``("share", items)``) and the worker's results stop before them."""
    items = prepare(arg)
    done: list[Any] = []
    end = len(items)
    shared = False
    while len(done) < end:
        if not shared and conn.poll():
            conn.recv()  # "help"
            shared = True
            middle = len(done) + (end - len(done) + 1) // 2
            conn.send(("share", items[middle:end]))
            end = middle
        done.append(each(items[len(done)]))
    return done


def start_worker(label: str, warm: Callable[[], object] | None = None) -> Worker | None:
    """A worker waiting for a job, or None when `worker_allowed` says no. It warms up meanwhile
    (`warm`) only with a second CPU to do it on: on one CPU the warm-up would compete with the build
    and be wasted when the job turns out small enough to run inline. On one CPU the worker is still
    worth having for a large job: its memory (datamodel-code-generator's parse of every argument
    schema) is its own, freed when it ends, instead of adding to the build's, which holds the spec,
    the IR and the catalogs."""
    if not worker_allowed():
        return None
    return Worker(label, warm if len(os.sched_getaffinity(0)) > 1 else None)


def run_with(
    worker: Worker | None,
    prepare: Prepare,
    each: Each,
    finish: Callable[[list[Any]], T],
    arg: Any,
    *,
    size: int,
    min_size: int,
) -> Pending[T]:
    """``finish([each(x) for x in prepare(arg)])``: in `worker` when there is one and `size` (the
    work's size, say tools) is at least `min_size` (a small job costs less inline than its round
    trip); otherwise inline, on `result()`, and the worker is closed. The jobs must be pure: the
    worker shares nothing with the build but `arg` and the returned values."""
    if worker is not None and size >= min_size:
        return worker.run(prepare, each, finish, arg)
    if worker is not None:
        worker.close()
    return Pending(lambda: finish([each(item) for item in prepare(arg)]), in_worker=False)


def worker_allowed() -> bool:
    """Whether this process may fork a worker now: on Linux only (macOS system libraries are not
    safe to fork, Windows has no `fork`), not when `TOOLGEN_WORKERS=0`, and not while another thread
    runs (forking a threaded process can copy a held lock). One CPU is no reason not to: the worker
    then saves no time but keeps the job's memory out of the build's (`start_worker`)."""
    if os.environ.get("TOOLGEN_WORKERS", "").strip() == "0":
        return False
    if not sys.platform.startswith("linux"):
        return False
    return threading.active_count() == 1


def _collect_in_worker() -> None:
    """The worker inherits the build's paused collector; datamodel-code-generator and black build
    cyclic trees, so collect again, in few large passes, without walking the inherited heap."""
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    gc.enable()


@contextmanager
def closing(worker: Worker | None) -> Iterator[Worker | None]:
    """Close `worker` when the block exits, however it exits."""
    try:
        yield worker
    finally:
        if worker is not None:
            worker.close()
