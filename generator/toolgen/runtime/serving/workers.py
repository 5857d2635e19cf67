"""Several serve workers behind one listening socket: fork, supervise, restart, stop.

`supervise(count, run)` forks `count` worker processes that each call `run()` (which serves on a
socket the caller bound and set listening *before* calling, so every worker accepts from the same
kernel queue and one address serves them all) and waits. A worker that dies while the service is
running (a crash, the OOM killer, a stray SIGKILL) is replaced at once; a worker that keeps dying
(more than `max_restarts` deaths within `window_s` seconds) stops the service with exit code 1 and
a message, rather than forking forever. SIGINT or SIGTERM to the supervisor stops the service: each
worker gets SIGTERM (the server drains and returns), and those still running after `grace_s`
seconds get SIGKILL. The supervisor returns the exit code for the whole service: 0 after a
requested stop, 1 after giving up on a crashing worker.

What the workers share is whatever the receipt store shares: receipts, spent approvals, stored
previews, issued approvals and the pagination-cursor key live in SQLite (one machine), Redis or
PostgreSQL, never in a worker's memory, so a request may land on any worker (the HTTP transport is
stateless: no MCP session is pinned to a process). Each worker opens its own store connection after
the fork (`run` does it); nothing opened before the fork may be used in a worker.

POSIX only (``os.fork``). Messages go to `log` (one line each).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from types import FrameType

from ..clock import SYSTEM, Clock

#: Deaths of workers within `RESTART_WINDOW_S` after which the supervisor gives up.
MAX_RESTARTS = 10
RESTART_WINDOW_S = 60.0
#: Seconds a stopping worker has to drain before SIGKILL.
GRACE_S = 30.0
#: Seconds between the supervisor's looks at its workers.
POLL_S = 0.1


def _fork_worker(run: Callable[[], int]) -> int:
    pid = os.fork()
    if pid == 0:  # the worker: default signal dispositions, run, and never return into the supervisor
        code = 1
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            code = run()
        except BaseException:  # noqa: BLE001 - a worker's crash must not unwind into the supervisor's code
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code if isinstance(code, int) else 1)
    return pid


def supervise(
    count: int,
    run: Callable[[], int],
    *,
    log: Callable[[str], None],
    max_restarts: int = MAX_RESTARTS,
    window_s: float = RESTART_WINDOW_S,
    grace_s: float = GRACE_S,
    clock: Clock = SYSTEM,
) -> int:
    """Run `count` (≥ 1) workers of `run` until SIGINT/SIGTERM; the service's exit code (0 stopped,
    1 gave up on a worker that kept dying). Raises `ValueError` for `count` < 1."""
    if count < 1:
        raise ValueError(f"workers must be at least 1, not {count}")
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    workers: set[int] = set()
    deaths: list[float] = []
    code = 0
    try:
        for _ in range(count):
            workers.add(_fork_worker(run))
        while workers and not stopping:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:  # nobody died: look again shortly (a signal only sets `stopping`)
                time.sleep(POLL_S)
                continue
            if pid not in workers:
                continue
            workers.discard(pid)
            if stopping:
                break
            now = clock.monotonic()
            deaths = [t for t in deaths if now - t < window_s] + [now]
            how = (
                f"signal {-os.waitstatus_to_exitcode(status)}"
                if os.WIFSIGNALED(status)
                else f"exit code {os.waitstatus_to_exitcode(status)}"
            )
            if len(deaths) > max_restarts:
                log(
                    f"worker {pid} died ({how}); {len(deaths)} deaths within {window_s:.0f} s: stopping the service"
                )
                code = 1
                break
            log(f"worker {pid} died ({how}); starting another")
            workers.add(_fork_worker(run))
    finally:
        _stop_all(workers, grace_s, clock)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code


def _stop_all(workers: set[int], grace_s: float, clock: Clock) -> None:
    """SIGTERM every worker, wait up to `grace_s` for all of them, SIGKILL the rest and reap them."""
    for pid in workers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = clock.monotonic() + grace_s
    while workers and clock.monotonic() < deadline:
        for pid in list(workers):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done == pid:
                workers.discard(pid)
        if workers:
            time.sleep(0.05)
    for pid in workers:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
