"""The ``search_tools`` MCP meta-tool: find tools for a request and return their full definitions.

Input: a loaded `Registry`, the caller (`Actor`) and the meta-tool's arguments
``{"query": str, "limit"?: int}``. Output: a `CallResult` whose result is
``{"tools": [<MCP tool definition>, ...]}`` — each definition exactly as ``tools/list`` would give it
(``name``, ``title``, ``description``, ``inputSchema``, ``outputSchema``, ``annotations``: the
package's ``mcp.json`` entry).

Ranking is `toolgen.runtime.search.ToolIndex` (the ranking of `toolgen search`), filtered by the
caller's scopes; a hit that is a write brings its whole operation: ``preview_*`` then ``record_*``
(each only when the caller's scopes allow it). ``limit`` counts operations, not definitions. Tools
found this way — deferred ones (``loading: deferred``) included — are called by name through the
same call path as any other tool. The contract (name, schemas, result shape) is `SEARCH_TOOL`; a
catalog entry for the meta-tool must equal it.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import jsonschema_rs

from ..pointer import join_pointer
from .audit import AuditEvent
from .errors import make_error
from .identity import is_deferred
from .registry import Actor, CallResult, Registry
from .search import ToolIndex

__all__ = ["SEARCH_TOOL", "SEARCH_TOOL_NAME", "ToolSearch", "has_deferred"]

SEARCH_TOOL_NAME = "search_tools"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
MAX_QUERY_LENGTH = 500

_DEFINITION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "An MCP tool definition, as tools/list gives it.",
    "properties": {
        "name": {"type": "string"},
        "title": {"type": "string"},
        "description": {"type": "string"},
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object"},
        "annotations": {"type": "object"},
    },
    "required": ["name", "inputSchema"],
}

#: The meta-tool's MCP definition: the contract a catalog entry named ``search_tools`` must equal.
SEARCH_TOOL: dict[str, Any] = {
    "name": SEARCH_TOOL_NAME,
    "title": "Search tools",
    "description": (
        "Find the tools of this server that serve a request in plain words (\"remove the bug label "
        "from issue 12\"). Returns the full definitions of the best matching tools you may call, best "
        "first; call them by name. Tools not listed up front are found here."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_LENGTH,
                      "description": "What you want to do, in plain words."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT,
                      "description": f"How many operations to return (default {DEFAULT_LIMIT})."},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    "outputSchema": {
        "type": "object",
        "properties": {"tools": {"type": "array", "items": _DEFINITION_SCHEMA}},
        "required": ["tools"],
        "additionalProperties": False,
    },
    "annotations": {"title": "Search tools", "readOnlyHint": True, "destructiveHint": False,
                    "idempotentHint": True, "openWorldHint": False},
}

_MODE_ORDER = {"read": 0, "preview": 1, "record": 2}


def has_deferred(registry: Registry) -> bool:
    """True when some policy row of `registry` has ``loading: deferred``."""
    return any(is_deferred(spec.row) for spec in registry.specs.values())


class ToolSearch:
    """The meta-tool over one registry. The index is built on first use (include-everything
    GitHub, 1,223 operations: about half a second) and kept."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._index: ToolIndex | None = None
        self._validator = jsonschema_rs.Draft202012Validator(SEARCH_TOOL["inputSchema"])

    @property
    def index(self) -> ToolIndex:
        if self._index is None:
            self._index = ToolIndex.from_registry(self.registry)
        return self._index

    def run(self, args: Any, actor: Actor) -> CallResult:
        """Search for `actor`. Never raises on caller input: bad arguments are ``invalid_arguments``
        naming the JSON pointer of the bad value (``/query``, ``/limit``)."""
        call_id = secrets.token_hex(8)
        if not self._validator.is_valid(args):
            error = next(iter(self._validator.iter_errors(args)))
            path = list(error.instance_path)
            if not path and isinstance(args, dict) and "query" not in args:
                path = ["query"]
            pointer = join_pointer("", *path)
            self._audit(call_id, actor, "validate", "deny", "invalid_arguments", {"pointer": pointer})
            return CallResult(SEARCH_TOOL_NAME, False, call_id=call_id, error=make_error(
                "invalid_arguments", f"Invalid argument {pointer or '(arguments)'}: {str(error.message)[:200]}",
                details={"pointer": pointer}))
        limit = int(args.get("limit", DEFAULT_LIMIT))
        hits = self.index.search(str(args["query"]), scopes=actor.scopes, limit=limit)
        by_intent: dict[str, list[str]] = {}
        for name, spec in self.registry.specs.items():
            by_intent.setdefault(spec.intent, []).append(name)
        names: list[str] = []
        for hit in hits:
            found = self.registry.specs.get(hit.tool)
            group = by_intent.get(found.intent, [hit.tool]) if found is not None else [hit.tool]
            group = sorted(group, key=lambda n: (_MODE_ORDER.get(str(self.registry.specs[n].row.get("mode")), 0), n))
            names.extend(n for n in group if n not in names and self.registry.permits(n, actor))
        tools = [dict(self.registry.specs[n].catalog) for n in names]
        self._audit(call_id, actor, "search", "allow", None, {"results": len(tools)})
        return CallResult(SEARCH_TOOL_NAME, True, result={"tools": tools}, call_id=call_id)

    def _audit(self, call_id: str, actor: Actor, step: str, decision: str, code: str | None,
               detail: dict[str, Any]) -> None:
        try:
            self.registry.audit.emit(AuditEvent(time.time(), call_id, SEARCH_TOOL_NAME, actor.id, step, decision,
                                                None, code, detail))
        except Exception:  # noqa: BLE001, S110 - a failing sink never breaks a search
            pass
