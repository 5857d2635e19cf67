"""Audit events: one record per decision the runtime takes on a call.

Every step of the call path (find, validate, permission, approval, timeout, idempotency, http,
output, result) emits an `AuditEvent` to an `AuditSink`. Events carry the tool, the actor id, the
step, the decision, the digest of the call's arguments (`digest_arguments`), the request's
fingerprint once it is built, the outcome code and, for a policy decision, the rule that decided —
never argument values, never credentials. Sinks: `MemoryAuditSink` (bounded in-memory list, the
default), `JsonlAuditSink` (append-only JSON lines file), `FanoutSink` (several at once).

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

#: What a policy decision decided: the call may go on, is refused, waits for a human's approval, or
#: is over a limit.
Decision = Literal["allow", "deny", "ask", "limit"]


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
    attempt number, elapsed ms)."""

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
