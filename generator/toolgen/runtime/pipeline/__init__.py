"""The call path: every tool call runs through the same steps, in a fixed order no tool can skip.

One small module per step, over one call state (`state.Call`, plus the frozen results each step
passes on); `run.run` composes them. Each module's docstring gives its step's contract (input,
output, errors):

========================  =========================================================================
module                    step
========================  =========================================================================
``find``                  1. the tool by name (``unknown_tool``)
``permission``            3. the actor holds the row's ``permission`` (checked right after find, before
                          the arguments are read; `toolgen.runtime.identity.missing_scopes`)
``validate``              2a. the arguments: plain JSON, canonical, valid against ``inputSchema``
``canonical``             2b. the canonical request, its fingerprint, a stored preview's arguments
``approval``              4. a human's approval of exactly this request (checked; spent before sending)
``approval_condition``    4a. whether a record row's conditional approval (``approval_when``) asks
``timeout``               5. per-attempt timeout and overall deadline (`toolgen.runtime.call.deadline`)
``preview``               a preview tool's result (the request shown, not sent)
``idempotency``           6. the receipt of a record call's key (replay, conflict, in progress, resend)
``rate_limits``           6b. the row's limits, counted in the receipt store right before sending
``send``                  7. the wire request and the attempts, retries by ``retry`` (pure policy)
``outcome``               8a. what the last answer means (success, API error, result unknown)
``output``                8b. the result: projected, redacted, shaped, paged, within budget, checked
``composite``             a composite tool's path after find: its steps (each through the steps above)
                          by pattern, one deadline, one approval for a writing plan (docs/composites.md)
========================  =========================================================================

The path is sans IO (`effects`): it yields `effects.Send` and `effects.Sleep` (and a composite's
aggregate `effects.Gather`), a driver performs them (`Registry.call` with a sync httpx client,
`Registry.acall` with an async one, `toolgen.runtime.transport.drivers` over `toolgen.runtime.transport`)
and sends back an `effects.Outcome`. Every decision is an
`AuditEvent`. The steps read the registry through `toolgen.runtime.call.host.Host`, never import it.
"""

from __future__ import annotations

from .effects import MAX_RESPONSE_BYTES, Effect, Outcome, Pipeline, Send, Sleep
from .run import run

__all__ = ["MAX_RESPONSE_BYTES", "Effect", "Outcome", "Pipeline", "Send", "Sleep", "run"]
