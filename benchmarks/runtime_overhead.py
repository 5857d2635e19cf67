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
  ``registry.call("record_ticket_followup", {"preview_id", "action_id"})``, which executes the
  stored preview, with an approval, a fresh ``action_id`` and SQLite receipts (pending + completed rows per call, WAL) on a temporary file;
- when ``redis-server`` and the `redis` package are available (or ``--redis-url`` names a server),
  the same idempotent write with a `RedisReceiptStore` (two Lua scripts per call), interleaved in
  the same loop, so its cost is compared with SQLite's on the same calls. The benchmark's own
  server runs with ``appendonly yes``/``appendfsync everysec`` (the durable setting docs/runtime.md
  recommends); ``--no-redis`` skips it.

Prints the median per-call time of each side in µs, the absolute overhead and the ratio. Targets:
reads ≤ 15 % overhead, writes ≤ 1 ms overhead.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx

from toolgen.runtime import (
    Actor,
    Approval,
    MemoryAuditSink,
    ReceiptStore,
    RedisReceiptStore,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
)
from toolgen.testing.tickets_server import TicketsServer


def _serve(conn: multiprocessing.connection.Connection) -> None:
    with TicketsServer() as server:
        conn.send((server.base_url, server.token))
        conn.recv()  # block until the parent is done


