"""`toolgen init SPEC [--out FILE] [--name API] [--force]`: write a draft intent map for a spec.

Input: an OpenAPI document. Output: the draft of `toolgen.review.init`, written atomically to
`--out` (default ``intent_maps/<api>.yaml``); an existing file is kept unless --force (exit 2).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import click

from ..compile.load import load_spec
from ..diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, SourceLocation, display_path
from ..review.init import api_name_from, draft_intent_map
from .exits import guarded


@click.command("init")
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Where to write the draft (default: intent_maps/<api>.yaml).")
@click.option("--name", "api_name", default=None, help="API name (default: from the spec's file name).")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@guarded
def init_command(spec: Path, out: Path | None, api_name: str | None, force: bool) -> None:
    """Write a draft intent map for SPEC, to edit before building."""
    name = api_name or api_name_from(spec.stem.split(".")[0] if "." in spec.stem else spec.stem)
    if not re.match(r"^[a-z_][a-z0-9_]*$", name):
        raise DiagnosticError([Diagnostic("init-name-invalid", "error", f"API name {name!r} is not valid",
                                          None, "use lower-case letters, digits and '_', e.g. --name my_api")])
    target = out or Path("intent_maps") / f"{name}.yaml"
    if target.exists() and not force:
        raise DiagnosticError([Diagnostic(
            "init-file-exists", "error", f"{display_path(target)} already exists; nothing was written",
            SourceLocation(display_path(target)), "pass --force to overwrite it, or --out another file")])
    if not spec.exists():
        raise DiagnosticError([Diagnostic("spec-not-found", "error", f"spec file not found: {display_path(spec)}",
                                          SourceLocation(display_path(spec)), "check the path")])
    doc = load_spec(spec, sink=DiagnosticSink())
    spec_ref = Path(os.path.relpath(spec.resolve(), target.resolve().parent)).as_posix()
    command = f"toolgen init {Path(display_path(spec)).as_posix()}"
    result = draft_intent_map(doc, api=name, spec_ref=spec_ref, out=target, command=command)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(result.text, encoding="utf-8")
    os.replace(tmp, target)
    left = f"; {len(result.skipped)} operations left out (listed at the end)" if result.skipped else ""
    click.echo(f"toolgen: wrote {display_path(target)} ({result.intents} intents{left}). "
               f"Next: edit it, then `toolgen lint {display_path(target)}` and "
               f"`toolgen build {display_path(target)} --out generated/{name}`.", err=True)
