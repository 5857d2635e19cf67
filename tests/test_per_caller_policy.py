"""``auth.X.per_caller`` of the intent map: lowered onto every row's ``auth[].per_caller``, read back
by the policy format (bad values refused at their JSON pointer), refused in the map where it makes no
sense, and the lint rule `shared-write-credential` that reports writes sharing one credential."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.build import REPO, Built, build, run

from toolgen.policy.format import PolicyFormatError, from_json, read_policy

TICKETS = REPO / "specs" / "tickets.yaml"
TOOLS = (
    "tools:\n  followup:\n    operation: addFollowup\n    effect: write\n    permission: ticket:write\n"
    '    idempotency: {key: action_id, send_as: "header:Idempotency-Key", honoured_by_api: true}\n'
    "  get:\n    operation: getTicket\n    effect: read\n    permission: ticket:read\n"
)
EXCHANGE = (
    "auth:\n  oauth:\n    secret: TICKETS_TOKEN\n"
    "    per_caller: {via: exchange, audience: 'https://api.test', scope: 'tickets.write'}\n"
)


@pytest.fixture(scope="module")
def exchanged(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("exchange"), TICKETS, EXCHANGE + TOOLS)


def test_per_caller_reaches_every_row_and_reads_back(exchanged: Built) -> None:
    for tool in ("preview_followup", "record_followup", "get"):
        assert exchanged.row(tool)["auth"][0]["per_caller"] == {
            "via": "exchange",
            "audience": "https://api.test",
            "resource": None,
            "scope": "tickets.write",
            "service_secret": "never",
        }
    table = read_policy(exchanged.out / "policy.json")
    assert from_json(table.to_json()) == table
    assert all(row.auth[0].per_caller is not None for row in table.tools)


def test_without_per_caller_the_member_is_null(tmp_path: Path) -> None:
    built = build(tmp_path, TICKETS, "auth:\n  oauth: {secret: TICKETS_TOKEN}\n" + TOOLS)
    assert {row["auth"][0]["per_caller"] for row in built.json("policy.json")["tools"]} == {None}


@pytest.mark.parametrize(
    ("member", "value"),
    [("via", "borrow"), ("service_secret", "sometimes"), ("audience", 7), ("extra", None)],
)
def test_the_format_refuses_bad_values_at_their_pointer(exchanged: Built, member: str, value: object) -> None:
    document = exchanged.json("policy.json")
    document["tools"][0]["auth"][0]["per_caller"][member] = value
    with pytest.raises(PolicyFormatError) as caught:
        from_json(document)
    assert "/tools/0/auth/0/per_caller" in str(caught.value)


def test_a_table_of_the_previous_format_is_refused(exchanged: Built) -> None:
    document = exchanged.json("policy.json")
    document["format"] = 2
    with pytest.raises(PolicyFormatError, match="/format"):
        from_json(document)


def test_lookup_takes_no_exchange_parameters(tmp_path: Path) -> None:
    body = "auth:\n  oauth:\n    secret: TICKETS_TOKEN\n    per_caller: {via: lookup, audience: x}\n" + TOOLS
    built = build(tmp_path, TICKETS, body, expect=2)
    assert "via: exchange" in built.result.output and "per_caller" in built.result.output


def lint(tmp_path: Path, auth: str) -> list[dict[str, object]]:
    intent = tmp_path / "api.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(TICKETS))}\napi: {{name: api}}\n{auth}{TOOLS}", encoding="utf-8"
    )
    result = run("lint", str(intent), "--format", "json")
    findings = json.loads(result.output)
    return [f for f in findings["findings"] if f["code"] == "shared-write-credential"]


@pytest.mark.parametrize(
    ("auth", "reported"),
    [
        ("auth:\n  oauth: {secret: TICKETS_TOKEN}\n", True),
        ("auth:\n  oauth: {secret: TICKETS_TOKEN, per_caller: {via: lookup}}\n", False),
        (
            "auth:\n  oauth: {secret: TICKETS_TOKEN, per_caller: {via: lookup, service_secret: reads}}\n",
            False,
        ),
        (
            "auth:\n  oauth: {secret: TICKETS_TOKEN, per_caller: {via: lookup, service_secret: always}}\n",
            True,
        ),
    ],
)
def test_lint_reports_writes_that_share_one_credential(tmp_path: Path, auth: str, reported: bool) -> None:
    found = lint(tmp_path, auth)
    assert bool(found) is reported
    if reported:
        assert "`record_followup`" in str(found[0]["message"]) and "oauth" in str(found[0]["message"])
        assert found[0]["severity"] == "info"


def test_diff_reports_a_credential_shared_again_as_risky(exchanged: Built, tmp_path: Path) -> None:
    from toolgen.review.diff import compare_tool

    shared = build(tmp_path, TICKETS, "auth:\n  oauth: {secret: TICKETS_TOKEN}\n" + TOOLS)
    before = {r.tool: r for r in read_policy(exchanged.out / "policy.json").tools}
    after = {r.tool: r for r in read_policy(shared.out / "policy.json").tools}
    loosened = compare_tool(
        "api", "record_followup", before["record_followup"], after["record_followup"], None, None
    )
    assert [(c.kind, c.risky) for c in loosened if c.kind.startswith("credential")] == [
        ("credential-shared", True)
    ]
    assert "each caller's own → shared by every caller" in next(c.detail for c in loosened if c.risky)
    tightened = compare_tool("api", "get", after["get"], before["get"], None, None)
    assert [(c.kind, c.risky) for c in tightened if c.kind.startswith("credential")] == [
        ("credential-per-caller", False)
    ]
    same = compare_tool("api", "get", before["get"], before["get"], None, None)
    assert same == []
