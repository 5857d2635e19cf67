"""What the caller names a stored thing by (a ``preview_id``, an idempotency key, an approval's
``preview_id`` or ``approval_id``) is checked at the boundary, the same on every store.

PostgreSQL's ``text`` cannot hold a NUL character: a key with one used to reach the database and
answer ``receipt_store_unavailable`` there, while SQLite, memory and Redis took it. Now every store
answers ``invalid_arguments`` (a located validation error) before anything is read, written or sent.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.runtime.stores.test_receipt_stores import Backend, _postgres_spec, _redis_spec, make_registry
from tests.support.profiles import examples
from tests.support.runtime_env import ADMIN, WRITER

from toolgen.runtime import Approval, CallResult, MemoryReceiptStore, Registry, receipts_from_url
from toolgen.runtime.stores.postgres import PostgresReceiptStore
from toolgen.testing.tickets_server import TicketsServer

#: (preview tool, record tool, arguments, actor, method and path of a write): the follow-up sends its
#: key as a header (where a NUL was refused already), the delete keeps it to the receipt store, the
#: composite escalation holds a receipt of its own
TOOLS = {
    "followup": (
        "preview_ticket_followup",
        "record_ticket_followup",
        {"ticket_id": "T-102", "note": "Customer asked for a callback.", "visibility": "public"},
        WRITER,
        ("POST", "/followups"),
    ),
    "delete": (
        "preview_ticket_delete",
        "record_ticket_delete",
        {"ticket_id": "T-130"},
        ADMIN,
        ("DELETE", "/tickets"),
    ),
    "composite": (
        "preview_escalate_ticket",
        "record_escalate_ticket",
        {"ticket_id": "T-102", "reason": "Angry."},
        WRITER,
        ("POST", "/followups"),
    ),
}
BAD_TEXT = ["a\x00b", "\x00", "key\x00" + "x" * 40, "\ud800", "k\udfff-1"]


@pytest.fixture(params=["sqlite", "memory", "redis", "postgres"])
def store_reg(request: pytest.FixtureRequest, tmp_path: Any, server: TicketsServer) -> Iterator[Registry]:
    kind = request.param
    if kind == "sqlite":
        backend = Backend(kind, str(tmp_path / "receipts.sqlite3"))
    elif kind == "memory":
        backend = Backend(kind, "memory://", MemoryReceiptStore())
    elif kind == "postgres":
        backend = Backend(kind, _postgres_spec(request.getfixturevalue("postgres_url")))
    else:
        backend = Backend(kind, _redis_spec(request.getfixturevalue("redis_url")))
    registry = make_registry(server, backend.open())
    yield registry
    registry.close()


def _preview_id(reg: Registry, which: str) -> str:
    preview, _, args, actor, _ = TOOLS[which]
    shown = reg.call(preview, args, actor=actor)
    assert shown.ok, shown.to_json()
    return str(shown.result["preview_id"])  # type: ignore[index]


def _writes(server: TicketsServer, which: str) -> int:
    method, path = TOOLS[which][4]
    return len(server.requests_for(method, path))


def _record(reg: Registry, which: str, pid: str, key: str, approval: Approval | None = None) -> CallResult:
    _, record, _, actor, _ = TOOLS[which]
    return reg.call(
        record,
        {"preview_id": pid, "action_id": key},
        actor=actor,
        approval=approval or Approval(pid, approved_by="human@example.com"),
    )


@pytest.mark.parametrize("which", sorted(TOOLS))
@pytest.mark.parametrize("bad", BAD_TEXT, ids=range(len(BAD_TEXT)))
def test_a_nul_or_a_lone_surrogate_in_the_key_is_invalid_arguments_on_every_store(
    store_reg: Registry, server: TicketsServer, which: str, bad: str
) -> None:
    pid = _preview_id(store_reg, which)
    before = _writes(server, which)
    result = _record(store_reg, which, pid, bad)
    assert not result.ok and result.error is not None
    assert result.error.code == "invalid_arguments", result.to_json()
    assert result.error.details["pointer"] == "/action_id"
    assert _writes(server, which) == before
    # the same call with a usable key goes through: nothing was left pending
    ok = _record(
        store_reg, which, pid, "k-" + bad.encode("utf-8", "backslashreplace").decode().replace("\x00", "0")
    )
    assert ok.ok, ok.to_json()


@pytest.mark.parametrize("which", sorted(TOOLS))
@pytest.mark.parametrize("bad", BAD_TEXT, ids=range(len(BAD_TEXT)))
def test_a_nul_or_a_lone_surrogate_in_the_preview_id_is_invalid_arguments_on_every_store(
    store_reg: Registry, server: TicketsServer, which: str, bad: str
) -> None:
    pid = _preview_id(store_reg, which)
    result = _record(store_reg, which, pid[:20] + bad + pid[21:], "k-1")
    assert not result.ok and result.error is not None
    assert result.error.code == "invalid_arguments", result.to_json()
    assert result.error.details["pointer"] == "/preview_id"
    assert "preview_id" in result.error.message
    assert _writes(server, which) == 0


@pytest.mark.parametrize("mode", ["client", "issued"])
@pytest.mark.parametrize("bad", BAD_TEXT, ids=range(len(BAD_TEXT)))
def test_a_nul_or_a_lone_surrogate_in_an_approval_never_reaches_a_store(
    store_reg: Registry, server: TicketsServer, bad: str, mode: str
) -> None:
    """An approval is the caller's too: its ``preview_id`` is compared, its ``approval_id`` stored
    only as a digest, so no store sees its text."""
    store_reg.approvals = mode
    pid = _preview_id(store_reg, "delete")
    result = _record(store_reg, "delete", pid, "k-2", Approval(pid + bad, approved_by="human@example.com"))
    assert result.error is not None, result.to_json()
    assert result.error.code == ("approval_required" if mode == "issued" else "approval_mismatch")
    result = _record(store_reg, "delete", pid, "k-3", Approval(pid, approved_by="h", approval_id="ap" + bad))
    expected = "approval_required" if mode == "issued" else None  # issued: no such approval was issued
    assert (result.error.code if result.error else None) == expected, result.to_json()


@settings(max_examples=examples(40), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.text(st.characters(codec=None, exclude_categories=()), min_size=1, max_size=60),
    st.sampled_from(sorted(TOOLS)),
)
def test_any_key_is_answered_without_a_store_failure(
    store_reg: Registry, server: TicketsServer, key: str, which: str
) -> None:
    """Whatever text a caller sends as the key, no store answers ``receipt_store_unavailable``."""
    result = _record(store_reg, which, _preview_id(store_reg, which), key)
    code = None if result.error is None else result.error.code
    assert code not in ("receipt_store_unavailable", "internal_error"), result.to_json()


# -- m8: the PostgreSQL table prefix -------------------------------------------------------------------


@pytest.mark.parametrize(
    "prefix", ["toolgen_\n", "toolgen_\n;DROP TABLE x;--", "\ntoolgen_", "Toolgen_", "a" * 42, "", "toolgen-"]
)
def test_a_table_prefix_with_a_newline_or_other_character_is_refused_before_connecting(prefix: str) -> None:
    with pytest.raises(ValueError, match="table prefix"):
        PostgresReceiptStore("postgresql://nobody@127.0.0.1:1/none", table_prefix=prefix)


def test_a_url_table_prefix_with_a_trailing_newline_is_refused() -> None:
    with pytest.raises(ValueError, match="table prefix"):
        receipts_from_url("postgresql://nobody@127.0.0.1:1/none?table_prefix=toolgen_%0A")
