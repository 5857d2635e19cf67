"""`serve_http` on a free loopback port inside the test's event loop (the MCP Streamable HTTP
tests share it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio

from toolgen.runtime.serving.mcp_http import serve_http
from toolgen.runtime.serving.registry import Registry


@asynccontextmanager
async def http_server(registry: Registry, **options: Any) -> AsyncIterator[str]:
    """`serve_http(registry, port=0, **options)` in this event loop; yields the endpoint URL once it
    listens (at most 20 s), and stops the server when the block ends."""
    urls: list[str] = []
    ready = anyio.Event()

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(serve_http, registry, port=0, on_ready=on_ready, **options))
        with anyio.fail_after(20):
            await ready.wait()
        try:
            yield urls[0]
        finally:
            tg.cancel_scope.cancel()
