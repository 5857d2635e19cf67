"""The derived contract suite (toolgen.testing.contract), run against the real tickets server and,
for every generated package in generated/ (and the tickets package), against a recording stub."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import GENERATED, tickets_dir

from toolgen.runtime import MemoryReceiptStore, Registry, StaticCredentials
from toolgen.testing.contract import CannotSynthesise, derive_cases, run_case, string_for_pattern
from toolgen.testing.tickets_server import TicketsServer


class AnySecret:
    """Every secret resolves to a recognisable dummy value (stub servers accept anything)."""

    def get(self, secret: str) -> str | None:
        return f"dummy-{secret.lower()}"


def _packages() -> list[Path]:
    found = {tickets_dir().resolve()}
    if GENERATED.is_dir():
        found |= {d.resolve() for d in GENERATED.iterdir() if (d / "policy.json").is_file()}
    return sorted(found)


def _stub_base(policy_base: str, stub: str) -> str:
    return stub + httpx.URL(policy_base or "http://x/").path.rstrip("/")


TICKETS_CASES = derive_cases(Registry.from_dir(tickets_dir()), arg_examples={"ticket_id": "T-102"})


def test_tickets_contract_covers_every_kind() -> None:
    kinds = {c.kind for c in TICKETS_CASES}
    assert kinds == {"missing_required", "wrong_type", "no_scope", "no_approval", "replay", "conflict"}
    assert {c.id for c in TICKETS_CASES} >= {
        "record_ticket_followup:replay",
        "record_ticket_followup:conflict",
        "record_ticket_delete:no_approval",
        "get_ticket:no_scope",
        "list_tickets:wrong_type",
    }


@pytest.mark.parametrize("case", TICKETS_CASES, ids=[c.id for c in TICKETS_CASES])
def test_tickets_contract_against_real_server(case, server: TicketsServer) -> None:  # type: ignore[no-untyped-def]
    reg = Registry.from_dir(
        tickets_dir(),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=MemoryReceiptStore(),
    )
    try:
        run_case(reg, case, lambda: len(server.state.requests))
    except CannotSynthesise as exc:
        pytest.skip(str(exc))
    finally:
        reg.close()


def _stub_cases() -> Iterator[object]:
    for folder in _packages():
        reg = Registry.from_dir(folder)
        for case in derive_cases(reg):
            yield pytest.param(folder, case, id=f"{folder.name}:{case.id}")


@pytest.mark.parametrize("folder,case", list(_stub_cases()))
def test_contract_against_recording_stub(folder: Path, case, recorder: RecordingServer) -> None:  # type: ignore[no-untyped-def]
    reg = Registry.from_dir(folder, credentials=AnySecret(), receipts=MemoryReceiptStore())
    reg.base_url = _stub_base(str(reg.policy.get("base_url", "")), recorder.base_url)
    try:
        run_case(reg, case, lambda: len(recorder.requests))
    except CannotSynthesise as exc:
        pytest.skip(str(exc))
    finally:
        reg.close()


@pytest.mark.parametrize(
    "pattern",
    [
        r"^T-[0-9]+$",
        r"^[a-z]{3,5}_\d{2}$",
        r"^(cus|acct)_[A-Za-z0-9]+$",
        r"^[^/]+$",
        r"^\w+(\.\w+)*@\w+\.com$",
        r"^v[0-9]+(\.[0-9]+){2}$",
    ],
)
def test_pattern_synthesis(pattern: str) -> None:
    import re

    assert re.search(pattern, string_for_pattern(pattern))
