"""PostgresReceiptStore beyond the shared store suite: a real server restarted under a runtime,
concurrent claimants on one key, preview bounds under concurrent writers, and URLs whose password
must never be printed.

The behavioural suite every store passes (stores/test_receipt_stores.py, lifetimes, issued
approvals, stored previews, hostile cases) runs against PostgreSQL through the `any_receipt_store`
and `backend` fixtures; this file covers what only a database server can do to a client.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from tests.runtime.conftest import PostgresServer
from tests.support.runtime_env import WRITER, tickets_dir

from toolgen.cli.call import ReceiptStoreError, open_receipts
from toolgen.runtime import Approval, PostgresReceiptStore, Registry, StaticCredentials, receipts_from_url
from toolgen.runtime.stores.postgres import PostgresPreviewStore
from toolgen.runtime.stores.previews import StoredPreview
from toolgen.testing.tickets_server import TicketsServer

NOTE = {"ticket_id": "T-102", "note": "Customer asked for a callback.", "visibility": "public"}
FOLLOWUP = "record_ticket_followup"


def _registry(server: TicketsServer, store: Any) -> Registry:
    return Registry.from_dir(
        tickets_dir(),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=store,
        cursor_key=b"k" * 32,
    )


def _preview(reg: Registry, note: str = "Customer asked for a callback.") -> str:
    shown = reg.call("preview_ticket_followup", dict(NOTE, note=note), actor=WRITER)
    assert shown.ok, shown.to_json()
    return str(shown.result["preview_id"])  # type: ignore[index]


def _record(reg: Registry, pid: str, key: str) -> Any:
    return reg.call(
        FOLLOWUP,
        {"preview_id": pid, "action_id": key},
        actor=WRITER,
        approval=Approval(pid, approved_by="human@example.com"),
    )


def _posts(server: TicketsServer) -> int:
    return len(server.requests_for("POST", "/followups"))


@pytest.mark.long
def test_a_database_restart_costs_only_the_calls_made_while_it_was_down(
    postgres_server: PostgresServer, server: TicketsServer
) -> None:
    store = receipts_from_url(f"{postgres_server.url}?table_prefix=restart_")
    reg = _registry(server, store)
    pid = _preview(reg)
    second = _preview(reg, "Second note.")  # previewed (and stored) while the database is up
    first = _record(reg, pid, "pg-1")
    assert first.ok, first.to_json()
    assert _posts(server) == 1
    postgres_server.stop()
    down = _record(reg, second, "pg-2")
    assert down.error is not None and down.error.code == "receipt_store_unavailable", down.to_json()
    assert _posts(server) == 1, "a write was sent although its receipt could not be recorded"
    postgres_server.start()
    # the next call reconnects: the write goes through once, the earlier one replays
    again = _record(reg, second, "pg-2")
    assert again.ok, again.to_json()
    assert _posts(server) == 2
    replay = _record(reg, pid, "pg-1")
    assert replay.ok and replay.result == first.result, replay.to_json()
    assert _posts(server) == 2
    # a new store object (another worker) sees the same receipts
    other = receipts_from_url(f"{postgres_server.url}?table_prefix=restart_")
    for key in ("pg-1", "pg-2"):
        receipt = other.get(f"{reg.api}/{FOLLOWUP}", key)
        assert receipt is not None and receipt.state == "completed"
    other.close()
    reg.close()


def _at_once(n: int, work: Callable[[int], Any]) -> list[Any]:
    """`work(0)` ... `work(n - 1)` in n threads released together by a barrier; their results."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        results[i] = work(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_one_key_claimed_by_many_connections_at_once_has_one_owner(postgres_url: str) -> None:
    spec = f"{postgres_url}?table_prefix=c{uuid.uuid4().hex[:10]}_"
    stores = [receipts_from_url(spec) for _ in range(8)]
    outcomes = _at_once(len(stores), lambda i: stores[i].begin("race/tool", "k", f"fp{i}", f"actor{i}"))
    owners = [i for i, o in enumerate(outcomes) if o is None]
    assert len(owners) == 1, outcomes
    assert all(o.fingerprint == f"fp{owners[0]}" for o in outcomes if o is not None)
    # and one approval binds to one action, whoever races for it
    bound = _at_once(
        len(stores),
        lambda i: stores[i].spend("race/tool#approval", "hmac-sha256:00", f"key:{i}", f"actor{i}", None),
    )
    winners = [i for i, b in enumerate(bound) if b is None]
    assert len(winners) == 1 and all(b == f"key:{winners[0]}" for b in bound if b is not None), bound
    for s in stores:
        s.close()