@contextmanager
def _redis(url: str | None, folder: str, enabled: bool) -> Iterator[str | None]:
    """A Redis URL to benchmark against: `url` if given, else a redis-server started here on a free
    loopback port (AOF, fsync every second), else None when Redis is unavailable or disabled."""
    if not enabled:
        yield None
        return
    try:
        import redis
    except ModuleNotFoundError:
        print("redis: the redis package is not installed (pip install -e '.[redis]'); skipping Redis writes")
        yield None
        return
    if url is not None:
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        print("redis: redis-server is not on PATH; skipping Redis writes")
        yield None
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--dir",
            folder,
            "--loglevel",
            "warning",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis.from_url(url)
        for _ in range(500):
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.02)
        client.close()
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def _store_only(store: ReceiptStore, n: int) -> float:
    """Median µs of one pending + completed receipt pair on `store`, without HTTP."""
    times = []
    result = {"id": "F-1", "ticket_id": "T-102", "note": "Benchmark note.", "visibility": "internal"}
    for i in range(n):
        t0 = time.perf_counter()
        assert store.begin("bench/store_only", f"s-{i}", "sha256:x", "bench") is None
        store.complete("bench/store_only", f"s-{i}", result, 201)
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reads", type=int, default=2000)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5, help="split the runs into this many rounds")
    parser.add_argument(
        "--redis-url",
        default=None,
        help="benchmark Redis receipts on this server (default: start a redis-server if one is on PATH)",
    )
    parser.add_argument("--no-redis", action="store_true", help="skip the Redis receipt measurement")
    opts = parser.parse_args()

    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=_serve, args=(child,), daemon=True)
    proc.start()
    base_url, token = parent.recv()
    with tempfile.TemporaryDirectory() as tmp, _redis(opts.redis_url, tmp, not opts.no_redis) as redis_url:
        client = httpx.Client()
        auth = {"Authorization": f"Bearer {token}"}
        registry = Registry.from_dir(
            REPO / "generated" / "tickets",
            base_url=base_url,
            credentials=StaticCredentials({"TICKETS_TOKEN": token}),
            receipts=SqliteReceiptStore(Path(tmp) / "receipts.sqlite3"),
            audit=MemoryAuditSink(maxlen=1000),
            http_client=client,
            cursor_key=b"b" * 32,
        )
        redis_registry = None
        if redis_url is not None:
            redis_registry = Registry.from_dir(
                REPO / "generated" / "tickets",
                base_url=base_url,
                credentials=StaticCredentials({"TICKETS_TOKEN": token}),
                receipts=RedisReceiptStore(redis_url, prefix=f"bench-{time.time_ns()}:"),
                audit=MemoryAuditSink(maxlen=1000),
                http_client=client,
                cursor_key=b"b" * 32,
            )
        reader = Actor.of("bench", ["ticket:read"])
        writer = Actor.of("bench", ["ticket:read", "ticket:write"])
        note = {"ticket_id": "T-102", "note": "Benchmark note.", "visibility": "internal"}
        preview = registry.call("preview_ticket_followup", note, actor=writer)
        assert preview.ok and preview.result is not None, preview.to_json()
        preview_id = preview.result["preview_id"]
        if redis_registry is not None:  # the record executes the preview stored in its own registry's store
            stored = redis_registry.call("preview_ticket_followup", note, actor=writer)
            assert stored.ok and stored.result is not None and stored.result["preview_id"] == preview_id

        def approval(tag: str) -> Approval:
            """One approval per write: an approval is spent on one action (its idempotency key)."""
            return Approval(preview_id, approved_by="bench", approval_id=tag)

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
            r = client.post(
                url_write,
                json={"note": note["note"], "visibility": "internal"},
                headers={**auth, "Idempotency-Key": f"bare-{i}"},
            )
            assert r.status_code == 201
            r.json()

        def runtime_write(i: int) -> None:
            res = registry.call(
                "record_ticket_followup",
                {"preview_id": preview_id, "action_id": f"rt-{i}"},
                actor=writer,
                approval=approval(f"rt-{i}"),
            )
            assert res.ok and not res.replayed, res.to_json()

        def redis_write(i: int) -> None:
            assert redis_registry is not None
            res = redis_registry.call(
                "record_ticket_followup",
                {"preview_id": preview_id, "action_id": f"rd-{i}"},
                actor=writer,
                approval=approval(f"rd-{i}"),
            )
            assert res.ok and not res.replayed, res.to_json()

        warm = [bare_read, runtime_read, bare_write, runtime_write] + (
            [redis_write] if redis_registry else []
        )
        for fn in warm:  # warm up connections, caches
            for i in range(50):
                fn(10_000_000 + i + hash(fn.__name__) % 1000 * 1000)

        # call-by-call interleaving: each runtime call is paired with a bare call made right
        # before it, so load changes on the machine hit both sides alike
        samples: dict[str, list[float]] = {
            "bare_read": [],
            "runtime_read": [],
            "bare_write": [],
            "runtime_write": [],
            "redis_write": [],
        }
        clock = time.perf_counter
        for rnd in range(opts.rounds):
            base = rnd * 1_000_000
            for i in range(opts.reads // opts.rounds):
                t0 = clock()
                bare_read(base + i)
                t1 = clock()
                runtime_read(base + i)
                t2 = clock()
                samples["bare_read"].append((t1 - t0) * 1e6)
                samples["runtime_read"].append((t2 - t1) * 1e6)
            for i in range(opts.writes // opts.rounds):
                t0 = clock()
                bare_write(base + i)
                t1 = clock()
                runtime_write(base + i)
                t2 = clock()
                samples["bare_write"].append((t1 - t0) * 1e6)
                samples["runtime_write"].append((t2 - t1) * 1e6)
                if redis_registry is not None:
                    t3 = clock()
                    redis_write(base + i)
                    t4 = clock()
                    samples["redis_write"].append((t4 - t3) * 1e6)
        store_only: dict[str, float] = {
            "sqlite": _store_only(SqliteReceiptStore(Path(tmp) / "only.sqlite3"), 2000)
        }
        if redis_registry is not None:
            store_only["redis"] = _store_only(redis_registry.receipts, 2000)
            redis_registry.close()
        registry.close()
        client.close()
    parent.send("done")
    proc.join(timeout=5)

    med = {k: statistics.median(v) for k, v in samples.items() if v}
    read_over = med["runtime_read"] - med["bare_read"]
    write_over = med["runtime_write"] - med["bare_write"]
    print(
        f"reads : bare {med['bare_read']:8.1f} µs  runtime {med['runtime_read']:8.1f} µs  "
        f"overhead {read_over:7.1f} µs  ratio {med['runtime_read'] / med['bare_read']:.3f}  "
        f"(target ≤ 1.150) {'OK' if med['runtime_read'] / med['bare_read'] <= 1.15 else 'MISSED'}"
    )
    print(
        f"writes: bare {med['bare_write']:8.1f} µs  runtime {med['runtime_write']:8.1f} µs  "
        f"overhead {write_over:7.1f} µs  ratio {med['runtime_write'] / med['bare_write']:.3f}  "
        f"(target ≤ 1000 µs) {'OK' if write_over <= 1000 else 'MISSED'}"
    )
    if "redis_write" in med:
        redis_over = med["redis_write"] - med["bare_write"]
        print(
            f"writes, Redis receipts: runtime {med['redis_write']:8.1f} µs  overhead {redis_over:7.1f} µs  "
            f"vs SQLite {med['redis_write'] - med['runtime_write']:+7.1f} µs per idempotent write  "
            f"(target ≤ 1000 µs) {'OK' if redis_over <= 1000 else 'MISSED'}"
        )
    print(
        "receipt store alone (begin + complete, median): "
        + ", ".join(f"{name} {us:6.1f} µs" for name, us in store_only.items())
    )
    for kind in ("read", "write"):
        b, r = samples[f"bare_{kind}"], samples[f"runtime_{kind}"]
        print(
            f"  {kind:5s} mean: bare {statistics.fmean(b):8.1f} µs  runtime {statistics.fmean(r):8.1f} µs;  "
            f"p90: bare {statistics.quantiles(b, n=10)[-1]:8.1f} µs  runtime {statistics.quantiles(r, n=10)[-1]:8.1f} µs"
        )
    print(f"reads={opts.reads} writes={opts.writes}, interleaved call by call; headline = per-call medians")


if __name__ == "__main__":
    main()
