"""Lint, search expansions: the requests an intent map gives in `examples` (per intent and per
toolset), checked against each other and against the API's own tool search.

Input: the intent map's model, the IR (its tools' policy rows and toolsets) and the API's MCP catalog
entries. Output: `example_findings` -> ``(rule, message, location, tool)`` for

- `examples-operation-unknown`: a key of the top-level `examples` that names no operation of the spec,
  or one no tool covers;
- `examples-duplicate`: one request (case and spacing aside) given for two intents or toolsets;
- `examples-length`: a request of fewer than `MIN_WORDS` words or more than `MAX_WORDS`;
- `example-ranks-other`: a request for which tool search
  (`toolgen.runtime.serving.tool_index.ToolIndex`, over the same policy rows and catalog the build
  writes) ranks another operation first.

Pure and deterministic; nothing is ranked when the map gives no `examples` (a map without them pays
nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...compile.intent import IntentMap
from ...compile.ir import ApiIR
from ...compile.operations import OperationIndex
from ...diagnostics import SourceLocation
from .rules import EXAMPLE_RANKS_OTHER, EXAMPLES_DUPLICATE, EXAMPLES_LENGTH, EXAMPLES_OPERATION_UNKNOWN, Rule

MIN_WORDS = 3
MAX_WORDS = 30

Finding = tuple[Rule, str, SourceLocation | None, str | None]
Locate = Callable[..., SourceLocation | None]


def _given(model: IntentMap, intent_of_op: Mapping[str, str]) -> list[tuple[tuple[str, ...], str, int, str]]:
    """Every request of the map: (where in the map, owner label, index, text), in map order; a request
    of the top-level `examples` is owned by the intent of its operation's tool (`intent_of_op`)."""
    out: list[tuple[tuple[str, ...], str, int, str]] = []
    for section, items in (
        ("tools", model.tools),
        ("composites", model.composites),
        ("toolsets", model.toolsets),
    ):
        for key, spec in items.items():
            for i, text in enumerate(spec.examples):
                out.append(((section, key), key if section != "toolsets" else f"toolset {key}", i, text))
    for ref, texts in model.examples.items():
        if ref in intent_of_op:
            out.extend((("examples", ref), intent_of_op[ref], i, text) for i, text in enumerate(texts))
    return out


def example_findings(
    model: IntentMap,
    ir: ApiIR,
    mcp_catalog: Sequence[Mapping[str, Any]],
    locate: Locate,
    operations: OperationIndex,
) -> list[Finding]:
    """The findings of the module docstring; `locate(*path)` gives an intent-map location, `operations`
    finds the spec's operations by the references the top-level `examples` uses."""
    out: list[Finding] = []
    intent_of_op: dict[str, str] = {}
    covering = {t.source_pointer: t.policy.intent or t.name for t in ir.tools}
    for ref in model.examples:
        op = operations.find(ref)
        if op is None or op.pointer not in covering:
            why = "is not an operation of the spec" if op is None else "is an operation no tool covers"
            out.append(
                (EXAMPLES_OPERATION_UNKNOWN, f"examples: {ref!r} {why}", locate("examples", ref), None)
            )
        else:
            intent_of_op[ref] = covering[op.pointer]
    given = _given(model, intent_of_op)
    if not given:
        return out
    first: dict[str, str] = {}
    for (section, key), owner, i, text in given:
        words = text.split()
        where = _at(locate, section, key, i)
        if not MIN_WORDS <= len(words) <= MAX_WORDS:
            message = f"{owner}: request {text!r} has {len(words)} word(s) (a request has {MIN_WORDS} to {MAX_WORDS})"
            out.append((EXAMPLES_LENGTH, message, where, None))
        norm = " ".join(w.casefold() for w in words)
        if norm in first and first[norm] != owner:
            out.append(
                (
                    EXAMPLES_DUPLICATE,
                    f"{owner}: request {text!r} is also given for {first[norm]}",
                    where,
                    None,
                )
            )
        first.setdefault(norm, owner)
    out.extend(_ranking(given, ir, mcp_catalog, locate))
    return out


def _ranking(
    given: list[tuple[tuple[str, ...], str, int, str]],
    ir: ApiIR,
    mcp_catalog: Sequence[Mapping[str, Any]],
    locate: Locate,
) -> list[Finding]:
    """`example-ranks-other` for each request of an intent that tool search ranks below another one."""
    from ...runtime.serving.tool_index import (
        ToolIndex,  # the runtime's ranking; imported only when a map has examples
    )

    intents = {t.policy.intent or t.name for t in ir.tools}
    rows = [t.policy.to_json() for t in ir.tools]
    index = ToolIndex({"tools": rows, "toolsets": [s.to_json() for s in ir.toolsets]}, mcp_catalog)
    intent_of = {str(r["tool"]): str(r.get("intent") or r["tool"]) for r in rows}
    out: list[Finding] = []
    for (section, ref), owner, i, text in given:
        key = owner if section == "examples" else ref
        if section == "toolsets" or key not in intents:
            continue
        hits = index.search(text, limit=5)
        ranked = [intent_of.get(h.tool, h.tool) for h in hits]
        if not ranked:
            out.append(
                (
                    EXAMPLE_RANKS_OTHER,
                    f"`{key}`: tool search finds no tool for its request {text!r}",
                    _at(locate, section, ref, i),
                    None,
                )
            )
        elif ranked[0] != key:
            place = (
                f"ranks it {ranked.index(key) + 1}" if key in ranked else "does not rank it in the first 5"
            )
            message = f"`{key}`: tool search ranks `{ranked[0]}` first for its request {text!r} and {place}"
            out.append((EXAMPLE_RANKS_OTHER, message, _at(locate, section, ref, i), None))
    return out


def _at(locate: Locate, section: str, key: str, index: int) -> SourceLocation | None:
    """The location of request `index` of `key` in `section` (the top-level `examples` has no
    ``examples`` member under its key)."""
    if section == "examples":
        return locate("examples", key, index)
    return locate(section, key, "examples", index)


__all__ = ["MAX_WORDS", "MIN_WORDS", "example_findings"]
