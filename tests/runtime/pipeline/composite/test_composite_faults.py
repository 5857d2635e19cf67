"""Composite tools at run time under faults (docs/composites.md "The runtime"), over real loopback
servers: faults between the steps of the writing pipeline on the fault-injecting API (a fault on the
second write reported step by step, a failed read before any write, a receipt store failing, a stale
preview, concurrent records with one key, random faults and replays writing each step key at most
once), a cancelled record, a write that can no longer be built, and an aggregate step that answers
without its member or fails while it is prepared. The other composite calls are in
`test_composite_calls.py`.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.composite_calls import composite_registry, preview_notes, step_key_of
from tests.support.composites import composite_package
from tests.support.fault_server import Fault, FaultServer
from tests.support.profiles import examples
from tests.support.runtime_env import READER, WRITER, error_code

from toolgen.runtime import Approval, MemoryReceiptStore, Registry
from toolgen.testing.tickets_server import TicketsServer

# -- faults between steps, on the fault-injecting API ----------------------------------------------------


def _ticket(request: Any, n: int) -> dict[str, Any]:
    return {"id": "T-1", "subject": "s", "status": "open", "priority": "low", "followup_count": 0}


def _followup(request: Any, n: int) -> dict[str, Any]:
    return {
        "id": f"F-{n}",
        "ticket_id": "T-1",
        "visibility": "internal",
        "created_at": "2025-03-01T12:00:00Z",
    }


def _fault_api(fault: FaultServer) -> None:
    fault.route("GET", r"^/v1/tickets/T-1$", 200, _ticket)
    fault.route("POST", r"^/v1/tickets/T-1/followups$", 201, _followup)


#: a step's timeout where the test is not about timeouts: long enough for a loopback answer on a
#: loaded machine (400 ms was not: the step of a test about approvals timed out instead)
STEP_TIMEOUT_MS = 3000


def _fault_registry(
    fault: FaultServer,
    *,
    honoured: bool = False,
    step_timeout_ms: int = STEP_TIMEOUT_MS,
    receipts: Any = None,
) -> Registry:
    policy, catalog = composite_package()
    for row in policy["tools"]:
        for step in (row.get("composite") or {}).get("steps", []):
            step["row"]["timeout_ms"] = step_timeout_ms
            step["row"]["retry"]["max_attempts"] = 1
            if step["row"].get("idempotency"):
                step["row"]["idempotency"]["honoured_by_api"] = honoured
    return composite_registry(
        policy,
        catalog,
        fault.base_url + "/v1",
        receipts=receipts if receipts is not None else MemoryReceiptStore(),
    )


NOTES_T1 = {"ticket_id": "T-1", "note": "one", "second_note": "two"}


def _record(registry: Registry, preview_id: str, key: str) -> Any:
    return registry.call(
        "record_ticket_notes",
        {"preview_id": preview_id, "action_id": key},
        actor=WRITER,
        approval=Approval(preview_id),
    )


def _states(result: Any) -> list[tuple[str, str]]:
    steps = result.result["steps"] if result.ok else result.error.details["steps"]
    return [(s["id"], s["state"]) for s in steps]


@pytest.mark.parametrize(
    ("fault", "state", "code"),
    [
        (Fault.answer(500), "result_unknown", "result_unknown"),  # a write's 500: may have happened
        (Fault.hang(1.0, write=True), "result_unknown", "result_unknown"),  # timed out after sending
        (Fault.drop(write=True), "result_unknown", "result_unknown"),  # connection dropped mid-way
        (Fault.answer(422), "failed", "upstream_rejected"),  # the API refused: nothing written
    ],
)
def test_a_fault_on_the_second_write_is_reported_step_by_step(fault: Fault, state: str, code: str) -> None:
    with FaultServer(honours_keys=False) as api:
        _fault_api(api)
        # a hang outlasts the step's timeout (the write was sent, its answer never came)
        with _fault_registry(
            api, step_timeout_ms=400 if fault.kind == "hang" else STEP_TIMEOUT_MS
        ) as registry:
            preview_id = preview_notes(registry, NOTES_T1)
            api.script("POST", r"^/v1/tickets/T-1/followups$", Fault.ok(), fault)
            result = _record(registry, preview_id, "k")
            assert error_code(result) == code, result.to_json()
            assert _states(result) == [
                ("ticket", "done"),
                ("first", "done"),
                ("second", state),
                ("after", "not_run"),
            ]
            assert result.error.details["step"] == "second"
            assert "not rolled back" in (result.error.next_step or "")
            receipt = registry.receipts.get("tickets/record_ticket_notes", "k")
            assert (
                receipt is not None and receipt.state == "unknown"
            )  # a write was done: never pending, never released
            assert api.side_effects_for(step_key_of("k", "first")) == 1
            # the same record key again: the done write is replayed, never sent again
            again = _record(registry, preview_id, "k")
            assert api.side_effects_for(step_key_of("k", "first")) == 1
            assert len(api.requests_for(key=step_key_of("k", "first"))) == 1
            if state == "failed":  # a definitive refusal: the step runs again and the plan completes
                assert again.ok, again.to_json()
                assert again.result["steps"][1] == {
                    "id": "first",
                    "state": "done",
                    "idempotency_key": step_key_of("k", "first"),
                    "replayed": True,
                }
                assert api.side_effects_for(step_key_of("k", "second")) == 1
            else:  # the second write may have happened: not re-sent to an API that does not deduplicate
                assert error_code(again) == "result_unknown"
                assert _states(again)[2] == ("second", "result_unknown")
                assert (
                    api.side_effects_for(step_key_of("k", "second")) <= 1
                    and len(api.requests_for(key=step_key_of("k", "second"))) == 1
                )


def test_a_failed_read_before_any_write_releases_the_record_and_gives_the_approval_back() -> None:
    with FaultServer(honours_keys=False) as api:
        _fault_api(api)
        with _fault_registry(api) as registry:
            preview_id = preview_notes(registry, NOTES_T1)
            api.script("GET", r"^/v1/tickets/T-1$", Fault.answer(503))
            result = _record(registry, preview_id, "k")
            assert error_code(result) == "upstream_unavailable" or error_code(result) == "upstream_error", (
                result.to_json()
            )
            assert _states(result) == [
                ("ticket", "failed"),
                ("first", "not_run"),
                ("second", "not_run"),
                ("after", "not_run"),
            ]
            assert registry.receipts.get("tickets/record_ticket_notes", "k") is None
            assert api.requests_for(method="POST") == []
            assert _record(registry, preview_id, "k").ok  # the approval was not spent
            assert api.total_side_effects == 2


def test_a_receipt_store_failure_on_a_step_sends_nothing_for_it() -> None:
    class Failing(MemoryReceiptStore):
        def begin(self, scope: str, key: str, fingerprint: str, actor: str, lease_ms: int = 0) -> Any:
            if scope.endswith(".second"):
                raise ConnectionError("store down")
            return super().begin(scope, key, fingerprint, actor, lease_ms)

    with FaultServer(honours_keys=False) as api:
        _fault_api(api)
        with _fault_registry(api, receipts=Failing()) as registry:
            preview_id = preview_notes(registry, NOTES_T1)
            result = _record(registry, preview_id, "k")
            assert error_code(result) == "receipt_store_unavailable", result.to_json()
            assert _states(result)[1:3] == [("first", "done"), ("second", "failed")]
            assert (
                api.requests_for(key=step_key_of("k", "second")) == []
                and api.side_effects_for(step_key_of("k", "first")) == 1
            )
            assert registry.receipts.get("tickets/record_ticket_notes", "k").state == "unknown"  # type: ignore[union-attr]


def test_a_stale_preview_is_refused_and_nothing_is_written() -> None:
    with FaultServer(honours_keys=False) as api:
        _fault_api(api)
        with _fault_registry(api) as registry:
            preview_id = preview_notes(registry, NOTES_T1)
            moved = dict(_ticket(None, 0), id="T-2")  # the ticket now answers as another one
            api.route("GET", r"^/v1/tickets/T-1$", 200, moved)
            result = _record(registry, preview_id, "k")
            assert error_code(result) == "preview_stale", result.to_json()
            assert result.error.details["steps"] == ["first", "second"]
            assert api.requests_for(method="POST") == []
            assert registry.receipts.get("tickets/record_ticket_notes", "k") is None
            api.route("GET", r"^/v1/tickets/T-1$", 200, _ticket)  # back as previewed: the same approval works
            assert _record(registry, preview_id, "k").ok


def test_concurrent_records_with_one_key_write_each_step_once() -> None:
    with FaultServer(honours_keys=False) as api:
        _fault_api(api)
        api.script("POST", r"^/v1/tickets/T-1/followups$", Fault.hang(0.2, write=True, hold_key=False))
        with _fault_registry(api, step_timeout_ms=2000) as registry:
            preview_id = preview_notes(registry, NOTES_T1)

            async def both() -> list[Any]:
                return list(
                    await asyncio.gather(
                        *(
                            registry.acall(
                                "record_ticket_notes",
                                {"preview_id": preview_id, "action_id": "k"},
                                actor=WRITER,
                                approval=Approval(preview_id),
                            )
                            for _ in range(2)
                        )
                    )
                )

            results = asyncio.run(both())
            codes = sorted(str(error_code(r)) for r in results)
            assert (
                api.side_effects_for(step_key_of("k", "first")) <= 1
                and api.side_effects_for(step_key_of("k", "second")) <= 1
            )
            assert "idempotency_in_progress" in codes or all(r.ok for r in results), [
                r.to_json() for r in results
            ]


FAULTS = st.sampled_from(
    [
        Fault.ok(),
        Fault.answer(500),
        Fault.answer(422),
        Fault.answer(503),
        Fault.hang(0.5, write=True),
        Fault.drop(write=True),
        Fault.drop(write=False),
    ]
)


@settings(max_examples=examples(12), deadline=None, suppress_health_check=list(HealthCheck))
@given(
    plan=st.lists(
        st.tuples(st.lists(FAULTS, max_size=3), st.lists(FAULTS, max_size=1)), min_size=1, max_size=3
    )
)
def test_over_random_faults_and_replays_each_step_key_writes_at_most_once(plan: list[Any]) -> None:
    """Property: whatever the faults on writes and reads, and however often the record key is used
    again, no step key reaches the API's side effect twice, and no receipt stays pending."""
    with FaultServer(honours_keys=False) as api:
        _fault_api(api)
        with _fault_registry(api, step_timeout_ms=250) as registry:
            preview_id = preview_notes(registry, NOTES_T1)
            for writes, reads in plan:
                api.clear_scripts()
                api.script("POST", r"^/v1/tickets/T-1/followups$", *writes)
                api.script("GET", r"^/v1/tickets/T-1$", *reads)
                result = _record(registry, preview_id, "k")
                states = dict(_states(result)) if (result.ok or "steps" in result.error.details) else {}
                if result.ok:
                    assert set(states.values()) == {"done"}
                for key in (step_key_of("k", "first"), step_key_of("k", "second")):
                    assert api.side_effects_for(key) <= 1, (key, api.side_effects_by_key())
                for scope, key in (
                    ("tickets/record_ticket_notes", "k"),
                    ("tickets/record_ticket_notes.first", step_key_of("k", "first")),
                    ("tickets/record_ticket_notes.second", step_key_of("k", "second")),
                ):
                    receipt = registry.receipts.get(scope, key)
                    assert receipt is None or receipt.state != "pending", (scope, receipt)


