"""Step 12, outcome: what the send step's last `Outcome` means for the call.

Input: `Call`, `ToolSpec`, `Validated`, `Budget`, `Hold`, `Exchange`, the sent `httpx.Request`.
Output: `Answer` (status, headers, the decoded body with the call's secrets scrubbed, and why it
cannot be read, if so, with a bounded, scrubbed excerpt of it) for a status the row counts as success
(``success_status``, else 2xx). A 2xx answer is a success whatever its body: one that cannot be read
(invalid JSON or UTF-8, text where JSON was declared, an HTML page, a body cut short by a closed
connection; for a write, one over `MAX_RESPONSE_BYTES`) is an `Answer` with `Answer.unreadable` set,
never a failure here.
Everything else raises `Halt` at step ``http`` with ``attempts`` (and ``status``), the receipt
settled first:

- a write that may have taken effect (any attempt uncertain, a too-large non-2xx answer, a 3xx, an error
  the API does not make definitive): ``result_unknown`` (receipt ``unknown``; `unknown_error`
  names the read tools that show the state, or says to retry with the same key where the API
  deduplicates it);
- no answer in time: ``tool_timeout``; a connection broken after sending:
  ``upstream_unavailable``; nothing sent at all (``connect``): ``upstream_unavailable``, the
  receipt released and a spent approval given back; an answer over `MAX_RESPONSE_BYTES`:
  ``upstream_error``;
- an API error (`toolgen.runtime.errors.from_http_response`; its problem body redacted and bounded
  to `MAX_PROBLEM_BYTES`): the receipt released, the approval given back; a 409 saying the
  forwarded key is in use (`key_in_use`): ``idempotency_in_progress`` (receipt ``unknown``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import httpx

from ...policy.format import PolicyRow
from ...results import TEXT_KEY
from ..call import credentials as creds
from ..call.response_body import decode_body, doubled_json, excerpt, may_hold_secret, mismatch_text, scrub
from ..call.shaping import redact_anywhere, shrink
from ..call.toolspec import ToolSpec
from ..errors import ToolError, from_http_response, make_error, scrub_url
from .effects import MAX_RESPONSE_BYTES, REDIRECT_STATUSES
from .state import Budget, Call, Exchange, Halt, Hold, Validated

__all__ = [
    "MAX_PROBLEM_BYTES",
    "UNREADABLE_KEY",
    "WITHHELD_REDACTED",
    "Answer",
    "judge",
    "key_in_use",
    "unknown_error",
    "unreadable_result",
    "unreadable_warnings",
    "withhold_excerpt",
    "withhold_warning",
]

#: The most of an API's error body (problem details) a structured error carries (bytes of JSON).
MAX_PROBLEM_BYTES = 2000
#: The member of a result whose answer's body could not be read (`unreadable_result`).
UNREADABLE_KEY = "_unreadable_body"
#: The excerpt of an unreadable body of a tool that redacts members of its output: text cannot be
#: redacted member by member, so none of it is shown.
WITHHELD_REDACTED = "[withheld: the tool redacts members of its output]"

_TRANSPORT_FAILURES = ("timeout", "broken", "connect", "too_large")
#: What comes before the excerpt in an unreadable body's warning (`unreadable_warnings`).
_BEGINS = "; the body begins: "
_JSON_TYPES: dict[type, str] = {bool: "boolean", int: "number", float: "number"}


@dataclass(frozen=True)
class Answer:
    """A success answer: `status`, `headers`, the decoded `body`, and `unreadable` (why the body
    cannot be trusted: invalid JSON, too deep, an HTML page, cut short) or None; `excerpt`: the start of
    an unreadable body as text, scrubbed of the call's secrets and bounded
    (`toolgen.runtime.call.response_body.excerpt`),
    None for an empty one."""

    status: int
    headers: httpx.Headers
    body: Any
    unreadable: str | None
    excerpt: str | None = None


def operation_name(row: PolicyRow) -> str:
    """Policy: the row's operation as errors name it (``operationId``, else ``METHOD path``; a
    composite's row, which has none, by its tool)."""
    if row.composite is not None:
        return row.tool
    return row.operation_id or f"{row.method} {row.path}"


def _answer_policy(row: PolicyRow) -> tuple[list[int], Any]:
    """Policy: (the statuses the row counts as success, ``success_status``; the body the spec says
    comes, ``output.body``)."""
    return list(row.success_status), row.output.body


def key_in_use(body: Any) -> bool:
    """Whether an error body says the idempotency key is in use by a request still running (Stripe's
    ``idempotency_key_in_use``; the IETF Idempotency-Key draft's 409 for a concurrent request)."""
    texts: list[str] = []
    for node in (body, body.get("error") if isinstance(body, dict) else None):
        if isinstance(node, dict):
            texts.extend(str(node.get(k, "")) for k in ("code", "type", "title", "detail", "message"))
    joined = " ".join(texts).lower()
    return "idempotency" in joined or "idempotent" in joined


