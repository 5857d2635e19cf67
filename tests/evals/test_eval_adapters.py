"""The runner's four provider adapters, offline: each official SDK talks to a loopback server that
speaks its wire format (the scripted model, not a language model); every call the model makes goes
through the toolgen runtime to a loopback upstream; recordings replay byte-for-byte."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import replace
from fnmatch import fnmatch
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

# The SDKs are imported by the tests that use them, not at collection: importing all three costs each
# xdist worker seconds of CPU before its first test. Skip (like importorskip) when one is missing.
_MISSING = [
    name
    for name in ("openai", "anthropic", "google.genai")
    if importlib.util.find_spec(name.split(".")[0]) is None or importlib.util.find_spec(name) is None
]
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"the provider SDKs are not installed: {_MISSING}")

from toolgen.evals.metrics import score_runs, summarise
from toolgen.evals.runner import Live, Replay, exchange_file, run_eval
from toolgen.evals.tasks import TaskFile, load_tasks
from toolgen.testing.loopback import LoopbackServer
from toolgen.testing.scripted import MODEL_NAME, ScriptedModelServer

ROOT = Path(__file__).resolve().parents[2]
WIRE = {"openai": "responses", "anthropic": "messages", "gemini": "gemini", "openai-compatible": "chat"}


def _tasks(api: str, *globs: str) -> TaskFile:
    tasks = load_tasks(ROOT / "evals" / f"{api}.yaml")
    return replace(tasks, tasks=tuple(t for t in tasks.tasks if any(fnmatch(t.id, g) for g in globs)))


@pytest.mark.parametrize("provider", sorted(WIRE))
def test_each_adapter_runs_tasks_through_the_runtime_and_replays(provider: str, tmp_path: Path) -> None:
    tasks = _tasks(
        "tickets",
        "ticket_followup/positive/1",
        "ticket_followup/multi_step",
        "ticket_followup/no_tool",
        "list_tickets/positive/1",
    )
    with ScriptedModelServer(tasks.package_dir()) as server:
        live = run_eval(tasks, provider, MODEL_NAME, 1, Live("k", server.base_url(provider), tmp_path))
        assert server.requests[WIRE[provider]] > 0
        assert sum(server.requests.values()) == server.requests[WIRE[provider]]
    outcomes = {o.task: o for o in live.runs[0]}
    assert all(o.error is None for o in outcomes.values())
    first = outcomes["ticket_followup/positive/1"]
    assert [c.tool for c in first.calls] == ["preview_ticket_followup"] and first.calls[0].ok
    assert first.calls[0].arguments["ticket_id"] == "T-102"
    assert first.tokens_in > 0 and first.tokens_out > 0 and first.turns == 2
    # preview -> the scripted human approves -> record: exactly one write, approved, through the runtime
    multi = outcomes["ticket_followup/multi_step"]
    assert [c.tool for c in multi.calls] == ["preview_ticket_followup", "record_ticket_followup"]
    assert [c.write for c in multi.calls] == [False, True] and multi.calls[1].approved
    # the lexical model calls a tool where none is asked for: scored as a failure, not hidden
    scores = score_runs(tasks.tasks, live)
    by_task = {s.task: s.values for s in scores[0]}
    assert by_task["ticket_followup/multi_step"]["pass"] == 1.0
    assert by_task["ticket_followup/no_tool"]["selection"] == 0.0
    # the recording replays offline with the same outcomes, and a changed request is refused
    replayed = run_eval(tasks, provider, MODEL_NAME, 1, Replay(tmp_path, server.base_url(provider)))
    assert [(o.task, o.calls, o.tokens_in, o.error) for o in replayed.runs[0]] == [
        (o.task, o.calls, o.tokens_in, o.error) for o in live.runs[0]
    ]
    tape_file = exchange_file(tmp_path, 1, tasks.tasks[0])
    tape = json.loads(tape_file.read_text())
    tape["exchanges"][0]["request"]["body"] = tape["exchanges"][0]["request"]["body"].replace(
        "T-102", "T-103"
    )
    tape_file.write_text(json.dumps(tape))
    broken = run_eval(
        replace(tasks, tasks=tasks.tasks[:1]),
        provider,
        MODEL_NAME,
        1,
        Replay(tmp_path, server.base_url(provider)),
    )
    assert broken.runs[0][0].error == "replay: exchange 1: the request's body differs from the recording"


class _Upstream(LoopbackServer):
    """Any API: 200 and an empty JSON object for every request; counts requests by path."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        paths = self.paths

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                paths.append(f"{self.command} {self.path}")
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

        super().__init__(ThreadingHTTPServer(("127.0.0.1", 0), Handler))

    @property
    def url(self) -> str:
        port = self.httpd.server_address[1]  # type: ignore[index]
        return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_deferred_tools_are_loaded_by_the_providers_tool_search(provider: str, tmp_path: Path) -> None:
    policy = json.loads((ROOT / "generated" / "github" / "policy.json").read_text())
    deferred = {r["tool"] for r in policy["tools"] if r["loading"] == "deferred"}
    tasks = _tasks("github", "get_pull_request/positive/2", "get_issue/positive/2")
    assert tasks.tasks[0].expect_tool in deferred or tasks.tasks[1].expect_tool in deferred
    with _Upstream() as upstream, ScriptedModelServer(tasks.package_dir()) as server:
        results = run_eval(
            tasks,
            provider,
            MODEL_NAME,
            1,
            Live("k", server.base_url(provider), tmp_path),
            upstream=upstream.url,
        )
        reached = list(upstream.paths)
    outcomes = {o.task: o for o in results.runs[0]}
    pulls, issue = outcomes["get_pull_request/positive/2"], outcomes["get_issue/positive/2"]
    assert pulls.calls[0].tool == "get_pull_request" and pulls.calls[0].ok
    assert pulls.searches == 1 and pulls.loaded == ["get_pull_request"]
    for outcome in (pulls, issue):  # one search per deferred tool, before its first call; none for eager ones
        assert outcome.searches == len({c.tool for c in outcome.calls if c.tool in deferred})
        assert outcome.loaded == sorted({c.tool for c in outcome.calls if c.tool in deferred})
    assert any(p.startswith("GET /repos/example-owner-2/example-repo-2/pulls/13") for p in reached)
    # the request carried the package's dialect catalog: deferred tools and the tool-search tool
    first = json.loads(
        json.loads(exchange_file(tmp_path, 1, tasks.tasks[0]).read_text())["exchanges"][0]["request"]["body"]
    )
    if provider == "openai":
        assert {"type": "tool_search"} in first["tools"]
        namespaces = {t["name"]: t for t in first["tools"] if t.get("type") == "namespace"}
        assert any(fn.get("defer_loading") for fn in namespaces["pulls"]["tools"])
    else:
        assert first["tools"][-1]["type"] == "tool_search_tool_bm25_20251119"
        assert any(t.get("defer_loading") for t in first["tools"]) and any(
            t.get("strict") for t in first["tools"] if "input_schema" in t
        )


