"""The record of an eval run: every task's calls, what the runtime answered, usage; JSON both ways.

Input: what `toolgen.evals.runner` observed. Output: `RunResults` and its JSON form
(``results.json`` of a run folder: ``{"meta": {...}, "runs": [[outcome, ...], ...]}``), read back by
`RunResults.from_json` for `toolgen eval report`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class CallRecord:
    """One tool call and the runtime's answer: ok, the error code, whether it reached the upstream as
    a write (a record call that succeeded and was not a replay) and whether the human approved it."""

    tool: str
    arguments: Any
    ok: bool
    error: str | None = None
    write: bool = False
    approved: bool = False


@dataclass
class TaskOutcome:
    task: str
    turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    searches: int = 0
    loaded: list[str] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    text: str = ""
    error: str | None = None


@dataclass
class RunResults:
    """Everything a report needs: `meta` (api, provider, model, runs, toolgen version, task file) and
    `runs[i]` (one `TaskOutcome` per task, in task-file order)."""

    meta: dict[str, Any]
    runs: list[list[TaskOutcome]]

    def to_json(self) -> dict[str, Any]:
        return {"meta": self.meta, "runs": [[asdict(o) for o in run] for run in self.runs]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunResults:
        runs = [
            [TaskOutcome(**{**o, "calls": [CallRecord(**c) for c in o["calls"]]}) for o in run]
            for run in data["runs"]
        ]
        return cls(dict(data["meta"]), runs)
