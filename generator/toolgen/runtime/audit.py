"""Audit events: one record per decision the runtime takes on a call.

Every step of the call path (find, validate, permission, approval, timeout, idempotency, http,
output, result) emits an `AuditEvent` to an `AuditSink`. Events carry the tool, the actor id, the
step, the decision, the digest of the call's arguments (`digest_arguments`), the request's
fingerprint once it is built, the outcome code and, for a policy decision, the rule that decided —
never argument values, never credentials. Sinks: `MemoryAuditSink` (bounded in-memory list, the
default), `JsonlAuditSink` (append-only JSON lines file), `FanoutSink` (several at once).

What a caller typed is bounded and neutralised by the event itself (`AuditEvent.__post_init__`,
`audit_text`): its `tool` (a name the caller made up, as given), its `actor` and every string of its
`detail` (an argument's name inside a JSON pointer) keep at most `MAX_AUDIT_TEXT` characters, with
every character that could break a line, drive a terminal or reorder text escaped (`\\uXXXX`,
`toolgen.shown_text.terminal_safe`), and when anything was changed the text's length and SHA-256
follow (``…[N chars, sha256:<16 hex>]``), for an operator to match it against what was sent. So no
caller can forge a line of `JsonlAuditSink`'s file, write an escape sequence to the terminal of
whoever reads it, or grow a record past a few KiB; a name that needs none of this (every known tool,
an ordinary unknown name) is recorded as it is.

A policy decision is emitted through one function, `toolgen.runtime.pipeline.state.Call.decide`
(step, `Decision`, the rule, facts): the permission (``allow``/``deny``, rule ``/permission``),
the approval (``ask`` when one is needed and not given, ``allow`` when spent, ``deny`` when it does
not match; rule ``/approval``), the caller's credential (rule ``/auth/<i>/per_caller``) and any
later policy member (its own JSON pointer in the policy row, e.g. ``/limits/0``, decision ``limit``).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ..shown_text import terminal_safe

#: What a policy decision decided: the call may go on, is refused, waits for a human's approval, or
#: is over a limit.
Decision = Literal["allow", "deny", "ask", "limit"]

#: The most characters of a caller's text an event keeps in one field (a tool or argument name, an
#: actor id), escapes included; the length and digest of a changed text follow it.
MAX_AUDIT_TEXT = 200
#: The most members of a list or object in an event's `detail` (the rest are counted, not kept), and
#: how deep `detail` is kept.
MAX_DETAIL_ITEMS = 50
MAX_DETAIL_DEPTH = 4


def audit_text(value: Any, limit: int = MAX_AUDIT_TEXT) -> str:
    """`value` as an audit event records text a caller may have typed.

    A string of at most `limit` characters, none of them unsafe (`toolgen.shown_text`: control,
    format, line and paragraph separator, surrogate, private-use and unassigned characters), is
    returned as it is. Any other string gives its first characters with every unsafe one escaped
    (``\\u000a``), at most `limit` characters in all, then ``…[N chars, sha256:H]``: its length in
    characters and the first 16 hex digits of the SHA-256 of its UTF-8 (lone surrogates as
    themselves: ``surrogatepass``). A number, boolean or None is its ``repr`` read the same way;
    anything else is ``<type name>``. Costs O(`limit`) characters examined plus one hash pass."""
    if value is None or isinstance(value, (bool, int, float)):
        value = repr(value)
    if not isinstance(value, str):
        return f"<{type(value).__name__}>"
    if len(value) <= limit and (
        (value.isascii() and value.isprintable()) or terminal_safe(value, keep_newlines=False) == value
    ):
        return value
    shown, used = [], 0
    for char in value[:limit]:
        piece = terminal_safe(char, keep_newlines=False)
        if used + len(piece) > limit:
            break
        shown.append(piece)
        used += len(piece)
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{''.join(shown)}…[{len(value)} chars, sha256:{digest}]"


def _bounded(value: Any, depth: int = 0) -> Any:
    """An event's `detail` fact with `audit_text` applied to every string (keys too), lists and
    objects cut to `MAX_DETAIL_ITEMS` members (a last string counts the rest) and `MAX_DETAIL_DEPTH`
    levels; numbers, booleans and None as they are."""
    if isinstance(value, str):
        return audit_text(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if depth >= MAX_DETAIL_DEPTH:
        return f"<{type(value).__name__}>"
    if isinstance(value, dict):
        items = list(value.items())
        out = {audit_text(str(k)): _bounded(v, depth + 1) for k, v in items[:MAX_DETAIL_ITEMS]}
        if len(items) > MAX_DETAIL_ITEMS:
            out["…"] = f"[{len(items)} members]"
        return out
    if isinstance(value, (list, tuple)):
        kept = [_bounded(v, depth + 1) for v in value[:MAX_DETAIL_ITEMS]]
        if len(value) > MAX_DETAIL_ITEMS:
            kept.append(f"…[{len(value)} items]")
        return kept if isinstance(value, list) else tuple(kept)
    return audit_text(value)


def digest_arguments(arguments: Any) -> str:
    """``"sha256:" + hex`` of the call's arguments as the caller gave them: their JSON with sorted
    keys and no whitespace (UTF-8), or of their ``repr`` when they are not JSON (a value no JSON
    holds), or of their type's name when not even that can be walked. Identifies the arguments in
    audit without holding them; unlike the request's fingerprint it exists before validation, so a
    refused call has one too."""
    try:
        text = json.dumps(
            arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True
        )
    except (TypeError, ValueError, RecursionError):
        try:
            text = "repr:" + repr(arguments)
        except (RecursionError, ValueError):  # nested beyond what Python can walk: its type alone
            text = "unwalkable:" + type(arguments).__name__
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(slots=True)
class AuditEvent:
    """One decision. `ts` is Unix seconds; `call_id` groups the events of one call; `step` is the
    call-path step; `decision` e.g. ``allow``/``deny``/``replay``/``send``; `code` the error code
    when the decision is a failure; `detail` small non-secret facts (missing scopes, HTTP status,
    attempt number, elapsed ms). `tool`, `actor` and `detail` are bounded and neutralised when the
    event is made (`audit_text`; the module docstring)."""

    ts: float
    call_id: str
    tool: str
    actor: str
    step: str
    decision: str
    fingerprint: str | None = None
    code: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    rule: str | None = None
    args_digest: str | None = None

    def __post_init__(self) -> None:
        self.tool = audit_text(self.tool)
        self.actor = audit_text(self.actor)
        if self.detail:
            self.detail = {audit_text(str(k)): _bounded(v, 1) for k, v in self.detail.items()}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class AuditSink(Protocol):
    """Receives audit events; must not raise and must be cheap (it runs on the call path)."""

    def emit(self, event: AuditEvent) -> None: ...


class MemoryAuditSink:
    """Keeps the last `maxlen` events in memory (`events`)."""

    def __init__(self, maxlen: int = 10_000) -> None:
        self._events: deque[AuditEvent] = deque(maxlen=maxlen)

    def emit(self, event: AuditEvent) -> None:
        self._events.append(event)

    @property
    def events(self) -> list[AuditEvent]:
        return list(self._events)

    def for_call(self, call_id: str) -> list[AuditEvent]:
        return [e for e in self._events if e.call_id == call_id]

    def clear(self) -> None:
        self._events.clear()

    def __iter__(self) -> Iterator[AuditEvent]:
        return iter(list(self._events))


class JsonlAuditSink:
    """Appends one JSON object per line to `path` (created with its parent directories)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the sink

    def emit(self, event: AuditEvent) -> None:
        line = json.dumps(event.to_json(), separators=(",", ":"), ensure_ascii=False, sort_keys=True)
        with self._lock:
            self._fh.write(line + "\n")
            self._fh.flush()

    def close(self) -> None:
        with self._lock:
            self._fh.close()


class FanoutSink:
    """Sends every event to each of `sinks`."""

    def __init__(self, *sinks: AuditSink) -> None:
        self.sinks = sinks

    def emit(self, event: AuditEvent) -> None:
        for sink in self.sinks:
            sink.emit(event)
