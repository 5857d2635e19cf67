"""OpenAI's Responses API catalog with namespaces, deferred loading and tool search
(``docs/provider-rules.md`` A.1 "Responses API shape" and F.1 "Tool search and namespaces").

Input: the IR `Tool`s, their Chat Completions entries (`toolgen.dialects.openai`, the same strict
parameters) and the API's toolsets. Output: `responses_catalog` -> the ``tools`` array of a Responses
request (``openai.responses.json``); `responses_upfront` -> what the model sees of it before it
searches; `check_responses_catalog` -> the `Violation`s of such a catalog.

Shape (F.1): a function is flat, ``{"type": "function", "name", "description", "parameters",
"strict"}`` (A.1; `strict` explicit, because the Responses API defaults it to true); a toolset is
``{"type": "namespace", "name", "description", "tools": [function, ...]}``; a deferred function carries
``"defer_loading": true`` (inside its namespace, or at the top level when it has no toolset; never on
the namespace object itself); one ``{"type": "tool_search"}`` entry makes deferred functions findable
(hosted search). Before searching, the model sees eager functions whole, a deferred function outside a
namespace by name and description (its parameters are deferred), and a namespace by name and
description (plus its eager functions); loaded definitions are appended at the end of the context.
F.1 advises fewer than 10 functions per namespace (`NAMESPACE_ADVISED_FUNCTIONS`); a larger
namespace is allowed and reported by `namespace_advice`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..compile.ir import Tool, Toolset
from ..naming import TOOLSET_NAME_RE
from ._base import allows_code_callers
from ._check import Report, Violation
from .openai import check_openai_catalog

JSON = Any

TOOL_SEARCH: dict[str, JSON] = {"type": "tool_search"}
#: F.1: "Keep fewer than 10 functions per namespace"
NAMESPACE_ADVISED_FUNCTIONS = 10


#: the callers of a function model-written code may call (``allowed_callers``; absent: direct calls only)
PROGRAMMATIC_CALLERS: tuple[str, ...] = ("direct", "programmatic")


def responses_function(
    chat_entry: dict[str, JSON], *, deferred: bool, programmatic: bool = False
) -> dict[str, JSON]:
    """A Chat Completions function tool (``{"type": "function", "function": {...}}``) in the flat
    Responses shape, with ``defer_loading: true`` when `deferred` and ``allowed_callers: ["direct",
    "programmatic"]`` when `programmatic` (`toolgen.dialects._base.allows_code_callers`)."""
    fn = chat_entry["function"]
    out: dict[str, JSON] = {
        "type": "function",
        "name": fn["name"],
        "description": fn.get("description", ""),
        "parameters": fn["parameters"],
        "strict": fn["strict"],
    }
    if deferred:
        out["defer_loading"] = True
    if programmatic:
        out["allowed_callers"] = list(PROGRAMMATIC_CALLERS)
    return out


def responses_catalog(
    tools: Sequence[Tool], chat_entries: Sequence[dict[str, JSON]], toolsets: Sequence[Toolset]
) -> list[dict[str, JSON]]:
    """The Responses ``tools`` array: the functions of no toolset first (catalog order), then one
    namespace per toolset that has tools (by name), then ``tool_search`` when any function is deferred."""
    described = {t.name: t.description for t in toolsets}
    loose: list[dict[str, JSON]] = []
    grouped: dict[str, list[dict[str, JSON]]] = {}
    any_deferred = False
    for tool, entry in zip(tools, chat_entries, strict=True):
        deferred = tool.policy.loading == "deferred"
        any_deferred = any_deferred or deferred
        fn = responses_function(entry, deferred=deferred, programmatic=allows_code_callers(tool))
        if tool.policy.toolset is None:
            loose.append(fn)
        else:
            grouped.setdefault(tool.policy.toolset, []).append(fn)
    out = list(loose)
    for name in sorted(grouped):
        out.append(
            {
                "type": "namespace",
                "name": name,
                "description": described.get(name) or f"Tools of the {name} toolset.",
                "tools": grouped[name],
            }
        )
    if any_deferred:
        out.append(dict(TOOL_SEARCH))
    return out


def responses_upfront(catalog: Sequence[dict[str, JSON]]) -> list[dict[str, JSON]]:
    """What the model sees of `catalog` before it searches (F.1): eager functions whole; a deferred
    function outside a namespace as ``{type, name, description}``; a namespace as ``{type, name,
    description}`` plus its eager functions; the ``tool_search`` entry."""
    seen: list[dict[str, JSON]] = []
    for entry in catalog:
        kind = entry.get("type")
        if kind == "function" and entry.get("defer_loading") is True:
            seen.append(
                {"type": "function", "name": entry.get("name"), "description": entry.get("description")}
            )
        elif kind == "namespace":
            eager = [f for f in entry.get("tools") or [] if f.get("defer_loading") is not True]
            head: dict[str, JSON] = {
                "type": "namespace",
                "name": entry.get("name"),
                "description": entry.get("description"),
            }
            if eager:
                head["tools"] = eager
            seen.append(head)
        else:
            seen.append(entry)
    return seen


def namespace_advice(catalog: Sequence[dict[str, JSON]]) -> list[tuple[str, int]]:
    """Namespaces with `NAMESPACE_ADVISED_FUNCTIONS` functions or more (F.1 advises fewer), as
    ``(name, functions)``."""
    return [
        (str(e.get("name")), len(e.get("tools") or []))
        for e in catalog
        if e.get("type") == "namespace" and len(e.get("tools") or []) >= NAMESPACE_ADVISED_FUNCTIONS
    ]


def check_responses_catalog(
    catalog: list[dict[str, JSON]],
    *,
    max_tools: int | None = None,
    check_chat: Callable[[list[dict[str, JSON]]], list[Violation]] | None = None,
) -> list[Violation]:
    """Check a Responses ``tools`` array (A.1, A.2, F.1).

    Top-level entries are functions, namespaces or ``tool_search``; `max_tools` caps the top-level
    entries (A.1: 128; None skips it). A namespace has a name keeping `TOOLSET_NAME_RE`, a non-empty
    string description, a non-empty list of functions (no nested namespaces) and no
    ``defer_loading`` of its own. ``defer_loading`` is a boolean; a deferred function needs a
    ``tool_search`` entry, and there is at most one. Every function, wherever it sits, passes the
    Chat Completions checks of its strict parameters (`check_openai_catalog`) and names are unique
    across the whole catalog. `check_chat`: what checks those functions as a Chat Completions catalog
    (default: ``check_openai_catalog(chat, max_tools=None)``; the build passes one that remembers each
    function's verdict, `toolgen.builder.incremental.conformance_problems`)."""
    report = Report("openai-responses")
    if not isinstance(catalog, list):
        report.add("", "", "A.1-shape", "catalog must be a list of tools")
        return report.items
    if max_tools is not None and len(catalog) > max_tools:
        report.add("", "", "A.1-max-tools", f"{len(catalog)} top-level tools > {max_tools} per request")
    functions: list[tuple[str, dict[str, JSON]]] = []
    deferred = searches = 0
    for i, entry in enumerate(catalog):
        where = f"/{i}"
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind == "tool_search":
            searches += 1
            continue
        if kind == "function":
            functions.append((where, entry))
            continue
        if kind != "namespace":
            report.add(
                f"#{i}", where, "F.1-shape", "a top-level tool is a function, a namespace or tool_search"
            )
            continue
        name = entry.get("name")
        label = name if isinstance(name, str) and name else f"#{i}"
        if not isinstance(name, str) or not TOOLSET_NAME_RE.fullmatch(name):
            report.add(
                label,
                where + "/name",
                "F.1-namespace-name",
                f"namespace name {name!r} does not match {TOOLSET_NAME_RE.pattern}",
            )
        if not isinstance(entry.get("description"), str) or not entry["description"].strip():
            report.add(
                label,
                where + "/description",
                "F.1-namespace-description",
                "a namespace needs a description (the model reads it before it searches)",
            )
        if "defer_loading" in entry:
            report.add(
                label,
                where + "/defer_loading",
                "F.1-namespace-defer",
                "defer_loading applies to the functions inside a namespace, not to the namespace",
            )
        inner = entry.get("tools")
        if not isinstance(inner, list) or not inner:
            report.add(
                label, where + "/tools", "F.1-namespace-tools", "a namespace holds a non-empty list of tools"
            )
            continue
        for j, fn in enumerate(inner):
            if not isinstance(fn, dict) or fn.get("type") != "function":
                report.add(
                    label, f"{where}/tools/{j}", "F.1-namespace-tools", "a namespace holds functions only"
                )
                continue
            functions.append((f"{where}/tools/{j}", fn))
    chat: list[dict[str, JSON]] = []
    for where, fn in functions:
        name = fn.get("name")
        label = name if isinstance(name, str) else where
        if "defer_loading" in fn and not isinstance(fn["defer_loading"], bool):
            report.add(
                label, where + "/defer_loading", "F.1-defer-loading", "defer_loading must be a boolean"
            )
        deferred += fn.get("defer_loading") is True
        callers = fn.get("allowed_callers", list(PROGRAMMATIC_CALLERS))
        if (
            not isinstance(callers, list)
            or not callers
            or len(set(map(str, callers))) != len(callers)
            or not all(c in PROGRAMMATIC_CALLERS for c in callers)
        ):
            report.add(
                label,
                where + "/allowed_callers",
                "F.1-allowed-callers",
                'allowed_callers must be distinct values of ["direct", "programmatic"]',
            )
        if "function" in fn:
            report.add(
                label, where, "A.1-responses-shape", 'Responses functions are flat (no nested "function")'
            )
        chat.append(
            {
                "type": "function",
                "function": {
                    k: v for k, v in fn.items() if k not in ("type", "defer_loading", "allowed_callers")
                },
            }
        )
    for v in (check_chat or _check_chat)(chat):
        report.add(v.tool, v.pointer.replace("/function", "", 1), v.rule, v.message)
    if deferred and not searches:
        report.add("", "", "F.1-tool-search", f"{deferred} deferred functions but no tool_search entry")
    if searches > 1:
        report.add("", "", "F.1-tool-search", f"{searches} tool_search entries; one is enough")
    return report.items


def _check_chat(chat: list[dict[str, JSON]]) -> list[Violation]:
    return check_openai_catalog(chat, max_tools=None)