def unknown_error(spec: ToolSpec, message: str, *, honoured: bool, details: dict[str, Any]) -> ToolError:
    """``result_unknown``: the write may or may not have taken effect. The next step says how to
    find out (the read tools of the same resource) or, where the API deduplicates the key, to
    retry with the same key."""
    key_arg = spec.row.idempotency.arg if spec.row.idempotency is not None else "the key"
    checks = ", ".join(spec.check_tools)
    look = f"Read the current state first ({checks})" if checks else "Read the current state first"
    same = "preview_id" if spec.row.executes_preview else "arguments"
    if honoured:
        step = (
            f"Retry with the same {same} and the same {key_arg}: the API deduplicates it, so it "
            "cannot write twice."
        )
    else:
        step = (
            f"{look}. If the write did not happen, call again with a new {key_arg}; do not simply "
            "repeat the call: this API is not declared to deduplicate the key, so the runtime does "
            "not re-send it."
        )
    return make_error(
        "result_unknown",
        message,
        details={**details, "check_tools": list(spec.check_tools)},
        result_known=False,
        retryable=honoured,
        next_step=step,
    )


def _declared_body(
    spec: ToolSpec,
    answer: tuple[int, httpx.Headers, Any],
    http_request: httpx.Request,
    landed: str | None,
    secret_values: list[str],
) -> Any:
    """Policy: the body a declared text or redirect answer becomes. A text answer of an ``object``
    row (``output.body`` ``text``) is ``{"text": ...}``; an answer of a row with ``output.redirect``
    is ``{"status", "location"}`` (a redirect not followed: its ``Location``, absolute) or
    ``{"status", "location", "body"}`` (where followed redirects landed, and what was found there)."""
    status, headers, body = answer
    out = spec.row.output
    if out.redirect is not None:
        if landed is not None and status not in REDIRECT_STATUSES:
            return scrub({"status": status, "location": landed, "body": body}, secret_values)
        target = location_of_answer(status, headers, http_request)
        return scrub({"status": status, **({"location": target} if target else {})}, secret_values)
    if out.body == "text" and out.shape == "object" and isinstance(body, str):
        return {TEXT_KEY: body}
    return body


def location_of_answer(status: int, headers: httpx.Headers, http_request: httpx.Request) -> str | None:
    """The absolute ``Location`` of a redirect answer, resolved against the request's URL, else None."""
    raw = headers.get("location") if status in REDIRECT_STATUSES else None
    if not raw:
        return None
    try:
        return str(http_request.url.join(raw.strip()))
    except (httpx.InvalidURL, ValueError):
        return None


def unreadable_result(spec: ToolSpec, answer: Answer, *, withhold: bool = False) -> dict[str, Any]:
    """The result of a success `answer` whose body cannot be read: ``{"status": <HTTP status>,
    "_unreadable_body": {"problem": <why>, "excerpt": <text or null>}}``; the excerpt is
    `Answer.excerpt` (at most `toolgen.runtime.call.response_body.EXCERPT_CHARS` characters, the call's
    secrets
    scrubbed), `WITHHELD_REDACTED` when the tool redacts members of its output (or `withhold`: a
    composite's step whose composite does), null for no body."""
    hide = (spec.redact_tree or withhold) and answer.excerpt is not None
    return {
        "status": answer.status,
        UNREADABLE_KEY: {
            "problem": answer.unreadable,
            "excerpt": WITHHELD_REDACTED if hide else answer.excerpt,
        },
    }


def withhold_warning(warning: str) -> str:
    """A warning of `unreadable_warnings` (a composite step's, stored in its record's result) with its
    excerpt withheld (`WITHHELD_REDACTED`), as `withhold_excerpt` does to a result. Everything before
    the excerpt is the runtime's (the problem names a media type without its parameters, so no ``;``)."""
    head, found, _ = warning.partition(_BEGINS)
    return f"{head}{_BEGINS}{json.dumps(WITHHELD_REDACTED)}" if found else warning


def withhold_excerpt(result: Any) -> Any:
    """`result` with the excerpt of its `unreadable_result` marker (if any) withheld
    (`WITHHELD_REDACTED`): a stored result replayed under a policy that now redacts members of the
    tool's output, which text cannot be redacted by."""
    marker = result.get(UNREADABLE_KEY) if isinstance(result, dict) else None
    if not isinstance(marker, dict) or marker.get("excerpt") is None:
        return result
    return {**result, UNREADABLE_KEY: {**marker, "excerpt": WITHHELD_REDACTED}}


