"""What a caller types reaches the audit log bounded and neutralised: a tool name or an argument
name the caller made up (a newline and a forged JSON record, ANSI escapes, a bidirectional override,
a line separator, lone surrogates, a megabyte) is recorded as at most `MAX_AUDIT_TEXT` characters
with every unsafe character escaped and, when anything was changed, the length and SHA-256 of what
was sent, so an operator can match it; a name that needs none of this is recorded as it is. Every
call is made through the registry against the loopback tickets API, into a JSON-lines file and
memory at once; the file holds exactly one line per event."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples
from tests.support.runtime_env import READER, tickets_dir

from toolgen.runtime import FanoutSink, JsonlAuditSink, MemoryAuditSink, Registry, StaticCredentials
from toolgen.runtime.audit import MAX_AUDIT_TEXT, AuditEvent, audit_text
from toolgen.testing.tickets_server import TicketsServer

UNSAFE = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}
HOSTILE = {
    "a forged record": 'get_ticket\n{"tool": "record_ticket_delete", "decision": "allow"}',
    "ANSI escapes": "\x1b[2J\x1b[31mget_ticket\x1b[0m",
    "a carriage return": "get_ticket\rdelete_everything",
    "a line separator": "get_ticket\u2028forged",
    "a bidirectional override": "get_\u202eticket_delete",
    "lone surrogates": "get_\ud800ticket\udfff",
    "one megabyte": "x" * 1_000_000,
    "a megabyte of newlines": "\n" * 1_000_000,
    "NUL": "get_ticket\x00",
}


@pytest.fixture
def audited(server: TicketsServer, tmp_path: Path) -> Iterator[tuple[Registry, MemoryAuditSink, Path]]:
    memory, path = MemoryAuditSink(), tmp_path / "audit.jsonl"
    jsonl = JsonlAuditSink(path)
    registry = Registry.from_dir(
        tickets_dir(),
        base_url=server.base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": server.token}),
        audit=FanoutSink(memory, jsonl),
    )
    yield registry, memory, path
    jsonl.close()


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def safe(value: Any) -> bool:
    """Every string in `value` (keys too) is short and holds no unsafe character."""
    if isinstance(value, str):
        return len(value) <= MAX_AUDIT_TEXT + 64 and not any(unicodedata.category(c) in UNSAFE for c in value)
    if isinstance(value, dict):
        return all(safe(k) and safe(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return all(safe(v) for v in value)
    return True


def check_log(memory: MemoryAuditSink, path: Path) -> list[dict[str, Any]]:
    """The file's records: one line per event, each a JSON object as the memory sink holds it, every
    string in it safe, no line longer than 4 KiB."""
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    assert lines[-1] == b"" and len(lines) - 1 == len(memory.events)
    records = [json.loads(line) for line in lines[:-1]]
    assert records == [e.to_json() for e in memory.events]
    for line, record in zip(lines, records, strict=False):
        assert len(line) < 4096 and safe(record), line[:200]
    return records


@pytest.mark.parametrize("why", sorted(HOSTILE))
def test_a_hostile_tool_name_is_recorded_bounded_and_neutralised(
    audited: tuple[Registry, MemoryAuditSink, Path], why: str
) -> None:
    registry, memory, path = audited
    name = HOSTILE[why]
    result = registry.call(name, {"ticket_id": "T-102"}, actor=READER)
    assert result.error is not None and result.error.code == "unknown_tool"  # the sink never failed
    records = check_log(memory, path)
    tools = {r["tool"] for r in records if r["call_id"] == result.call_id}
    assert len(tools) == 1
    (shown,) = tools
    assert shown.endswith(f"[{len(name)} chars, sha256:{digest(name)}]"), shown  # what an operator matches
    assert shown != name and "\n" not in shown and "\x1b" not in shown


def test_a_hostile_argument_name_is_recorded_bounded_and_neutralised(
    audited: tuple[Registry, MemoryAuditSink, Path],
) -> None:
    registry, memory, path = audited
    for name in HOSTILE.values():
        result = registry.call("get_ticket", {"ticket_id": "T-102", name: 1}, actor=READER)
        assert result.error is not None and result.error.code == "invalid_arguments"
    records = check_log(memory, path)
    pointers = [r["detail"]["pointer"] for r in records if "pointer" in r["detail"]]
    assert len(pointers) >= len(HOSTILE)


def test_ordinary_names_are_recorded_as_they_are(audited: tuple[Registry, MemoryAuditSink, Path]) -> None:
    """The guard: a known tool, an unknown name that needs no escaping and the actor are recorded
    verbatim, without a digest."""
    registry, memory, path = audited
    assert registry.call("get_ticket", {"ticket_id": "T-102"}, actor=READER).ok
    unknown = registry.call("get_tickets_by_émile", {}, actor=READER)
    records = check_log(memory, path)
    assert {r["tool"] for r in records} == {"get_ticket", "get_tickets_by_émile"}
    assert {r["actor"] for r in records} == {READER.id}
    assert unknown.error is not None and unknown.error.code == "unknown_tool"


def test_an_event_made_directly_is_neutralised_too() -> None:
    """Every emitter (the call path, issued approvals, search, a crash) makes an `AuditEvent`; the
    event itself bounds its caller-typed fields: tool, actor and the facts of `detail`, keys and
    values at any depth."""
    event = AuditEvent(
        0.0,
        "c",
        "t\n" * 10,
        "jwt:https://a.test/#" + "\x1b" * 5000,
        "find",
        "deny",
        detail={"pointer": "/\u2028", "deep": [{"k\n": ["v\r"] * 500}], "n": 7, "ok": True},
    )
    assert safe(event.to_json())
    assert event.detail["n"] == 7 and event.detail["ok"] is True
    assert len(event.detail["deep"][0]["k\\u000a…[2 chars, sha256:" + digest("k\n") + "]"]) <= 51
    assert AuditEvent(0.0, "c", {"a": 1}, "actor", "find", "deny").tool == "<dict>"  # type: ignore[arg-type]


@settings(max_examples=examples(400), deadline=None)
@given(st.text(max_size=400))
def test_audit_text_keeps_safe_text_and_marks_every_change(text: str) -> None:
    shown = audit_text(text)
    assert safe(shown)
    if shown == text:
        assert len(text) <= MAX_AUDIT_TEXT and not any(unicodedata.category(c) in UNSAFE for c in text)
    else:
        assert shown.endswith(f"…[{len(text)} chars, sha256:{digest(text)}]")
