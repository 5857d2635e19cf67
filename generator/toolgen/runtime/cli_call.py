"""`toolgen call`: run one tool call through the runtime from the shell.

    toolgen call API_OR_DIR TOOL --args JSON [--scopes a,b] [--approve PREVIEW_ID]
                 [--base-url URL] [--receipts PATH] [--actor ID] [--audit-log PATH]

Prints the structured result (``{"ok": true, "result": ..., "replayed": ...}``) or error
(``{"ok": false, "error": {...}}``) as JSON on stdout. Exit codes (the project's table): 0 success,
1 the tool call failed (a structured tool error), 2 bad command-line input (unreadable JSON, unknown
package or tool), 3 internal error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .audit import JsonlAuditSink, MemoryAuditSink
from .loading import PackageNotFound, cursor_key_for, default_receipts_path, parse_scopes, resolve_package
from .receipts import SqliteReceiptStore
from .registry import Actor, Approval, Registry


def _read_args(value: str) -> object:
    if value == "-":
        text = sys.stdin.read()
    elif value.startswith("@"):
        text = Path(value[1:]).read_text(encoding="utf-8")
    else:
        text = value
    return json.loads(text)


@click.command("call")
@click.argument("api_or_dir")
@click.argument("tool")
@click.option("--args", "args_text", default="{}", show_default=True,
              help="Tool arguments as a JSON object; '-' reads stdin, '@FILE' reads a file.")
@click.option("--scopes", default=None, help="Comma-separated scopes the actor holds (env: TOOLGEN_SCOPES).")
@click.option("--actor", "actor_id", default="cli", show_default=True, help="Actor id for audit and receipts.")
@click.option("--approve", "preview_id", default=None, help="An approved preview_id (record tools).")
@click.option("--base-url", default=None, help="Override the API base URL of the policy table.")
@click.option("--receipts", "receipts_path", type=click.Path(path_type=Path), default=None,
              help="SQLite receipt store (env: TOOLGEN_RECEIPTS; default .toolgen/receipts.sqlite3).")
@click.option("--audit-log", type=click.Path(path_type=Path), default=None,
              help="Append audit events as JSON lines to this file.")
def call_command(api_or_dir: str, tool: str, args_text: str, scopes: str | None, actor_id: str,
                 preview_id: str | None, base_url: str | None, receipts_path: Path | None,
                 audit_log: Path | None) -> None:
    """Run TOOL of a generated package against its API and print the structured result as JSON."""
    try:
        args = _read_args(args_text)
    except (ValueError, OSError) as exc:
        click.echo(f"toolgen call: --args is not valid JSON: {exc}", err=True)
        sys.exit(2)
    if not isinstance(args, dict):
        click.echo("toolgen call: --args must be a JSON object", err=True)
        sys.exit(2)
    try:
        folder = resolve_package(api_or_dir)
    except PackageNotFound as exc:
        click.echo(f"toolgen call: {exc}", err=True)
        sys.exit(2)
    path = receipts_path or default_receipts_path()
    try:
        registry = Registry.from_dir(
            folder,
            base_url=base_url,
            receipts=SqliteReceiptStore(path),
            audit=JsonlAuditSink(audit_log) if audit_log else MemoryAuditSink(),
            cursor_key=cursor_key_for(path),
        )
    except (OSError, ValueError) as exc:
        click.echo(f"toolgen call: cannot load {folder}: {exc}", err=True)
        sys.exit(2)
    with registry:
        if tool not in registry.specs:
            click.echo(f"toolgen call: unknown tool {tool!r}; available: {', '.join(registry.tool_names())}",
                       err=True)
            sys.exit(2)
        try:
            result = registry.call(tool, args, actor=Actor.of(actor_id, parse_scopes(scopes)),
                                   approval=Approval(preview_id, approved_by=actor_id) if preview_id else None)
        except Exception as exc:  # noqa: BLE001 - tool failures are data; anything raised here is a bug
            click.echo(f"toolgen call: internal error ({type(exc).__name__})", err=True)
            sys.exit(3)
    click.echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False, sort_keys=True))
    sys.exit(0 if result.ok else 1)
