"""Step 9, limits: what the row's ``limits`` let the call send (docs/runtime.md, "Limits").

`acquire` input: `Call`, `ToolSpec`, `Validated`, `Budget`, `Hold`; called by the runner right
before the first attempt is sent (after the approval was spent), so only a request that is sent
counts. Output: the `Taken` entries (`toolgen.runtime.stores.LimitTake`), counted in the receipt
store all or nothing (`ReceiptStore.take`, atomic across the workers sharing the store). Errors
(`Halt` at step ``limits``; nothing sent, the receipt let go, a spent approval given back so the
call can be made again with it): ``rate_limited`` (``details.retry_after`` seconds, null when the
call could never fit, ``details.limit``, ``details.status`` 429), ``receipt_store_unavailable``.

`release` input: `Call`, `Taken`, once the call that sent is over: it gives back the concurrent
slots only (a calls or sum entry counts until its window ends). Nothing runs between `acquire` and
the first attempt, so a call that counted has sent.

Buckets: ``<api>/<tool>#limit:<digest>`` for ``per: tool``, that plus ``:actor:<actor id>`` for
``per: actor``, ``<api>#limit:<digest>`` for ``per: api`` (`toolgen.policy.limits.Limit.digest`).
A concurrent slot counts until the call's lease ends (its deadline, one more attempt and
`LEASE_MARGIN_MS`), so a worker killed mid-call frees it then.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ...policy.limits import Limit
from ..call.toolspec import ToolSpec
from ..errors import make_error
from ..stores import LimitTake
from .idempotency import LEASE_MARGIN_MS
from .state import Budget, Call, Halt, Hold, Validated

__all__ = ["Taken", "acquire", "release"]


@dataclass(frozen=True)
class Taken:
    """The entries a call counted (`takes`, in the row's limit order) and which of them are
    concurrent slots (`slots`: given back when the call ends)."""

    takes: tuple[LimitTake, ...] = ()
    slots: tuple[LimitTake, ...] = ()


def _bucket(call: Call, spec: ToolSpec, limit: Limit) -> str:
    api = call.host.api
    if limit.per == "api":
        return f"{api}#limit:{limit.digest}"
    bucket = f"{api}/{spec.name}#limit:{limit.digest}"
    return bucket + f":actor:{call.actor.id}" if limit.per == "actor" else bucket


def _cost(spec: ToolSpec, validated: Validated, limit: Limit) -> float:
    """1 for a call or a slot; the summed argument's canonical value for a sum (a negative value
    counts 0: it adds nothing toward the most). Raises `Halt` ``invalid_arguments`` when the value is
    not a finite double (the build requires a required numeric argument; a stored preview could
    still lack it; an integer beyond 1.8e308, of either sign, has no double)."""
    if limit.kind != "sum":
        return 1.0
    value: Any = validated.args.get(str(limit.sum_arg))
    try:
        cost = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
    except OverflowError:
        cost = math.nan
    if not math.isfinite(cost):
        raise Halt(
            "limits",
            make_error(
                "invalid_arguments",
                f"{spec.name}: the limit sums argument {limit.sum_arg!r}, which is not a "
                "finite number here; nothing was sent.",
                details={"pointer": f"/{limit.sum_arg}"},
            ),
        )
    return max(0.0, cost)


def _takes(call: Call, spec: ToolSpec, validated: Validated, budget: Budget) -> Taken:
    lease_s = (budget.deadline_ms + budget.timeout_ms + LEASE_MARGIN_MS) / 1000.0
    takes: list[LimitTake] = []
    slots: list[LimitTake] = []
    for index, limit in enumerate(spec.row.limits):
        keep = lease_s if limit.kind == "concurrent" else float(limit.window_s or 0)
        take = LimitTake(
            _bucket(call, spec, limit),
            f"{call.call_id}:{spec.name}:{index}",
            _cost(spec, validated, limit),
            float(limit.max),
            keep,
        )
        takes.append(take)
        if limit.kind == "concurrent":
            slots.append(take)
    return Taken(tuple(takes), tuple(slots))


def acquire(call: Call, spec: ToolSpec, validated: Validated, budget: Budget, hold: Hold) -> Taken:
    """Count the call in its limits' buckets (see the module docstring); raises `Halt`."""
    if not spec.row.limits:
        return Taken()
    taken = _takes(call, spec, validated, budget)
    try:
        refused = call.host.receipts.take(taken.takes)
    except Exception as exc:  # noqa: BLE001 - any store outage: nothing is sent
        _give_back(hold)
        raise Halt(
            "limits",
            make_error(
                "receipt_store_unavailable",
                f"{spec.name}: the receipt store could not count the call against its "
                f"limits ({type(exc).__name__}); nothing was sent.",
                details={"store": type(call.host.receipts).__name__},
            ),
        ) from None
    if refused is None:
        return taken
    index, wait = refused
    limit = spec.row.limits[index]
    retry_after = None if math.isinf(wait) else max(0.001, round(wait, 3))
    _give_back(hold)
    raise Halt(
        "limits",
        rule=f"/limits/{index}",
        decision="limit",
        error=make_error(
            "rate_limited",
            f"{spec.name}: over its limit ({limit.describe()}); nothing was sent"
            + ("." if retry_after is not None else ": this call alone is over the limit."),
            retryable=retry_after is not None,
            details={
                "retry_after": retry_after,
                "limit": limit.to_json(),
                "status": 429,
                "approval_kept": hold.spent is not None,
            },
            next_step=(
                f"Wait {retry_after} s, then call again with the same arguments (an approval given is kept)."
                if retry_after is not None
                else f"Lower {limit.sum_arg} below {limit.max}; do not retry as is."
            ),
        ),
    )


def _give_back(hold: Hold) -> None:
    """Nothing was sent: the approval spent on this call is given back and the receipt let go."""
    hold.unspend()
    hold.let_go()


def release(call: Call, taken: Taken) -> None:
    """Give back the concurrent slots of a call that ended (see the module docstring). A store
    failure is audited, never raised (a slot not given back expires with the call's lease)."""
    if taken.slots:
        call.store("give", taken.slots)
