"""`toolgen serve API_OR_DIR`: serve the tools of a generated package over MCP (stdio).

Input: a generated package (folder or API name of the project file), the served actor's scopes and
the receipt store. Output: an MCP server on stdin/stdout (`toolgen.runtime.mcp_server`) until the
client disconnects; a bad package or receipt store exits 2 (`toolgen.cli.call.open_registry`).
At start-up, warnings on stderr: secrets that are not set, and a base URL that looks like the spec's
example server when --base-url is not given (`toolgen.cli.call.startup_warnings`).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import click

from ..runtime.loading import parse_scopes
from ..runtime.mcp_server import serve_stdio
from ..runtime.registry import Actor
from .call import RECEIPTS_HELP, open_registry, startup_warnings


@click.command("serve")
@click.argument("api_or_dir")
@click.option("--scopes", default=None, help="Comma-separated scopes of the served actor (env: TOOLGEN_SCOPES).")
@click.option("--actor", "actor_id", default="mcp", show_default=True, help="Actor id for audit and receipts.")
@click.option("--base-url", default=None, help="Override the API base URL of the policy table.")
@click.option("--receipts", "receipts_spec", default=None, metavar="PATH_OR_URL", help=RECEIPTS_HELP)
@click.option("--audit-log", type=click.Path(path_type=Path), default=None,
              help="Append audit events as JSON lines to this file.")
def serve_command(api_or_dir: str, scopes: str | None, actor_id: str, base_url: str | None,
                  receipts_spec: str | None, audit_log: Path | None) -> None:
    """Serve the tools of a generated package as an MCP server over stdio."""
    registry = open_registry("serve", api_or_dir, base_url, receipts_spec, audit_log)
    for warning in startup_warnings(registry, base_url_given=base_url is not None):
        click.echo(f"toolgen serve: warning: {warning}", err=True)
    anyio.run(serve_stdio, registry, Actor.of(actor_id, parse_scopes(scopes)))
