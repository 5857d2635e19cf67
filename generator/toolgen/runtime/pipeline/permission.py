"""Step 3, permission: the actor must hold every scope of the row's ``permission``.

The rule is `toolgen.runtime.identity.missing_scopes` (the one rule of tool listing, search and
the call path). It is checked right after find (`admit`), before the arguments are read: a tool
the actor may not use is refused before validation, so the refusal reveals nothing of its schema.
It is audited in the pipeline's order (after validate, `audit`).

Input: `Call`, the found `ToolSpec`. Output: nothing. Errors (`Halt` at step ``permission``):
``permission_denied`` (``details.missing``, ``details.required``).
"""

from __future__ import annotations

from ..call.toolspec import ToolSpec
from ..identity import permission_error, required_scopes
from .state import Call, Halt

__all__ = ["RULE", "admit", "audit"]

#: the policy member this step enforces (`Call.decide`'s rule)
RULE = "/permission"


def admit(call: Call, spec: ToolSpec) -> None:
    """Raise `Halt` ``permission_denied`` unless `call.actor` holds `spec`'s scopes."""
    error = permission_error(str(call.tool), spec.row, call.actor.id, call.actor.scopes)
    if error is not None:
        raise Halt("permission", error, rule=RULE)


def audit(call: Call, spec: ToolSpec) -> None:
    """Audit the permission held since `admit` (step ``permission``, ``allow``, the required scopes)."""
    call.decide("permission", "allow", RULE, required=required_scopes(spec.row))
