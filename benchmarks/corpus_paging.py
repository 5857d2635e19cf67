"""The corpus harness's paging check: every pagination `toolgen init` drafts, walked two pages deep
against Prism in dynamic mode.

    python benchmarks/corpus_paging.py --ci                  # the corpus harness's CI slice (corpus.CI_SLICE)
    python benchmarks/corpus_paging.py --only api/x.json,... # chosen development-half specs

Per spec, in a fresh temporary project: ``toolgen init`` and ``toolgen build`` (as `corpus.py`
runs them), then ``prism mock -d SPEC`` (dynamic mode: every answer generated anew from the spec's
schemas, so a next cursor differs from call to call). For each tool whose policy row has a
``pagination``: the first page with the tool's required arguments (`corpus_args.generate_args`) at
its smallest page size (so that a page-or-offset walk sees a full page), then the page its
``next_cursor`` names, through `toolgen.runtime.Registry` with the requests captured. Outcome per
tool:

- ``moved``: the second API page's request differs from the first's in the paging parameter (the
  cursor, page or offset parameter; the whole URL for a ``link`` walk). A mock answer with more
  items than the page size asked for is shown in parts first (the runtime's cursor skips what was
  shown, same request); those parts are followed, up to `WITHIN`, before the request must move;
- ``not_moved``: it does not (a toolgen bug: the runtime promises a cursor moves or the walk ends);
- ``no_next_page``: no first page of up to `ATTEMPTS` named a next page (the mock answered a null
  or empty next value, a short page, or a next URL off its own origin, which the runtime never
  follows); the cause says which;
- ``first_page_failed`` / ``second_page_failed``: the call was refused (its error code).

Results: ``benchmarks/results/corpus_paging.md`` and ``.json``. Only development-half specs are run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import corpus
import corpus_args
import corpus_calls
import corpus_report
import corpuslib as lib

#: first pages tried before a walk counts as having no next page (dynamic answers vary)
ATTEMPTS = 4
#: further parts of one API page followed before the walk must have moved to the next API page
WITHIN = 20


class DynamicPrism(corpus_calls.Prism):
    """``prism mock -d SPEC``: answers generated from the schemas on every call."""

    def __init__(self, prism: str, spec: Path, log: Path) -> None:
        import subprocess

        self.port = corpus_calls._free_port()
        self.log = log
        with log.open("w", encoding="utf-8") as out:
            self.proc = subprocess.Popen(
                [prism, "mock", "-d", str(spec), "-p", str(self.port), "-h", "127.0.0.1"],
                stdout=out,
                stderr=subprocess.STDOUT,
            )


def _position(request: Any, pagination: Mapping[str, Any]) -> str | None:
    """What a request says of its page: the paging parameter's value, or the URL of a link walk."""
    if pagination.get("style") == "link":
        return str(request.url)
    name = pagination.get("cursor_param")
    return dict(parse_qsl(urlsplit(str(request.url)).query)).get(str(name)) if name else None


def walk(gen_dir: Path, base_url: str) -> list[dict[str, Any]]:
    """Two pages of every paginated tool of the built API at `gen_dir`, against `base_url`."""
    import httpx

    from toolgen.runtime import Actor, Registry
    from toolgen.runtime.call.credentials import StaticCredentials

    policy = json.loads((gen_dir / "policy.json").read_text(encoding="utf-8"))
    catalog = {t["name"]: t for t in json.loads((gen_dir / "mcp.json").read_text(encoding="utf-8"))}
    secrets = {
        a["secret"]: "corpus-user:corpus-secret" if a.get("kind") == "basic" else "corpus-secret-token"
        for r in policy["tools"]
        for a in r.get("auth") or []
    }
    scopes = {s for r in policy["tools"] for s in r.get("permission") or []}
    capture = corpus_calls.Capture()
    client = httpx.Client(event_hooks={"request": [capture.on_request], "response": [capture.on_response]})
    registry = Registry(
        policy,
        list(catalog.values()),
        base_url=base_url,
        credentials=StaticCredentials(secrets),
        http_client=client,
    )
    actor = Actor.of("corpus", scopes)
    out: list[dict[str, Any]] = []
    try:
        for row in sorted(policy["tools"], key=lambda r: r["tool"]):
            pagination = row.get("pagination")
            if row["mode"] != "read" or not pagination:
                continue
            out.append(_walk_one(registry, actor, capture, row, catalog[row["tool"]]["inputSchema"]))
    finally:
        registry.close()
        client.close()
    return out