def test_preview_bounds_hold_under_concurrent_writers(postgres_url: str) -> None:
    spec = f"{postgres_url}?table_prefix=p{uuid.uuid4().hex[:10]}_"
    stores = [receipts_from_url(spec) for _ in range(4)]
    previews = []
    for s in stores:
        assert isinstance(s, PostgresReceiptStore)
        p = s.previews()
        assert isinstance(p, PostgresPreviewStore)
        p.max_per_actor = 5
        previews.append(p)

    def put_many(i: int) -> None:
        for n in range(10):
            previews[i].put(
                StoredPreview("a/t", "alice", f"p{i}-{n}", "intent", {"n": n}, 1000.0 + n, 4_000_000_000.0)
            )

    _at_once(len(previews), put_many)
    first = stores[0]
    assert isinstance(first, PostgresReceiptStore)
    count = first._run(
        lambda cur: (
            cur.execute(f"SELECT COUNT(*) FROM {first.prefix}previews WHERE scope='a/t' AND actor='alice'"),
            cur.fetchone(),
        )[1]
    )
    assert count[0] == 5
    for s in stores:
        s.close()


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://app:s3cr3t-pw@127.0.0.1:1/db?connect_timeout=1",  # give up after 1 s, not the default 5
        "postgresql://app@127.0.0.1:1/db?password=s3cr3t-pw&sslmode=disable&connect_timeout=1",
        "postgres://app:s3cr3t-pw@[::1/db",
    ],
)
def test_a_store_that_cannot_be_opened_never_prints_its_password(url: str) -> None:
    with pytest.raises(ReceiptStoreError) as caught:
        open_receipts(url)
    assert "s3cr3t" not in str(caught.value)
    assert "cannot open the receipt store" in str(caught.value)


def test_a_table_prefix_that_is_not_an_identifier_is_refused_before_any_sql(postgres_url: str) -> None:
    with pytest.raises(ValueError, match="table prefix"):
        receipts_from_url(f"{postgres_url}?table_prefix=x;DROP TABLE y;--")


def test_the_schema_is_versioned_and_a_newer_one_is_refused(postgres_url: str) -> None:
    from toolgen.runtime.stores.postgres import SCHEMA_VERSION

    prefix = f"v{uuid.uuid4().hex[:10]}_"
    # workers starting together
    stores = _at_once(4, lambda _: receipts_from_url(f"{postgres_url}?table_prefix={prefix}&pool_size=2"))
    assert len(stores) == 4
    first = stores[0]
    assert isinstance(first, PostgresReceiptStore) and first.schema_version() == SCHEMA_VERSION
    first._run(
        lambda cur: cur.execute(
            f"UPDATE {prefix}meta SET value = %s WHERE name = 'schema-version'", (str(SCHEMA_VERSION + 1),)
        )
    )
    for s in stores:
        s.close()
    with pytest.raises(RuntimeError, match="newer toolgen"):
        receipts_from_url(f"{postgres_url}?table_prefix={prefix}")
    with pytest.raises(ValueError, match="pool_size"):
        receipts_from_url(f"{postgres_url}?table_prefix={prefix}&pool_size=lots")


def test_tables_without_a_schema_version_are_refused_and_left_as_they_are(postgres_url: str) -> None:
    """Tables of the prefix with no ``meta`` version (a layout no release wrote) are refused, naming
    them; nothing is created, read or converted."""
    prefix = f"u{uuid.uuid4().hex[:10]}_"
    store = receipts_from_url(f"{postgres_url}?table_prefix={prefix}")
    assert isinstance(store, PostgresReceiptStore)
    store._run(
        lambda cur: (
            cur.execute(f"DROP TABLE {prefix}meta"),
            cur.execute(f"ALTER TABLE {prefix}receipts DROP COLUMN lease_ms"),
        )
    )
    store.close()
    with pytest.raises(
        RuntimeError, match=f"{prefix}receipts.*carry no schema version.*another table_prefix"
    ):
        receipts_from_url(f"{postgres_url}?table_prefix={prefix}")
    other = receipts_from_url(f"{postgres_url}?table_prefix=w{uuid.uuid4().hex[:10]}_")
    assert isinstance(other, PostgresReceiptStore)

    def meta_and_columns(cur: Any) -> tuple[Any, list[Any]]:
        cur.execute("SELECT to_regclass(%s)", (f"{prefix}meta",))
        meta = cur.fetchone()[0]
        cur.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = %s", (f"{prefix}receipts",)
        )
        return meta, sorted(r[0] for r in cur.fetchall())

    meta, columns = other._run(meta_and_columns)
    other.close()
    assert meta is None and "lease_ms" not in columns  # the refused tables stay as they were


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "soon"])
def test_a_connect_timeout_that_is_not_whole_seconds_is_refused_before_connecting(value: str) -> None:
    with pytest.raises(ValueError, match="connect_timeout must be a whole number of seconds"):
        receipts_from_url(f"postgresql://app@127.0.0.1:1/db?connect_timeout={value}")


def test_the_url_connect_timeout_bounds_the_whole_open(postgres_url: str) -> None:
    """libpq's `connect_timeout` in the URL is the store's too: it bounds the pool's wait, and the
    connection libpq is given still carries it."""
    store = receipts_from_url(f"{postgres_url}?table_prefix=t{uuid.uuid4().hex[:12]}_&connect_timeout=2")
    try:
        assert isinstance(store, PostgresReceiptStore) and store._pool.timeout == 2.0
        assert store._pool.kwargs["connect_timeout"] == 2
    finally:
        store.close()