def test_a_cancelled_record_leaves_no_receipt_pending() -> None:
    with FaultServer(honours_keys=False) as api:
        _fault_api(api)
        with _fault_registry(api, step_timeout_ms=3000) as registry:
            preview_id = preview_notes(registry, NOTES_T1)
            api.script("POST", r"^/v1/tickets/T-1/followups$", Fault.hang(2.0, write=True))

            async def cancelled() -> None:
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(
                        registry.acall(
                            "record_ticket_notes",
                            {"preview_id": preview_id, "action_id": "c"},
                            actor=WRITER,
                            approval=Approval(preview_id),
                        ),
                        0.5,
                    )

            asyncio.run(cancelled())
            first = registry.receipts.get("tickets/record_ticket_notes.first", step_key_of("c", "first"))
            record = registry.receipts.get("tickets/record_ticket_notes", "c")
            assert first is not None and first.state == "unknown"  # sent, then cancelled: may have written
            assert record is not None and record.state == "unknown"
            assert api.requests_for(key=step_key_of("c", "second")) == []


@pytest.mark.parametrize(
    "answer",
    [dict(_ticket(None, 0), id="../admin"), {"subject": "no id"}],
    ids=["refused-by-the-step-schema", "member-gone"],
)
def test_a_write_that_can_no_longer_be_built_is_stale_and_releases_the_record(answer: dict[str, Any]) -> None:
    """A read that now answers so that a write's request cannot be built at all (a path parameter
    that would climb the URL, a member gone) is ``preview_stale`` like a changed request: nothing
    written, the record's receipt released (not left ``unknown``), the approval not spent."""
    with FaultServer(honours_keys=False) as api:
        _fault_api(api)
        with _fault_registry(api) as registry:
            preview_id = preview_notes(registry, NOTES_T1)
            api.route("GET", r"^/v1/tickets/T-1$", 200, answer)
            result = _record(registry, preview_id, "k")
            assert error_code(result) == "preview_stale", result.to_json()
            assert result.error.details["steps"] == ["first"]
            assert result.error.details["cause"]["details"]["step"] == "first"
            assert api.requests_for(method="POST") == []
            assert registry.receipts.get("tickets/record_ticket_notes", "k") is None
            api.route("GET", r"^/v1/tickets/T-1$", 200, _ticket)
            again = _record(registry, preview_id, "k")  # the approval was not spent
            assert again.ok and [s for _, s in _states(again)] == ["done"] * 4
            assert len(api.requests_for(method="POST")) == 2


