"""Gemini's Interactions API catalog: the ``tools`` of an ``interactions.create`` request
(``gemini.interactions.json``), typed by the official SDK as ``google.genai.interactions.ToolParam``.

Input: the IR `Tool`s and their Gemini declarations (`toolgen.dialects.gemini`: ``parameters`` in the
OpenAPI-3.0 subset, or ``parametersJsonSchema``). Output: `interactions_catalog` -> the ``tools``
array; `interactions_upfront` -> what one request carries before any search;
`check_interactions_catalog` -> its `Violation`s.

Shape (google-genai 3.6, ``FunctionParam`` and ``ToolSearchParam``): a function is ``{"type":
"function", "name", "description", "parameters"}`` where ``parameters`` is a JSON Schema (the SDK:
"Supports a subset of JSON Schema"; ``minLength``, ``maxLength``, ``uniqueItems`` and a few more are
ignored, so the runtime enforces them, as for every dialect).

Deferred tools: the file holds every function (the pool a client draws from), a deferred one marked
``"defer_loading": true``, and then one client-run search entry, ``{"type": "tool_search",
"execution": "client", "name": "search_tools", "description", "parameters"}`` (the meta-tool of
`toolgen.search.tool`, answered from ``search.json``). A request carries the entries without
``defer_loading`` (`interactions_upfront`); the client answers a ``tool_search_call`` with the found
functions' definitions from this file. Hosted search would show every deferred function's name and
short description up front (1,800 of them for the whole GitHub API), which no up-front budget holds.

The arguments are the Gemini declaration's: its ``parametersJsonSchema`` as is, or its ``parameters``
written as JSON Schema (`json_schema_of`: lower-case types, ``nullable`` as a null type, the
``enum`` format dropped), so a call is decoded with the Gemini dialect's argument rewrites (policy.json
``dialect_rewrites.gemini``; ``toolgen call --dialect gemini``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..compile.ir import Tool
from ._check import (
    Report,
    Summary,
    Violation,
    check_2020_12,
    check_items_and_refs,
    check_no_nullable,
    object_root,
    tool_label,
)
from .gemini import GEMINI_NAME_RE

JSON = Any


def json_schema_of(declaration: dict[str, JSON]) -> JSON:
    """A Gemini declaration's arguments as JSON Schema: ``parametersJsonSchema`` as is, else its
    ``parameters`` (C.2 subset) with each ``type`` in lower case, ``nullable: true`` as a ``"null"`` type
    (and a ``null`` enum value), and ``format: enum`` (a Gemini marker, no JSON Schema format) dropped."""
    if "parametersJsonSchema" in declaration:
        return declaration["parametersJsonSchema"]
    return _from_subset(declaration.get("parameters", {"type": "OBJECT", "properties": {}}))


def _from_subset(node: JSON) -> JSON:
    if not isinstance(node, dict):
        return node
    out: dict[str, JSON] = {}
    for key, value in node.items():
        if key == "type" and isinstance(value, str):
            out[key] = value.lower()
        elif (key == "format" and value == "enum") or key == "nullable":
            continue
        elif key == "items":
            out[key] = _from_subset(value)
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: _from_subset(sub) for name, sub in value.items()}
        else:
            out[key] = value
    if node.get("nullable") is True and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out


def interactions_function(declaration: dict[str, JSON], *, deferred: bool) -> dict[str, JSON]:
    """One Gemini declaration as an Interactions function tool, marked ``defer_loading`` when `deferred`."""
    out: dict[str, JSON] = {
        "type": "function",
        "name": declaration["name"],
        "description": str(declaration.get("description", "")),
        "parameters": json_schema_of(declaration),
    }
    if deferred:
        out["defer_loading"] = True
    return out


def client_search_entry(declaration: dict[str, JSON]) -> dict[str, JSON]:
    """The search meta-tool's Gemini declaration (`toolgen.search.tool.gemini_search_declaration`) as
    a client-run ``tool_search`` entry."""
    return {
        "type": "tool_search",
        "execution": "client",
        "name": declaration["name"],
        "description": declaration["description"],
        "parameters": json_schema_of(declaration),
    }


def interactions_catalog(
    tools: Sequence[Tool], declarations: Sequence[dict[str, JSON]], search: dict[str, JSON]
) -> list[dict[str, JSON]]:
    """The Interactions ``tools`` file: every function in catalog order, then the client-run search
    entry made of `search` (the meta-tool's Gemini declaration) when any is deferred."""
    out = [
        interactions_function(d, deferred=t.policy.loading == "deferred")
        for t, d in zip(tools, declarations, strict=True)
    ]
    if any(e.get("defer_loading") is True for e in out):
        out.append(client_search_entry(search))
    return out


def interactions_upfront(catalog: Sequence[dict[str, JSON]]) -> list[dict[str, JSON]]:
    """What one request carries before any search: every entry without ``defer_loading`` (the eager
    functions and the search entry)."""
    return [e for e in catalog if e.get("defer_loading") is not True]


def check_interactions_catalog(catalog: list[dict[str, JSON]]) -> list[Violation]:
    """Check an Interactions ``tools`` file: entries are functions or one client-run ``tool_search``
    (required when a function is deferred: ``execution: client``, a name, a description and JSON
    Schema ``parameters``); a function has a unique name keeping Gemini's name rule (F.3), a string
    description, ``parameters`` a JSON Schema 2020-12 with an object root, ``items`` on arrays,
    resolvable ``$ref``s and no ``nullable``, a boolean ``defer_loading``, and no member the SDK's
    ``FunctionParam`` lacks."""
    report = Report("gemini-interactions")
    if not isinstance(catalog, list):
        report.add("", "", "F.3-interactions-shape", "catalog must be a list of tools")
        return report.items
    seen: set[str] = set()
    searches = deferred = 0
    for i, entry in enumerate(catalog):
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind not in ("function", "tool_search") or not isinstance(entry, dict):
            report.add(f"#{i}", f"/{i}", "F.3-interactions-shape", "an entry is a function or tool_search")
            continue
        label = tool_label(entry.get("name"), i)
        extra = sorted(set(entry) - (_FUNCTION_KEYS if kind == "function" else _SEARCH_KEYS))
        if extra:
            report.add(label, f"/{i}/{extra[0]}", "F.3-interactions-shape", f"unknown member {extra[0]!r}")
        if kind == "tool_search":
            searches += 1
            if entry.get("execution") != "client":
                report.add(
                    label,
                    f"/{i}/execution",
                    "F.3-interactions-search",
                    "the search entry is run by the client (execution: client)",
                )
        name = entry.get("name")
        if not isinstance(name, str) or not GEMINI_NAME_RE.fullmatch(name):
            report.add(
                label,
                f"/{i}/name",
                "F.3-interactions-name",
                f"name {name!r} does not match {GEMINI_NAME_RE.pattern}",
            )
        elif name in seen:
            report.add(label, f"/{i}/name", "F.3-interactions-name", f"name {name!r} is used twice")
        else:
            seen.add(name)
        if not isinstance(entry.get("description", ""), str):
            report.add(label, f"/{i}/description", "F.3-interactions-shape", "description must be a string")
        if "defer_loading" in entry and not isinstance(entry["defer_loading"], bool):
            report.add(
                label, f"/{i}/defer_loading", "F.3-interactions-defer", "defer_loading must be a boolean"
            )
        deferred += entry.get("defer_loading") is True
        schema = entry.get("parameters")
        base = f"/{i}/parameters"
        if object_root(report, label, base, schema, "F.3-interactions-parameters", "parameters"):
            summary = Summary(schema)
            check_2020_12(report, label, base, schema, "F.3-interactions-parameters", summary)
            check_items_and_refs(report, label, base, schema, "F.3", summary)
            check_no_nullable(report, label, base, schema, "F.3-interactions-nullable", summary)
    if deferred and not searches:
        report.add(
            "", "", "F.3-interactions-search", f"{deferred} deferred functions but no tool_search entry"
        )
    if searches > 1:
        report.add("", "", "F.3-interactions-search", f"{searches} tool_search entries; one is enough")
    return report.items


_FUNCTION_KEYS = frozenset({"type", "name", "description", "parameters", "defer_loading"})
_SEARCH_KEYS = frozenset({"type", "execution", "name", "description", "parameters"})
