"""Audit events: one record per decision the runtime takes on a call.

Every step of the call path (find, validate, permission, approval, timeout, idempotency, http,
output, result) emits an `AuditEvent` to an `AuditSink`. Events carry the tool, the actor id, the
step, the decision, the argument fingerprint and the outcome code — never argument values, never
credentials. Sinks: `MemoryAuditSink` (bounded in-memory list, the default), `JsonlAuditSink`
(append-only JSON lines file), `FanoutSink` (several at once).
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol


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
