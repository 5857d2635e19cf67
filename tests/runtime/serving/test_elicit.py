"""Approvals asked in the protocol (MCP 2026-07-28 multi round-trip), end to end with the official
`mcp` client over Streamable HTTP with bearer tokens, against the loopback tickets API.

What must hold: an approval-gated record call without an approval gets ``input_required`` showing
the exact request; the client's "approve" executes exactly the previewed request once; a declined
answer, a replayed, altered, expired or other-principal ``requestState`` and an answer for other
arguments send nothing; clients of 2025-11-25 keep the plain ``approval_required``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.runtime.test_runtime_identity import error_of
from tests.support.http_serving import http_server
from tests.support.runtime_env import load_package
from tests.support.token_files import TOKENS, write_token_file

from toolgen.runtime import MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.clock import SYSTEM, Clock, ManualClock
from toolgen.runtime.serving import elicit as elicit_module
from toolgen.runtime.serving.mcp_http import load_token_file
from toolgen.testing.tickets_server import TicketsServer

pytestmark = pytest.mark.anyio
mcp = pytest.importorskip("mcp")
httpx2 = pytest.importorskip("httpx2")

PREVIEW, FOLLOWUP = "preview_ticket_followup", "record_ticket_followup"
NOTE = {"ticket_id": "T-102", "note": "Approved in the protocol.", "visibility": "internal"}


def _registry(server: TicketsServer, clock: Clock = SYSTEM) -> Registry:
    policy, catalog = load_package("tickets")
    return Registry(
        policy,
        list(catalog),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        receipts=MemoryReceiptStore(clock=clock),
        audit=MemoryAuditSink(),
        cursor_key=b"k" * 32,
        approvals="issued",
    )


def _client(url: str, token: str, **kw: Any) -> Any:
    """An official client over Streamable HTTP with `token`; it declares form elicitation (a
    callback that must not be reached when the test drives the rounds itself) unless told otherwise."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    if "elicitation_callback" not in kw:

        async def unexpected(context: Any, params: Any) -> Any:
            raise AssertionError("the test answers the approval round itself")

        kw["elicitation_callback"] = unexpected
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return http, Client(streamable_http_client(url, http_client=http), **kw)


def _answer(approve: bool, name: str | None = "alice") -> Any:
    seen: list[Any] = []

    async def callback(context: Any, params: Any) -> Any:
        import mcp_types as types

        seen.append(params)
        content: dict[str, Any] = {"approve": approve}
        if name is not None:
            content["approved_by"] = name
        return types.ElicitResult(action="accept", content=content)

    return callback, seen


@pytest.fixture
def tokens(tmp_path: Any) -> Any:
    return load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]


async def test_the_user_approves_the_exact_request_in_the_protocol_and_it_runs_once(
    server: TicketsServer, tokens: Any
) -> None:
    reg = _registry(server)
    callback, seen = _answer(True)
    async with http_server(reg, verifier=tokens, elicit=True) as url:
        http, client = _client(url, TOKENS["writer"][0], elicitation_callback=callback)
        async with http, client:
            pid = (await client.call_tool(PREVIEW, NOTE)).structured_content["preview_id"]
            done = await client.call_tool(FOLLOWUP, {"preview_id": pid, "action_id": "e-1"})
            assert done.is_error is False, done
            again = await client.call_tool(FOLLOWUP, {"preview_id": pid, "action_id": "e-1"})
            assert again.is_error is False and again.structured_content == done.structured_content
    assert server.side_effects["addFollowup"] == 1
    assert (
        len(seen) == 2
    )  # the approval comes before the receipt: a replay is approved too, and writes nothing
    message = seen[0].message
    assert "POST " in message and "/followups" in message and "Approved in the protocol." in message
    assert server.token not in message  # credentials redacted in what the human sees
    approvals = [e for e in reg.audit.events if e.step == "approval" and e.decision == "issue"]  # type: ignore[attr-defined]
    assert approvals and "alice" in json.dumps([e.to_json() for e in approvals])
    reg.close()


async def test_a_declined_approval_sends_nothing(server: TicketsServer, tokens: Any) -> None:
    reg = _registry(server)
    callback, seen = _answer(False)
    async with http_server(reg, verifier=tokens, elicit=True) as url:
        http, client = _client(url, TOKENS["writer"][0], elicitation_callback=callback)
        async with http, client:
            pid = (await client.call_tool(PREVIEW, NOTE)).structured_content["preview_id"]
            refused = await client.call_tool(FOLLOWUP, {"preview_id": pid, "action_id": "e-2"})
            assert error_of(refused)["code"] == "approval_required"
    assert seen and server.side_effects["addFollowup"] == 0
    reg.close()


async def _first_round(client: Any, pid: str, key: str = "e-3") -> Any:
    import mcp_types as types

    first = await client.session.call_tool(
        FOLLOWUP, {"preview_id": pid, "action_id": key}, allow_input_required=True
    )
    assert isinstance(first, types.InputRequiredResult), first
    assert first.request_state and elicit_module.INPUT_KEY in (first.input_requests or {})
    return first


def _yes() -> Any:
    import mcp_types as types

    return {elicit_module.INPUT_KEY: types.ElicitResult(action="accept", content={"approve": True})}


