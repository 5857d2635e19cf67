"""Calling a record tool with the full arguments of its write, whatever the record tool takes.

A record tool of an approval-gated write executes the stored preview: it takes only ``preview_id``
and the idempotency key. `call_record` keeps the tests that attack the record step (approval,
idempotency, retries, receipts) written against the write's arguments: it previews them (without
the key) as the same actor, then records the returned ``preview_id`` with the key. A record tool
that takes the full arguments is called with them unchanged.
"""

from __future__ import annotations

from typing import Any

from toolgen.runtime import Actor, Approval, CallResult, Registry


def preview_tool_of(reg: Registry, tool: str) -> str | None:
    """The preview tool whose stored preview `tool` executes, or ``None``."""
    if not isinstance(tool, str) or tool not in reg.specs:
        return None
    row = reg.row_json(tool)
    record = row.get("record")
    if row.get("mode") == "record" and isinstance(record, dict) and record.get("arguments") == "preview":
        return str(row["pair"])
    return None


def key_of(reg: Registry, tool: str) -> str | None:
    idem = reg.row_json(tool).get("idempotency")
    return str(idem["arg"]) if idem else None


def record_arguments(
    reg: Registry, tool: str, args: Any, *, actor: Actor, dialect: str | None = None
) -> dict[str, Any] | CallResult:
    """What `tool` is called with for the write's full `args`: `args` itself (a record tool taking
    the full arguments, `args` that are not an object or already name a ``preview_id``), else ``{"preview_id", <key>}`` of a
    preview of `args` made by `actor`; the failed preview's result when the preview fails."""
    pair = preview_tool_of(reg, tool)
    if pair is None or not isinstance(args, dict) or "preview_id" in args:
        return args  # type: ignore[no-any-return]
    key = key_of(reg, tool)
    shown = reg.call(pair, {k: v for k, v in args.items() if k != key}, actor=actor, dialect=dialect)
    if not shown.ok or shown.result is None:
        return shown
    out: dict[str, Any] = {"preview_id": shown.result["preview_id"]}
    if key is not None and key in args:
        out[key] = args[key]
    return out


def call_record(
    reg: Registry, tool: str, args: Any, *, actor: Actor, approval: Approval | str | None = None, **kw: Any
) -> CallResult:
    """`reg.call(tool, ...)` for the write's full `args` (see the module docstring)."""
    sent = record_arguments(reg, tool, args, actor=actor, dialect=kw.get("dialect"))
    if isinstance(sent, CallResult):
        return sent
    return reg.call(tool, sent, actor=actor, approval=approval, **kw)


async def acall_record(
    reg: Registry, tool: str, args: Any, *, actor: Actor, approval: Approval | str | None = None, **kw: Any
) -> CallResult:
    """`reg.acall(tool, ...)` for the write's full `args`; the preview runs through `reg.acall` too."""
    pair = preview_tool_of(reg, tool)
    if pair is None or not isinstance(args, dict) or "preview_id" in args:
        return await reg.acall(tool, args, actor=actor, approval=approval, **kw)
    key = key_of(reg, tool)
    shown = await reg.acall(
        pair, {k: v for k, v in args.items() if k != key}, actor=actor, dialect=kw.get("dialect")
    )
    if not shown.ok or shown.result is None:
        return shown
    sent: dict[str, Any] = {"preview_id": shown.result["preview_id"]}
    if key is not None and key in args:
        sent[key] = args[key]
    return await reg.acall(tool, sent, actor=actor, approval=approval, **kw)
