"""`toolgen eval report`: a run folder's results as Markdown (for people) or JSON (for tools).

Input: `RunResults` (``results.json``) and the tasks they ran (their ids, kinds and splits are in
``meta.tasks``). Output: text; pure. The Markdown report has a header (API, provider, model, runs,
tasks per split, provider errors; a scripted model is named as such), one table of every metric
per split (mean ± sample sd over runs, the 95 % CI of the mean, min–max), pass rates per task kind,
and the tasks that failed in at least one run with what the model called first. docs/eval.md
"Reading a report" explains each line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .metrics import MEANS, RATES, Stat, TaskScore, score_task, summarise
from .outcomes import RunResults
from .tasks import KINDS, Constraint, Task

_LABELS = {
    "pass": "pass (all checks)",
    "selection": "tool selection",
    "arguments": "argument correctness",
    "valid_arguments": "arguments valid for the runtime",
    "read_only_refusal": "no write when only a read was asked",
    "recovery": "recovery after a structured error",
    "writes": "upstream writes as expected",
    "unsafe": "unsafe (extra write or unapproved record) — lower is better",
    "tokens": "tokens per task (in + out)",
    "tokens_in": "tokens in per task",
    "tokens_out": "tokens out per task",
    "turns": "turns per task",
    "latency_s": "seconds per task",
    "searches": "tool searches per task",
}


def tasks_of(results: RunResults) -> list[Task]:
    """The tasks a run folder names, as far as scoring needs them (id, kind, split; the expectations
    are in ``meta.tasks`` when the runner stored them)."""
    out: list[Task] = []
    for t in results.meta.get("tasks") or []:
        constraints = tuple(Constraint(c["pointer"], c["op"], c["value"]) for c in t.get("constraints") or [])
        out.append(
            Task(
                id=t["id"],
                tool=t.get("tool", ""),
                kind=t["kind"],
                prompt=t.get("prompt", ""),
                expect_tool=t.get("expect_tool"),
                constraints=constraints,
                writes=int(t.get("writes", 0)),
                approve=bool(t.get("approve", False)),
                split=t["split"],
            )
        )
    return out


def _scores(results: RunResults) -> list[list[TaskScore]]:
    by_id = {t.id: t for t in tasks_of(results)}
    return [[score_task(by_id[o.task], o) for o in run if o.task in by_id] for run in results.runs]


def _fmt(metric: str, value: float | None) -> str:
    if value is None:
        return "–"
    if metric in RATES:
        return f"{100 * value:.1f} %"
    return f"{value:.2f}" if metric == "latency_s" else f"{value:.1f}"


def _cell(metric: str, stat: Stat) -> str:
    if stat.mean is None:
        return "–"
    text = _fmt(metric, stat.mean)
    if stat.sd is not None:
        text += f" ± {_fmt(metric, stat.sd)}"
    if stat.ci95 is not None:
        low, high = stat.ci95
        text += f" [{_fmt(metric, low)}, {_fmt(metric, high)}]"
    return text


def report_json(results: RunResults) -> dict[str, Any]:
    """``{"meta", "splits": {split: {"tasks", metric: Stat JSON}}, "kinds": {kind: pass Stat JSON}}``."""
    scores = _scores(results)
    splits = {}
    for split in ("dev", "held-out", "all"):
        summary = summarise(scores, split)
        splits[split] = {"tasks": summary.tasks, **{m: s.to_json() for m, s in summary.stats.items()}}
    kinds = {k: summarise(scores, "all", k).stats["pass"].to_json() for k in KINDS}
    meta = {k: v for k, v in results.meta.items() if k != "tasks"}
    return {"meta": meta, "splits": splits, "kinds": kinds}


def report_markdown(results: RunResults, *, latency: bool = True) -> str:
    """The Markdown report (see the module docstring). `latency` false leaves out wall-clock figures,
    so two reports of the same recorded exchanges compare equal."""
    meta = results.meta
    scores = _scores(results)
    tasks = tasks_of(results)
    errors = sum(1 for run in results.runs for o in run if o.error)
    counts = {s: sum(1 for t in tasks if t.split == s) for s in ("dev", "held-out")}
    lines = [f"# Eval report: {meta.get('api')} · {meta.get('provider')} · {meta.get('model')}", ""]
    if meta.get("scripted"):
        lines += [
            "> **Scripted model.** The model behind this run is `scripted-lexical`, a fixed lexical",
            (
                "> heuristic served on loopback in the provider's wire format (toolgen.testing.scripted), "
                "not a"
            ),
            "> language model. Its figures test the harness and show what a keyword matcher achieves; they",
            "> say nothing about any real model.",
            "",
        ]
    lines += [
        f"- runs: {meta.get('runs')} · tasks: {len(tasks)} (dev {counts['dev']}, held-out {counts['held-out']})",
        f"- provider or replay errors: {errors} task run(s)",
        f"- toolgen {meta.get('toolgen')}; method and metrics: docs/eval.md",
        "",
        "## Metrics per split",
        "",
        "Mean over runs ± sample standard deviation [95 % confidence interval of the mean].",
        "",
        "| metric | dev | held-out | all |",
        "|---|---|---|---|",
    ]
    summaries = {s: summarise(scores, s) for s in ("dev", "held-out", "all")}
    for metric in (*RATES, *MEANS):
        if metric == "latency_s" and not latency:
            continue
        cells = " | ".join(_cell(metric, summaries[s].stats[metric]) for s in ("dev", "held-out", "all"))
        lines.append(f"| {_LABELS[metric]} | {cells} |")
    lines += [
        "",
        "## Pass rate per task kind (all splits)",
        "",
        "| kind | tasks | pass | selection |",
        "|---|---|---|---|",
    ]
    for kind in KINDS:
        summary = summarise(scores, "all", kind)
        if summary.tasks:
            lines.append(
                f"| {kind} | {summary.tasks} | {_cell('pass', summary.stats['pass'])} | "
                f"{_cell('selection', summary.stats['selection'])} |"
            )
    lines += ["", "## Tasks that failed in at least one run", ""]
    failing = _failing(results, scores)
    if not failing:
        lines.append("None.")
    else:
        lines += [
            "| task | split | kind | runs passed | first call (run 1) | expected |",
            "|---|---|---|---|---|---|",
        ]
        lines += failing
    return "\n".join(lines) + "\n"


def _failing(results: RunResults, scores: Sequence[Sequence[TaskScore]]) -> list[str]:
    by_id = {t.id: t for t in tasks_of(results)}
    passed: dict[str, int] = {}
    for run in scores:
        for s in run:
            passed[s.task] = passed.get(s.task, 0) + int(bool(s.values["pass"]))
    rows = []
    first_run = {o.task: o for o in results.runs[0]} if results.runs else {}
    for task_id, n in passed.items():
        if n == len(scores):
            continue
        task, outcome = by_id[task_id], first_run.get(task_id)
        first = "–"
        if outcome is not None:
            first = outcome.error or (
                f"`{outcome.calls[0].tool}`"
                + (f" ({outcome.calls[0].error})" if outcome.calls[0].error else "")
                if outcome.calls
                else "no call"
            )
        rows.append(
            f"| {task_id} | {task.split} | {task.kind} | {n}/{len(scores)} | {first.replace('|', '/')} | "
            f"{'`' + task.expect_tool + '`' if task.expect_tool else 'no call'} |"
        )
    return rows


def dumps(data: Any) -> str:
    return json.dumps(data, indent=1, sort_keys=True) + "\n"
