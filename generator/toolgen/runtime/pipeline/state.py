"""The state one call carries through the steps, and how a step stops the call.

- `Call`: who calls which tool, the call id joining its audit events, and what the steps learned
  that every later failure must respect: the fingerprint (`fp`, once the request is built), the
  secrets the call used (`secret_values`, scrubbed from every error and audit detail) and the
  request a record executing a stored preview shows (`shown`). `emit` audits a decision, `fail`
  turns a `ToolError` into the failed `CallResult` (scrubbed, audited), `store` updates the
  receipt store after the request went out (a store failure is audited, never raised).
- `Halt`: raised by a step to end the call with an error; the runner (`run`) turns it into
  `Call.fail` at the step it names. Never leaves the call path.
- `Hold`: the idempotency receipt a call holds once it passed the idempotency step (or holds none):
  `settle` ends it exactly once (``complete``, ``release`` or ``mark_unknown``), `unspend` gives
  back an approval the call spent when nothing was sent.

The step results (`Validated`, `Budget`, `Grant`, `Exchange`) are frozen: a step reads what earlier
steps decided and cannot change it.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from ..audit import AuditEvent, Decision
from ..call.host import Host
from ..call.page_cursor import Page
from ..call.request import BuiltRequest
from ..call.response_body import scrub
from ..calls import Actor, Approval, CallResult
from ..errors import ToolError
from .effects import Outcome

__all__ = ["Budget", "Call", "Exchange", "Grant", "Halt", "Hold", "Validated"]


class Halt(Exception):
    """Ends the call at `step` with `error`; `rule` and `decision`: the policy member that refused
    and how (`Call.decide`), when a policy decided; `extra` goes to the `CallResult` (``attempts``,
    ``status``)."""

    def __init__(
        self,
        step: str,
        error: ToolError,
        *,
        rule: str | None = None,
        decision: Decision | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(step, error.code)
        self.step = step
        self.error = error
        self.rule = rule
        self.decision = decision
        self.extra = extra


@dataclass
class Call:
    """One call in progress (see the module docstring). `tool` is the name as the caller gave it
    (any value: an unknown tool is reported as given)."""

    host: Host
    tool: Any
    actor: Actor
    call_id: str = field(default_factory=lambda: secrets.token_hex(8))
    fp: str | None = None
    secret_values: list[str] = field(default_factory=list)
    shown: dict[str, Any] | None = None
    #: names of the exceptions the audit sink raised: once there is one, nothing is sent
    audit_failures: list[str] = field(default_factory=list)
    #: `toolgen.runtime.audit.digest_arguments` of the arguments as the caller gave them
    args_digest: str | None = None

    def emit(
        self, step: str, decision: str, code: str | None = None, *, rule: str | None = None, **detail: Any
    ) -> None:
        """Audit one event. A failing sink never breaks the call; it only stops a call that
        has not sent anything yet (nothing is sent unaudited: `run` checks before spending an approval and before sending)."""
        try:
            event = AuditEvent(
                self.host.clock.time(),
                self.call_id,
                self.tool,
                self.actor.id,
                step,
                decision,
                self.fp,
                code,
                scrub(detail, self.secret_values),
                rule,
                self.args_digest,
            )
            self.host.audit.emit(event)
        except Exception as exc:  # noqa: BLE001 - the sink's own failure
            self.audit_failures.append(type(exc).__name__)

    def decide(
        self, step: str, decision: Decision, rule: str, code: str | None = None, **detail: Any
    ) -> None:
        """Audit a policy decision: at `step`, `decision` (``allow``, ``deny``, ``ask``, ``limit``)
        by `rule`, the JSON pointer of the deciding member in the tool's policy row (``/permission``,
        ``/approval``, ``/limits/0``), with the error `code` when it refuses and small non-secret
        facts (scrubbed of the call's secrets). The actor, tool, arguments digest and fingerprint
        come from the call. Every policy decision goes through here (docs/runtime.md, "Audit")."""
        self.emit(step, decision, code, rule=rule, **detail)

    def store(self, op: str, *args: Any) -> None:
        """A receipt-store update after the request was sent: a store failure (Redis down, SQLite
        locked) must not hide the call's real outcome, so it is audited and the call goes on."""
        try:
            getattr(self.host.receipts, op)(*args)
        except Exception as exc:  # noqa: BLE001 - any store failure is reported, never raised
            self.emit(
                "idempotency",
                "store_failed",
                "receipt_store_unavailable",
                operation=op,
                error=type(exc).__name__,
            )

    def fail(
        self,
        step: str,
        error: ToolError,
        *,
        rule: str | None = None,
        decision: Decision | None = None,
        **extra: Any,
    ) -> CallResult:
        """The failed `CallResult` of `error` at `step`: message, details and next step scrubbed of
        the call's secrets, the shown request added, the denial (policy, validation) or failure
        and the result audited; a refusal by a policy member (`rule`) is audited as its decision
        (`decide`; `decision` default ``deny``)."""
        error.message = scrub(error.message, self.secret_values)
        error.details = scrub(error.details, self.secret_values)
        if error.next_step:
            error.next_step = scrub(error.next_step, self.secret_values)
        if self.shown is not None and "request" not in error.details:
            error.details["request"] = scrub(self.shown, self.secret_values)
        facts = {
            k: v for k, v in error.details.items() if k in ("pointer", "missing", "status", "retry_after")
        }
        if rule is not None:
            self.decide(step, decision or "deny", rule, error.code, **facts)
        else:
            self.emit(
                step, "deny" if error.category in ("policy", "validation") else "fail", error.code, **facts
            )
        self.emit("result", "error", error.code)
        return CallResult(self.tool, False, error=error, fingerprint=self.fp, call_id=self.call_id, **extra)


@dataclass(frozen=True)
class Validated:
    """What the validate step passes on: the canonical `args` (a stored preview's, for a record
    executing one), the built request, its fingerprint `fp` (also `Call.fp`), where a paginated call
    reads (`page`) and the ``preview_id`` a record executes (None otherwise)."""

    args: dict[str, Any]
    built: BuiltRequest
    fp: str
    page: Page
    preview_id: str | None


@dataclass(frozen=True)
class Grant:
    """The approval step's decision: whether the row needs an approval, the approval (an issued
    one as the runtime recorded it), until when it can be presented (Unix seconds; None: always)
    and the preview tool named in errors."""

    needed: bool
    approval: Approval | None
    until: float | None
    preview_tool: str


@dataclass(frozen=True)
class Budget:
    """The timeout step's bound: per-attempt `timeout_ms`, the call's `deadline_ms`, `max_attempts`,
    the row's own deadline (`row_deadline_ms`, without the caller's lowering: what another caller's
    receipt is judged by), and the monotonic `started`/`deadline` instants (seconds)."""

    timeout_ms: int
    deadline_ms: int
    max_attempts: int
    row_deadline_ms: int
    started: float
    deadline: float


@dataclass(frozen=True)
class Exchange:
    """What the send step observed: the last `outcome`, the number of `attempts`, whether a write
    may have been applied without the API saying so (`uncertain`), and the milliseconds since the
    call's budget started when the last attempt ended (`observed_ms`)."""

    outcome: Outcome
    attempts: int
    uncertain: bool
    observed_ms: int


@dataclass
class Hold:
    """The receipt this call holds from the idempotency step on (`key` None: no receipt) and the
    approval it spent (`spent`: ``(scope, digest, action)``). `decision` is the idempotency step's:
    ``new`` (this call created the receipt) or ``resend``. `honoured`: a re-send of the write is
    deduplicated by the API; `forwarded`: the key goes to the API."""

    call: Call
    scope: str
    key: str | None
    decision: str = "new"
    honoured: bool = False
    forwarded: bool = False
    open: bool = False
    spent: tuple[str, str, str] | None = None

    def settle(self, op: str, *extra: Any) -> None:
        """End the receipt with `op` (``complete`` with result and status, ``release``,
        ``mark_unknown``) the first time; later calls do nothing."""
        if self.open and self.key is not None:
            self.call.store(op, self.scope, self.key, *extra)
        self.open = False

    def let_go(self) -> None:
        """Settle a receipt when nothing was sent: released when this call created it, else
        ``unknown`` (an earlier call's write may have happened)."""
        self.settle("release" if self.decision == "new" else "mark_unknown")

    def unspend(self) -> None:
        """Give back the approval this call spent, when nothing was sent (``ReceiptStore.unspend``)."""
        if self.spent is not None:
            self.call.store("unspend", *self.spent)
