"""Step 4, approval: a record row with ``approval: required`` runs only with a human's approval of
exactly this request; checked here (`check`), spent only when the request is about to be sent
(`spend`, called by the runner after the idempotency step).

A row with an approval condition (``approval_when``, `toolgen.policy.conditions`) asks for the approval
only when the condition holds on the call's canonical arguments (`Validated.args`: the values the
request is built from, whatever spelling the caller used) and its caller, or cannot be evaluated
(fail closed); audited as ``approval`` ``ask`` or ``allow`` with the rule ``/approval_when``. A
condition the runtime cannot compile (a hand-edited table) asks always.

`check` input: `Call` (its fingerprint set), `ToolSpec`, `Validated`, the caller's `Approval`
(or None). Output: `Grant`. Errors (`Halt` at step ``approval``): ``approval_required`` (none
given; in ``approvals="issued"`` mode also a bare ``preview_id``, or an ``approval_id`` this runtime
did not issue for this record tool and actor, or expired), ``approval_mismatch`` (the approval's
``preview_id`` is not this request's fingerprint, or the issued approval is another preview's),
``receipt_store_unavailable`` (the approval store). An approval never grants a scope: permission
was checked before.

`spend` input: `Call`, `Grant`, the `Hold` of the idempotency step. It binds the approval to this
action (the idempotency key, else this single call) in the receipt store (`ReceiptStore.spend`)
for as long as it can be presented, records the spend on the `Hold` (given back with
`Hold.unspend` when nothing was sent) and audits ``approval`` ``allow`` with the approver. Errors
(`Halt` at step ``approval``, the receipt settled first): ``approval_used``,
``receipt_store_unavailable``.
"""

from __future__ import annotations

from typing import Any

from ..call.toolspec import ToolSpec
from ..calls import Approval
from ..errors import ToolError, make_error
from ..stores import spend_digest
from ..stores.approvals import approval_key, approval_scope, check_issued, issue_next_step
from .approval_condition import needs_approval
from .state import Call, Grant, Halt, Hold, Validated

__all__ = ["RULE", "check", "spend"]

#: the policy member this step enforces (`Call.decide`'s rule)
RULE = "/approval"


def _preview_tool(spec: ToolSpec) -> str:
    """Policy: the row's ``pair`` (its preview tool), else ``preview_<intent>``."""
    return spec.row.pair or "preview_" + spec.intent


def _missing(
    call: Call,
    spec: ToolSpec,
    preview_id: str | None,
    approval: Approval | None,
    issued: bool,
    preview_tool: Any,
) -> ToolError | None:
    """``approval_required`` when no approval (in issued mode: no ``approval_id``) was given."""
    tool, host = call.tool, call.host
    if issued and preview_id is not None and (approval is None or not approval.approval_id):
        return make_error(
            "approval_required",
            f"{tool} needs a human approval of preview {preview_id[:24]}… issued by this runtime"
            + (": a preview_id alone is not an approval here." if approval is not None else "."),
            details={"preview_tool": preview_tool, "preview_id": preview_id, "approvals": "issued"},
            next_step=issue_next_step(host.api, tool, preview_id, call.actor.id),
        )
    if approval is None and preview_id is not None:
        return make_error(
            "approval_required",
            f"{tool} needs a human approval of preview {preview_id[:24]}….",
            details={"preview_tool": preview_tool, "preview_id": preview_id},
            next_step="Show the previewed request to a human, get this preview_id approved, then call "
            "again with the approval.",
        )
    if approval is None:
        return make_error(
            "approval_required",
            f"{tool} needs a human approval of its preview: call {preview_tool} with the same "
            "arguments and pass the approved preview_id.",
            details={"preview_tool": preview_tool},
            next_step=f"Call {preview_tool} with these arguments (without {spec.key_arg or 'the key'}), "
            "get its preview_id approved, then call again with the approval.",
        )
    return None


def check(call: Call, spec: ToolSpec, validated: Validated, approval: Approval | None) -> Grant:
    """The approval step's `Grant` (see the module docstring); raises `Halt`."""
    preview_tool = _preview_tool(spec)
    if not needs_approval(call, spec, validated):
        return Grant(False, approval, None, preview_tool)
    issued = call.host.approvals == "issued"
    missing = _missing(call, spec, validated.preview_id, approval, issued, preview_tool)
    if missing is not None:
        raise Halt("approval", missing, rule=RULE, decision="ask")
    assert approval is not None  # _missing refuses a call without one
    if approval.preview_id != validated.fp:
        raise Halt(
            "approval",
            rule=RULE,
            error=make_error(
                "approval_mismatch",
                f"The approval was given for preview {str(approval.preview_id)[:20]}…, not for this request.",
                details={"preview_tool": preview_tool, "approved_preview_id": str(approval.preview_id)[:80]},
            ),
        )
    if not issued:
        return Grant(True, approval, None, preview_tool)
    try:
        recorded, until = _issued(call, spec, approval, validated.fp)
    except ToolError as exc:
        asked = exc.code == "approval_required"
        raise Halt("approval", exc, rule=RULE, decision="ask" if asked else "deny") from None
    return Grant(True, recorded, until, preview_tool)


