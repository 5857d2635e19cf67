"""Steps 7b and 10, the wire request and send: the HTTP attempts with bounded retries.

`wire_request` input: `Call`, `ToolSpec`, `Validated`, the credentials of the credential step
(`credential.credentials`; their echo forms already in `Call.secret_values`). Output: ``(wire,
http_request)``: the canonical request plus the credentials and nothing else, and the
`httpx.Request` that carries it, whose URL must be the previewed one. Errors (`Halt` at step
``request``): ``internal_error`` (the HTTP client refuses the request or would send another URL);
nothing was sent.

`attempts` input: `Call`, `ToolSpec`, the `httpx.Request`, `Budget`, `Hold`. A generator: it
yields a `Send` per attempt (its timeout: the attempt's, at most what is left of the deadline)
and a `Sleep` before each retry, and returns the `Exchange`. Retries follow `retry.RetryPolicy`;
no retry starts or sleeps past the deadline. What is known of a write only grows: once an attempt
may have reached the API without a definitive answer (`retry.may_have_applied`), only the API's
own success makes the outcome known again (`Exchange.uncertain`). Audits ``http`` ``send`` per
attempt and ``http`` ``retry`` per retry. Raises nothing.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import httpx

from ..call import credentials as creds
from ..call.request import BuiltRequest, transport_headers
from ..call.response_body import scrub
from ..call.toolspec import ToolSpec
from ..errors import make_error
from .effects import Effect, Outcome, Send, Sleep
from .retry import RetryPolicy, condition, may_have_applied, resend_safe
from .state import Budget, Call, Exchange, Halt, Hold, Validated

__all__ = ["attempts", "wire_request"]


def wire_request(
    call: Call, spec: ToolSpec, validated: Validated, injected: creds.Injected
) -> tuple[BuiltRequest, httpx.Request]:
    """The wire request and its `httpx.Request` (see the module docstring); raises `Halt`."""
    tool = call.tool
    wire = validated.built.with_credentials(injected)
    try:
        http_request = httpx.Request(
            wire.method, wire.url, headers=transport_headers(wire.headers), content=wire.content
        )
        sent_url = str(http_request.url)
    except Exception as exc:  # noqa: BLE001 - an unsendable URL or header: nothing was sent
        raise Halt(
            "request",
            make_error(
                "internal_error",
                f"{tool}: the HTTP client refused the request ({type(exc).__name__}); nothing was sent.",
            ),
        ) from None
    if sent_url != wire.url:
        raise Halt(
            "request",
            make_error(
                "internal_error",
                f"{tool}: the HTTP client would send another URL than the previewed one; nothing was sent.",
                details={
                    "previewed_url": wire.display()["url"],
                    "client_url": scrub(sent_url, call.secret_values),
                },
            ),
        )
    return wire, http_request


def attempts(
    call: Call, spec: ToolSpec, http_request: httpx.Request, budget: Budget, hold: Hold
) -> Generator[Effect, Any, Exchange]:
    """Send `http_request` until an outcome is final (see the module docstring)."""
    policy = RetryPolicy.of(spec.row, budget.max_attempts)
    mutating = spec.mutating
    uncertain = mutating and hold.decision == "resend"
    count = 0
    outcome: Outcome | None = None
    while True:
        count += 1
        remaining = budget.deadline - call.host.clock.monotonic()
        if remaining <= 0 and count > 1:
            break
        outcome = yield Send(http_request, max(0.001, min(budget.timeout_ms / 1000.0, remaining)))
        call.emit(
            "http",
            "send",
            attempt=count,
            status=outcome.status or None,
            failure=outcome.kind,
            elapsed_ms=round(outcome.elapsed_ms, 1),
        )
        if mutating and may_have_applied(outcome):
            uncertain = True
        cond = condition(outcome)
        if cond is None:
            break
        safe = resend_safe(outcome, cond, mutating=mutating, uncertain=uncertain, honoured=hold.honoured)
        if not policy.retries(outcome, cond, count, safe):
            break
        delay = policy.delay(outcome, cond, count, call.host.retry_random)
        if call.host.clock.monotonic() + delay >= budget.deadline:
            break
        call.emit("http", "retry", attempt=count, condition=cond, delay_ms=round(delay * 1000))
        yield Sleep(delay)
    assert outcome is not None
    return Exchange(outcome, count, uncertain, round((call.host.clock.monotonic() - budget.started) * 1000))
