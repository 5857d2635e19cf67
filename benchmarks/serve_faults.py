"""Many agents, several workers, injected faults: do the runtime's write guarantees hold?

    python benchmarks/serve_faults.py --store postgres|redis [--workers 4] [--agents 50] [--calls 10000]
                                      [--fault-every 4] [--seed 7]

Starts, on loopback: a throwaway PostgreSQL cluster or Redis server (``appendonly yes``,
``appendfsync always``, so a restart keeps what was acknowledged), a fault-injecting tickets API
that deduplicates by ``Idempotency-Key`` as the policy declares (``honoured_by_api``), and ``toolgen
serve generated/tickets --http --workers N --approvals client`` on that store. Then `--agents`
official MCP clients share `--calls` calls: reads (``get_ticket``), previews of one of 1,000 notes and
approved records of a previewed note, each under the note's own idempotency key and, one time in
ten, under another key with the same approval (which the runtime must refuse once the approval is
spent). Every `--fault-every` seconds one fault, in turn: ``kill -9`` of a worker (mid-call, the
supervisor replaces it), a restart of the store (stopped, down one second, started on the same
data), the upstream hanging after its write on the next writes (the runtime's deadline fires with
the outcome unknown), and the upstream dropping the connection after the write.

After the calls, and once every lease has run out, it checks the invariants:

1. every upstream write carried an idempotency key, and no key wrote more than once;
2. no approval wrote under more than one key (the notes' keys form one family per approval);
3. no receipt reads as ``pending`` past its lease (through the store, as every worker reads it: a
   worker killed mid-write leaves its row ``pending``, and the first read after the lease turns it
   ``unknown``; such rows are counted apart);
4. no successful record answer contradicts its key's receipt: a ``completed`` receipt holds the same
   result (what a replay returns); a receipt left ``pending``/``unknown`` because the store failed
   after the write (the answer is the truth then, docs/runtime.md) is counted apart, never missing.

Prints and writes ``benchmarks/results/serve_faults.md`` (+ ``.json``): outcomes by error code,
faults injected, invariant results, throughput and latency. Needs PostgreSQL (``initdb``) or
``redis-server`` on the machine and the ``dev`` extra. Exit 1 when an invariant fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
RESULTS = REPO / "benchmarks" / "results"
TOOLGEN = str(Path(sys.executable).parent / "toolgen")
TICKET_PATH = r"^/v1/tickets/T-[0-9]+$"
FOLLOWUPS = r"^/v1/tickets/T-[0-9]+/followups$"
NOTES = [f"Follow-up note number {i}: customer called about the printer." for i in range(1000)]
PREFIX = "faults_"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- the store ---------------------------------------------------------------------------------------


class RedisStore:
    """redis-server with an append-only file fsynced on every write, restartable on its port."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port = folder, free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"redis://127.0.0.1:{self.port}/0?prefix={PREFIX}"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not on PATH")
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import redis

        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if client.ping():
                    return
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        raise SystemExit("redis-server did not start")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=20)
            self.proc = None

    def receipts(self) -> dict[str, dict[str, Any]]:
        import redis

        client = redis.Redis(port=self.port, decode_responses=True)
        out = {}
        for name in client.scan_iter(match=f"{PREFIX}r:*"):
            fields = client.hgetall(name)
            out[name.rsplit(":", 1)[1]] = {
                "state": fields.get("state"),
                "updated_at": float(fields["updated_at"]),
                "lease_ms": int(fields.get("lease_ms") or 0),
                "result": json.loads(fields["result"]) if "result" in fields else None,
            }
        return out


class PostgresStore:
    """A throwaway PostgreSQL cluster (the test suite's `PostgresServer`)."""

    def __init__(self, folder: Path) -> None:
        from tests.runtime.conftest import PostgresServer

        self.server = PostgresServer()

    @property
    def url(self) -> str:
        return f"{self.server.url}?table_prefix={PREFIX}"

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def receipts(self) -> dict[str, dict[str, Any]]:
        import psycopg

        with psycopg.connect(self.server.url) as conn:
            rows = conn.execute(
                f"SELECT key, state, updated_at, lease_ms, result FROM {PREFIX}receipts"
            ).fetchall()
        return {
            k: {
                "state": s,
                "updated_at": float(u),
                "lease_ms": int(lease),
                "result": json.loads(r) if r else None,
            }
            for k, s, u, lease, r in rows
        }

    def remove(self) -> None:
        self.server.remove()


# -- the agents ---------------------------------------------------------------------------------------


class Tally:
    def __init__(self, total: int) -> None:
        self.left = total
        self.lock = threading.Lock()
        self.outcomes: Counter[str] = Counter()
        self.latencies: list[float] = []
        self.records_ok: list[tuple[str, Any]] = []  # (key, structured result)

    def take(self) -> bool:
        with self.lock:
            if self.left <= 0:
                return False
            self.left -= 1
            return True


