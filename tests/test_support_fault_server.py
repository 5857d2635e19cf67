"""`tests/support/fault_server.py`: a request whose connection ends before its whole body came is
incomplete (RFC 9112 section 6.3) and never reaches the server's record of requests or its side
effects.

A client abandons a request so when its deadline passes between writing the head and the body (the
runtime's sync transport bounds every socket write by what is left of the attempt). The write-path
machines (`tests/runtime/test_runtime_stateful.py`) compare every recorded request with its
preview; a cut body recorded as a request failed them now and then under load with "the body sent
is not JSON", and counted a write the API would never have performed.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.fault_server import FaultServer
from tests.support.profiles import examples

PATH = "/v1/tickets/T-1/followups"


@pytest.fixture(scope="module")
def server() -> Iterator[FaultServer]:
    with FaultServer(honours_keys=False) as srv:
        srv.route("POST", r"^/v1/tickets/T-[0-9]+/followups$", status=201, body={"id": "F-1"})
        yield srv


def _head(length: int | None) -> bytes:
    framing = "Transfer-Encoding: chunked" if length is None else f"Content-Length: {length}"
    return (
        f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Idempotency-Key: k\r\n{framing}\r\n\r\n"
    ).encode()


def _send_and_hang_up(srv: FaultServer, data: bytes) -> None:
    port = srv.httpd.server_address[1]
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        sock.settimeout(5)
        while sock.recv(65536):  # until the server closes its side: it has handled the request
            pass


def _settled(srv: FaultServer) -> None:
    """Wait (at most 5 s) until the server has dealt with what it was sent."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not srv.requests and not srv.incomplete_requests:
        time.sleep(0.005)
    assert srv.wait_idle(5)


def _body(size: int) -> bytes:
    return json.dumps({"note": "n" * max(0, size - 11)}).encode()


@settings(max_examples=examples(40))
@given(size=st.integers(12, 3000), data=st.data())
def test_a_body_cut_short_of_its_content_length_is_not_a_request(
    server: FaultServer, size: int, data: st.DataObject
) -> None:
    body = _body(size)
    cut = data.draw(st.integers(0, len(body) - 1), label="bytes sent")
    server.reset()
    _send_and_hang_up(server, _head(len(body)) + body[:cut])
    _settled(server)
    assert server.requests == [], f"a body of {cut} of {len(body)} bytes was recorded as a request"
    assert server.total_side_effects == 0
    assert server.incomplete_requests == 1


@settings(max_examples=examples(40))
@given(size=st.integers(12, 3000), data=st.data())
def test_a_chunked_body_without_its_last_chunk_is_not_a_request(
    server: FaultServer, size: int, data: st.DataObject
) -> None:
    body = _body(size)
    whole = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    cut = data.draw(st.integers(0, len(whole) - len(b"0\r\n\r\n") - 1), label="bytes sent")
    server.reset()
    _send_and_hang_up(server, _head(None) + whole[:cut])
    _settled(server)
    assert server.requests == [], f"a chunked body cut at {cut} of {len(whole)} bytes was recorded"
    assert server.total_side_effects == 0
    assert server.incomplete_requests == 1


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_whole_body_is_recorded_and_performed(server: FaultServer, chunked: bool) -> None:
    body = _body(200)
    framed = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n" if chunked else body
    server.reset()
    _send_and_hang_up(server, _head(None if chunked else len(body)) + framed)
    _settled(server)
    assert [r.body for r in server.requests] == [body]
    assert server.requests[0].answered == 201
    assert server.total_side_effects == 1
    assert server.incomplete_requests == 0


def test_wait_received_returns_once_a_late_request_is_recorded(server: FaultServer) -> None:
    """A request that reached the socket while the handler could not run (the state lock held here,
    as a loaded machine delays a thread) is recorded, with its write counted, when `wait_received`
    returns; the connection stays open and unanswered as far as the client cares."""
    body = _body(300)
    port = server.httpd.server_address[1]
    for n in range(1, 21):
        server.reset()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            with server.state.lock:
                sock.sendall(_head(len(body)) + body)
            assert server.wait_received(5)
            assert [r.body for r in server.requests] == [body], f"round {n}"
            assert server.total_side_effects == 1
