"""Replacing secrets in text with the redaction marker, without ever rewriting a marker.

`cover(text, needles, markers, marker)` is the one replacement every redaction of a secret goes
through (`toolgen.runtime.call.response_body.scrub` on decoded values,
`toolgen.runtime.call.credentials.scrub_bytes` on
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
hold no needle is kept byte for byte; ``cover`` of its own result changes nothing. After
`MAX_ROUNDS` rounds that still change the text, the whole text is the marker (fail closed). Pure;
no IO.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from typing import Any, AnyStr

#: What a redacted secret becomes, in text (the byte forms are its encodings).
MARKER = "[redacted]"

__all__ = ["MARKER", "cover"]


def _alternation(items: Iterable[Any], *, lookahead: bool = False) -> re.Pattern[Any]:
    """A pattern matching any of `items` (all str or all bytes), the longest first where several
    start at one place; with `lookahead`, an empty match at each place one starts, the match in
    group 1 (so overlapping occurrences are found too)."""
    ordered = sorted(set(items), key=len, reverse=True)
    escaped = [re.escape(i) for i in ordered]
    if isinstance(ordered[0], bytes):
        body = b"|".join(escaped)
        return re.compile(b"(?=(" + body + b"))" if lookahead else body)
    text = "|".join(escaped)
    return re.compile(f"(?=({text}))" if lookahead else text)


def _marker_spans(text: AnyStr, markers: Sequence[AnyStr]) -> list[tuple[int, int]]:
    """Where the markers stand in `text`, sorted and disjoint (spellings that overlap are joined)."""
    joined: list[tuple[int, int]] = []
    for found in _alternation(markers).finditer(text):
        start, end = found.span()
        if joined and start < joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], end))
        else:
            joined.append((start, end))
    return joined


def _once(text: AnyStr, needles: Sequence[AnyStr], markers: Sequence[AnyStr], marker: AnyStr) -> AnyStr:
    """One round: every needle occurrence not wholly inside one marker, widened to the markers it
    overlaps, merged with the spans it overlaps, and each merged span replaced by `marker`.
    O((occurrences + markers) log markers): markers are looked up by bisection, never scanned."""
    kept = _marker_spans(text, markers)
    starts = [a for a, _ in kept]
    found: list[tuple[int, int]] = []
    present = [n for n in needles if n in text]
    if not present:
        return text
    for occurrence in _alternation(present, lookahead=True).finditer(text):  # the longest at each place
        start, end = occurrence.start(), occurrence.end(1)
        i = bisect_right(starts, start) - 1  # the last marker starting at or before the occurrence
        if i >= 0 and end <= kept[i][1]:
            continue  # wholly inside that marker: it hides the occurrence already
        if i >= 0 and start < kept[i][1]:
            start = kept[i][0]  # begins inside a marker: take it in whole
        j = bisect_left(starts, end) - 1  # the last marker starting before the occurrence ends
        if j >= 0 and end < kept[j][1]:
            end = kept[j][1]  # ends inside a marker: take it in whole
        found.append((start, end))
    if not found:
        return text
    found.sort()
    pieces, at = [], 0
    span_start, span_end = found[0]
    for start, end in found[1:]:
        if start < span_end:
            span_end = max(span_end, end)
            continue
        pieces += [text[at:span_start], marker]
        at, span_start, span_end = span_end, start, end
    pieces += [text[at:span_start], marker, text[span_end:]]
    return text[:0].join(pieces)


#: Rounds of `cover` before it gives up and redacts the whole text (fail closed): a further round
#: happens only when a replacement joins a marker and the text after it into a new occurrence, one
#: character a round at worst, and only for a secret that starts with the end of the marker.
MAX_ROUNDS = 64


def cover(text: AnyStr, needles: Iterable[AnyStr], markers: Sequence[AnyStr], marker: AnyStr) -> AnyStr:
    """`text` with every occurrence of every needle replaced by `marker`, never rewriting a marker:
    `markers` are the spellings of a marker to keep whole (`marker` among them; ``scrub_bytes``
    passes each encoding's). Empty needles are ignored. See the module's guarantees."""
    wanted = [n for n in dict.fromkeys(needles) if n]
    if not any(n in text for n in wanted):
        return text
    for _ in range(MAX_ROUNDS):
        done = _once(text, wanted, markers, marker)
        if done == text:
            return done
        text = done
    return marker