async def agent(url: str, seed: int, tally: Tally) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    rng = random.Random(seed)
    while tally.left > 0:
        try:
            async with (
                httpx2.AsyncClient(timeout=60) as http,
                Client(streamable_http_client(url, http_client=http), cache=None) as client,
            ):
                while tally.take():
                    await one_call(client, rng, tally)
        except Exception as exc:  # noqa: BLE001 - a killed worker drops connections: count it, reconnect
            with tally.lock:
                tally.outcomes[f"transport: {type(exc).__name__}"] += 1


async def one_call(client: Any, rng: random.Random, tally: Tally) -> None:
    start = time.perf_counter()
    kind = rng.random()
    idx = rng.randrange(len(NOTES))
    if kind < 0.4:
        result = await client.call_tool("get_ticket", {"ticket_id": "T-102"})
        label = "read"
        key = None
    else:
        shown = await client.call_tool(
            "preview_ticket_followup", {"ticket_id": "T-102", "note": NOTES[idx], "visibility": "internal"}
        )
        if shown.is_error or kind < 0.55:
            result, label, key = shown, "preview", None
        else:
            pid = shown.structured_content["preview_id"]
            key = f"n{idx}" if rng.random() >= 0.1 else f"n{idx}-x{rng.randrange(1000)}"
            result = await client.call_tool(
                "record_ticket_followup",
                {"preview_id": pid, "action_id": key},
                meta={"toolgen/approval": pid},
            )
            label = "record"
    elapsed = time.perf_counter() - start
    code = "ok" if not result.is_error else json.loads(result.content[0].text)["error"]["code"]
    with tally.lock:
        tally.latencies.append(elapsed)
        tally.outcomes[f"{label}: {code}"] += 1
        if label == "record" and code == "ok":
            tally.records_ok.append((str(key), result.structured_content))


# -- faults -------------------------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def inject(
    stop: threading.Event,
    every: float,
    serve: subprocess.Popen[str],
    store: Any,
    upstream: Any,
    injected: Counter[str],
    rng: random.Random,
) -> None:
    from tests.support.fault_server import Fault

    kinds = ["kill", "store", "hang", "drop"]
    turn = 0
    while not stop.wait(every):
        kind = kinds[turn % len(kinds)]
        turn += 1
        if kind == "kill":
            workers = children(serve.pid)
            if workers:
                os.kill(rng.choice(workers), signal.SIGKILL)
        elif kind == "store":
            store.stop()
            time.sleep(1.0)
            store.start()
        elif kind == "hang":
            upstream.script("POST", FOLLOWUPS, *[Fault.hang(6.0, write=True)] * 2)
        else:
            upstream.script("POST", FOLLOWUPS, *[Fault.drop(write=True)] * 2)
        injected[kind] += 1


# -- the run ------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    import anyio
    from tests.support.fault_server import FaultServer

    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--store", choices=("postgres", "redis"), required=True)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--fault-every", type=float, default=4.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    folder = Path(tempfile.mkdtemp(prefix="toolgen-faults-"))
    store: Any = RedisStore(folder) if args.store == "redis" else PostgresStore(folder)
    store.start()
    upstream = FaultServer(honours_keys=True)
    upstream.__enter__()
    from tests.support.trust_registry import followup_body, ticket_body

    upstream.route("GET", TICKET_PATH, body=ticket_body())
    upstream.route("POST", FOLLOWUPS, status=201, body=followup_body)
    env = dict(os.environ, TICKETS_TOKEN="test-token-7f3a")
    serve = subprocess.Popen(
        [
            TOOLGEN,
            "serve",
            str(REPO / "generated" / "tickets"),
            "--http",
            "127.0.0.1:0",
            "--no-auth",
            "--scopes",
            "ticket:read,ticket:write",
            "--approvals",
            "client",
            "--workers",
            str(args.workers),
            "--receipts",
            store.url,
            "--base-url",
            upstream.base_url + "/v1",
        ],
        cwd=folder,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    url = None
    assert serve.stderr is not None
    for line in serve.stderr:
        if "serving MCP on " in line:
            url = line.split("serving MCP on ", 1)[1].split()[0]
            break
    if url is None:
        raise SystemExit("toolgen serve did not start")
    log: list[str] = []
    threading.Thread(target=lambda: log.extend(serve.stderr or []), daemon=True).start()
    time.sleep(1.0)
    tally = Tally(args.calls)
    injected: Counter[str] = Counter()
    stop = threading.Event()
    faults = threading.Thread(
        target=inject, args=(stop, args.fault_every, serve, store, upstream, injected, rng), daemon=True
    )
    started = time.perf_counter()
    faults.start()

    async def run_agents() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(args.agents):
                tg.start_soon(agent, url, args.seed * 1000 + i, tally)

    try:
        anyio.run(run_agents)
    finally:
        stop.set()
        faults.join()
    wall = time.perf_counter() - started
    time.sleep(20.0)  # every lease (deadline 15 s + 2 s margin) has run out
    receipts = store.receipts()
    read_at = time.time()
    from toolgen.runtime import receipts_from_url

    reader = receipts_from_url(store.url)
    seen = {key: reader.get("tickets/record_ticket_followup", key) for key in receipts}
    reader.close()
    serve.send_signal(signal.SIGTERM)
    serve.wait(timeout=60)
    by_key = upstream.side_effects_by_key()
    upstream.__exit__(None, None, None)
    if isinstance(store, PostgresStore):
        store.remove()
    else:
        store.stop()
    shutil.rmtree(folder, ignore_errors=True)

    summary = summarise(args, tally, wall, injected, by_key, receipts, seen, read_at, log)
    text = render(summary)
    print(text)
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / f"serve_faults_{args.store}.md").write_text(text, encoding="utf-8")
        (RESULTS / f"serve_faults_{args.store}.json").write_text(
            json.dumps(summary, indent=1, default=dict) + "\n", encoding="utf-8"
        )
    return 0 if all(summary["invariants"].values()) else 1


