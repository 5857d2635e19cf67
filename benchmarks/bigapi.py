"""A very large API from a fresh draft: `toolgen init`, then `toolgen build` of every artifact, timed
on one core, each catalog checked against its provider's limit and SDK type, and REPORT.md (with
every other file) checked to be the same bytes when built from another working directory.

    python benchmarks/bigapi.py SPEC [--replicate N] [--work DIR] [--cpu 0] [--name LABEL] [--steps init] [--save]

Steps, each a fresh process run as ``taskset -c CPU /usr/bin/time -v python -m toolgen ...`` in a
new project folder under ``--work`` (the spec is copied in as ``specs/<name>.json``):

1. ``toolgen init specs/<name>.json`` (the draft, unedited);
2. ``toolgen build --no-cache`` (every artifact: the catalogs, policy.json, POLICY.md, REPORT.md and
   the Python package);
3. ``toolgen build --check --no-cache --project <abs>/toolgen.yaml`` run from another, empty working
   directory: exit 0 means every generated file, REPORT.md included, is the same bytes from there.

CPU is user + system of the command and the processes it waited for (the build's models.py worker
included), on the one core ``--cpu`` (so it is the work, whatever else the machine runs); wall is the
command's elapsed time; peak is GNU time's maximum resident set size (the largest single process of
the command). The 10-minute and 4 GB budget of a build is checked on init + build.

Then each catalog file of ``generated/<api>/`` is checked: what one request sends of it against its
provider's limit (`catalog_limits.check`), and every entry against the provider's official SDK type
(`corpuslib.check_catalog`: openai, anthropic, google-genai, mcp). ``--replicate N`` builds the spec
N times over first (`replicate.replicate`: paths repeated under a prefix, components shared).
``--save`` adds the run to ``benchmarks/results/bigapi.json`` (keyed by ``--name``) and rewrites
``benchmarks/results/bigapi.md`` from it; ``--render JSON`` saves a result printed by an earlier run
(a step stopped before it finished carries ``"stopped": "why"`` and is shown as such).
``--steps init`` runs step 1 only; with ``--save`` it replaces the init step of the saved run of that
name (its time is shown as ``init measured ...``) and keeps the rest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import catalog_limits
import corpuslib
from replicate import replicate

RESULTS = HERE / "results"
BUDGET_CPU_S = 600.0
BUDGET_PEAK_MB = 4096.0
_TIME_FIELDS = {
    "user": r"User time \(seconds\): ([\d.]+)",
    "system": r"System time \(seconds\): ([\d.]+)",
    "wall": r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)",
    "peak_kb": r"Maximum resident set size \(kbytes\): (\d+)",
}


def _seconds(clock: str) -> float:
    """GNU time's ``h:mm:ss`` or ``m:ss.ss`` as seconds."""
    total = 0.0
    for part in clock.split(":"):
        total = total * 60 + float(part)
    return total


