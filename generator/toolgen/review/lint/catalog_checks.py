"""The lint rules that read the catalog as a whole: descriptions and near-synonyms, provider
request limits, tool sizes, coverage, toolsets, strict mode and examples."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from ...codes.table import DESCRIPTION_LIMIT
from ...compile.ir import Tool
from ...dialects import catalog_request_problems, registry
from ...dialects.openai import openai_parameters
from ...emit import compact_json, piece_key
from ...emit.build_report import measure
from ...naming import has_word
from ...tokens import count_tokens
from .examples import example_findings
from .lint_context import IntentView, LintContext
from .rules import (
    CATALOG_REQUEST_LIMITS,
    CATALOG_TOO_MANY_TOKENS,
    CATALOG_TOO_MANY_TOOLS,
    DESCRIPTION_MISSING,
    DESCRIPTION_NO_WHEN_NOT,
    DESCRIPTION_TOO_LONG,
    OPERATIONS_UNCOVERED,
    STRICT_DISABLED,
    SYNONYM_VERBS,
    TOOL_NAME_NEAR_SYNONYM,
    TOOL_TOO_LARGE,
    TOOLSET_NEAR_SYNONYM,
)
from .toolset_rules import Member, near_synonyms


class CatalogChecks(LintContext):
    """The rules about the catalog and its tools' texts (module docstring)."""

    def check_examples(self) -> None:
        """`examples-duplicate`, `examples-length`, `example-ranks-other` (`toolgen.review.lint.examples`)."""
        if not self.model.examples and not any(
            s.examples
            for group in (self.model.tools, self.model.composites, self.model.toolsets)
            for s in group.values()
        ):
            return
        mcp = self.catalogs().tools.get("mcp") or []
        for rule, message, where, tool in example_findings(
            self.model, self.ir, mcp, self.intents.locate, self.op_index
        ):
            self.add(rule, message, where, tool=tool)

    def check_tool_sizes(self) -> None:
        """`tool-too-large`: a tool over `lint.max_tool_tokens` o200k tokens in some dialect, located at
        its intent (or include group), with a drafted remedy: the optional body members to hide, largest
        first, until the rest fits."""
        budget = self.settings.max_tool_tokens
        over: dict[str, tuple[str, int]] = {}  # tool -> (dialect, tokens) of its largest view
        if self.data.sizes is not None:
            for size in self.data.sizes:
                dialect, tokens = max(size.tokens.items(), key=lambda kv: (kv[1], kv[0]), default=("", 0))
                if tokens > budget:
                    over[size.tool] = (dialect, tokens)
        else:  # a tool whose compact JSON is shorter than the budget cannot exceed it (a token is >= 1 char)
            for dialect, tools in self.catalogs().by_dialect().items():
                name_of = registry()[dialect].tool_name
                for entry in tools:
                    text = compact_json(entry)
                    if len(text) > budget:
                        tokens = count_tokens(text)
                        name = name_of(entry)
                        if tokens > budget and tokens > over.get(name, ("", 0))[1]:
                            over[name] = (dialect, tokens)
        if not over:
            return
        views = {t.name: v for v in self.views for t in (v.main, v.preview) if t is not None}
        by_name = {t.name: t for t in self.ir.tools}
        for name in sorted(over):
            dialect, tokens = over[name]
            tool = by_name.get(name)
            view = views.get(name)
            where = self.where(view, "hide", "args") if view is not None else self.intents.locate()
            hint = _hide_remedy(tool, tokens, budget) if tool is not None else None
            self.add(
                TOOL_TOO_LARGE,
                f"tool `{name}` is {tokens:,} o200k tokens in {dialect} (lint.max_tool_tokens {budget:,})",
                where,
                hint,
                tool=name,
            )

    def check_strict(self) -> None:
        """`strict-disabled`: an intent that sets `strict: false`, located at that key; the hint says
        whether OpenAI strict mode could carry its tools (then: remove it)."""
        for view in self.views:
            if view.intent is None or view.intent.strict:
                continue
            tools = [t for t in (view.preview, view.main) if t is not None]
            names = ", ".join(f"`{t.name}`" for t in tools)
            could = [t.name for t in tools if openai_parameters(t.input_schema).strict]
            hint = (
                f"remove `strict: false`: OpenAI strict mode can carry {', '.join(f'`{n}`' for n in could)} "
                "(arguments it cannot express are reshaped and undone by the runtime)"
                if could
                else "nothing to do: no dialect can send these tools strict"
            )
            self.add(
                STRICT_DISABLED,
                f"intent `{view.key}` sets `strict: false`: {names} "
                f"{'is' if len(tools) == 1 else 'are'} sent non-strict",
                self.where(view, "strict"),
                hint,
                tool=view.main.name,
            )

    def _synonyms(self) -> dict[str, list[IntentView]]:
        groups: dict[str, dict[str, list[IntentView]]] = {}
        for view in self.views:
            parts = view.key.lower().split("_")
            verb = parts[0]
            if verb == "look" and len(parts) > 2 and parts[1] == "up":
                verb, parts = "lookup", ["lookup", *parts[2:]]
            if verb not in SYNONYM_VERBS or len(parts) < 2:
                continue
            noun = "_".join([*parts[1:-1], _singular(parts[-1])])
            groups.setdefault(noun, {}).setdefault(verb, []).append(view)
        return {
            noun: [v for vs in verbs.values() for v in vs] for noun, verbs in groups.items() if len(verbs) > 1
        }

    def check_descriptions(self) -> None:
        for view in self.views:
            has_own = bool(view.intent and view.intent.description)
            summary = view.op.node.get("summary")
            description = view.op.node.get("description")
            if (
                not has_own
                and not (isinstance(summary, str) and summary.strip())
                and not (isinstance(description, str) and description.strip())
            ):
                self.add(
                    DESCRIPTION_MISSING,
                    f"`{view.key}` has no description ({view.op.key} has no summary or description either)",
                    self.where(view),
                    tool=view.main.name,
                )
        owners: dict[
            int, IntentView
        ] = {}  # a tool's intent, by identity: one pass, not one per long description
        for view in reversed(self.views):
            owners.update((id(t), view) for t in (view.main, view.preview) if t is not None)
        for tool in self.ir.tools:
            if len(tool.description) > DESCRIPTION_LIMIT:
                owner = owners.get(id(tool))
                loc = self.where(owner, "description") if owner else self.doc.locate(tool.source_pointer)
                self.add(
                    DESCRIPTION_TOO_LONG,
                    f"the description of `{tool.name}` is {len(tool.description):,} "
                    f"characters (limit {DESCRIPTION_LIMIT:,}, generated text included)",
                    loc,
                    tool=tool.name,
                )
        for noun, views in sorted(self._synonyms().items()):
            names = sorted(v.key for v in views)
            first = min(views, key=lambda v: v.key)
            self.add(
                TOOL_NAME_NEAR_SYNONYM,
                f"tool names {', '.join(f'`{n}`' for n in names)} are near-synonyms (same noun {noun!r})",
                self.where(first),
                tool=first.key,
            )
            for view in views:
                others = [v for v in views if v is not view]
                text = (
                    view.intent.description
                    if view.intent and view.intent.description
                    else view.main.description
                )
                if _says_when_not(
                    text,
                    [o.main.name for o in others]
                    + [o.key for o in others]
                    + [o.preview.name for o in others if o.preview],
                ):
                    continue
                self.add(
                    DESCRIPTION_NO_WHEN_NOT,
                    f"`{view.key}` has near-synonym(s) "
                    f"{', '.join(f'`{o.key}`' for o in others)} but its description does not say when not to "
                    "use it",
                    self.where(view, "description"),
                    tool=view.main.name,
                )

    def check_catalog(self) -> None:
        where = self.intents.locate("tools") if self.model.tools else self.intents.locate()
        n = len(self.ir.tools)
        if n > self.settings.max_tools:
            self.add(
                CATALOG_TOO_MANY_TOOLS,
                f"the catalog has {n:,} tools (max_tools {self.settings.max_tools:,})",
                where,
            )
        if not self.ir.tools:
            return
        catalogs = self.catalogs()
        prefix = self.settings.client_prefix
        for name, tools in catalogs.by_dialect().items():
            problems = catalog_request_problems(name, tools, client_prefix=prefix)
            sent = catalogs.deferred.request_view(name, tools)
            if sent is not tools:
                # a client-run search (Chat Completions, Gemini) sends the eager entries and
                # `search_tools`, then adds the found ones from the file: the tools per request are
                # counted on that up-front view, every other limit on the file
                problems = [p for p in problems if p.limit.name != "max_tools"] + [
                    p
                    for p in catalog_request_problems(name, sent, client_prefix=prefix)
                    if p.limit.name == "max_tools"
                ]
            for problem in problems:
                shown = f" (e.g. {', '.join(problem.tools[:3])})" if problem.tools else ""
                self.add(CATALOG_REQUEST_LIMITS, f"{problem.message}{shown}: {problem.fix}", where)
        budget = self.settings.max_catalog_tokens
        # a catalog's tokens are the sum of its tools' tokens (what REPORT.md shows); a catalog whose
        # compact JSON is shorter than the budget cannot exceed it (a token is at least one character)
        sizes = {dialect: 0 for dialect in catalogs.by_dialect()}
        measured = self.data.sizes
        if measured is None and any(
            len(compact_json(tools)) > budget for tools in catalogs.by_dialect().values()
        ):
            measured = measure(catalogs)
        for size in measured or []:
            for dialect, tokens in size.tokens.items():
                sizes[dialect] = sizes.get(dialect, 0) + tokens
        dialect, tokens = max(sizes.items(), key=lambda kv: kv[1])
        if tokens > budget:
            self.add(
                CATALOG_TOO_MANY_TOKENS,
                f"the {dialect} catalog is {tokens:,} o200k tokens (max_catalog_tokens {budget:,})",
                where,
            )

    def check_coverage(self) -> None:
        covered = set(self.ir.covered)
        rest = [op for op in self.operations if op.pointer not in covered]
        if rest:
            shown = ", ".join(op.operation_id or op.key for op in rest[:5])
            more = f" and {len(rest) - 5:,} more" if len(rest) > 5 else ""
            self.add(
                OPERATIONS_UNCOVERED,
                f"{len(rest):,} of {len(self.operations):,} operations of "
                f"{self.doc.display} are not covered by any tool: {shown}{more}",
                self.intents.locate(),
                "add intents (or an `include` group) for the ones agents need; REPORT.md lists them all",
            )

    def check_toolsets(self) -> None:
        """`toolset-near-synonym`: within each toolset, intents a model could confuse
        (`toolgen.review.lint.toolset_rules.near_synonyms`), located at the second intent."""
        by_toolset: dict[str, list[tuple[Member, IntentView]]] = {}
        for view in sorted(self.views, key=lambda v: v.key):
            toolset = view.main.policy.toolset
            if toolset is None:
                continue
            text = (
                view.intent.description if view.intent and view.intent.description else view.main.description
            )
            tools = (view.main.name, *((view.preview.name,) if view.preview else ()))
            by_toolset.setdefault(toolset, []).append((Member(view.key, tools, text), view))
        # a split Responses catalog (more namespaces than one request carries) is checked part by part
        sent = self.catalogs().deferred.catalogs_of("openai.responses") if self.ir.tools else {}
        largest = max((len(catalog) for catalog in sent.values()), default=0)
        if largest > self.settings.max_tools:
            shown = f" (its largest part, of {len(sent)})" if len(sent) > 1 else ""
            self.add(
                CATALOG_REQUEST_LIMITS,
                f"the OpenAI Responses catalog{shown} has {largest:,} top-level tools "
                f"(functions of no toolset, namespaces, tool_search; {self.settings.max_tools} per request)",
                self.intents.locate("toolsets") if self.model.toolsets else self.intents.locate(),
                "put the tools of no toolset into toolsets (`toolset:`, or `toolset: from_tag` on an include "
                "group): a namespace is one top-level entry; namespaces of deferred tools are spread over "
                "several parts, the rest is in every part",
            )
        for toolset, members in sorted(by_toolset.items()):
            views = {m.key: v for m, v in members}
            group = [
                m for m, _ in members
            ]  # a pure function of the members' keys, tools and texts: remembered
            pairs = self.data.remember(
                piece_key("near-synonyms 1", [(m.key, m.tools, m.description) for m in group]),
                partial(near_synonyms, group),
            )
            for first, second, why in pairs:
                self.add(
                    TOOLSET_NEAR_SYNONYM,
                    f"toolset `{toolset}`: `{first.key}` and `{second.key}` are "
                    f"near-synonyms ({why}) and neither description names the other",
                    self.where(views[second.key], "description"),
                    tool=views[second.key].main.name,
                )


