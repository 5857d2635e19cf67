"""Per-call overhead of the toolgen runtime against bare httpx, same loopback server, same run.

Run on demand (not part of the test suite):

    python benchmarks/runtime_overhead.py [--reads 2000] [--writes 1000] [--rounds 5]

Starts the tickets test server on 127.0.0.1 in a separate process (so its threads do not compete
for this process's GIL), then measures, interleaved in rounds so drift hits
both sides alike:

- read: ``GET /v1/tickets/T-102`` + JSON decode with a keep-alive `httpx.Client`, versus
  ``registry.call("get_ticket", ...)`` (validation, policy, audit, projection/redaction, budget,
  output-schema check) over the same client;
- idempotent write: ``POST /v1/tickets/T-102/followups`` with a fresh ``Idempotency-Key``, versus
  ``registry.call("record_ticket_followup", ...)`` with an approval, a fresh ``action_id`` and
  SQLite receipts (pending + completed rows per call, WAL) on a temporary file.

Prints the median per-call time of each side in µs, the absolute overhead and the ratio. Targets:
reads ≤ 15 % overhead, writes ≤ 1 ms overhead.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx
from tests.support.tickets_server import TicketsServer

from toolgen.runtime import (
    Actor,
    Approval,
    MemoryAuditSink,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
    fingerprint,
)


def _serve(conn: multiprocessing.connection.Connection) -> None:
    with TicketsServer() as server:
        conn.send((server.base_url, server.token))
        conn.recv()  # block until the parent is done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5, help="split the runs into this many rounds")
    opts = parser.parse_args()

    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=_serve, args=(child,), daemon=True)
    proc.start()
    base_url, token = parent.recv()
    with tempfile.TemporaryDirectory() as tmp:
        client = httpx.Client()
        auth = {"Authorization": f"Bearer {token}"}
        registry = Registry.from_dir(
            REPO / "generated" / "tickets", base_url=base_url,
            credentials=StaticCredentials({"TICKETS_TOKEN": token}),
            receipts=SqliteReceiptStore(Path(tmp) / "receipts.sqlite3"),
            audit=MemoryAuditSink(maxlen=1000), http_client=client, cursor_key=b"b" * 32,
        )
        reader = Actor.of("bench", ["ticket:read"])
        writer = Actor.of("bench", ["ticket:read", "ticket:write"])
        note = {"ticket_id": "T-102", "note": "Benchmark note.", "visibility": "internal"}
        approval = Approval(fingerprint(registry.specs["record_ticket_followup"].intent, note))
        url_read = f"{base_url}/tickets/T-102"
        url_write = f"{base_url}/tickets/T-102/followups"

        def bare_read(i: int) -> None:
            r = client.get(url_read, headers=auth)
            assert r.status_code == 200
            r.json()

        def runtime_read(i: int) -> None:
            res = registry.call("get_ticket", {"ticket_id": "T-102"}, actor=reader)
            assert res.ok, res.to_json()

        def bare_write(i: int) -> None:
            r = client.post(url_write, json={"note": note["note"], "visibility": "internal"},
                            headers={**auth, "Idempotency-Key": f"bare-{i}"})
            assert r.status_code == 201
            r.json()

        def runtime_write(i: int) -> None:
            res = registry.call("record_ticket_followup", dict(note, action_id=f"rt-{i}"), actor=writer,
                                approval=approval)
            assert res.ok and not res.replayed, res.to_json()

        for fn in (bare_read, runtime_read, bare_write, runtime_write):  # warm up connections, caches
            for i in range(50):
                fn(10_000_000 + i + hash(fn.__name__) % 1000 * 1000)

        # call-by-call interleaving: each runtime call is paired with a bare call made right
        # before it, so load changes on the machine hit both sides alike
        samples: dict[str, list[float]] = {"bare_read": [], "runtime_read": [], "bare_write": [], "runtime_write": []}
        clock = time.perf_counter
        for rnd in range(opts.rounds):
            base = rnd * 1_000_000
            for i in range(opts.reads // opts.rounds):
                t0 = clock(); bare_read(base + i); t1 = clock(); runtime_read(base + i); t2 = clock()
                samples["bare_read"].append((t1 - t0) * 1e6)
                samples["runtime_read"].append((t2 - t1) * 1e6)
            for i in range(opts.writes // opts.rounds):
                t0 = clock(); bare_write(base + i); t1 = clock(); runtime_write(base + i); t2 = clock()
                samples["bare_write"].append((t1 - t0) * 1e6)
                samples["runtime_write"].append((t2 - t1) * 1e6)
        registry.close()
        client.close()
    parent.send("done")
    proc.join(timeout=5)

    med = {k: statistics.median(v) for k, v in samples.items()}
    read_over = med["runtime_read"] - med["bare_read"]
    write_over = med["runtime_write"] - med["bare_write"]
    print(f"reads : bare {med['bare_read']:8.1f} µs  runtime {med['runtime_read']:8.1f} µs  "
          f"overhead {read_over:7.1f} µs  ratio {med['runtime_read'] / med['bare_read']:.3f}  "
          f"(target ≤ 1.150) {'OK' if med['runtime_read'] / med['bare_read'] <= 1.15 else 'MISSED'}")
    print(f"writes: bare {med['bare_write']:8.1f} µs  runtime {med['runtime_write']:8.1f} µs  "
          f"overhead {write_over:7.1f} µs  ratio {med['runtime_write'] / med['bare_write']:.3f}  "
          f"(target ≤ 1000 µs) {'OK' if write_over <= 1000 else 'MISSED'}")
    for kind in ("read", "write"):
        b, r = samples[f"bare_{kind}"], samples[f"runtime_{kind}"]
        print(f"  {kind:5s} mean: bare {statistics.fmean(b):8.1f} µs  runtime {statistics.fmean(r):8.1f} µs;  "
              f"p90: bare {statistics.quantiles(b, n=10)[-1]:8.1f} µs  runtime {statistics.quantiles(r, n=10)[-1]:8.1f} µs")
    print(f"reads={opts.reads} writes={opts.writes}, interleaved call by call; headline = per-call medians")


if __name__ == "__main__":
    main()
