"""Stage `lower`, the last build's tools remembered whole, as one piece.

Input: the lowering context (`Ctx`, with the build cache's `OperationKeys` and an `IntentTools`: every
intent's tools as the last build made them), one operation and its intent, resolved. Output: the intent's
`Tool`s as `toolgen.compile.lower.tools.lower_intent` makes them and `lower` shares their schemas
(`toolgen.compile.schema.tree.Interner`). A tool the last build made from the same inputs is taken as it
was: its lowering, input examples, summary, descriptions and policy rows are not read back and put
together again, and its schemas are not interned again (the last build interned them; the whole
`IntentTools` is kept as one pickle, so the schemas its tools shared are shared again when it is read).
One entry of the cache holds it (`toolgen.builder.incremental.LastTools`): reading it costs one
unpickling, where reading each operation's pieces cost one per piece.

An intent's tools are keyed by its operation's lowering key (`toolgen.compile.lower.reuse.OperationKeys.key`:
the operation's part of the document, the document's other members, the intent map's settings, the
intent as the map states it, its include group and where it sits, the API's name). Two inputs depend
on the tools lowered before, not on the operation, and are checked rather than keyed:

- the placement (`toolgen.compile.lower.toolsets.place`): a toolset made from a tag or a path takes the
  loading of the first tool placed in it. `place` runs in every build, in the order of a build without
  the cache (so the toolsets it makes are the same), and remembered tools whose policy rows do not
  hold the placement it gives now are computed again;
- the names of the tools made so far (`Ctx.names`, which later inferred tools' names avoid): set
  again from the remembered tools, as `lower_intent` sets them.

A computation that emitted any diagnostic (its operation's lowering, its intent's resolving, its input
examples, its approval condition) or raised is not remembered: it runs every time, so what it reports
is located in this build's inputs. Equal content is all the later stages read of a tool (their keys
are digests of content): that the remembered tools share no schema object with the tools computed in
this build changes no byte.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Tool
from ..operations import Operation
from .context import Ctx
from .resolve import ResolvedIntent
from .reuse import _digest, _recording
from .tools import lower_resolved, placement_of
from .toolsets import Placement


class IntentTools:
    """Intent key (`tools_key`) -> the tools the last build made of it, read once when a build starts;
    `kept` is what this build made or took, for the next (entries no longer used are dropped)."""

    def __init__(self, previous: dict[str, tuple[Tool, ...]]) -> None:
        self._previous = previous
        self.kept: dict[str, tuple[Tool, ...]] = {}
        #: how many intents' tools this build computed (the others were taken whole)
        self.computed = 0

    def get(self, key: str) -> tuple[Tool, ...] | None:
        """The last build's tools of the intent keyed `key`, or None."""
        return self._previous.get(key)

    def keep(self, key: str, tools: tuple[Tool, ...]) -> None:
        """Remember `tools` under `key` for the next build."""
        self.kept[key] = tools

    @property
    def changed(self) -> bool:
        """Whether `kept` differs from what the build started from (so it must be written back)."""
        return self.kept.keys() != self._previous.keys() or any(
            self._previous[k] is not v for k, v in self.kept.items()
        )


def intent_tools(
    ctx: Ctx, op: Operation, resolved: ResolvedIntent, *, shared: Callable[[Tool], Tool]
) -> list[Tool]:
    """``[shared(t) for t in lower_intent(...)]`` of the intent `resolve_intent` gave `resolved`
    (`toolgen.compile.lower.tools.lower_resolved`), taken from `ctx.tools` (an `IntentTools`) when the
    last build made them from the same inputs (module docstring). Raises what `lower_intent` raises."""
    remembered: IntentTools | None = ctx.tools
    found = ctx.keys.key(op, resolved) if remembered is not None and ctx.keys is not None else None
    if remembered is None or found is None or resolved.findings:
        return [shared(t) for t in lower_resolved(ctx, op, resolved)]
    entry = tools_key(found)
    kept = remembered.get(entry)
    if kept is not None:
        placed = placement_of(ctx, op, resolved)
        if all(_placement(tool) == placed for tool in kept):
            for tool in kept:
                ctx.names[tool.name] = op.pointer
            remembered.keep(entry, kept)
            return list(kept)
        # placed otherwise, by the toolsets earlier tools made: computed again below. Its lowering,
        # keyed as these tools were, succeeded: it raises nothing before its own `place`, which gives
        # what `place` gave just now (a toolset made then is the one it finds)
    remembered.computed += 1
    with _recording(ctx) as recording:
        tools = [shared(t) for t in lower_resolved(ctx, op, resolved)]
    if not recording.kept:
        remembered.keep(entry, tuple(tools))
    return tools


def tools_key(lowering_key: str) -> str:
    """The key of an intent's tools in `IntentTools`, from its operation's lowering key."""
    return _digest("intent-tools 1", lowering_key)


def _placement(tool: Tool) -> Placement:
    """The placement a tool's policy row holds (`lower_intent` copies `place`'s into every row)."""
    row = tool.policy
    return Placement(row.toolset, row.loading, row.keywords, row.examples, row.not_for)


__all__ = ["IntentTools", "intent_tools", "tools_key"]
