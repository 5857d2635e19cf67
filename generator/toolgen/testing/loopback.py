"""A threaded HTTP server on loopback, started and stopped as a context manager: the lifecycle the
example tickets API and the tests' fake APIs share.

Input: a bound `http.server.HTTPServer` (or any `socketserver.BaseServer`). Output: nothing; it
serves requests in a daemon thread between `start` and `stop` (``with server: ...``).
"""

from __future__ import annotations

import socketserver
import threading
from typing import Self


class LoopbackServer:
    """Serves `httpd` in a daemon thread. Subclasses create `httpd` (bound to 127.0.0.1) and pass it
    to ``super().__init__``; `stop` shuts the loop down and closes the socket."""

    def __init__(self, httpd: socketserver.BaseServer) -> None:
        self.httpd = httpd
        self.thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def start(self) -> Self:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
