"""Running one pure stage in a worker process while the build goes on.

The build's longest stage on a large API is `models.py` (datamodel-code-generator, then black); it
needs only the argument schemas, known once the operations are lowered, and its result is text. So
the build hands it to a forked worker process and builds the catalogs, the lint findings, the policy
table and the report meanwhile, on the machine's second core.

The result is the same text either way: `run_beside` falls back to computing inline when a worker
is not worth it or not safe (one CPU, no `fork`, other threads alive, a small API), and a function
that raises in the worker raises the same exception in the caller.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

T = TypeVar("T")
A = TypeVar("A")


class Pending(Generic[T]):
    """A value being computed in a worker process, or to be computed inline on `result()`."""

    def __init__(self, fn: Callable[[A], T], arg: A, *, label: str, worker: bool) -> None:
        self._label = label
        self.in_worker = worker  #: whether a worker process computes it (it may have finished)
        self._inline: Callable[[], T] | None = None
        self._process: Any = None
        self._conn: Connection | None = None
        if worker:
            context = multiprocessing.get_context("fork")
            receive, send = context.Pipe(duplex=False)
            # forked: `fn` and `arg` are the parent's own objects, nothing is pickled on the way in
            self._process = context.Process(target=_serve, args=(fn, arg, send), daemon=True,
                                            name=f"toolgen: {label}")
            self._process.start()
            send.close()
            self._conn = receive
        else:
            self._inline = lambda: fn(arg)

    def result(self) -> T:
        """The value. Re-raises what the function raised; RuntimeError if the worker died."""
        if self._inline is not None:
            return self._inline()
        assert self._conn is not None
        try:
            kind, value = self._conn.recv()
        except (EOFError, OSError) as exc:
            self._process.join(timeout=10)  # reap it, to tell why it ended
            code = self._process.exitcode
            raise RuntimeError(f"the worker process computing {self._label} died (exit code {code}: out "
                               "of memory, or killed); set TOOLGEN_WORKERS=0 to compute it inline") from exc
        finally:
            self.close()
        if kind == "error":
            raise value
        return value  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop the worker if it still runs (a build that failed elsewhere does not wait for it)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._process is not None:
            if self._process.is_alive():
                self._process.terminate()
            self._process.join()
            self._process.close()
            self._process = None


def _serve(fn: Callable[[Any], Any], arg: Any, send: Connection) -> None:
    """The worker: collect garbage again (see `_collect_in_worker`), compute, send the outcome."""
    _collect_in_worker()
    try:
        outcome: tuple[str, Any] = ("ok", fn(arg))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the build, which re-raises it
        outcome = ("error", exc)
    try:
        send.send(outcome)
    except Exception as exc:  # noqa: BLE001 - an exception that does not pickle is sent as text
        send.send(("error", RuntimeError(f"{type(outcome[1]).__name__}: {outcome[1]} ({exc})")))
    finally:
        send.close()


def run_beside(fn: Callable[[A], T], arg: A, *, label: str, size: int, min_size: int) -> Pending[T]:
    """Start `fn(arg)` in a forked worker process when that can pay off: `size` (the work's size, say
    tools) is at least `min_size`, the process may use two CPUs, `fork` exists and no other thread
    runs (forking a threaded process can copy a held lock). Otherwise `fn(arg)` runs inline when
    `result()` is asked for. `TOOLGEN_WORKERS=0` in the environment always runs inline.

    `fn` must be pure: the worker shares nothing with the build but `arg` (inherited by the fork)
    and the returned value (pickled back)."""
    return Pending(fn, arg, label=label, worker=size >= min_size and worker_allowed())


def worker_allowed() -> bool:
    """Whether this process may fork a worker now (see `run_beside`)."""
    if os.environ.get("TOOLGEN_WORKERS", "").strip() == "0":
        return False
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return cpus > 1 and threading.active_count() == 1


def _collect_in_worker() -> None:
    """The worker inherits the build's paused collector; datamodel-code-generator and black build
    cyclic trees, so collect again, in few large passes, without walking the inherited heap."""
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    gc.enable()


@contextmanager
def closing(pending: Pending[T] | None) -> Iterator[Pending[T] | None]:
    """Close `pending`'s worker when the block exits, however it exits."""
    try:
        yield pending
    finally:
        if pending is not None:
            pending.close()
