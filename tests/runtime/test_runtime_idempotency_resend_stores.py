"""A record whose outcome the API left unknown re-sends the same request, its body key included,
over every receipt store (memory, SQLite, and real Redis and PostgreSQL servers on loopback).

The Square slice (tests/fixtures/idempotency/square.yaml) keeps CreatePayment's key in the request
body (``send_as: body:idempotency_key``); a fault-injecting loopback API performs the write and then
loses its answer (a hang past the tool's timeout, a 500, a dropped connection). The record called
again with the same key sends byte for byte the request it sent first; one approval never sends a
second key, and a second key never rides on the first approval.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from tests.support.build import REPO, run
from tests.support.fault_server import Fault, FaultServer

from toolgen.runtime import (
    Actor,
    Approval,
    MemoryReceiptStore,
    ReceiptStore,
    Registry,
    StaticCredentials,
    receipts_from_url,
)

SQUARE = REPO / "tests" / "fixtures" / "idempotency" / "square.yaml"
PAYER = Actor.of("payer", ["PAYMENTS_WRITE"])
PAYMENT = {"source_id": "cnon:ok", "amount_money": {"amount": 100, "currency": "USD"}, "note": "tea"}
MAP = """toolgen: 1
spec: square.yaml
api: {name: square}
auth:
  oauth2: {secret: SQUARE_TOKEN}
tools:
  create_payment:
    operation: CreatePayment
    effect: write
    permission: PAYMENTS_WRITE
    approval: required
    timeout_ms: 400
    retry: {max_attempts: 1}
    idempotency: {key: action_id, send_as: "body:idempotency_key", honoured_by_api: true}
    description: Charge a card once. Not for refunds.
"""


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("square")
    (folder / "square.yaml").write_text(SQUARE.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "map.yaml").write_text(MAP, encoding="utf-8")
    built = run("build", str(folder / "map.yaml"), "--out", str(folder / "out"), "-q")
    assert built.exit_code == 0, built.output
    return folder / "out"


@pytest.fixture(params=["memory", "sqlite", "redis", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ReceiptStore:
    if request.param == "memory":
        return MemoryReceiptStore()
    if request.param == "sqlite":
        return receipts_from_url(str(tmp_path / "receipts.sqlite3"))
    if request.param == "redis":
        return receipts_from_url(f"{request.getfixturevalue('redis_url')}?prefix=t-{uuid.uuid4().hex[:10]}:")
    return receipts_from_url(
        f"{request.getfixturevalue('postgres_url')}?table_prefix=t{uuid.uuid4().hex[:12]}_"
    )


@pytest.mark.parametrize(
    "fault",
    [Fault.hang(1.5, write=True), Fault.answer(500, {"errors": []}, write=True), Fault.drop(write=True)],
    ids=["timeout", "500", "reset"],
)
def test_an_unknown_outcome_resends_the_same_body_key_over_every_store(
    out: Path, store: ReceiptStore, fault: Fault
) -> None:
    with FaultServer(honours_keys=False) as api:
        api.route("POST", r"^/v2/payments$", 200, {"payment": {"id": "pay-1", "status": "COMPLETED"}})
        api.script("POST", r"^/v2/payments$", fault)
        registry = Registry.from_dir(
            out, base_url=api.base_url, credentials=StaticCredentials({"SQUARE_TOKEN": "sq"}), receipts=store
        )
        shown = registry.call("preview_create_payment", PAYMENT, actor=PAYER)
        assert shown.ok and isinstance(shown.result, dict), shown.error
        pid = shown.result["preview_id"]
        first = registry.call(
            "record_create_payment",
            {"preview_id": pid, "action_id": "pay-once"},
            actor=PAYER,
            approval=Approval(pid),
        )
        assert first.error is not None and first.error.code == "result_unknown", first
        other = registry.call(
            "record_create_payment",
            {"preview_id": pid, "action_id": "pay-twice"},
            actor=PAYER,
            approval=Approval(pid),
        )
        assert other.error is not None and other.error.code == "approval_used", other
        again = registry.call(
            "record_create_payment",
            {"preview_id": pid, "action_id": "pay-once"},
            actor=PAYER,
            approval=Approval(pid),
        )
        assert again.ok, again.error
        sent = [r for r in api.requests if r.method == "POST"]
        assert len(sent) == 2 and sent[0].body == sent[1].body
        assert sent[0].json() == {**PAYMENT, "idempotency_key": "pay-once"}
        assert [r.header("Content-Type") for r in sent] == ["application/json"] * 2
