"""DNS-rebinding protection holds for every spelling of a loopback host.

`toolgen serve --http HOST:PORT` turns on the Host and Origin checks for loopback hosts: the case
where a page in the user's browser rebinds its own name to the loopback address and calls the tools
of a server started with ``--no-auth``. ``LOCALHOST``, ``localhost.`` and the IPv4-mapped
``::ffff:127.0.0.1`` name loopback too, but were taken for hosts beyond the machine: no check at
all (and a warning that tokens travel beyond it).
"""

from __future__ import annotations

import socket

import pytest
from tests.runtime.test_runtime_identity import make_registry
from tests.support.http_serving import http_server

from toolgen.runtime import Actor
from toolgen.runtime.serving.mcp_http import is_loopback
from toolgen.testing.tickets_server import TicketsServer

SPELLINGS = ["LOCALHOST", "localhost.", "Localhost", "::ffff:127.0.0.1", "[::ffff:127.0.0.2]"]


@pytest.mark.parametrize("host", SPELLINGS)
def test_every_spelling_of_loopback_is_loopback(host: str) -> None:
    assert is_loopback(host)


def _ipv6() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::ffff:127.0.0.1", 0))
        return True
    except OSError:
        return False


@pytest.mark.anyio
@pytest.mark.parametrize("host", ["LOCALHOST", "::ffff:127.0.0.1"])
async def test_a_rebound_host_is_refused_on_every_loopback_spelling(server: TicketsServer, host: str) -> None:
    import httpx

    if ":" in host and not _ipv6():
        pytest.skip("IPv6 sockets are not available here")
    registry = make_registry(server)
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    async with (
        http_server(registry, actor=Actor.of("local", ["ticket:read"]), host=host) as url,
        httpx.AsyncClient(timeout=10) as client,
    ):
        rebound = await client.post(url, json=listing, headers={**headers, "Host": "attacker.example"})
        assert rebound.status_code == 421, rebound.text
        foreign = await client.post(
            url, json=listing, headers={**headers, "Origin": "http://attacker.example"}
        )
        assert foreign.status_code == 403, foreign.text
        own = await client.post(url, json=listing, headers=headers)
        assert own.status_code == 200 and "get_ticket" in own.text, own.text
