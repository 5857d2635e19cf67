"""Registries over the committed packages (``generated/<api>``), changed in memory only, for the tests
that set a hostile API against the runtime: the test secrets and cursor key they hold, the tickets
package against a loopback server (`tickets_registry`), and the row lookup the tests build their own
registries with (`row_of`; the packages themselves: `tests.support.runtime_env.load_package`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.runtime_env import load_package

from toolgen.runtime import Actor, MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials

SECRETS = {
    "TICKETS_TOKEN": "tkt_live_HOSTILE_5e7f1a2b9c",
    "GITHUB_TOKEN": "ghp_liveHOSTILE0123456789abcdef",
    "API_KEY": "sk_live_HOSTILE_query_7d3c",
}
CURSOR_KEY = b"k" * 32

READER = Actor.of("reader", ["ticket:read"])


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
        list(catalog),
        base_url=server_base + "/v1",
        credentials=StaticCredentials(SECRETS),
        receipts=MemoryReceiptStore(),
        audit=audit if audit is not None else MemoryAuditSink(),
        cursor_key=CURSOR_KEY,
    )
