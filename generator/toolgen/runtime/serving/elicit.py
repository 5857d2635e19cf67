"""Approvals asked in the protocol: MCP 2026-07-28 multi round-trip requests for ``record_*`` calls.

With ``toolgen serve --approvals elicit`` (`build_server(..., elicit=True)`), an approval-gated
record call without an approval from a client that speaks MCP 2026-07-28 and declares form
elicitation is not refused ``approval_required``: it is answered with an ``input_required`` result
(MCP 2026-07-28, "Multi Round-Trip Requests") carrying

- one input request, ``"toolgen/approval"``: an ``elicitation/create`` form whose message is the
  exact request the record call will send (method, URL, redacted headers, body: what the preview
  showed, `Registry.approvable_request`), asking the human for ``approve`` (boolean) and optionally
  ``approved_by`` (their name), and
- a ``requestState``: `ApprovalState` (record tool, ``preview_id``, actor, a random nonce, expiry),
  sealed by the SDK's `RequestStateBoundary` with AES-256-GCM (integrity and confidentiality), bound
  to the request (tool name and a digest of its arguments, which hold the ``preview_id`` and the
  idempotency key), to the authenticated principal and to a lifetime of `STATE_TTL_S` seconds.

The client shows the form to its human and retries the same call with ``inputResponses`` and the
echoed ``requestState``. `approval_from_answer` then checks the state again (tool, ``preview_id``,
actor, expiry), spends its nonce once on the receipt store (``spend``: a replayed state is refused
``approval_used`` on every worker sharing the store), and on ``accept`` with ``approve: true``
issues an approval for exactly this record tool, preview and actor (`Registry.issue_approval`,
audited, one minute), with which the call executes exactly the previewed request. A declined,
cancelled or malformed answer sends nothing (``approval_required``). An altered, expired, foreign
(another principal or server) or non-string state never reaches this module: the boundary rejects it
(JSON-RPC ``-32602`` "Invalid or expired requestState").

The sealing key is derived from the runtime's cursor key (`CursorCodec.derive`, a fixed label), which
workers sharing a receipt store share, so a state minted by one worker is accepted by another.
Clients that speak only 2025-11-25, or that declare no form elicitation, keep the ``issued``
behaviour: ``approval_required``, with ``toolgen approve`` as the way to an approval.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass
from typing import Any

from ...shown_text import terminal_safe
from ..errors import ToolError, make_error
from ..stores.base import spend_digest
from .registry import Actor, Approval, CallResult, Registry

#: The input request's key in ``inputRequests`` / ``inputResponses``.
INPUT_KEY = "toolgen/approval"
#: Seconds a human has to answer (the sealed state's lifetime; also bounds the nonce's spend).
STATE_TTL_S = 300.0
#: Seconds the approval issued after an accepted answer stays presentable (it is used at once).
ISSUED_TTL_S = 60.0
#: The first protocol version with multi round-trip requests.
MRTR_VERSION = "2026-07-28"
#: Longest request text a form shows (characters, after escaping). A request that does not fit even
#: with its long strings elided is not asked about in the protocol (`shown_request`).
MAX_SHOWN = 8000
#: Strings longer than this (characters) are shown elided in the middle when the whole request does
#: not fit: the first `ELIDED_HEAD` and last `ELIDED_TAIL` characters, with the length and SHA-256.
ELIDE_OVER = 240
ELIDED_HEAD, ELIDED_TAIL = 160, 40
_STATE_KIND = "toolgen/approval-state/v1"
_KEY_LABEL = b"toolgen/request-state/v1"


def request_state_security(registry: Registry) -> Any:
    """The SDK's `RequestStateSecurity` (AES-256-GCM, `STATE_TTL_S`, principal-bound) under a
    secret derived from `registry`'s cursor key (`CursorCodec.derive`), so every worker sharing the
    cursor key accepts every other's states."""
    from mcp.server.request_state import RequestStateSecurity

    return RequestStateSecurity(keys=[registry.cursors.derive(_KEY_LABEL)], ttl=STATE_TTL_S)