def timed(cmd: list[str], cwd: Path, cpu: int | None) -> dict[str, Any]:
    """Run `cmd` under ``/usr/bin/time -v`` (and ``taskset -c CPU``): rc, cpu_s, wall_s, peak_mb, and
    the command's last output lines."""
    with tempfile.NamedTemporaryFile("r", suffix=".time", delete=False) as tf:
        time_file = tf.name
    prefix = ["taskset", "-c", str(cpu)] if cpu is not None else []
    started = time.monotonic()
    proc = subprocess.run(
        [*prefix, "/usr/bin/time", "-v", "-o", time_file, *cmd],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.monotonic() - started
    text = Path(time_file).read_text(encoding="utf-8")
    os.unlink(time_file)
    found = {k: re.search(p, text) for k, p in _TIME_FIELDS.items()}
    values = {k: (m.group(1) if m else "0") for k, m in found.items()}
    output = (proc.stdout + proc.stderr).strip().splitlines()
    return {
        "cmd": " ".join(["toolgen", *cmd[3:]]),
        "rc": proc.returncode,
        "cpu_s": round(float(values["user"]) + float(values["system"]), 1),
        "wall_s": round(_seconds(values["wall"]) if found["wall"] else elapsed, 1),
        "peak_mb": round(int(values["peak_kb"]) / 1024),
        "tail": output[-6:],
    }


def _dialect(name: str) -> str | None:
    """The catalog dialect of a generated file name (``anthropic.2.json`` -> ``anthropic``), or None."""
    stem = name[: -len(".json")]
    for dialect in ("openai.responses", "openai", "anthropic", "gemini", "mcp"):
        if stem == dialect or re.fullmatch(re.escape(dialect) + r"\.\d+", stem):
            return dialect
    return None


def catalogs(folder: Path) -> list[dict[str, Any]]:
    """Each catalog file of `folder`: bytes, entries, what one request sends against the provider's
    limit (for ``openai.json`` and ``gemini.json``, pools of a client-run search, the up-front view),
    and the entries the provider's SDK type refuses (a pool's ``search_tools`` entry included)."""
    limits = {row["file"]: row for row in catalog_limits.check(folder)}
    rows = []
    for path in sorted(folder.glob("*.json")):
        dialect = _dialect(path.name)
        if dialect is None:
            continue
        entries = json.loads(path.read_text(encoding="utf-8"))
        # a pool (openai.json, gemini.json) is sent as its up-front view: its search_tools entry too
        view = catalog_limits.upfront(folder, path.name) if path.name in catalog_limits.POOLS else None
        extra = view.sent[-1:] if view is not None and view.searching else []
        sdk = corpuslib.check_catalog(dialect, entries + extra)
        limit = limits.get(path.name, {})
        rows.append(
            {
                "file": path.name,
                "bytes": path.stat().st_size,
                "entries": len(entries),
                "sent": limit.get("entries"),
                "sends": limit.get("sent"),
                "limit": limit.get("limit"),
                "whole": limit.get("whole"),
                "within": limit.get("within"),
                "sdk": sdk.sdk,
                "sdk_failures": len(sdk.failures),
                "sdk_examples": sdk.failures[:3],
            }
        )
    return rows


HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def count_operations(spec: Path) -> int:
    """The operations of a JSON or YAML OpenAPI document: method keys of its path items."""
    text = spec.read_text(encoding="utf-8")
    if spec.suffix in (".yaml", ".yml"):
        from ruamel.yaml import YAML

        doc = YAML(typ="safe").load(text)
    else:
        doc = json.loads(text)
    return sum(
        1
        for item in (doc.get("paths") or {}).values()
        if isinstance(item, dict)
        for method in item
        if method in HTTP_METHODS
    )


def count_intents(project: Path) -> int | None:
    """The intents `toolgen init` drafted into the project's intent map (entries of its ``tools``), or
    None when the project names no intent map."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe")
    config = yaml.load((project / "toolgen.yaml").read_text(encoding="utf-8"))
    path = project / config["apis"][0]["intent_map"]
    return len((yaml.load(path.read_text(encoding="utf-8")) or {}).get("tools") or {})


def run(spec: Path, n: int, work: Path, cpu: int | None, name: str, steps: str = "all") -> dict[str, Any]:
    """Init, build and a check from elsewhere for `spec` (`n` times over); the measurements.
    ``steps="init"``: init only."""
    project = work / "project"
    if project.exists():
        shutil.rmtree(project)
    (project / "specs").mkdir(parents=True)
    target = project / "specs" / (spec.stem + (f"_x{n}" if n > 1 else "") + ".json")
    if n > 1:
        text = spec.read_text(encoding="utf-8")
        if spec.suffix in (".yaml", ".yml"):
            from ruamel.yaml import YAML

            doc = YAML(typ="safe").load(text)
        else:
            doc = json.loads(text)
        target.write_text(json.dumps(replicate(doc, n)), encoding="utf-8")
    else:
        shutil.copyfile(spec, target)
    out: dict[str, Any] = {
        "name": name,
        "spec": spec.name,
        "times": n,
        "spec_bytes": target.stat().st_size,
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": cpu,
        "load_before": os.getloadavg()[0],
    }
    tg = [sys.executable, "-m", "toolgen"]
    out["init"] = timed([*tg, "init", f"specs/{target.name}"], project, cpu)
    if out["init"]["rc"] != 0:
        return out
    out["intents"] = count_intents(project)
    out["operations"] = count_operations(target)
    if steps == "init":
        return out
    out["build"] = timed([*tg, "build", "--no-cache"], project, cpu)
    tail = " ".join(out["build"]["tail"])
    m = re.search(r"(\d+) tools?", tail)
    out["tools"] = int(m.group(1)) if m else None
    if out["build"]["rc"] != 0:
        return out
    from ruamel.yaml import YAML

    api = YAML(typ="safe").load((project / "toolgen.yaml").read_text(encoding="utf-8"))["apis"][0]
    folder = project / api["out"]
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    out["files"] = len(files)
    out["output_bytes"] = sum(p.stat().st_size for p in files)
    report = folder / "REPORT.md"
    out["report_sha256"] = hashlib.sha256(report.read_bytes()).hexdigest() if report.exists() else None
    out["catalogs"] = catalogs(folder)
    elsewhere = work / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    out["check_elsewhere"] = timed(
        [*tg, "build", "--check", "--no-cache", "-q", "--project", str(project / "toolgen.yaml")],
        elsewhere,
        cpu,
    )
    out["report_same_bytes"] = (
        out["check_elsewhere"]["rc"] == 0
        and report.exists()
        and hashlib.sha256(report.read_bytes()).hexdigest() == out["report_sha256"]
    )
    return out


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def markdown(runs: dict[str, dict[str, Any]]) -> str:
    """benchmarks/results/bigapi.md from the saved runs."""
    lines = [
        "# Very large APIs from a fresh draft: every artifact, on one core",
        "",
        (
            "Generated by `python benchmarks/bigapi.py SPEC [--replicate N] --cpu 0 --save` (see its docstring). "
            "Each step is a fresh process pinned to one core (`taskset -c 0`) under `/usr/bin/time -v`: CPU is "
            "user + system of the command and its worker, peak the largest resident set of one process. "
            "The machine is shared, so wall time includes waiting for the core; CPU is the work. "
            f"Budget for init + build: {BUDGET_CPU_S / 60:.0f} CPU minutes and {BUDGET_PEAK_MB / 1024:.0f} GB."
        ),
        "",
    ]
    for name, r in runs.items():
        label = f"`{r['spec']}`" + (f" ×{r['times']}" if r["times"] > 1 else "")
        lines += [
            f"## {name}: {label}",
            "",
            (
                f"Measured {r['when']} (load average {r['load_before']:.1f} at the start), "
                f"spec {_mb(r['spec_bytes'])}; {r.get('operations') or '?'} operations, "
                f"{r.get('intents') or '?'} intents drafted, {r.get('tools') or '?'} tools built."
            ),
            "",
            "| step | exit | CPU s | wall | peak MB |",
            "|---|---|---|---|---|",
        ]
        steps = [
            ("init", "`toolgen init`"),
            ("build", "`toolgen build --no-cache` (every artifact)"),
            ("check_elsewhere", "`toolgen build --check --no-cache` from another working directory"),
        ]
        for key, what in steps:
            s = r.get(key)
            if s:
                wall = f"{int(s['wall_s'] // 60)} min {s['wall_s'] % 60:.0f} s"
                rc = f"stopped unfinished ({s['stopped']})" if s.get("stopped") else s["rc"]
                when = f" (init measured {r['init_when']})" if key == "init" and r.get("init_when") else ""
                lines.append(f"| {what}{when} | {rc} | {s['cpu_s']:,.1f} | {wall} | {s['peak_mb']:,} |")
        if "init" in r and "build" in r:
            cpu = r["init"]["cpu_s"] + r["build"]["cpu_s"]
            peak = max(r["init"]["peak_mb"], r["build"]["peak_mb"])
            ok = cpu <= BUDGET_CPU_S and peak <= BUDGET_PEAK_MB and r["build"]["rc"] == 0
            verdict = (
                "the build did not finish: so far"
                if r["build"].get("stopped")
                else "within"
                if ok
                else "NOT within"
            )
            lines += [
                "",
                (
                    f"init + build: **{cpu:,.1f} CPU s, peak {peak:,} MB** ({verdict}; budget "
                    f"{BUDGET_CPU_S / 60:.0f} min and {BUDGET_PEAK_MB / 1024:.0f} GB)."
                ),
            ]
        for key in ("init", "build"):
            s = r.get(key)
            if s and s["rc"] != 0 and not s.get("stopped"):
                lines += ["", f"{key} exit {s['rc']}:", "", "```", *s["tail"], "```"]
        if "catalogs" in r:
            same = (
                "not measured (the check was stopped unfinished)"
                if r.get("check_elsewhere", {}).get("stopped")
                else "yes"
                if r["report_same_bytes"]
                else "NO"
            )
            lines += [
                "",
                (
                    f"{r['files']} files, {_mb(r['output_bytes'])}. REPORT.md and every other file the same "
                    f"bytes from another working directory: **{same}**."
                ),
                "",
                "| file | bytes | entries | one request sends | limit | within | SDK type | SDK refusals |",
                "|---|---|---|---|---|---|---|---|",
            ]
            for c in r["catalogs"]:
                limit = f"{c['limit']:,}" if c["limit"] is not None else "none stated"
                within = "yes" if c["within"] else ("no (whole catalog)" if c["whole"] else "no: lint warns")
                lines.append(
                    f"| `{c['file']}` | {c['bytes']:,} | {c['entries']:,} | {c['sent']:,} ({c['sends']}) | "
                    f"{limit} | {within} | {c['sdk']} | {c['sdk_failures']} |"
                )
        lines.append("")
    return "\n".join(lines)


def _save(name: str, result: dict[str, Any], steps: str = "all") -> None:
    """Add `result` to benchmarks/results/bigapi.json under `name`; rewrite bigapi.md from it.
    ``steps="init"``: only the init step (and intents) of the saved run of that name is replaced."""
    store = RESULTS / "bigapi.json"
    runs = json.loads(store.read_text(encoding="utf-8")) if store.exists() else {}
    if steps == "init" and name in runs:
        result = {
            **runs[name],
            "init": result["init"],
            "intents": result.get("intents"),
            "init_when": result["when"],
        }
    runs[name] = result
    store.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    (RESULTS / "bigapi.md").write_text(markdown(runs), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", type=Path)
    parser.add_argument("--replicate", type=int, default=1, metavar="N")
    parser.add_argument(
        "--work", type=Path, default=None, help="working folder (default: a new temporary one)"
    )
    parser.add_argument("--cpu", type=int, default=0, help="the core to pin every step to (-1: no pinning)")
    parser.add_argument(
        "--name", default=None, help="the run's label in the results (default: the spec's stem)"
    )
    parser.add_argument(
        "--steps",
        choices=("all", "init"),
        default="all",
        help="init: time `toolgen init` only (--save replaces the saved run's init step)",
    )
    parser.add_argument("--save", action="store_true")
    parser.add_argument(
        "--render",
        type=Path,
        default=None,
        metavar="JSON",
        help="save a result this script printed earlier (no run); SPEC is ignored",
    )
    args = parser.parse_args(argv)
    if args.render:
        result = json.loads(args.render.read_text(encoding="utf-8"))
        _save(result["name"], result)
        return 0
    name = args.name or args.spec.stem + (f"x{args.replicate}" if args.replicate > 1 else "")
    work = args.work or Path(tempfile.mkdtemp(prefix="toolgen-bigapi-"))
    result = run(
        args.spec.resolve(), args.replicate, work, None if args.cpu < 0 else args.cpu, name, args.steps
    )
    print(json.dumps(result, indent=1))
    if args.save:
        _save(name, result, args.steps)
    failed = any(result.get(k, {}).get("rc", 0) != 0 for k in ("init", "build", "check_elsewhere"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
