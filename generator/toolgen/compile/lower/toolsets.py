"""Stage `lower`, toolsets: which toolset (namespace) each tool belongs to and how it loads.

Input: the intent map's `toolsets:` mapping, an intent (explicit, with its own `toolset`/`loading`) or
an include group (`toolset: NAME`, `from_tag` or `from_path`, `loading`), and the operation (its
first tag, its path). Output: a `Placement` per intent (toolset name or None, loading, keywords) and, at the end, the
`Toolset`s the IR carries.

Rules: a tool's `loading` wins over its include group's, which wins over its toolset's; the default is
``eager``. An explicit `toolset` must be declared under `toolsets:`; ``from_tag`` names the toolset after
the operation's first tag (`toolgen.naming.toolset_from_tag`), described by the spec's tag
description, and ``from_path`` after the path's first segment that is not a version (``/v1/customers``
-> customers), for specs without tags; a toolset the map declares under that name keeps its own
description and loading. Toolset names keep `TOOLSET_NAME_RE`
(every dialect's namespace and name rules). Bad names and unknown toolsets are located errors.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ...naming import toolset_from_tag, toolset_name_problem
from ...search.tool import SEARCH_TOOL_NAME
from ..intent import TOOLSET_FROM_PATH, TOOLSET_FROM_TAG, IncludeSpec, ToolsetSpec
from ..ir import Loading, Tool, Toolset
from ..operations import Operation
from .context import Ctx
from .text import expansion_texts, operation_examples

Origin = Literal["tag", "path"]
#: longest toolset description taken from a spec's tag (a model reads it before it searches)
TAG_DESCRIPTION_MAX = 160


@dataclass(frozen=True)
class Placement:
    toolset: str | None
    loading: Loading
    keywords: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()  # the intent's `examples`, whitespace collapsed, each once
    not_for: str | None = None  # the intent's `not_for`, whitespace collapsed


def _declared(name: str, spec: ToolsetSpec) -> Toolset:
    """The toolset `toolsets:` declares as `name`."""
    return Toolset(name, spec.description.strip(), spec.loading, examples=expansion_texts(spec.examples))


def check_toolsets(ctx: Ctx) -> None:
    """Located errors for toolset names that break `TOOLSET_NAME_RE` and for intents or include groups
    naming a toolset that `toolsets:` does not declare."""
    model, intents, sink = ctx.intents.model, ctx.intents, ctx.sink
    declared = sorted(model.toolsets)
    for name in declared:
        problem = toolset_name_problem(name) or (
            f"{name!r} is reserved: an include group's `toolset: {name}` names toolsets after tags or paths"
            if name in _DERIVED
            else None
        )
        if problem:
            sink.error(
                "toolset-name-invalid",
                f"toolset {name!r}: {problem}",
                intents.locate("toolsets", name),
                "toolset names become OpenAI namespace names: a letter, then letters, digits, '_' or '-', "
                "at most 64 characters",
            )

    def unknown(name: str, where: tuple[str | int, ...], what: str) -> None:
        close = difflib.get_close_matches(name, declared, n=1)
        sink.error(
            "toolset-unknown",
            f"{what} names toolset {name!r}, which `toolsets:` does not declare",
            intents.locate(*where),
            f"did you mean `{close[0]}`?"
            if close
            else f'declare it: toolsets: {{{name}: {{description: "...", loading: eager}}}}',
        )

    for key, intent in model.tools.items():
        if intent.toolset is not None and intent.toolset not in model.toolsets:
            unknown(intent.toolset, ("tools", key, "toolset"), f"intent `{key}`")
    for key, composite in model.composites.items():
        if composite.toolset is not None and composite.toolset not in model.toolsets:
            unknown(composite.toolset, ("composites", key, "toolset"), f"composite `{key}`")
    for index, group in enumerate(model.include):
        if (
            group.toolset is not None
            and group.toolset not in _DERIVED
            and group.toolset not in model.toolsets
        ):
            unknown(group.toolset, ("include", index, "toolset"), f"include group {group.match!r}")


_DERIVED = (TOOLSET_FROM_TAG, TOOLSET_FROM_PATH)


def _valid(name: str) -> bool:
    return toolset_name_problem(name) is None and name not in _DERIVED


def place(
    ctx: Ctx,
    op: Operation,
    *,
    toolset: str | None,
    loading: Loading | None,
    keywords: Iterable[str],
    group: IncludeSpec | None,
    examples: Iterable[str] = (),
    not_for: str | None = None,
) -> Placement:
    """The toolset, loading, keywords and search expansions (`examples`, with the map's top-level
    ones for `op`; `not_for`) of the tools of an intent that states them (see the module
    docstring). An unknown toolset (already reported by `check_toolsets`) places the tool in no
    toolset."""
    model = ctx.intents.model
    name = toolset if toolset is not None else (group.toolset if group is not None else None)
    chosen: Toolset | None = None
    if name in _DERIVED and toolset is None:
        loading_ = group.loading if group is not None else None
        if name == TOOLSET_FROM_TAG:  # a tag's toolset is made once: its description is read then
            tag = toolset_from_tag(op.tags[0]) if op.tags else None
            known = ctx.toolsets.get(tag) if tag is not None else None
            chosen = known if known is not None else _derived_toolset(ctx, *_tag_source(ctx, op), loading_)
        else:
            chosen = _derived_toolset(ctx, *_path_source(op), loading_)
    elif name is not None and name in model.toolsets and _valid(name):
        spec = model.toolsets[name]
        chosen = ctx.toolsets.setdefault(name, _declared(name, spec))
    placed: Loading = (
        loading
        or (group.loading if group is not None else None)
        or (chosen.loading if chosen is not None else "eager")
    )
    words = tuple(dict.fromkeys(k.strip() for k in keywords if k.strip()))
    guidance = " ".join(not_for.split()) if not_for else None
    return Placement(
        chosen.name if chosen is not None else None,
        placed,
        words,
        expansion_texts([*examples, *operation_examples(model.examples, op)]),
        guidance,
    )


def _tag_source(ctx: Ctx, op: Operation) -> tuple[str | None, str, Origin]:
    """The toolset name and description `from_tag` gives `op`: its first tag, described by the spec."""
    if not op.tags:
        return None, "", "tag"
    return toolset_from_tag(op.tags[0]), tag_description(ctx.doc.data, op.tags[0]), "tag"


#: path segments that are versions or API prefixes, not resources (``/v1/...``, ``/api/...``)
_NOT_RESOURCES = re.compile(r"^(v[0-9]+(\.[0-9]+)*|api|rest)$", re.IGNORECASE)


def _path_source(op: Operation) -> tuple[str | None, str, Origin]:
    """The toolset name and description `from_path` gives `op` (`path_toolset`)."""
    name, description = path_toolset(op.url_path)
    return name, description, "path"


def path_toolset(url_path: str) -> tuple[str | None, str]:
    """The toolset name and description `from_path` gives a path: its first literal segment that is not
    a version or API prefix (``/v1/customers/{id}`` -> customers, "Operations under /customers.");
    (None, "") when it has none (``/``, ``/{id}``, ``/?Action=X``)."""
    for segment in url_path.split("?", 1)[0].split("/"):
        if segment and not segment.startswith("{") and not _NOT_RESOURCES.match(segment):
            return toolset_from_tag(segment), f"Operations under /{segment}."
    return None, ""


def _derived_toolset(
    ctx: Ctx, name: str | None, description: str, origin: Origin, loading: Loading | None
) -> Toolset | None:
    """The toolset named `name` (from a tag or a path): declared under `toolsets:`, or made here with
    `description` and the include group's `loading` (else eager) the first time it is named."""
    if name is None:
        return None
    known = ctx.toolsets.get(name)
    if known is not None:
        return known
    declared = ctx.intents.model.toolsets.get(name)
    if declared is not None:
        made = _declared(name, declared)
    else:
        made = Toolset(name, description or f"Operations of {name}.", loading or "eager", origin)
    ctx.toolsets[name] = made
    return made


