"""Fresh `toolgen init` drafts of real specs: do they pass `toolgen lint --strict` and `toolgen build`?
(Whether any draft makes a read of an operation whose words say it changes something is
`benchmarks/effects.py`.)

Run on demand:

    python benchmarks/init_drafts.py gate   [--real DIR] [--corpus DIR] [--sample 100] [--jobs 2]
    python benchmarks/init_drafts.py strict [--real DIR] [--corpus DIR] [--sample 100] [--half tune|check]

``gate``: for each real spec of ``--real`` (default ``../shared/specs/real``) and a deterministic
sample of ``--sample`` specs of ``--corpus`` (default ``../cache/corpus-dev``; every k-th of the
sorted ``api/**/*.json|yaml`` files), runs ``toolgen init SPEC --no-project``, then ``toolgen lint
--strict --format json`` and ``toolgen build --emit openai,anthropic,mcp,policy`` on the draft, each
in a fresh process with a timeout, and records the exit codes and the error rules of lint.
``--python-path DIR`` runs those commands from another source tree (to compare with a base commit).
Rows are printed as JSON lines, then a summary; ``--save`` writes them to
``benchmarks/results/init_drafts.json``. The figures are in ``benchmarks/results/init_drafts.md``.

``strict``: the same specs, in-process and one at a time (the functions `toolgen init` and `toolgen
lint --strict` call, default settings, no project file; much faster than ``gate``, no build): per
spec the error rules of lint --strict, the `# decide [RULE]` marks of the draft, and the findings no
mark carries (``unmarked``: no mark of the rule above the intent, above ``tools:``, or naming the
spec place) and those not reported at a mark line (``off_mark``). The corpus sample is split into
two fixed halves (`half`); ``--half`` runs one. ``TOOLGEN_SRC=DIR`` measures another source tree.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
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
        proc = subprocess.run(
            [sys.executable, "-m", "toolgen", *args],
            check=False,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return -1, "timeout", time.perf_counter() - t0
    return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - t0


def gate_one(spec: Path, label: str, timeout: float, python_path: str | None) -> dict[str, Any]:
    """init, lint --strict and build of one spec's fresh draft, in a temporary folder."""
    row: dict[str, Any] = {"spec": label}
    with tempfile.TemporaryDirectory(prefix="init-drafts-") as tmp:
        cwd = Path(tmp)
        rc, out, secs = _run(
            ["init", str(spec), "--out", "draft.yaml", "--no-project"], cwd, timeout, python_path
        )
        row["init"] = rc
        row["seconds"] = round(secs, 1)
        if rc != 0:
            row["init_error"] = out.strip().splitlines()[-1][:200] if out.strip() else ""
            return row
        text = (cwd / "draft.yaml").read_text(encoding="utf-8")
        # left-out operations: one `why:` line each (before: one `#   OPERATION: reason` line each)
        listed = text.split("# Operations left out", 1)[1] if "# Operations left out" in text else ""
        row["left_out"] = text.count("\n#   why: ") or listed.count("\n#   ")
        rc, out, secs = _run(
            ["lint", "--strict", "--format", "json", "draft.yaml"], cwd, timeout, python_path
        )
        row["lint_strict"] = rc
        try:
            report = json.loads(out[out.index("{") :]) if "{" in out else {}
        except ValueError:
            report = {}
        row["lint_errors"] = dict(
            Counter(f["code"] for f in report.get("findings", []) if f.get("severity") == "error")
        )
        rc, out, secs = _run(
            ["build", "draft.yaml", "--out", "gen", "-q", "--emit", EMIT], cwd, timeout, python_path
        )
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
        stem.with_suffix(".json").write_text(
            json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n", encoding="utf-8"
        )
    return 0


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for group in ("real", "corpus"):
        mine = [r for r in rows if r["spec"].startswith(group + "/")]
        drafted = [r for r in mine if r.get("init") == 0]
        errors: Counter[str] = Counter()
        for r in drafted:
            errors.update({code: 1 for code in r.get("lint_errors", {})})
        out[group] = {
            "specs": len(mine),
            "drafted": len(drafted),
            "lint_strict_pass": sum(1 for r in drafted if r.get("lint_strict") == 0),
            "build_pass": sum(1 for r in drafted if r.get("build") == 0),
            "both_pass": sum(1 for r in drafted if r.get("lint_strict") == 0 and r.get("build") == 0),
            "specs_failing_strict_by_rule": dict(errors.most_common()),
        }
    return out


_MARK = re.compile(r"^\s*# decide \[([a-z0-9-]+)\]")


def _mark_blocks(text: str) -> tuple[dict[str, list[str]], list[str]]:
    """The `# decide [RULE]` marks of a draft: by the key line they sit above (``tools`` for the whole
    map, else the intent key), and every mark line."""
    lines = text.split("\n")
    blocks: dict[str, list[str]] = {}
    marks = [line.strip() for line in lines if _MARK.match(line)]
    pending: list[str] = []
    for line in lines:
        if line.lstrip().startswith("#") or not line.strip():
            pending += [line.strip()] if _MARK.match(line) else []
            continue
        key = re.match(r"^(tools):|^  ([^\s#][^:]*):\s*$", line)
        if key and pending:
            blocks[key.group(1) or key.group(2)] = pending
        pending = []
    return blocks, marks


def _at_mark(finding: dict[str, Any], draft: str, lines: list[str]) -> bool:
    """Is the finding located in the draft on a `# decide [RULE]` line of its own rule?"""
    where = finding.get("location") or {}
    line = where.get("line")
    return (
        where.get("file") == draft
        and isinstance(line, int)
        and 0 < line <= len(lines)
        and lines[line - 1].lstrip().startswith(f"# decide [{finding['code']}]")
    )


