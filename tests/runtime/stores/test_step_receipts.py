"""Every write step of a composite holds a receipt, also when its operation takes no idempotency key
(docs/composites.md, "Step receipts"), so a resumed record never writes a step twice.

A composite of two writes whose operations' tool intents declare no idempotency (the API takes no
key and does not deduplicate; before, such a step held no receipt at all), built from a spec and an intent map written here, runs against a real
loopback API that counts the requests it receives (`FaultServer`, ``honours_keys=False``), with
the receipts in each real store (memory, a SQLite file, the session's Redis and PostgreSQL
servers). After a 400 in the later step, a timeout or a 500, calling the record tool again with the
same approval and key replays the step that was done, reports the step whose outcome is unknown as
``result_unknown`` without sending it, and sends only the step the API refused. A stateful property
drives resume sequences over scripted answers and checks that no step may have written twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from tests.support.build import build
from tests.support.fault_server import Fault, FaultServer
from tests.support.profiles import examples

from toolgen.runtime import Actor, Approval, CallResult, MemoryReceiptStore, Registry
from toolgen.runtime.stores import ReceiptStore

WRITER = Actor.of("writer-bot", ["things:write"])
STEPS = ("a", "b")

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Things", "version": "1"},
    "servers": [{"url": "https://things.example.com"}],
    "paths": {
        f"/{step}": {
            "post": {
                "operationId": f"create{step.upper()}",
                "summary": f"Create one {step}.",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["name"],
                                "additionalProperties": False,
                                "properties": {"name": {"type": "string", "maxLength": 40}},
                            }
                        }
                    },
                },
                "responses": {
                    "201": {
                        "description": "Created.",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"id": {"type": "string"}}}
                            }
                        },
                    },
                    "400": {"description": "Refused."},
                },
            }
        }
        for step in STEPS
    },
}

INTENT = """\
tools:
  create_a: {operation: createA, effect: write, permission: "things:write", approval: required}
  create_b: {operation: createB, effect: write, permission: "things:write", approval: required}
composites:
  two_things:
    pattern: pipeline
    description: Create an a and then a b of the same name; use it when both must exist.
    permission: things:write
    steps:
      - id: a
        operation: createA
        args:
          name: $input/name
      - id: b
        operation: createB
        args:
          name: $input/name
    output:
      a: $a
      b: $b
"""


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built package of the two-write composite (steps without an idempotency intent)."""
    tmp = tmp_path_factory.mktemp("step-receipts")
    spec = tmp / "things.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    built = build(tmp, spec, INTENT, name="things", emit="mcp,policy")
    steps = built.row("record_two_things")["composite"]["steps"]
    assert [s["row"]["idempotency"] for s in steps] == [None, None]  # the case under test: no key at the API
    return built.out


@pytest.fixture
def api() -> Iterator[FaultServer]:
    with FaultServer(honours_keys=False) as server:
        for step in STEPS:
            server.route("POST", f"^/{step}$", 201, {"id": f"{step}-1"})
        yield server


def _registry(package: Path, api: FaultServer, receipts: ReceiptStore) -> Registry:
    return Registry.from_dir(package, base_url=api.base_url, receipts=receipts)


def _approved(reg: Registry) -> tuple[str, Approval]:
    shown = reg.call("preview_two_things", {"name": "n"}, actor=WRITER)
    assert shown.ok and shown.result is not None, shown.to_json()
    preview_id = str(shown.result["preview_id"])
    return preview_id, Approval(preview_id, approved_by="a human")


def _record(reg: Registry, preview_id: str, approval: Approval, key: str = "k-1") -> CallResult:
    return reg.call(
        "record_two_things",
        {"preview_id": preview_id, "action_id": key},
        actor=WRITER,
        approval=approval,
        timeout_ms=1000,
    )


def _sent(api: FaultServer) -> dict[str, int]:
    api.wait_idle()
    return {step: len(api.requests_for(method="POST", path_regex=f"^/{step}$")) for step in STEPS}


def _states(result: CallResult) -> dict[str, str]:
    assert result.error is not None, result.to_json()
    return {s["id"]: s["state"] for s in result.error.details["steps"]}


def test_a_400_in_the_later_step_resumes_without_sending_the_done_step(
    package: Path, api: FaultServer, any_receipt_store: ReceiptStore
) -> None:
    reg = _registry(package, api, any_receipt_store)
    preview_id, approval = _approved(reg)
    api.script("POST", "^/b$", Fault.answer(400, {"error": "name taken"}))
    first = _record(reg, preview_id, approval)
    assert _states(first) == {"a": "done", "b": "failed"} and _sent(api) == {"a": 1, "b": 1}
    again = _record(reg, preview_id, approval)
    assert again.ok, again.to_json()
    assert [(s["id"], s.get("replayed", False)) for s in again.result["steps"]] == [("a", True), ("b", False)]  # type: ignore[index]
    assert _sent(api) == {"a": 1, "b": 2}  # b was refused (nothing written), so only b is sent again
    assert _record(reg, preview_id, approval).replayed and _sent(api) == {"a": 1, "b": 2}
    reg.close()


