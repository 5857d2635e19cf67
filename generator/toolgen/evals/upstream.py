"""The loopback upstream an eval's tool calls reach, behind a fixed virtual base URL.

Input: the API's policy (its name and the secrets its auth rows name) and either nothing (the API
is ``tickets``: the example server `toolgen.testing.tickets_server` is started, fresh for each
task) or the URL of a server the user runs (``prism mock SPEC``, a staging API). Output: an
`Upstream` that yields, per task, the httpx client, credentials and the tickets state (when it is
the example server) a `Registry` needs.

The registry always sees the base URL ``http://<api>.eval.invalid<path>``; `_Rebase` sends each
request to the real loopback port. So previews, which show the exact URL, are the same in every run
and a recorded conversation replays byte-for-byte whatever port the server got.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..runtime import StaticCredentials
from ..testing.tickets_server import TOKEN, TicketsServer


class _Rebase(httpx.BaseTransport):
    def __init__(self, target: str) -> None:
        parts = urlsplit(target)
        self.scheme, self.host, self.port = parts.scheme, parts.hostname or "127.0.0.1", parts.port
        self.inner = httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.url = request.url.copy_with(scheme=self.scheme, host=self.host, port=self.port)
        request.headers["host"] = f"{self.host}:{self.port}" if self.port else self.host
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


@dataclass
class Connection:
    """What one task's `Registry` is built with; `tickets` is the example server (else None)."""

    base_url: str
    http_client: httpx.Client
    credentials: StaticCredentials
    tickets: TicketsServer | None


def virtual_base_url(api: str, policy_base_url: str) -> str:
    """``http://<api>.eval.invalid`` + the path of the policy's base URL."""
    path = urlsplit(policy_base_url).path.rstrip("/")
    return f"http://{api}.eval.invalid{path}"


def _secrets(policy: Mapping[str, Any]) -> list[str]:
    names = {
        str(a["secret"]) for row in policy.get("tools", []) for a in row.get("auth") or [] if a.get("secret")
    }
    return sorted(names)


@contextmanager
def connect(
    policy: Mapping[str, Any], upstream: str | None, token: str | None = None
) -> Iterator[Connection]:
    """One task's connection (see the module docstring). Raises `ValueError` when the API is not
    ``tickets`` and no `upstream` URL is given."""
    api = str(policy.get("api", ""))
    base = virtual_base_url(api, str(policy.get("base_url", "")))
    server: TicketsServer | None = None
    if upstream is None:
        if api != "tickets":
            raise ValueError(
                f"no loopback upstream for {api!r}: start a mock of its spec (e.g. "
                f"`prism mock SPEC -p 4010`) and pass --upstream http://127.0.0.1:4010"
            )
        server = TicketsServer().start()
        target, secret = server.base_url, token or TOKEN
    else:
        target, secret = upstream, token or "eval-token"
    client = httpx.Client(transport=_Rebase(target))
    try:
        yield Connection(base, client, StaticCredentials({name: secret for name in _secrets(policy)}), server)
    finally:
        client.close()
        if server is not None:
            server.stop()