def _strip_markup(text: str) -> str:
    """HTML tags dropped, Markdown links reduced to their text."""
    return re.sub(r"<[^>]+>|\[([^\]]*)\]\([^)]*\)", r"\1", text)


def tag_description(data: Any, tag: str, clean: Callable[[str], str] = _strip_markup) -> str:
    """The first sentence of the spec's description of `tag` (made plain by `clean`, at most
    `TAG_DESCRIPTION_MAX` characters), else ``Operations tagged <tag>.``."""
    tags = data.get("tags") if isinstance(data, dict) else None
    for entry in tags if isinstance(tags, list) else []:
        if isinstance(entry, dict) and entry.get("name") == tag and isinstance(entry.get("description"), str):
            text = " ".join(clean(entry["description"]).split())
            first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
            if first:
                return (
                    first
                    if len(first) <= TAG_DESCRIPTION_MAX
                    else first[: TAG_DESCRIPTION_MAX - 1] + "\u2026"
                )
    return f"Operations tagged {tag}."


def toolsets_of(ctx: Ctx) -> tuple[Toolset, ...]:
    """Every toolset declared or made from a tag, sorted by name (declared ones that no tool uses too)."""
    model = ctx.intents.model
    for name, spec in model.toolsets.items():
        if _valid(name):
            ctx.toolsets.setdefault(name, _declared(name, spec))
    return tuple(ctx.toolsets[name] for name in sorted(ctx.toolsets))


