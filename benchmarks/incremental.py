"""What the build loop costs a person: a cold build, a `--check` with nothing changed, and a rebuild
after editing one tool, with the build cache (`toolgen.builder.cache`, `toolgen.builder.incremental`).

    python benchmarks/incremental.py [--spec PATH] [--write] [--settings both|one|default]

Default spec: GitHub's REST API from ``../shared/specs/real/github-api.github.com.json``, built with an
include-everything intent map (one toolset per tag, and one explicit intent with a description, for
the last GET operation). The spec is copied into a temporary folder (the
edits are made to the copy) and every step runs `toolgen build` in a fresh process, as a person would
(imports included; toolgen's bytecode compiled first, as an installed package has it: written beside
its sources, in git-ignored ``__pycache__`` folders, even under ``PYTHONDONTWRITEBYTECODE``, since a
``PYTHONPYCACHEPREFIX`` would have every process compile the standard library and the other libraries
from source instead), once with
``TOOLGEN_WORKERS=0`` (one process) and once with the default (a worker
process formats the Python package beside the build). Steps:

1. ``cold, no cache``: ``toolgen build --no-cache`` (what every build cost before the cache);
2. ``cold, empty cache``: the first build, which fills the cache;
3. ``--check, nothing changed``: answered by the manifest (the inputs' and the folder's digests);
4. ``rebuild, one description edited``: one operation's summary changed in the spec;
5. ``--check after it``;
6. ``rebuild, one description edited in the intent map``: the explicit intent's description changed
   (the spec's bytes are not: what the spec alone gives comes from the cache);
7. ``rebuild, one schema edited``: an optional query parameter added to one operation (its argument
   model changes: `models.py` is generated again and black formats only the classes that changed).

Each row gives wall seconds, CPU seconds (the process and its children: the worker) and the one-minute
load average when the step started (the machine is shared). Steps 3 to 7 run ``--reps`` rounds in turn
(default 5; each round edits again: a new summary, a new description, one more parameter), and each
figure is their median, with the CPU seconds' range: one run of a few seconds says little on a shared
machine. ``--settings one`` or ``default`` runs one
of the two worker settings only. Every
rebuild's output is compared byte for byte with a ``--no-cache`` build of the same inputs at the end.
``--write`` writes ``benchmarks/results/incremental.md``.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SPEC = REPO / ".." / "shared" / "specs" / "real" / "github-api.github.com.json"
RESULTS = REPO / "benchmarks" / "results" / "incremental.md"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _toolgen(args: list[str], env: dict[str, str], cwd: Path, expect: int = 0) -> dict[str, float]:
    """One `toolgen` run in a fresh process: wall and CPU seconds (its children included)."""
    load = os.getloadavg()[0]
    cpu, start = _cpu(), time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "toolgen", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    wall, cpu = time.perf_counter() - start, _cpu() - cpu
    if proc.returncode != expect:
        raise RuntimeError(
            f"toolgen {' '.join(args)} exited {proc.returncode}, expected {expect}:\n{proc.stderr[-3000:]}"
        )
    _LAST_STDERR[:] = [proc.stderr]
    return {"wall": round(wall, 2), "cpu": round(cpu, 2), "load": round(load, 1)}


#: what the last `_toolgen` run printed on stderr (its findings)
_LAST_STDERR: list[str] = [""]


def _first_operation(spec: dict[str, Any]) -> tuple[str, str]:
    for path, item in spec["paths"].items():
        for method in ("get", "post", "put", "patch", "delete"):
            if isinstance(item.get(method), dict):
                return path, method
    raise SystemExit("the spec has no operation")


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _last_get(spec: dict[str, Any]) -> str:
    """The last GET operation's operationId (or ``GET /path``)."""
    found = ""
    for path, item in spec["paths"].items():
        if isinstance(item.get("get"), dict):
            found = item["get"].get("operationId") or f"GET {path}"
    if not found:
        raise SystemExit("the spec has no GET operation")
    return found


def _intent_map(operation: str, description: str) -> str:
    return (
        "toolgen: 1\nspec: spec.json\napi: {name: github}\n"
        f"tools:\n  bench_tool:\n    operation: {json.dumps(operation)}\n    effect: read\n"
        f"    description: {json.dumps(description)}\n"
        'include: [{match: "*", toolset: from_tag}]\n'
    )


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's median over `runs` (wall, CPU, load), and the range of the CPU seconds."""
    out = {k: round(statistics.median(r[k] for r in runs), 2) for k in ("wall", "cpu", "load")}
    out["cpu_min"], out["cpu_max"] = min(r["cpu"] for r in runs), max(r["cpu"] for r in runs)
    return out


