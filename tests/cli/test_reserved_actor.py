"""``--actor jwt:...``: an id beginning ``jwt:`` is an authorization server's caller
(``jwt:<iss>#<sub>``, `toolgen.runtime.identity.issuer_caller_id`), so `toolgen call` and `toolgen
serve` (stdio, ``--http --no-auth``) refuse it before anything runs: acting as that caller they would
spend its ``per: actor`` limits, execute its stored previews and its issued approvals. `toolgen
approve --actor` names the caller whose preview is approved, so it takes such an id."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from tests.support.runtime_env import tickets_dir

from toolgen.cli import main

ALICE = "jwt:https://auth.example.test/#alice"


@pytest.mark.parametrize(
    "args",
    [
        ["call", "{dir}", "no_such_tool", "--actor", ALICE],
        ["serve", "{dir}", "--actor", ALICE],
        ["serve", "{dir}", "--http", "127.0.0.1:0", "--no-auth", "--actor", ALICE],
    ],
    ids=["call", "serve stdio", "serve --no-auth"],
)
def test_an_issuer_bound_actor_is_refused(args: list[str]) -> None:
    out = CliRunner().invoke(main, [a.replace("{dir}", str(tickets_dir())) for a in args], input="")
    assert out.exit_code == 2, out.output
    assert "reserved" in out.output and "toolgen approve" in out.output


def test_the_guard_another_actor_is_taken() -> None:
    """`toolgen call` with `--actor` of another spelling gets past the option to the call path (an
    unknown tool there: nothing is sent anywhere)."""
    out = CliRunner().invoke(main, ["call", str(tickets_dir()), "no_such_tool", "--actor", "JWT-ops"])
    assert "reserved" not in out.output and "unknown tool" in out.output, out.output