def check_reserved_names(ctx: Ctx, tools: list[Tool]) -> None:
    """With deferred tools, `SEARCH_TOOL_NAME` is the search meta-tool's name in the MCP and Gemini
    catalogs: a tool of that name is a located error (``tool-name-reserved``)."""
    if not any(t.policy.loading == "deferred" for t in tools):
        return
    for tool in tools:
        if tool.name == SEARCH_TOOL_NAME:
            key = tool.policy.intent
            where = (
                ctx.intents.locate("tools", key)
                if key in ctx.intents.model.tools
                else ctx.doc.locate(tool.source_pointer)
            )
            ctx.sink.error(
                "tool-name-reserved",
                f"tool name {SEARCH_TOOL_NAME!r} is the search meta-tool's when tools are deferred",
                where,
                "rename the intent (or give the operation an explicit intent with another name)",
            )


#: the longest toolset description `with_resources` writes (a declared one may be as long)
TOOLSET_DESCRIPTION_MAX = 200
#: at most this many resources named in a toolset description
TOOLSET_RESOURCES = 6


def with_resources(description: str, paths: Iterable[str]) -> str:
    """`description` followed by the resources the operations at `paths` act on: the last literal
    segment of each path, most operations first (then by name), at most `TOOLSET_RESOURCES`, within
    `TOOLSET_DESCRIPTION_MAX` characters ("Interact with GitHub Issues. Tools for issues, labels,
    comments."); `description` alone when none fits."""
    counts: dict[str, int] = {}
    for path in paths:
        literal = [
            s
            for s in [s for s in path.split("?", 1)[0].split("/") if s]
            if not (s.startswith("{") and s.endswith("}"))
        ]
        noun = " ".join(w for w in re.split(r"[-_.~]+", literal[-1]) if w) if literal else ""
        if noun:
            counts[noun] = counts.get(noun, 0) + 1
    base = description.rstrip()
    if not counts:
        return base
    base = base if base.endswith((".", "!", "?", "\u2026")) else base + "."
    chosen: list[str] = []
    for noun, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOOLSET_RESOURCES]:
        if len(f"{base} Tools for {', '.join([*chosen, noun])}.") > TOOLSET_DESCRIPTION_MAX:
            break
        chosen.append(noun)
    return f"{base} Tools for {', '.join(chosen)}." if chosen else base
