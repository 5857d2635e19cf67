"""Structured tool errors: one shape for every failure the runtime reports.

A `ToolError` is what a model (or a human at the shell) sees when a call does not succeed. It says
what went wrong (`code`, `category`), whether trying again can help (`retryable`), whether the
outcome of a write is known (`result_known`: ``False`` after a write timed out), machine-readable
`details` (e.g. the JSON pointer of a bad argument, `retry_after` seconds from a 429) and a one-line
`next_step`. Messages never contain secrets or raw tracebacks.

`from_http_response` maps an HTTP status plus an optional RFC 9457 ``application/problem+json``
body onto a `ToolError` (https://www.rfc-editor.org/rfc/rfc9457).
"""

from __future__ import annotations

import email.utils
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .clock import SYSTEM

Category = Literal["validation", "policy", "conflict", "not_found", "rate_limited", "dependency", "internal"]

#: Every error code the runtime emits, with its category and default retryability. docs/runtime.md
#: renders the same table.
ERROR_CODES: dict[str, tuple[Category, bool, str]] = {
    "unknown_tool": ("validation", False, "Call one of the listed tools."),
    "invalid_arguments": ("validation", False, "Fix the argument at details.pointer and call again."),
    "invalid_cursor": ("validation", False, "Pass a next_cursor returned by this tool, or omit cursor."),
    "permission_denied": ("policy", False, "Ask for an actor with the missing scopes; do not retry."),
    "approval_required": (
        "policy",
        False,
        "Call the preview tool, get a human to approve its preview_id, then call again with it.",
    ),
    "approval_mismatch": (
        "policy",
        False,
        "The approval is for other arguments: preview these exact arguments and get them approved.",
    ),
    "approval_used": (
        "policy",
        False,
        "That approval was spent on another action: preview again and get this action approved.",
    ),
    "preview_not_found": (
        "validation",
        False,
        (
            "No stored preview has this preview_id for this tool and actor: call the preview tool and pass the "
            "preview_id it returns."
        ),
    ),
    "preview_expired": (
        "validation",
        False,
        (
            "The preview expired: call the preview tool again with the same arguments (same preview_id), then "
            "record it."
        ),
    ),
    "preview_mismatch": (
        "policy",
        False,
        (
            "The stored preview no longer builds the previewed request (the store was changed or the tool's policy "
            "changed): preview again; nothing was sent."
        ),
    ),
    "preview_stale": (
        "conflict",
        False,
        (
            "A read the composite's writes depend on now gives another result than at preview time, so a write "
            "request differs from the previewed one: preview again and get the new plan approved; nothing was "
            "written."
        ),
    ),
    "composite_reference_missing": (
        "dependency",
        False,
        (
            "An earlier step's answer lacks the member a later step's argument reads (details.step, "
            "details.pointer): the later step was not run; read the earlier step's result."
        ),
    ),
    "idempotency_conflict": (
        "conflict",
        False,
        "This key was used with different arguments: use a fresh key for a new action.",
    ),
    "idempotency_in_progress": ("conflict", True, "Another call with this key is in flight; wait and retry."),
    "result_unknown": (
        "dependency",
        False,
        "The write may or may not have happened: read the current state before deciding to retry.",
    ),
    "tool_timeout": ("dependency", True, "Retry later, or narrow the request."),
    "rate_limited": ("rate_limited", True, "Wait details.retry_after seconds, then retry."),
    "upstream_unavailable": ("dependency", True, "The API is unavailable; retry later."),
    "upstream_error": ("dependency", False, "The API failed; do not retry blindly, report it."),
    "upstream_rejected": ("validation", False, "The API rejected the arguments: fix them per details."),
    "upstream_unauthorized": (
        "policy",
        False,
        "The runtime's credentials were refused; report it to an operator.",
    ),
    "not_found": (
        "not_found",
        False,
        "Check the identifier (e.g. list or search first); do not retry as is.",
    ),
    "conflict": ("conflict", False, "The resource changed or the action clashes with its state: re-read it."),
    "missing_credential": ("internal", False, "An operator must set the named secret; do not retry."),
    "credential_unavailable": (
        "dependency",
        False,
        "The caller's own credential could not be obtained; nothing was sent. Report it.",
    ),
    "receipt_store_unavailable": (
        "dependency",
        True,
        "Nothing was sent; the receipt store is unreachable. Retry later with the same key.",
    ),
    "output_invalid": ("dependency", False, "The API answered with an unexpected shape; report it."),
    "internal_error": ("internal", False, "An internal error occurred; report it."),
}