def _walk_one(
    registry: Any, actor: Any, capture: Any, row: Mapping[str, Any], schema: Mapping[str, Any]
) -> dict[str, Any]:
    pagination = row["pagination"]
    cursor_arg = pagination.get("cursor_arg") or "cursor"
    size_arg = pagination.get("page_size_arg") or "page_size"
    entry: dict[str, Any] = {
        "tool": row["tool"],
        "style": pagination.get("style"),
        "param": pagination.get("cursor_param"),
        "next": pagination.get("next_field"),
    }
    props = {k: v for k, v in schema.get("properties", {}).items() if k not in (cursor_arg, size_arg)}
    try:
        required = [r for r in schema.get("required", []) if r in props]
        args = corpus_args.generate_args({**schema, "properties": props, "required": required}, "required")
    except corpus_args.ArgumentError as exc:
        return {**entry, "outcome": "first_page_failed", "cause": f"no arguments: {exc}"[:200]}
    args[size_arg] = int(pagination.get("min_page_size") or 1)
    for _ in range(ATTEMPTS):
        capture.reset()
        first = registry.call(row["tool"], args, actor=actor)
        if not first.ok or first.result is None:
            code = first.error.code if first.error is not None else "?"
            return {**entry, "outcome": "first_page_failed", "cause": code}
        before = _position(capture.request, pagination) if capture.request is not None else None
        cursor = first.result.get("next_cursor")
        within = 0
        while cursor:  # an API page larger than the page size is shown in parts before the walk moves on
            capture.reset()
            second = registry.call(row["tool"], {**args, cursor_arg: cursor}, actor=actor)
            if not second.ok or second.result is None:
                code = second.error.code if second.error is not None else "?"
                return {**entry, "outcome": "second_page_failed", "cause": code}
            after = _position(capture.request, pagination) if capture.request is not None else None
            cursor = second.result.get("next_cursor")
            if after != before or not cursor or within >= WITHIN:
                return {
                    **entry,
                    "outcome": "moved" if after != before else "not_moved",
                    "first": _short(before),
                    "second": _short(after),
                    "parts_of_the_first_page": within,
                }
            within += 1
    return {**entry, "outcome": "no_next_page", "cause": _why_no_next(capture, pagination)}


def _short(text: Any) -> Any:
    return text if not isinstance(text, str) or len(text) <= 120 else text[:120] + "…"


def _why_no_next(capture: Any, pagination: Mapping[str, Any]) -> str:
    """Why the mock's last first page named no next page, as far as its answer tells."""
    response = capture.response
    if response is None:
        return "no answer captured"
    body, is_json = corpus_calls._decode(response)
    field = pagination.get("next_field")
    style = pagination.get("style")
    if style == "link" and not field:
        return "Link header: " + (
            "none in the answer"
            if "link" not in response.headers
            else f"no rel=next URL of the mock's origin ({_short(response.headers['link'])})"
        )
    if field and is_json:
        value = lib_get(body, str(field))
        if style == "link":
            return (
                f"next URL {_short(value)!r} is not on the mock's origin"
                if value
                else "next URL null or absent"
            )
        return (
            f"next value {_short(value)!r}" if value not in (None, "") else "next value null, empty or absent"
        )
    if pagination.get("has_more_field") and is_json:
        return f"has-more flag {lib_get(body, str(pagination['has_more_field']))!r}"
    return "a short page (fewer items than asked for)"


def lib_get(body: Any, dotted: str) -> Any:
    from toolgen.runtime.call.shaping import answer_member

    return answer_member(body, dotted)


def run_spec(rel: str, corpus_dir: Path, prism: str, timeout: float) -> dict[str, Any]:
    """init, build, Prism -d and the walks of one spec."""
    res: dict[str, Any] = {"path": rel}
    work = Path(tempfile.mkdtemp(prefix="toolgen-paging-"))
    server: DynamicPrism | None = None
    started = time.monotonic()
    try:
        (work / "specs").mkdir()
        spec = work / "specs" / Path(rel).name
        shutil.copyfile(corpus_dir / rel, spec)
        server = DynamicPrism(prism, spec, work / "prism.log")
        tg = [sys.executable, "-m", "toolgen"]
        for stage, cmd in (("init", [*tg, "init", f"specs/{spec.name}"]), ("build", [*tg, "build"])):
            step = corpus._run(cmd, work, timeout)
            if step["rc"] != 0:
                res["failed"] = f"{stage} exit {step['rc']}: {step['output'][-300:]}"
                return res
        import yaml

        project = yaml.safe_load((work / "toolgen.yaml").read_text(encoding="utf-8"))
        gen_dir = work / project["apis"][0]["out"]
        policy = json.loads((gen_dir / "policy.json").read_text(encoding="utf-8"))
        res["paginated"] = sum(1 for r in policy["tools"] if r["mode"] == "read" and r.get("pagination"))
        if not res["paginated"]:
            res["walks"] = []
            return res
        base_url, reason = server.ready(120)
        if base_url is None:
            res["failed"] = f"Prism cannot serve the spec: {reason}"
            return res
        res["walks"] = walk(gen_dir, base_url)
        return res
    finally:
        if server is not None:
            server.close()
        res["seconds"] = round(time.monotonic() - started, 1)
        shutil.rmtree(work, ignore_errors=True)


