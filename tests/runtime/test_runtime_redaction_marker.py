"""Redaction never rewrites its own marker: whatever the secret (one letter, a letter of
``[redacted]``, a ``]`` that straddles a marker) and whatever the text, the redacted text holds no
secret outside a whole marker, every marker is whole, and redacting twice changes nothing. A test
secret of one letter no longer turns answers into ``[redac[redacted]ed]``; `toolgen call` and
`toolgen serve` warn at start about a secret that short."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import tickets_dir

from toolgen.runtime import MemoryAuditSink, Registry, StaticCredentials
from toolgen.runtime.call.credentials import ECHO_ENCODINGS, echo_forms, scrub_bytes
from toolgen.runtime.call.response_body import scrub
from toolgen.runtime.serving.registry import Actor

MARKER = "[redacted]"
READER = Actor.of("reader", "ticket:read")
#: text made mostly of the marker's own characters, so that secrets and markers meet often
_TEXT = st.text(st.sampled_from("[redacted] xyRE\u00e9"), max_size=60) | st.text(max_size=40)
_SECRET = st.text(st.sampled_from("[redacted]xy\u00e9"), min_size=1, max_size=4) | st.text(
    min_size=1, max_size=6
)


def _marked(draw: Any) -> str:
    parts = draw(st.lists(st.one_of(st.just(MARKER), _TEXT), max_size=6))
    return "".join(parts)


_MARKED = st.composite(_marked)()


def _outside_markers(text: str, secret: str) -> list[int]:
    """Where `secret` occurs in `text` other than wholly inside one marker."""
    spans = []
    at = text.find(MARKER)
    while at >= 0:
        spans.append((at, at + len(MARKER)))
        at = text.find(MARKER, at + len(MARKER))
    found = []
    at = text.find(secret)
    while at >= 0:
        if not any(a <= at and at + len(secret) <= b for a, b in spans):
            found.append(at)
        at = text.find(secret, at + 1)
    return found


def test_a_one_letter_secret_keeps_every_marker_whole() -> None:
    for letter in "[redact]":
        assert scrub(MARKER, [letter]) == MARKER
        assert scrub(f"Bearer {letter}+{letter}", [f"Bearer {letter}", letter]) == f"{MARKER}+{MARKER}"
    assert scrub({"a": "data [redacted] a"}, ["a"]) == {MARKER: f"d{MARKER}t{MARKER} {MARKER} {MARKER}"}
    assert (
        scrub_bytes(b"Bearer a a [redacted]", echo_forms(["Bearer a", "a"]))
        == b"[redacted] [redacted] [redacted]"
    )


def test_a_secret_that_straddles_a_marker_is_covered() -> None:
    assert scrub("[redacted]xyz", ["d]xy"]) == "[redacted]z"
    assert scrub("SECRETxyz", ["SECRET", "d]xy"]) == "[redacted]z"


@settings(max_examples=examples(400), deadline=None)
@given(text=_MARKED, secrets=st.lists(_SECRET, min_size=1, max_size=3))
def test_redacted_text_holds_no_secret_and_every_marker_whole(text: str, secrets: list[str]) -> None:
    out = scrub(text, secrets)
    for secret in secrets:
        assert not _outside_markers(out, secret), (text, secrets, out)
    assert scrub(out, secrets) == out, (text, secrets, out)
    if not any(_outside_markers(text, s) for s in secrets):
        assert out == text  # a secret seen only inside markers changes nothing


@settings(max_examples=examples(200), deadline=None)
@given(
    text=_MARKED, secrets=st.lists(_SECRET, min_size=1, max_size=2), encoding=st.sampled_from(ECHO_ENCODINGS)
)
def test_redacted_bytes_hold_no_secret_and_every_marker_whole(
    text: str, secrets: list[str], encoding: str
) -> None:
    try:
        content = text.encode(encoding)
    except UnicodeEncodeError:
        return
    forms = echo_forms(secrets)
    out = scrub_bytes(content, forms)
    assert scrub_bytes(out, forms) == out, (text, secrets, out)
    for each in ECHO_ENCODINGS:
        for form in forms:
            try:
                needle = form.encode(each)
            except UnicodeEncodeError:  # a lone surrogate cannot be on the wire in this encoding
                continue
            assert not _bytes_outside_markers(out, needle), (text, secrets, out, each)


def _bytes_outside_markers(content: bytes, needle: bytes) -> list[int]:
    """Where `needle` occurs in `content` other than wholly inside one marker of any encoding of
    `ECHO_ENCODINGS`: the bytes may hold a marker written in another encoding than the text around
    it (a UTF-16 needle met across UTF-8 text is covered by a UTF-16 marker), and its bytes, read in
    the text's encoding, spell the marker's letters, which a one-letter secret may be."""
    spans = []
    for encoding in ECHO_ENCODINGS:
        marker = MARKER.encode(encoding)
        at = content.find(marker)
        while at >= 0:
            spans.append((at, at + len(marker)))
            at = content.find(marker, at + 1)
    found = []
    at = content.find(needle)
    while at >= 0:
        if not any(a <= at and at + len(needle) <= b for a, b in spans):
            found.append(at)
        at = content.find(needle, at + 1)
    return found


# -- end to end: a real loopback API and the runtime --------------------------------------------------


@pytest.fixture
def echo() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


def _registry(echo: RecordingServer, token: str) -> Registry:
    return Registry.from_dir(
        tickets_dir(),
        base_url=echo.base_url + "/v1",
        audit=MemoryAuditSink(),
        credentials=StaticCredentials({"TICKETS_TOKEN": token}),
        cursor_key=b"k" * 32,
    )


@settings(
    max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    token=st.sampled_from(list("[redact]"))
    | st.text(st.characters(codec="ascii", min_codepoint=0x21), min_size=1, max_size=3)
)
def test_an_answer_under_a_short_secret_keeps_its_markers(echo: RecordingServer, token: str) -> None:
    answer = {"id": "T-1", "subject": f"data {token} [redacted] x", "status": "open"}
    echo.reply(
        "GET", "/v1/tickets/", body=json.dumps(answer).encode("utf-8"), content_type="application/json"
    )
    with _registry(echo, token) as reg:
        result = reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER)
    assert result.ok, result.to_json()
    shaped = result.to_json()["result"]
    strings = _strings(shaped)
    # a secret that is JSON's own punctuation (`{`, `"`) is scrubbed out of the raw text before it is
    # parsed, so the answer is no longer JSON: a success whose excerpt this redacting tool withholds
    unreadable = isinstance(shaped, dict) and "_unreadable_body" in shaped
    if token not in "subject" and not unreadable:  # else the member's name is redacted and dropped
        assert any(MARKER in s for s in strings), (token, strings)
    if unreadable:  # only the runtime's own words (the problem, the withheld note): no upstream text
        assert str(shaped["_unreadable_body"]["excerpt"]).startswith("[withheld"), shaped
        return
    for s in strings:  # keys too: they are scrubbed as well
        assert not _outside_markers(s, token), (token, s)
        assert "redac" not in s.replace(MARKER, ""), (token, s)  # no marker cut up by another


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (k, *_strings(v))]
    if isinstance(value, list):
        return [t for v in value for t in _strings(v)]
    return [value] if isinstance(value, str) else []


@pytest.mark.long
@pytest.mark.parametrize(
    "command", [["call", "tickets", "get_ticket", "--args", '{"ticket_id": "T-1"}'], ["serve", "tickets"]]
)
def test_a_very_short_secret_is_warned_about_at_start(command: list[str]) -> None:
    env = {"TICKETS_TOKEN": "ab", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgen",
            *command,
            "--receipts",
            "memory://",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
        env=_with_path(env),
    )
    assert "TICKETS_TOKEN" in done.stderr and "short" in done.stderr, done.stderr
    assert "'ab'" not in done.stderr and " ab " not in done.stderr  # the warning never quotes the secret
    env["TICKETS_TOKEN"] = "a-long-enough-token"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolgen",
            *command,
            "--receipts",
            "memory://",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
        env=_with_path(env),
    )
    assert "short" not in done.stderr, done.stderr


def _with_path(env: dict[str, str]) -> dict[str, str]:
    import os

    from tests.support.without_modules import ROOT

    return {**os.environ, **env, "PYTHONPATH": str(ROOT / "generator")}


def test_redaction_stays_linear_in_markers_and_occurrences() -> None:
    """An answer of 100,000 markers, each followed by the secret (and the secret's letter twice inside
    every marker): the markers are looked up by bisection, not scanned per occurrence."""
    import time

    text = "[redacted]e" * 100_000
    started = time.process_time()
    out = scrub(text, ["e"])
    assert time.process_time() - started < 5
    assert out == "[redacted][redacted]" * 100_000


def test_a_secret_that_keeps_joining_a_marker_fails_closed() -> None:
    """A secret that starts with the marker's end is found again after each replacement, one
    character a round: after `MAX_ROUNDS` the whole text is redacted rather than looping on."""
    from toolgen.runtime.redaction import MAX_ROUNDS

    text = "SECRET" + "x" * (MAX_ROUNDS + 10)
    assert scrub(text, ["SECRET", "d]x"]) == MARKER
    assert scrub("SECRETxx", ["SECRET", "d]x"]) == MARKER  # within the rounds: covered the same way