@dataclass
class ToolError(Exception):
    """A structured, model-facing failure.

    `code` is one of `ERROR_CODES`; `category` classifies it; `retryable` says whether the same call
    may succeed later (it is not an instruction to retry a write whose result is unknown);
    `result_known` is ``False`` only when a write may or may not have taken effect; `details` is a
    JSON object; `next_step` is a one-line suggestion.
    """

    code: str
    message: str
    category: Category = "internal"
    retryable: bool = False
    result_known: bool = True
    details: dict[str, Any] = field(default_factory=dict)
    next_step: str = ""

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def to_json(self) -> dict[str, Any]:
        """The error as a JSON object: ``{"error": {code, category, message, retryable, result_known,
        details, next_step}}`` (the shape `toolgen call` prints and MCP returns with ``isError``)."""
        return {
            "error": {
                "code": self.code,
                "category": self.category,
                "message": self.message,
                "retryable": self.retryable,
                "result_known": self.result_known,
                "details": self.details,
                "next_step": self.next_step,
            }
        }

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def make_error(
    code: str,
    message: str,
    *,
    details: Mapping[str, Any] | None = None,
    retryable: bool | None = None,
    result_known: bool = True,
    next_step: str | None = None,
) -> ToolError:
    """Build a `ToolError` for a known `code`, filling category/retryable/next_step from
    `ERROR_CODES` unless overridden. Raises `KeyError` for an unknown code (a programming error)."""
    category, default_retryable, default_next = ERROR_CODES[code]
    return ToolError(
        code=code,
        message=message,
        category=category,
        retryable=default_retryable if retryable is None else retryable,
        result_known=result_known,
        details=dict(details or {}),
        next_step=default_next if next_step is None else next_step,
    )


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date), or ``None``.

    RFC 9110 §10.2.3. Negative or unparsable values give ``None``; dates in the past give 0.
    """
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        current = SYSTEM.time() if now is None else now
        return max(0.0, when.timestamp() - current)
    return seconds if seconds >= 0 else None


_MAX_TEXT = 300


def scrub_url(url: str) -> str:
    """A URL safe to show in an error: origin and path only (no user, password, query or fragment,
    which may carry credentials such as an apiKey sent in the query)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "(an invalid URL)"
    if ":" in host:
        host = f"[{host}]"
    origin = f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")
    return origin + (parts.path or "/")


def failure_cause(exc: BaseException) -> str:
    """Why a request could not reach the API, in words an operator can act on: connection refused,
    DNS lookup failed, TLS handshake failed, connect timed out, unsupported URL... Only the cause's
    class, never the exception's text (which may echo the request)."""
    chain: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and seen not in chain and len(chain) < 10:
        chain.append(seen)
        seen = seen.__cause__ or seen.__context__
    names = {type(e).__name__ for e in chain}
    text = " ".join(str(e) for e in chain).lower()
    if any(isinstance(e, ssl.SSLCertVerificationError) for e in chain) or "certificate_verify_failed" in text:
        return "TLS handshake failed: the server's certificate was not trusted"
    if any(isinstance(e, ssl.SSLError) or "SSL" in type(e).__name__ for e in chain):
        return "TLS handshake failed"
    if any(isinstance(e, socket.gaierror) for e in chain) or any(
        m in text
        for m in (
            "name or service not known",
            "nodename nor servname",
            "name resolution",
            "no address associated",
            "getaddrinfo failed",
        )
    ):
        return "DNS lookup failed: the host name does not resolve"
    if (
        any(isinstance(e, ConnectionRefusedError) for e in chain)
        or "connection refused" in text
        or "errno 111" in text
        or "actively refused" in text
    ):
        return "connection refused: nothing listens at that address"
    if names & {"ConnectTimeout", "PoolTimeout"} or any(isinstance(e, socket.timeout) for e in chain):
        return "connect timed out"
    if "UnsupportedProtocol" in names:
        return "unsupported URL: the base URL needs http:// or https://"
    if any(isinstance(e, ConnectionResetError) for e in chain):
        return "connection reset by the server"
    if any(isinstance(e, OSError) and e.errno is not None for e in chain):
        code = next(e.errno for e in chain if isinstance(e, OSError) and e.errno is not None)
        return f"network error ({errno_name(code)})"
    return f"connection failed ({type(exc).__name__})"


