"""A runtime worker process for the limits state machine (test_limit_machine.py).

    python limit_worker.py JOB_JSON

JOB_JSON: ``{"package": DIR, "receipts": URL_OR_PATH, "base_url": URL, "epoch": UNIX_SECONDS}``. The
worker opens its own store and `Registry` over the package, prints ``ready``, then for each line
``{"tool", "args", "actor", "offset"}`` on stdin runs the call at the logical time ``epoch + offset``
(every worker reads the same logical wall clock, so windows are exact; monotonic time still flows, so
deadlines hold) and prints one JSON line: ``{"ok": bool, "code": error code or null}``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from toolgen.runtime import Actor, Registry, StaticCredentials, receipts_from_url
from toolgen.runtime.clock import Clock


class LogicalClock(Clock):
    """Wall time set by the test (`at`); monotonic time the system's."""

    def __init__(self, epoch: float) -> None:
        self.epoch = epoch
        self.offset = 0.0

    def time(self) -> float:
        return self.epoch + self.offset

    def monotonic(self) -> float:
        return time.monotonic()


def main() -> None:
    job = json.loads(sys.argv[1])
    clock = LogicalClock(float(job["epoch"]))
    store = receipts_from_url(job["receipts"], clock=clock)
    registry = Registry.from_dir(
        job["package"],
        base_url=job["base_url"],
        credentials=StaticCredentials({}),
        receipts=store,
        clock=clock,
    )
    print("ready", flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        clock.offset = float(command["offset"])
        result = registry.call(
            command["tool"], command["args"], actor=Actor.of(command["actor"], ["payments:write"])
        )
        print(
            json.dumps({"ok": result.ok, "code": None if result.error is None else result.error.code}),
            flush=True,
        )


if __name__ == "__main__":
    main()
