"""Step 7a, credential: the credentials a request carries, each caller's own where the policy says so.

Input: `Call` (its actor; the host's `caller_credentials`), `ToolSpec`. A generator: for each
``auth`` entry with ``per_caller`` (`toolgen.runtime.call.caller_credentials`) it finds the caller's
own value — ``lookup``: the host's secret resolver, by the actor id; ``exchange``: the token this
caller's access token was exchanged for, from the cache, else it yields a `Send` of the RFC 8693
request to the token endpoint and reads the answer — then resolves every entry
(`toolgen.runtime.call.credentials.resolve`: a ``per_caller`` entry without the caller's own value uses
the shared secret only where its ``service_secret`` allows). Returns the `Injected` credentials;
their values, every echo form of them and the caller's own access token join `Call.secret_values`,
so no output, error or audit detail of the call holds them.

Each ``per_caller`` entry's decision is audited by `Call.decide` at step ``credential`` with rule
``/auth/<i>/per_caller``: ``allow`` with ``source`` (``exchange``, ``cache``, ``lookup`` or
``service``) and ``via``, or ``deny``. Errors (`Halt` at step ``credential``, nothing sent):
``missing_credential`` (the caller has none and the shared secret may not stand in, or no secret
at all), ``credential_unavailable`` (the token exchange failed, or the secret resolver raised).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from ...policy.format import AuthBinding
from ..call import credentials as creds
from ..call.toolspec import ToolSpec
from ..errors import ToolError, make_error
from .effects import Effect, Send
from .state import Call, Halt

__all__ = ["EXCHANGE_TIMEOUT_S", "credentials"]

#: Seconds a token exchange may take (the whole request to the token endpoint).
EXCHANGE_TIMEOUT_S = 10.0


def credentials(call: Call, spec: ToolSpec) -> Generator[Effect, Any, creds.Injected]:
    """The credentials of `spec`'s request for `call`'s actor (see the module docstring); raises `Halt`."""
    row = spec.row
    own: dict[int, str] = {}
    sources: dict[int, str] = {}
    if call.actor.token:
        call.secret_values.extend(creds.echo_forms([call.actor.token]))
    for index, entry in enumerate(row.auth):
        if entry.per_caller is None:
            continue
        value, source = yield from _own(call, entry, index)
        if value is not None:
            own[index], sources[index] = value, source
    try:
        injected = creds.resolve(
            row.auth,
            call.host.credentials,
            tool=str(call.tool),
            own=own,
            mutating=spec.mutating,
            caller=call.actor.id,
        )
    except ToolError as exc:
        rule = next(
            (f"/auth/{i}/per_caller" for i, e in enumerate(row.auth) if e.per_caller is not None), None
        )
        raise Halt("credential", exc, rule=rule) from None
    call.secret_values.extend(creds.echo_forms(injected.secret_values))
    for index, entry in enumerate(row.auth):
        if entry.per_caller is not None:
            source = sources.get(index, "service" if _used(injected, entry) else "none")
            if source != "none":
                call.decide(
                    "credential",
                    "allow",
                    f"/auth/{index}/per_caller",
                    scheme=entry.scheme,
                    via=entry.per_caller.via,
                    source=source,
                )
    return injected


def _used(injected: creds.Injected, entry: AuthBinding) -> bool:
    """Whether `entry`'s wire location carries a value in `injected` (the shared secret stood in)."""
    where = {"query": injected.query, "cookie": injected.cookies}.get(entry.location, injected.headers)
    return (entry.wire_name or "Authorization") in where


def _own(call: Call, entry: AuthBinding, index: int) -> Generator[Effect, Any, tuple[str | None, str]]:
    """The caller's own value for `entry` and where it came from, or (None, ``none``)."""
    per = entry.per_caller
    sources = call.host.caller_credentials
    if per is None or sources is None:
        return None, "none"
    if per.via == "lookup":
        resolver = sources.secrets
        try:
            value = resolver.get(call.actor.id, entry.secret) if resolver is not None else None
        except Exception as exc:  # noqa: BLE001 - a user-supplied resolver's failure: nothing is sent
            raise Halt(
                "credential",
                make_error(
                    "credential_unavailable",
                    f"{call.tool}: the caller secret resolver failed ({type(exc).__name__}); "
                    "nothing was sent.",
                    retryable=True,
                    details={"via": "lookup"},
                ),
                rule=f"/auth/{index}/per_caller",
            ) from None
        return (value, "lookup") if isinstance(value, str) and value else (None, "none")
    exchange, subject = sources.exchange, call.actor.token
    if exchange is None or not subject:
        return None, "none"
    cached = exchange.cached(call.actor.id, subject, per)
    if cached is not None:
        return cached, "cache"
    outcome = yield Send(exchange.request(subject, per), EXCHANGE_TIMEOUT_S)
    try:
        token = exchange.accept(call.actor.id, subject, per, outcome, tool=str(call.tool))
    except ToolError as exc:
        raise Halt("credential", exc, rule=f"/auth/{index}/per_caller") from None
    call.secret_values.extend(creds.echo_forms([token]))
    return token, "exchange"
