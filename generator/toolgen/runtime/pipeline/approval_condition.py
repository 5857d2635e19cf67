"""Step 4a, the approval condition: whether a record row asks for its approval on this call.

Input: `Call`, the record tool's `ToolSpec`, `Validated` (the canonical arguments). Output:
`needs_approval`, True for a record row with ``approval: required`` unless its condition
(``approval_when``, `toolgen.policy.conditions`) is false on the call's canonical arguments and caller: a
condition that fails to evaluate, or that the runtime cannot compile (a hand-edited table), asks
(fail closed). Audits ``approval`` ``ask`` (the condition holds or fails) or ``allow`` (it is false)
with the rule ``/approval_when`` (`Call.decide`). Read by the
approval step (`approval.check`) and by a preview (its ``approval_required``). Raises nothing.
"""

from __future__ import annotations

from ...policy.conditions import Condition, compile_condition
from ..call.toolspec import ToolSpec
from .state import Call, Validated

__all__ = ["RULE", "needs_approval"]

#: the policy member that decides whether an approval is asked (`Call.decide`'s rule)
RULE = "/approval_when"


def needs_approval(call: Call, spec: ToolSpec, validated: Validated, *, audit: bool = True) -> bool:
    """Policy: a record row with ``approval: required`` and, when it has an ``approval_when``, that
    condition holding (or failing) on this call (see the module docstring)."""
    row = spec.row
    if row.mode != "record" or row.approval != "required":
        return False
    if row.approval_when is None:
        return True
    condition = _condition(call, spec)
    required, why = (
        (True, "not compiled")
        if condition is None
        else condition.holds(validated.args, call.actor.id, sorted(call.actor.scopes))
    )
    if audit:
        call.decide("approval", "ask" if required else "allow", RULE, condition=why)
    return required


def _condition(call: Call, spec: ToolSpec) -> Condition | None:
    """The compiled ``approval_when`` of `spec`, typed by the arguments it is evaluated on: a record
    executing a stored preview sees the preview tool's arguments. None when it does not compile."""
    text = str(spec.row.approval_when)
    if text not in spec.conditions:
        schema = dict(spec.input_schema)
        pair = call.host.specs.get(spec.row.pair or "") if spec.row.executes_preview else None
        if pair is not None:
            schema = {
                **schema,
                "properties": {**pair.input_schema.get("properties", {}), **schema.get("properties", {})},
            }
        try:
            spec.conditions[text] = compile_condition(text, schema)
        except ValueError:
            spec.conditions[text] = None
    found: Condition | None = spec.conditions[text]
    return found
