"""`toolgen approve`: a human approves one stored preview, and the runtime issues the approval.

Input: a generated package (folder or API name of the project file), an approval-gated record tool,
the ``preview_id`` its preview returned, the actor that made the preview, the approver's name and
the receipt store the server uses. Output: the approved request, then the ``approval_id``.

    toolgen approve API_OR_DIR RECORD_TOOL PREVIEW_ID --actor ACTOR --by NAME
                    [--receipts PATH_OR_URL] [--base-url URL] [--audit-log PATH] [--ttl SECONDS] [--yes]
                    [--format text|json]

The command rebuilds the request the record tool would send from the stored preview (method, URL,
headers with credentials redacted, body), prints it, asks for confirmation unless ``--yes``, then
issues the approval (`Registry.issue_approval`) and prints its ``approval_id``. A server started with
``toolgen serve --http`` (``--approvals issued``, the default there) accepts it in the call's
``_meta``: ``{"toolgen/approval": {"preview_id": ..., "approval_id": ...}}``, once, for this record
tool, preview and actor, until it expires. ``--receipts`` and ``--base-url`` must be the server's:
the approval is stored in that receipt store (a SQLite file both processes open, or a Redis URL),
and the request is rebuilt against that base URL.

Exit codes (the project's table): 0 issued; 1 not issued (the preview is unknown, expired or no
longer builds its request, the store is down, or the human declined); 2 bad input (package, tool,
store, option); 3 internal error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import NoReturn

import click

from ..runtime.errors import ToolError
from ..runtime.stores.approvals import DEFAULT_APPROVAL_TTL_S, MAX_APPROVAL_TTL_S
from .call import open_registry
from .options import RECEIPTS_HELP
from .terminal import terminal_safe


@click.command("approve")
@click.argument("api_or_dir")
@click.argument("record_tool")
@click.argument("preview_id")
@click.option(
    "--by", "approved_by", required=True, help="Who approves (recorded in the audit log of the call)."
)
@click.option(
    "--actor",
    "actor_id",
    required=True,
    help="The actor that made the preview (its token's actor; `mcp` for a stdio server by default).",
)
@click.option(
    "--receipts",
    "receipts_spec",
    default=None,
    metavar="PATH_OR_URL",
    help=RECEIPTS_HELP + " Must be the server's store.",
)
@click.option("--base-url", default=None, help="The server's --base-url, if it sets one.")
@click.option(
    "--audit-log",
    type=click.Path(path_type=Path),
    default=None,
    help="Append the issue's audit event as a JSON line to this file (e.g. the server's --audit-log).",
)
@click.option(
    "--ttl",
    "ttl_s",
    type=click.FloatRange(min=1, max=MAX_APPROVAL_TTL_S),
    default=DEFAULT_APPROVAL_TTL_S,
    show_default=True,
    help="Seconds the approval stays usable.",
)
@click.option(
    "--yes", is_flag=True, default=False, help="Approve without asking (the request is still printed)."
)
@click.option(
    "--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def approve_command(
    api_or_dir: str,
    record_tool: str,
    preview_id: str,
    approved_by: str,
    actor_id: str,
    receipts_spec: str | None,
    base_url: str | None,
    audit_log: Path | None,
    ttl_s: float,
    yes: bool,
    output_format: str,
) -> None:
    """Show a stored preview's request, ask for confirmation, and issue an approval_id for it."""
    if not approved_by.strip():
        _exit(2, "--by must name the approver")
    registry = open_registry("approve", api_or_dir, base_url, receipts_spec, audit_log, "issued")
    try:
        try:
            request = registry.approvable_request(record_tool, preview_id, actor_id)
        except ToolError as exc:
            _exit(2 if exc.code == "unknown_tool" else 1, exc.message, exc.next_step)
        as_json = output_format == "json"
        shown = json.dumps(request, indent=2, ensure_ascii=False)
        _say(f"{record_tool} would send, for actor {actor_id!r}:\n{shown}", err=as_json)
        if not yes and not click.confirm(
            terminal_safe(f"Approve this request as {approved_by!r}?"), default=False, err=True
        ):
            _exit(1, "not approved")
        try:
            approval_id = registry.issue_approval(
                record_tool, preview_id, approved_by=approved_by, actor=actor_id, ttl_s=ttl_s
            )
        except ToolError as exc:
            _exit(1, exc.message, exc.next_step)
        except ValueError as exc:
            _exit(2, str(exc))
        if as_json:
            _say(
                json.dumps(
                    {
                        "approval_id": approval_id,
                        "preview_id": preview_id,
                        "record_tool": record_tool,
                        "actor": actor_id,
                        "approved_by": approved_by,
                        "expires_in_s": ttl_s,
                        "request": request,
                    },
                    ensure_ascii=False,
                )
            )
        else:
            _say(f"approval_id: {approval_id}")
            _say(
                f"(valid {ttl_s:g} s, once, for {record_tool} {preview_id[:24]}… by actor {actor_id!r})",
                err=True,
            )
    finally:
        registry.close()


def _say(text: str, *, err: bool = False) -> None:
    """Print `text` for the approver: every control, bidi and line-separator character escaped
    (`terminal_safe`), so what is shown is what will be sent, read in order."""
    click.echo(terminal_safe(text), err=err)


def _exit(code: int, message: str, next_step: str | None = None) -> NoReturn:
    _say(f"toolgen approve: {message}" + (f"\n  {next_step}" if next_step else ""), err=True)
    sys.exit(code)