@dataclass(frozen=True)
class ApprovalState:
    """What a ``requestState`` of an approval round holds (sealed by the SDK; plaintext here)."""

    tool: str
    preview_id: str
    actor: str
    nonce: str
    expires_at: float

    def to_text(self) -> str:
        return json.dumps(
            {
                "k": _STATE_KIND,
                "tool": self.tool,
                "preview_id": self.preview_id,
                "actor": self.actor,
                "nonce": self.nonce,
                "exp": self.expires_at,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_text(cls, text: str) -> ApprovalState | None:
        """The state in `text`, or None when it is not one this module minted."""
        try:
            data = json.loads(text)
            if data.get("k") != _STATE_KIND:
                return None
            return cls(
                str(data["tool"]),
                str(data["preview_id"]),
                str(data["actor"]),
                str(data["nonce"]),
                float(data["exp"]),
            )
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


def speaks_mrtr(ctx: Any) -> bool:
    """True when the request's client speaks MCP 2026-07-28 or later and declares form elicitation."""
    import mcp_types as types

    version = str(getattr(ctx, "protocol_version", "") or "")
    if version < MRTR_VERSION:
        return False
    session = getattr(ctx, "session", None)
    check = getattr(session, "check_client_capability", None)
    if check is None:
        return False
    try:
        return bool(check(types.ClientCapabilities(elicitation=types.ElicitationCapability())))
    except Exception:  # noqa: BLE001 - a client whose capabilities cannot be read gets the plain answer
        return False


def _string(text: str, elide: bool) -> str:
    """A string as a JSON string literal; elided (`elide`, longer than `ELIDE_OVER`) as its first and
    last characters in two literals with what was left out between them, outside any literal, so no
    value can imitate an elision: ``"head" … [N characters elided: M in all, sha256 HEX] … "tail"``."""
    if not elide or len(text) <= ELIDE_OVER:
        return json.dumps(text, ensure_ascii=False)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    left = len(text) - ELIDED_HEAD - ELIDED_TAIL
    return (
        f"{json.dumps(text[:ELIDED_HEAD], ensure_ascii=False)} … [{left} characters elided: {len(text)} in all, "
        f"sha256 {digest}] … {json.dumps(text[-ELIDED_TAIL:], ensure_ascii=False)}"
    )


def _json(value: Any, elide: bool, pad: str = "") -> str:
    """`value` as ``json.dumps(value, indent=2)`` writes it, every string through `_string`; member
    names are never elided. `value` is a request body or arguments, bounded in depth."""
    inner = pad + "  "
    if isinstance(value, dict) and value:
        members = (
            f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_json(v, elide, inner)}"
            for k, v in value.items()
        )
        return "{\n" + ",\n".join(members) + f"\n{pad}}}"
    if isinstance(value, list) and value:
        return "[\n" + ",\n".join(inner + _json(v, elide, inner) for v in value) + f"\n{pad}]"
    if isinstance(value, str):
        return _string(value, elide)
    return json.dumps(value, ensure_ascii=False)


def _one(request: dict[str, Any], elide: bool) -> str:
    headers = "\n".join(f"  {k}: {v}" for k, v in (request.get("headers") or {}).items())
    body = request.get("body")
    if isinstance(body, str):  # quoted as one literal: a text body cannot break a line or imitate the form's
        text: str | None = (
            f"body (text, {len(body)} characters, quoted as one JSON string):\n{_string(body, elide)}"
        )
    else:
        text = None if body is None else _json(body, elide)
    return (
        f"{request.get('method', '?')} {request.get('url', '?')}"
        + (f"\n{headers}" if headers else "")
        + (f"\n\n{text}" if text is not None else "")
    )


def _plan(request: dict[str, Any], elide: bool) -> str:
    steps = request.get("requests")
    if not isinstance(steps, list):
        return _one(request, elide)
    parts = []
    for n, step in enumerate(steps, 1):
        step = step if isinstance(step, dict) else {}
        head = f"{n}. step {step.get('step', '?')}"
        if isinstance(step.get("request"), dict):
            parts.append(f"{head}:\n{_one(step['request'], elide)}")
        else:
            parts.append(
                f"{head}, its request known after step {step.get('known_after', '?')}; "
                f"its arguments:\n{_json(step.get('arguments'), elide)}"
            )
    return "\n\n".join(parts) or "(no write)"


def shown_request(request: dict[str, Any]) -> str | None:
    """What the human reads: one request (method, URL, headers, body), or a composite's plan
    (`Registry.approvable_request`: ``{"requests": [...]}``), each write step in order, a later
    write with its arguments as far as they are known; every character that could reorder or hide
    text escaped (`toolgen.shown_text.terminal_safe`). A text body is one quoted JSON string, so it
    cannot break a line or imitate the form's own lines.

    Everything is shown: every step, every header, every member of a body with its value, at most
    `MAX_SHOWN` characters. When the whole request does not fit, every string longer than
    `ELIDE_OVER` characters is elided in the middle (`_string`: its first and last characters, the
    count left out, its length and SHA-256); member names, the method, URL and headers never are.
    None when even that does not fit: the form would hide part of what an approval covers, so no
    form is shown."""
    for elide in (False, True):
        text = terminal_safe(_plan(request, elide))
        if len(text) <= MAX_SHOWN:
            return text
    return None


def approval_input_required(registry: Registry, tool: str, arguments: dict[str, Any], actor: Actor) -> Any:
    """The ``input_required`` result asking a human to approve the request the record call `tool`
    with `arguments` would send for `actor`, or None when there is nothing to show (no
    ``preview_id`` argument, or the preview cannot be rebuilt) or the request does not fit the form
    (`shown_request`): the caller then answers the plain ``approval_required``, whose next step is
    ``toolgen approve``."""
    import mcp_types as types

    preview_id = arguments.get("preview_id")
    if not isinstance(preview_id, str):
        return None
    try:
        request = registry.approvable_request(tool, preview_id, actor.id)
    except ToolError:
        return None
    shown = shown_request(request)
    if shown is None:
        return None
    state = ApprovalState(
        tool, preview_id, actor.id, secrets.token_urlsafe(18), registry.clock.time() + STATE_TTL_S
    )
    what = "these requests, in order" if isinstance(request.get("requests"), list) else "this request"
    message = (
        f"Approve this write? {tool} will send exactly {what} (preview {terminal_safe(preview_id[:24])}…), once:"
        f"\n\n{shown}"
    )
    form = types.ElicitRequestFormParams(
        message=message,
        requested_schema={
            "type": "object",
            "properties": {
                "approve": {
                    "type": "boolean",
                    "title": "Approve",
                    "description": "Send this exact request once.",
                },
                "approved_by": {
                    "type": "string",
                    "title": "Your name",
                    "description": "Recorded with the approval.",
                    "maxLength": 255,
                },
            },
            "required": ["approve"],
        },
    )
    return types.InputRequiredResult(
        input_requests={INPUT_KEY: types.ElicitRequest(params=form)}, request_state=state.to_text()
    )


def _refusal(tool: str, code: str, message: str) -> CallResult:
    return CallResult(tool=tool, ok=False, error=make_error(code, message, retryable=False))


def approval_from_answer(
    registry: Registry, tool: str, arguments: dict[str, Any], actor: Actor, state_text: str, responses: Any
) -> Approval | CallResult:
    """The approval a human gave in answer to `approval_input_required`, or the refusal to send
    (a `CallResult` error): the state must be one this module minted for this tool, this
    ``preview_id`` and this actor, unexpired and never used before (its nonce is spent on the
    receipt store), and the answer an ``accept`` with ``approve: true``."""
    import mcp_types as types

    state = ApprovalState.from_text(state_text)
    if (
        state is None
        or state.tool != tool
        or state.actor != actor.id
        or state.preview_id != arguments.get("preview_id")
    ):
        return _refusal(tool, "approval_required", "The approval round does not match this call: ask again.")
    if registry.clock.time() >= state.expires_at:
        return _refusal(tool, "approval_required", "The approval round expired: ask again.")
    answer = (responses or {}).get(INPUT_KEY) if isinstance(responses, dict) else None
    if not isinstance(answer, types.ElicitResult):
        return _refusal(tool, "approval_required", "No answer to the approval request: nothing was sent.")
    scope = f"{registry.api}/{tool}#request-state"
    try:
        bound = registry.receipts.spend(
            scope, spend_digest(scope, state.nonce), "answered", actor.id, state.expires_at
        )
    except Exception:  # noqa: BLE001 - a store outage: refuse, nothing sent
        return _refusal(
            tool,
            "receipt_store_unavailable",
            "The receipt store could not record the approval round; nothing was sent.",
        )
    if bound is not None:
        return _refusal(tool, "approval_used", "This approval round was answered already; nothing was sent.")
    content = answer.content or {}
    if answer.action != "accept" or content.get("approve") is not True:
        return _refusal(
            tool, "approval_required", f"The human did not approve ({answer.action}); nothing was sent."
        )
    by = content.get("approved_by")
    approved_by = by.strip()[:255] if isinstance(by, str) and by.strip() else f"elicitation to {actor.id}"
    try:
        approval_id = registry.issue_approval(
            tool, state.preview_id, approved_by=approved_by, actor=actor.id, ttl_s=ISSUED_TTL_S
        )
    except ToolError as exc:
        return CallResult(tool=tool, ok=False, error=exc)
    return Approval(state.preview_id, approved_by=approved_by, approval_id=approval_id)
