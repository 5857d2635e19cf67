"""Issuing approvals: what a human approves of a stored preview, and the approval the runtime
stores for it (docs/runtime.md "Issued approvals"; the records and the check are `approvals`).

Input: a `Host` (a registry), an approval-gated record tool, a ``preview_id`` and the actor who
made the preview. `approvable_request` rebuilds the request the record call would send (for a
composite record, the plan's write requests as its preview showed them);
`issue_approval` audits, then stores, a new approval of it. Both raise `ToolError` (and
`issue_approval` `ValueError` for bad arguments); `Registry.approvable_request` and
`Registry.issue_approval` are these functions.
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Any

from ..audit import AuditEvent
from ..call.host import Host
from ..call.request import build_request
from ..call.stored_previews import stored_arguments
from ..call.toolspec import ToolSpec, display, key_place_shown
from ..calls import Actor, fingerprint
from ..errors import ToolError, make_error
from ..pipeline.composite.write import approvable_plan
from ..stores.approvals import DEFAULT_APPROVAL_TTL_S, MAX_APPROVAL_TTL_S, approval_record

__all__ = ["approvable_request", "issue_approval", "resolve_record"]


def _gated(spec: ToolSpec) -> bool:
    return spec.row.mode == "record" and spec.row.approval == "required"


def resolve_record(host: Host, record_tool: str) -> ToolSpec:
    """The `ToolSpec` of an approval-gated record tool that executes its stored preview. Raises
    `ToolError`: ``unknown_tool`` (no such approval-gated record tool), ``preview_not_found`` (it
    takes its full arguments: there is no stored preview to approve)."""
    spec = host.specs.get(record_tool) if isinstance(record_tool, str) else None
    if spec is None or not _gated(spec):
        raise make_error(
            "unknown_tool",
            f"{str(record_tool)[:200]!r} is not an approval-gated record tool of {host.api}.",
            details={
                "tool": str(record_tool)[:200],
                "available": sorted(n for n, s in host.specs.items() if _gated(s)),
            },
        )
    if not spec.row.executes_preview:
        raise make_error(
            "preview_not_found",
            f"{record_tool} takes its full arguments (policy record.arguments: full), so "
            "there is no stored preview to approve; rebuild the package (approval-gated records execute their "
            "stored preview).",
            details={"tool": record_tool},
        )
    return spec


def approvable_request(host: Host, record_tool: str, preview_id: str, actor_id: str) -> dict[str, Any]:
    """What a human approves: the request (``method``, ``url``, ``headers`` with credentials
    redacted, ``body``) that `record_tool` would send for the stored preview `preview_id` made
    by the actor `actor_id`, rebuilt exactly as the record call rebuilds it.

    Raises `ToolError`: ``unknown_tool`` (not an approval-gated record tool), ``preview_not_found``,
    ``preview_expired``, ``preview_mismatch`` (the stored preview no longer builds that request,
    e.g. another base URL), ``receipt_store_unavailable``."""
    spec = resolve_record(host, record_tool)
    if spec.steps:  # a composite: the plan's write requests, as its preview showed them
        return approvable_plan(host, spec, str(preview_id), str(actor_id))
    args = stored_arguments(host, spec, str(preview_id), Actor.of(str(actor_id)))
    try:
        built = build_request(spec.row, args, base_url=host.base_url)
    except ToolError as exc:
        raise make_error(
            "preview_mismatch",
            f"The stored preview {preview_id[:24]}… no longer builds a request ({exc.message[:200]}).",
            details={"pointer": "/preview_id"},
        ) from None
    rebuilt = fingerprint(spec.intent, built.canonical)
    if rebuilt != preview_id:
        raise make_error(
            "preview_mismatch",
            f"The stored preview {preview_id[:24]}… builds another request here than the "
            "one previewed (is the base URL the server's?).",
            details={"pointer": "/preview_id", "rebuilt_preview_id": rebuilt},
        )
    return key_place_shown(display(spec.row, built), spec.row, spec.name)


def issue_approval(
    host: Host,
    record_tool: str,
    preview_id: str,
    *,
    approved_by: str,
    actor: str,
    ttl_s: float = DEFAULT_APPROVAL_TTL_S,
) -> str:
    """Issue a human's approval of the stored preview `preview_id` of `record_tool`, made by the
    actor `actor`, and return its ``approval_id`` (43 URL-safe characters, 256 random bits).

    The preview must exist and rebuild its request (`approvable_request`; show that request to
    the human before calling this). The issue is audited (step ``approval``, decision ``issue``,
    with the approver) before the approval is stored on the receipt store's backend (its
    preview store, scope ``<api>/<record tool>#approval``, keyed by the SHA-256 of the id, with
    the ``preview_id``, `approved_by` and the approved request) for `ttl_s` seconds, bounded
    with the actor's previews (per actor, over every record tool). In ``approvals="issued"`` mode a record call
    accepts it only for this record tool, this ``preview_id`` and this actor, before it expires;
    it is spent on one action like any approval.

    Raises `ValueError` (blank `approved_by`, `ttl_s` outside (0, `MAX_APPROVAL_TTL_S`]) and
    `ToolError` (as `approvable_request`; ``receipt_store_unavailable`` when it cannot be stored)."""
    by = str(approved_by).strip()
    if not by or len(by) > 255:
        raise ValueError("approved_by must name the approver (1 to 255 characters)")
    if not 0 < float(ttl_s) <= MAX_APPROVAL_TTL_S:
        raise ValueError(f"ttl_s must be more than 0 and at most {MAX_APPROVAL_TTL_S} seconds")
    request = approvable_request(host, record_tool, preview_id, actor)
    spec = host.specs[record_tool]
    approval_id = secrets.token_urlsafe(32)
    call_id = secrets.token_hex(8)
    now = host.clock.time()
    try:  # audited before it exists: an approval the audit log does not show is never stored
        host.audit.emit(
            AuditEvent(
                now,
                call_id,
                record_tool,
                str(actor),
                "approval",
                "issue",
                preview_id,
                None,
                {"approved_by": by, "ttl_s": float(ttl_s)},
            )
        )
    except Exception as exc:  # noqa: BLE001 - the sink's own failure
        raise make_error(
            "internal_error", f"The audit sink failed ({type(exc).__name__}); no approval was issued."
        ) from None
    try:
        host.preview_store().put(
            approval_record(
                host.api,
                record_tool,
                spec.intent,
                str(actor),
                approval_id,
                preview_id,
                by,
                request,
                now,
                float(ttl_s),
            )
        )
    except Exception as exc:  # noqa: BLE001 - any store outage
        with contextlib.suppress(Exception):  # already failing; the store error is what is reported
            host.audit.emit(
                AuditEvent(
                    host.clock.time(),
                    call_id,
                    record_tool,
                    str(actor),
                    "approval",
                    "fail",
                    preview_id,
                    "receipt_store_unavailable",
                    {},
                )
            )
        raise make_error(
            "receipt_store_unavailable",
            f"The approval could not be stored ({type(exc).__name__}).",
            details={"store": type(host.receipts).__name__},
        ) from None
    return approval_id
