"""Attacks on the stored preview, the preview store and the bearer-token file, by a caller that
controls a tool's arguments or a local user of the serving machine.

- A caller that previews many different requests (a loop of ``preview_*`` calls: no byte reaches
  the API, so nothing upstream slows it down) must not grow the preview store without bound, must
  not push out another actor's previews, and must not make every later preview slower (a purge
  that scans the whole store on every write turns N previews into N² work under the store's lock).
- A token file that every user of the machine may write lets any of them add a token with any
  scopes: the server refuses it instead of warning.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples
from tests.support.runtime_env import ADMIN, GENERATED, WRITER, mcp_json

from toolgen.runtime import (
    Actor,
    MemoryReceiptStore,
    ReceiptStore,
    Registry,
    SqliteReceiptStore,
    StaticCredentials,
)
from toolgen.runtime.serving.mcp_http import TokenFileError, load_token_file, token_sha256
from toolgen.runtime.stores.previews import (
    MAX_PREVIEW_BYTES_PER_ACTOR,
    MAX_PREVIEWS_PER_ACTOR,
    MemoryPreviewStore,
    SqlitePreviewStore,
    StoredPreview,
)
from toolgen.testing.tickets_server import TicketsServer

FOLLOWUP, PREVIEW = "record_ticket_followup", "preview_ticket_followup"


def _registry(server: TicketsServer, receipts: ReceiptStore) -> Registry:
    folder = GENERATED / "tickets"
    if not (folder / "policy.json").is_file():
        pytest.skip("generated/tickets is not built")
    return Registry(
        json.loads((folder / "policy.json").read_text(encoding="utf-8")),
        json.loads((folder / "mcp.json").read_text(encoding="utf-8")),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=receipts,
        cursor_key=b"k" * 32,
    )


@pytest.fixture
def store(any_receipt_store: ReceiptStore) -> ReceiptStore:
    return any_receipt_store


def _note(i: int) -> dict[str, Any]:
    return {"ticket_id": "T-102", "note": f"Flood note {i}.", "visibility": "internal"}


# 1,026 previews through the registry: on PostgreSQL that is ~10 s of round trips, so that backend runs in
# the slow suite; its eviction (the same oldest-first DELETE) stays in the fast suite through
# test_large_previews_are_bounded_in_bytes_per_actor[postgres], the byte bound's flood.
@pytest.mark.parametrize(
    "any_receipt_store",
    ["memory", "sqlite", "redis", pytest.param("postgres", marks=pytest.mark.slow)],
    indirect=True,
)
def test_previewing_many_requests_keeps_the_preview_store_bounded_per_actor(
    store: ReceiptStore, server: TicketsServer
) -> None:
    reg = _registry(server, store)
    admin_first = reg.call(PREVIEW, _note(-1), actor=ADMIN)
    assert admin_first.ok and admin_first.result is not None
    ids = []
    for i in range(MAX_PREVIEWS_PER_ACTOR + 25):
        shown = reg.call(PREVIEW, _note(i), actor=WRITER)
        assert shown.ok and shown.result is not None, shown.to_json()
        ids.append(str(shown.result["preview_id"]))
    previews, scope = reg.preview_store(), f"{reg.api}/{FOLLOWUP}"
    kept = [pid for pid in ids if previews.get(scope, WRITER.id, pid) is not None]
    assert len(kept) == MAX_PREVIEWS_PER_ACTOR, "the preview store grows without bound for one actor"
    assert kept == ids[-MAX_PREVIEWS_PER_ACTOR:], "the oldest previews go first"
    # the oldest one is gone (preview it again to execute it); the newest one executes
    gone = reg.call(FOLLOWUP, {"preview_id": ids[0], "action_id": "old"}, actor=WRITER, approval=ids[0])
    assert gone.error is not None and gone.error.code == "preview_not_found", gone.to_json()
    newest = reg.call(FOLLOWUP, {"preview_id": ids[-1], "action_id": "new"}, actor=WRITER, approval=ids[-1])
    assert newest.ok, newest.to_json()
    # one actor's flood never pushes out another actor's preview
    pid = str(admin_first.result["preview_id"])
    admin = reg.call(FOLLOWUP, {"preview_id": pid, "action_id": "admin"}, actor=ADMIN, approval=pid)
    assert admin.ok, admin.to_json()
    assert server.side_effects["addFollowup"] == 2
    reg.close()


@pytest.mark.long
def test_the_bound_is_per_actor_over_every_record_tool(store: ReceiptStore) -> None:
    """Previews spread over many record tools (hundreds on a large API, each its own scope) share
    one actor's bound: `MAX_PREVIEWS_PER_ACTOR` previews and `MAX_PREVIEW_BYTES_PER_ACTOR` bytes in
    all, the least recently stored going first whatever their scope, another actor untouched."""
    previews, now = store.previews(), time.time()  # type: ignore[attr-defined]  # every store here has one
    previews.put(StoredPreview("api/record_tool_0", "other", "sha256:theirs", "i", {"n": 0}, now, now + 900))
    stored = [(f"api/record_tool_{i % 300}", f"sha256:{i}") for i in range(MAX_PREVIEWS_PER_ACTOR + 200)]
    for i, (scope, pid) in enumerate(stored):
        previews.put(StoredPreview(scope, "flood", pid, "i", {"n": i}, now + i / 1e4, now + 900 + i / 1e4))
    kept = [(scope, pid) for scope, pid in stored if previews.get(scope, "flood", pid) is not None]
    assert kept == stored[-MAX_PREVIEWS_PER_ACTOR:], f"{len(kept)} previews kept over 300 record tools"
    assert previews.get("api/record_tool_0", "other", "sha256:theirs") is not None
    # bytes: 1 MB previews of 40 record tools hold at most the actor's byte bound together
    body = "x" * 1_000_000
    big = [(f"api/record_big_{i}", f"sha256:big{i}") for i in range(40)]
    for i, (scope, pid) in enumerate(big):
        previews.put(
            StoredPreview(scope, "flood", pid, "i", {"body": body}, now + 1 + i / 1e4, now + 901 + i / 1e4)
        )
    kept = [(scope, pid) for scope, pid in big if previews.get(scope, "flood", pid) is not None]
    assert kept and kept == big[-len(kept) :]
    assert len(kept) * len(body) <= MAX_PREVIEW_BYTES_PER_ACTOR < (len(kept) + 1) * (len(body) + 12)
    assert all(previews.get(scope, "flood", pid) is None for scope, pid in stored)  # pushed out by bytes
    assert previews.get("api/record_tool_0", "other", "sha256:theirs") is not None


def test_large_previews_are_bounded_in_bytes_per_actor(store: ReceiptStore) -> None:
    """A count bound alone is not enough where an argument has no maxLength (a GitHub comment body):
    one MCP request may carry 4 MiB, so 1,000 previews could hold 4 GB. Each actor's previews (of all
    record tools together) hold at most `MAX_PREVIEW_BYTES_PER_ACTOR` of arguments; the newest always stays."""
    folder = GENERATED / "github"
    if not (folder / "policy.json").is_file():
        pytest.skip("generated/github is not built")
    reg = Registry(
        json.loads((folder / "policy.json").read_text(encoding="utf-8")),
        json.loads((folder / "mcp.json").read_text(encoding="utf-8")),
        base_url="http://127.0.0.1:9",
        receipts=store,
        cursor_key=b"k" * 32,
    )
    writer = Actor.of("writer", ["issues:write"])
    other = Actor.of("other", ["issues:write"])
    body = "x" * 1_000_000

    def preview(i: int, actor: Actor) -> str:
        shown = reg.call(
            "preview_comment_on_issue",
            {"owner": "o", "repo": "r", "issue_number": i, "body": body},
            actor=actor,
        )
        assert shown.ok and shown.result is not None, shown.to_json()
        return str(shown.result["preview_id"])

    theirs = preview(0, other)
    mine = [preview(i, writer) for i in range(40)]
    previews, scope = reg.preview_store(), f"{reg.api}/record_comment_on_issue"
    kept = [pid for pid in mine if previews.get(scope, writer.id, pid) is not None]
    assert kept and kept == mine[-len(kept) :], "the newest previews stay, the oldest go"
    assert len(kept) * len(body) <= MAX_PREVIEW_BYTES_PER_ACTOR, f"{len(kept)} previews of 1 MB kept"
    assert previews.get(scope, other.id, theirs) is not None
    huge = "y" * (MAX_PREVIEW_BYTES_PER_ACTOR + 10)  # a single preview over the budget: stored alone
    shown = reg.call(
        "preview_comment_on_issue",
        {"owner": "o", "repo": "r", "issue_number": 99, "body": huge},
        actor=writer,
    )
    assert shown.ok and shown.result is not None
    assert previews.get(scope, writer.id, str(shown.result["preview_id"])) is not None
    assert all(previews.get(scope, writer.id, pid) is None for pid in mine)
    reg.close()


@pytest.mark.parametrize("drift", [+5000, -5000, None])
def test_sqlite_totals_changed_behind_the_store_never_hang_a_preview(
    drift: int | None, tmp_path: Path
) -> None:
    """``preview_actor_totals`` changed behind the store (a process replacing rows
    without the triggers seeing it, a hand edit): a preview still stores in bounded time, keeps the
    bound on the rows that exist, and the totals are counted again."""
    receipts = SqliteReceiptStore(tmp_path / "receipts.sqlite3")
    previews = SqlitePreviewStore(receipts._conn, receipts._lock, max_per_actor=3)
    now = time.time()
    for i in range(3):
        previews.put(StoredPreview("t/r", "a", f"sha256:{i}", "i", {}, now + i / 1000, now + 900))
    with receipts._lock:
        if drift is None:
            receipts._conn.execute("DELETE FROM preview_actor_totals")
        else:
            receipts._conn.execute(
                "UPDATE preview_actor_totals SET count = count + ?, bytes = bytes + ?", (drift, drift)
            )
    done = threading.Event()

    def put() -> None:
        previews.put(StoredPreview("t/r", "a", "sha256:new", "i", {}, now + 1, now + 900))
        done.set()

    threading.Thread(target=put, daemon=True).start()
    assert done.wait(10), "storing a preview hangs on totals that disagree with the rows"
    kept = [
        pid for pid in ("sha256:0", "sha256:1", "sha256:2", "sha256:new") if previews.get("t/r", "a", pid)
    ]
    assert kept == ["sha256:1", "sha256:2", "sha256:new"], kept
    with receipts._lock:
        assert receipts._conn.execute(
            "SELECT count FROM preview_actor_totals WHERE actor='a'"
        ).fetchone() == (3,)
    receipts.close()


def test_refreshing_one_preview_does_not_grow_the_store() -> None:
    previews = MemoryPreviewStore()
    now = time.time()
    for _ in range(5000):
        previews.put(StoredPreview("t/r", "a", "sha256:1", "i", {"n": 1}, now, now + 900))
    assert previews.size() == 1
    assert previews.get("t/r", "a", "sha256:1") is not None


def _flood(put: Any, count: int) -> float:
    """CPU seconds of this thread to put `count` previews: a purge that scans the store is CPU work, and
    unlike wall time this does not grow when other processes share the cores."""
    now = time.time()
    started = time.thread_time()
    for i in range(count):
        put(
            StoredPreview(
                "t/r", f"actor-{i % 40}", f"sha256:{i:064x}", "i", {"note": "x" * 20}, now, now + 900
            )
        )
    return time.thread_time() - started


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
def test_a_preview_costs_the_same_however_full_the_store_is(backend: str, tmp_path: Path) -> None:
    """20,000 previews by 40 actors: with a purge that scans every stored preview on every write
    this took about a minute in memory; it must stay linear."""
    if backend == "memory":
        put = MemoryPreviewStore().put
    else:
        receipts = SqliteReceiptStore(tmp_path / "p.sqlite3")  # its file, pragmas and connection
        put = receipts.previews().put
    first = _flood(put, 2000)
    rest = _flood(put, 18000)
    # linear: 9x the previews in well under 9x9 the CPU time
    assert rest < max(first * 30, 2.0), f"{backend}: 2,000 previews {first:.2f} s, then 18,000 {rest:.2f} s"


# -- the token file ----------------------------------------------------------------------------------------


def test_a_world_writable_token_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(
        f"tokens:\n  - actor: ops\n    sha256: {token_sha256('t0k3n')}\n    scopes: [admin]\n",
        encoding="utf-8",
    )
    path.chmod(0o666)
    with pytest.raises(TokenFileError) as caught:
        load_token_file(path)
    message = str(caught.value)
    assert str(path) in message and "writable by every user" in message and "chmod 600" in message
    assert "t0k3n" not in message
    path.chmod(0o600)
    verifier, warnings = load_token_file(path)
    assert verifier.lookup("t0k3n") is not None and warnings == []


# -- one preview, many keys ---------------------------------------------------------------------------------


def test_keys_racing_on_one_approved_preview_send_it_once(store: ReceiptStore, server: TicketsServer) -> None:
    """Eight records of one approved preview, each with its own key, released together: the approval
    is spent by exactly one of them; the others get ``approval_used`` and leave no receipt."""
    reg = _registry(server, store)
    shown = reg.call(PREVIEW, _note(0), actor=WRITER)
    assert shown.ok and shown.result is not None
    pid = str(shown.result["preview_id"])
    barrier = threading.Barrier(8)
    codes: dict[str, str] = {}

    def record(key: str) -> None:
        barrier.wait()
        res = reg.call(FOLLOWUP, {"preview_id": pid, "action_id": key}, actor=WRITER, approval=pid)
        codes[key] = "ok" if res.ok else str(res.error.code if res.error else "?")

    threads = [threading.Thread(target=record, args=(f"race-{i}",)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(codes.values()) == ["approval_used"] * 7 + ["ok"], codes
    assert server.side_effects["addFollowup"] == 1
    for key, code in codes.items():
        receipt = reg.receipts.get(f"{reg.api}/{FOLLOWUP}", key)
        assert (receipt is not None and receipt.state == "completed") if code == "ok" else receipt is None, (
            key
        )
    reg.close()


def test_without_approval_a_stored_preview_is_sent_once_per_key(server: TicketsServer) -> None:
    """Documented: executing a stored preview does not consume it; without an approval to spend, each
    new key sends it again (as two full-argument records with two keys would), the same key replays."""
    reg = _registry(server, MemoryReceiptStore())
    reg.specs[FOLLOWUP].row = dataclasses.replace(reg.specs[FOLLOWUP].row, approval="never")
    shown = reg.call(PREVIEW, _note(0), actor=WRITER)
    assert shown.ok and shown.result is not None
    pid = str(shown.result["preview_id"])
    results = [
        reg.call(FOLLOWUP, {"preview_id": pid, "action_id": key}, actor=WRITER) for key in ("a", "b", "a")
    ]
    assert all(r.ok for r in results), [r.to_json() for r in results]
    assert [r.replayed for r in results] == [False, False, True]
    assert server.side_effects["addFollowup"] == 2


# -- approvals over MCP ------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("field", ["approval_id", "approved_by", "preview_id"])
async def test_an_oversized_approval_in_meta_is_no_approval(
    field: str, server: TicketsServer, tmp_path: Path
) -> None:
    """An MCP client (a bearer token holder over HTTP) controls ``_meta``: an ``approval_id`` of a
    megabyte would become a receipt key kept for good, an ``approved_by`` of a megabyte would go into
    every audit event. Over 255 characters the approval is not taken: ``approval_required``, nothing
    sent, nothing stored, nothing of it audited."""
    from tests.runtime.test_runtime_identity import connect, make_registry
    from tests.support.http_serving import http_server
    from tests.support.token_files import TOKENS, write_token_file

    registry = make_registry(server)
    verifier = load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]
    huge = "A" * 1_000_000
    async with http_server(registry, verifier=verifier) as url, connect(url, TOKENS["writer"][0]) as client:
        shown = await client.call_tool(PREVIEW, _note(0))
        pid = shown.structured_content["preview_id"]
        approval = {"preview_id": pid, "approved_by": "human", "approval_id": "a-1", field: huge}
        refused = await client.call_tool(
            FOLLOWUP, {"preview_id": pid, "action_id": "k-1"}, meta={"toolgen/approval": approval}
        )
        assert refused.is_error and mcp_json(refused)["error"]["code"] == "approval_required", refused
        bare = await client.call_tool(
            FOLLOWUP, {"preview_id": pid, "action_id": "k-2"}, meta={"toolgen/approval": huge}
        )
        assert bare.is_error and mcp_json(bare)["error"]["code"] == "approval_required", bare
        fine = await client.call_tool(
            FOLLOWUP,
            {"preview_id": pid, "action_id": "k-3"},
            meta={"toolgen/approval": {"preview_id": pid, "approved_by": "B" * 255, "approval_id": 7}},
        )
        assert fine.is_error is False, fine
    assert server.side_effects["addFollowup"] == 1
    assert all(len(json.dumps(e.detail)) < 2000 for e in registry.audit.events)  # type: ignore[attr-defined]


def test_one_actor_with_two_sets_of_scopes_in_a_token_file_is_refused(tmp_path: Path) -> None:
    """Audit, receipts and stored previews know the actor id alone: a read-only token and an admin
    token both named ``ops`` would be indistinguishable there. A rotation (same scopes) is fine."""
    path = tmp_path / "tokens.yaml"
    entry = "  - actor: ops\n    sha256: {}\n    scopes: [{}]\n"
    path.write_text(
        "tokens:\n"
        + entry.format(token_sha256("old"), "ticket:read")
        + entry.format(token_sha256("new"), "ticket:read, ticket:delete"),
        encoding="utf-8",
    )
    path.chmod(0o600)
    with pytest.raises(TokenFileError) as caught:
        load_token_file(path)
    assert str(caught.value).startswith(
        f"{path}:5:12: actor 'ops' already has a token with other scopes at {path}:2:12"
    ), str(caught.value)
    path.write_text(
        "tokens:\n"
        + entry.format(token_sha256("old"), "ticket:read")
        + entry.format(token_sha256("new"), "ticket:read"),
        encoding="utf-8",
    )
    verifier, _ = load_token_file(path)
    assert verifier.lookup("old") is not None and verifier.lookup("new") is not None


# -- search_tools with hostile queries ---------------------------------------------------------------------


FTS_SYNTAX = [
    '"',
    "NEAR(",
    "NEAR/2",
    "*",
    "-",
    "^",
    ":",
    "(",
    ")",
    "{",
    "}",
    "AND",
    "OR",
    "NOT",
    "\x00",
    "+",
    "tool:",
    "description:",
    "''",
    "\\",
    "\u202e",
    "\ufeff",
    "é",
    "ß",
    "İ",
    "\U0001f600",
    " ",
]


@pytest.fixture(scope="module")
def github_search() -> Any:
    from toolgen.runtime.serving.search_tools import ToolSearch

    folder = GENERATED / "github"
    if not (folder / "policy.json").is_file():
        pytest.skip("generated/github is not built")
    return ToolSearch(Registry.from_dir(folder))


@settings(
    max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    query=st.lists(
        st.one_of(
            st.sampled_from(FTS_SYNTAX),
            st.sampled_from(["issue", "label", "repo", "pull"]),
            st.text(max_size=6),
        ),
        min_size=1,
        max_size=40,
    ).map("".join),
    scopes=st.sets(
        st.sampled_from(
            [
                "metadata:read",
                "issues:read",
                "issues:write",
                "pull_requests:read",
                "contents:write",
                "administration:write",
            ]
        )
    ),
    limit=st.integers(1, 20),
)
def test_search_tools_answers_any_query_with_visible_tools_only(
    github_search: Any, query: str, scopes: set[str], limit: int
) -> None:
    """FTS5 syntax in a query (quotes, NEAR, prefix stars, column filters, NUL, unbalanced brackets)
    is text to rank, never a query operator: the meta-tool answers, or refuses with
    ``invalid_arguments`` at ``/query`` (empty or over 500 characters); every tool returned is one
    the caller may call; at most `limit` operations."""

    actor = Actor.of("searcher", sorted(scopes))
    result = github_search.run({"query": query, "limit": limit}, actor)
    if not result.ok:
        assert result.error is not None and result.error.code == "invalid_arguments"
        assert result.error.details["pointer"] == "/query" and not 1 <= len(query) <= 500
        return
    names = [tool["name"] for tool in result.result["tools"]]
    assert ("note" in result.result) == (not result.result["hits"])  # nothing matched is said, never padded
    registry = github_search.registry
    assert all(registry.permits(name, actor) for name in names), names
    assert len({registry.specs[name].intent for name in names}) <= limit


# -- DNS rebinding on every loopback address ---------------------------------------------------------------


@pytest.mark.anyio
async def test_dns_rebinding_protection_covers_every_loopback_address(server: TicketsServer) -> None:
    """127.0.0.0/8 is loopback, not only 127.0.0.1: served on 127.0.0.2 (here without tokens, the
    case where a browser page rebinding its name to 127.0.0.2 would otherwise call the tools), a
    request naming another Host or Origin is refused before any handler runs."""
    import httpx
    from tests.runtime.test_runtime_identity import make_registry
    from tests.support.http_serving import http_server

    registry = make_registry(server)
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    async with (
        http_server(registry, actor=Actor.of("local", ["ticket:read"]), host="127.0.0.2") as url,
        httpx.AsyncClient(timeout=10) as client,
    ):
        rebound = await client.post(url, json=listing, headers={**headers, "Host": "attacker.example"})
        assert rebound.status_code == 421, rebound.text
        foreign = await client.post(
            url, json=listing, headers={**headers, "Origin": "http://attacker.example"}
        )
        assert foreign.status_code == 403, foreign.text
        own = await client.post(url, json=listing, headers=headers)
        assert own.status_code == 200 and "get_ticket" in own.text, own.text
    assert [e for e in registry.audit.events if e.actor == "local"] == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.1", False),
        ("example.test", False),
    ],
)
def test_serve_warns_about_clear_text_tokens_beyond_loopback_only(host: str, loopback: bool) -> None:
    from toolgen.runtime.serving.mcp_http import is_loopback

    assert is_loopback(host) is loopback