CLIENT_SEARCH = {"openai-compatible": ("chat", "openai.json"), "gemini": ("gemini", "gemini.json")}


def _sent_tools(body: dict[str, Any], provider: str) -> list[dict[str, Any]]:
    if provider == "gemini":
        return [
            d for t in body["tools"] for d in t.get("functionDeclarations") or t.get("function_declarations")
        ]
    return list(body["tools"])


def _tool_name(entry: dict[str, Any]) -> str:
    return str(entry["function"]["name"] if "function" in entry else entry["name"])


@pytest.mark.parametrize("provider", sorted(CLIENT_SEARCH))
def test_deferred_tools_are_found_by_the_client_run_search(provider: str, tmp_path: Path) -> None:
    """Chat Completions and Gemini defer nothing: the first request carries the eager entries and the
    `search_tools` entry only (the build's up-front view); the model's `search_tools` call is answered
    by the runner with the package's index, and the found tools' entries of openai.json / gemini.json
    ride on the next request, so the deferred tool is then called through the runtime."""
    from toolgen.search.tool import gemini_search_declaration, openai_search_function

    package = ROOT / "generated" / "github"
    policy = json.loads((package / "policy.json").read_text())
    deferred = {r["tool"] for r in policy["tools"] if r["loading"] == "deferred"}
    eager = [r["tool"] for r in policy["tools"] if r["loading"] == "eager"]
    searchable = sorted({r["toolset"] for r in policy["tools"] if r["loading"] == "deferred"})
    wire, file = CLIENT_SEARCH[provider]
    pool = {_tool_name(e): e for e in json.loads((package / file).read_text())}
    tasks = _tasks("github", "get_pull_request/positive/2")
    assert tasks.tasks[0].expect_tool in deferred
    with _Upstream() as upstream, ScriptedModelServer(tasks.package_dir()) as server:
        results = run_eval(
            tasks,
            provider,
            MODEL_NAME,
            1,
            Live("k", server.base_url(provider), tmp_path),
            upstream=upstream.url,
        )
        assert server.requests[wire] == 3  # search, the call, the answer
        reached = list(upstream.paths)
        # the recording replays offline: the same search, the same tools added
        replayed = run_eval(
            tasks, provider, MODEL_NAME, 1, Replay(tmp_path, server.base_url(provider)), upstream=upstream.url
        )
    outcome = results.runs[0][0]
    assert outcome.error is None, outcome.error
    assert [c.tool for c in outcome.calls] == ["get_pull_request"] and outcome.calls[0].ok
    assert outcome.searches == 1 and "get_pull_request" in outcome.loaded
    assert any(p.startswith("GET /repos/example-owner-2/example-repo-2/pulls/13") for p in reached)
    exchanges = json.loads(exchange_file(tmp_path, 1, tasks.tasks[0]).read_text())["exchanges"]
    bodies = [json.loads(e["request"]["body"]) for e in exchanges]
    first = _sent_tools(bodies[0], provider)
    search = (
        openai_search_function(searchable) if provider != "gemini" else gemini_search_declaration(searchable)
    )
    assert [_tool_name(e) for e in first] == [*[n for n in pool if n in eager], "search_tools"]
    assert first[-1] == search and len(first) < len(pool)
    assert "get_pull_request" not in [_tool_name(e) for e in first]
    # the search's answer went back as the call's result; the next request adds the found entries as built
    second = _sent_tools(bodies[1], provider)
    assert second[: len(first)] == first
    added = second[len(first) :]
    assert [_tool_name(e) for e in added] == outcome.loaded
    assert all(e == pool[_tool_name(e)] for e in added)
    # ... and the search's answer names them rather than repeating their definitions
    answer = json.loads(
        json.loads(exchange_file(tmp_path, 1, tasks.tasks[0]).read_text())["tool_answers"][0]["text"]
    )
    assert answer["ok"] and "tools" not in answer["result"]
    assert set(outcome.loaded) <= set(answer["result"]["loaded"])
    assert "get_pull_request" in [h["tool"] for h in answer["result"]["hits"]]
    assert json.dumps(pool["get_pull_request"], sort_keys=True) not in json.dumps(answer, sort_keys=True)
    assert replayed.runs[0][0].error is None and replayed.runs[0][0].loaded == outcome.loaded


