"""The example tickets API (specs/tickets.yaml) as a real HTTP server: to try the runtime by hand, and
the API of the end-to-end runtime tests.

    python -m toolgen.testing.tickets_server --port 8765     # http://127.0.0.1:8765/v1, token below

Runs on 127.0.0.1 (port 0 = any free port) in a background thread (stdlib `ThreadingHTTPServer`),
keeps its data in memory (60 tickets, ``T-100`` … ``T-159``) and behaves like a careful real API:

- bearer-token check (401 problem+json without it);
- RFC 9457 ``application/problem+json`` errors (400/401/404/409/422);
- ``Idempotency-Key`` on ``POST /tickets/{id}/followups``: the same key with the same body replays
  the stored response without a second side effect; the same key with another body is a 422;
- ``GET /tickets/{id}/history`` sleeps `history_delay` seconds (1.5 s by default) so an 800 ms
  client timeout trips;
- `stall_next(...)`: the next mutating request commits its side effect and then stalls before
  answering — a write whose response is lost, as when a client times out;
- `side_effects[operationId]` counts writes that changed state; `requests` records every request.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from .loopback import LoopbackServer

#: The bearer token the example server accepts (``TICKETS_TOKEN`` for the runtime).
TOKEN = "test-token-7f3a"


def _ticket(n: int) -> dict[str, Any]:
    minute = f"{n % 60:02d}"
    return {
        "id": f"T-{n}",
        "subject": f"Printer {n} is on fire" if n % 7 == 0 else f"Question number {n}",
        "status": ("open", "pending", "closed")[n % 3],
        "priority": ("low", "normal", "high", "urgent")[n % 4],
        "requester": {"email": f"user{n}@example.com", "name": f"User {n}", "phone": f"+1-555-01{n:02d}"},
        "assignee": None if n % 2 else "agent@example.com",
        "body": "Long original request text. " * 20,
        "tags": ["billing"] if n % 5 == 0 else [],
        "followup_count": 0,
        "created_at": f"2025-01-{1 + n % 28:02d}T10:{minute}:00Z",
        "updated_at": f"2025-02-{1 + n % 28:02d}T11:{minute}:00Z",
    }


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes


@dataclass
class TicketsState:
    tickets: dict[str, dict[str, Any]] = field(default_factory=dict)
    followups: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    idempotency: dict[str, tuple[bytes, int, bytes]] = field(default_factory=dict)
    side_effects: Counter[str] = field(default_factory=Counter)
    requests: list[RecordedRequest] = field(default_factory=list)
    stall: list[tuple[float, bool]] = field(default_factory=list)  # (seconds, after_commit)
    history_delay: float = 1.5
    next_followup: int = 1
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: which ``Authorization`` values the API accepts (default: ``Bearer`` + `TOKEN` alone)
    accepts: Callable[[str | None], bool] = field(default=lambda value: value == f"Bearer {TOKEN}")


class _Handler(BaseHTTPRequestHandler):
    server: TicketsHTTPServer
    protocol_version = "HTTP/1.1"
    # buffer the response (status line, headers, body) into one write; BaseHTTPRequestHandler
    # flushes after each request. Unbuffered writes + Nagle + delayed ACK cost ~40 ms per call.
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # silence
        pass

    # -- plumbing ----------------------------------------------------------------------------------

    def _send(
        self,
        status: int,
        body: Any = None,
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        data = b"" if body is None else json.dumps(body).encode("utf-8")
        self.send_response(status)
        if data:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if data:
            self.wfile.write(data)

    def _problem(self, status: int, title: str, detail: str, **extra: Any) -> None:
        body = {
            "type": f"https://tickets.example/problems/{status}",
            "title": title,
            "status": status,
            "detail": detail,
            **extra,
        }
        self._send(status, body, content_type="application/problem+json")

    def _dispatch(self, method: str) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        with state.lock:
            state.requests.append(RecordedRequest(method, parts.path, query, dict(self.headers.items()), raw))
        if not state.accepts(self.headers.get("Authorization")):
            self._problem(401, "Unauthorized", "A valid bearer token is required.")
            return
        segments = [unquote(s) for s in parts.path.split("/") if s]
        if segments[:1] != ["v1"] or len(segments) < 2 or segments[1] != "tickets":
            self._problem(404, "Not Found", "No such route.")
            return
        rest = segments[2:]
        if method == "GET" and not rest:
            self._list(query)
        elif method == "GET" and len(rest) == 1:
            self._get(rest[0])
        elif method == "DELETE" and len(rest) == 1:
            self._delete(rest[0])
        elif method == "POST" and len(rest) == 2 and rest[1] == "followups":
            self._add_followup(rest[0], raw)
        elif method == "GET" and len(rest) == 2 and rest[1] == "history":
            self._history(rest[0])
        else:
            self._problem(404, "Not Found", "No such route.")

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _maybe_stall(self, after_commit: bool) -> None:
        state = self.server.state
        with state.lock:
            if not state.stall or state.stall[0][1] != after_commit:
                return
            seconds, _ = state.stall.pop(0)
        time.sleep(seconds)

    # -- operations --------------------------------------------------------------------------------

    def _list(self, query: dict[str, list[str]]) -> None:
        state = self.server.state
        try:
            limit = int(query.get("limit", ["20"])[0])
        except ValueError:
            self._problem(400, "Bad Request", "limit must be an integer.")
            return
        if not 1 <= limit <= 100:
            self._problem(400, "Bad Request", "limit must be between 1 and 100.")
            return
        with state.lock:
            tickets = sorted(state.tickets.values(), key=lambda t: (t["created_at"], t["id"]), reverse=True)
        status = query.get("status", [None])[0]
        if status is not None:
            tickets = [t for t in tickets if t["status"] == status]
        after = query.get("starting_after", [None])[0]
        if after is not None:
            ids = [t["id"] for t in tickets]
            if after not in ids:
                self._problem(400, "Bad Request", f"starting_after {after!r} is not a ticket of this list.")
                return
            tickets = tickets[ids.index(after) + 1 :]
        page = tickets[:limit]
        self._send(200, {"data": page, "has_more": len(tickets) > limit})

    def _get(self, ticket_id: str) -> None:
        state = self.server.state
        with state.lock:
            ticket = state.tickets.get(ticket_id)
        if ticket is None:
            self._problem(404, "Not Found", f"Ticket {ticket_id} does not exist.")
            return
        self._send(200, ticket)

    def _delete(self, ticket_id: str) -> None:
        state = self.server.state
        self._maybe_stall(after_commit=False)
        with state.lock:
            ticket = state.tickets.pop(ticket_id, None)
            if ticket is not None:
                state.followups.pop(ticket_id, None)
                state.side_effects["deleteTicket"] += 1
        if ticket is None:
            self._problem(404, "Not Found", f"Ticket {ticket_id} does not exist.")
            return
        self._maybe_stall(after_commit=True)
        self._send(204)

    def _add_followup(self, ticket_id: str, raw: bytes) -> None:
        state = self.server.state
        self._maybe_stall(after_commit=False)
        key = self.headers.get("Idempotency-Key")
        with state.lock:
            if key is not None and key in state.idempotency:
                stored_body, status, response = state.idempotency[key]
                replay = stored_body == raw
            else:
                replay = None
        if replay is True:
            self._send_raw(status, response, {"Idempotent-Replayed": "true"})
            return
        if replay is False:
            self._problem(
                422, "Idempotency Key Reused", "This Idempotency-Key was used with a different body."
            )
            return
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            self._problem(400, "Bad Request", "Body is not JSON.")
            return
        if not isinstance(body, dict) or not isinstance(body.get("note"), str) or not body["note"]:
            self._problem(422, "Unprocessable Content", "note is required.", errors=[{"pointer": "/note"}])
            return
        unknown = set(body) - {"note", "visibility"}
        if unknown:
            self._problem(422, "Unprocessable Content", f"Unknown or read-only fields: {sorted(unknown)}.")
            return
        with state.lock:
            ticket = state.tickets.get(ticket_id)
            if ticket is None:
                missing = True
            else:
                missing = False
                followup = {
                    "id": f"F-{state.next_followup}",
                    "ticket_id": ticket_id,
                    "note": body["note"],
                    "visibility": body.get("visibility", "internal"),
                    "author": "api",
                    "created_at": "2025-03-01T12:00:00Z",
                }
                state.next_followup += 1
                state.followups.setdefault(ticket_id, []).append(followup)
                ticket["followup_count"] += 1
                state.side_effects["addFollowup"] += 1
                response = json.dumps(followup).encode("utf-8")
                if key is not None:
                    state.idempotency[key] = (raw, 201, response)
        if missing:
            self._problem(404, "Not Found", f"Ticket {ticket_id} does not exist.")
            return
        self._maybe_stall(after_commit=True)
        self._send_raw(201, response, {})

    def _send_raw(self, status: int, data: bytes, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(data)

    def _history(self, ticket_id: str) -> None:
        state = self.server.state
        time.sleep(state.history_delay)
        with state.lock:
            ticket = state.tickets.get(ticket_id)
        if ticket is None:
            self._problem(404, "Not Found", f"Ticket {ticket_id} does not exist.")
            return
        entries = [{"at": ticket["created_at"], "event": "created", "actor": "customer"}]
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._send(200, {"entries": entries})


class TicketsHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, state: TicketsState, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.state = state


class TicketsServer(LoopbackServer):
    """Start/stop wrapper. `base_url` ends in ``/v1``; `token` is the accepted bearer token, unless
    `accepts` decides which ``Authorization`` values the API accepts (e.g. access tokens of an
    authorization server, each caller's own)."""

    def __init__(
        self, n_tickets: int = 60, *, port: int = 0, accepts: Callable[[str | None], bool] | None = None
    ) -> None:
        self.state = TicketsState() if accepts is None else TicketsState(accepts=accepts)
        for n in range(100, 100 + n_tickets):
            t = _ticket(n)
            self.state.tickets[t["id"]] = t
        self.httpd: TicketsHTTPServer = TicketsHTTPServer(self.state, port)
        super().__init__(self.httpd)
        self.token = TOKEN

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def side_effects(self) -> Counter[str]:
        return self.state.side_effects

    def stall_next(self, seconds: float = 2.0, *, after_commit: bool = True, count: int = 1) -> None:
        """Make the next `count` mutating requests stall `seconds` (after committing their side
        effect when `after_commit`, else before doing anything)."""
        with self.state.lock:
            self.state.stall.extend([(seconds, after_commit)] * count)

    def requests_for(self, method: str, path_suffix: str = "") -> list[RecordedRequest]:
        with self.state.lock:
            return [r for r in self.state.requests if r.method == method and r.path.endswith(path_suffix)]


def main(argv: list[str] | None = None) -> None:
    """``python -m toolgen.testing.tickets_server [--port N]``: serve until Ctrl-C."""
    parser = argparse.ArgumentParser(
        prog="python -m toolgen.testing.tickets_server",
        description="The example tickets API on 127.0.0.1, data in memory.",
    )
    parser.add_argument("--port", type=int, default=8765, help="TCP port on 127.0.0.1 (0: any free port)")
    options = parser.parse_args(argv)
    with TicketsServer(port=options.port) as srv:
        print(f"tickets API on {srv.base_url}; bearer token: {srv.token}", flush=True)
        print(f"  export TICKETS_TOKEN={srv.token}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
