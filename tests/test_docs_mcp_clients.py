"""The MCP client examples of the docs run as written: each script of docs/examples/ is started as
a real process against a real `toolgen serve tickets` (stdio, the process the script starts) and the
example tickets API on loopback, and must end having written exactly what a human approved."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolgen.testing.tickets_server import TicketsServer

pytest.importorskip("mcp")
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"


@pytest.fixture
def tickets() -> Iterator[TicketsServer]:
    with TicketsServer() as srv:
        yield srv


def _run(script: str, server: TicketsServer, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "TICKETS_TOKEN": server.token,
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT / "generator"), os.environ.get("PYTHONPATH")) if p
        ),
    }
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--base-url", server.base_url, *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.long
def test_the_elicit_client_shows_the_exact_request_and_writes_once_when_approved(
    tickets: TicketsServer,
) -> None:
    done = _run("mcp_client_elicit.py", tickets, stdin="y\n")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "POST " in done.stdout and "/tickets/T-102/followups" in done.stdout  # the exact request, shown
    assert "Customer called back; issue resolved." in done.stdout and tickets.token not in done.stdout
    assert "written:" in done.stdout
    assert tickets.side_effects["addFollowup"] == 1


@pytest.mark.long
def test_the_elicit_client_writes_nothing_when_declined(tickets: TicketsServer) -> None:
    done = _run("mcp_client_elicit.py", tickets, stdin="n\n")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "not written: approval_required" in done.stdout
    assert tickets.side_effects["addFollowup"] == 0


@pytest.mark.long
def test_a_plain_client_session_gets_approval_required_then_writes_with_an_issued_approval(
    tickets: TicketsServer,
) -> None:
    done = _run("mcp_client_session.py", tickets)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "protocol: 2025-11-25" in done.stdout  # the initialize handshake: no approval asked in the call
    assert "without an approval: approval_required" in done.stdout and "toolgen approve" in done.stdout
    assert "written:" in done.stdout
    assert tickets.side_effects["addFollowup"] == 1