def run(spec_file: Path, workers: str | None, reps: int = 1) -> list[tuple[str, dict[str, float]]]:
    """The steps of the module docstring for one worker setting (None: the default); steps 3 to 7
    `reps` times in turn, each figure their median."""
    rows: list[tuple[str, dict[str, float]]] = []
    compileall.compile_dir(REPO / "generator" / "toolgen", quiet=1)  # as an installed package has it
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        spec = json.loads(spec_file.read_text(encoding="utf-8"))
        (tmp / "spec.json").write_text(json.dumps(spec, indent=2, ensure_ascii=False), encoding="utf-8")
        explicit = _last_get(spec)
        (tmp / "api.yaml").write_text(_intent_map(explicit, "Read one thing."), encoding="utf-8")
        env = {
            **os.environ,
            "TOOLGEN_CACHE": "1",
            "TOOLGEN_CACHE_DIR": str(tmp / "cache"),
            "PYTHONPATH": os.pathsep.join([str(REPO / "generator"), os.environ.get("PYTHONPATH", "")]),
        }
        env.pop("TOOLGEN_WORKERS", None)
        if workers is not None:
            env["TOOLGEN_WORKERS"] = workers
        build = ["build", "api.yaml", "--out", "gen", "-q"]
        rows.append(("cold, no cache", _toolgen([*build[:3], "nocache", "-q", "--no-cache"], env, tmp)))
        rows.append(("cold, empty cache", _toolgen(build, env, tmp)))
        path, method = _first_operation(spec)
        operation = spec["paths"][path][method]
        summary = operation.get("summary") or ""
        steps: dict[str, list[dict[str, float]]] = {}
        for rep in range(reps):  # each round edits again (new text), so every rebuild has work to do
            steps.setdefault("--check, nothing changed", []).append(_toolgen([*build, "--check"], env, tmp))
            operation["summary"] = f"{summary} (edited {rep})"
            (tmp / "spec.json").write_text(json.dumps(spec, indent=2, ensure_ascii=False), encoding="utf-8")
            steps.setdefault("rebuild, one description edited", []).append(_toolgen(build, env, tmp))
            steps.setdefault("--check after it", []).append(_toolgen([*build, "--check"], env, tmp))
            (tmp / "api.yaml").write_text(
                _intent_map(explicit, f"Read one thing, edited {rep}."), encoding="utf-8"
            )
            steps.setdefault("rebuild, one description edited in the intent map", []).append(
                _toolgen(build, env, tmp)
            )
            operation.setdefault("parameters", []).append(
                {
                    "name": f"toolgen_bench_{rep}",
                    "in": "query",
                    "required": False,
                    "schema": {"type": "string"},
                }
            )
            (tmp / "spec.json").write_text(json.dumps(spec, indent=2, ensure_ascii=False), encoding="utf-8")
            steps.setdefault("rebuild, one schema edited", []).append(_toolgen(build, env, tmp))
        rows += [(label, _median(runs)) for label, runs in steps.items()]
        _toolgen([*build[:3], "nocache", "-q", "--no-cache"], env, tmp)
        if _tree(tmp / "gen") != _tree(tmp / "nocache"):
            raise SystemExit("the cached rebuild differs from a build without the cache (a toolgen bug)")
        shutil.rmtree(tmp / "cache", ignore_errors=True)
    return rows


def _describe_first_tool(intent: Path, text: str) -> None:
    """Give the draft's first tool a ``description:`` (the edit a person makes first), or a new one."""
    lines = intent.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("    operation: "))
    if lines[at + 1].startswith("    description: "):
        del lines[at + 1]
    lines.insert(at + 1, f"    description: {json.dumps(text)}\n")
    intent.write_text("".join(lines), encoding="utf-8")


