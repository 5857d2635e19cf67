"""A loopback HTTP server that answers every request with bytes scripted by the test, as they are:
a status line, headers and a body that may contradict its own Content-Length (a body cut short by
a closed connection), its Content-Type (text labelled JSON) or UTF-8 (invalid bytes).

`answer(status, body, content_type=..., length=None)` sets the next answers: `length` is the
Content-Length sent (default the body's length); when it is larger than the body, the server
closes the connection after the body, so the client sees the answer cut short. Every request is
counted (`requests`), so a test can prove a replay sent nothing.
"""

from __future__ import annotations

import socketserver
import threading
from dataclasses import dataclass, field

from toolgen.testing.loopback import LoopbackServer

_REASONS = {200: "OK", 201: "Created", 202: "Accepted", 204: "No Content"}


@dataclass
class _Script:
    status: int = 200
    body: bytes = b"{}"
    content_type: str | None = "application/json"
    length: int | None = None
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        length = 0
        while True:  # the request head; the body is read by its Content-Length
            line = self.rfile.readline(65537)
            if not line or line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length:
            self.rfile.read(length)
        script = self.server.script
        with script.lock:
            script.requests += 1
            status, body, ctype, sent_length = script.status, script.body, script.content_type, script.length
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'OK')}"]
        if ctype is not None:
            head.append(f"Content-Type: {ctype}")
        if status != 204:
            head.append(f"Content-Length: {len(body) if sent_length is None else sent_length}")
        head.append("Connection: close")
        self.wfile.write(
            ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (b"" if status == 204 else body)
        )
        self.wfile.flush()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = _Script()
        self.base_url = f"http://127.0.0.1:{self.server_address[1]}"


class RawAnswerServer(LoopbackServer):
    """Start with ``with RawAnswerServer() as srv:``; `base_url` has no path."""

    def __init__(self) -> None:
        self.raw: _Server = _Server()
        super().__init__(self.raw)

    @property
    def base_url(self) -> str:
        return self.raw.base_url

    @property
    def requests(self) -> int:
        with self.raw.script.lock:
            return self.raw.script.requests

    def answer(
        self,
        status: int,
        body: bytes,
        *,
        content_type: str | None = "application/json",
        length: int | None = None,
    ) -> None:
        """Answer the next requests with `status`, `body` and `content_type` (None: no Content-Type);
        `length` the Content-Length to claim (None: the body's)."""
        with self.raw.script.lock:
            self.raw.script.status, self.raw.script.body = status, body
            self.raw.script.content_type, self.raw.script.length = content_type, length
