"""A fault-injecting loopback HTTP API for runtime trust tests.

`FaultServer` listens on 127.0.0.1 (a free port), records every request exactly as it arrived
(method, raw path, raw query, header pairs in order, body bytes) and answers from routes and
per-route fault scripts:

- ``route(method, path_regex, status, body)`` sets the normal answer of a path (a write performed
  by that answer counts as one side effect);
- ``script(method, path_regex, *faults)`` queues `Fault`s; each matching request consumes one, and
  once the queue is empty the normal answer is given again.

Faults: a write that happens and then hangs past the client's timeout (`Fault.hang`), a dropped
connection with or without the write (`Fault.drop`), Stripe's ``409 idempotency_key_in_use``
(`Fault.key_in_use`), 429 with ``Retry-After``, any status such as 500/502/503/504 (`Fault.answer`),
2xx with HTML or invalid JSON, oversized bodies, bodies nested N deep (whole body or inside one
field), a 2xx body that echoes the request's ``Authorization`` value (also in a response header)
and 3xx redirects. ``pages(...)`` serves a
cursor-paginated list (``limit`` / ``starting_after`` / ``has_more``, as Stripe and the tickets API).

``honours_keys=True`` makes the server deduplicate by the ``Idempotency-Key`` header like Stripe: a
key whose write completed is answered with the stored response (``Idempotent-Replayed: true``) and
no new side effect; a key whose first request is still executing gets ``409
idempotency_key_in_use``. ``honours_keys=False`` performs every write it is sent. Side effects are
counted per key (``None`` for requests without a key) and in total.

A request whose connection ends before its whole body came (the client's deadline passed between
writing its head and its body) is incomplete (RFC 9112 section 6.3): it is only counted
(`incomplete_requests`), never recorded, answered or performed.

Every wait is bounded and interruptible by `stop`; handler threads are daemons.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import re
import select
import socket
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

from toolgen.testing.loopback import LoopbackServer

#: Methods whose requests change nothing on the server unless a fault says otherwise.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Largest request body the server reads (bytes); anything longer is cut.
MAX_REQUEST_BYTES = 16 * 1024 * 1024
#: Longest any fault may hold a handler thread (seconds).
MAX_HOLD_SECONDS = 10.0

KEY_IN_USE_BODY: dict[str, Any] = {
    "error": {
        "type": "idempotency_error",
        "code": "idempotency_key_in_use",
        "message": "There is currently another in-progress request using this Idempotency-Key; "
        "try again later.",
    }
}


@dataclass
class Received:
    """One request as it arrived: `target` is the raw request target, `path` and `raw_query` its
    two halves (still percent-encoded), `headers` the header pairs in order. `answered` is the
    status the server answered with (``None`` while handling, or when it hung or dropped)."""

    seq: int
    method: str
    target: str
    path: str
    raw_query: str
    headers: list[tuple[str, str]]
    body: bytes
    at: float
    answered: int | None = None

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None

    @property
    def query(self) -> list[tuple[str, str]]:
        return parse_qsl(self.raw_query, keep_blank_values=True)

    @property
    def key(self) -> str | None:
        return self.header("Idempotency-Key")

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def form(self) -> list[tuple[str, str]]:
        return parse_qsl(self.body.decode("utf-8"), keep_blank_values=True)


@dataclass(frozen=True)
class Fault:
    """What to do with one request. `write` says whether the request performs its side effect
    (``None``: yes for unsafe methods when the fault answers 2xx or hangs, no otherwise; a dropped
    connection writes only when told to)."""

    kind: str
    status: int = 200
    body: bytes | None = None
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()
    seconds: float = 0.0
    write: bool | None = None
    hold_key: bool = False
    fields: tuple[str, ...] = ()
    depth: int = 0

    # -- constructors ------------------------------------------------------------------------------

    @classmethod
    def ok(cls) -> Fault:
        """The route's normal answer (the default once a script is used up)."""
        return cls("ok")

    @classmethod
    def hang(cls, seconds: float = 2.0, *, write: bool = True, hold_key: bool = False) -> Fault:
        """Perform the write (unless `write` is false), then send nothing for `seconds` and close.
        With `hold_key` the Idempotency-Key stays "in progress" while hanging (a key-honouring
        server answers 409 to other requests with it); otherwise the write completes at once and
        only its answer is lost."""
        return cls("hang", seconds=seconds, write=write, hold_key=hold_key)

    @classmethod
    def trickle(cls, interval: float = 0.05, *, part: str = "headers", write: bool = True) -> Fault:
        """Perform the write (unless `write` is false), then answer one byte every `interval`
        seconds until `MAX_HOLD_SECONDS` or the client hangs up: of an endless header
        (`part` ``"headers"``: the headers never end) or, after whole headers announcing 1 MB, of
        the body (``"body"``)."""
        return cls("trickle", seconds=interval, write=write, fields=(part,))

    @classmethod
    def drop(cls, *, write: bool = False, after: float = 0.0) -> Fault:
        """Read the request, perform the write if `write`, wait `after` seconds, then close the
        connection without answering."""
        return cls("drop", seconds=after, write=write)

    @classmethod
    def key_in_use(cls) -> Fault:
        """Stripe's answer while another request with the same key is executing."""
        return cls("reply", status=409, body=json.dumps(KEY_IN_USE_BODY).encode(), write=False)

    @classmethod
    def rate_limited(cls, retry_after: str = "0") -> Fault:
        body = {"error": {"type": "rate_limit_error", "message": "Too many requests"}}
        return cls(
            "reply",
            status=429,
            body=json.dumps(body).encode(),
            headers=(("Retry-After", retry_after),),
            write=False,
        )

    @classmethod
    def answer(
        cls, status: int, body: Any = None, *, write: bool = False, headers: dict[str, str] | None = None
    ) -> Fault:
        """Any status with a JSON body (default ``{"error": {"message": ...}}``)."""
        payload = body if body is not None else {"error": {"type": "api_error", "message": f"HTTP {status}"}}
        return cls(
            "reply",
            status=status,
            body=json.dumps(payload).encode(),
            write=write,
            headers=tuple((headers or {}).items()),
        )

    @classmethod
    def html(cls, status: int = 200) -> Fault:
        page = b"<!DOCTYPE html><html><head><title>Gateway</title></head><body><h1>OK</h1></body></html>"
        return cls("reply", status=status, body=page, content_type="text/html; charset=utf-8")

    @classmethod
    def invalid_json(cls, status: int = 200) -> Fault:
        return cls("reply", status=status, body=b'{"id": "obj_1", "broken": [1, 2,, }')

    @classmethod
    def oversized(cls, n_bytes: int, status: int = 200) -> Fault:
        """A syntactically valid JSON object of `n_bytes` bytes."""
        head, tail = b'{"id":"obj_big","pad":"', b'"}'
        pad = max(0, n_bytes - len(head) - len(tail))
        return cls("reply", status=status, body=head + b"x" * pad + tail)

    @classmethod
    def nested(cls, depth: int, status: int = 200) -> Fault:
        """A body of `depth` nested objects: ``{"a":{"a":...1...}}``."""
        return cls("reply", status=status, body=nested_json(depth).encode())

    @classmethod
    def nested_field(cls, field_name: str, depth: int, status: int = 200) -> Fault:
        """The route's normal body with `field_name` replaced by `depth` nested arrays."""
        return cls("nested_field", status=status, fields=(field_name,), depth=depth)

    @classmethod
    def echo_auth(cls, *fields: str, status: int = 200) -> Fault:
        """The route's normal body with `fields` set to the request's Authorization value, an
        ``echo`` member holding every request header, and the value in ``X-Echo-Authorization``."""
        return cls("echo", status=status, fields=fields)

    @classmethod
    def redirect(cls, status: int = 302, location: str = "/moved", *, write: bool = False) -> Fault:
        return cls("reply", status=status, body=b"", headers=(("Location", location),), write=write)


