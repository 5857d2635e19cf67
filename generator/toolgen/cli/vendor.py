"""`toolgen vendor`: write (or check) the slice of a large spec that an intent map needs.

Input: an intent map and the full upstream document (``--from``). Output: the slice
(`toolgen.compile.slice`: the operations the intent map turns into tools, everything they reach by
``$ref``, security schemes, servers, used tags, and an ``x-toolgen-slice`` provenance record with the
source's name, version and SHA-256) written as JSON where the intent map's ``spec:`` points, or to
``--out``. A build from the slice gives the same catalogs, policy and package as a build from the
full document, so a repository can commit the slice instead of the upstream file. A Swagger 2.0
source is sliced from the OpenAPI 3.0.3 document it converts to (`toolgen.compile.swagger2`): the
slice is OpenAPI 3.0.3, its provenance hash the 2.0 file's.

``--check`` writes nothing and exits 1 when the committed slice differs from what the source gives
(the source changed, or the intent map now needs other operations). Exit codes as every command:
0 ok, 1 check failed, 2 bad input, 3 internal error.
"""

from __future__ import annotations

import difflib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import click

from ..builder.build import build_api
from ..compile.inputs import resolve_spec_path
from ..compile.intent import load_intent_map
from ..compile.load import load_spec
from ..compile.slice import SliceError, document_sha256, slice_document
from ..compile.swagger2 import is_swagger2
from ..diagnostics import DiagnosticError, DiagnosticSink, SourceLocation, display_path
from ..durable import new_file_mode, replace_file
from .exits import ExitCode, guarded


def slice_bytes(intent_path: Path, source: Path) -> bytes:
    """The slice of `source` that the intent map at `intent_path` needs, as the bytes `toolgen vendor`
    writes (JSON, one-space indent, keys in the source's order, a final newline). Raises
    `DiagnosticError` for a bad intent map, spec or ``$ref``."""
    build = build_api(intent_path, Path(tempfile.gettempdir()), spec=source, emit=("policy",))
    raw = source.read_bytes()
    data: dict[str, Any] = json.loads(raw) if source.suffix.lower() == ".json" else _yaml(source)
    if is_swagger2(data):  # the operations the build covered are pointers of the converted document
        data = load_spec(source, display_path(source), sink=DiagnosticSink()).data
    try:
        sliced = slice_document(data, build.ir.covered, source=source.name, sha256=document_sha256(raw))
    except SliceError as exc:
        raise DiagnosticError.one(
            "slice-ref",
            str(exc),
            SourceLocation(display_path(source), None, None, exc.pointer),
            "bundle the document first, or fix the reference",
        ) from None
    return (json.dumps(sliced, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


def _yaml(path: Path) -> dict[str, Any]:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise DiagnosticError.one(
            "spec-not-object",
            "the document is not an object",
            SourceLocation(display_path(path)),
            "slice an OpenAPI document",
        )
    return data


@click.command("vendor")
@click.argument("intent_map", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option(
    "--from",
    "source",
    required=True,
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="The full upstream OpenAPI document to slice.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Where to write the slice (default: the intent map's `spec:` path).",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when the slice is missing or differs.")
@guarded
def vendor_command(intent_map: Path, source: Path, out: Path | None, check: bool) -> None:
    """Write the slice of SOURCE that INTENT_MAP needs (its operations and their $ref closure)."""
    intents = load_intent_map(intent_map, display_path(intent_map))
    target = out or resolve_spec_path(intents, None)
    if target.resolve() == source.resolve():
        raise DiagnosticError.one(
            "vendor-overwrites-source",
            f"the slice would overwrite its source {display_path(source)}",
            intents.locate("spec"),
            "point the intent map's `spec:` (or --out) at a new file, e.g. specs/<api>.slice.json",
        )
    content = slice_bytes(intent_map, source)
    shown = display_path(target)
    if check:
        current = target.read_bytes() if target.exists() else b""
        if current == content:
            click.echo(f"toolgen vendor: {shown} is up to date with {display_path(source)}.")
            return
        diff = difflib.unified_diff(
            current.decode("utf-8", "replace").splitlines(),
            content.decode("utf-8").splitlines(),
            f"{shown} (committed)",
            f"{shown} (from {source.name})",
            lineterm="",
            n=1,
        )
        lines = list(diff)
        for line in lines[:60]:
            click.echo(line)
        if len(lines) > 60:
            click.echo(f"… {len(lines) - 60} more diff lines")
        click.echo(
            f"toolgen vendor: {shown} is stale; run `toolgen vendor {display_path(intent_map)} "
            f"--from {display_path(source)}`.",
            err=True,
        )
        sys.exit(ExitCode.CHECK_FAILED)
    target.parent.mkdir(parents=True, exist_ok=True)
    replace_file(target, content, new_file_mode())  # flushed to disk, then renamed over the slice
    operations = json.loads(content)["x-toolgen-slice"]["operations"]
    click.echo(
        f"toolgen vendor: wrote {shown} ({operations} operations, {len(content):,} bytes) "
        f"from {display_path(source)}."
    )
