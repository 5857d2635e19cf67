"""Run an eval: every task of a task file, `runs` times, through one provider adapter and the runtime.

Input: a `TaskFile`, a provider name and model, a way to reach the provider (`Live`: the network,
optionally recording every exchange; `Replay`: recorded exchanges only) and the upstream (the
tickets example server, or a URL). Output: `RunResults` (JSON-able): per run, per task, a
`TaskOutcome` with every call the model made and what the runtime answered. Scoring is
`toolgen.evals.metrics`; this module only observes.

Per task: a fresh `Registry` (in-memory receipts, a fixed cursor key) and a fresh upstream state;
the adapter starts the conversation with `SYSTEM` and the task's prompt; each turn's tool calls go
through `Registry.call` with the adapter's dialect (validation, permission, approval, idempotency,
HTTP and shaping: the enforced path), and their results go back to the model. The scripted human:
in a task with ``approve: true`` it approves every preview the model made in that task (the result
the model sees carries ``approval: {preview_id, approved_by}``), and a record call of an approved
preview carries that `Approval`; in any other task it approves nothing, so a record call gets the
runtime's ``approval_required`` answer. A ``search_tools`` call to an adapter that sent the
client-run search (Chat Completions, Gemini with deferred tools: `Adapter.client_search`) is answered
by `toolgen.runtime.serving.search_tools.ToolSearch` over the task's registry with the eval actor's scopes, as
`toolgen serve` answers it; the found tools are added to the adapter's next request (`Adapter.load`)
and counted like a provider's search (``searches``, ``loaded``), not as a call. A task ends when the model answers without a call, after
`MAX_TURNS` turns, or on a provider error (kept in ``error``).

Recording (`Live` with ``record``) writes ``exchanges/run-<n>/<task>.json`` per task:
``{"exchanges": [...], "tool_answers": [...]}`` (`toolgen.evals.cassette`, `ToolTape`). A `Replay`
answers every provider request from it and refuses one that differs byte for byte.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx

from .. import __version__
from ..runtime import Actor, Approval, Registry
from ..runtime.serving.search_tools import SEARCH_TOOL_NAME, ToolSearch
from .cassette import RecordingTransport, ReplayMismatch, ReplayTransport
from .conversation import Adapter, ToolCall
from .outcomes import CallRecord, RunResults, TaskOutcome
from .providers import make_adapter
from .tasks import Task, TaskFile
from .upstream import connect

MAX_TURNS = 8
SYSTEM = (
    "You operate the {api} API for the user through the tools given. Call a tool only when the request "
    "needs one, and never change anything the user did not ask to change. A write is two steps: the "
    "preview_* tool returns the exact request and a preview_id; a human approves it; then call the "
    "record_* tool with that preview_id and a fresh action id. Tool errors are JSON objects with a code "
    "and a hint: read them and correct the call when you can."
)
#: the HMAC key of the runtime's cursors during an eval: fixed, so a replay sees the same cursors
CURSOR_KEY = b"toolgen-eval-cursor-key-32-bytes"


@dataclass(frozen=True)
class Live:
    """Send to the provider (`base_url`: None for its public endpoint); `record`: a folder to keep
    every exchange in (``exchanges/run-<n>/<task>.json``)."""

    api_key: str
    base_url: str | None = None
    record: Path | None = None


@dataclass(frozen=True)
class Replay:
    """Answer every provider request from the exchanges recorded in `folder`; `base_url` is the one the
    recording was made with (``meta.base_url`` of its ``results.json``; None: the SDK's default)."""

    folder: Path
    base_url: str | None = None


@dataclass
class ToolTape:
    """The runtime's answers of one task, as the model saw them: kept when recording; when replaying,
    the recorded text is what the model is sent (so measured timings inside an answer, such as a
    timeout's ``observed_ms``, do not change the replayed requests), after checking that the runtime
    gave the same outcome again (tool, ok, error code); `mismatch` says where it did not."""

    answers: list[dict[str, Any]]
    replay: bool = False
    position: int = 0
    mismatch: str | None = None

    def take(self, tool: str, ok: bool, error: str | None, text: str) -> str:
        if not self.replay:
            self.answers.append({"tool": tool, "ok": ok, "error": error, "text": text})
            return text
        if self.position >= len(self.answers):
            self.mismatch = f"tool call {self.position + 1} ({tool}) was not in the recording"
            raise ReplayMismatch(self.mismatch)
        recorded = self.answers[self.position]
        self.position += 1
        if (recorded["tool"], recorded["ok"], recorded["error"]) != (tool, ok, error):
            self.mismatch = (
                f"tool call {self.position}: the runtime answered {tool} ok={ok} error={error}; "
                f"the recording has {recorded['tool']} ok={recorded['ok']} error={recorded['error']}"
            )
            raise ReplayMismatch(self.mismatch)
        return str(recorded["text"])


def exchange_file(folder: Path, run: int, task: Task) -> Path:
    return folder / "exchanges" / f"run-{run}" / (task.id.replace("/", "--") + ".json")


def run_eval(  # noqa: PLR0913
    tasks: TaskFile,
    provider: str,
    model: str,
    runs: int,
    via: Live | Replay,
    *,
    upstream: str | None = None,
    upstream_token: str | None = None,
    scripted: bool = False,
    progress: Callable[[int, Task, TaskOutcome], None] | None = None,
) -> RunResults:
    """Run every task `runs` times (see the module docstring). Raises `ValueError` for an unknown
    provider or a missing upstream, `ImportError` when the provider SDK is absent, `OSError` when a
    recording cannot be read or written."""
    package = tasks.package_dir()
    policy = json.loads((package / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((package / "mcp.json").read_text(encoding="utf-8"))
    scopes = sorted({s for row in policy.get("tools", []) for s in row.get("permission") or []})
    actor = Actor.of("eval", scopes)
    # a replay sends to no host (its transport answers), but to the paths the recording was made on
    base_url = via.base_url
    results: list[list[TaskOutcome]] = []
    for run in range(1, runs + 1):
        outcomes: list[TaskOutcome] = []
        for task in tasks.tasks:
            transport: httpx.BaseTransport
            if isinstance(via, Replay):
                tape = json.loads(exchange_file(via.folder, run, task).read_text(encoding="utf-8"))
                transport = ReplayTransport(tape["exchanges"])
                tools = ToolTape(tape["tool_answers"], replay=True)
                key = "replay"
            else:
                transport = RecordingTransport()
                tools = ToolTape([])
                key = via.api_key
            with httpx.Client(transport=transport, timeout=120.0) as client:
                adapter = make_adapter(
                    provider, package, model, api_key=key, base_url=base_url, http_client=client
                )
                with connect(policy, upstream, upstream_token) as conn:
                    registry = Registry(
                        policy,
                        catalog,
                        base_url=conn.base_url,
                        credentials=conn.credentials,
                        http_client=conn.http_client,
                        cursor_key=CURSOR_KEY,
                    )
                    with registry:
                        outcome = _run_task(task, adapter, registry, actor, str(policy.get("api", "")), tools)
            if isinstance(transport, ReplayTransport) and outcome.error is None and not transport.finished:
                outcome.error = "replay: recorded exchanges were left over"
            if isinstance(transport, ReplayTransport) and transport.mismatch:
                outcome.error = f"replay: {transport.mismatch}"
            if isinstance(via, Live) and via.record is not None and isinstance(transport, RecordingTransport):
                target = exchange_file(via.record, run, task)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(
                    json.dumps(
                        {"exchanges": transport.exchanges, "tool_answers": tools.answers},
                        indent=1,
                        sort_keys=True,
                    )
                    + "\n",
                    encoding="utf-8",
                )
            outcomes.append(outcome)
            if progress is not None:
                progress(run, task, outcome)
        results.append(outcomes)
    meta = {
        "api": tasks.api,
        "provider": provider,
        "model": model,
        "runs": runs,
        "toolgen": __version__,
        "scripted": scripted,
        "base_url": base_url,
        "tasks": [task_meta(t) for t in tasks.tasks],
    }
    return RunResults(meta, results)


def task_meta(task: Task) -> dict[str, Any]:
    """What a report needs of a task: id, kind, split and the expectations it is scored against."""
    return {
        "id": task.id,
        "tool": task.tool,
        "kind": task.kind,
        "split": task.split,
        "prompt": task.prompt,
        "expect_tool": task.expect_tool,
        "writes": task.writes,
        "approve": task.approve,
        "constraints": [{"pointer": c.pointer, "op": c.op, "value": c.value} for c in task.constraints],
    }


def _run_task(
    task: Task, adapter: Adapter, registry: Registry, actor: Actor, api: str, tools: ToolTape
) -> TaskOutcome:
    outcome = TaskOutcome(task=task.id)
    approved: set[str] = set()
    started = time.monotonic()
    search = ToolSearch(registry) if adapter.client_search else None
    try:
        adapter.begin(SYSTEM.format(api=api), task.prompt)
        for _ in range(MAX_TURNS):
            turn = adapter.step()
            outcome.turns += 1
            outcome.tokens_in += turn.tokens_in
            outcome.tokens_out += turn.tokens_out
            outcome.searches += turn.searches
            outcome.loaded.extend(turn.loaded)
            outcome.text = turn.text
            if not turn.calls:
                break
            answers = [
                _search(call, search, adapter, actor, outcome, tools)
                if search is not None and call.name == SEARCH_TOOL_NAME
                else _execute(call, task, adapter.dialect, registry, actor, approved, outcome, tools)
                for call in turn.calls
            ]
            adapter.answer(answers)
    except ReplayMismatch as exc:
        outcome.error = f"replay: {exc}"
    except Exception as exc:  # noqa: BLE001 - a provider error ends the task and is reported, not raised
        outcome.error = f"{type(exc).__name__}: {str(exc)[:300]}"
    outcome.latency_s = round(time.monotonic() - started, 3)
    return outcome


def _search(
    call: ToolCall, search: ToolSearch, adapter: Adapter, actor: Actor, outcome: TaskOutcome, tools: ToolTape
) -> tuple[ToolCall, str, bool]:
    """A client-run ``search_tools`` call: answered with the package's index for `actor` (a null
    ``limit`` is the default), the found tools added to the adapter's next request.

    The model reads each found tool's definition once, in that request's tool list: the call's
    answer names them (``{"ok": true, "result": {"loaded": [<tool name>, ...], "hits": [...]}}``,
    with the ``note`` when nothing matched) instead of repeating the definitions
    `ToolSearch.run` returns for MCP, whose client has no next request to put them in."""
    result = search.run(call.arguments, actor)
    outcome.searches += 1
    found = result.result.get("tools", []) if result.ok and isinstance(result.result, dict) else []
    names = [str(t["name"]) for t in found]
    outcome.loaded.extend(adapter.load(names))
    answer = result.to_json()
    if result.ok and isinstance(result.result, dict):
        answer["result"] = {"loaded": names, **{k: v for k, v in result.result.items() if k != "tools"}}
    code = result.error.code if result.error else None
    text = tools.take(
        SEARCH_TOOL_NAME, result.ok, code, json.dumps(answer, sort_keys=True, separators=(",", ":"))
    )
    return call, text, not result.ok


def _execute(
    call: ToolCall,
    task: Task,
    dialect: str,
    registry: Registry,
    actor: Actor,
    approved: set[str],
    outcome: TaskOutcome,
    tools: ToolTape,
) -> tuple[ToolCall, str, bool]:
    name = call.name
    if name not in registry.specs:  # a namespaced name (``issues.get_issue``) names the same tool
        name = name.rsplit(".", 1)[-1]
    args = call.arguments
    preview_id = args.get("preview_id") if isinstance(args, dict) else None
    approval = Approval(str(preview_id), approved_by="scripted-human") if preview_id in approved else None
    result = registry.call(name, args, actor=actor, approval=approval, dialect=dialect)
    spec = registry.specs.get(name)
    mode = spec.row.mode if spec is not None else None
    out = result.to_json()
    if result.ok and mode == "preview" and task.approve and isinstance(result.result, dict):
        pid = result.result.get("preview_id")
        if isinstance(pid, str):
            approved.add(pid)
            out["approval"] = {"preview_id": pid, "approved_by": "scripted-human"}
    outcome.calls.append(
        CallRecord(
            tool=name,
            arguments=args,
            ok=result.ok,
            error=result.error.code if result.error else None,
            write=bool(result.ok and spec is not None and spec.mutating and not result.replayed),
            approved=approval is not None,
        )
    )
    text = tools.take(
        name,
        result.ok,
        result.error.code if result.error else None,
        json.dumps(out, sort_keys=True, separators=(",", ":")),
    )
    return call, text, not result.ok