def unreadable_warnings(spec: ToolSpec, result: Any) -> list[str]:
    """The warning of a result made by `unreadable_result` (none for any other): the same for the
    call that stored it and for every replay of its receipt."""
    marker = result.get(UNREADABLE_KEY) if isinstance(result, dict) else None
    if not isinstance(marker, dict):
        return []
    status, shown = result.get("status"), marker.get("excerpt")
    done = (
        "the write is done (do not repeat it; its receipt is completed)"
        if spec.mutating
        else "the call succeeded"
    )
    body = f"{_BEGINS}{json.dumps(shown, ensure_ascii=False)}" if shown is not None else ""
    return [
        (
            f"{operation_name(spec.row)} answered HTTP {status}: {done}, but its body cannot be read as the "
            f"tool's output ({marker.get('problem')}){body}"
        )
    ]


def judge(
    call: Call,
    spec: ToolSpec,
    validated: Validated,
    budget: Budget,
    hold: Hold,
    exchange: Exchange,
    http_request: httpx.Request,
    landed: str | None = None,
) -> Answer:
    """The success `Answer`, or `Halt` (see the module docstring). `landed`: where followed
    redirects led (`toolgen.runtime.pipeline.redirect.follow`), if any."""
    outcome = exchange.outcome
    if outcome.kind in ("too_large", "timeout") and spec.mutating and 200 <= outcome.status < 300:
        # the API accepted the write: its outcome is known, though its answer is over the cap or did not
        # come whole in time, and is not read
        return Answer(
            outcome.status,
            outcome.headers or httpx.Headers(),
            None,
            f"an answer larger than {MAX_RESPONSE_BYTES} bytes, not read"
            if outcome.kind == "too_large"
            else f"a body that did not come whole within the timeout ({budget.timeout_ms} ms), not read",
        )
    if outcome.kind in _TRANSPORT_FAILURES:
        raise _transport_failure(call, spec, budget, hold, exchange, http_request)
    status = outcome.status
    headers = outcome.headers or httpx.Headers()
    secret_values = call.secret_values
    content = creds.scrub_bytes(outcome.content, secret_values) if secret_values else outcome.content
    success, expect = _answer_policy(spec.row)
    body, unreadable = decode_body(headers, content, expect)
    if may_hold_secret(content, secret_values, headers):
        body = scrub(body, secret_values)
    if not ((status in success if success else False) or 200 <= status < 300):
        raise _api_error(
            call, spec, validated, budget, hold, exchange, Answer(status, headers, body, unreadable)
        )
    if outcome.cut:
        unreadable = f"the connection closed after {len(outcome.content)} bytes, before the whole body came"
    if unreadable is None:
        body = _declared_body(spec, (status, headers, body), http_request, landed, secret_values)
    if (
        unreadable is None
        and body is not None
        and not isinstance(body, (dict, list))
        and (spec.field_tree or spec.redact_tree)
    ):
        # the output policy keeps members of a JSON answer (output.fields, else the declared
        # properties; output.redact): text (XML, CSV, ...) or a JSON string or number cannot be cut to them
        media = (headers.get("content-type") or "no media type").split(";")[0].strip()[:60]
        what = f"{media} text" if isinstance(body, str) else f"a JSON {_JSON_TYPES.get(type(body), 'value')}"
        declared = _declared_body_types(spec)
        unreadable = (
            mismatch_text("/", "", body, declared)
            if doubled_json(body) and "string" not in (declared or ())
            else f"{what} where the tool's output is JSON: the output policy (fields, redaction) "
            "cannot apply to it"
        )
    if unreadable is None:
        return Answer(status, headers, body, None)
    return Answer(
        status, headers, body, unreadable, excerpt(content, headers, secret_values) if content else None
    )


def _declared_body_types(spec: ToolSpec) -> list[str] | None:
    """The JSON Schema types the spec declares for a success answer's body, as far as the tool's
    output schema tells (`toolgen.results.result_shape`): ``object`` for an object result, the
    ``result`` member's types for another body; None when it does not tell (a paginated tool)."""
    schema = spec.output_schema if isinstance(spec.output_schema, dict) else {}
    shape = spec.row.output.shape
    if spec.row.pagination is not None or not schema:
        return None
    if shape == "object":
        return ["object"]
    declared = (
        ((schema.get("properties") or {}).get("result") or {}).get("type") if shape == "result" else None
    )
    return [declared] if isinstance(declared, str) else declared if isinstance(declared, list) else None


def _timing(budget: Budget, exchange: Exchange) -> dict[str, Any]:
    return {
        "timeout_ms": budget.timeout_ms,
        "deadline_ms": budget.deadline_ms,
        "observed_ms": exchange.observed_ms,
        "attempts": exchange.attempts,
    }


