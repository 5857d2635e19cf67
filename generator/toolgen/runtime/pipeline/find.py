"""Step 1, find: the tool the caller named.

Input: `Call` (its `tool`, as the caller gave it). Output: the tool's `ToolSpec`; audits ``find``
``allow`` with the row's mode and effect. Errors (`Halt` at step ``find``): ``unknown_tool`` when
no tool has that name (``details.available``: the tools the actor may use, never the others).
"""

from __future__ import annotations

from ..call.toolspec import ToolSpec
from ..errors import make_error
from .state import Call, Halt

__all__ = ["find"]


def find(call: Call) -> ToolSpec:
    """The `ToolSpec` of `call.tool`; raises `Halt` ``unknown_tool``."""
    tool = call.tool
    spec = call.host.specs.get(tool) if isinstance(tool, str) else None
    if spec is None:
        raise Halt(
            "find",
            make_error(
                "unknown_tool",
                f"There is no tool named {str(tool)[:200]!r}.",
                details={"tool": str(tool)[:200], "available": call.host.visible_tools(call.actor)},
            ),
        )
    call.emit("find", "allow", mode=spec.row.mode, effect=spec.row.effect)
    return spec
