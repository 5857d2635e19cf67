"""Step 6, idempotency: the receipt of a record call's idempotency key (docs/runtime.md
"Idempotency").

Input: `Call` (fingerprint set), `ToolSpec`, `Validated`, `Budget`. Output: the `Hold` the rest of
the call settles (no receipt without a key), or the replayed `CallResult` of a completed receipt
with the same fingerprint (its stored result shaped again with the current ``output.redact``,
`reshaped`). The receipt is begun with a lease of the call's deadline plus one attempt plus
`LEASE_MARGIN_MS`: another caller sees it in flight for that long. An existing receipt
(`receipt_decision`): another fingerprint is a conflict; a completed one is replayed; a pending one
inside its owner's lease is in progress; after it, or once ``unknown``, the write is re-sent only
to an API that deduplicates the forwarded key (policy ``idempotency.honoured_by_api``, and the
registry's ``resend_unknown``). Audits ``idempotency`` ``new``/``replay``/``resend``.

Errors (`Halt`): at step ``validate``: ``invalid_arguments`` (a blank key); at step
``idempotency``: ``receipt_store_unavailable`` (nothing sent), ``idempotency_conflict``,
``idempotency_in_progress``, ``result_unknown`` (an interrupted earlier call, not re-sent).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ..arguments import invalid_argument
from ..body import scrub
from ..calls import CallResult
from ..errors import make_error
from ..receipts import Receipt
from ..shaping import redact
from ..toolspec import ToolSpec
from .canonical import key_arg
from .outcome import unknown_error
from .state import Budget, Call, Halt, Hold, Validated

__all__ = ["LEASE_MARGIN_MS", "begin", "receipt_decision", "reshaped"]

#: Added to a call's deadline to form the lease its pending receipt stores (milliseconds): the
#: window in which another caller treats the receipt as in flight.
LEASE_MARGIN_MS = 2000


def _key_policy(row: Mapping[str, Any]) -> tuple[bool, bool]:
    """Policy: (the key is forwarded to the API, the API is declared to deduplicate it)."""
    idem = row.get("idempotency") if row.get("mode") == "record" else None
    forwarded = bool(idem and idem.get("in") in ("header", "query", "body"))
    return forwarded, forwarded and bool(idem and idem.get("honoured_by_api"))


def reshaped(spec: ToolSpec, stored: Any) -> Any:
    """A stored (replayed) result shaped again with the current policy's ``output.redact`` paths: a
    rebuild may have added one since the result was stored, and a replay must not show what a new
    call would hide. Applied at the top of the result and to each item of a wrapped array
    (``result``) or a page (``items``); redaction only hides, so applying it twice changes nothing.
    ``output.fields`` is not applied again: a stored result does not say which of its keys came
    from the API's body (``{"status": 204}`` did not)."""
    tree = spec.redact_tree
    if not tree or not isinstance(stored, dict):
        return stored
    out = redact(stored, tree)
    for key in ("result", "items"):
        if isinstance(out.get(key), list):
            out[key] = [redact(item, tree) for item in out[key]]
    return out


def receipt_decision(existing: Receipt, fp: str, honoured: bool, fallback_lease_ms: int) -> str:
    """replay | conflict | in_progress | unknown | resend for an existing receipt. A ``pending``
    receipt is in flight for the lease its owner stored (`Receipt.in_flight`), whatever this
    caller's deadline; after it, or once ``unknown``, the write is re-sent only to an API that
    deduplicates the key."""
    if existing.fingerprint != fp:
        return "conflict"
    if existing.state == "completed":
        return "replay"
    if existing.in_flight(time.time(), fallback_lease_ms):
        return "in_progress"
    return "resend" if honoured else "unknown"


def _key(call: Call, spec: ToolSpec, validated: Validated) -> str | None:
    """The call's idempotency key (None: no receipt). Raises `Halt` ``invalid_arguments`` for a blank one."""
    idem_arg = key_arg(spec.row)
    if not idem_arg:
        return None
    value = validated.args.get(idem_arg)
    key = None if value is None else str(value)
    if key is not None and not key.strip():
        raise Halt("validate", invalid_argument((str(idem_arg),), "an idempotency key may not be blank"))
    return key


def begin(call: Call, spec: ToolSpec, validated: Validated, budget: Budget) -> Hold | CallResult:
    """The call's `Hold`, or a replay (see the module docstring); raises `Halt`."""
    host, tool = call.host, call.tool
    forwarded, honoured = _key_policy(spec.row)
    hold = Hold(call, f"{host.api}/{tool}", _key(call, spec, validated), "new",
                honoured and host.resend_unknown, forwarded)
    if hold.key is None:
        return hold
    # the owner's worst case: its deadline, plus one socket read that started just before it
    lease_ms = budget.deadline_ms + budget.timeout_ms + LEASE_MARGIN_MS
    try:
        existing = host.receipts.begin(hold.scope, hold.key, validated.fp, call.actor.id, lease_ms)
    except Exception as exc:  # noqa: BLE001 - any store outage (Redis down, SQLite locked): nothing sent yet
        raise Halt("idempotency", make_error(
            "receipt_store_unavailable",
            f"{tool}: the receipt store could not record the idempotency key ({type(exc).__name__}); "
            "the request was not sent.",
            details={"store": type(host.receipts).__name__},
        )) from None
    if existing is None:
        call.emit("idempotency", "new")
    else:
        hold.decision = _existing(call, spec, validated, hold, existing, budget)
        if hold.decision == "replay":
            return _replay(call, spec, hold, existing)
        call.store("resume", hold.scope, hold.key, lease_ms)
        call.emit("idempotency", "resend", receipt_state=existing.state)
    hold.open = True
    return hold


def _existing(call: Call, spec: ToolSpec, validated: Validated, hold: Hold, existing: Receipt, budget: Budget) -> str:
    """``replay`` or ``resend`` for an existing receipt of the key; raises `Halt` for the others."""
    tool, key, idem_arg = call.tool, hold.key, key_arg(spec.row)
    decision = receipt_decision(existing, validated.fp, hold.honoured, budget.row_deadline_ms + LEASE_MARGIN_MS)
    if decision == "conflict":
        raise Halt("idempotency", make_error(
            "idempotency_conflict",
            f"The key {idem_arg}={key!r} was already used by {tool} with a different request.",
            details={"key_arg": idem_arg, "pointer": "/" + str(idem_arg)},
        ))
    if decision == "in_progress":
        raise Halt("idempotency", make_error(
            "idempotency_in_progress",
            f"A call of {tool} with {idem_arg}={key!r} is still in flight.",
            details={"key_arg": idem_arg, "retry_after": 1.0},
        ))
    if decision == "unknown":
        if existing.state == "pending":  # its owner is gone (lease over): say so in the store
            call.store("mark_unknown", hold.scope, key)
        raise Halt("idempotency", unknown_error(
            spec, f"An earlier call of {tool} with {idem_arg}={key!r} was interrupted; whether it "
                  "took effect is unknown, and this API is not declared to deduplicate the key, so "
                  "it is not re-sent.",
            honoured=False, details={"key_arg": idem_arg, "receipt_state": existing.state}))
    return decision


def _replay(call: Call, spec: ToolSpec, hold: Hold, existing: Receipt) -> CallResult:
    call.emit("idempotency", "replay", original_actor=existing.actor)
    call.emit("result", "ok", replayed=True)
    return CallResult(call.tool, True, result=scrub(reshaped(spec, existing.result), call.secret_values),
                      replayed=True, fingerprint=call.fp, status=existing.status, call_id=call.call_id,
                      idempotency_key=hold.key, request=call.shown)
