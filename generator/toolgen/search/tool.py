"""Kernel `search_tool`: the contract of the tool-search meta-tool, in one place for the build (which
lists it in the up-front catalogs of MCP and Gemini, writes it into ``search.json`` and measures it)
and the runtime (`toolgen.runtime.serving.search_tools.ToolSearch`, which answers it in `toolgen serve`).

Input: the names of the toolsets that hold deferred tools. Output: the meta-tool's MCP `Tool` entry
(`mcp_search_tool`), its Gemini function declaration (`gemini_search_declaration`), its OpenAI Chat
Completions function tool (`openai_search_function`), and the constants of its contract:

- name ``search_tools`` (`SEARCH_TOOL_NAME`); annotations `SEARCH_TOOL_ANNOTATIONS` (read-only,
  never destructive, idempotent, closed world);
- input ``{"query": string (1-500 characters), "limit"?: integer 1-20 or null, default 5}``
  (`SEARCH_TOOL_INPUT_SCHEMA`, closed); ``limit`` counts hits (operations), null meaning the default;
- output ``{"tools": [definition, ...], "hits": [{"tool", "toolset", "score", "operation"}, ...]}``
  (`SEARCH_TOOL_OUTPUT_SCHEMA`, closed): ``hits`` are the ranked hits of
  `toolgen.runtime.serving.tool_index.ToolIndex.search` the caller may use, best first (a write's hit names
  the
  tool that acts, ``record_*``, or ``preview_*`` when only the preview is allowed); ``tools`` are
  the full MCP definitions to call, as ``mcp.json`` holds them (``name`` and ``inputSchema``
  always; ``title``, ``description``, ``outputSchema``, ``annotations`` when the entry has them),
  in hit order, a write's hit bringing its operation's ``preview_*`` then ``record_*`` (each only
  when the caller may use it). Only tools whose permission the caller's scopes satisfy are
  returned; every call of a found tool still goes through the runtime's policy path (permission,
  approval, idempotency).

The Gemini declaration and the Chat Completions function are run by the client, not the provider
(neither API defers loading, F.1 / F.3): it answers the call with the same index and adds the found
tools' entries (from ``gemini.json`` / ``openai.json``) to its next request. The Chat Completions
function is strict, so ``limit`` is a required member that admits null; null means the default
(`search_arguments`). The MCP entry admits null too (optional there): the runtime answers every
client through one `SEARCH_TOOL_INPUT_SCHEMA`, and an MCP host that turns the tools it lists into
strict functions (every member required, the optional ones nullable) sends null for an omitted
``limit``; an entry that said ``integer`` would list a narrower contract than the server keeps.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "MAX_QUERY_CHARS",
    "NOTHING_MATCHED",
    "SEARCH_TOOL_ANNOTATIONS",
    "SEARCH_TOOL_INPUT_SCHEMA",
    "SEARCH_TOOL_NAME",
    "SEARCH_TOOL_OUTPUT_SCHEMA",
    "SEARCH_TOOL_TITLE",
    "gemini_search_declaration",
    "mcp_search_tool",
    "openai_search_function",
    "search_arguments",
    "search_tool_description",
]

SEARCH_TOOL_NAME = "search_tools"
SEARCH_TOOL_TITLE = "Search tools"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
MAX_QUERY_CHARS = 500

#: MCP `ToolAnnotations` (D.1), all four hints explicit: the meta-tool only reads the package's own index.
SEARCH_TOOL_ANNOTATIONS: dict[str, Any] = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": False,
}

SEARCH_TOOL_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_QUERY_CHARS,
            "description": 'What you want to do, in plain words (e.g. "remove a label from an issue").',
        },
        "limit": {
            "type": ["integer", "null"],
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "default": DEFAULT_LIMIT,
            "description": f"Most operations to return (default {DEFAULT_LIMIT}; null for the default).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

#: One found tool: an MCP `Tool` definition as ``mcp.json`` (and ``tools/list``) holds it. Open, so
#: a definition with members a newer MCP revision adds (``icons``, ``_meta``) still conforms.
_DEFINITION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "title": {"type": "string"},
        "description": {"type": "string"},
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
        "annotations": {"type": "object"},
    },
    "required": ["name", "inputSchema"],
}

#: One ranked hit (`toolgen.runtime.serving.tool_index.Hit.to_json`).
_HIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tool": {"type": "string", "minLength": 1},
        "toolset": {"type": ["string", "null"]},
        "score": {"type": "number"},
        "operation": {"type": "string"},
    },
    "required": ["tool", "toolset", "score", "operation"],
    "additionalProperties": False,
}

SEARCH_TOOL_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tools": {
            "type": "array",
            "items": _DEFINITION_SCHEMA,
            "description": "Full definitions of the found tools, best first; call them by name.",
        },
        "hits": {
            "type": "array",
            "items": _HIT_SCHEMA,
            "maxItems": MAX_LIMIT,
            "description": "The ranked hits the definitions come from, best first.",
        },
        "note": {
            "type": "string",
            "description": "Present when no tool matched: results are never padded with tools that "
            "match nothing the request names.",
        },
    },
    "required": ["tools", "hits"],
    "additionalProperties": False,
}

#: the ``note`` of an answer with no hit
NOTHING_MATCHED = (
    "No tool matched: no tool you may use names any word of the request. Describe the task "
    "with the words of the thing it acts on (e.g. 'invoice', 'label'), or use a listed tool."
)


def search_tool_description(toolsets: Sequence[str]) -> str:
    """What the model reads about the meta-tool: when to use it and which toolsets it searches
    (`toolsets`: names of the toolsets holding deferred tools, listed in the given order)."""
    text = (
        "Find more tools of this API: describe the task in plain words and get the full definitions of "
        "the best matching tools you may use, then call them by name. Use it when no listed tool fits."
    )
    if toolsets:
        text += " Searchable toolsets: " + ", ".join(toolsets) + "."
    return text


def mcp_search_tool(toolsets: Sequence[str]) -> dict[str, Any]:
    """The meta-tool as an MCP 2025-11-25 / 2026-07-28 `Tool` (D.1), the entry the build lists up
    front and writes into ``search.json`` and the entry `toolgen serve` lists: name, title,
    description (naming `toolsets` in the given order; the build and the server pass the sorted
    toolsets holding deferred tools), the input and output schemas and the annotations above. A
    fresh value each call: callers may not share nested mutable state with the constants."""
    return copy.deepcopy(
        {
            "name": SEARCH_TOOL_NAME,
            "title": SEARCH_TOOL_TITLE,
            "description": search_tool_description(toolsets),
            "inputSchema": SEARCH_TOOL_INPUT_SCHEMA,
            "outputSchema": SEARCH_TOOL_OUTPUT_SCHEMA,
            "annotations": SEARCH_TOOL_ANNOTATIONS,
        }
    )


def gemini_search_declaration(toolsets: Sequence[str]) -> dict[str, Any]:
    """The meta-tool as a Gemini `FunctionDeclaration` in the conservative `Schema` subset (C.2, F.3);
    the client answers it with `toolgen.runtime.serving.tool_index.ToolIndex` and adds the found declarations
    (from ``gemini.json``) to its next request."""
    return {
        "name": SEARCH_TOOL_NAME,
        "description": search_tool_description(toolsets),
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "query": {"type": "STRING", "description": "What you want to do, in plain words."},
                "limit": {
                    "type": "INTEGER",
                    "description": f"Most tools to return (1-{MAX_LIMIT}, default {DEFAULT_LIMIT}).",
                },
            },
            "required": ["query"],
        },
    }


def openai_search_function(toolsets: Sequence[str]) -> dict[str, Any]:
    """The meta-tool as an OpenAI Chat Completions function tool (A.1): ``{"type": "function",
    "function": {"name", "description", "parameters", "strict": true}}``, the entry a Chat
    Completions client sends up front beside the eager functions of ``openai.json``.

    Strict (A.2): every object closes (``additionalProperties: false``) and lists every property in
    ``required``, so the optional ``limit`` is a required member of type ``["integer", "null"]`` and
    null stands for the default (`DEFAULT_LIMIT`; `search_arguments` drops it before the input schema
    is applied). ``minimum``/``maximum`` stay (strict carries them on numbers, F.1); the query's
    length bounds do not (strict carries no ``minLength``/``maxLength`` on strings) and are said in
    its description, and the runtime still checks them (`SEARCH_TOOL_INPUT_SCHEMA`). A fresh value
    each call."""
    return {
        "type": "function",
        "function": {
            "name": SEARCH_TOOL_NAME,
            "description": search_tool_description(toolsets),
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": f"What you want to do, in plain words (1-{MAX_QUERY_CHARS} characters).",
                    },
                    "limit": {
                        "type": ["integer", "null"],
                        "minimum": 1,
                        "maximum": MAX_LIMIT,
                        "description": f"Most operations to return (1-{MAX_LIMIT}); null for the default "
                        f"({DEFAULT_LIMIT}).",
                    },
                },
                "required": ["query", "limit"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    }


def search_arguments(args: Any) -> Any:
    """The arguments of a ``search_tools`` call as `SEARCH_TOOL_INPUT_SCHEMA` reads them: a null
    ``limit`` (what the strict Chat Completions function sends for "the default") left out, so the
    default applies. Anything else is returned unchanged (the input schema then judges it); the
    input is not modified."""
    if isinstance(args, dict) and "limit" in args and args["limit"] is None:
        return {k: v for k, v in args.items() if k != "limit"}
    return args