def errno_name(code: int) -> str:
    import errno

    return errno.errorcode.get(code, str(code))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def from_http_response(
    status: int,
    headers: Mapping[str, str],
    body: Any,
    *,
    operation: str,
    mutating: bool,
) -> ToolError:
    """Map a non-success HTTP response to a `ToolError`.

    `body` is the decoded body (a dict for JSON and problem+json, a str for text, ``None`` when
    empty). `headers` is case-insensitive (an `httpx.Headers`) or lower-case keyed. Problem details
    (`type`, `title`, `detail`, `status`, extension members such as `errors`) are copied into
    `details.problem`, shortened; other bodies are not echoed beyond a short excerpt, so an API that
    reflects a credential in an error page does not leak it through the message (the runtime
    additionally scrubs known secret values before returning).
    """
    problem: dict[str, Any] = {}
    excerpt: str | None = None
    if isinstance(body, dict):
        for key in ("type", "title", "detail", "status", "code", "message", "errors", "invalid_params"):
            if key in body:
                value = body[key]
                problem[key] = _short(value) if isinstance(value, str) else value
        if "error" in body and isinstance(body["error"], (dict, str)) and not problem:
            err = body["error"]
            problem["error"] = (
                _short(err)
                if isinstance(err, str)
                else {
                    k: (_short(v) if isinstance(v, str) else v)
                    for k, v in err.items()
                    if k in ("type", "code", "message", "param")
                }
            )
    elif isinstance(body, str) and body.strip():
        excerpt = _short(body)[:200]
    details: dict[str, Any] = {"status": status, "operation": operation}
    if problem:
        details["problem"] = problem
    elif excerpt is not None:
        details["body_excerpt"] = excerpt
    summary = ""
    for key in ("detail", "title", "message"):
        if isinstance(problem.get(key), str):
            summary = ": " + problem[key]
            break

    if status == 404 or status == 410:
        return make_error(
            "not_found", f"{operation} found nothing (HTTP {status}){summary}.", details=details
        )
    if status == 429:
        retry_after = parse_retry_after(headers.get("retry-after"))
        if retry_after is not None:
            details["retry_after"] = retry_after
        return make_error(
            "rate_limited", f"{operation} was rate limited (HTTP 429){summary}.", details=details
        )
    if status in (401, 403):
        return make_error(
            "upstream_unauthorized",
            f"{operation} refused the runtime's credentials (HTTP {status}){summary}.",
            details=details,
        )
    if status == 409 or status == 412:
        return make_error(
            "conflict", f"{operation} reported a conflict (HTTP {status}){summary}.", details=details
        )
    if 400 <= status < 500:
        return make_error(
            "upstream_rejected",
            f"{operation} rejected the request (HTTP {status}){summary}.",
            details=details,
        )
    if status in (502, 503, 504):
        if mutating:
            # A gateway error on a write does not prove the write did not happen.
            return make_error(
                "result_unknown",
                f"{operation} answered HTTP {status}; the write may or may not have happened{summary}.",
                details=details,
                result_known=False,
            )
        return make_error(
            "upstream_unavailable", f"{operation} is unavailable (HTTP {status}){summary}.", details=details
        )
    if status >= 500:
        return make_error(
            "upstream_error",
            f"{operation} failed (HTTP {status}){summary}.",
            details=details,
            result_known=not mutating,
        )
    return make_error(
        "upstream_error", f"{operation} answered an unexpected HTTP {status}{summary}.", details=details
    )
