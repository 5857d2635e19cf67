"""Response content codings are decoded within the response size cap, over real loopback servers:
a body compressed twice (``Content-Encoding: gzip, gzip``) of a few hundred bytes used to inflate
to hundreds of megabytes in memory before the 8 MiB cap was checked; now the decoder never holds
more than the cap, and ordinary gzip/deflate answers read exactly as before.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import resource
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.hostile_server import HostileServer, RawRequest, response
from tests.support.profiles import examples
from tests.support.runtime_env import WRITER, error_code, stored_preview, tickets_dir

from toolgen.runtime import (
    Approval,
    CallResult,
    MemoryAuditSink,
    MemoryReceiptStore,
    Registry,
    StaticCredentials,
)
from toolgen.runtime.serving.registry import MAX_RESPONSE_BYTES
from toolgen.runtime.transport.content_coding import BodyTooLarge, BoundedDecoder

TICKET: dict[str, Any] = {
    "id": "T-102",
    "subject": "Printer on fire",
    "status": "open",
    "priority": "high",
    "requester": {"email": "user@example.com", "name": "User", "phone": "+1-555-0100"},
    "assignee": None,
    "tags": [],
    "followup_count": 0,
    "updated_at": "2025-02-01T11:00:00Z",
    "body": "Long original request text.",
}


def _encode(data: bytes, codings: list[str]) -> bytes:
    for coding in codings:  # in the order applied
        if coding == "gzip":
            data = gzip.compress(data)
        elif coding == "deflate":
            data = zlib.compress(data)
        elif coding == "raw-deflate":
            c = zlib.compressobj(wbits=-zlib.MAX_WBITS)
            data = c.compress(data) + c.flush()
    return data


def _header(codings: list[str]) -> str:
    return ", ".join("deflate" if c == "raw-deflate" else c for c in codings)


def _registry(base_url: str) -> Registry:
    folder = tickets_dir()
    policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
    return Registry(
        policy,
        catalog,
        base_url=base_url + "/v1",
        credentials=StaticCredentials({"TICKETS_TOKEN": "t0k"}),
        receipts=MemoryReceiptStore(),
        audit=MemoryAuditSink(),
        cursor_key=b"k" * 32,
    )


def _get(reg: Registry, how: str) -> CallResult:
    args: dict[str, Any] = {"ticket_id": "T-102"}
    if how == "sync":
        return reg.call("get_ticket", args, actor=WRITER, timeout_ms=5000)
    return asyncio.run(reg.acall("get_ticket", args, actor=WRITER, timeout_ms=5000))


@pytest.mark.parametrize("how", ["sync", "async"])
@pytest.mark.parametrize(
    "codings", [[], ["gzip"], ["deflate"], ["raw-deflate"], ["gzip", "gzip"], ["deflate", "gzip"]]
)
def test_encoded_answers_read_as_their_content(codings: list[str], how: str) -> None:
    body = _encode(json.dumps(TICKET).encode(), codings)
    headers = {
        "Content-Type": "application/json",
        **({"Content-Encoding": _header(codings)} if codings else {}),
    }
    with HostileServer(lambda req: response(200, body, headers)) as srv, _registry(srv.base_url) as reg:
        result = _get(reg, how)
    assert result.ok, result.to_json()
    assert result.result is not None and result.result.get("id") == "T-102"


def _gzip_of_zeros(n_mib: int) -> bytes:
    """gzip of `n_mib` MiB of zero bytes, made without holding them."""
    c, zeros = zlib.compressobj(9, wbits=zlib.MAX_WBITS | 16), b"\0" * (1024 * 1024)
    return b"".join(c.compress(zeros) for _ in range(n_mib)) + c.flush()


#: 64 MiB of zeros, compressed twice: a few hundred bytes on the wire
BOMB = gzip.compress(_gzip_of_zeros(64), 9)


def _bomb(_: RawRequest) -> bytes:
    return response(200, BOMB, {"Content-Type": "application/json", "Content-Encoding": "gzip, gzip"})


@pytest.mark.parametrize("how", ["sync", "async"])
def test_a_doubly_compressed_bomb_is_too_large_without_inflating(how: str) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    with HostileServer(_bomb) as srv, _registry(srv.base_url) as reg:
        result = _get(reg, how)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert error_code(result) == "upstream_error" and "more than" in result.error.message, result.to_json()  # type: ignore[union-attr]
    assert grown_mib < 40, f"the runtime inflated the body: peak RSS grew {grown_mib:.0f} MiB"


def test_a_bomb_answering_a_write_200_is_a_known_success_never_read() -> None:
    """The API accepted the write (200): its outcome is known though its body is over the cap."""
    with HostileServer(_bomb) as srv, _registry(srv.base_url) as reg:
        pid = stored_preview(reg, {"ticket_id": "T-102", "note": "n", "visibility": "public"})
        result = reg.call(
            "record_ticket_followup",
            {"preview_id": pid, "action_id": "bomb-1"},
            actor=WRITER,
            approval=Approval(pid),
        )
        assert result.ok and result.warnings and result.result is not None, result.to_json()
        assert "larger than" in result.result["_unreadable_body"]["problem"], result.to_json()
        receipt = reg.receipts.get("tickets/record_ticket_followup", "bomb-1")
        assert receipt is not None and receipt.state == "completed", receipt


@settings(max_examples=examples(150), deadline=None)
@given(
    data=st.binary(max_size=3000),
    codings=st.lists(st.sampled_from(["gzip", "deflate", "raw-deflate"]), max_size=3),
    limit=st.integers(0, 3500),
    cut=st.integers(1, 64),
)
def test_the_decoder_returns_the_body_or_refuses_past_the_limit(
    data: bytes, codings: list[str], limit: int, cut: int
) -> None:
    raw = _encode(data, codings)
    decoder = BoundedDecoder(_header(codings) or None, limit)
    try:
        out = b"".join(decoder.feed(raw[i : i + cut]) for i in range(0, len(raw), cut)) + decoder.finish()
    except BodyTooLarge:
        assert len(data) > limit
    else:
        assert len(data) <= limit and out == data


def test_unsupported_codings_leave_the_body_as_it_came() -> None:
    for header in ("br", "gzip, br", "zstd", "x-unknown"):
        decoder = BoundedDecoder(header, MAX_RESPONSE_BYTES)
        assert decoder.feed(b"\x1f\x8b not really") + decoder.finish() == b"\x1f\x8b not really"
