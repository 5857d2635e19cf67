"""`ReceiptStore.take` / `give`, the count limits keep, on every store (memory, SQLite, real Redis,
real PostgreSQL): all or nothing, entries that expire with their window (the test's clock moved,
never slept), the seconds to wait, and exactness under threads racing for one bucket."""

from __future__ import annotations

import math
import threading
import uuid
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.runtime.clock import ManualClock
from toolgen.runtime.stores import LimitTake, ReceiptStore, limit_refusal


def take(
    store: ReceiptStore,
    bucket: str,
    *,
    cost: float = 1,
    most: float = 3,
    keep: float = 60,
    token: str | None = None,
) -> tuple[int, float] | None:
    return store.take([LimitTake(bucket, token or uuid.uuid4().hex, cost, most, keep)])


def test_a_bucket_takes_up_to_its_most_then_says_how_long_to_wait(
    any_receipt_store: ReceiptStore, clock: ManualClock
) -> None:
    store = any_receipt_store
    assert [take(store, "b", keep=60) for _ in range(3)] == [None, None, None]
    index, wait = take(store, "b", keep=60) or (None, 0.0)
    assert index == 0 and 59 < wait <= 60
    clock.advance(30)
    refused = take(store, "b")
    assert refused is not None and 29 < refused[1] <= 30
    clock.advance(30.5)  # the first three expired
    assert take(store, "b") is None


def test_a_sum_counts_costs_and_a_cost_above_the_most_never_fits(
    any_receipt_store: ReceiptStore, clock: ManualClock
) -> None:
    store = any_receipt_store
    assert take(store, "s", cost=600, most=1000) is None
    clock.advance(10)
    assert take(store, "s", cost=300, most=1000) is None
    refused = take(store, "s", cost=200, most=1000)
    assert refused is not None and refused[0] == 0
    assert 49 < refused[1] <= 50  # the first entry (600) expires 50 s from now; freeing it makes room
    assert take(store, "s", cost=1001, most=1000) == (0, math.inf)
    assert take(store, "s", cost=100, most=1000) is None  # exactly the most


def test_several_buckets_are_taken_all_or_nothing(any_receipt_store: ReceiptStore) -> None:
    store = any_receipt_store
    assert take(store, "full", most=1) is None
    both = [LimitTake("free", "t1", 1, 5, 60), LimitTake("full", "t1", 1, 1, 60)]
    assert store.take(both) is not None and store.take(both)[0] == 1  # type: ignore[index]
    for _ in range(5):  # `free` kept none of the refused takes' entries
        assert take(store, "free", most=5) is None
    assert take(store, "free", most=5) is not None


def test_give_frees_an_entry(any_receipt_store: ReceiptStore) -> None:
    store = any_receipt_store
    slot = LimitTake("slots", "call-1", 1, 1, 600)
    assert store.take([slot]) is None
    assert take(store, "slots", most=1) is not None
    store.give([slot])
    assert take(store, "slots", most=1) is None


def test_threads_racing_for_one_bucket_take_exactly_its_most(any_receipt_store: ReceiptStore) -> None:
    store = any_receipt_store
    results: list[tuple[int, float] | None] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(5):
            got = take(store, "race", most=10)
            with lock:
                results.append(got)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(1 for r in results if r is None) == 10
    assert len(results) == 40


@settings(max_examples=examples(200))
@given(
    entries=st.lists(st.tuples(st.integers(0, 50), st.floats(0.5, 100)), max_size=12),
    cost=st.integers(0, 60),
    most=st.integers(1, 100),
)
def test_the_refusal_is_the_first_moment_the_cost_fits(
    entries: list[tuple[int, float]], cost: int, most: int
) -> None:
    wait = limit_refusal(entries, cost, most, 0.0)
    total = sum(c for c, _ in entries)
    if total + cost <= most:
        assert wait is None
        return
    assert wait is not None
    if cost > most:
        assert wait == math.inf
        return
    assert sum(c for c, e in entries if e > wait) + cost <= most  # fits once the entries up to `wait` expired
    earlier = [e for _, e in entries if e < wait]
    if earlier:  # and not a moment before it
        assert sum(c for c, e in entries if e > max(earlier)) + cost > most


def test_postgres_tables_of_version_1_are_migrated_to_hold_limits(postgres_url: str) -> None:
    """A database an earlier toolgen wrote (schema version 1, no limits table) gains the table when
    a store opens it, and its receipts stay."""
    from toolgen.runtime.stores import PostgresReceiptStore, receipts_from_url
    from toolgen.runtime.stores.postgres import SCHEMA_VERSION

    prefix = f"g{uuid.uuid4().hex[:10]}_"
    first = receipts_from_url(f"{postgres_url}?table_prefix={prefix}")
    assert isinstance(first, PostgresReceiptStore)
    assert first.begin("api/t", "k", "fp", "a") is None
    first._run(lambda cur: cur.execute(f"DROP TABLE {prefix}limits"))
    first._run(lambda cur: cur.execute(f"UPDATE {prefix}meta SET value = '1' WHERE name = 'schema-version'"))
    first.close()
    again = receipts_from_url(f"{postgres_url}?table_prefix={prefix}")
    try:
        assert isinstance(again, PostgresReceiptStore) and again.schema_version() == SCHEMA_VERSION == 2
        assert again.get("api/t", "k") is not None
        assert take(again, "b", most=1) is None and take(again, "b", most=1) is not None
    finally:
        again.close()


def test_a_store_without_take_refuses_the_limited_call_and_sends_nothing(tmp_path: Path) -> None:
    """A store of one's own that predates limits cannot count a call: the call is refused
    (`receipt_store_unavailable`), never sent uncounted."""
    from tests.support.build import REPO, build
    from tests.support.recording_server import RecordingServer

    from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials

    class OldStore(MemoryReceiptStore):
        take = None  # type: ignore[assignment]

    body = (
        "tools:\n  balance:\n    operation: getBalance\n    effect: read\n    permission: payments:read\n"
        "    limits: [{per: tool, calls: 5, window: 1m}]\n"
    )
    built = build(tmp_path, REPO / "tests" / "fixtures" / "limits" / "payments.yaml", body)
    with RecordingServer() as api:
        reg = Registry.from_dir(
            built.out, base_url=api.base_url, credentials=StaticCredentials({}), receipts=OldStore()
        )
        res = reg.call("balance", {}, actor=Actor.of("a", ["payments:read"]))
        assert res.error is not None and res.error.code == "receipt_store_unavailable", res.to_json()
        assert api.requests == []
