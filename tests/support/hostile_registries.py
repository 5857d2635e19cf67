"""Registries over the committed packages (``generated/<api>``), changed in memory only, for the tests
that set a hostile API against the runtime: the test secrets and cursor key they hold, the tickets
package against a loopback server (`tickets_registry`), and the package loading and row lookup the
tests build their own registries with (`load_package`, `row_of`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest
from tests.support.runtime_env import GENERATED

from toolgen.runtime import Actor, MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials

SECRETS = {
    "TICKETS_TOKEN": "tkt_live_HOSTILE_5e7f1a2b9c",
    "GITHUB_TOKEN": "ghp_liveHOSTILE0123456789abcdef",
    "API_KEY": "sk_live_HOSTILE_query_7d3c",
}
CURSOR_KEY = b"k" * 32

READER = Actor.of("reader", ["ticket:read"])


def load_package(api: str) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    folder = GENERATED / api
    if not (folder / "policy.json").is_file():
        pytest.skip(f"generated/{api} is not built")
    policy: dict[str, Any] = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    catalog: list[Mapping[str, Any]] = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
    return policy, catalog


def row_of(policy: dict[str, Any], tool: str) -> dict[str, Any]:
    row: dict[str, Any] = next(r for r in policy["tools"] if r["tool"] == tool)
    return row


def tickets_registry(
    server_base: str,
    *,
    tweak: Callable[[dict[str, Any]], None] | None = None,
    audit: MemoryAuditSink | None = None,
) -> Registry:
    """The tickets package against `server_base` (its ``/v1`` prefix added)."""
    policy, catalog = load_package("tickets")
    if tweak is not None:
        for row in policy["tools"]:
            tweak(row)
    return Registry(
        policy,
        catalog,
        base_url=server_base + "/v1",
        credentials=StaticCredentials(SECRETS),
        receipts=MemoryReceiptStore(),
        audit=audit if audit is not None else MemoryAuditSink(),
        cursor_key=CURSOR_KEY,
    )