async def test_replayed_altered_foreign_and_mismatched_states_are_refused(
    server: TicketsServer, tokens: Any
) -> None:
    from mcp.shared.exceptions import MCPError

    reg = _registry(server)
    async with http_server(reg, verifier=tokens, elicit=True) as url:
        http, client = _client(url, TOKENS["writer"][0])
        async with http, client:
            pid = (await client.call_tool(PREVIEW, NOTE)).structured_content["preview_id"]
            first = await _first_round(client, pid)
            state = first.request_state
            # altered: one character of the sealed state changed
            flipped = state[:-3] + ("A" if state[-3] != "A" else "B") + state[-2:]
            with pytest.raises(MCPError, match="requestState"):
                await client.session.call_tool(
                    FOLLOWUP,
                    {"preview_id": pid, "action_id": "e-3"},
                    input_responses=_yes(),
                    request_state=flipped,
                )
            # other arguments (another idempotency key) with this state
            with pytest.raises(MCPError, match="requestState"):
                await client.session.call_tool(
                    FOLLOWUP,
                    {"preview_id": pid, "action_id": "e-other"},
                    input_responses=_yes(),
                    request_state=state,
                )
            assert server.side_effects["addFollowup"] == 0
            # the genuine answer runs once ...
            ok = await client.session.call_tool(
                FOLLOWUP, {"preview_id": pid, "action_id": "e-3"}, input_responses=_yes(), request_state=state
            )
            assert ok.is_error is False, ok
            # ... and its state replayed (same arguments) is refused: single use
            replay = await client.session.call_tool(
                FOLLOWUP, {"preview_id": pid, "action_id": "e-3"}, input_responses=_yes(), request_state=state
            )
            assert replay.is_error and json.loads(replay.content[0].text)["error"]["code"] == "approval_used"
        # another principal presenting the writer's state
        second = await _state_for_another_round(url, pid)
        http, other = _client(url, TOKENS["admin"][0])
        async with http, other:
            with pytest.raises(MCPError, match="requestState"):
                await other.session.call_tool(
                    FOLLOWUP,
                    {"preview_id": pid, "action_id": "e-4"},
                    input_responses=_yes(),
                    request_state=second,
                )
    assert server.side_effects["addFollowup"] == 1
    reg.close()


async def _state_for_another_round(url: str, pid: str) -> str:
    http, client = _client(url, TOKENS["writer"][0])
    async with http, client:
        return str((await _first_round(client, pid, "e-4")).request_state)


async def test_an_expired_state_is_refused(server: TicketsServer, tokens: Any) -> None:
    """The runtime's own expiry of an approval round, on the registry's clock (the SDK's sealed
    state carries its own, on the system clock, which the clock seam does not move)."""
    clock = ManualClock()
    reg = _registry(server, clock)
    async with http_server(reg, verifier=tokens, elicit=True) as url:
        http, client = _client(url, TOKENS["writer"][0])
        async with http, client:
            pid = (await client.call_tool(PREVIEW, NOTE)).structured_content["preview_id"]
            first = await _first_round(client, pid, "e-5")
            clock.advance(elicit_module.STATE_TTL_S)
            refused = await client.session.call_tool(
                FOLLOWUP,
                {"preview_id": pid, "action_id": "e-5"},
                input_responses=_yes(),
                request_state=first.request_state,
            )
            assert error_of(refused)["code"] == "approval_required"
            assert "expired" in error_of(refused)["message"]
    assert server.side_effects["addFollowup"] == 0
    reg.close()


async def test_older_clients_keep_approval_required(server: TicketsServer, tokens: Any) -> None:
    reg = _registry(server)
    callback, seen = _answer(True)
    async with http_server(reg, verifier=tokens, elicit=True) as url:
        http, legacy = _client(url, TOKENS["writer"][0], mode="legacy", elicitation_callback=callback)
        async with http, legacy:
            pid = (await legacy.call_tool(PREVIEW, NOTE)).structured_content["preview_id"]
            refused = await legacy.call_tool(FOLLOWUP, {"preview_id": pid, "action_id": "e-6"})
            assert error_of(refused)["code"] == "approval_required"
    assert not seen and server.side_effects["addFollowup"] == 0
    reg.close()


async def test_a_server_without_elicit_keeps_approval_required(server: TicketsServer, tokens: Any) -> None:
    callback, seen = _answer(True)
    plain = _registry(server)
    async with http_server(plain, verifier=tokens) as url:  # issued mode, no elicitation
        http, modern = _client(url, TOKENS["writer"][0], elicitation_callback=callback)
        async with http, modern:
            pid = (await modern.call_tool(PREVIEW, NOTE)).structured_content["preview_id"]
            refused = await modern.call_tool(FOLLOWUP, {"preview_id": pid, "action_id": "e-7"})
            assert error_of(refused)["code"] == "approval_required"
    assert not seen and server.side_effects["addFollowup"] == 0
    plain.close()


async def test_a_client_without_form_elicitation_gets_approval_required(
    server: TicketsServer, tokens: Any
) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    reg = _registry(server)
    headers = {"Authorization": f"Bearer {TOKENS['writer'][0]}"}
    async with (
        http_server(reg, verifier=tokens, elicit=True) as url,
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):  # no elicitation callback
        pid = (await client.call_tool(PREVIEW, NOTE)).structured_content["preview_id"]
        refused = await client.call_tool(FOLLOWUP, {"preview_id": pid, "action_id": "e-8"})
        assert error_of(refused)["code"] == "approval_required"
    assert server.side_effects["addFollowup"] == 0
    reg.close()
