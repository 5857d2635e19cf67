"""Step 3b, the canonical request: built once, fingerprinted, and for a record that executes a
stored preview, the very request that was previewed.

Input: `Call`, `ToolSpec`, the validated canonical arguments. Output: `Validated` (arguments, the
`BuiltRequest` with the URL of a link-style page, the `Page` read, the executed ``preview_id``);
sets `Call.fp` (the fingerprint, `toolgen.runtime.calls.fingerprint`) and, for a record executing
a stored preview, `Call.shown`; audits ``validate`` ``allow``.

A record executing a stored preview (policy ``record.arguments: preview``) takes the preview's
stored arguments (`toolgen.runtime.call.stored_previews`) plus the caller's idempotency key, and must
rebuild a request whose fingerprint is its ``preview_id``. A pagination cursor is decoded here
(`shaping.CursorCodec`, bound to ``<api>/<tool>``).

Errors (`Halt`): at step ``validate``: ``invalid_arguments`` (a value that cannot go on the wire
exactly as previewed), ``invalid_cursor``, ``preview_not_found``, ``preview_expired``,
``preview_mismatch``, ``receipt_store_unavailable`` (the preview store), a body larger than the
policy's ``request.max_body_bytes`` (``invalid_arguments``, ``details.max_body_bytes`` and
``body_bytes``); at step ``request``:
``internal_error`` (the policy row cannot build a request).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...policy.format import PolicyRow
from ..call.page_cursor import pagination_params
from ..call.request import BuiltRequest, build_request
from ..call.stored_previews import stored_arguments
from ..call.toolspec import ToolSpec, display
from ..calls import fingerprint
from ..errors import ToolError, make_error
from .state import Call, Halt, Validated

__all__ = ["canonical_request"]


def _executed_arguments(call: Call, spec: ToolSpec, args: dict[str, Any], preview_id: str) -> dict[str, Any]:
    """The stored preview's arguments, with the caller's idempotency key. Raises `Halt`."""
    try:
        stored = stored_arguments(call.host, spec, preview_id, call.actor)
    except ToolError as exc:
        raise Halt("validate", exc) from None
    idem_arg = spec.key_arg
    if idem_arg and idem_arg in args:
        stored[idem_arg] = args[idem_arg]
    return stored


def _cursor(call: Call, spec: ToolSpec, args: Mapping[str, Any]) -> dict[str, Any] | None:
    """The decoded pagination cursor of `args` (None: a first page, or no pagination). Raises `Halt`
    ``invalid_cursor``."""
    pagination = spec.row.pagination
    if pagination is None:
        return None
    cursor_arg = pagination.cursor_arg
    token = args.get(cursor_arg)
    if token is None:
        return None
    try:
        if not isinstance(token, str):
            raise make_error(
                "invalid_cursor",
                "The cursor must be a string issued by this tool.",
                details={"pointer": "/" + cursor_arg},
            )
        cursor = call.host.cursors.decode(f"{call.host.api}/{call.tool}", token)
        if not isinstance(cursor.get("h"), list):  # every cursor this runtime issues keeps its page history
            raise make_error(
                "invalid_cursor",
                "The cursor is not of the form this runtime issues (it keeps no "
                "page history); start again from the first page (omit cursor).",
            )
        return cursor
    except ToolError as exc:
        exc.details["pointer"] = "/" + cursor_arg
        raise Halt("validate", exc) from None


def _check_body_size(row: PolicyRow, args: Mapping[str, Any], built: BuiltRequest) -> None:
    """Policy ``request.max_body_bytes``: raises `Halt` ``invalid_arguments`` when the encoded body is
    larger, pointing at the body argument whose JSON text is longest (the one to shorten)."""
    limit = row.max_body_bytes
    if limit is None or built.content is None or len(built.content) <= limit:
        return
    in_body = [b.arg for b in row.bindings if b.location == "body" and b.arg in args]
    largest = max(
        in_body, key=lambda arg: len(json.dumps(args[arg], ensure_ascii=False, default=str)), default=None
    )
    raise Halt(
        "validate",
        make_error(
            "invalid_arguments",
            f"The request body would be {len(built.content):,} bytes; this tool sends at most {limit:,} "
            f"(policy request.max_body_bytes). Shorten {'argument /' + largest if largest else 'the arguments'}; "
            "nothing was sent.",
            details={
                "pointer": "" if largest is None else "/" + largest,
                "keyword": "max_body_bytes",
                "max_body_bytes": limit,
                "body_bytes": len(built.content),
            },
        ),
    )


def canonical_request(call: Call, spec: ToolSpec, args: dict[str, Any]) -> Validated:
    """Build, fingerprint and check the call's request (see the module docstring)."""
    host, row = call.host, spec.row
    preview_id = str(args.get("preview_id", "")) if row.executes_preview else None
    if preview_id is not None:
        args = _executed_arguments(call, spec, args, preview_id)
    cursor = _cursor(call, spec, args)
    try:
        extra_query, page = pagination_params(
            None if row.pagination is None else row.pagination.to_json(), args, cursor, host.base_url
        )
        built = build_request(row, args, base_url=host.base_url, extra_query=extra_query)
    except ToolError as exc:
        if (
            preview_id is not None and exc.details.get("pointer") != f"/{spec.key_arg}"
        ):  # not the caller's key
            raise Halt(
                "validate",
                make_error(
                    "preview_mismatch",
                    f"The stored preview {preview_id[:24]}… no longer builds a request "
                    f"({exc.message[:200]}); nothing was sent.",
                    details={"pointer": "/preview_id"},
                ),
            ) from None
        raise Halt("validate", exc) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise Halt(
            "request", make_error("internal_error", f"Could not build the request: {type(exc).__name__}.")
        ) from None
    _check_body_size(row, args, built)
    if page.link_url is not None:
        built.url = page.link_url
        built.canonical = {**built.canonical, "url": page.link_url}
    fp = call.fp = fingerprint(spec.intent, built.canonical)
    if preview_id is not None:
        if fp != preview_id:
            # the stored arguments (or the policy) changed since the preview: what would be sent is
            # not what was shown and approved
            raise Halt(
                "validate",
                make_error(
                    "preview_mismatch",
                    f"The stored preview {preview_id[:24]}… builds another request than the one previewed; "
                    "nothing was sent.",
                    details={"pointer": "/preview_id", "rebuilt_preview_id": fp},
                ),
            )
        call.shown = display(row, built)
    call.emit("validate", "allow")
    return Validated(args, built, fp, page, preview_id)
