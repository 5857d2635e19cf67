"""A per-tool request body limit (intent map `max_body_bytes`, `defaults.max_body_bytes`; policy
``request.max_body_bytes``): lowered onto every row of the intent, read back by the policy format,
and enforced by the canonical-request step before anything is previewed, stored or sent."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.build import REPO, Built, build

from toolgen.policy.format import PolicyFormatError, from_json, read_policy
from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.testing.tickets_server import TicketsServer

TICKETS = REPO / "specs" / "tickets.yaml"
WRITER = Actor.of("writer", ["ticket:write"])
FOLLOWUP = (
    "tools:\n  followup:\n    operation: addFollowup\n    effect: write\n    permission: ticket:write\n"
    "    approval: never\n    record: {arguments: full}\n"
    '    idempotency: {key: action_id, send_as: "header:Idempotency-Key", honoured_by_api: true}\n'
)


def _registry(built: Built, server: TicketsServer) -> Registry:
    return Registry.from_dir(
        built.out,
        base_url=server.base_url,
        credentials=StaticCredentials({"API_TOKEN": server.token}),
        receipts=MemoryReceiptStore(),
    )


def _note(chars: int) -> dict[str, str]:
    return {"ticket_id": "T-102", "note": "n" * chars, "visibility": "public"}


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("limited"), TICKETS, FOLLOWUP + "    max_body_bytes: 120\n")


def test_the_limit_reaches_every_row_of_the_intent_and_reads_back(limited: Built) -> None:
    for tool in ("preview_followup", "record_followup"):
        assert limited.row(tool)["request"]["max_body_bytes"] == 120
    table = read_policy(limited.out / "policy.json")
    assert {r.tool: r.max_body_bytes for r in table.tools} == {
        "preview_followup": 120,
        "record_followup": 120,
    }
    assert from_json(table.to_json()) == table


def test_defaults_apply_and_an_intent_overrides_them(tmp_path: Path) -> None:
    reads = "  get:\n    operation: getTicket\n    effect: read\n    permission: ticket:read\n"
    built = build(
        tmp_path,
        TICKETS,
        "defaults: {max_body_bytes: 4000}\n" + FOLLOWUP + "    max_body_bytes: 300\n" + reads,
    )
    assert built.row("record_followup")["request"]["max_body_bytes"] == 300
    assert built.row("get")["request"]["max_body_bytes"] == 4000


def test_without_a_limit_the_member_is_absent(tmp_path: Path) -> None:
    built = build(tmp_path, TICKETS, FOLLOWUP)
    assert built.row("record_followup")["request"]["max_body_bytes"] is None
    assert read_policy(built.out / "policy.json").row("record_followup").max_body_bytes is None  # type: ignore[union-attr]


@pytest.mark.parametrize("tool", ["preview_followup", "record_followup"])
def test_a_body_over_the_limit_is_refused_before_anything_is_sent(
    limited: Built, server: TicketsServer, tool: str
) -> None:
    reg = _registry(limited, server)
    args = _note(200) if tool.startswith("preview") else dict(_note(200), action_id="a-1")
    res = reg.call(tool, args, actor=WRITER)
    assert res.error is not None and res.error.code == "invalid_arguments", res.to_json()
    assert res.error.details["pointer"] == "/note" and res.error.details["max_body_bytes"] == 120
    assert res.error.details["body_bytes"] > 120 and "request.max_body_bytes" in res.error.message
    assert server.side_effects["addFollowup"] == 0 and server.requests_for("POST") == []


def test_a_body_within_the_limit_goes_through(limited: Built, server: TicketsServer) -> None:
    reg = _registry(limited, server)
    shown = reg.call("preview_followup", _note(10), actor=WRITER)
    assert shown.ok, shown.to_json()
    res = reg.call("record_followup", dict(_note(10), action_id="a-2"), actor=WRITER)
    assert res.ok, res.to_json()
    assert server.side_effects["addFollowup"] == 1


def test_the_intent_map_refuses_a_limit_below_one_byte(tmp_path: Path) -> None:
    built = build(tmp_path, TICKETS, FOLLOWUP + "    max_body_bytes: 0\n", expect=2)
    assert "max_body_bytes" in built.result.output and "api.yaml:" in built.result.output, built.result.output


def test_the_format_refuses_a_limit_below_one_byte(limited: Built) -> None:
    value = read_policy(limited.out / "policy.json").to_json()
    value["tools"][0]["request"]["max_body_bytes"] = 0
    with pytest.raises(PolicyFormatError) as info:
        from_json(value)
    assert info.value.pointer == "/tools/0/request/max_body_bytes"