def _issued(call: Call, spec: ToolSpec, approval: Approval, fp: str) -> tuple[Approval, float]:
    """The issued approval `approval.approval_id` of `spec` for the request `call.fp` made by the
    actor, as an `Approval` carrying the approver the runtime recorded (never the caller's word),
    and its expiry (Unix seconds); `fp` is the call's fingerprint. Raises `ToolError`: ``approval_required`` (no such approval
    issued for this record tool and actor, or expired), ``approval_mismatch`` (issued for another
    preview), ``receipt_store_unavailable``."""
    host, tool, actor_id = call.host, spec.name, call.actor.id
    approval_id = str(approval.approval_id or "")
    try:
        record = host.preview_store().get(approval_scope(host.api, tool), actor_id, approval_key(approval_id))
    except (ValueError, TypeError, KeyError):  # an entry that does not decode is no approval
        record = None
    except Exception as exc:  # noqa: BLE001 - any store outage: nothing is sent
        raise make_error(
            "receipt_store_unavailable",
            f"{tool}: the approval store could not be read ({type(exc).__name__}); nothing was sent.",
            details={"store": type(host.receipts).__name__},
        ) from None
    approved_by = check_issued(
        record, api=host.api, tool=tool, intent=spec.intent, fp=fp, actor_id=actor_id, now=host.clock.time()
    )
    assert record is not None  # check_issued refuses a missing record
    return Approval(fp, approved_by=approved_by, approval_id=approval_id), record.expires_at


def spend(call: Call, grant: Grant, hold: Hold) -> None:
    """Spend the granted approval on this action (see the module docstring); raises `Halt`."""
    approval = grant.approval
    if not grant.needed or approval is None:
        return
    try:
        hold.spent = _spend(call, approval, hold, grant)
    except ToolError as exc:
        hold.let_go()
        raise Halt("approval", exc, rule=RULE if exc.code == "approval_used" else None) from None
    call.decide("approval", "allow", RULE, approved_by=approval.approved_by)


def _spend(call: Call, approval: Approval, hold: Hold, grant: Grant) -> tuple[str, str, str] | None:
    """Spend `approval` on this action (its idempotency key, else this single call) in the receipt
    store (`ReceiptStore.spend`), until it can no longer be presented (`grant.until`: an issued
    approval's expiry; ``None``, a client approval, which can be presented at any time: kept
    forever). Returns ``(scope, digest, action)`` when this call spent it (given back with
    `Hold.unspend` when nothing was sent), ``None`` when the same action had spent it before (a
    retry of that key). A fresh receipt (`hold.decision` ``new``): no earlier call of the key is
    pending, unknown or stored; an earlier call that spent the approval on the key was then
    answered and its receipt forgotten (purged, or Redis ``completed_ttl``), since a call the API
    refused gives its approval back: the approval was used. Raises `ToolError`: ``approval_used``
    (spent on another action, or on this key by a call whose receipt the store forgot),
    ``receipt_store_unavailable`` (nothing sent)."""
    host, tool, key = call.host, call.tool, hold.key
    fresh = hold.decision == "new"
    token = str(approval.approval_id or approval.preview_id)
    action = "action:" + (f"key:{key}" if key is not None else f"call:{call.call_id}")
    scope = approval_scope(host.api, tool)
    digest = spend_digest(scope, token)
    try:
        bound = host.receipts.spend(scope, digest, action, call.actor.id, grant.until)
    except Exception as exc:  # noqa: BLE001 - any store outage: refuse before sending anything
        raise make_error(
            "receipt_store_unavailable",
            f"{tool}: the receipt store could not record the approval "
            f"({type(exc).__name__}); nothing was sent.",
            details={"store": type(host.receipts).__name__},
        ) from None
    if bound is None:
        return scope, digest, action
    if bound != action or fresh:
        raise make_error(
            "approval_used",
            f"The approval of {str(approval.preview_id)[:20]}… was already used "
            + ("by an earlier call with this key." if fresh and bound == action else "for another action."),
            details={"preview_tool": grant.preview_tool},
            next_step=f"Call {grant.preview_tool} again and get a new approval for this action.",
        )
    return None
