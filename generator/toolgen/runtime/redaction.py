"""Replacing secrets in text with the redaction marker, without ever rewriting a marker.

`cover(text, needles, markers, marker)` is the one replacement every redaction of a secret goes
through (`toolgen.runtime.body.scrub` on decoded values, `toolgen.runtime.credentials.scrub_bytes` on
a body's raw bytes). Replacing each secret in turn with ``str.replace`` rewrote the markers an earlier
replacement wrote: a one-letter secret ``a`` after ``Bearer a`` turned ``[redacted]`` into
``[red[redacted]cted]``. Here every occurrence of every needle is found first, in the text as it
stands; an occurrence wholly inside one marker is left alone (the marker already hides it), and an
occurrence that reaches outside takes in every marker it overlaps, so the span replaced is covered by
one whole marker. Replacing may join a marker and the text after it into a new occurrence (a secret
``d]x`` after ``SECRET`` in ``SECRETx``), so `cover` repeats until nothing changes: each further
round only shortens the text outside markers, or joins markers, so it ends.

Guarantees, for any needles and any text (tests/runtime/test_runtime_redaction_marker.py): the
result holds no needle except wholly inside one marker; every marker of the input whose neighbours
hold no needle is kept byte for byte; ``cover`` of its own result changes nothing. Pure; no IO.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import AnyStr

#: What a redacted secret becomes, in text (the byte forms are its encodings).
MARKER = "[redacted]"

__all__ = ["MARKER", "cover"]


def _spans(text: AnyStr, needle: AnyStr) -> list[tuple[int, int]]:
    """Every occurrence of `needle` in `text` (overlapping ones too), as (start, end)."""
    out = []
    at = text.find(needle)
    while at >= 0:
        out.append((at, at + len(needle)))
        at = text.find(needle, at + 1)
    return out


def _marker_spans(text: AnyStr, markers: Sequence[AnyStr]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for marker in markers:
        at = text.find(marker)
        while at >= 0:
            spans.append((at, at + len(marker)))
            at = text.find(marker, at + len(marker))
    return sorted(spans)


def _once(text: AnyStr, needles: Sequence[AnyStr], markers: Sequence[AnyStr], marker: AnyStr) -> AnyStr:
    """One round: every needle occurrence not wholly inside one marker, widened to the markers it
    overlaps, merged with the spans it overlaps, and each merged span replaced by `marker`."""
    kept = _marker_spans(text, markers)
    found = [s for n in needles if n and n in text for s in _spans(text, n)
             if not any(a <= s[0] and s[1] <= b for a, b in kept)]
    if not found:
        return text
    found.sort()
    merged: list[list[int]] = []
    for start, end in found:
        for a, b in kept:  # take in every marker the occurrence overlaps (at most a few: markers do not overlap)
            if a < end and start < b:
                start, end = min(start, a), max(end, b)
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            merged[-1][0] = min(merged[-1][0], start)
        else:
            merged.append([start, end])
    pieces, at = [], 0
    for start, end in merged:
        pieces += [text[at:start], marker]
        at = end
    pieces.append(text[at:])
    return text[:0].join(pieces)


def cover(text: AnyStr, needles: Iterable[AnyStr], markers: Sequence[AnyStr], marker: AnyStr) -> AnyStr:
    """`text` with every occurrence of every needle replaced by `marker`, never rewriting a marker:
    `markers` are the spellings of a marker to keep whole (`marker` among them; ``scrub_bytes``
    passes each encoding's). Empty needles are ignored. See the module's guarantees."""
    wanted = [n for n in dict.fromkeys(needles) if n]
    if not any(n in text for n in wanted):
        return text
    while True:
        done = _once(text, wanted, markers, marker)
        if done == text:
            return done
        text = done
