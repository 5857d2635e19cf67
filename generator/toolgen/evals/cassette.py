"""Record and replay provider exchanges at the HTTP layer, so a recorded eval re-runs offline.

Input: the `httpx2.Client` the provider SDK sends through. Output: `RecordingTransport` sends each
request on and keeps ``{"request": {"method", "path", "body"}, "response": {"status",
"content_type", "body"}}`` (bodies as the text on the wire); `ReplayTransport` answers from such a
list, in order, and refuses (`ReplayMismatch`, kept in `.mismatch`) a request whose method, path
or body bytes differ from the recorded one: a replay is byte-for-byte or it fails. Hosts are not
compared (a replay runs against no server at all).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx2 as httpx


class ReplayMismatch(httpx.TransportError):
    """A replayed request is not the recorded one (or there is no recorded exchange left)."""


def _request_json(request: httpx.Request) -> dict[str, Any]:
    path = request.url.raw_path.decode("ascii")
    return {"method": request.method, "path": path, "body": request.read().decode("utf-8", "replace")}


class RecordingTransport(httpx.BaseTransport):
    """Sends through `inner` (default: a plain `httpx2.HTTPTransport`) and appends each exchange to
    `.exchanges`."""

    def __init__(self, inner: httpx.BaseTransport | None = None) -> None:
        self.inner = inner or httpx.HTTPTransport()
        self.exchanges: list[dict[str, Any]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        recorded = _request_json(request)
        response = self.inner.handle_request(request)
        body = response.read()
        response.close()
        content_type = response.headers.get("content-type", "application/json")
        self.exchanges.append(
            {
                "request": recorded,
                "response": {
                    "status": response.status_code,
                    "content_type": content_type,
                    "body": body.decode("utf-8", "replace"),
                },
            }
        )
        return httpx.Response(
            response.status_code, headers={"content-type": content_type}, content=body, request=request
        )

    def close(self) -> None:
        self.inner.close()


class ReplayTransport(httpx.BaseTransport):
    """Answers from recorded `exchanges` in order (see the module docstring)."""

    def __init__(self, exchanges: Sequence[dict[str, Any]]) -> None:
        self.exchanges = list(exchanges)
        self.position = 0
        self.mismatch: str | None = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        sent = _request_json(request)
        if self.position >= len(self.exchanges):
            self.mismatch = (
                f"exchange {self.position + 1}: no recorded exchange left for {sent['method']} {sent['path']}"
            )
            raise ReplayMismatch(self.mismatch)
        recorded = self.exchanges[self.position]
        for key in ("method", "path", "body"):
            if recorded["request"][key] != sent[key]:
                self.mismatch = (
                    f"exchange {self.position + 1}: the request's {key} differs from the recording"
                )
                raise ReplayMismatch(self.mismatch)
        self.position += 1
        response = recorded["response"]
        return httpx.Response(
            int(response["status"]),
            headers={"content-type": response["content_type"]},
            content=str(response["body"]).encode("utf-8"),
            request=request,
        )

    @property
    def finished(self) -> bool:
        return self.position == len(self.exchanges)
