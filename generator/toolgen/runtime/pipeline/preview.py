"""Step 6 of a preview tool (policy ``mode: preview``): show the request instead of sending it.

Input: `Call` (fingerprint set), the preview tool's `ToolSpec`, `Validated`. Output: the
successful `CallResult` whose result is ``{"preview_id", "request", "effect", "side_effects",
"approval_required", "record_tool"[, "cannot_send"][, "expires_in_s"]}``: ``preview_id`` is the
fingerprint, ``request`` the redacted request (`toolgen.runtime.call.toolspec.display`; where the
record forwards its idempotency key, the key's header, query parameter or body member shown with
the placeholder ``"<ARG of RECORD_TOOL>"``, `key_place_shown`),
``cannot_send`` what would stop the record call sending it (a missing credential, a URL the HTTP
client would change). When the record tool executes the stored preview (``record.arguments:
preview``) the validated arguments are stored in the preview store for ``record.preview_ttl_s``
seconds (default `DEFAULT_PREVIEW_TTL_S`) under ``(<api>/<record tool>, actor, preview_id)``.
Audits ``preview`` ``stored``, ``http`` ``skip`` and ``result`` ``ok``. Errors (`Halt` at step
``preview``): ``receipt_store_unavailable`` (the preview could not be stored).
"""

from __future__ import annotations

from typing import Any

import httpx

from ...policy.format import PolicyRow
from ..call import credentials as creds
from ..call.host import Host
from ..call.request import BuiltRequest
from ..call.toolspec import ToolSpec, display, key_place_shown
from ..calls import CallResult
from ..errors import ToolError, make_error
from ..stores import StoredPreview
from .approval_condition import needs_approval
from .state import Call, Halt, Validated

__all__ = ["DEFAULT_PREVIEW_TTL_S", "is_preview", "preview"]

#: Seconds a stored preview stays executable when the policy row does not say (``record.preview_ttl_s``).
DEFAULT_PREVIEW_TTL_S = 900


def is_preview(row: PolicyRow) -> bool:
    """Policy: a preview row (``mode: preview``)."""
    return row.mode == "preview"


def _record_tool(spec: ToolSpec) -> str:
    """Policy: the preview's record tool, the row's ``pair``, else ``record_<intent>``."""
    return spec.row.pair or "record_" + spec.intent


def _ttl_s(record_row: PolicyRow) -> int:
    """Policy: how long the record tool's stored preview stays executable (``record.preview_ttl_s``)."""
    return record_row.preview_ttl_s or DEFAULT_PREVIEW_TTL_S


def _previewed_effect(host: Host, row: PolicyRow) -> str:
    pair = row.pair
    if pair and pair in host.specs:
        return host.specs[pair].row.effect
    return row.effect if row.effect != "read" else "write"


def _record_needs_approval(call: Call, row: PolicyRow, validated: Validated) -> bool:
    """Whether the record call of these arguments will ask for an approval (its condition, when it
    has one, evaluated on them: `needs_approval`); True when the record tool is unknown."""
    record = call.host.specs.get(row.pair or "")
    return True if record is None else needs_approval(call, record, validated, audit=False)


def _blockers(host: Host, row: PolicyRow, built: BuiltRequest, tool: str) -> list[str]:
    """Why the record call of a preview would not send the request it shows (empty when it
    would): a credential the runtime does not have, or a URL the HTTP client would change."""
    blockers: list[str] = []
    try:
        if not any(entry.per_caller is not None for entry in row.auth):  # a caller's own: known when sent
            creds.resolve(row.auth, host.credentials, tool=tool)
    except ToolError as exc:
        blockers.append(f"{exc.code}: {exc.message}")
    try:
        if str(httpx.URL(built.url)) != built.url:
            blockers.append("internal_error: the HTTP client would send another URL than the one shown")
    except Exception as exc:  # noqa: BLE001 - an unparsable URL is reported, never raised
        blockers.append(f"internal_error: the URL cannot be sent ({type(exc).__name__})")
    return blockers


def _store(call: Call, spec: ToolSpec, record_spec: ToolSpec, validated: Validated) -> int:
    """Store what the record tool executes (these validated, normalised arguments); the TTL (s)."""
    host = call.host
    ttl = _ttl_s(record_spec.row)
    now = host.clock.time()
    try:
        host.preview_store().put(
            StoredPreview(
                f"{host.api}/{record_spec.name}",
                call.actor.id,
                validated.fp,
                spec.intent,
                validated.args,
                now,
                now + ttl,
            )
        )
    except Exception as exc:  # noqa: BLE001 - any store outage: no preview_id to execute
        raise Halt(
            "preview",
            make_error(
                "receipt_store_unavailable",
                f"{call.tool}: the preview store could not keep this preview ({type(exc).__name__}), so "
                f"{record_spec.name} could not execute it.",
                details={"store": type(host.receipts).__name__},
            ),
        ) from None
    call.emit("preview", "stored", ttl_s=ttl)
    return ttl


def preview(call: Call, spec: ToolSpec, validated: Validated) -> CallResult:
    """The preview's `CallResult` (see the module docstring); raises `Halt`."""
    host, row, built = call.host, spec.row, validated.built
    record_tool = _record_tool(spec)
    record_spec = host.specs.get(record_tool)
    shown = display(row, built)
    result: dict[str, Any] = {
        "preview_id": validated.fp,
        "request": shown if record_spec is None else key_place_shown(shown, record_spec.row, record_tool),
        "effect": _previewed_effect(host, row),
        "side_effects": f"Sends {row.method.upper()} {row.path}"
        + (f" ({row.operation_id})." if row.operation_id else "."),
        "approval_required": _record_needs_approval(call, row, validated),
        "record_tool": record_tool,
    }
    blockers = _blockers(host, row, built, record_tool)
    if blockers:
        result["cannot_send"] = blockers
    if record_spec is not None and record_spec.row.executes_preview:
        result["expires_in_s"] = _store(call, spec, record_spec, validated)
    call.emit("http", "skip", reason="preview")
    call.emit("result", "ok")
    return CallResult(call.tool, True, result=result, fingerprint=call.fp, call_id=call.call_id)
