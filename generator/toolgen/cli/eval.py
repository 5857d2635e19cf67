"""`toolgen eval`: draft eval tasks, run them against a model through the runtime, report the results.

    toolgen eval init API_OR_DIR [--out evals/API.yaml] [--force]
    toolgen eval from-audit API_OR_DIR AUDIT_LOG [--out evals/API.audit.yaml] [--force]
    toolgen eval run API_OR_DIR --provider P --model M [--runs N] [--tasks FILE] [--base-url URL]
                     [--api-key-env VAR] [--upstream URL] [--record DIR | --replay DIR] [--out DIR] [--scripted]
                     [--only GLOB ...]
    toolgen eval report DIR [--format markdown|json] [--no-latency]

Input: a generated package (API name of the project file, or its folder), a task file
(`toolgen.evals.tasks`), a provider (openai · anthropic · gemini · openai-compatible) and model.
Output: ``init`` writes the drafted task file; ``from-audit`` the draft tasks of an audit log's failed
calls (`toolgen.evals.from_audit`; exit 1 when it holds none); ``run`` writes ``results.json`` (and, with
``--record``, every provider exchange) into the run folder and prints the Markdown report;
``report`` prints a run folder's report (through `toolgen.shown_text.terminal_safe`: text from
``results.json`` cannot drive the terminal). ``--replay DIR`` re-runs a recorded folder offline: the
provider, model and runs come from its ``results.json``; every request must equal the recorded one.
``--scripted`` starts the loopback scripted model (`toolgen.testing.scripted`, not a language model)
and points the adapter at it. Exit codes: 0 ok · 2 bad input (task file, folder, provider,
missing key, the provider's SDK not installed: the ``eval`` extra, ``pip install -e ".[eval]"`` in a
clone of toolgen) · 3 internal error.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
from dataclasses import replace
from fnmatch import fnmatch
from pathlib import Path

import click

from ..evals.draft import draft_tasks
from ..evals.from_audit import draft_from_audit, failed_calls
from ..evals.outcomes import RunResults
from ..evals.provider_names import KEY_ENV, SDK_MODULES
from ..evals.report import dumps, report_json, report_markdown
from ..evals.tasks import dump_tasks, load_tasks
from .call import package_folder
from .exits import EXTRA_HINT, guarded
from .options import endpoint_options, model_options
from .terminal import terminal_safe


@click.group("eval")
def eval_group() -> None:
    """Measure whether a model picks, fills and recovers with the package's tools (docs/eval.md)."""


@eval_group.command("init")
@click.argument("api_or_dir")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to write the task file (default: evals/<api>.yaml).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing task file.")
@guarded
def init_command(api_or_dir: str, out: Path | None, force: bool) -> None:
    """Draft a task file from a generated package: positives, negatives and multi-step tasks per tool."""
    folder = package_folder("eval init", api_or_dir)
    policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
    target = out or Path("evals") / f"{policy.get('api', folder.name)}.yaml"
    if target.exists() and not force:
        click.echo(
            f"toolgen eval init: {target} exists; edit it, or pass --force to draft it again", err=True
        )
        sys.exit(2)
    package = os.path.relpath(
        folder.resolve(),
        target.parent.resolve() if target.parent.exists() else (Path.cwd() / target.parent).resolve(),
    )
    tasks = draft_tasks(policy, catalog, package=Path(package).as_posix())
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dump_tasks(tasks), encoding="utf-8")
    kinds = {
        k: sum(1 for t in tasks.tasks if t.kind == k) for k in dict.fromkeys(t.kind for t in tasks.tasks)
    }
    held = sum(1 for t in tasks.tasks if t.split == "held-out")
    click.echo(
        f"wrote {target}: {len(tasks.tasks)} tasks ({', '.join(f'{n} {k}' for k, n in kinds.items())}); "
        f"{held} held out. Review and edit them before you trust a score."
    )


AUDIT_HEADER = (
    "# toolgen eval tasks drafted by `toolgen eval from-audit` from the failed calls of an audit log\n"
    "# (docs/eval.md). Every task is a DRAFT: write the user's real request as its prompt and check\n"
    "# `expect` before you run it. `split` follows the fixed hash rule; do not change it by hand.\n"
)


