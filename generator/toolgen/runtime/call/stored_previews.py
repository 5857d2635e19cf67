"""Reading a stored preview back: the arguments a record tool executes (policy ``record.arguments:
preview``, docs/runtime.md "Record executes the preview").

`stored_arguments` reads the preview store of a `Host` (a registry) and checks what it holds
against the preview tool's input schema; used by the call path's validate step and by
`issuing.approvable_request`. Raises `ToolError` only (never a store's own exception).
"""

from __future__ import annotations

from typing import Any

from ..calls import Actor
from ..errors import make_error
from ..stores import StoredPreview
from .arguments import invalid_argument, key_text_problem
from .host import Host
from .nulls import undeclared_member
from .toolspec import ToolSpec

__all__ = ["preview_tool_of", "stored_arguments"]


def preview_tool_of(spec: ToolSpec) -> str:
    """The preview tool of a record tool: the row's ``pair``, else ``preview_<intent>``."""
    return spec.row.pair or "preview_" + spec.intent


def stored_arguments(host: Host, spec: ToolSpec, preview_id: str, actor: Actor) -> dict[str, Any]:
    """The canonical arguments of the stored preview `preview_id` of `spec`'s record tool made
    by `actor`, validated again against the preview tool's input schema. Raises `ToolError`:
    ``receipt_store_unavailable`` (store outage), ``preview_not_found``, ``preview_expired``
    (both pointing at ``/preview_id``), ``preview_mismatch`` (the stored entry is not valid
    for this tool)."""
    pointer = {"pointer": "/preview_id"}
    preview_tool = preview_tool_of(spec)
    problem = key_text_problem(preview_id)
    if problem is not None:
        raise invalid_argument(("preview_id",), f"a preview_id names a stored preview: {problem}")
    try:
        stored: StoredPreview | None = host.preview_store().get(
            f"{host.api}/{spec.name}", actor.id, preview_id
        )
    except (ValueError, TypeError, KeyError):  # an entry that does not decode: changed behind the runtime
        raise make_error(
            "preview_mismatch",
            f"The stored preview {preview_id[:24]}… of {spec.name} cannot be read; nothing was sent.",
            details={**pointer, "preview_tool": preview_tool},
        ) from None
    except Exception as exc:  # noqa: BLE001 - any store outage: nothing is sent
        raise make_error(
            "receipt_store_unavailable",
            f"{spec.name}: the preview store could not be read ({type(exc).__name__}); nothing was sent.",
            details={"store": type(host.receipts).__name__},
        ) from None
    if stored is None:
        raise make_error(
            "preview_not_found",
            f"No preview {preview_id[:24]}… of {spec.name} was stored for actor {actor.id!r}.",
            details={**pointer, "preview_tool": preview_tool},
            next_step=f"Call {preview_tool} with the arguments, then pass the preview_id it returns.",
        )
    if stored.expired(host.clock.time()):
        raise make_error(
            "preview_expired",
            f"The preview {preview_id[:24]}… of {spec.name} expired.",
            details={**pointer, "preview_tool": preview_tool},
            next_step=f"Call {preview_tool} again with the same arguments (same preview_id), then call "
            f"{spec.name} again.",
        )
    pair = host.specs.get(preview_tool)
    arguments = stored.arguments
    if (
        stored.intent != spec.intent
        or pair is None
        or not pair.input_validator.is_valid(arguments)
        or undeclared_member(arguments, pair.input_schema) is not None
    ):
        raise make_error(
            "preview_mismatch",
            f"The stored preview {preview_id[:24]}… does not hold valid arguments of {preview_tool}; "
            "nothing was sent.",
            details={**pointer, "preview_tool": preview_tool},
        )
    return dict(arguments)
