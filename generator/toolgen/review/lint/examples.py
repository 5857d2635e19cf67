"""Lint, search expansions: the requests an intent map gives in `examples` (per intent and per
toolset), checked against each other and against the API's own tool search.

Input: the intent map's model, the IR (its tools' policy rows and toolsets) and the API's MCP catalog
entries. Output: `example_findings` -> ``(rule, message, location, tool)`` for

- `examples-duplicate`: one request (case and spacing aside) given for two intents or toolsets;
- `examples-length`: a request of fewer than `MIN_WORDS` words or more than `MAX_WORDS`;
- `example-ranks-other`: a request for which tool search (`toolgen.runtime.search.ToolIndex`, over the
  same policy rows and catalog the build writes) ranks another operation first.

Pure and deterministic; nothing is ranked when the map gives no `examples` (a map without them pays
nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...compile.intent import IntentMap
from ...compile.ir import ApiIR
from ...diagnostics import SourceLocation
from .rules import EXAMPLE_RANKS_OTHER, EXAMPLES_DUPLICATE, EXAMPLES_LENGTH, Rule

MIN_WORDS = 3
MAX_WORDS = 30

Finding = tuple[Rule, str, SourceLocation | None, str | None]
Locate = Callable[..., SourceLocation | None]


def _given(model: IntentMap) -> list[tuple[tuple[str, ...], str, int, str]]:
    """Every request of the map: (where in the map, owner label, index, text), in map order."""
    out: list[tuple[tuple[str, ...], str, int, str]] = []
    for section, items in (("tools", model.tools), ("composites", model.composites), ("toolsets", model.toolsets)):
        for key, spec in items.items():
            for i, text in enumerate(spec.examples):
                out.append(((section, key), key if section != "toolsets" else f"toolset {key}", i, text))
    return out


def example_findings(model: IntentMap, ir: ApiIR, mcp_catalog: Sequence[Mapping[str, Any]],
                     locate: Locate) -> list[Finding]:
    """The findings of the module docstring; `locate(*path)` gives an intent-map location."""
    given = _given(model)
    if not given:
        return []
    out: list[Finding] = []
    first: dict[str, str] = {}
    for (section, key), owner, i, text in given:
        words = text.split()
        where = locate(section, key, "examples", i)
        if not MIN_WORDS <= len(words) <= MAX_WORDS:
            message = f"{owner}: request {text!r} has {len(words)} word(s) (a request has {MIN_WORDS} to {MAX_WORDS})"
            out.append((EXAMPLES_LENGTH, message, where, None))
        norm = " ".join(w.casefold() for w in words)
        if norm in first and first[norm] != owner:
            out.append((EXAMPLES_DUPLICATE, f"{owner}: request {text!r} is also given for {first[norm]}", where,
                        None))
        first.setdefault(norm, owner)
    out.extend(_ranking(given, ir, mcp_catalog, locate))
    return out


def _ranking(given: list[tuple[tuple[str, ...], str, int, str]], ir: ApiIR,
             mcp_catalog: Sequence[Mapping[str, Any]], locate: Locate) -> list[Finding]:
    """`example-ranks-other` for each request of an intent that tool search ranks below another one."""
    from ...runtime.search import ToolIndex  # the runtime's ranking; imported only when a map has examples

    intents = {t.policy.intent or t.name for t in ir.tools}
    rows = [t.policy.to_json() for t in ir.tools]
    index = ToolIndex({"tools": rows, "toolsets": [s.to_json() for s in ir.toolsets]}, mcp_catalog)
    intent_of = {str(r["tool"]): str(r.get("intent") or r["tool"]) for r in rows}
    out: list[Finding] = []
    for (section, key), _, i, text in given:
        if section == "toolsets" or key not in intents:
            continue
        hits = index.search(text, limit=5)
        ranked = [intent_of.get(h.tool, h.tool) for h in hits]
        if not ranked:
            out.append((EXAMPLE_RANKS_OTHER, f"`{key}`: tool search finds no tool for its request {text!r}",
                        locate(section, key, "examples", i), None))
        elif ranked[0] != key:
            place = f"ranks it {ranked.index(key) + 1}" if key in ranked else "does not rank it in the first 5"
            message = f"`{key}`: tool search ranks `{ranked[0]}` first for its request {text!r} and {place}"
            out.append((EXAMPLE_RANKS_OTHER, message, locate(section, key, "examples", i), None))
    return out


__all__ = ["MAX_WORDS", "MIN_WORDS", "example_findings"]
