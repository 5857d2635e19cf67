"""Step 8, idempotency: the receipt of a record call's idempotency key (docs/runtime.md
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

Key spaces: a composite's write step sends `step_key` (``tgs-`` and a digest of the composite
record tool, the record key and the step id), a form no caller's key may take (`reserved`: a
single record tool refuses a key starting with ``tgs-``, any case), so no key a caller chooses
reaches the API, or the receipt store, as a step's key. Every write step holds a receipt under its
step key, also when its operation takes no idempotency key (a receipt-only key, never sent): a
resumed record replays a completed step and never re-sends one whose outcome is unknown to an API
that does not deduplicate the key (docs/composites.md, "Step receipts").

Errors (`Halt`): at step ``validate``: ``invalid_arguments`` (a blank key, a key in the reserved
form); at step
``idempotency``: ``receipt_store_unavailable`` (nothing sent), ``idempotency_conflict``,
``idempotency_in_progress``, ``result_unknown`` (an interrupted earlier call, not re-sent).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ..call.arguments import invalid_argument, key_text_problem
from ..call.response_body import scrub
from ..call.shaping import redact
from ..call.toolspec import ToolSpec
from ..calls import CallResult
from ..errors import make_error
from ..stores import Receipt
from .outcome import unknown_error, unreadable_warnings, withhold_excerpt
from .state import Budget, Call, Halt, Hold, Validated

__all__ = [
    "LEASE_MARGIN_MS",
    "STEP_KEY_PREFIX",
    "begin",
    "receipt_decision",
    "reserved",
    "reshaped",
    "step_key",
    "step_key_length",
]

#: Added to a call's deadline to form the lease its pending receipt stores (milliseconds): the
#: window in which another caller treats the receipt as in flight.
LEASE_MARGIN_MS = 2000


#: The prefix of a composite step's idempotency key; a caller's key may not start with it (any case).
STEP_KEY_PREFIX = "tgs-"
#: Hex digits of a step key's digest: 32 (128 bits; the key is 36 characters, a UUID's length),
#: fewer down to `_MIN_DIGEST` when the step operation's key parameter has a shorter ``maxLength``.
_DIGEST = 32
_MIN_DIGEST = 16


def reserved(key: str) -> bool:
    """Whether `key` has the form reserved for composite step keys (starts with ``tgs-``, any case)."""
    return key[: len(STEP_KEY_PREFIX)].lower() == STEP_KEY_PREFIX


def step_key_length(max_length: Any) -> int:
    """The length of a step key under the step operation's key ``maxLength`` (None: none): 36, or
    ``maxLength`` when shorter, never below 20 (a shorter ``maxLength`` refuses the step's key at
    validation, naming the step)."""
    full = len(STEP_KEY_PREFIX) + _DIGEST
    if not isinstance(max_length, int) or isinstance(max_length, bool):
        return full
    return max(len(STEP_KEY_PREFIX) + _MIN_DIGEST, min(full, max_length))


def step_key(
    record_tool: str, record_key: str, step_id: str, length: int = len(STEP_KEY_PREFIX) + _DIGEST
) -> str:
    """The idempotency key of write step `step_id` of composite `record_tool` called with
    `record_key`: ``tgs-`` + the first hex digits of SHA-256 over the JSON array ``[record_tool,
    record_key, step_id]``, `length` characters in all (`step_key_length`). Deterministic, so a
    resumed record sends each step's key again; no caller's key can equal it (`reserved`)."""
    digest = hashlib.sha256(
        json.dumps([record_tool, record_key, step_id], ensure_ascii=False).encode("utf-8", "surrogatepass")
    ).hexdigest()
    return STEP_KEY_PREFIX + digest[: max(_MIN_DIGEST, length - len(STEP_KEY_PREFIX))]


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
    out = withhold_excerpt(redact(stored, tree))  # an unreadable body's excerpt is text: none of it is shown
    for key in ("result", "items"):
        if isinstance(out.get(key), list):
            out[key] = [redact(item, tree) for item in out[key]]
    return out


def receipt_decision(existing: Receipt, fp: str, honoured: bool, fallback_lease_ms: int, now: float) -> str:
    """replay | conflict | in_progress | unknown | resend for an existing receipt at `now` (Unix
    seconds, the host's clock). A ``pending``
    receipt is in flight for the lease its owner stored (`Receipt.in_flight`), whatever this
    caller's deadline; after it, or once ``unknown``, the write is re-sent only to an API that
    deduplicates the key."""
    if existing.fingerprint != fp:
        return "conflict"
    if existing.state == "completed":
        return "replay"
    if existing.in_flight(now, fallback_lease_ms):
        return "in_progress"
    return "resend" if honoured else "unknown"


def _key(call: Call, spec: ToolSpec, validated: Validated, step_key: str | None) -> str | None:
    """The call's idempotency key (None: no receipt): a composite write step's `step_key` (whether
    or not its operation takes a key), else the record row's key argument. Raises `Halt`
    ``invalid_arguments`` for a blank one, and for a caller's key in the reserved form."""
    if step_key is not None:
        return step_key
    idem_arg = spec.key_arg
    if not idem_arg:
        return None
    value = validated.args.get(idem_arg)
    key = None if value is None else str(value)
    if key is not None and not key.strip():
        raise Halt("validate", invalid_argument((str(idem_arg),), "an idempotency key may not be blank"))
    if key is not None and (problem := key_text_problem(key)) is not None:
        raise Halt(
            "validate", invalid_argument((str(idem_arg),), f"an idempotency key names a receipt: {problem}")
        )
    if key is not None and reserved(key):
        raise Halt(
            "validate",
            invalid_argument(
                (str(idem_arg),),
                f"an idempotency key may not start with {STEP_KEY_PREFIX!r} (any case): that form is "
                "reserved for the keys of composite tools' write steps; choose another key (e.g. a UUID)",
            ),
        )
    return key


def begin(
    call: Call, spec: ToolSpec, validated: Validated, budget: Budget, *, step_key: str | None = None
) -> Hold | CallResult:
    """The call's `Hold`, or a replay (see the module docstring); `step_key`: the call is a
    composite's write step, whose receipt is held under that key (`step_key`) even when its
    operation takes no key. Raises `Halt`."""
    host, tool = call.host, call.tool
    hold = Hold(
        call,
        f"{host.api}/{tool}",
        _key(call, spec, validated, step_key),
        "new",
        spec.key_honoured and host.resend_unknown,
        spec.key_forwarded,
    )
    if hold.key is None:
        return hold
    # the owner's worst case: its deadline, plus one socket read that started just before it
    lease_ms = budget.deadline_ms + budget.timeout_ms + LEASE_MARGIN_MS
    try:
        existing = host.receipts.begin(hold.scope, hold.key, validated.fp, call.actor.id, lease_ms)
    except Exception as exc:  # noqa: BLE001 - any store outage (Redis down, SQLite locked): nothing sent yet
        raise Halt(
            "idempotency",
            make_error(
                "receipt_store_unavailable",
                f"{tool}: the receipt store could not record the idempotency key ({type(exc).__name__}); "
                "the request was not sent.",
                details={"store": type(host.receipts).__name__},
            ),
        ) from None
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


def _existing(
    call: Call, spec: ToolSpec, validated: Validated, hold: Hold, existing: Receipt, budget: Budget
) -> str:
    """``replay`` or ``resend`` for an existing receipt of the key; raises `Halt` for the others."""
    tool, key, idem_arg = call.tool, hold.key, spec.key_arg
    decision = receipt_decision(
        existing,
        validated.fp,
        hold.honoured,
        budget.row_deadline_ms + LEASE_MARGIN_MS,
        call.host.clock.time(),
    )
    if decision == "conflict":
        raise Halt(
            "idempotency",
            make_error(
                "idempotency_conflict",
                f"The key {idem_arg}={key!r} was already used by {tool} with a different request.",
                details={"key_arg": idem_arg, "pointer": "/" + str(idem_arg)},
            ),
        )
    if decision == "in_progress":
        raise Halt(
            "idempotency",
            make_error(
                "idempotency_in_progress",
                f"A call of {tool} with {idem_arg}={key!r} is still in flight.",
                details={"key_arg": idem_arg, "retry_after": 1.0},
            ),
        )
    if decision == "unknown":
        if existing.state == "pending":  # its owner is gone (lease over): say so in the store
            call.store("mark_unknown", hold.scope, key)
        raise Halt(
            "idempotency",
            unknown_error(
                spec,
                f"An earlier call of {tool} with {idem_arg}={key!r} was interrupted; whether it "
                "took effect is unknown, and this API is not declared to deduplicate the key, so "
                "it is not re-sent.",
                honoured=False,
                details={"key_arg": idem_arg, "receipt_state": existing.state},
            ),
        )
    return decision


def _replay(call: Call, spec: ToolSpec, hold: Hold, existing: Receipt) -> CallResult:
    call.emit("idempotency", "replay", original_actor=existing.actor)
    call.emit("result", "ok", replayed=True)
    result = scrub(reshaped(spec, existing.result), call.secret_values)
    return CallResult(
        call.tool,
        True,
        result=result,
        replayed=True,
        fingerprint=call.fp,
        status=existing.status,
        call_id=call.call_id,
        idempotency_key=hold.key,
        request=call.shown,
        warnings=unreadable_warnings(spec, result),
    )
