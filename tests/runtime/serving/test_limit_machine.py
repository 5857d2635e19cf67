"""A stateful attack on limits across worker processes (hypothesis `RuleBasedStateMachine`): two
runtime workers (`limit_worker.py`, each its own process, `Registry` and store connection) share one
receipt store (a SQLite file; a real Redis and a real PostgreSQL in the slow suite) and send refunds
to a real loopback API under ``{calls: 4, window: 1m}``, ``{sum: amount, max: 1000, window: 1m}``
and ``{concurrent: 1}``, while the clock moves (a logical wall clock every worker reads: no sleep)
and workers are killed with SIGKILL in the middle of a request and replaced. After every step:

- no window of 60 s holds more than 4 requests at the API, nor amounts above 1000 (safety);
- a refused call sent nothing and a successful one sent exactly its request;
- a call is refused exactly when the calls and sums sent (the killed workers' requests included)
  leave no room, or while a killed worker's concurrent slot is inside its lease: the count is
  exact across workers, a refused call counts nothing, and a dead worker's slot is freed once its
  lease ends (a slot near the end of its lease may go either way).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from tests.support.build import REPO, Built, build
from tests.support.profiles import examples

PAYMENTS = REPO / "tests" / "fixtures" / "limits" / "payments.yaml"
WORKER = Path(__file__).with_name("limit_worker.py")
CALLS, MOST, WINDOW = 4, 1000, 60.0
#: a killed worker's slot is surely held this long after the kill, and surely freed after SLOT_GONE
#: (its lease: the call's deadline, one more attempt and the lease margin, 7 s here)
SLOT_HELD, SLOT_GONE = 2.0, 30.0
INTENT = f"""tools:
  refund:
    operation: createRefund
    effect: write
    permission: payments:write
    approval: never
    record: {{arguments: full}}
    timeout_ms: 2000
    retry: {{max_attempts: 1}}
    idempotency: {{key: action_id, send_as: "header:Idempotency-Key", honoured_by_api: true}}
    limits:
      - {{per: tool, calls: {CALLS}, window: 1m}}
      - {{per: tool, sum: amount, max: {MOST}, window: 1m}}
      - {{per: tool, concurrent: 1}}
"""


class _Api(ThreadingHTTPServer):
    """The loopback payments API: records each refund's amount; while `holding`, a request waits
    (at most 10 s) for `release` before it is answered."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.amounts: list[int] = []
        self.lock = threading.Lock()
        self.holding = False
        self.release = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: _Api
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with self.server.lock:
            self.server.amounts.append(int(body["amount"]))
            hold = self.server.holding
        if hold:
            self.server.release.wait(10)
        data = b'{"id": "re_1"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@dataclass
class Env:
    package: Path
    receipts: str
    api: _Api
    runs: list[int] = field(default_factory=list)


