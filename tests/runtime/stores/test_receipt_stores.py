"""One behavioural suite for every receipt store: SQLite, memory, Redis (a real redis-server on
loopback, started by the `redis_url` fixture) and PostgreSQL (a real server on loopback, started by
the `postgres_url` fixture), end to end against the loopback tickets API.

Each case asserts what the server saw (requests and side effects), not only what the runtime said.
The race cases run two real processes, each with its own Registry and its own store object over
the same SQLite file, Redis database or PostgreSQL tables.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.records import call_record
from tests.support.runtime_env import ADMIN, WRITER, tickets_dir

from toolgen.cli import main
from toolgen.runtime import (
    Approval,
    MemoryReceiptStore,
    PostgresReceiptStore,
    ReceiptStore,
    RedisReceiptStore,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
    receipts_from_url,
)
from toolgen.testing.tickets_server import TicketsServer

NOTE = {"ticket_id": "T-102", "note": "Customer asked for a callback.", "visibility": "public"}
FOLLOWUP = "tickets/record_ticket_followup"
DELETE = "tickets/record_ticket_delete"
WORKER = Path(__file__).with_name("receipt_race_worker.py")
TOOLGEN = shutil.which("toolgen") or str(Path(sys.executable).parent / "toolgen")


@dataclass
class Backend:
    """One receipt store under test: `spec` opens it (in this process or another), `open()` gives a
    new store object over the same data (for memory: the one in-process store)."""

    kind: str
    spec: str
    memory: MemoryReceiptStore | None = None

    def open(self) -> ReceiptStore:
        return self.memory if self.memory is not None else receipts_from_url(self.spec)

    def age(self, store: ReceiptStore, scope: str, key: str, seconds: float) -> None:
        """Move a receipt's last update `seconds` into the past (a worker that crashed long ago)."""
        if isinstance(store, SqliteReceiptStore):
            store._conn.execute(
                "UPDATE receipts SET updated_at = updated_at - ? WHERE scope=? AND key=?",
                (seconds, scope, key),
            )
        elif isinstance(store, MemoryReceiptStore):
            old = store._data[(scope, key)]
            store._data[(scope, key)] = replace(old, updated_at=old.updated_at - seconds)
        elif isinstance(store, PostgresReceiptStore):
            store._run(
                lambda cur: cur.execute(
                    f"UPDATE {store.prefix}receipts SET updated_at = updated_at - %s"
                    " WHERE scope=%s AND key=%s",
                    (seconds, scope, key),
                )
            )
        else:
            assert isinstance(store, RedisReceiptStore)
            name = store.redis_key(scope, key)
            store.client.hset(
                name,
                "updated_at",
                repr(float(store.client.hget(name, "updated_at")) - seconds),  # type: ignore[arg-type]
            )


def _redis_spec(url: str) -> str:
    return f"{url}?prefix=t-{uuid.uuid4().hex[:10]}:"  # every test its own namespace on the shared server


def _postgres_spec(url: str) -> str:
    return f"{url}?table_prefix=t{uuid.uuid4().hex[:12]}_"  # every test its own tables on the shared server


