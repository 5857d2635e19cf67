"""A scriptable raw-socket HTTP server on loopback, for APIs that misbehave below what `http.server` allows.

`HostileServer(handler)` listens on 127.0.0.1 (a free port unless one is asked for), reads one
request per connection and hands it to `handler` as a `RawRequest`. The handler returns what goes
back on the socket, byte for byte:

- ``bytes``: a complete raw response (see `response`), sent at once;
- an iterable of ``(bytes, delay_seconds)`` chunks, sent one after the other with a pause after each
  (a body that trickles in, see `trickle`; a response that stalls before its status line);
- ``None``: close the connection without answering.

Every request is recorded (`requests`), whatever the handler does with it. The connection is closed
after each answer, so an HTTP client never reuses it.

Everything is bounded: the accept loop ends when the server stops or after `max_lifetime` seconds,
a request head or body larger than `MAX_REQUEST_BYTES` is cut, each socket read waits at most
`SOCKET_TIMEOUT` seconds, each pause at most `MAX_DELAY` seconds (and `stop` interrupts it), a
handler may send at most `MAX_CHUNKS` chunks. All threads are daemons.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Self
from urllib.parse import parse_qsl

#: The only interface the server binds to.
LOOPBACK = "127.0.0.1"
#: Largest request head or body the server reads (bytes); anything longer is cut.
MAX_REQUEST_BYTES = 1024 * 1024
#: Longest wait of one socket read or write (seconds).
SOCKET_TIMEOUT = 5.0
#: Longest pause after one chunk (seconds).
MAX_DELAY = 30.0
#: Most chunks one answer may have.
MAX_CHUNKS = 100_000

Chunk = tuple[bytes, float]
Reply = bytes | Iterable[Chunk] | None


@dataclass(frozen=True)
class RawRequest:
    """One request as it arrived: the raw request `target` (path and query, still percent-encoded),
    the header pairs in order, the body bytes and the arrival time (``time.time()``)."""

    method: str
    target: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    at: float

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    @property
    def raw_query(self) -> str:
        return self.target.partition("?")[2]

    @property
    def query(self) -> list[tuple[str, str]]:
        """The decoded query pairs, in order."""
        return parse_qsl(self.raw_query, keep_blank_values=True)

    def header(self, name: str) -> str | None:
        """The first value of header `name` (case-insensitive), or ``None``."""
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def header_values(self, name: str) -> list[str]:
        """Every value of header `name` (case-insensitive), in order."""
        return [value for key, value in self.headers if key.lower() == name.lower()]


Handler = Callable[[RawRequest], Reply]


def response(
    status: int,
    body: bytes | str = b"",
    headers: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
    *,
    reason: str = "Whatever",
) -> bytes:
    """A raw HTTP/1.1 response: status line, `headers` (a ``Content-Length`` for `body` unless one,
    or ``Transfer-Encoding``, is given), ``Connection: close``, then `body`."""
    data = body.encode("utf-8") if isinstance(body, str) else body
    pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers or [])
    names = {k.lower() for k, _ in pairs}
    if "content-length" not in names and "transfer-encoding" not in names:
        pairs.append(("Content-Length", str(len(data))))
    pairs.append(("Connection", "close"))
    head = f"HTTP/1.1 {status} {reason}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in pairs) + "\r\n"
    return head.encode("latin-1") + data


def trickle(
    status: int, body: bytes, delay: float, headers: Mapping[str, str] | None = None
) -> Iterator[Chunk]:
    """A response whose head arrives at once and whose `body` then arrives one byte every `delay`
    seconds (the head announces the full ``Content-Length``)."""
    head_headers = dict(headers or {})
    head_headers["Content-Length"] = str(len(body))
    yield response(status, b"", head_headers), 0.0
    for i in range(len(body)):
        yield body[i : i + 1], delay


class HostileServer:
    """Start with ``with HostileServer(handler) as srv:``; `base_url` has no path.

    `handler` may be replaced while the server runs (e.g. once the port is known, to put it into a
    ``Link`` header). `port` 0 picks a free port; a given port may be taken (`OSError`)."""

    def __init__(self, handler: Handler | None = None, *, port: int = 0, max_lifetime: float = 300.0) -> None:
        self.handler: Handler = handler if handler is not None else (lambda _req: response(200, b"{}"))
        self.max_lifetime = max_lifetime
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._sock.bind((LOOPBACK, port))
            self._sock.listen(64)
        except OSError:
            self._sock.close()
            raise
        self._sock.settimeout(0.1)
        self.port: int = int(self._sock.getsockname()[1])
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._requests: list[RawRequest] = []
        self._thread = threading.Thread(target=self._accept_loop, name=f"hostile-{self.port}", daemon=True)
        self._started = False

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def requests(self) -> list[RawRequest]:
        with self._lock:
            return list(self._requests)

    # -- lifecycle -----------------------------------------------------------------------------------

    def start(self) -> Self:
        if not self._started:
            self._started = True
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._sock.close()
        if self._started:
            self._thread.join(2.0)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving -------------------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        ends = time.monotonic() + self.max_lifetime
        while not self._stop.is_set() and time.monotonic() < ends:
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:  # closed by stop()
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> RawRequest | None:
        data = b""
        while b"\r\n\r\n" not in data:
            if len(data) > MAX_REQUEST_BYTES:
                return None
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2:
            return None
        method, target = parts[0], parts[1]
        headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
        length = 0
        for name, value in headers:
            if name.lower() == "content-length" and value.isdigit():
                length = min(int(value), MAX_REQUEST_BYTES)
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
        return RawRequest(method, target, tuple(headers), rest[:length], time.time())

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(SOCKET_TIMEOUT)
        try:
            request = self._read_request(conn)
            if request is None:
                return
            with self._lock:
                self._requests.append(request)
            reply = self.handler(request)
            if reply is None:
                return
            if isinstance(reply, (bytes, bytearray)):
                conn.sendall(reply)
                return
            for n, (chunk, delay) in enumerate(reply):
                if n >= MAX_CHUNKS or self._stop.is_set():
                    return
                if chunk:
                    conn.sendall(chunk)
                if delay > 0 and self._stop.wait(min(delay, MAX_DELAY)):
                    return
        except OSError:  # the client hung up (its own timeout) or the socket timed out
            pass
        finally:
            conn.close()


def prefix_port_pair(
    first: Handler | None = None, second: Handler | None = None, *, attempts: int = 50
) -> tuple[HostileServer, HostileServer]:
    """Two started servers whose ports read as a text prefix of one another: ``str(b.port)`` is
    ``str(a.port)`` plus one digit (``http://127.0.0.1:4711`` and ``http://127.0.0.1:47113``), so a
    URL of `b` starts with the origin text of `a`. Raises `RuntimeError` when no such pair could be
    bound in `attempts` tries."""
    for _ in range(attempts):
        b = HostileServer(second)
        if b.port < 10240:  # a's port would be below 1024
            b.stop()
            continue
        try:
            a = HostileServer(first, port=b.port // 10)
        except OSError:
            b.stop()
            continue
        return a.start(), b.start()
    raise RuntimeError("could not bind two loopback ports whose numbers share a prefix")


__all__ = ["HostileServer", "RawRequest", "Reply", "prefix_port_pair", "response", "trickle"]