def test_the_client_run_search_respects_the_callers_scopes(tmp_path: Path) -> None:
    """The runner answers `search_tools` as `toolgen serve` does: a tool the eval actor's scopes do not
    allow is neither returned nor added to the next request."""
    from toolgen.evals.client_search import client_catalog
    from toolgen.runtime import Actor, Registry
    from toolgen.runtime.serving.search_tools import ToolSearch
    from toolgen.search.tool import openai_search_function

    package = ROOT / "generated" / "github"
    policy = json.loads((package / "policy.json").read_text())
    registry = Registry(policy, json.loads((package / "mcp.json").read_text()), base_url="http://127.0.0.1:9")
    row = next(r for r in policy["tools"] if r["tool"] == "get_pull_request")
    search = ToolSearch(registry)
    catalog = client_catalog(package, "openai.json", openai_search_function)
    everything = sorted({s for r in policy["tools"] for s in r.get("permission") or []})
    found = search.run({"query": "get pull request", "limit": None}, Actor.of("eval", everything))
    assert (
        found.ok
        and found.result is not None
        and "get_pull_request" in [t["name"] for t in found.result["tools"]]
    )
    narrow = [s for s in everything if s not in (row.get("permission") or [])]
    hidden = search.run({"query": "get pull request", "limit": None}, Actor.of("eval", narrow))
    assert hidden.ok and hidden.result is not None
    names = [t["name"] for t in hidden.result["tools"]]
    assert "get_pull_request" not in names
    assert "get_pull_request" not in catalog.load(names)


def test_summaries_give_mean_and_spread_over_runs(tmp_path: Path) -> None:
    tasks = _tasks("tickets", "list_tickets/*")
    with ScriptedModelServer(tasks.package_dir()) as server:
        results = run_eval(
            tasks, "openai-compatible", MODEL_NAME, 3, Live("k", server.base_url("openai-compatible"))
        )
    summary = summarise(score_runs(tasks.tasks, results), "all")
    assert summary.tasks == len(tasks.tasks)
    selection = summary.stats["selection"]
    assert len(selection.per_run) == 3 and selection.sd == 0.0  # a scripted model answers the same each run
    assert selection.ci95 == (selection.mean, selection.mean)
