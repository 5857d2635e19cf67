"""Step 13, output: validate and shape a success answer into the call's result.

Input: `Call`, `ToolSpec`, `Validated`, `Hold`, `Exchange`, the `outcome.Answer`, the wire
`BuiltRequest`. Output: the successful `CallResult`: the body projected (``output.fields``, else
the properties the output schema declares), redacted (``output.redact``), shaped
(`toolgen.results.shape_body`: an object, ``{"result": ...}`` or ``{"status": ...}``) and fit to
``output.max_bytes`` (`shaping.enforce_budget`); a paginated tool's page as ``{"items",
"next_cursor"}`` (`toolgen.runtime.call.page_cursor.shape_page`). The result is checked against the output
schema (``output.schema_mode``: ``warn`` adds a warning, ``strict`` refuses a read's result,
``off`` skips). The receipt is completed with the result. Audits ``output`` ``allow``/``warn``
and ``result`` ``ok``.

A success answer whose body cannot be read (`outcome.Answer.unreadable`: invalid JSON or UTF-8,
text or a JSON scalar where the output policy keeps members of an object, an HTML page, a body cut
short) is still a success: the API's status says the call was done, so a write's receipt is
completed and its outcome known. Its result is `outcome.unreadable_result` (``{"status": <HTTP status>,
"_unreadable_body": {"problem", "excerpt"}}``: the excerpt bounded and scrubbed of the call's
secrets, withheld when the tool redacts members of its output) with the warning
`outcome.unreadable_warnings` derives from it, so a replay of the receipt warns the same.

Errors (`Halt` at step ``output``): a body that cannot be read, of a read whose ``output.schema_mode``
is ``strict``: ``output_invalid``; a strict schema mismatch of a read: ``output_invalid``; a shaping
failure (`ToolError` of the budget).
"""

from __future__ import annotations

from typing import Any

from ...policy.format import Pagination, PolicyRow
from ...results import RESULT_KEY, shape_body
from ..call.page_cursor import PageShaper, shape_page
from ..call.request import BuiltRequest
from ..call.response_body import doubled_json, mismatch_text
from ..call.shaping import enforce_budget, project, redact
from ..call.toolspec import ToolSpec
from ..calls import CallResult
from ..errors import ToolError, make_error
from .outcome import Answer, operation_name, unreadable_result, unreadable_warnings
from .state import Call, Exchange, Halt, Hold, Validated
from .validate import pointer

__all__ = ["shape", "shaped_result"]


def _output_policy(row: PolicyRow) -> tuple[int, str, str, Pagination | None]:
    """Policy: (``output.max_bytes``, ``output.shape``, ``output.schema_mode``, ``pagination``)."""
    return row.output.max_bytes, row.output.shape, row.output.schema_mode, row.pagination


def shaped_result(
    call: Call, spec: ToolSpec, answer: Answer, page_request: tuple[Validated, BuiltRequest]
) -> tuple[dict[str, Any], int]:
    """(the result, bytes omitted to fit the budget) of a success answer. Raises `ToolError`."""
    validated, wire = page_request
    max_bytes, shape_policy, _, pagination = _output_policy(spec.row)

    def shape_item(item: Any) -> Any:
        return project(redact(item, spec.redact_tree), spec.field_tree)

    if pagination is not None:
        shaper = PageShaper(
            pagination.to_json(),
            call.host.cursors,
            f"{call.host.api}/{spec.name}",
            call.host.base_url,
            max_bytes,
            shape_item,
        )
        return shape_page(shaper, answer.body, answer.headers, validated.page, wire, call.secret_values)
    # projection and redaction apply to an object body, or to each item of an array body
    body = answer.body
    if isinstance(body, list):
        body = [shape_item(i) for i in body]
    elif isinstance(body, dict):
        body = shape_item(body)
    shaped_body = shape_body(body, shape_policy, answer.status)
    return enforce_budget(
        shaped_body,
        max_bytes,
        list_key=RESULT_KEY if isinstance(shaped_body.get(RESULT_KEY), list) else None,
        keep=spec.required_members,
    )


def _unreadable(call: Call, spec: ToolSpec, hold: Hold, exchange: Exchange, answer: Answer) -> CallResult:
    """The result of a success answer whose body cannot be read (see the module docstring); raises
    `Halt` ``output_invalid`` for a read in ``strict`` output mode."""
    status, problem = answer.status, answer.unreadable
    if not spec.mutating and _output_policy(spec.row)[2] == "strict":
        hold.settle("release")
        raise Halt(
            "output",
            make_error(
                "output_invalid",
                f"{operation_name(spec.row)} answered HTTP {status} with a body that cannot be read "
                f"({problem}).",
                details={
                    "status": status,
                    "problem": problem,
                    **({"pointer": "/"} if doubled_json(answer.body) else {}),
                },
            ),
            attempts=exchange.attempts,
            status=status,
        )
    result = unreadable_result(spec, answer)
    call.emit("output", "warn", problem=problem)
    return _completed(call, hold, exchange, result, status, unreadable_warnings(spec, result))


def _schema_warnings(
    call: Call, spec: ToolSpec, exchange: Exchange, answer: Answer, result: dict[str, Any]
) -> list[str]:
    """The output-schema mismatch as a warning (``warn``, or any write); raises `Halt` ``output_invalid``
    for a read in ``strict`` mode."""
    mode = _output_policy(spec.row)[2]
    validator = spec.output_validator
    if validator is None or mode == "off" or validator.is_valid(result):
        return []
    problems = list(validator.iter_errors(result))
    first = problems[0]
    message = mismatch_text(
        pointer(first.instance_path), first.message, first.instance, getattr(first.kind, "types", None)
    )
    message = message[:900] if doubled_json(first.instance) else f"output {message}"[:300]
    if mode == "strict" and not spec.mutating:
        raise Halt(
            "output",
            make_error(
                "output_invalid",
                f"{call.tool}'s response does not match its output schema: {message}",
                details={"pointer": pointer(first.instance_path)},
            ),
            attempts=exchange.attempts,
            status=answer.status,
        )
    call.emit("output", "warn", pointer=pointer(first.instance_path))
    return [message]


def shape(
    call: Call,
    spec: ToolSpec,
    validated: Validated,
    hold: Hold,
    exchange: Exchange,
    answer: Answer,
    wire: BuiltRequest,
) -> CallResult:
    """The successful `CallResult` (see the module docstring); raises `Halt`."""
    if answer.unreadable is not None:
        return _unreadable(call, spec, hold, exchange, answer)
    status = answer.status
    try:
        result, omitted = shaped_result(call, spec, answer, (validated, wire))
    except ToolError as exc:
        hold.settle("complete", {"status": status}, status)
        raise Halt("output", exc, attempts=exchange.attempts, status=status) from None
    warnings = _schema_warnings(call, spec, exchange, answer, result)
    call.emit("output", "allow", bytes=omitted or None)
    return _completed(call, hold, exchange, result, status, warnings)


def _completed(
    call: Call, hold: Hold, exchange: Exchange, result: Any, status: int, warnings: list[str]
) -> CallResult:
    """The receipt completed with `result`, the call's ``result ok`` event, and its `CallResult`."""
    hold.settle("complete", result, status)
    call.emit("result", "ok", status=status)
    return CallResult(
        call.tool,
        True,
        result=result,
        fingerprint=call.fp,
        status=status,
        attempts=exchange.attempts,
        warnings=warnings,
        call_id=call.call_id,
        idempotency_key=hold.key,
        request=call.shown,
    )