def test_an_aggregate_step_answering_without_its_member_is_a_partial_error() -> None:
    """One aggregate step whose answer lacks the member the output reads is that step's
    ``composite_reference_missing`` in ``errors``; the other steps' members still come back."""
    with FaultServer(honours_keys=False) as api:
        api.route("GET", r"^/v1/tickets/T-1/history$", 200, {"not_entries": True})
        api.route("GET", r"^/v1/tickets/T-2/history$", 200, {"entries": [{"event": "created"}]})
        with _fault_registry(api) as registry:
            result = registry.call("get_two_histories", {"first": "T-1", "second": "T-2"}, actor=READER)
    assert result.ok and result.result is not None, result.to_json()
    assert result.result["second"] == [{"event": "created"}] and "first" not in result.result
    error = result.result["errors"]["first"]
    assert error["code"] == "composite_reference_missing" and error["details"]["pointer"] == "/entries"
    assert set(result.result["errors"]) == {"first"}


class _FlakyVault:
    """A credentials provider whose first lookup fails (an outage), the others answer."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.calls = 0
        self.lock = threading.Lock()

    def get(self, secret: str) -> str | None:
        with self.lock:
            self.calls += 1
            if self.calls == 1:
                raise RuntimeError("vault unreachable")
        return self.token


@pytest.mark.parametrize("driver", ["sync", "async"])
def test_a_fault_preparing_one_aggregate_step_is_that_steps_error(server: TicketsServer, driver: str) -> None:
    """A fault in the runtime's own path before a step is sent (here the credentials provider
    raising) is that step's ``internal_error`` in ``errors``; the other step still answers."""
    server.state.history_delay = 0.0
    policy, catalog = composite_package()
    registry = Registry(policy, catalog, base_url=server.base_url, credentials=_FlakyVault(server.token))
    with registry:
        args = {"first": "T-101", "second": "T-102"}
        result = (
            registry.call("get_two_histories", args, actor=READER)
            if driver == "sync"
            else asyncio.run(registry.acall("get_two_histories", args, actor=READER))
        )
    assert result.ok and result.result is not None, result.to_json()
    errors = result.result["errors"]
    assert len(errors) == 1 and next(iter(errors.values()))["code"] == "internal_error"
    assert set(result.result) == {"first", "second", "errors"} - set(errors)
    assert len(server.requests_for("GET", "/history")) == 1