def nested_json(depth: int, leaf: str = "1") -> str:
    """``{"a":`` × depth, `leaf`, ``}`` × depth (built without recursion)."""
    return '{"a":' * depth + leaf + "}" * depth


def nested_array_json(depth: int, leaf: str = '"x"') -> str:
    return "[" * depth + leaf + "]" * depth


Body = Any  # a JSON value, raw bytes, or a callable (Received, side_effect_number) -> JSON value


@dataclass
class _Route:
    method: str
    pattern: re.Pattern[str]
    status: int = 200
    body: Body = None
    headers: dict[str, str] = field(default_factory=dict)
    faults: deque[Fault] = field(default_factory=deque)
    pager: dict[str, Any] | None = None

    def matches(self, method: str, path: str) -> bool:
        return self.method in (method, "*") and self.pattern.search(path) is not None


@dataclass
class _Stored:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


@dataclass
class _State:
    lock: threading.Lock = field(default_factory=threading.Lock)
    idle: threading.Condition = field(init=False)
    requests: list[Received] = field(default_factory=list)
    routes: list[_Route] = field(default_factory=list)
    side_effects: Counter[str | None] = field(default_factory=Counter)
    total_side_effects: int = 0
    in_flight_keys: Counter[str] = field(default_factory=Counter)
    stored: dict[str, _Stored] = field(default_factory=dict)
    active: int = 0
    incomplete: int = 0
    #: open connections, each with whether a request is being taken in on it (`_Intake`)
    taking_in: dict[socket.socket, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.idle = threading.Condition(self.lock)


class _Intake(io.RawIOBase):
    """The handler's socket reader. Each ``recv`` happens under the server's lock and marks its
    connection as taking in a request, so `FaultServer.wait_received` never sees a moment where
    bytes have left the socket and the request they start is not yet recorded."""

    def __init__(self, sock: socket.socket, owner: FaultServer) -> None:
        super().__init__()
        self.sock, self.owner = sock, owner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.owner.stopping.is_set():
            select.select([self.sock], [], [], 0.05)
            with self.owner.state.lock:
                try:
                    n = self.sock.recv_into(buffer, 0, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    continue
                if n:
                    self.owner.state.taking_in[self.sock] = True
                return n
        return 0


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    protocol_version = "HTTP/1.1"
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the socket file the base class made: reads go through `_Intake`
        self.rfile = io.BufferedReader(_Intake(self.connection, self.server.owner), 64 * 1024)

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        finally:
            self._taken_in()

    def _taken_in(self) -> None:
        """The request on this connection is recorded and its write decided (or it is over)."""
        with self.server.owner.state.lock:
            if self.connection in self.server.owner.state.taking_in:
                self.server.owner.state.taking_in[self.connection] = False

    # -- reading -----------------------------------------------------------------------------------

    def _read_body(self) -> bytes | None:
        """The request body; ``None`` when the connection ended before the body the head announced
        (fewer bytes than ``Content-Length``, or a chunked body without its last chunk): an
        incomplete message, which RFC 9112 section 6.3 says a recipient must not treat as a
        request. A client abandons a request so when its deadline passes between writing the head
        and the body."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            out = bytearray()
            for _ in range(100_000):  # bounded: at most this many chunks
                line = self.rfile.readline(1024)
                if not line:
                    return None
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline(1024)
                    break
                want = min(size, MAX_REQUEST_BYTES - len(out))
                chunk = self.rfile.read(want)
                if len(chunk) < want:
                    return None
                out += chunk
                self.rfile.readline(1024)
                if len(out) >= MAX_REQUEST_BYTES:
                    break
            return bytes(out)
        length = min(int(self.headers.get("Content-Length") or 0), MAX_REQUEST_BYTES)
        if length <= 0:
            return b""
        body = self.rfile.read(length)
        return body if len(body) == length else None

    # -- writing -----------------------------------------------------------------------------------

    def _answer(
        self, status: int, body: bytes, headers: list[tuple[str, str]], content_type: str | None
    ) -> None:
        current = getattr(self, "current", None)
        if current is not None:
            with self.server.owner.state.lock:
                current.answered = status
        try:
            self.send_response(status)
            if body and content_type:
                self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers:
                self.send_header(k, v)
            self.end_headers()
            if body:
                view = memoryview(body)
                for start in range(0, len(body), 256 * 1024):
                    self.wfile.write(view[start : start + 256 * 1024])
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def _trickle(self, srv: FaultServer, fault: Fault) -> None:
        """Send a 200 answer one byte every `fault.seconds` (see `Fault.trickle`), then close."""
        if fault.fields[0] == "body":
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n"
            filler = b" "
        else:
            head = b"HTTP/1.1 200 OK\r\nX-Slow: "
            filler = b"a"
        until = time.monotonic() + MAX_HOLD_SECONDS
        try:
            self.wfile.write(head[:1] if fault.fields[0] != "body" else head)
            self.wfile.flush()
            rest = head[1:] if fault.fields[0] != "body" else b""
            while time.monotonic() < until and not srv.stopping.wait(fault.seconds):
                byte, rest = (rest[:1], rest[1:]) if rest else (filler, b"")
                self.wfile.write(byte)
                self.wfile.flush()
        except OSError:
            pass
        self._abandon()

    def _abandon(self) -> None:
        """Close the connection without an answer."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.wfile.flush()

    # -- dispatch ----------------------------------------------------------------------------------

    def _handle(self) -> None:
        srv = self.server.owner
        state = srv.state
        body = self._read_body()
        if body is None:  # the client hung up before the whole body: no request arrived
            with state.lock:
                state.incomplete += 1
            self._abandon()
            return
        parts = self.requestline.split(" ")
        target = parts[1] if len(parts) >= 3 else self.path  # the raw request target, untouched
        path, _, raw_query = target.partition("?")
        with state.lock:
            rec = Received(
                len(state.requests),
                self.command,
                target,
                path,
                raw_query,
                list(self.headers.items()),
                body,
                time.time(),
            )
            state.requests.append(rec)
            state.active += 1
            route = next((r for r in reversed(state.routes) if r.matches(self.command, path)), None)
            fault = route.faults.popleft() if route is not None and route.faults else Fault.ok()
        self.current = rec
        try:
            self._serve(srv, rec, route, fault)
        finally:
            with state.lock:
                state.active -= 1
                state.idle.notify_all()

    def _serve(self, srv: FaultServer, rec: Received, route: _Route | None, fault: Fault) -> None:
        if route is not None and route.pager is not None and fault.kind == "ok":
            self._taken_in()
            status, data, headers, ctype = srv.page(route.pager, rec)
            self._answer(status, data, headers, ctype)
            return
        unsafe = rec.method not in SAFE_METHODS
        if fault.kind == "drop":
            writes = unsafe and bool(fault.write)
        elif fault.kind == "ok":
            writes = unsafe and 200 <= (route.status if route is not None else 200) < 300
        else:
            writes = unsafe and (fault.write if fault.write is not None else 200 <= fault.status < 300)
        hold = fault.kind == "hang" and fault.hold_key
        decision, stored = srv.begin_write(rec, writes)
        self._taken_in()
        if decision == "in_use":
            self._answer(409, json.dumps(KEY_IN_USE_BODY).encode(), [], "application/json")
            return
        if decision == "replay" and stored is not None:
            self._answer(stored.status, stored.body, [*stored.headers, ("Idempotent-Replayed", "true")], None)
            return
        status, data, headers, ctype = self._response_for(srv, rec, route, fault)
        outcome = _Stored(status, headers + ([("Content-Type", ctype)] if data else []), data)
        if decision == "performed" and not hold:
            srv.finish_write(rec, outcome)
        if fault.kind == "hang":
            srv.stopping.wait(min(fault.seconds, MAX_HOLD_SECONDS))
            if decision == "performed" and hold:
                srv.finish_write(rec, outcome)
            self._abandon()
            return
        if fault.kind == "trickle":
            self._trickle(srv, fault)
            return
        if fault.kind == "drop":
            if fault.seconds > 0:
                srv.stopping.wait(min(fault.seconds, MAX_HOLD_SECONDS))
            self._abandon()
            return
        self._answer(status, data, headers, ctype)

    def _response_for(
        self, srv: FaultServer, rec: Received, route: _Route | None, fault: Fault
    ) -> tuple[int, bytes, list[tuple[str, str]], str]:
        """(status, body bytes, extra headers, content type) of the answer `fault` gives."""
        if fault.kind == "reply":
            return fault.status, fault.body or b"", list(fault.headers), fault.content_type
        status = route.status if route is not None and fault.kind in ("ok", "hang", "drop") else fault.status
        value = srv.normal_body(route, rec)
        headers = list(route.headers.items()) if route is not None else []
        if fault.kind == "echo":
            auth = rec.header("Authorization") or ""
            if not isinstance(value, dict):
                value = {}
            value = dict(value)
            for name in fault.fields:
                value[name] = auth
            value["echo"] = {"authorization": auth, "headers": dict(rec.headers)}
            headers.append(("X-Echo-Authorization", auth))
        if fault.kind == "nested_field":
            marker = "__fault_nested__"
            base = dict(value) if isinstance(value, dict) else {}
            base[fault.fields[0]] = marker
            text = json.dumps(base).replace(json.dumps(marker), nested_array_json(fault.depth))
            return status, text.encode(), headers, "application/json"
        if isinstance(value, bytes):
            return status, value, headers, "application/octet-stream"
        data = b"" if value is None else json.dumps(value).encode("utf-8")
        return status, data, headers, "application/json"

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _handle


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner: FaultServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        with self.owner.state.lock:  # accepted and registered at once (see `FaultServer.wait_received`)
            sock, address = super().get_request()
            self.owner.state.taking_in[sock] = False
        return sock, address

    def shutdown_request(self, request: Any) -> None:
        with self.owner.state.lock:
            self.owner.state.taking_in.pop(request, None)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (after its own timeout, or mid-body) is expected here: stay quiet."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class FaultServer(LoopbackServer):
    """Start with ``with FaultServer(honours_keys=True) as srv:``; `base_url` has no path."""

    def __init__(self, *, honours_keys: bool = True) -> None:
        self.honours_keys = honours_keys
        self.state = _State()
        self.stopping = threading.Event()
        self.httpd: _HTTPServer = _HTTPServer(self)
        super().__init__(self.httpd)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    # -- scripting ---------------------------------------------------------------------------------

    def _route(self, method: str, path_regex: str) -> _Route:
        for r in self.state.routes:
            if r.method == method and r.pattern.pattern == path_regex:
                return r
        r = _Route(method, re.compile(path_regex))
        self.state.routes.append(r)
        return r

    def route(
        self,
        method: str,
        path_regex: str,
        status: int = 200,
        body: Body = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The normal answer for (method or ``*``, path regex); the latest matching route wins.
        `body` may be a callable ``(request, side_effect_number) -> JSON value``."""
        with self.state.lock:
            r = self._route(method, path_regex)
            r.status, r.body, r.headers = status, body, dict(headers or {})
            self.state.routes.remove(r)
            self.state.routes.append(r)

    def script(self, method: str, path_regex: str, *faults: Fault) -> None:
        """Queue faults for the next matching requests (one fault per request)."""
        with self.state.lock:
            self._route(method, path_regex).faults.extend(faults)

    def clear_scripts(self) -> None:
        with self.state.lock:
            for r in self.state.routes:
                r.faults.clear()

    def pending_faults(self) -> int:
        with self.state.lock:
            return sum(len(r.faults) for r in self.state.routes)

    def pages(
        self,
        path_regex: str,
        items: list[dict[str, Any]],
        *,
        items_key: str = "data",
        id_field: str = "id",
        cursor_param: str = "starting_after",
        limit_param: str = "limit",
        has_more_field: str = "has_more",
    ) -> None:
        """Serve ``GET path`` as a cursor-paginated list of `items` (in this order)."""
        with self.state.lock:
            r = self._route("GET", path_regex)
            r.pager = {
                "items": copy.deepcopy(items),
                "items_key": items_key,
                "id_field": id_field,
                "cursor_param": cursor_param,
                "limit_param": limit_param,
                "has_more": has_more_field,
            }
            self.state.routes.remove(r)
            self.state.routes.append(r)

    # -- observations --------------------------------------------------------------------------------

    @property
    def requests(self) -> list[Received]:
        with self.state.lock:
            return list(self.state.requests)

    def requests_for(
        self, *, key: str | None = None, method: str | None = None, path_regex: str | None = None
    ) -> list[Received]:
        out = []
        for r in self.requests:
            if key is not None and r.key != key:
                continue
            if method is not None and r.method != method:
                continue
            if path_regex is not None and not re.search(path_regex, r.path):
                continue
            out.append(r)
        return out

    @property
    def incomplete_requests(self) -> int:
        """Requests whose connection ended before their whole body came (never in `requests`, never
        a side effect: RFC 9112 section 6.3)."""
        with self.state.lock:
            return self.state.incomplete

    def side_effects_for(self, key: str | None) -> int:
        with self.state.lock:
            return self.state.side_effects[key]

    @property
    def total_side_effects(self) -> int:
        with self.state.lock:
            return self.state.total_side_effects

    def side_effects_by_key(self) -> dict[str | None, int]:
        with self.state.lock:
            return dict(self.state.side_effects)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until no request is being handled (at most `timeout` seconds); true when idle."""
        deadline = time.monotonic() + timeout
        with self.state.lock:
            while self.state.active > 0:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.state.idle.wait(left)
            return True

    def wait_received(self, timeout: float = 5.0) -> bool:
        """Wait until the server has taken in every byte sent to it so far: no connection waits to be
        accepted, none holds unread bytes, and every request whose first byte came is recorded in
        `requests` with its write decided (or counted incomplete). True when so within `timeout`
        seconds.

        A client whose deadline passes after it wrote a request returns without its answer, maybe
        before this server's handler thread ran at all (a loaded machine); a test that compares the
        requests a call sent with what it expected waits for this first, or the late request is
        counted as the next call's."""
        deadline = time.monotonic() + timeout
        while True:
            with self.state.lock:
                if self._all_received():
                    return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)

    def _all_received(self) -> bool:
        """Under the state lock: see `wait_received`."""
        if select.select([self.httpd.socket], [], [], 0)[0]:
            return False  # a connection waits to be accepted
        for sock, busy in self.state.taking_in.items():
            if busy:
                return False
            try:
                if sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT):
                    return False  # unread bytes (b"": the client hung up, nothing more can come)
            except (BlockingIOError, OSError):
                pass
        return True

    def reset(self) -> None:
        """Forget requests, counters, stored responses and scripts (routes stay)."""
        with self.state.lock:
            self.state.requests.clear()
            self.state.side_effects.clear()
            self.state.total_side_effects = 0
            self.state.incomplete = 0
            self.state.stored.clear()
            for r in self.state.routes:
                r.faults.clear()

    # -- internals used by the handler ---------------------------------------------------------------

    def begin_write(self, rec: Received, writes: bool) -> tuple[str, _Stored | None]:
        """``none`` (no side effect), ``performed`` (one side effect counted), ``replay`` (the stored
        answer of this key) or ``in_use`` (the key's first request is still executing)."""
        if not writes:
            return "none", None
        key = rec.key
        with self.state.lock:
            if self.honours_keys and key is not None:
                if self.state.in_flight_keys[key] > 0:
                    return "in_use", None
                if key in self.state.stored:
                    return "replay", self.state.stored[key]
                self.state.in_flight_keys[key] += 1
            self.state.side_effects[key] += 1
            self.state.total_side_effects += 1
        return "performed", None

    def finish_write(self, rec: Received, outcome: _Stored) -> None:
        """The performed write is over: remember its answer for the key (replayed from now on)."""
        key = rec.key
        if not (self.honours_keys and key is not None):
            return
        with self.state.lock:
            self.state.stored.setdefault(key, outcome)
            self.state.in_flight_keys[key] -= 1
            if self.state.in_flight_keys[key] <= 0:
                del self.state.in_flight_keys[key]

    def normal_body(self, route: _Route | None, rec: Received) -> Any:
        if route is None or route.body is None:
            return {"id": f"obj_{self.total_side_effects}", "object": "thing"}
        if callable(route.body):
            return route.body(rec, self.total_side_effects)
        return copy.deepcopy(route.body)

    def page(self, pager: dict[str, Any], rec: Received) -> tuple[int, bytes, list[tuple[str, str]], str]:
        query = dict(rec.query)
        items: list[dict[str, Any]] = pager["items"]
        try:
            limit = int(query.get(pager["limit_param"], "10"))
        except ValueError:
            limit = 10
        limit = max(1, min(limit, 100))
        start = 0
        after = query.get(pager["cursor_param"])
        if after is not None:
            ids = [str(i.get(pager["id_field"])) for i in items]
            if after not in ids:
                problem = {"error": {"type": "invalid_request_error", "message": f"unknown cursor {after!r}"}}
                return 400, json.dumps(problem).encode(), [], "application/json"
            start = ids.index(after) + 1
        page = items[start : start + limit]
        body: dict[str, Any] = {pager["items_key"]: page, pager["has_more"]: start + limit < len(items)}
        return 200, json.dumps(body).encode(), [], "application/json"

    # -- lifecycle -----------------------------------------------------------------------------------

    def stop(self) -> None:
        self.stopping.set()  # releases handlers that stall on purpose
        super().stop()


__all__ = ["Fault", "FaultServer", "Received", "nested_array_json", "nested_json"]