def run_draft(spec_file: Path, reps: int) -> tuple[list[tuple[str, dict[str, float]]], dict[str, int]]:
    """`toolgen init`'s draft of `spec_file` built as a project (the worker process as by default):
    cold without and with the cache, then `reps` rounds of a `--check` and a `toolgen build` with
    nothing changed, a rebuild after a description given to the first tool (new text each round) and
    a `--check` after it. Every cached step's printed findings are compared with a `--no-cache` build's
    of the same inputs (run after the rebuild, not between the edit and it), and the files at the end;
    returns the rows and the draft's size."""
    compileall.compile_dir(REPO / "generator" / "toolgen", quiet=1)
    rows: list[tuple[str, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        shutil.copy(spec_file, tmp / spec_file.name)
        env = {
            **os.environ,
            "TOOLGEN_CACHE": "1",
            "TOOLGEN_CACHE_DIR": str(tmp / "cache"),
            "PYTHONPATH": os.pathsep.join([str(REPO / "generator"), os.environ.get("PYTHONPATH", "")]),
        }
        env.pop("TOOLGEN_WORKERS", None)
        _toolgen(["init", spec_file.name, "--name", "api"], env, tmp)
        intent = tmp / "intent_maps" / "api.yaml"
        nocache = ["build", "-q", "--no-cache", "--project", "cold.yaml"]
        (tmp / "cold.yaml").write_text(
            "toolgen: 1\napis:\n  - name: api\n    intent_map: intent_maps/api.yaml\n    out: cold\n",
            encoding="utf-8",
        )
        rows.append(("cold, no cache", _toolgen(nocache, env, tmp)))
        cold = _LAST_STDERR[0]
        size = {
            "tools": json.loads((tmp / "cold" / "policy.json").read_bytes())["tools"].__len__(),
            "findings": sum(
                ("warning[" in line or "error[" in line) and not line.startswith("    hint:")
                for line in cold.splitlines()
            ),
            "lines": len(intent.read_text(encoding="utf-8").splitlines()),
        }
        rows.append(("cold, empty cache", _toolgen(["build", "-q"], env, tmp)))
        steps: dict[str, list[dict[str, float]]] = {}

        def step(label: str, args: list[str]) -> None:
            steps.setdefault(label, []).append(_toolgen(args, env, tmp))
            if _LAST_STDERR[0] != cold:
                raise SystemExit(f"{label}: the printed findings differ from a cold build's (a toolgen bug)")

        for rep in range(reps):
            step("--check, nothing changed", ["build", "-q", "--check"])
            step("build, nothing changed", ["build", "-q"])
            _describe_first_tool(intent, f"Use this tool first (edited {rep}); not for anything else.")
            # the rebuild is timed right after the edit, as a person runs it; the build without the
            # cache whose findings it must print runs after it (a cold build just before would leave
            # the machine's caches to another 12-CPU-second process)
            label = "rebuild, a description given to the first tool"
            steps.setdefault(label, []).append(_toolgen(["build", "-q"], env, tmp))
            printed = _LAST_STDERR[0]
            _toolgen(nocache, env, tmp)  # the findings a build without the cache prints now
            cold = _LAST_STDERR[0]
            if printed != cold:
                raise SystemExit(f"{label}: the printed findings differ from a cold build's (a toolgen bug)")
            step("--check after it", ["build", "-q", "--check"])
        rows += [(label, _median(runs)) for label, runs in steps.items()]
        if _tree(tmp / "generated" / "api") != _tree(tmp / "cold"):
            raise SystemExit("the cached rebuild differs from a build without the cache (a toolgen bug)")
    return rows, size


def draft_section(
    results: dict[str, tuple[list[tuple[str, dict[str, float]]], dict[str, int]]], reps: int
) -> str:
    """The results file's section on `toolgen init`'s drafts (`run_draft` of each spec)."""
    load = os.getloadavg()
    lines = [
        DRAFT_HEADING,
        "",
        (
            f"`python benchmarks/incremental.py --draft --spec SPEC` (the spec's `toolgen init` draft, built as "
            "the project `init` writes, the worker process as by default; every step `toolgen build -q` in a "
            "fresh process, toolgen's bytecode compiled beforehand). Measured "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} CPUs, "
            f"{platform.python_implementation()} {platform.python_version()}, shared and busy (load average "
            f"{load[0]:.1f} at the end; each row gives the median load when its runs started). CPU seconds are "
            "user + system of the process and its children; rows after the first two are medians of "
            f"{reps} rounds (the range in brackets), each round giving the first tool a new description. "
            "Every cached step printed the findings of a `--no-cache` build of the same inputs, text and order "
            "(checked by the script), and the files equal its files byte for byte."
        ),
        "",
    ]
    for spec, (rows, size) in results.items():
        lines += [
            (
                f"**{spec}**: {size['tools']:,} tools, {size['findings']:,} findings, a draft of "
                f"{size['lines']:,} lines."
            ),
            "",
            "| step | wall s | CPU s | load |",
            "|---|---:|---:|---:|",
        ]
        lines += [f"| {label} | {row['wall']} | {_cpu_cell(row)} | {row['load']} |" for label, row in rows]
        lines.append("")
    return "\n".join(lines)


DRAFT_HEADING = "## The draft `toolgen init` writes"


def _write_section(section: str) -> None:
    """Put `section` in the results file in place of its earlier text (to the next ``## `` heading), or
    at the end."""
    text = RESULTS.read_text(encoding="utf-8")
    if DRAFT_HEADING in text:
        start = text.index(DRAFT_HEADING)
        nxt = text.find("\n## ", start + len(DRAFT_HEADING))
        text = text[:start] + section + ("\n" + text[nxt + 1 :] if nxt >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    RESULTS.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def _cpu_cell(row: dict[str, float]) -> str:
    if "cpu_min" in row and row["cpu_min"] != row["cpu_max"]:
        return f"{row['cpu']} ({row['cpu_min']}–{row['cpu_max']})"
    return str(row["cpu"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.relative_to(REPO)}")
    parser.add_argument(
        "--settings",
        choices=("both", "one", "default"),
        default="both",
        help="one: TOOLGEN_WORKERS=0 only; default: the worker process only",
    )
    parser.add_argument(
        "--reps", type=int, default=5, help="rounds of steps 3-7 (each edits again); the table gives medians"
    )
    parser.add_argument(
        "--draft",
        action="store_true",
        help="build `toolgen init`'s draft of each --spec (repeatable) instead: the section "
        f"{DRAFT_HEADING!r} of the results file",
    )
    parser.add_argument(
        "--draft-spec",
        type=Path,
        action="append",
        default=[],
        help="with --draft, a further spec (e.g. Stripe's)",
    )
    args = parser.parse_args(argv)
    if not args.spec.is_file():
        raise SystemExit(f"spec not found: {args.spec}")
    if args.draft:
        drafts = {spec.name: run_draft(spec, args.reps) for spec in [args.spec, *args.draft_spec]}
        section = draft_section(drafts, args.reps)
        print(section)
        if args.write:
            _write_section(section)
        return 0
    results = {}
    if args.settings in ("both", "one"):
        results["TOOLGEN_WORKERS=0"] = run(args.spec, "0", args.reps)
    if args.settings in ("both", "default"):
        results["default (worker process)"] = run(args.spec, None, args.reps)
    load = os.getloadavg()
    lines = [
        "# The build loop with the build cache",
        "",
        (
            f"`python benchmarks/incremental.py` on `{args.spec.name}` with an include-everything intent map "
            "(one toolset per tag, one explicit intent); every step is `toolgen build` in a fresh process "
            "(imports included, toolgen's bytecode compiled beforehand as an installed package has it). "
            f"Measured {time.strftime('%Y-%m-%d', time.gmtime())}. "
            f"Machine: {os.cpu_count()} CPUs, {platform.python_implementation()} {platform.python_version()}, "
            f"shared and busy while measured (load average {load[0]:.1f} at the end): wall seconds are "
            "several times the CPU seconds; CPU seconds (the process and its worker) say more. "
            f"Steps 3 to 7 ran {args.reps} rounds in turn (each round edits again): their figures are medians, "
            "the CPU seconds' range in brackets."
        ),
        "",
        "| step | " + " | ".join(f"{name}: wall s | CPU s | load" for name in results) + " |",
        "|---|" + "---:|---:|---:|" * len(results),
    ]
    steps = [label for label, _ in next(iter(results.values()))]
    for i, label in enumerate(steps):
        cells = " | ".join(
            f"{rows[i][1]['wall']} | {_cpu_cell(rows[i][1])} | {rows[i][1]['load']}"
            for rows in results.values()
        )
        lines.append(f"| {label} | {cells} |")
    lines += ["", "Every rebuild's files equal a `--no-cache` build's byte for byte (checked by the script)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