def _transport_failure(
    call: Call, spec: ToolSpec, budget: Budget, hold: Hold, exchange: Exchange, http_request: httpx.Request
) -> Halt:
    """The `Halt` of an exchange that ended without a usable answer."""
    outcome, attempts, tool = exchange.outcome, exchange.attempts, call.tool
    op_name = operation_name(spec.row)
    timing = _timing(budget, exchange)
    if spec.mutating and (exchange.uncertain or outcome.kind == "too_large"):
        hold.settle("mark_unknown")
        what = {
            "timeout": f"got no answer in time ({budget.timeout_ms} ms)",
            "broken": "lost the connection before the answer",
            "connect": "could not reach the API on a later attempt",
            "too_large": f"got an answer larger than {MAX_RESPONSE_BYTES} bytes",
        }[str(outcome.kind)]
        return Halt(
            "http",
            unknown_error(
                spec,
                f"{tool} sent the write but {what}; it may or may not have taken effect.",
                honoured=hold.honoured,
                details={**timing, "idempotency_key_forwarded": hold.forwarded},
            ),
            attempts=attempts,
        )
    if outcome.kind == "timeout":
        return Halt(
            "http",
            make_error(
                "tool_timeout", f"{tool} exceeded its {budget.timeout_ms} ms timeout.", details=timing
            ),
            attempts=attempts,
        )
    target = scrub_url(str(http_request.url))
    cause = outcome.cause or "no cause reported"
    if outcome.kind == "broken":
        return Halt(
            "http",
            make_error(
                "upstream_unavailable",
                f"{tool}: the connection to {target} broke after {round(outcome.elapsed_ms)} ms, before an "
                f"answer ({cause}).",
                details={**timing, "operation": op_name, "url": target, "cause": cause},
            ),
            attempts=attempts,
        )
    if outcome.kind == "connect":
        hold.settle("release")
        hold.unspend()  # no attempt reached the API
        return Halt(
            "http",
            make_error(
                "upstream_unavailable",
                f"{tool} could not reach the API at {target} ({op_name}): {cause}.",
                details={"attempts": attempts, "operation": op_name, "url": target, "cause": cause},
            ),
            attempts=attempts,
        )
    return Halt(
        "http",
        make_error(
            "upstream_error",
            f"{op_name} answered with more than {MAX_RESPONSE_BYTES} bytes.",
            details={"status": outcome.status},
        ),
        attempts=attempts,
        status=outcome.status,
    )


def _api_error(
    call: Call,
    spec: ToolSpec,
    validated: Validated,
    budget: Budget,
    hold: Hold,
    exchange: Exchange,
    answer: Answer,
) -> Halt:
    """The `Halt` of an answer whose status is not a success."""
    status, body, mutating, attempts = answer.status, answer.body, spec.mutating, exchange.attempts
    op_name = operation_name(spec.row)
    error = from_http_response(
        status,
        answer.headers,
        body if answer.unreadable is None else None,
        operation=op_name,
        mutating=mutating,
    )
    if "problem" in error.details:  # an API's error body: redacted and bounded like a result
        error.details["problem"] = shrink(
            redact_anywhere(error.details["problem"], spec.redact_tree), MAX_PROBLEM_BYTES
        )[0]
    if spec.redact_tree and "body_excerpt" in error.details:  # text cannot be redacted: none of it is shown
        error.details["body_excerpt"] = "[withheld: the tool redacts members of its output]"
    if mutating and hold.forwarded and status == 409 and key_in_use(body):
        hold.settle("mark_unknown")
        return Halt(
            "http",
            make_error(
                "idempotency_in_progress",
                f"{op_name} says a request with this idempotency key is still being processed.",
                details={**error.details, "key_arg": spec.key_arg},
                result_known=False,
                retryable=True,
                next_step="Wait, then retry with the same "
                f"{'preview_id' if validated.preview_id is not None else 'arguments'} and the same key.",
            ),
            attempts=attempts,
            status=status,
        )
    if mutating and (exchange.uncertain or not error.result_known or 300 <= status < 400):
        hold.settle("mark_unknown")
        return Halt(
            "http",
            unknown_error(
                spec,
                f"{op_name} answered HTTP {status}, but an attempt may already have written; "
                "whether the write took effect is unknown."
                if exchange.uncertain and error.result_known
                else f"{op_name} answered HTTP {status}; the write may or may not have happened.",
                honoured=hold.honoured,
                details={**error.details, **_timing(budget, exchange)},
            ),
            attempts=attempts,
            status=status,
        )
    hold.settle("release")
    hold.unspend()  # the API refused the write: nothing took effect, so the approval is not spent
    return Halt("http", error, attempts=attempts, status=status)
