"""Intent-map mistakes that must not pass silently: each is a located error (exit 2, nothing written)
or, where the build can still be right, a located warning."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
from tests.support.build import REPO, build

TICKETS = REPO / "specs" / "tickets.yaml"


@pytest.mark.parametrize(
    "body, code, where",
    [
        (
            (
                "tools:\n  get_ticket:\n    operation: getTicket\n    effect: read\n"
                "    output: {redact: [requester.mail]}\n"
            ),
            "output-redact-unknown",
            "api.yaml:8:",
        ),
        (
            "auth:\n  oauht: {secret: T}\ntools:\n  get_ticket: {operation: getTicket, effect: read}\n",
            "auth-scheme-unknown",
            "api.yaml:5:",
        ),
        (
            "tools:\n  get_ticket: {operation: getTicket, effect: read, permission: 'ticket:read ticket:write'}\n",
            "permission-invalid",
            "api.yaml:5:",
        ),
        (
            "tools:\n  get_ticket: {operation: getTicket, effect: read, permission: ''}\n",
            "permission-invalid",
            "api.yaml:5:",
        ),
        (
            (
                "tools:\n  list_tickets:\n    operation: listTickets\n    effect: read\n"
                "    pagination: {style: cursor, cursor: starting_after, items: data}\n"
            ),
            "pagination-next-missing",
            "api.yaml:8:",
        ),
        (
            (
                "tools:\n  list_tickets:\n    operation: listTickets\n    effect: read\n"
                "    pagination: {style: cursor, cursor: starting_after, items: data, next: next_token}\n"
            ),
            "pagination-field-missing",
            "api.yaml:8:",
        ),
        (
            (
                "tools:\n  list_tickets:\n    operation: listTickets\n    effect: read\n"
                "    pagination: {style: cursor, cursor: starting_after, items: data, has_more: has_more, cursor_from_item: ident}\n"
            ),
            "pagination-field-missing",
            "api.yaml:8:",
        ),
        (
            "tools:\n  list_tickets:\n    operation: listTickets\n    effect: read\n    fixed: {status: archived}\n",
            "fixed-invalid",
            "api.yaml:8:",
        ),
    ],
)
def test_mistake_is_a_located_error(tmp_path: Path, body: str, code: str, where: str) -> None:
    built = build(tmp_path, TICKETS, body, expect=2)
    assert f"error[{code}]" in built.result.output and where in built.result.output, built.result.output
    assert not (tmp_path / "out").exists()


def test_api_name_must_be_importable(tmp_path: Path) -> None:
    intent = tmp_path / "m.yaml"
    intent.write_text(f"toolgen: 1\nspec: {TICKETS}\napi: {{name: import}}\ntools: {{}}\n")
    from tests.support.build import run

    result = run("build", str(intent), "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and "Python keyword" in result.output and "m.yaml:3:" in result.output


def test_include_matching_nothing_is_a_warning(tmp_path: Path) -> None:
    built = build(tmp_path, TICKETS, 'include: [{match: "tag:nosuchtag"}]\n')
    report = (built.out / "REPORT.md").read_text()
    assert "include-matches-nothing" in report


def test_redacted_field_keeps_a_valid_output_schema(tmp_path: Path) -> None:
    built = build(
        tmp_path,
        TICKETS,
        "tools:\n  get_ticket:\n    operation: getTicket\n    effect: read\n"
        "    output: {fields: [id, requester.email], redact: [requester.email]}\n",
    )
    schema = built.tool("mcp", "get_ticket")["outputSchema"]
    jsonschema.validate(
        {"id": "T-1", "requester": {"email": "[redacted]"}},
        schema,
        cls=jsonschema.Draft202012Validator,
        format_checker=jsonschema.FormatChecker(),
    )


def test_build_fails_on_lint_errors(tmp_path: Path) -> None:
    """A lint error fails the build (exit 1), printed and located; nothing is written."""
    built = build(
        tmp_path,
        TICKETS,
        "tools:\n  ticket_delete:\n    operation: deleteTicket\n"
        "    effect: destructive\n    permission: ticket:delete\n    approval: never\n"
        "    idempotency: {key: action_id}\n",
        expect=1,
    )
    assert "api.yaml:" in built.result.output and "error[destructive-without-approval]" in built.result.output
    assert not built.out.exists()
