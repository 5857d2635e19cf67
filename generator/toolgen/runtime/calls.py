"""What a call is made of and what it returns: `Actor`, `Approval`, `CallResult`, and the
canonical-request `fingerprint`.

Plain data shared by the registry (`registry.py`), the call path (`pipeline/`) and the servers; no
IO. Fingerprint (docs/generated-format.md): ``"sha256:" + hex(sha256(canonical_json({"intent":
intent, "request": canonical})))`` where `canonical` is `toolgen.runtime.call.request.BuiltRequest.canonical`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ToolError
from .identity import scope_set

__all__ = ["KNOWN_DIALECTS", "Actor", "Approval", "CallResult", "canonical_json", "fingerprint"]

#: The catalogs a caller's model may have seen (`Registry.call`'s `dialect`).
KNOWN_DIALECTS: tuple[str, ...] = ("openai", "anthropic", "gemini", "mcp")


@dataclass(frozen=True)
class Actor:
    """Who is calling: an id for audit and receipts, and the permission scopes the caller holds.

    `scopes` may be given as any iterable of scope names or as one OAuth scope string (names
    separated by spaces); either way it is stored as a frozenset of whole names (`scope_set`), so
    membership is never a substring test. Raises `TypeError` for a scope that is not a string.

    `token`: the caller's access token as it presented it (a JWT its authorization server signed,
    `toolgen.runtime.serving.access_tokens`), kept only for the request it came with: the subject token of an
    RFC 8693 token exchange (``per_caller: {via: exchange}``). Never shown (``repr``), compared,
    stored or audited; None for a caller without one."""

    id: str
    scopes: frozenset[str] = frozenset()
    token: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scopes", scope_set(self.scopes))

    @classmethod
    def of(cls, id: str, scopes: str | Iterable[str] = (), *, token: str | None = None) -> Actor:
        return cls(id, scope_set(scopes), token)


@dataclass(frozen=True)
class Approval:
    """A human's approval of one previewed action. `preview_id` is the ``preview_id`` returned by the
    preview tool; `approved_by` is recorded in the audit log. An approval never grants a scope.

    An approval is spent on one action: the first record call that uses it binds it to its
    idempotency key (or, without one, to that single call); retries with the same key may reuse it,
    any other action gets `approval_used`, for as long as the approval can be presented (an issued
    approval until its expiry, a client one forever), whatever the receipt store purges; a call that
    spent it and sent nothing gives it back (`ReceiptStore.spend`, docs/runtime.md "Spent
    approvals"). `approval_id` tells apart two approvals of identical arguments (default: the
    `preview_id`, i.e. one approval per previewed request)."""

    preview_id: str
    approved_by: str | None = None
    approval_id: str | None = None


@dataclass
class CallResult:
    """The outcome of one call.

    Success: `ok` true, `result` the shaped JSON object, `replayed` true when an idempotency receipt
    was replayed (no HTTP request was made). Failure: `ok` false and `error` set. `fingerprint` is
    the canonical-request fingerprint (``None`` if arguments were invalid); `status` the HTTP
    status (``None`` without a response); `attempts` the number of HTTP attempts; `warnings` e.g.
    output-schema mismatches in ``warn`` mode; `call_id` joins the call's audit events;
    `idempotency_key` the key of the receipt a record call completed or replayed; `request` the
    redacted request a record call that executes a stored preview sent (or replayed), as its preview
    showed it (``{"method", "url", "headers", "body"}``), so whoever approves sees what ran.
    """

    tool: str
    ok: bool
    result: dict[str, Any] | None = None
    error: ToolError | None = None
    replayed: bool = False
    fingerprint: str | None = None
    status: int | None = None
    attempts: int = 0
    warnings: list[str] = field(default_factory=list)
    call_id: str = ""
    idempotency_key: str | None = None
    request: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"ok": true, "tool", "result", "replayed"[, "warnings"][, "request"]}`` or ``{"ok": false,
        "tool", "error": {...}}`` (a record call executing a stored preview names the request in
        ``error.details.request``)."""
        if self.ok:
            out: dict[str, Any] = {
                "ok": True,
                "tool": self.tool,
                "result": self.result,
                "replayed": self.replayed,
            }
            if self.warnings:
                out["warnings"] = self.warnings
            if self.request is not None:
                out["request"] = self.request
            return out
        assert self.error is not None
        return {"ok": False, "tool": self.tool, **self.error.to_json()}


def canonical_json(value: Any) -> str:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(intent: str, canonical_request: Mapping[str, Any]) -> str:
    """The canonical-request fingerprint (also a preview's ``preview_id``): ``"sha256:<hex>"`` of
    the canonical JSON of ``{"intent": intent, "request": canonical_request}``, where
    `canonical_request` is a `BuiltRequest.canonical` (no credentials, no idempotency key)."""
    text = canonical_json({"intent": intent, "request": canonical_request})
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
