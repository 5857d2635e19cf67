"""A caller is an issuer's subject, not a bare ``sub``: two deployments that trust different
authorization servers and share one receipt store (SQLite, Redis, PostgreSQL) keep each caller's
limit buckets, stored previews and issued approvals apart even when both servers issue the same
``sub`` (RFC 7519 §4.1.2: a subject is unique only in the context of its issuer). Real signed tokens
of two loopback authorization servers, verified by `JwtVerifier`, made actors by `actor_from_token`
as `toolgen serve --http` makes them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import REPO, Built, build
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import tickets_dir

from toolgen.runtime import Actor, Approval, MemoryAuditSink, Registry, StaticCredentials, ToolError
from toolgen.runtime.clock import ManualClock
from toolgen.runtime.identity import ISSUER_CALLER_PREFIX, issuer_caller_id, split_caller_id
from toolgen.runtime.serving.access_tokens import JwtVerifier
from toolgen.runtime.serving.mcp_http import TokenFileError, actor_from_token, load_token_file
from toolgen.runtime.stores import ReceiptStore
from toolgen.testing.tickets_server import TicketsServer

pytest.importorskip("mcp")
pytest.importorskip("authlib")

from tests.runtime.conftest import receipt_store
from tests.support.authorization_server import AuthorizationServer as LoopbackAS

RESOURCE = "https://tools.example.test/mcp"
PAYMENTS = REPO / "tests" / "fixtures" / "limits" / "payments.yaml"
INTENT = """tools:
  refund:
    operation: createRefund
    effect: write
    permission: payments:write
    approval: never
    record: {arguments: full}
    idempotency: {key: action_id, send_as: "header:Idempotency-Key", honoured_by_api: true}
    limits:
      - {per: actor, calls: 2, window: 1m}
"""


@pytest.fixture(scope="module")
def issuers() -> Iterator[tuple[LoopbackAS, LoopbackAS]]:
    with LoopbackAS(RESOURCE) as first, LoopbackAS(RESOURCE) as second:
        yield first, second


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("limited"), PAYMENTS, INTENT)


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def shared_store(
    request: pytest.FixtureRequest, tmp_path: Path, clock: ManualClock
) -> Iterator[ReceiptStore]:
    """One receipt store both deployments use (a Redis key prefix, a PostgreSQL table prefix)."""
    store = receipt_store(request, tmp_path, "prefix=shared:", clock)
    yield store
    store.close()


def caller(server: LoopbackAS, sub: str, scopes: list[str]) -> Actor:
    """The actor `toolgen serve --http` makes of `server`'s access token for `sub`."""
    settings_ = server.trusted()
    access = anyio.run(JwtVerifier(settings_).verify_token, server.access_token(sub, scopes))
    assert access is not None
    return actor_from_token(access)


def test_the_same_sub_of_two_issuers_is_two_callers(issuers: tuple[LoopbackAS, LoopbackAS]) -> None:
    first, second = issuers
    a, b = caller(first, "alice", ["ticket:read"]), caller(second, "alice", ["ticket:read"])
    assert a.id != b.id
    assert (a.id, b.id) == (issuer_caller_id(first.issuer, "alice"), issuer_caller_id(second.issuer, "alice"))
    assert a.id == f"jwt:{first.issuer}#alice"  # readable: the issuer, then the subject
    assert split_caller_id(a.id) == (first.issuer, "alice")


def test_limit_buckets_are_per_issuer_and_subject(
    issuers: tuple[LoopbackAS, LoopbackAS],
    limited: Built,
    recorder: RecordingServer,
    shared_store: ReceiptStore,
    clock: ManualClock,
) -> None:
    """``per: actor`` allows 2 refunds a minute: alice of the first issuer spends hers; alice of the
    second issuer, on another deployment over the same store, still has her own 2."""
    first, second = issuers
    scopes = ["payments:write", "payments:read"]
    deployments = [
        Registry.from_dir(
            limited.out,
            base_url=recorder.base_url,
            credentials=StaticCredentials({}),
            receipts=shared_store,
            audit=MemoryAuditSink(),
            clock=clock,
        )
        for _ in range(2)
    ]
    alice_a, alice_b = caller(first, "alice", scopes), caller(second, "alice", scopes)

    def refund(registry: Registry, actor: Actor, key: str) -> Any:
        return registry.call("record_refund", {"charge": "ch_1", "amount": 10, "action_id": key}, actor=actor)

    assert [refund(deployments[0], alice_a, f"a-{n}").ok for n in range(3)] == [True, True, False]
    assert [refund(deployments[1], alice_b, f"b-{n}").ok for n in range(3)] == [True, True, False]
    over = refund(deployments[1], alice_b, "b-9")
    assert over.error is not None and over.error.code == "rate_limited"


