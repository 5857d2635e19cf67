"""Square's two writes with a body idempotency key, preview -> approve -> record, against Stoplight
Prism serving the Square slice (tests/fixtures/idempotency/square.yaml): Prism validates every
request against the spec, so CreatePayment (whose body requires `idempotency_key`) is accepted only
with the key in the body. Slow (Prism is a Node process that loads the spec); skipped where Prism is
not installed (`benchmarks/corpus.py --install-prism`, or env ``TOOLGEN_PRISM``). An outcome left
unknown (a proxy forwards the payment to Prism, then answers 500) is re-sent with the same key."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.build import REPO, run

from toolgen.runtime import Actor, Approval, MemoryReceiptStore, Registry, StaticCredentials

SQUARE = REPO / "tests" / "fixtures" / "idempotency" / "square.yaml"
PAYER = Actor.of("payer", ["PAYMENTS_WRITE", "CUSTOMERS_WRITE"])
CACHE = Path(os.environ.get("TOOLGEN_CORPUS_CACHE", Path.home() / ".cache" / "toolgen-corpus"))
PRISM = (
    os.environ.get("TOOLGEN_PRISM") or shutil.which("prism") or str(CACHE / "node_modules" / ".bin" / "prism")
)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path(PRISM).exists(), reason="Prism is not installed")]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def prism(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("prism") / "prism.log"
    port = _free_port()
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            [PRISM, "mock", str(SQUARE), "-p", str(port), "-h", "127.0.0.1"],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 120
        while "Prism is listening" not in log.read_text(encoding="utf-8", errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text(encoding="utf-8")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("square")
    (folder / "square.yaml").write_text(SQUARE.read_text(encoding="utf-8"), encoding="utf-8")
    assert (
        run(
            "init",
            str(folder / "square.yaml"),
            "--out",
            str(folder / "map.yaml"),
            "--name",
            "square",
            "--no-project",
        ).exit_code
        == 0
    )
    built = run("build", str(folder / "map.yaml"), "--out", str(folder / "out"), "-q")
    assert built.exit_code == 0, built.output
    return folder / "out"


def test_prism_refuses_a_payment_without_the_key(prism: str) -> None:
    """The judge is strict: CreatePayment's body requires idempotency_key."""
    answer = httpx.post(
        prism + "/v2/payments", json={"source_id": "cnon:ok"}, headers={"Authorization": "Bearer sq-t"}
    )
    assert answer.status_code == 422, answer.text


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        (
            "create_payment",
            {"source_id": "cnon:card-nonce-ok", "amount_money": {"amount": 100, "currency": "USD"}},
        ),
        ("create_customer", {"given_name": "Ada", "email_address": "ada@example.com"}),
    ],
)
def test_preview_approve_record_against_prism(
    prism: str, package: Path, tool: str, args: dict[str, Any]
) -> None:
    registry = Registry.from_dir(
        package,
        base_url=prism,
        credentials=StaticCredentials({"SQUARE_TOKEN": "sq-t"}),
        receipts=MemoryReceiptStore(),
    )
    shown = registry.call("preview_" + tool, args, actor=PAYER)
    assert shown.ok and isinstance(shown.result, dict), shown.error
    key = "prism-" + tool
    done = registry.call(
        "record_" + tool,
        {"preview_id": shown.result["preview_id"], "action_id": key},
        actor=PAYER,
        approval=Approval(shown.result["preview_id"]),
    )
    assert done.ok, done.error  # Prism validated the request against the spec and answered 200
    assert done.request is not None and done.request["body"] == {**args, "idempotency_key": key}
    again = registry.call(
        "record_" + tool,
        {"preview_id": shown.result["preview_id"], "action_id": key},
        actor=PAYER,
        approval=Approval(shown.result["preview_id"]),
    )
    assert again.ok and again.replayed  # the same key: replayed from the receipt, not sent twice


class _LosingProxy(ThreadingHTTPServer):
    """Forwards every request to Prism and records what Prism answered; the first answer to a POST
    is replaced by a 500 (the API took the request, its answer was lost): an unknown outcome."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _Forward)
        self.upstream = upstream
        self.seen: list[tuple[int, Any]] = []  # (Prism's status, the JSON body forwarded)
        self.lost = False


class _Forward(BaseHTTPRequestHandler):
    server: _LosingProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        answer = httpx.post(self.server.upstream + self.path, content=raw, headers=headers)
        self.server.seen.append((answer.status_code, json.loads(raw)))
        status, body = answer.status_code, answer.content
        if not self.server.lost:
            self.server.lost = True
            status, body = 500, b'{"errors": [{"category": "API_ERROR", "code": "INTERNAL_SERVER_ERROR"}]}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_an_unknown_outcome_is_resent_to_prism_with_the_same_key(prism: str, package: Path) -> None:
    proxy = _LosingProxy(prism)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{proxy.server_address[1]}"
        registry = Registry.from_dir(
            package,
            base_url=base,
            credentials=StaticCredentials({"SQUARE_TOKEN": "sq-t"}),
            receipts=MemoryReceiptStore(),
        )
        args = {"source_id": "cnon:card-nonce-ok", "amount_money": {"amount": 100, "currency": "USD"}}
        shown = registry.call("preview_create_payment", args, actor=PAYER)
        assert shown.ok and isinstance(shown.result, dict), shown.error
        call = {"preview_id": shown.result["preview_id"], "action_id": "prism-unknown"}
        first = registry.call(
            "record_create_payment", call, actor=PAYER, approval=Approval(shown.result["preview_id"])
        )
        assert first.error is not None and first.error.code == "result_unknown", first
        again = registry.call(
            "record_create_payment", call, actor=PAYER, approval=Approval(shown.result["preview_id"])
        )
        assert again.ok, again.error
        assert [status for status, _ in proxy.seen] == [200, 200]  # Prism accepted both requests
        assert [body for _, body in proxy.seen] == [{**args, "idempotency_key": "prism-unknown"}] * 2
    finally:
        proxy.shutdown()
        proxy.server_close()