@eval_group.command("from-audit")
@click.argument("api_or_dir")
@click.argument("audit_log", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to write the draft tasks (default: evals/<api>.audit.yaml).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@guarded
def from_audit_command(api_or_dir: str, audit_log: Path, out: Path | None, force: bool) -> None:
    """Draft tasks from the failed calls of AUDIT_LOG (invalid arguments, unknown tool, denied, approval,
    unknown outcome), for a human to label: production failures become regression tasks."""
    folder = package_folder("eval from-audit", api_or_dir)
    policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
    target = out or Path("evals") / f"{policy.get('api', folder.name)}.audit.yaml"
    if target.exists() and not force:
        click.echo(
            f"toolgen eval from-audit: {target} exists; label it, or pass --force to draft it again", err=True
        )
        sys.exit(2)
    try:
        with audit_log.open(encoding="utf-8") as lines:
            calls = failed_calls(lines, str(audit_log))
    except OSError as exc:
        click.echo(f"toolgen eval from-audit: cannot read {audit_log}: {exc.strerror}", err=True)
        sys.exit(2)
    package = os.path.relpath(folder.resolve(), (Path.cwd() / target.parent).resolve())
    try:
        tasks = draft_from_audit(
            calls,
            str(policy.get("api", folder.name)),
            Path(package).as_posix(),
            {str(t["name"]): t for t in catalog},
            {str(r["tool"]): r for r in policy["tools"]},
        )
    except ValueError as exc:
        click.echo(f"toolgen eval from-audit: {exc}", err=True)
        sys.exit(1)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(dump_tasks(tasks, AUDIT_HEADER), encoding="utf-8")
    click.echo(
        f"wrote {target}: {len(tasks.tasks)} draft tasks from {len(calls)} failed calls; label each prompt "
        "and check its expect, then `toolgen eval run ... --tasks` it."
    )


@eval_group.command("run")
@click.argument("api_or_dir")
@model_options("Provider wire format and SDK.")
@click.option(
    "--runs", type=click.IntRange(min=1), default=5, show_default=True, help="Repeated runs of every task."
)
@click.option(
    "--tasks",
    "tasks_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Task file (default: evals/<api>.yaml).",
)
@endpoint_options
@click.option(
    "--upstream",
    default=None,
    help="URL of the API the tools reach (e.g. a Prism mock); default for tickets: the example server.",
)
@click.option(
    "--upstream-token", default=None, help="Token the upstream accepts (default: the example server's)."
)
@click.option(
    "--record",
    "record",
    type=click.Path(path_type=Path),
    default=None,
    help="Keep every provider exchange in this folder (replayable offline).",
)
@click.option(
    "--replay",
    "replay",
    type=click.Path(path_type=Path),
    default=None,
    help="Answer every provider request from this recorded folder; sends nothing to a provider.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder for results.json (default: the --record folder; nothing written otherwise).",
)
@click.option(
    "--scripted", is_flag=True, help="Run against the loopback scripted model (not a language model)."
)
@click.option(
    "--only",
    "only",
    multiple=True,
    metavar="GLOB",
    help="Run only the tasks whose id matches GLOB (e.g. 'ticket_followup/*'); repeatable.",
)
@guarded
def run_command(
    api_or_dir: str,
    provider: str | None,
    model: str | None,
    runs: int,
    tasks_path: Path | None,
    base_url: str | None,
    api_key_env: str | None,
    upstream: str | None,
    upstream_token: str | None,
    record: Path | None,
    replay: Path | None,
    out: Path | None,
    scripted: bool,
    only: tuple[str, ...],
) -> None:
    """Run every task RUNS times through PROVIDER's model and the toolgen runtime; print the report."""
    folder = package_folder("eval run", api_or_dir)
    api = json.loads((folder / "policy.json").read_text(encoding="utf-8")).get("api", folder.name)
    tasks = load_tasks(tasks_path or Path("evals") / f"{api}.yaml")
    if replay is not None and not only:
        with contextlib.suppress(OSError, ValueError, KeyError):
            only = tuple(
                json.loads((replay / "results.json").read_text(encoding="utf-8"))["meta"].get("only") or ()
            )
    if only:
        tasks = replace(tasks, tasks=tuple(t for t in tasks.tasks if any(fnmatch(t.id, g) for g in only)))
        if not tasks.tasks:
            _fail(f"no task id matches {', '.join(only)}")
    if record is not None and replay is not None:
        _fail("--record and --replay exclude each other")
    if replay is not None:
        try:
            meta = json.loads((replay / "results.json").read_text(encoding="utf-8"))["meta"]
        except (OSError, ValueError, KeyError):
            _fail(f"{replay} holds no recorded run (results.json); record one with --record")
        _require_sdks(str(meta["provider"]))
        from ..evals.runner import Replay, run_eval

        results = run_eval(
            tasks,
            str(meta["provider"]),
            str(meta["model"]),
            int(meta["runs"]),
            Replay(replay, meta.get("base_url")),
            upstream=upstream,
            upstream_token=upstream_token,
            scripted=bool(meta.get("scripted")),
        )
        _finish(results, out, only)
        return
    if provider is None or (model is None and not scripted):
        _fail("--provider and --model are required (or --replay DIR)")
    assert provider is not None
    _require_sdks(provider)
    from ..evals.runner import Live, run_eval
    from ..testing.scripted import MODEL_NAME, ScriptedModelServer

    if scripted:
        with ScriptedModelServer(tasks.package_dir()) as server:
            results = run_eval(
                tasks,
                provider,
                model or MODEL_NAME,
                runs,
                Live("scripted", server.base_url(provider), record),
                upstream=upstream,
                upstream_token=upstream_token,
                scripted=True,
                progress=_progress,
            )
    else:
        env = api_key_env or KEY_ENV[provider]
        key = os.environ.get(env)
        if not key and provider != "openai-compatible":
            _fail(f"no API key: set {env} (or name another variable with --api-key-env)")
        assert model is not None
        results = run_eval(
            tasks,
            provider,
            model,
            runs,
            Live(key or "none", base_url, record),
            upstream=upstream,
            upstream_token=upstream_token,
            progress=_progress,
        )
    _finish(results, out or record, only)


def _require_sdks(provider: str) -> None:
    """Exit 2, naming the eval extra, when `provider`'s official SDK or the HTTP client the runner
    sends through (``httpx2``, which the SDKs bring) cannot be imported: the extra is optional, so
    its absence is the user's set-up to complete, not a toolgen bug. Another provider name passes
    (`toolgen.evals.providers.make_adapter` refuses it)."""
    for module in ("httpx2", *SDK_MODULES.get(provider, ())):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            _fail(
                f"the {provider} provider needs the {module!r} package, which is not installed "
                f"({type(exc).__name__}: {exc}); install the eval extra (the providers' official SDKs): "
                + EXTRA_HINT.format(extra="eval")
            )


def _progress(run: int, task: object, outcome: object) -> None:
    click.echo(".", nl=False, err=True)


def _finish(results: RunResults, out: Path | None, only: tuple[str, ...]) -> None:
    click.echo("", err=True)
    if only:
        results.meta["only"] = list(only)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(dumps(results.to_json()), encoding="utf-8")
        (out / "REPORT.md").write_text(report_markdown(results), encoding="utf-8")
    click.echo(terminal_safe(report_markdown(results)), nl=False)


def _fail(message: str) -> None:
    click.echo(f"toolgen eval run: {message}", err=True)
    sys.exit(2)


@eval_group.command("report")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True
)
@click.option(
    "--no-latency",
    is_flag=True,
    help="Leave wall-clock figures out (reports of one recording compare equal).",
)
@guarded
def report_command(folder: Path, fmt: str, no_latency: bool) -> None:
    """Print the report of a run folder (its results.json), every control, format and bidirectional
    character of its text written as a visible escape (``\\u001b``; JSON stays JSON)."""
    try:
        results = RunResults.from_json(json.loads((folder / "results.json").read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        click.echo(f"toolgen eval report: {folder / 'results.json'}: not a run's results ({exc})", err=True)
        sys.exit(2)
    if fmt == "json":
        click.echo(terminal_safe(dumps(report_json(results))), nl=False)
    else:
        click.echo(terminal_safe(report_markdown(results, latency=not no_latency)), nl=False)
