"""Fresh `toolgen init` drafts of real specs: do they pass `toolgen lint --strict` and `toolgen build`,
and does any of them draft as a read an operation whose name says it changes something?

Run on demand:

    python benchmarks/init_drafts.py gate  [--real DIR] [--corpus DIR] [--sample 100] [--jobs 2]
    python benchmarks/init_drafts.py reads [--corpus DIR] [--limit N]

``gate``: for each real spec of ``--real`` (default ``../shared/specs/real``) and a deterministic
sample of ``--sample`` specs of ``--corpus`` (default ``../cache/corpus-dev``; every k-th of the
sorted ``api/**/*.json|yaml`` files), runs ``toolgen init SPEC --no-project``, then ``toolgen lint
--strict --format json`` and ``toolgen build --emit openai,anthropic,mcp,policy`` on the draft, each
in a fresh process with a timeout, and records the exit codes and the error rules of lint.
``--python-path DIR`` runs those commands from another source tree (to compare with a base commit).
Rows are printed as JSON lines, then a summary; ``--save`` writes them to
``benchmarks/results/init_drafts.json``. The figures are in ``benchmarks/results/init_drafts.md``.

``reads``: drafts every corpus spec in-process (`toolgen.review.init.draft_intent_map`) and lists
each intent drafted ``effect: read`` whose Action, operationId, path or summary names a change
(`toolgen.compile.verbs.changes_named`), minus `EXCEPTIONS`. Exit 1 when any is found. Specs the
loader rejects are counted and skipped. A missing folder is reported and skipped (exit 0).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, os.environ.get("TOOLGEN_SRC", str(REPO / "generator")))
DEFAULT_REAL = REPO.parent / "shared" / "specs" / "real"
DEFAULT_CORPUS = REPO.parent / "cache" / "corpus-dev"
RESULTS = REPO / "benchmarks" / "results"
EMIT = "openai,anthropic,mcp,policy"

#: (spec path under the corpus's api/, operation) drafted read on purpose although a word says change;
#: each with the reason
EXCEPTIONS: dict[tuple[str, str], str] = {}


def corpus_specs(corpus: Path) -> list[Path]:
    """Every spec file of the corpus (``api/**/*.json|yaml``), sorted by path."""
    root = corpus / "api"
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".json", ".yaml", ".yml"))


def sample(paths: list[Path], n: int) -> list[Path]:
    """Every k-th path (k = len // n), starting at the first: deterministic and spread over the names."""
    if n <= 0 or not paths:
        return []
    step = max(1, len(paths) // n)
    return paths[::step][:n]


def half(label: str) -> str:
    """The half of the corpus sample a spec belongs to, fixed before any tuning: ``tune`` when the first
    byte of the SHA-256 of its label (``corpus/<path under api/>``, UTF-8) is even, else ``check``.
    Changes to init are tuned on the ``tune`` half only; the ``check`` half measures them."""
    return "tune" if hashlib.sha256(label.encode("utf-8")).digest()[0] % 2 == 0 else "check"


def _run(args: list[str], cwd: Path, timeout: float, python_path: str | None) -> tuple[int, str, float]:
    env = dict(os.environ)
    if python_path:
        env["PYTHONPATH"] = python_path
    t0 = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "toolgen", *args], check=False, cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "timeout", time.perf_counter() - t0
    return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - t0


def gate_one(spec: Path, label: str, timeout: float, python_path: str | None) -> dict[str, Any]:
    """init, lint --strict and build of one spec's fresh draft, in a temporary folder."""
    row: dict[str, Any] = {"spec": label}
    with tempfile.TemporaryDirectory(prefix="init-drafts-") as tmp:
        cwd = Path(tmp)
        rc, out, secs = _run(["init", str(spec), "--out", "draft.yaml", "--no-project"], cwd, timeout, python_path)
        row["init"] = rc
        row["seconds"] = round(secs, 1)
        if rc != 0:
            row["init_error"] = out.strip().splitlines()[-1][:200] if out.strip() else ""
            return row
        text = (cwd / "draft.yaml").read_text(encoding="utf-8")
        # left-out operations: one `why:` line each (before: one `#   OPERATION: reason` line each)
        listed = text.split("# Operations left out", 1)[1] if "# Operations left out" in text else ""
        row["left_out"] = text.count("\n#   why: ") or listed.count("\n#   ")
        rc, out, secs = _run(["lint", "--strict", "--format", "json", "draft.yaml"], cwd, timeout, python_path)
        row["lint_strict"] = rc
        try:
            report = json.loads(out[out.index("{"):]) if "{" in out else {}
        except ValueError:
            report = {}
        row["lint_errors"] = dict(Counter(f["code"] for f in report.get("findings", []) if f.get("severity") == "error"))
        rc, out, secs = _run(["build", "draft.yaml", "--out", "gen", "-q", "--emit", EMIT], cwd, timeout, python_path)
        row["build"] = rc
        row["seconds"] = round(row["seconds"] + secs, 1)
    return row


def gate(args: argparse.Namespace) -> int:
    jobs: list[tuple[Path, str]] = []
    if args.real.is_dir():
        jobs += [(p, f"real/{p.name}") for p in sorted(args.real.iterdir()) if p.suffix in (".json", ".yaml")]
    else:
        print(f"no real specs at {args.real}: skipped", file=sys.stderr)
    if (args.corpus / "api").is_dir():
        picked = sample(corpus_specs(args.corpus), args.sample)
        jobs += [(p, "corpus/" + p.relative_to(args.corpus / "api").as_posix()) for p in picked]
    else:
        print(f"no corpus at {args.corpus}: skipped", file=sys.stderr)
    rows = []
    with ThreadPoolExecutor(args.jobs) as pool:  # each row printed as soon as it and those before it are done
        for row in pool.map(lambda j: gate_one(j[0], j[1], args.timeout, args.python_path), jobs):
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary = _summary(rows)
    print(json.dumps(summary, indent=1))
    if args.save:
        RESULTS.mkdir(exist_ok=True)
        stem = RESULTS / f"init_drafts{args.save_suffix}"
        stem.with_suffix(".json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n",
                                             encoding="utf-8")
    return 0


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for group in ("real", "corpus"):
        mine = [r for r in rows if r["spec"].startswith(group + "/")]
        drafted = [r for r in mine if r.get("init") == 0]
        errors: Counter[str] = Counter()
        for r in drafted:
            errors.update({code: 1 for code in r.get("lint_errors", {})})
        out[group] = {"specs": len(mine), "drafted": len(drafted),
                      "lint_strict_pass": sum(1 for r in drafted if r.get("lint_strict") == 0),
                      "build_pass": sum(1 for r in drafted if r.get("build") == 0),
                      "both_pass": sum(1 for r in drafted if r.get("lint_strict") == 0 and r.get("build") == 0),
                      "specs_failing_strict_by_rule": dict(errors.most_common())}
    return out


def reads(args: argparse.Namespace) -> int:
    """Every corpus spec drafted in-process; each read intent whose words name a change."""
    from ruamel.yaml import YAML

    from toolgen.compile.load import load_spec
    from toolgen.compile.operations import OperationIndex, find_operation, list_operations
    from toolgen.compile.verbs import changes_named
    from toolgen.diagnostics import DiagnosticError, DiagnosticSink
    from toolgen.review.init import draft_intent_map

    if not (args.corpus / "api").is_dir():
        print(f"no corpus at {args.corpus}: skipped", file=sys.stderr)
        return 0
    specs = corpus_specs(args.corpus)[: args.limit or None]
    found: list[tuple[str, str, str, str]] = []
    unreadable = reads_total = 0
    for spec in specs:
        label = spec.relative_to(args.corpus / "api").as_posix()
        try:
            doc = load_spec(spec, sink=DiagnosticSink())
            try:
                result = draft_intent_map(doc, api="api", spec_ref=str(spec), out=Path("draft.yaml"),
                                          command="toolgen init", decisions=False)
            except TypeError:  # a source tree from before `decisions` (a base commit)
                result = draft_intent_map(doc, api="api", spec_ref=str(spec), out=Path("draft.yaml"),
                                          command="toolgen init")
        except (DiagnosticError, RecursionError, ValueError) as exc:
            unreadable += 1
            print(f"{label}: not drafted ({type(exc).__name__})", file=sys.stderr)
            continue
        index = OperationIndex(list_operations(doc))
        for key, intent in (YAML(typ="safe").load(result.text).get("tools") or {}).items():
            if intent.get("effect") != "read":
                continue
            reads_total += 1
            op = find_operation(index, intent["operation"])
            if op is None or (label, op.key) in EXCEPTIONS:
                continue
            changes = changes_named(op)
            if changes:
                found.append((label, key, op.key, changes[0].says()))
    for label, key, op_key, says in found:
        print(f"{label}: {key} ({op_key}) is drafted read, but {says}")
    print(f"{len(specs) - unreadable} specs drafted ({unreadable} not), {reads_total:,} reads, "
          f"{len(found):,} reads whose words name a change")
    return 1 if found else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("gate")
    g.add_argument("--real", type=Path, default=DEFAULT_REAL)
    g.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    g.add_argument("--sample", type=int, default=100)
    g.add_argument("--jobs", type=int, default=2)
    g.add_argument("--timeout", type=float, default=300)
    g.add_argument("--python-path", default=None)
    g.add_argument("--save", action="store_true")
    g.add_argument("--save-suffix", default="")
    r = sub.add_parser("reads")
    r.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    r.add_argument("--limit", type=int, default=0)
    args = parser.parse_args(argv)
    return gate(args) if args.command == "gate" else reads(args)


if __name__ == "__main__":
    sys.exit(main())
