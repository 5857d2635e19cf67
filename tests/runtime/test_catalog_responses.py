"""`toolgen catalog --dialect openai.responses`: the Responses catalog cut down to a caller's scopes.

Attacks: a function the scopes do not allow must not survive inside its namespace, a namespace left
empty must not be printed, the hosted `tool_search` entry must stay, and a package without the file
must be refused with exit 2 and the reason, not a traceback. Also: the MCP server's instructions
name the API once whether or not its title already ends in "API".
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.runtime_env import tickets_dir

from toolgen.cli import main
from toolgen.policy.format import read_policy
from toolgen.runtime.identity import permits

GITHUB = Path(__file__).resolve().parents[2] / "generated" / "github"


def _functions(document: list[dict[str, Any]]) -> list[str]:
    names = []
    for entry in document:
        if entry.get("type") == "namespace":
            names += [t["name"] for t in entry["tools"]]
        elif entry.get("type") == "function":
            names.append(entry["name"])
    return names


@pytest.mark.parametrize(
    "held",
    [set(), {"issues:read"}, {"issues:read", "issues:write"}, {"issues:read", "pulls:read", "repos:read"}],
)
def test_responses_catalog_keeps_exactly_the_allowed_functions(held: set[str]) -> None:
    policy = read_policy(GITHUB / "policy.json")
    full = json.loads((GITHUB / "openai.responses.json").read_text(encoding="utf-8"))
    out = CliRunner().invoke(
        main, ["catalog", str(GITHUB), "--dialect", "openai.responses", "--scopes", ",".join(sorted(held))]
    )
    assert out.exit_code == 0, out.output
    kept = json.loads(out.output)
    allowed = {row.tool for row in policy.tools if permits(row, held)}
    assert sorted(_functions(kept)) == sorted(n for n in _functions(full) if n in allowed)
    assert all(e["tools"] for e in kept if e.get("type") == "namespace"), "an empty namespace was printed"
    assert {"type": "tool_search"} in kept
    assert len(allowed) < len(_functions(full))  # the cut is real for every scope set above


def test_responses_catalog_of_a_package_without_one_is_refused() -> None:
    out = CliRunner().invoke(
        main, ["catalog", str(tickets_dir()), "--dialect", "openai.responses", "--scopes", ""]
    )
    assert out.exit_code == 2, out.output
    assert "only for a package with toolsets or deferred tools" in out.output


@pytest.mark.parametrize(
    "title, expected",
    [
        ("Tickets API", "Tools for the Tickets API, "),
        ("GitHub v3 REST API", "Tools for the GitHub v3 REST API, "),
        ("Stripe", "Tools for the Stripe API, "),
    ],
)
def test_server_instructions_name_the_api_once(title: str, expected: str) -> None:
    from toolgen.runtime import Actor, Registry
    from toolgen.runtime.serving.mcp_server import build_server

    registry = Registry.from_dir(tickets_dir())
    registry.table = dataclasses.replace(registry.table, title=title)
    instructions = build_server(registry, Actor("reader", frozenset())).instructions or ""
    assert instructions.startswith(expected), instructions