def summarise(  # noqa: PLR0913
    args: Any,
    tally: Tally,
    wall: float,
    injected: Counter[str],
    by_key: dict[str | None, int],
    receipts: dict[str, dict[str, Any]],
    seen: dict[str, Any],
    read_at: float,
    log: list[str],
) -> dict[str, Any]:
    """The run's figures and the four invariants (see the module docstring)."""
    now = time.time()
    families: dict[str, set[str]] = {}
    for key, n in by_key.items():
        if key is not None and n > 0:
            families.setdefault(key.split("-x")[0], set()).add(key)
    ok_mismatch = [
        k
        for k, res in tally.records_ok
        if seen.get(k) is None or (seen[k].state == "completed" and seen[k].result != res)
    ]
    ok_unrecorded = sorted(
        {k for k, _ in tally.records_ok if seen.get(k) is not None and seen[k].state != "completed"}
    )
    stale_rows = [
        k
        for k, r in receipts.items()
        if r["state"] == "pending" and (now - r["updated_at"]) * 1000 >= max(r["lease_ms"], 1)
    ]
    invariants = {
        "every write carried a key, none wrote twice": by_key.get(None, 0) == 0
        and all(n <= 1 for n in by_key.values()),
        "no approval wrote under two keys": all(len(keys) <= 1 for keys in families.values()),
        "no receipt reads as pending past its lease": not [
            k for k, r in seen.items() if r is not None and r.state == "pending" and r.lease_expired(read_at)
        ],
        "no ok record contradicts its receipt": not ok_mismatch,
    }
    ordered = sorted(tally.latencies)
    pct = (
        {q: 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in (0.5, 0.99)}
        if ordered
        else {}
    )
    summary = {
        "store": args.store,
        "workers": args.workers,
        "agents": args.agents,
        "calls": args.calls,
        "answered": len(tally.latencies),
        "wall_s": round(wall, 1),
        "calls_per_s": round(len(tally.latencies) / wall, 1),
        "p50_ms": round(pct.get(0.5, 0), 1),
        "p99_ms": round(pct.get(0.99, 0), 1),
        "faults": dict(injected),
        "writes": sum(by_key.values()),
        "receipts": Counter(r["state"] for r in receipts.values()),
        "outcomes": dict(sorted(tally.outcomes.items())),
        "invariants": invariants,
        "ok_mismatch": ok_mismatch[:5],
        "ok_completion_not_recorded": len(ok_unrecorded),
        "rows_pending_past_lease_read_as_unknown": len(stale_rows),
        "supervisor": [line.strip() for line in log if "died" in line][:3],
    }
    return summary


def render(s: dict[str, Any]) -> str:
    lines = [
        f"# Faults under load: {s['store']}, {s['workers']} workers, {s['agents']} agents",
        "",
        (
            f"`python benchmarks/serve_faults.py --store {s['store']} --workers {s['workers']} --agents "
            f"{s['agents']} --calls {s['calls']}` on {time.strftime('%Y-%m-%d')} (2 CPUs shared with other work; "
            "throughput and latency are this machine's under that load)."
        ),
        "",
        f"{s['answered']} calls answered in {s['wall_s']} s ({s['calls_per_s']} calls/s; p50 {s['p50_ms']} ms, "
        f"p99 {s['p99_ms']} ms). Faults injected: "
        + ", ".join(f"{k} ×{v}" for k, v in sorted(s["faults"].items()))
        + ". Upstream writes: "
        f"{s['writes']}; receipts at the end: "
        + ", ".join(f"{k} {v}" for k, v in sorted(s["receipts"].items()))
        + f" (rows left pending by a killed worker, read as unknown: {s['rows_pending_past_lease_read_as_unknown']};"
        f" ok answers whose completion the store could not record: {s['ok_completion_not_recorded']}).",
        "",
        "| invariant | holds |",
        "|---|---|",
    ]
    lines += [f"| {name} | {'yes' if ok else '**NO**'} |" for name, ok in s["invariants"].items()]
    lines += ["", "| outcome | calls |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in s["outcomes"].items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