@pytest.mark.parametrize("fault", ["timeout", "500"])
def test_a_step_whose_outcome_is_unknown_is_never_sent_again(
    package: Path, api: FaultServer, any_receipt_store: ReceiptStore, fault: str
) -> None:
    reg = _registry(package, api, any_receipt_store)
    preview_id, approval = _approved(reg)
    api.script(
        "POST",
        "^/a$",
        Fault.hang(1.5) if fault == "timeout" else Fault.answer(500, {"error": "boom"}, write=True),
    )
    first = _record(reg, preview_id, approval)
    assert _states(first) == {"a": "result_unknown", "b": "not_run"}, first.to_json()
    assert first.error is not None and first.error.result_known is False
    for _ in range(2):
        again = _record(reg, preview_id, approval)
        assert again.error is not None and again.error.code == "result_unknown", again.to_json()
        assert _states(again)["a"] == "result_unknown"
    assert _sent(api) == {"a": 1, "b": 0}  # the write of a happened once; it is never sent again
    reg.close()


def test_a_timeout_in_the_later_step_keeps_both_steps_at_one_write(
    package: Path, api: FaultServer, any_receipt_store: ReceiptStore
) -> None:
    reg = _registry(package, api, any_receipt_store)
    preview_id, approval = _approved(reg)
    api.script("POST", "^/b$", Fault.hang(1.5))
    assert _states(_record(reg, preview_id, approval)) == {"a": "done", "b": "result_unknown"}
    again = _record(reg, preview_id, approval)
    assert _states(again) == {"a": "done", "b": "result_unknown"}
    assert _sent(api) == {"a": 1, "b": 1}
    reg.close()


def test_the_step_receipt_is_stored_under_the_step_key(package: Path, api: FaultServer) -> None:
    store = MemoryReceiptStore()
    reg = _registry(package, api, store)
    preview_id, approval = _approved(reg)
    done = _record(reg, preview_id, approval)
    assert done.ok, done.to_json()
    for step in done.result["steps"]:  # type: ignore[index]
        receipt = store.get(f"things/record_two_things.{step['id']}", step["idempotency_key"])
        assert receipt is not None and receipt.state == "completed", step
        assert step["idempotency_key"].startswith("tgs-")
    assert all(r.header("Idempotency-Key") is None for r in api.requests)  # receipt-only: never sent
    reg.close()


ANSWERS = st.sampled_from(["ok", "400", "500", "timeout"])


class ResumeMachine(RuleBasedStateMachine):
    """Resume sequences of one approved record: each call's step answers are scripted; whatever the
    sequence, each step may have written at most once (requests answered other than 4xx)."""

    def __init__(self) -> None:
        super().__init__()
        self.api = FaultServer(honours_keys=False)
        self.api.__enter__()
        self.reg: Registry | None = None

    @initialize()
    def start(self) -> None:
        for step in STEPS:
            self.api.route("POST", f"^/{step}$", 201, {"id": f"{step}-1"})
        self.reg = _registry(PACKAGE[0], self.api, MemoryReceiptStore())
        self.preview_id, self.approval = _approved(self.reg)

    @rule(a=ANSWERS, b=ANSWERS)
    def resume(self, a: str, b: str) -> None:
        assert self.reg is not None
        self.api.wait_idle()
        self.api.clear_scripts()
        for step, answer in (("a", a), ("b", b)):
            if answer == "400":
                self.api.script("POST", f"^/{step}$", Fault.answer(400, {"error": "refused"}))
            elif answer == "500":
                self.api.script("POST", f"^/{step}$", Fault.answer(500, {"error": "boom"}, write=True))
            elif answer == "timeout":
                self.api.script("POST", f"^/{step}$", Fault.hang(1.3))
        result = _record(self.reg, self.preview_id, self.approval)
        assert result.ok or result.error is not None

    @invariant()
    def each_step_may_have_written_at_most_once(self) -> None:
        self.api.wait_idle()
        for step in STEPS:
            writes = [
                r
                for r in self.api.requests_for(method="POST", path_regex=f"^/{step}$")
                if r.answered is None or not 400 <= r.answered < 500
            ]
            assert len(writes) <= 1, (step, [(r.seq, r.answered) for r in writes])

    def teardown(self) -> None:
        if self.reg is not None:
            self.reg.close()
        self.api.__exit__(None, None, None)


PACKAGE: list[Path] = []


@pytest.mark.long
def test_resume_sequences_write_each_step_at_most_once(package: Path) -> None:
    PACKAGE[:] = [package]
    machine = ResumeMachine.TestCase
    machine.settings = settings(
        max_examples=examples(40),
        stateful_step_count=5,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    machine().runTest()
