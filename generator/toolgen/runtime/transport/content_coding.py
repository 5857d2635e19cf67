"""Response content codings decoded within a size budget.

An answer's ``Content-Encoding`` is the upstream's to choose, and the runtime asks for none. httpx
decodes each chunk read from the socket in one go, and a coding applied twice (``gzip, gzip``)
multiplies the ratios: under 500 bytes on the wire become 200 MB in memory before any size check
sees them. `BoundedDecoder` decodes the raw body chunk by chunk, each coding with zlib's
``max_length``, so no coding ever produces more than what is left of the budget plus one byte;
past the budget it raises `BodyTooLarge`.

Codings (RFC 9110 §8.4, listed in the order applied, decoded in reverse): ``identity`` (or none),
``gzip``/``x-gzip``, ``deflate`` (zlib-wrapped, or raw as some servers send it). Any other coding
(``br``, ``zstd``, ``compress``, a name nobody registered) is left as it is: the body then does
not read as JSON or text and the call reports it unreadable.
"""

from __future__ import annotations

import zlib

import httpx

#: Bytes an intermediate coding's output may exceed the budget by (gzip's header and trailer, and
#: the growth of incompressible data: about 1/64), since it is coded again, not the body.
_CODED_SLACK = 1024


class BodyTooLarge(Exception):
    """The decoded body would exceed the budget."""


class _Zlib:
    """One zlib-family coding, decoded with a bounded output per call."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._d: zlib._Decompress | None = None
        self._head = b""  # a deflate body's first bytes, until they tell zlib-wrapped from raw
        if coding != "deflate":
            self._d = zlib.decompressobj(zlib.MAX_WBITS | 16)

    def decode(self, data: bytes, room: int) -> bytes:
        """Up to `room` + 1 bytes of output for `data`; more than `room` means over budget."""
        if self._d is None:
            self._head += data
            if len(self._head) < 2:
                return b""
            b0, b1 = self._head[0], self._head[1]
            wrapped = b0 & 0x0F == 8 and (b0 << 8 | b1) % 31 == 0  # RFC 1950 header
            self._d = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
            data, self._head = self._head, b""
        out: bytes = self._d.decompress(data, room + 1)
        if len(out) > room or self._d.unconsumed_tail:
            raise BodyTooLarge
        return out

    def flush(self, room: int) -> bytes:
        """What the coding still holds once its input ended (more than `room` bytes: over budget)."""
        if self._d is None:  # a deflate body shorter than its header
            if self._head:
                raise zlib.error("truncated deflate body")
            return b""
        out: bytes = self._d.flush()
        if len(out) > room:
            raise BodyTooLarge
        return out


class BoundedDecoder:
    """Decodes a response body whose ``Content-Encoding`` header is `encoding` into at most `limit`
    bytes. `feed(raw)` returns the decoded bytes of one raw chunk, `finish()` the rest; both raise
    `BodyTooLarge` once the decoded body would exceed `limit`, and `httpx.DecodingError` for a body
    that does not decode."""

    def __init__(self, encoding: str | None, limit: int) -> None:
        names = [c.strip().lower() for c in (encoding or "").split(",")]
        codings = [c for c in names if c and c != "identity"]
        if any(c not in ("gzip", "x-gzip", "deflate") for c in codings):
            codings = []  # an unsupported coding anywhere: the body stays as it came
        self._stages = [_Zlib(c) for c in reversed(codings)]  # the last coding applied comes off first
        self._limit = limit
        self.size = 0

    def _through(self, data: bytes, start: int) -> bytes:
        last = len(self._stages) - 1
        for i in range(start, len(self._stages)):
            stage = self._stages[i]
            room = self._limit - self.size
            if i < last:  # a coded intermediate may be a little longer than what it decodes to
                room += _CODED_SLACK + self._limit // 64
            try:
                data = stage.decode(data, room)
            except zlib.error as exc:
                raise httpx.DecodingError(f"the body does not decode as {stage.coding}") from exc
        return data

    def feed(self, raw: bytes) -> bytes:
        """The decoded bytes of the raw chunk `raw`."""
        out = self._through(raw, 0)
        self.size += len(out)
        if self.size > self._limit:
            raise BodyTooLarge
        return out

    def finish(self) -> bytes:
        """The decoded bytes still held by the codings once the raw body ended."""
        out = b""
        for i in range(len(self._stages)):  # each stage's rest goes through the stages after it
            try:
                room = self._limit - self.size - len(out)
                rest = self._stages[i].flush(
                    room if i == len(self._stages) - 1 else room + _CODED_SLACK + self._limit // 64
                )
            except zlib.error as exc:
                raise httpx.DecodingError(f"the body does not decode as {self._stages[i].coding}") from exc
            out += self._through(rest, i + 1) if rest else b""
        self.size += len(out)
        if self.size > self._limit:
            raise BodyTooLarge
        return out
