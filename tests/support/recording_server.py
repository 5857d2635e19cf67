"""A loopback HTTP server that records every request and answers 200 ``{}`` (or a scripted reply).

Used to prove request building for any API's generated tools without that API: tests call tools
through the runtime with the base URL pointed here, then assert on the exact method, path, query
string, headers and body that arrived. `reply(...)` scripts answers by method and path regex (e.g. a
list page with a ``Link`` header, or a 404 problem).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from toolgen.testing.loopback import LoopbackServer


@dataclass
class Recorded:
    """One received request: `path` is the raw (still percent-encoded) path, `query` the decoded
    pairs in order, `raw_query` the query string as sent."""

    method: str
    path: str
    raw_query: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def form(self) -> list[tuple[str, str]]:
        return parse_qsl(self.body.decode("ascii"), keep_blank_values=True)

    def header(self, name: str) -> str | None:
        for k, v in self.headers.items():
            if k.lower() == name.lower():
                return v
        return None


@dataclass
class _Rule:
    method: str
    pattern: re.Pattern[str]
    status: int
    body: Any
    headers: dict[str, str]
    content_type: str


@dataclass
class _State:
    requests: list[Recorded] = field(default_factory=list)
    rules: list[_Rule] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    # buffer the response (status line, headers, body) into one write; BaseHTTPRequestHandler
    # flushes after each request. Unbuffered writes + Nagle + delayed ACK cost ~40 ms per call.
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        rec = Recorded(
            self.command,
            parts.path,
            parts.query,
            parse_qsl(parts.query, keep_blank_values=True),
            dict(self.headers.items()),
            raw,
        )
        state = self.server.state
        with state.lock:
            state.requests.append(rec)
            rule = next(
                (
                    r
                    for r in reversed(state.rules)
                    if r.method in (self.command, "*") and r.pattern.search(parts.path)
                ),
                None,
            )
        status, body, headers, ctype = 200, {}, {}, "application/json"
        if rule is not None:
            status, body, headers, ctype = rule.status, rule.body, rule.headers, rule.content_type
        data = (
            b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode("utf-8"))
        )
        self.send_response(status)
        if data:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v.replace("{base}", self.server.base_url))
        self.end_headers()
        if data:
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = _State()
        port = self.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}"


class RecordingServer(LoopbackServer):
    """Start with ``with RecordingServer() as srv:``; `base_url` has no path."""

    def __init__(self) -> None:
        self.httpd: _Server = _Server()
        super().__init__(self.httpd)

    @property
    def base_url(self) -> str:
        return self.httpd.base_url

    @property
    def requests(self) -> list[Recorded]:
        with self.httpd.state.lock:
            return list(self.httpd.state.requests)

    @property
    def last(self) -> Recorded:
        return self.requests[-1]

    def clear(self) -> None:
        with self.httpd.state.lock:
            self.httpd.state.requests.clear()

    def reply(
        self,
        method: str,
        path_regex: str,
        status: int = 200,
        body: Any = None,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        """Answer requests matching (method or ``*``, path regex) with this reply; later rules win.
        ``{base}`` in header values is replaced by the server's base URL (for Link headers)."""
        with self.httpd.state.lock:
            self.httpd.state.rules.append(
                _Rule(
                    method,
                    re.compile(path_regex),
                    status,
                    {} if body is None and status != 204 else body,
                    headers or {},
                    content_type,
                )
            )
