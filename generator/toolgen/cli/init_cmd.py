"""`toolgen init SPEC [--out FILE] [--name API] [--force] [--project FILE | --no-project] [--describe
WRITER OPTIONS]`: write a draft intent map for a spec and add it to the project.

Input: an OpenAPI document. Output: the draft of `toolgen.scaffold.init` (with an `auth:` block naming
the secrets it chose, and `# decide [RULE]` where `toolgen lint --strict` still fails; their count
by rule is printed), written atomically to `--out` (default ``intent_maps/<api>.yaml``); an
existing file is kept unless --force (exit 2). The API is added to the project file (default
./toolgen.yaml, created if missing, comments kept), and the next steps printed keep
`toolgen build --check` green: build the API through the project, commit generated/. With
``--describe``, `toolgen describe` then drafts the draft's search expansions through the writer the
options name (`toolgen.cli.describe_cmd`); without a writer it says so and drafts nothing.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import click

from ..builder.project import PROJECT_FILE, add_api
from ..compile.load import load_spec
from ..diagnostics import DiagnosticError, DiagnosticSink, SourceLocation, display_path
from ..durable import new_file_mode, replace_file
from ..scaffold.describe import DescribeOptions
from ..scaffold.init import api_name_from, draft_intent_map, renamed_keyword
from .describe_cmd import INIT_COMMAND, WriterChoice, check_writer, run_describe, writer_options
from .exits import guarded


@click.command("init")
@click.argument("spec", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Where to write the draft (default: intent_maps/<api>.yaml).",
)
@click.option("--name", "api_name", default=None, help="API name (default: from the spec's file name).")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.option(
    "--project",
    "project_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Project file to add the API to (default: ./toolgen.yaml, created if missing).",
)
@click.option("--no-project", is_flag=True, help="Do not add the API to a project file.")
@click.option(
    "--describe",
    "describe",
    is_flag=True,
    help="Then draft search expansions through a writer, as `toolgen describe` (its options below).",
)
@writer_options
@guarded
def init_command(
    spec: Path,
    out: Path | None,
    api_name: str | None,
    force: bool,
    project_file: Path | None,
    no_project: bool,
    describe: bool,
    provider: str | None,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    record: Path | None,
    replay: Path | None,
) -> None:
    """Write a draft intent map for SPEC, to edit before building, and add it to toolgen.yaml."""
    stem = spec.stem.split(".")[0] if "." in spec.stem else spec.stem
    name = api_name or api_name_from(stem)
    keyword = None if api_name else renamed_keyword(stem)
    if keyword is not None:
        click.echo(
            f"toolgen: the API is named {name!r}: {keyword!r} is a Python keyword, which no generated "
            "package can be named (pass --name to choose another)",
            err=True,
        )
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise DiagnosticError.one(
            "init-name-invalid",
            f"API name {name!r} is not valid",
            None,
            "use lower-case letters, digits and '_', e.g. --name my_api",
        )
    target = out or Path("intent_maps") / f"{name}.yaml"
    if target.exists() and not force:
        raise DiagnosticError.one(
            "init-file-exists",
            f"{display_path(target)} already exists; nothing was written",
            SourceLocation(display_path(target)),
            "pass --force to overwrite it, or --out another file",
        )
    if not spec.exists():
        raise DiagnosticError.one(
            "spec-not-found",
            f"spec file not found: {display_path(spec)}",
            SourceLocation(display_path(spec)),
            "check the path",
        )
    choice = WriterChoice(provider, model, base_url, api_key_env, record, replay)
    if describe:
        check_writer("toolgen init", choice, target, spec)
    loaded = DiagnosticSink()
    doc = load_spec(spec, sink=loaded)
    spec_ref = Path(os.path.relpath(spec.resolve(), target.resolve().parent)).as_posix()
    command = f"toolgen init {Path(display_path(spec)).as_posix()}"
    result = draft_intent_map(
        doc, api=name, spec_ref=spec_ref, out=target, command=command, spec_diagnostics=loaded.items
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = stat.S_IMODE(target.stat().st_mode) if target.is_file() else new_file_mode()
    replace_file(target, result.text.encode("utf-8"), mode)
    left = f"; {len(result.skipped)} operations left out (listed at the end)" if result.skipped else ""
    shown = display_path(target)
    click.echo(f"toolgen: wrote {shown} ({result.intents} intents{left}).", err=True)
    if result.decisions:
        counts: dict[str, int] = {}
        for _, code, _ in result.decisions:
            counts[code] = counts.get(code, 0) + 1
        shown_counts = ", ".join(
            f"{n} {code}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        n = len(result.decisions)
        click.echo(
            f"toolgen: {n} decision{'s' if n != 1 else ''} left before `toolgen lint --strict` passes "
            f"({shown_counts}); each is a `# decide [RULE]` mark in the draft, where lint reports it.",
            err=True,
        )
    else:
        click.echo("toolgen: `toolgen lint --strict` passes on the draft as written.", err=True)
    steps = [f"edit {shown}: delete the intents agents do not need, decide approvals, write descriptions"]
    if no_project:
        steps += [
            f"toolgen lint {shown}",
            f"toolgen build {shown} --out generated/{name}   (or list it in toolgen.yaml and run `toolgen build`)",
        ]
    else:
        pf = project_file or Path(PROJECT_FILE)
        root = pf.resolve().parent
        intent_ref = Path(os.path.relpath(target.resolve(), root)).as_posix()
        out_ref = Path(os.path.relpath((root / "generated" / name).resolve(), root)).as_posix()
        outcome = add_api(pf, name, intent_ref, out_ref)
        where = display_path(pf)
        if outcome == "listed":
            click.echo(f"toolgen: {where} already lists an API named {name!r}; left it as it is.", err=True)
        else:
            verb = "created" if outcome == "created" else "added"
            click.echo(
                f"toolgen: {verb} {where}: API {name!r}, intent map {intent_ref}, output {out_ref}.", err=True
            )
        flag = "" if project_file is None else f" --project {where}"
        steps += [
            f"toolgen lint{flag} {shown}",
            f"toolgen build{flag} {name}   (writes {out_ref}; commit it with the intent map)",
            f"toolgen build{flag} --check   (in CI: fails when generated files are stale)",
        ]
    if result.secrets:
        steps.append(
            "to call the API: export "
            + " ".join(f"{s}=..." for s in result.secrets)
            + f"   (named in the map's `auth:`), then toolgen call generated/{name} TOOL --args JSON"
        )
    if not describe and (choice.configured or provider or model or record):
        click.echo(
            "toolgen: the writer's options take effect with --describe only; nothing was drafted.", err=True
        )
    if describe:
        run_describe(target, None, choice, DescribeOptions(), INIT_COMMAND)
    click.echo("Next:\n" + "\n".join(f"  {i}. {step}" for i, step in enumerate(steps, 1)), err=True)
