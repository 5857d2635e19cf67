"""Issued approvals: the records `Registry.issue_approval` stores and the check a record call makes.

In ``approvals="issued"`` mode (docs/runtime.md "Issued approvals") a record call's approval counts
only when its ``approval_id`` was issued by the runtime (``toolgen approve``) for exactly that
record tool, ``preview_id`` and actor, and has not expired. An issued approval is a `StoredPreview`
in the receipt store's preview store (same backend, same bound and expiry):

- scope ``"<api>/<record tool>#approval"`` (`approval_scope`), actor: the preview's actor;
- key: ``"sha256:<hex>"`` of the id (`approval_key`), so the store never holds a usable id;
- arguments: ``{"preview_id", "approved_by", "request"}`` (`approval_record`), the request being
  what the human was shown; `expires_at`: the issue time plus its ``ttl_s``.

Pure: no store access here; `toolgen.runtime.serving.issuing` (issue) and the call path's approval step
(`toolgen.runtime.pipeline.approval`: check, spend) read and write the store and call `check_issued`.
"""

from __future__ import annotations

import hashlib
import shlex
from typing import Any

from ..errors import make_error
from . import StoredPreview

#: Seconds an issued approval stays usable unless `Registry.issue_approval` is told otherwise.
DEFAULT_APPROVAL_TTL_S = 900
#: The longest an issued approval may stay usable (seconds).
MAX_APPROVAL_TTL_S = 7 * 24 * 3600
#: Where approvals are accepted from (`Registry` option `approvals`): ``"client"`` takes the caller's
#: `Approval` as given (the host application is the caller: in process, stdio); ``"issued"`` accepts
#: only an ``approval_id`` the runtime issued (`Registry.issue_approval`, ``toolgen approve``).
APPROVAL_MODES = ("client", "issued")


def approval_scope(api: str, record_tool: str) -> str:
    """The preview-store scope of the approvals issued for `record_tool` of `api`."""
    return f"{api}/{record_tool}#approval"


def approval_key(approval_id: str) -> str:
    """The store key of an issued approval: ``"sha256:" + hex(sha256(approval_id))``."""
    return "sha256:" + hashlib.sha256(approval_id.encode("utf-8", "surrogatepass")).hexdigest()


def issue_next_step(api: str, tool: str, preview_id: str | None, actor_id: str) -> str:
    """What a caller refused in issued mode does next: have a human run ``toolgen approve`` (the
    actor id quoted for a POSIX shell: an issuer-bound id holds ``#``, a subject may hold anything)."""
    what = preview_id if preview_id is not None else "PREVIEW_ID"
    return (
        f"Ask a human to review and approve the preview: `toolgen approve {api or 'API'} {tool} "
        f"{what} --actor {shlex.quote(actor_id)} --by NAME` (same receipt store as this server) prints an "
        'approval_id; then call again with _meta {"toolgen/approval": {"preview_id": ..., '
        '"approval_id": ...}}.'
    )


def approval_record(  # noqa: PLR0913
    api: str,
    record_tool: str,
    intent: str,
    actor_id: str,
    approval_id: str,
    preview_id: str,
    approved_by: str,
    request: dict[str, Any],
    now: float,
    ttl_s: float,
) -> StoredPreview:
    """The stored form of one issued approval (see the module docstring)."""
    return StoredPreview(
        approval_scope(api, record_tool),
        actor_id,
        approval_key(approval_id),
        intent,
        {"preview_id": preview_id, "approved_by": approved_by, "request": request},
        now,
        now + ttl_s,
    )


def check_issued(
    record: StoredPreview | None, *, api: str, tool: str, intent: str, fp: str, actor_id: str, now: float
) -> str:
    """The approver of the issued approval `record` (as read from the store: ``None`` when no approval
    with the presented id was issued for `tool` and `actor_id`) for the request fingerprint `fp`.
    Raises `ToolError`: ``approval_required`` (not issued, or expired: ``details.reason``),
    ``approval_mismatch`` (issued for another ``preview_id`` or intent)."""
    next_step = issue_next_step(api, tool, fp, actor_id)
    if record is None:
        raise make_error(
            "approval_required",
            f"The approval_id was not issued by this runtime for {tool} and "
            f"actor {actor_id!r}; nothing was sent.",
            details={"preview_id": fp, "approvals": "issued"},
            next_step=next_step,
        )
    if record.expired(now):
        raise make_error(
            "approval_required",
            f"The approval of {fp[:24]}… expired; nothing was sent.",
            details={"preview_id": fp, "approvals": "issued", "reason": "expired"},
            next_step=next_step,
        )
    approved = record.arguments.get("preview_id")
    if approved != fp or record.intent != intent:
        raise make_error(
            "approval_mismatch",
            f"The approval was issued for preview {str(approved)[:20]}…, not "
            "for this request; nothing was sent.",
            details={"approved_preview_id": str(approved)[:80], "approvals": "issued"},
            next_step=next_step,
        )
    return str(record.arguments.get("approved_by") or "")


__all__ = [
    "APPROVAL_MODES",
    "DEFAULT_APPROVAL_TTL_S",
    "MAX_APPROVAL_TTL_S",
    "approval_key",
    "approval_record",
    "approval_scope",
    "check_issued",
    "issue_next_step",
]
