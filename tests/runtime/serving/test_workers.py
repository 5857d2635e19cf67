"""`toolgen serve --http --workers N`: several real worker processes behind one address.

Each case starts the real CLI (a supervisor and its forked workers) over a shared SQLite receipt
file (or PostgreSQL database), drives it with the official MCP client, and asserts what the upstream tickets API saw: one
write per idempotency key however many workers race for it, cursors issued by one worker accepted
by the others, a killed worker replaced without losing a receipt, and a clean stop.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.runtime.test_runtime_identity import connect, serve_process, served_url
from tests.support.token_files import TOKENS, write_token_file

from toolgen.runtime.serving.workers import supervise
from toolgen.testing.tickets_server import TicketsServer

pytestmark = pytest.mark.anyio

PREVIEW, FOLLOWUP = "preview_ticket_followup", "record_ticket_followup"
NOTE = {"ticket_id": "T-102", "note": "Called back.", "visibility": "internal"}


def children(pid: int) -> set[int]:
    """The live (not yet reaped zombies excluded) child processes of `pid` (Linux /proc)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    if not path.exists():
        pytest.skip("no /proc children listing on this system")
    live = set()
    for child in path.read_text().split():
        try:
            state = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            live.add(int(child))
    return live


def wait_for_children(pid: int, count: int, timeout: float = 20.0, without: int | None = None) -> set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = children(pid)
        if len(found) == count and without not in found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{pid} has children {children(pid)}, not {count}")


async def stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = await anyio.to_thread.run_sync(partial(proc.communicate, timeout=60))
    return str(err)


def start(tmp_path: Path, server: TicketsServer, *extra: str) -> subprocess.Popen[str]:
    tokens = write_token_file(tmp_path / "tokens.yaml")
    return serve_process(
        tmp_path, server, "--http", "127.0.0.1:0", "--tokens", str(tokens), "--approvals", "client", *extra
    )


# against a real PostgreSQL: the slow suite (`-m slow`, a step of its own in .ci/run); SQLite stays fast
@pytest.mark.long
@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
async def test_one_write_per_key_however_many_workers_race_for_it(
    server: TicketsServer, tmp_path: Path, store: str, request: pytest.FixtureRequest
) -> None:
    pytest.importorskip("mcp")
    receipts: tuple[str, ...] = ()
    if store == "postgres":
        url = request.getfixturevalue("postgres_url")
        receipts = ("--receipts", f"{url}?table_prefix=w{uuid.uuid4().hex[:10]}_")
    proc = start(tmp_path, server, "--workers", "3", *receipts)
    try:
        url, printed = await served_url(proc)
        assert "3 workers" in printed[-1]
        assert len(wait_for_children(proc.pid, 3)) == 3
        async with connect(url, TOKENS["writer"][0]) as client:
            pid = (await client.call_tool(PREVIEW, NOTE)).structured_content["preview_id"]
        results: list[Any] = []

        async def record(i: int) -> None:
            async with connect(url, TOKENS["writer"][0]) as own:  # a connection of its own: any worker
                results.append(
                    await own.call_tool(
                        FOLLOWUP, {"preview_id": pid, "action_id": "race-1"}, meta={"toolgen/approval": pid}
                    )
                )

        async with anyio.create_task_group() as tg:
            for i in range(12):
                tg.start_soon(record, i)
        assert server.side_effects["addFollowup"] == 1, "one key wrote more than once across workers"
        ok = [r for r in results if not r.is_error]
        assert ok, [r.content[0].text for r in results]
        firsts = {json.dumps(r.structured_content, sort_keys=True) for r in ok}
        assert len(firsts) == 1, firsts  # every success is the one write or its replay
        for r in results:
            if r.is_error:
                assert json.loads(r.content[0].text)["error"]["code"] == "idempotency_in_progress", r
    finally:
        err = await stop(proc) if proc.poll() is None else ""
    assert proc.returncode == 0, err
    assert not children(os.getpid()) & {proc.pid}


@pytest.mark.long
async def test_cursors_from_one_worker_are_accepted_by_every_other(
    server: TicketsServer, tmp_path: Path
) -> None:
    pytest.importorskip("mcp")
    proc = start(tmp_path, server, "--workers", "2")
    try:
        url, _ = await served_url(proc)
        wait_for_children(proc.pid, 2)
        for _ in range(3):  # new connections land on either worker
            async with connect(url, TOKENS["reader"][0]) as first:
                page = await first.call_tool("list_tickets", {"page_size": 1})
                assert not page.is_error, page
                cursor = page.structured_content["next_cursor"]
            assert cursor
            async with connect(url, TOKENS["reader"][0]) as second:
                nxt = await second.call_tool("list_tickets", {"page_size": 1, "cursor": cursor})
                assert not nxt.is_error, nxt.content[0].text
    finally:
        err = await stop(proc) if proc.poll() is None else ""
    assert proc.returncode == 0, err


@pytest.mark.long
async def test_a_killed_worker_is_replaced_and_no_receipt_is_lost(
    server: TicketsServer, tmp_path: Path
) -> None:
    pytest.importorskip("mcp")
    proc = start(tmp_path, server, "--workers", "2")
    try:
        url, _ = await served_url(proc)
        before = wait_for_children(proc.pid, 2)
        async with connect(url, TOKENS["writer"][0]) as client:
            pid = (await client.call_tool(PREVIEW, NOTE)).structured_content["preview_id"]
            first = await client.call_tool(
                FOLLOWUP, {"preview_id": pid, "action_id": "kill-1"}, meta={"toolgen/approval": pid}
            )
            assert not first.is_error, first
        victim = min(before)
        os.kill(victim, signal.SIGKILL)
        after = wait_for_children(proc.pid, 2, without=victim)
        assert victim not in after
        for _ in range(4):  # whichever worker answers, the receipt replays and nothing is sent again
            async with connect(url, TOKENS["writer"][0]) as client:
                again = await client.call_tool(
                    FOLLOWUP, {"preview_id": pid, "action_id": "kill-1"}, meta={"toolgen/approval": pid}
                )
                assert not again.is_error and again.structured_content == first.structured_content
        assert server.side_effects["addFollowup"] == 1
    finally:
        err = await stop(proc) if proc.poll() is None else ""
    assert proc.returncode == 0, err
    assert "died (signal 9); starting another" in err


def test_workers_need_a_shared_receipt_store(server: TicketsServer, tmp_path: Path) -> None:
    tokens = write_token_file(tmp_path / "tokens.yaml")
    for extra, message in (
        (("--receipts", "memory://", "--workers", "2"), "not memory://"),
        (("--workers", "0"), "at least 1"),
    ):
        env = dict(os.environ, TICKETS_TOKEN=server.token)
        from tests.runtime.test_runtime_identity import TOOLGEN
        from tests.support.runtime_env import tickets_dir

        done = subprocess.run(
            [
                TOOLGEN,
                "serve",
                str(tickets_dir()),
                "--base-url",
                server.base_url,
                "--http",
                "127.0.0.1:0",
                "--tokens",
                str(tokens),
                *extra,
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2 and message in done.stderr, done.stderr


def test_supervisor_gives_up_on_a_worker_that_keeps_dying() -> None:
    lines: list[str] = []
    started = time.monotonic()
    code = supervise(2, lambda: 3, log=lines.append, max_restarts=4, window_s=60, grace_s=1)
    assert code == 1
    assert time.monotonic() - started < 30
    assert sum("starting another" in line for line in lines) == 4
    assert "stopping the service" in lines[-1] and "exit code 3" in lines[-1]