_WHEN_NOT = re.compile(
    r"\b(do not|don't|never|not for|instead|rather than|only for|only when|not to)\b|"
    r"\buse \w+ (for|to|when|instead)\b",
    re.IGNORECASE,
)


def _hide_remedy(tool: Tool, tokens: int, budget: int) -> str | None:
    """A drafted `hide:` for `tool`: its optional body members, largest first, until the rest of its
    input schema (scaled from bytes to the tool's measured tokens) fits `budget`; None when hiding
    optional body members cannot bring it under."""
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    raw = schema.get("properties")
    props: dict[str, Any] = raw if isinstance(raw, dict) else {}
    required = set(schema.get("required") or [])
    wire = {b.arg: b.wire_name for b in tool.policy.bindings if b.location == "body" and b.wire_name}
    total = len(compact_json(schema)) + len(compact_json(tool.output_schema))
    per_byte = tokens / max(total, 1)
    sizes = sorted(
        ((len(compact_json(v)), k) for k, v in props.items() if k in wire and k not in required),
        key=lambda sk: (-sk[0], sk[1]),
    )
    chosen: list[str] = []
    rest = total
    for size, arg in sizes:
        if rest * per_byte <= budget * 0.9:
            break
        chosen.append(wire[arg])
        rest -= size
    if not chosen or rest * per_byte > budget:
        return None
    shown = ", ".join(chosen)
    return (
        f"hide the largest optional body members (about {rest * per_byte:,.0f} tokens left): "
        f"`hide: [{shown}]`, or project the output (`output.fields`)"
    )


def _says_when_not(text: str, others: list[str]) -> bool:
    """Whether a description names one of the other tools or gives negative guidance."""
    lowered = text.lower()
    if any(has_word(lowered, o.lower()) for o in others):
        return True
    return bool(_WHEN_NOT.search(text))


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word
