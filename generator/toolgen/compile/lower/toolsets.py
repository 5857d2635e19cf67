"""Stage `lower`, toolsets: which toolset (namespace) each tool belongs to and how it loads.

Input: the intent map's `toolsets:` mapping, an intent (explicit, with its own `toolset`/`loading`) or
an include group (`toolset: NAME` or `toolset: from_tag`, `loading`), and the operation (its first
tag). Output: a `Placement` per intent (toolset name or None, loading, keywords) and, at the end, the
`Toolset`s the IR carries.

Rules: a tool's `loading` wins over its include group's, which wins over its toolset's; the default is
``eager``. An explicit `toolset` must be declared under `toolsets:`; ``from_tag`` names the toolset after
the operation's first tag (`toolgen.naming.toolset_from_tag`), described by the spec's tag
description unless the map declares a toolset of that name. Toolset names keep `TOOLSET_NAME_RE`
(every dialect's namespace and name rules). Bad names and unknown toolsets are located errors.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from ...naming import toolset_from_tag, toolset_name_problem
from ..intent import TOOLSET_FROM_TAG, IncludeSpec, ToolIntent
from ..ir import Loading, Toolset
from ..operations import Operation
from .context import Ctx

#: longest toolset description taken from a spec's tag (a model reads it before it searches)
TAG_DESCRIPTION_MAX = 160


@dataclass(frozen=True)
class Placement:
    toolset: str | None
    loading: Loading
    keywords: tuple[str, ...] = ()


def check_toolsets(ctx: Ctx) -> None:
    """Located errors for toolset names that break `TOOLSET_NAME_RE` and for intents or include groups
    naming a toolset that `toolsets:` does not declare."""
    model, intents, sink = ctx.intents.model, ctx.intents, ctx.sink
    declared = sorted(model.toolsets)
    for name in declared:
        problem = toolset_name_problem(name) or (
            f"{name!r} is reserved: an include group's `toolset: {TOOLSET_FROM_TAG}` names toolsets after tags"
            if name == TOOLSET_FROM_TAG else None)
        if problem:
            sink.error("toolset-name-invalid", f"toolset {name!r}: {problem}", intents.locate("toolsets", name),
                       "toolset names become OpenAI namespace names: a letter, then letters, digits, '_' or '-', "
                       "at most 64 characters")

    def unknown(name: str, where: tuple[str | int, ...], what: str) -> None:
        close = difflib.get_close_matches(name, declared, n=1)
        sink.error("toolset-unknown", f"{what} names toolset {name!r}, which `toolsets:` does not declare",
                   intents.locate(*where),
                   f"did you mean `{close[0]}`?" if close else
                   f"declare it: toolsets: {{{name}: {{description: \"...\", loading: eager}}}}")

    for key, intent in model.tools.items():
        if intent.toolset is not None and intent.toolset not in model.toolsets:
            unknown(intent.toolset, ("tools", key, "toolset"), f"intent `{key}`")
    for index, group in enumerate(model.include):
        if group.toolset is not None and group.toolset != TOOLSET_FROM_TAG and group.toolset not in model.toolsets:
            unknown(group.toolset, ("include", index, "toolset"), f"include group {group.match!r}")


def _valid(name: str) -> bool:
    return toolset_name_problem(name) is None and name != TOOLSET_FROM_TAG


def place(ctx: Ctx, op: Operation, intent: ToolIntent, group: IncludeSpec | None) -> Placement:
    """The toolset, loading and keywords of `intent`'s tools (see the module docstring). An unknown
    toolset (already reported by `check_toolsets`) places the tool in no toolset."""
    model = ctx.intents.model
    name = intent.toolset if intent.toolset is not None else (group.toolset if group is not None else None)
    toolset: Toolset | None = None
    if name == TOOLSET_FROM_TAG and intent.toolset is None:
        toolset = _tag_toolset(ctx, op, group.loading if group is not None else None)
    elif name is not None and name in model.toolsets and _valid(name):
        spec = model.toolsets[name]
        toolset = ctx.toolsets.setdefault(name, Toolset(name, spec.description.strip(), spec.loading))
    loading: Loading = (intent.loading or (group.loading if group is not None else None)
                        or (toolset.loading if toolset is not None else "eager"))
    keywords = tuple(dict.fromkeys(k.strip() for k in intent.keywords if k.strip()))
    return Placement(toolset.name if toolset is not None else None, loading, keywords)


def _tag_toolset(ctx: Ctx, op: Operation, loading: Loading | None) -> Toolset | None:
    """The toolset named after `op`'s first tag: declared under `toolsets:`, or made from the tag (its
    loading: the include group's `loading` that first names it, else eager)."""
    if not op.tags:
        return None
    tag = op.tags[0]
    name = toolset_from_tag(tag)
    if name is None:
        return None
    known = ctx.toolsets.get(name)
    if known is not None:
        return known
    declared = ctx.intents.model.toolsets.get(name)
    if declared is not None:
        made = Toolset(name, declared.description.strip(), declared.loading)
    else:
        made = Toolset(name, _tag_description(ctx.doc.data, tag), loading or "eager", "tag")
    ctx.toolsets[name] = made
    return made


def _tag_description(data: Any, tag: str) -> str:
    """The first sentence of the spec's description of `tag` (markup removed, at most
    `TAG_DESCRIPTION_MAX` characters), else ``Operations tagged <tag>.``."""
    tags = data.get("tags") if isinstance(data, dict) else None
    for entry in tags if isinstance(tags, list) else []:
        if isinstance(entry, dict) and entry.get("name") == tag and isinstance(entry.get("description"), str):
            text = re.sub(r"<[^>]+>|\[([^\]]*)\]\([^)]*\)", r"\1", entry["description"])
            text = " ".join(text.split())
            first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
            if first:
                return first if len(first) <= TAG_DESCRIPTION_MAX else first[: TAG_DESCRIPTION_MAX - 1] + "\u2026"
    return f"Operations tagged {tag}."


def toolsets_of(ctx: Ctx) -> tuple[Toolset, ...]:
    """Every toolset declared or made from a tag, sorted by name (declared ones that no tool uses too)."""
    model = ctx.intents.model
    for name, spec in model.toolsets.items():
        if _valid(name):
            ctx.toolsets.setdefault(name, Toolset(name, spec.description.strip(), spec.loading))
    return tuple(ctx.toolsets[name] for name in sorted(ctx.toolsets))