@pytest.fixture(params=["sqlite", "memory", "redis", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    kind = request.param
    if kind == "sqlite":
        return Backend(kind, str(tmp_path / "receipts.sqlite3"))
    if kind == "memory":
        return Backend(kind, "memory://", MemoryReceiptStore())
    if kind == "postgres":
        return Backend(kind, _postgres_spec(request.getfixturevalue("postgres_url")))
    return Backend(kind, _redis_spec(request.getfixturevalue("redis_url")))


#: the process races against a real Redis and a real PostgreSQL run in the slow suite (`-m slow`, a step
#: of its own in .ci/run): two worker processes each plus a server, 15-25 s apiece on 2 cores; the same
#: races against the shared SQLite file stay in the fast suite
RACED = [
    "sqlite",
    pytest.param("redis", marks=pytest.mark.slow),
    pytest.param("postgres", marks=pytest.mark.slow),
]


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def shared_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """The stores several processes can share."""
    if request.param == "sqlite":
        return Backend("sqlite", str(tmp_path / "shared.sqlite3"))
    if request.param == "postgres":
        return Backend("postgres", _postgres_spec(request.getfixturevalue("postgres_url")))
    return Backend("redis", _redis_spec(request.getfixturevalue("redis_url")))


def make_registry(server: TicketsServer, store: ReceiptStore) -> Registry:
    return Registry.from_dir(
        tickets_dir(),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=store,
        cursor_key=b"k" * 32,
    )


@pytest.fixture
def reg(server: TicketsServer, backend: Backend) -> Iterator[Registry]:
    registry = make_registry(server, backend.open())
    yield registry
    registry.close()


def approve(registry: Registry, preview_tool: str, args: dict[str, Any]) -> Approval:
    preview = registry.call(preview_tool, args, actor=WRITER if "followup" in preview_tool else ADMIN)
    assert preview.ok, preview.to_json()
    return Approval(preview.result["preview_id"], approved_by="human@example.com")  # type: ignore[index]


def posts(server: TicketsServer) -> int:
    return len(server.requests_for("POST", "/followups"))


# -- the store protocol itself --------------------------------------------------------------------------


def test_store_state_rules(backend: Backend) -> None:
    store = backend.open()
    assert store.get("a/t", "k") is None
    assert store.begin("a/t", "k", "fp1", "alice") is None
    first = store.get("a/t", "k")
    assert first is not None and (first.fingerprint, first.state, first.actor) == ("fp1", "pending", "alice")
    assert first.result is None and first.status is None and first.created_at == first.updated_at > 0
    # a second claimant sees the first one's receipt, whatever its own fingerprint
    again = store.begin("a/t", "k", "fp1", "bob")
    assert again is not None and (again.fingerprint, again.state, again.actor) == ("fp1", "pending", "alice")
    other = store.begin("a/t", "k", "fp2", "bob")
    assert other is not None and other.fingerprint == "fp1"
    # pending → unknown → pending → released (the key can be used again)
    store.mark_unknown("a/t", "k")
    assert store.get("a/t", "k").state == "unknown"  # type: ignore[union-attr]
    store.mark_unknown("a/t", "k")
    store.resume("a/t", "k")
    assert store.get("a/t", "k").state == "pending"  # type: ignore[union-attr]
    store.release("a/t", "k")
    assert store.get("a/t", "k") is None
    assert store.begin("a/t", "k", "fp2", "carol") is None
    # completed: the result round-trips as JSON and nothing reopens or releases it
    result = {"id": "F-1", "text": "é ✓ \u2028", "n": [1, 2.5, None, True], "nested": {"a": {}}}
    store.complete("a/t", "k", result, 201)
    for change in (store.mark_unknown, store.resume, store.release):
        change("a/t", "k")
    done = store.get("a/t", "k")
    assert done is not None and (done.state, done.status, done.result) == ("completed", 201, result)
    assert (done.fingerprint, done.actor) == ("fp2", "carol") and done.updated_at >= done.created_at
    replay = store.begin("a/t", "k", "fp2", "dave")
    assert replay is not None and replay.state == "completed" and replay.result == result
    # completing an unknown key creates nothing
    store.complete("a/t", "missing", {"x": 1}, 200)
    assert store.get("a/t", "missing") is None
    # keys are scoped per tool; scope/key boundaries cannot be confused
    assert store.begin("a/u", "k", "fp9", "erin") is None
    assert store.get("a/t", "k").fingerprint == "fp2"  # type: ignore[union-attr]
    assert store.begin("x:y", "z", "fpA", "f") is None
    assert store.begin("x", "y:z", "fpB", "f") is None
    assert store.get("x:y", "z").fingerprint == "fpA" and store.get("x", "y:z").fingerprint == "fpB"  # type: ignore[union-attr]
    store.close()
    if backend.kind != "memory":  # a new store object (another worker, a restart) sees the same data
        reopened = backend.open()
        assert reopened.get("a/t", "k") == done
        reopened.close()


def test_purge_drops_only_old_completed_receipts(shared_backend: Backend) -> None:
    store = shared_backend.open()
    assert isinstance(store, SqliteReceiptStore | RedisReceiptStore | PostgresReceiptStore)
    for key in ("old", "new", "open"):
        assert store.begin("a/t", key, "fp", "x") is None
    store.complete("a/t", "old", {}, 200)
    store.complete("a/t", "new", {}, 200)
    shared_backend.age(store, "a/t", "old", 3600)
    shared_backend.age(store, "a/t", "open", 3600)
    assert store.purge(60) == 1
    assert store.get("a/t", "old") is None
    assert store.get("a/t", "new") is not None and store.get("a/t", "open") is not None
    store.close()


# -- end to end against the tickets API ----------------------------------------------------------------


def test_new_key_is_stored_then_replayed_without_a_second_request(
    reg: Registry, server: TicketsServer, backend: Backend
) -> None:
    approval = approve(reg, "preview_ticket_followup", NOTE)
    args = dict(NOTE, action_id="act-stored")
    first = call_record(reg, "record_ticket_followup", args, actor=WRITER, approval=approval)
    assert first.ok and not first.replayed and first.status == 201, first.to_json()
    stored = reg.receipts.get(FOLLOWUP, "act-stored")
    assert stored is not None and stored.state == "completed" and stored.result == first.result
    assert stored.fingerprint == approval.preview_id and stored.actor == WRITER.id and stored.status == 201
    assert posts(server) == 1
    # a second worker (or a restart) over the same store replays: no second HTTP request
    other = make_registry(server, backend.open())
    second = call_record(other, "record_ticket_followup", args, actor=WRITER, approval=approval)
    other.close()
    assert second.ok and second.replayed and second.result == first.result and second.status == 201
    assert posts(server) == 1 and server.side_effects["addFollowup"] == 1


def test_same_key_other_arguments_is_a_conflict(reg: Registry, server: TicketsServer) -> None:
    assert call_record(
        reg,
        "record_ticket_followup",
        dict(NOTE, action_id="act-c"),
        actor=WRITER,
        approval=approve(reg, "preview_ticket_followup", NOTE),
    ).ok
    changed = dict(NOTE, note="Something else entirely.")
    res = call_record(
        reg,
        "record_ticket_followup",
        dict(changed, action_id="act-c"),
        actor=WRITER,
        approval=approve(reg, "preview_ticket_followup", changed),
    )
    assert res.error is not None and res.error.code == "idempotency_conflict" and not res.error.retryable
    assert posts(server) == 1 and server.side_effects["addFollowup"] == 1
    assert reg.receipts.get(FOLLOWUP, "act-c").fingerprint != res.fingerprint  # type: ignore[union-attr]


def test_pending_left_by_a_crash(reg: Registry, server: TicketsServer, backend: Backend) -> None:
    store = reg.receipts
    approval = approve(reg, "preview_ticket_delete", {"ticket_id": "T-130"})
    # a worker crashed long ago right after claiming the key; the key is not forwarded to the API
    assert store.begin(DELETE, "del-crash", approval.preview_id, "admin") is None
    backend.age(store, DELETE, "del-crash", 3600)
    res = call_record(
        reg,
        "record_ticket_delete",
        {"ticket_id": "T-130", "action_id": "del-crash"},
        actor=ADMIN,
        approval=approval,
    )
    assert res.error is not None and res.error.code == "result_unknown" and res.error.result_known is False
    assert not server.requests_for("DELETE") and server.side_effects["deleteTicket"] == 0
    # a live claim (another worker is mid-call) is reported as in progress, retryable
    assert store.begin(DELETE, "del-busy", approval.preview_id, "admin") is None
    busy = call_record(
        reg,
        "record_ticket_delete",
        {"ticket_id": "T-130", "action_id": "del-busy"},
        actor=ADMIN,
        approval=Approval(approval.preview_id, approval_id="second approval"),
    )
    assert busy.error is not None and busy.error.code == "idempotency_in_progress" and busy.error.retryable
    # with a forwarded key, a stale claim is re-sent once (the API deduplicates), then replayed
    note = approve(reg, "preview_ticket_followup", NOTE)
    assert store.begin(FOLLOWUP, "act-crash", note.preview_id, "writer") is None
    backend.age(store, FOLLOWUP, "act-crash", 3600)
    resent = call_record(
        reg, "record_ticket_followup", dict(NOTE, action_id="act-crash"), actor=WRITER, approval=note
    )
    assert resent.ok and not resent.replayed, resent.to_json()
    again = call_record(
        reg, "record_ticket_followup", dict(NOTE, action_id="act-crash"), actor=WRITER, approval=note
    )
    assert again.ok and again.replayed
    assert posts(server) == 1 and server.side_effects["addFollowup"] == 1


def test_lost_answer_is_unknown_and_never_written_twice(reg: Registry, server: TicketsServer) -> None:
    args = {"ticket_id": "T-121"}
    approval = approve(reg, "preview_ticket_delete", args)
    server.stall_next(0.8, after_commit=True)
    res = call_record(
        reg,
        "record_ticket_delete",
        dict(args, action_id="del-lost"),
        actor=ADMIN,
        approval=approval,
        timeout_ms=250,
    )
    assert res.error is not None and res.error.code == "result_unknown" and not res.error.retryable
    assert reg.receipts.get(DELETE, "del-lost").state == "unknown"  # type: ignore[union-attr]
    retry = call_record(
        reg, "record_ticket_delete", dict(args, action_id="del-lost"), actor=ADMIN, approval=approval
    )
    assert retry.error is not None and retry.error.code == "result_unknown"
    assert len(server.requests_for("DELETE")) == 1 and server.side_effects["deleteTicket"] == 1


# -- two processes racing on the same keys -------------------------------------------------------------


def _race(jobs: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Start one worker process per job, release them together, return each one's output."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), json.dumps(job)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for job in jobs
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.strip() == "ready", (line, proc.stderr.read() if proc.stderr else "")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        outputs = []
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            outputs.append(json.loads(out.strip().splitlines()[-1]))
        return outputs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.mark.parametrize("shared_backend", RACED, indirect=True)
def test_two_processes_claiming_the_same_keys(shared_backend: Backend) -> None:
    keys = [f"k{i}" for i in range(300)]
    job = {"mode": "begin", "receipts": shared_backend.spec, "scope": "race/tool", "keys": keys}
    one, two = _race([dict(job, worker="w1"), dict(job, worker="w2")])
    assert set(one).isdisjoint(two) and set(one) | set(two) == set(keys)  # exactly one claim per key


@pytest.mark.parametrize("shared_backend", RACED, indirect=True)
def test_two_processes_racing_on_one_write(shared_backend: Backend, server: TicketsServer) -> None:
    with make_registry(server, MemoryReceiptStore()) as local:
        preview_id = approve(local, "preview_ticket_followup", NOTE).preview_id
    keys = [f"race-{i}" for i in range(15)]
    job = {
        "mode": "call",
        "receipts": shared_backend.spec,
        "base_url": server.base_url,
        "token": server.token,
        "preview_id": preview_id,
        "args": NOTE,
        "keys": keys,
    }
    one, two = _race([dict(job, worker="w1"), dict(job, worker="w2")])
    for key in keys:
        outcomes = sorted([one[key], two[key]])
        assert outcomes.count("sent") == 1, (key, outcomes)
        assert set(outcomes) <= {"sent", "replayed", "idempotency_in_progress"}, (key, outcomes)
    # exactly one HTTP request and one side effect per key: the store, not the API's dedupe, decided
    assert posts(server) == len(keys) and server.side_effects["addFollowup"] == len(keys)
    keys_sent = [r.headers["Idempotency-Key"] for r in server.requests_for("POST", "/followups")]
    assert sorted(keys_sent) == sorted(keys)
    store = shared_backend.open()
    assert all(store.get(FOLLOWUP, k).state == "completed" for k in keys)  # type: ignore[union-attr]
    store.close()


@pytest.mark.parametrize("shared_backend", RACED, indirect=True)
def test_two_processes_racing_one_approval_on_different_keys(
    shared_backend: Backend, server: TicketsServer
) -> None:
    """One approval, presented by two processes for different keys at once: one write in all."""
    with make_registry(server, MemoryReceiptStore()) as local:
        preview_id = approve(local, "preview_ticket_followup", NOTE).preview_id
    job = {
        "mode": "call",
        "receipts": shared_backend.spec,
        "base_url": server.base_url,
        "token": server.token,
        "preview_id": preview_id,
        "args": NOTE,
        "approval_id": "one-approval",
    }
    one, two = _race(
        [
            dict(job, worker="w1", keys=[f"a-{i}" for i in range(10)]),
            dict(job, worker="w2", keys=[f"b-{i}" for i in range(10)]),
        ]
    )
    outcomes = [*one.values(), *two.values()]
    assert outcomes.count("sent") == 1 and outcomes.count("approval_used") == 19, outcomes
    assert posts(server) == 1 and server.side_effects["addFollowup"] == 1


# -- Redis specifics -------------------------------------------------------------------------------------


def test_redis_completed_ttl_expires_only_completed_receipts(redis_url: str) -> None:
    store = receipts_from_url(_redis_spec(redis_url) + "&completed_ttl=0.3")
    assert isinstance(store, RedisReceiptStore) and store.completed_ttl == 0.3
    assert store.begin("a/t", "done", "fp", "x") is None and store.begin("a/t", "open", "fp", "x") is None
    store.mark_unknown("a/t", "open")
    store.complete("a/t", "done", {"ok": True}, 200)
    assert 0 < int(store.client.pttl(store.redis_key("a/t", "done"))) <= 300
    assert int(store.client.pttl(store.redis_key("a/t", "open"))) == -1  # never expires
    time.sleep(0.45)
    assert store.get("a/t", "done") is None
    assert store.get("a/t", "open") is not None and store.get("a/t", "open").state == "unknown"  # type: ignore[union-attr]
    store.close()
    with pytest.raises(ValueError, match="completed_ttl"):
        RedisReceiptStore(redis_url, completed_ttl=0)


def test_redis_stores_with_other_prefixes_do_not_see_each_other(redis_url: str) -> None:
    one, two = receipts_from_url(_redis_spec(redis_url)), receipts_from_url(_redis_spec(redis_url))
    assert one.begin("a/t", "k", "fp1", "x") is None and two.begin("a/t", "k", "fp2", "y") is None
    assert one.get("a/t", "k").fingerprint == "fp1"  # type: ignore[union-attr]
    one.close()
    two.close()


def test_receipts_from_url(
    tmp_path: Path, redis_url: str, redis_socket: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path_store = receipts_from_url(str(tmp_path / "plain.sqlite3"))
    assert isinstance(path_store, SqliteReceiptStore) and path_store.path == tmp_path / "plain.sqlite3"
    path_store.close()
    url_store = receipts_from_url(f"sqlite:///{tmp_path}/url.sqlite3")
    assert isinstance(url_store, SqliteReceiptStore) and url_store.path == tmp_path / "url.sqlite3"
    url_store.close()
    assert isinstance(receipts_from_url(tmp_path / "pathlike.sqlite3"), SqliteReceiptStore)
    assert isinstance(receipts_from_url("memory://"), MemoryReceiptStore)
    red = receipts_from_url(f"{redis_url}?prefix=app1:&completed_ttl=86400&health_check_interval=30")
    assert isinstance(red, RedisReceiptStore) and red.prefix == "app1:" and red.completed_ttl == 86400
    assert red.client.ping()
    red.close()
    for sock_url in (f"redis+unix://{redis_socket}?db=0&prefix=sock:", f"unix://{redis_socket}"):
        over_socket = receipts_from_url(sock_url)
        assert isinstance(over_socket, RedisReceiptStore) and over_socket.client.ping()
        assert over_socket.begin("a/t", "sock", "fp", "x") is None
        over_socket.close()
    for bad in ("mongodb://db/receipts", "sqlite://", f"{redis_url}?completed_ttl=soon"):
        with pytest.raises(ValueError):
            receipts_from_url(bad)
    monkeypatch.setitem(sys.modules, "redis", None)  # as if the extra were not installed
    with pytest.raises(ImportError, match=r"pip install -e \"\.\[redis\]\" in a clone of toolgen"):
        receipts_from_url(redis_url)


# -- toolgen call with a Redis store ---------------------------------------------------------------------


def _call(
    server: TicketsServer, cwd: Path, receipts: str, tool: str, args: dict[str, Any], *extra: str
) -> tuple[int, Any, str]:
    env = dict(os.environ, TICKETS_TOKEN=server.token)
    for name in ("TOOLGEN_SCOPES", "TOOLGEN_RECEIPTS", "TOOLGEN_CURSOR_KEY"):
        env.pop(name, None)
    proc = subprocess.run(
        [
            TOOLGEN,
            "call",
            str(tickets_dir()),
            tool,
            "--args",
            json.dumps(args),
            "--base-url",
            server.base_url,
            "--receipts",
            receipts,
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=cwd,
        check=False,
    )
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else None, proc.stderr


def _call_here(
    server: TicketsServer,
    cwd: Path,
    receipts: str,
    tool: str,
    args: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[int, Any, str]:
    """`_call` in-process (click's runner in `cwd`): the same exit code, stdout and stderr."""
    monkeypatch.setenv("TICKETS_TOKEN", server.token)
    for name in ("TOOLGEN_SCOPES", "TOOLGEN_RECEIPTS", "TOOLGEN_CURSOR_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(
        main,
        [
            "call",
            str(tickets_dir()),
            tool,
            "--args",
            json.dumps(args),
            "--base-url",
            server.base_url,
            "--receipts",
            receipts,
        ],
    )
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else None, result.stderr


def test_toolgen_call_with_redis_receipts(server: TicketsServer, tmp_path: Path, redis_url: str) -> None:
    spec = _redis_spec(redis_url)
    a, b = tmp_path / "worker-a", tmp_path / "worker-b"  # two workers with nothing on disk in common
    a.mkdir()
    b.mkdir()
    code, preview, err = _call(server, a, spec, "preview_ticket_followup", NOTE, "--scopes", "ticket:write")
    assert code == 0, err
    # worker b executes the preview worker a stored: previews live in Redis beside the receipts
    record = {"preview_id": preview["result"]["preview_id"], "action_id": "cli-redis"}
    flags = ["--scopes", "ticket:read,ticket:write", "--approve", preview["result"]["preview_id"]]
    code, first, err = _call(server, a, spec, "record_ticket_followup", record, *flags)
    assert code == 0 and first["replayed"] is False, err
    code, second, err = _call(server, b, spec, "record_ticket_followup", record, *flags)
    assert code == 0 and second["replayed"] is True and second["result"] == first["result"], err
    assert posts(server) == 1 and server.side_effects["addFollowup"] == 1
    # a cursor issued by one worker is accepted by the other (the cursor key is kept in Redis)
    code, page1, err = _call(server, a, spec, "list_tickets", {"page_size": 2}, *flags)
    assert code == 0, err
    code, page2, err = _call(
        server, b, spec, "list_tickets", {"page_size": 2, "cursor": page1["result"]["next_cursor"]}, *flags
    )
    assert code == 0 and page2["ok"], (page2, err)
    assert not list(a.iterdir()) and not list(b.iterdir())  # no local SQLite file or cursor.key


def test_toolgen_call_refuses_unusable_receipt_stores(
    server: TicketsServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unusable stores are bad command-line input, reported without a password (in-process: the real
    `toolgen call` processes are the test above)."""

    def _call(
        server: TicketsServer, cwd: Path, receipts: str, tool: str, args: dict[str, Any]
    ) -> tuple[int, Any, str]:
        return _call_here(server, cwd, receipts, tool, args, monkeypatch)

    a = tmp_path
    code, out, err = _call(server, a, "mongodb://db/x", "get_ticket", {"ticket_id": "T-102"})
    assert code == 2 and out is None and "unknown receipt store URL scheme" in err
    code, out, err = _call(
        server,
        a,
        "postgresql://app:hunter2pw@127.0.0.1:1/db?connect_timeout=1",
        "get_ticket",
        {"ticket_id": "T-102"},
    )
    assert code == 2 and out is None and "cannot open the receipt store" in err and "hunter2pw" not in err
    code, out, err = _call(
        server, a, "redis://:hunter2pw@127.0.0.1:1/0", "get_ticket", {"ticket_id": "T-102"}
    )
    assert code == 2 and out is None and "cannot open the receipt store" in err and "hunter2pw" not in err