def _marked(
    finding: dict[str, Any], blocks: dict[str, list[str]], marks: list[str], draft: str, lines: list[str]
) -> bool:
    """Does a `# decide [RULE]` mark carry this lint finding: above its intent (or above ``tools:`` for
    the whole map) when lint locates it in the draft, naming its ``file:line:col`` when in the spec."""
    code, where = finding["code"], finding.get("location") or {}
    tag = f"# decide [{code}]"
    pointer = where.get("pointer") or ""
    if where.get("file") == draft and _at_mark(finding, draft, lines):
        return True
    if where.get("file") == draft:
        owner = (
            "tools"
            if pointer in ("", "/tools", "/toolsets")
            else pointer.split("/")[2].replace("~1", "/").replace("~0", "~")
        )
        return any(m.startswith(tag) for m in blocks.get(owner, []))
    at = f"{where.get('file')}:{where.get('line')}:{where.get('col')}"
    return any(m.startswith(tag) and at in m for m in marks)


def strict_one(spec: Path, label: str) -> dict[str, Any]:
    """`toolgen init` then `toolgen lint --strict` on the draft, in-process (the same functions the
    two commands call, default settings, no project file): the error rules and whether a mark
    carries each finding."""
    from toolgen.compile.load import load_spec
    from toolgen.diagnostics import DiagnosticError, DiagnosticSink
    from toolgen.review.lint import LintSettings, LintTarget, apply_severity, lint_target
    from toolgen.scaffold.init import draft_intent_map

    row: dict[str, Any] = {"spec": label}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="init-strict-") as tmp:
        os.chdir(tmp)
        try:
            sink = DiagnosticSink()
            try:
                doc = load_spec(spec, sink=sink)
                try:
                    result = draft_intent_map(
                        doc,
                        api="api",
                        spec_ref=str(spec),
                        out=Path("draft.yaml"),
                        command="toolgen init",
                        spec_diagnostics=sink.items,
                    )
                except TypeError:  # a source tree from before `spec_diagnostics` (a base commit)
                    result = draft_intent_map(
                        doc, api="api", spec_ref=str(spec), out=Path("draft.yaml"), command="toolgen init"
                    )
            except (DiagnosticError, RecursionError, ValueError) as exc:
                row["init"] = type(exc).__name__
                return row
            Path("draft.yaml").write_text(result.text, encoding="utf-8")
            settings = LintSettings()
            found = apply_severity(
                lint_target(LintTarget(Path("draft.yaml")), settings).findings, settings, strict=True
            )
            errors = [d.to_json() for d in found if d.severity == "error"]
            blocks, marks = _mark_blocks(result.text)
        finally:
            os.chdir(cwd)
    row["init"] = 0
    row["intents"] = result.intents
    row["lint_errors"] = dict(Counter(f["code"] for f in errors))
    lines = result.text.split("\n")
    row["unmarked"] = dict(
        Counter(f["code"] for f in errors if not _marked(f, blocks, marks, "draft.yaml", lines))
    )
    row["off_mark"] = sum(1 for f in errors if not _at_mark(f, "draft.yaml", lines))
    row["marks"] = len(marks)
    return row


def strict(args: argparse.Namespace) -> int:
    """`strict_one` over the real specs and the corpus sample, each half apart; JSON lines, then a summary."""
    jobs: list[tuple[Path, str]] = []
    if args.real.is_dir():
        jobs += [(p, f"real/{p.name}") for p in sorted(args.real.iterdir()) if p.suffix in (".json", ".yaml")]
    if (args.corpus / "api").is_dir():
        picked = sample(corpus_specs(args.corpus), args.sample)
        jobs += [(p, "corpus/" + p.relative_to(args.corpus / "api").as_posix()) for p in picked]
    rows = []
    for spec, label in jobs:
        if args.half and label.startswith("corpus/") and half(label) != args.half:
            continue
        row = strict_one(spec, label)
        rows.append(row)
        print(json.dumps(row), flush=True)
    groups = {
        "real": [r for r in rows if r["spec"].startswith("real/")],
        **{
            f"corpus {h}": [r for r in rows if r["spec"].startswith("corpus/") and half(r["spec"]) == h]
            for h in ("tune", "check")
        },
    }
    summary = {}
    for name, mine in groups.items():
        drafted = [r for r in mine if r.get("init") == 0]
        by_rule: Counter[str] = Counter()
        for r in drafted:
            by_rule.update({code: 1 for code in r["lint_errors"]})
        summary[name] = {
            "specs": len(mine),
            "drafted": len(drafted),
            "lint_strict_pass": sum(1 for r in drafted if not r["lint_errors"]),
            "findings": sum(sum(r["lint_errors"].values()) for r in drafted),
            "findings_unmarked": sum(sum(r["unmarked"].values()) for r in drafted),
            "findings_not_at_a_mark": sum(r.get("off_mark", 0) for r in drafted),
            "marks": sum(r["marks"] for r in drafted),
            "specs_failing_by_rule": dict(by_rule.most_common()),
        }
    print(json.dumps(summary, indent=1))
    return 0


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
    st = sub.add_parser("strict")
    st.add_argument("--real", type=Path, default=DEFAULT_REAL)
    st.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    st.add_argument("--sample", type=int, default=100)
    st.add_argument("--half", choices=("tune", "check"), default=None)
    args = parser.parse_args(argv)
    return {"gate": gate, "strict": strict}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