def test_previews_and_issued_approvals_are_per_issuer_and_subject(
    issuers: tuple[LoopbackAS, LoopbackAS], tickets_server: TicketsServer, shared_store: ReceiptStore
) -> None:
    """alice of the first issuer previews a follow-up and a human approves it for her; alice of the
    second issuer, over the same store, finds neither the preview nor the approval."""
    first, second = issuers
    scopes = ["ticket:read", "ticket:write"]
    alice_a, alice_b = caller(first, "alice", scopes), caller(second, "alice", scopes)
    deployments = [
        Registry.from_dir(
            tickets_dir(),
            base_url=tickets_server.base_url,
            credentials=StaticCredentials({"TICKETS_TOKEN": tickets_server.token}),
            receipts=shared_store,
            audit=MemoryAuditSink(),
            approvals="issued",
        )
        for _ in range(2)
    ]
    args = {"ticket_id": "T-102", "note": "Called back.", "visibility": "public"}
    preview = deployments[0].call("preview_ticket_followup", args, actor=alice_a)
    assert preview.ok and preview.result is not None
    preview_id = preview.result["preview_id"]
    approval_id = deployments[0].issue_approval(
        "record_ticket_followup", preview_id, approved_by="ops", actor=alice_a.id
    )
    approval = Approval(preview_id, approval_id=approval_id)
    record = {"preview_id": preview_id, "action_id": "act-1"}
    stolen = deployments[1].call("record_ticket_followup", record, actor=alice_b, approval=approval)
    assert stolen.error is not None and stolen.error.code == "preview_not_found"
    with pytest.raises(ToolError) as refused:
        deployments[1].issue_approval(
            "record_ticket_followup", preview_id, approved_by="ops", actor=alice_b.id
        )
    assert refused.value.code == "preview_not_found"
    # the guard: the caller who made the preview records it with her approval
    done = deployments[0].call("record_ticket_followup", record, actor=alice_a, approval=approval)
    assert done.ok, done.error


def test_state_written_under_the_bare_sub_is_not_found(
    issuers: tuple[LoopbackAS, LoopbackAS], tickets_server: TicketsServer, shared_store: ReceiptStore
) -> None:
    """A store written before callers were bound to their issuer holds a preview under the bare
    ``sub``: after the upgrade, neither issuer's caller of that ``sub`` finds it (fail closed: preview
    again), and the old id still finds its own."""
    first, second = issuers
    scopes = ["ticket:read", "ticket:write"]
    registry = Registry.from_dir(
        tickets_dir(),
        base_url=tickets_server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": tickets_server.token}),
        receipts=shared_store,
        audit=MemoryAuditSink(),
        approvals="issued",
    )
    old = Actor.of("alice", scopes)  # the id a JWT caller had before
    args = {"ticket_id": "T-102", "note": "Written before the upgrade.", "visibility": "public"}
    preview = registry.call("preview_ticket_followup", args, actor=old)
    assert preview.ok and preview.result is not None
    preview_id = preview.result["preview_id"]
    for new in (caller(first, "alice", scopes), caller(second, "alice", scopes)):
        with pytest.raises(ToolError) as refused:
            registry.issue_approval("record_ticket_followup", preview_id, approved_by="ops", actor=new.id)
        assert refused.value.code == "preview_not_found"
    assert registry.issue_approval("record_ticket_followup", preview_id, approved_by="ops", actor=old.id)


#: text rich in what the encoding escapes or splits at (``#``, ``%``, the digits of ``%23``/``%25``)
PARTS = st.text(st.sampled_from([*"#%235j:/a", "é", "\u2028"]), min_size=1, max_size=8) | st.text(min_size=1)


@settings(max_examples=examples(400), deadline=None)
@given(PARTS, PARTS, PARTS, PARTS)
def test_no_two_issuer_subject_pairs_share_an_id(iss1: str, sub1: str, iss2: str, sub2: str) -> None:
    """The encoding is injective: an issuer holding ``#`` or ``%``, or a subject holding the
    separator, cannot spell another pair's id; and every id carries the reserved prefix."""
    one, two = issuer_caller_id(iss1, sub1), issuer_caller_id(iss2, sub2)
    assert (one == two) == ((iss1, sub1) == (iss2, sub2))
    assert split_caller_id(one) == (iss1, sub1) and one.startswith(ISSUER_CALLER_PREFIX)


def test_crafted_pairs_do_not_collide() -> None:
    assert issuer_caller_id("https://a/#b", "c") != issuer_caller_id("https://a/", "b#c")
    assert issuer_caller_id("https://a/%23", "c") != issuer_caller_id("https://a/#", "c")
    assert split_caller_id("alice") is None and split_caller_id("jwt:no-separator") is None


def test_a_bare_name_cannot_pass_for_an_issuers_caller() -> None:
    """A verifier that names no issuer gives the bare subject (or client id) as the id, but never
    one in the issuer-bound form: such a caller is nobody (no scopes)."""
    from mcp.server.auth.provider import AccessToken

    forged = issuer_caller_id("https://auth.example.test/", "alice")
    for access in (
        AccessToken(token="t", client_id="c", scopes=["ticket:read"], subject=forged),
        AccessToken(token="t", client_id=forged, scopes=["ticket:read"]),
    ):
        actor = actor_from_token(access)
        assert actor.id != forged and actor.scopes == frozenset()
    plain = actor_from_token(AccessToken(token="t", client_id="c", scopes=["ticket:read"], subject="bob"))
    assert plain.id == "bob" and plain.scopes == {"ticket:read"}
    bound = actor_from_token(
        AccessToken(token="t", client_id="svc", scopes=[], claims={"iss": "https://auth.example.test/"})
    )
    assert bound.id == issuer_caller_id("https://auth.example.test/", "svc")  # a client's own token


def test_a_token_file_actor_may_not_take_the_issuer_form(tmp_path: Path) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(
        f"tokens:\n  - actor: 'jwt:https://auth.example.test/#alice'\n    sha256: {'a' * 64}\n    scopes: []\n",
        encoding="utf-8",
    )
    path.chmod(0o600)
    with pytest.raises(TokenFileError, match=r"tokens\.yaml:2:12: .*reserved") as caught:
        load_token_file(path)
    assert "jwt:" in str(caught.value)