class _Worker:
    def __init__(self, env: Env, epoch: float) -> None:
        job = {
            "package": str(env.package),
            "receipts": env.receipts,
            "base_url": env.api.base_url,
            "epoch": epoch,
        }
        self.proc = subprocess.Popen(
            [sys.executable, str(WORKER), json.dumps(job)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )

    def ready(self) -> None:
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "ready"

    def send(self, amount: int, key: str, offset: float) -> None:
        assert self.proc.stdin is not None
        command = {
            "tool": "record_refund",
            "actor": "clerk",
            "offset": offset,
            "args": {"charge": "ch_1", "amount": amount, "action_id": key},
        }
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def answered(self, timeout: float) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        readable, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not readable:
            return None
        line = self.proc.stdout.readline()
        assert line, "the worker died"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


class LimitMachine(RuleBasedStateMachine):
    """See the module docstring; `env` is set by the test that runs the machine."""

    env: Env

    def __init__(self) -> None:
        super().__init__()
        self.env.runs.append(len(self.env.runs))
        self.epoch = 1.9e9 + 1e7 * len(self.env.runs)  # a fresh logical era: no earlier run's entry is live
        self.offset = 0.0
        self.sent: list[tuple[float, int]] = []  # (logical time, amount) of every request the API got
        self.killed: list[float] = []  # logical times of the calls killed in flight (their slots)
        self.seen = len(self.env.api.amounts)
        self.count = 0
        self.workers = [_Worker(self.env, self.epoch) for _ in range(2)]
        for worker in self.workers:
            worker.ready()

    def _new(self) -> list[int]:
        with self.env.api.lock:
            new = self.env.api.amounts[self.seen :]
            self.seen = len(self.env.api.amounts)
        return new

    def _room(self, amount: int) -> bool | None:
        """Whether the limits leave room for `amount` now: None while a killed worker's slot is near
        the end of its lease."""
        live = [a for t, a in self.sent if t + WINDOW > self.offset]
        if len(live) >= CALLS or sum(live) + amount > MOST:
            return False
        if any(self.offset < t + SLOT_HELD for t in self.killed):
            return False
        if any(self.offset < t + SLOT_GONE for t in self.killed):
            return None
        return True

    def _key(self) -> str:
        self.count += 1
        return f"{self.epoch:.0f}-{self.count}"

    @rule(worker=st.integers(0, 1), amount=st.integers(0, 600))
    def call(self, worker: int, amount: int) -> None:
        expected = self._room(amount)
        self.workers[worker].send(amount, self._key(), self.offset)
        answer = self.workers[worker].answered(30)
        assert answer is not None, "the worker did not answer"
        new = self._new()
        if answer["ok"]:
            assert new == [amount]
            self.sent.append((self.offset, amount))
        else:
            assert answer["code"] == "rate_limited" and new == [], (answer, new)
        if expected is not None:
            assert answer["ok"] is expected, (answer, expected, self.sent, self.killed, self.offset)

    @rule(worker=st.integers(0, 1), amount=st.integers(0, 600))
    def kill_mid_request(self, worker: int, amount: int) -> None:
        """Kill a worker while its request waits at the API (or take its refusal), then replace it."""
        expected = self._room(amount)
        api = self.env.api
        api.release.clear()
        api.holding = True
        try:
            self.workers[worker].send(amount, self._key(), self.offset)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                with api.lock:
                    arrived = len(api.amounts) > self.seen
                if arrived:
                    break
                answer = self.workers[worker].answered(0.02)
                if answer is not None:
                    assert answer["code"] == "rate_limited" and self._new() == [], answer
                    assert expected is not True, (answer, self.sent, self.killed, self.offset)
                    return
            assert arrived, "neither a request nor an answer"
            self.workers[worker].kill()
        finally:
            api.holding = False
            api.release.set()
        assert self._new() == [amount]
        assert expected is not False, (self.sent, self.killed, self.offset)
        self.sent.append((self.offset, amount))
        self.killed.append(self.offset)
        self.workers[worker] = _Worker(self.env, self.epoch)
        self.workers[worker].ready()

    @rule(seconds=st.sampled_from([0.5, 5.0, 20.0, 45.0, 61.0, 120.0]))
    def advance(self, seconds: float) -> None:
        self.offset += seconds

    @invariant()
    def no_window_sends_more_than_its_limits(self) -> None:
        for end, _ in self.sent:
            window = [a for t, a in self.sent if end - WINDOW < t <= end]
            assert len(window) <= CALLS and sum(window) <= MOST, (window, self.sent)

    def teardown(self) -> None:
        for worker in self.workers:
            worker.kill()


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("machine"), PAYMENTS, INTENT)


@pytest.fixture(scope="module")
def api() -> Iterator[_Api]:
    server = _Api()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.release.set()
    server.shutdown()
    server.server_close()


def run_machine(package: Built, receipts: str, api: _Api) -> None:
    env = Env(package.out, receipts, api)
    machine = type("Machine", (LimitMachine,), {"env": env})
    run_state_machine_as_test(
        machine, settings=settings(max_examples=examples(20), stateful_step_count=12, deadline=None)
    )
    assert env.runs, "the machine never ran"


# the real Redis and PostgreSQL variants are in the slow suite (`-m slow`); SQLite stays fast
@pytest.mark.long
@pytest.mark.parametrize(
    "store",
    [
        "sqlite",
        pytest.param("redis", marks=pytest.mark.slow),
        pytest.param("postgres", marks=pytest.mark.slow),
    ],
)
def test_limits_hold_across_workers_under_kills(
    package: Built, api: _Api, tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    if store == "postgres":
        receipts = f"{request.getfixturevalue('postgres_url')}?table_prefix=m{uuid.uuid4().hex[:10]}_"
    elif store == "redis":
        receipts = f"{request.getfixturevalue('redis_url')}?prefix=m-{uuid.uuid4().hex[:10]}:"
    else:
        receipts = str(tmp_path / "receipts.sqlite3")
    run_machine(package, receipts, api)
