"""Kernel `search_tool`: the contract of the tool-search meta-tool, in one place for the build (which
lists it in the up-front catalogs of MCP and Gemini and measures it) and the runtime (the MCP server
that answers it, `toolgen serve`).

Input: the names of the toolsets that hold deferred tools. Output: the meta-tool's MCP `Tool` entry
(`mcp_search_tool`), its Gemini function declaration (`gemini_search_declaration`), and the constants
of its contract:

- name ``search_tools`` (`SEARCH_TOOL_NAME`), read-only, never destructive;
- input ``{"query": string (1-500 characters), "limit": integer 1-20, default 5}``
  (`SEARCH_TOOL_INPUT_SCHEMA`, closed);
- output ``{"tools": [Tool, ...], "hits": [{"tool", "toolset", "score", "operation"}, ...]}``
  (`SEARCH_TOOL_OUTPUT_SCHEMA`): the full MCP tool definitions of the best matches, best first, as
  ``mcp.json`` holds them (name, title, description, inputSchema, outputSchema, annotations), and the
  ranked hits of `toolgen.runtime.search.ToolIndex.search` they come from. Only tools whose
  permission the caller's scopes satisfy are returned; every call of a found tool still goes through
  the runtime's policy path (permission, approval, idempotency).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "MAX_QUERY_CHARS", "SEARCH_TOOL_INPUT_SCHEMA", "SEARCH_TOOL_NAME", "SEARCH_TOOL_OUTPUT_SCHEMA",
           "gemini_search_declaration", "mcp_search_tool", "search_tool_description"]

SEARCH_TOOL_NAME = "search_tools"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
MAX_QUERY_CHARS = 500

SEARCH_TOOL_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS,
                  "description": "What you want to do, in plain words (e.g. \"remove a label from an issue\")."},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                  "description": f"Most tools to return (default {DEFAULT_LIMIT})."},
    },
    "required": ["query"],
    "additionalProperties": False,
}

SEARCH_TOOL_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tools": {"type": "array", "items": {"type": "object"},
                  "description": "Full definitions of the matching tools, best first; call them by name."},
        "hits": {"type": "array", "items": {
            "type": "object",
            "properties": {"tool": {"type": "string"}, "toolset": {"type": ["string", "null"]},
                           "score": {"type": "number"}, "operation": {"type": "string"}},
            "required": ["tool", "toolset", "score", "operation"]}},
    },
    "required": ["tools", "hits"],
}


def search_tool_description(toolsets: Sequence[str]) -> str:
    """What the model reads about the meta-tool: when to use it and which toolsets it searches
    (`toolsets`: names of the toolsets holding deferred tools, listed in the given order)."""
    text = ("Find more tools of this API: describe the task in plain words and get the full definitions of "
            "the best matching tools, then call them by name. Use it when no listed tool fits.")
    if toolsets:
        text += " Searchable toolsets: " + ", ".join(toolsets) + "."
    return text


def mcp_search_tool(toolsets: Sequence[str]) -> dict[str, Any]:
    """The meta-tool as an MCP 2025-11-25 / 2026-07-28 `Tool` (D.1): all four hints explicit (it only
    reads the package's own index: read-only, idempotent, closed world)."""
    return {
        "name": SEARCH_TOOL_NAME,
        "title": "Search tools",
        "description": search_tool_description(toolsets),
        "inputSchema": SEARCH_TOOL_INPUT_SCHEMA,
        "outputSchema": SEARCH_TOOL_OUTPUT_SCHEMA,
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                        "openWorldHint": False},
    }


def gemini_search_declaration(toolsets: Sequence[str]) -> dict[str, Any]:
    """The meta-tool as a Gemini `FunctionDeclaration` in the conservative `Schema` subset (C.2, F.3);
    the client answers it with `toolgen.runtime.search.ToolIndex` and adds the found declarations
    (from ``gemini.json``) to its next request."""
    return {
        "name": SEARCH_TOOL_NAME,
        "description": search_tool_description(toolsets),
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "query": {"type": "STRING", "description": "What you want to do, in plain words."},
                "limit": {"type": "INTEGER", "description": f"Most tools to return (1-{MAX_LIMIT}, default "
                                                            f"{DEFAULT_LIMIT})."},
            },
            "required": ["query"],
        },
    }
