"""Start-up warnings of `toolgen call` / `toolgen serve` (missing secrets, a base URL taken from the
spec's example servers) and what `upstream_unavailable` says: the URL (scrubbed) and the cause."""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from tests.support.runtime_env import tickets_dir

from toolgen.cli.call import placeholder_base_url, startup_warnings
from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.errors import failure_cause, scrub_url

READER = Actor.of("t", ["ticket:read"])


def _registry(base_url: str | None = None) -> Registry:
    return Registry.from_dir(
        tickets_dir(),
        base_url=base_url,
        receipts=MemoryReceiptStore(),
        credentials=StaticCredentials({"TICKETS_TOKEN": "t0k"}),
        cursor_key=b"k" * 32,
    )


@pytest.mark.parametrize(
    ("url", "placeholder"),
    [
        ("https://api.example.com/v1", True),
        ("https://example.org", True),
        ("http://localhost:8080", True),
        ("http://127.0.0.1:8765/v1", True),
        ("https://{tenant}.acme.io/api", True),
        ("/v1", True),
        ("", True),
        ("https://api.widgets.test", True),
        ("https://api.github.com", False),
        ("https://api.stripe.com", False),
    ],
)
def test_placeholder_base_urls(url: str, placeholder: bool) -> None:
    assert (placeholder_base_url(url) is not None) is placeholder


def test_startup_warnings_name_missing_secrets_and_example_servers() -> None:
    with _registry() as reg:
        warnings = startup_warnings(reg, base_url_given=False, environ={})
        assert len(warnings) == 2
        assert "TICKETS_TOKEN is not set" in warnings[0] and "get_ticket" in warnings[0]
        assert "missing_credential" in warnings[0]
        assert "http://127.0.0.1:8765/v1" in warnings[1] and "--base-url" in warnings[1]
        only = startup_warnings(reg, base_url_given=True, tools=["get_ticket"], environ={})
        assert only == [w for w in only if "get_ticket will answer" in w] and len(only) == 1
        assert startup_warnings(reg, base_url_given=True, environ={"TICKETS_TOKEN": "x" * 8}) == []
        [short] = startup_warnings(reg, base_url_given=True, environ={"TICKETS_TOKEN": "x"})
        assert "TICKETS_TOKEN is 1 character long" in short


def test_call_warns_on_stderr(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgen",
            "call",
            str(tickets_dir()),
            "get_ticket",
            "--args",
            '{"ticket_id": "T-100"}',
            "--scopes",
            "ticket:read",
            "--receipts",
            "memory://",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if k != "TICKETS_TOKEN"},
    )
    assert proc.returncode == 1
    assert "toolgen call: warning: the secret TICKETS_TOKEN is not set" in proc.stderr
    assert "toolgen call: warning: calling http://127.0.0.1:8765/v1" in proc.stderr
    assert '"code": "missing_credential"' in proc.stdout


def test_upstream_unavailable_names_the_url_and_the_cause() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with _registry(f"http://127.0.0.1:{port}/v1") as reg:
        res = reg.call("get_ticket", {"ticket_id": "T-100"}, actor=READER)
    assert res.error is not None and res.error.code == "upstream_unavailable"
    assert f"http://127.0.0.1:{port}/v1/tickets/T-100" in res.error.message
    assert "connection refused" in res.error.message
    assert res.error.details["url"] == f"http://127.0.0.1:{port}/v1/tickets/T-100"
    assert res.error.details["cause"].startswith("connection refused")
    with _registry("http://no-such-host.invalid/v1") as reg:
        res = reg.call("get_ticket", {"ticket_id": "T-100"}, actor=READER)
    assert res.error is not None and "DNS lookup failed" in res.error.message


def test_scrub_url_and_failure_causes() -> None:
    assert scrub_url("https://u:p@api.acme.io:8443/v1/x?api_key=s3cret#f") == "https://api.acme.io:8443/v1/x"
    assert scrub_url("http://[::1]:80/") == "http://[::1]:80/"
    tls = httpx.ConnectError("boom")
    tls.__cause__ = ssl.SSLCertVerificationError(1, "certificate verify failed")
    assert failure_cause(tls).startswith("TLS handshake failed")
    dns = httpx.ConnectError("x")
    dns.__cause__ = socket.gaierror(-2, "Name or service not known")
    assert failure_cause(dns).startswith("DNS lookup failed")
    assert failure_cause(httpx.ConnectTimeout("t")) == "connect timed out"
    assert failure_cause(RuntimeError("?")) == "connection failed (RuntimeError)"