def report(results: list[dict[str, Any]], meta: Mapping[str, Any], out: Path) -> dict[str, Any]:
    walks = [dict(w, spec=r["path"]) for r in results for w in r.get("walks", [])]
    outcomes = Counter(w["outcome"] for w in walks)
    failed = [{"path": r["path"], "why": r["failed"]} for r in results if "failed" in r]
    summary = {
        "specs": len(results),
        "paginated_tools": len(walks),
        "outcomes": dict(outcomes),
        "specs_failed": failed,
    }
    lines = [
        "# Paging against Prism (dynamic mode): does the cursor move?",
        "",
        f"Run: {meta['selection']}; {meta['when']}; {meta['seconds']:.0f} s. Regenerate: `{meta['command']}`.",
        f"Versions: {', '.join(f'{k} {v}' for k, v in meta['versions'].items())}.",
        "",
        (
            f"{len(walks)} drafted paginations in {len(results)} specs (every pagination `toolgen init` drafted, "
            "built unchanged). A walk is two pages: the first at the smallest page size, then the page its "
            "`next_cursor` names; `moved` means the second request differs from the first in the paging "
            "parameter (the whole URL for a link walk)."
        ),
        "",
        "| outcome | paginated tools |",
        "|---|---|",
    ]
    lines += [f"| {o} | {n} |" for o, n in outcomes.most_common()]
    lines += [
        "",
        "| spec | tool | style | parameter | outcome | first → second, or cause |",
        "|---|---|---|---|---|---|",
    ]
    for w in walks:
        what = f"`{w.get('first')}` → `{w.get('second')}`" if "second" in w else str(w.get("cause", ""))
        lines.append(
            f"| `{w['spec']}` | {w['tool']} | {w['style']} | {w.get('param') or w.get('next') or ''} | "
            f"{w['outcome']} | {corpus_report._md(what)[:200]} |"
        )
    none = [r["path"] for r in results if not r.get("walks") and "failed" not in r]
    lines += [
        "",
        f"Specs whose draft has no pagination: {len(none)} ({', '.join(f'`{p}`' for p in none) or '-'}).",
    ]
    lines += [f"- `{f['path']}` failed: {corpus_report._md(f['why'])[:300]}" for f in failed]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out.with_suffix(".json").write_text(
        json.dumps({"meta": meta, "summary": summary, "walks": walks}, indent=1) + "\n", encoding="utf-8"
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--ci", action="store_true", help="the corpus harness's CI slice")
    which.add_argument("--only", help="comma-separated development-half spec paths (api/...)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per toolgen command")
    p.add_argument("--out", type=Path, default=corpus.RESULTS / "corpus_paging.md")
    a = p.parse_args(argv)
    cache = corpus.default_cache()
    corpus_dir = corpus.fetch_corpus(cache)
    rels = corpus.list_specs(corpus_dir)
    chosen = sorted(corpus.CI_SLICE) if a.ci else [r.strip() for r in a.only.split(",") if r.strip()]
    bad = [r for r in chosen if r not in rels or not lib.in_dev_half(r)]
    if bad:
        raise SystemExit(f"corpus_paging: not development-half specs here: {bad}")
    prism = corpus.find_prism(argparse.Namespace(prism=None), cache)
    if prism is None:
        raise SystemExit("corpus_paging: no prism (see benchmarks/corpus.py --install-prism)")
    started = time.monotonic()
    results = []
    for rel in chosen:
        results.append(run_spec(rel, corpus_dir, prism, a.timeout))
        print(
            f"corpus_paging: {rel}: {Counter(w['outcome'] for w in results[-1].get('walks', []))}"
            + (f" FAILED {results[-1]['failed'][:200]}" if "failed" in results[-1] else ""),
            file=sys.stderr,
        )
    meta = {
        "selection": f"the CI slice ({len(chosen)} specs)" if a.ci else f"{len(chosen)} chosen specs",
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "seconds": time.monotonic() - started,
        "command": "python benchmarks/corpus_paging.py " + ("--ci" if a.ci else f"--only {a.only}"),
        "versions": corpus.versions(prism),
    }
    summary = report(results, meta, a.out)
    print(f"corpus_paging: {summary['paginated_tools']} paginated tools: {summary['outcomes']}")
    return 1 if summary["outcomes"].get("not_moved") else 0


if __name__ == "__main__":
    sys.exit(main())
