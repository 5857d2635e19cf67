"""Kernel `policy_members`: the members of every object of ``policy.json``, the one list the reader
and the JSON Schema share.

Input: nothing. Output: `MEMBERS`, per object kind of the format (docs/generated-format.md,
"policy.json") the names of its members, in the order `toolgen.policy.format` writes them. Every
member is written on every object, so a reader requires each one and refuses any other
(`toolgen.policy.nodes.Node.exactly`); `toolgen.policy.schema` makes them the ``properties`` and
``required`` of each object's schema, with ``additionalProperties: false``. A new member is a new
name here, and a new `toolgen.policy.format.FORMAT_VERSION`: a runtime that does not know the member
refuses the file, never ignores what it withholds.
"""

from __future__ import annotations

__all__ = [
    "MAX_ATTEMPTS",
    "MAX_BACKOFF_MS",
    "MAX_DEADLINE_MS",
    "MAX_LIMIT",
    "MAX_LIMIT_WINDOW_S",
    "MAX_PAGE_SIZE",
    "MAX_PREVIEW_TTL_S",
    "MAX_TIMEOUT_MS",
    "MEMBERS",
]

#: the greatest values the build writes (the intent map's own bounds, `toolgen.compile.intent`): the
#: reader and the schema refuse more, so a hand-edited table never holds a wait or a lifetime the
#: runtime cannot compute with, nor an approval that outlives any the build grants
MAX_TIMEOUT_MS = 600_000
MAX_DEADLINE_MS = 600_000
MAX_BACKOFF_MS = 60_000
MAX_ATTEMPTS = 10
MAX_PREVIEW_TTL_S = 86_400
#: a page holds at most this many items (`pagination.max_page_size`); its least and default page
#: sizes lie from 1 to it
MAX_PAGE_SIZE = 1000
#: a limit's count or sum (`limits[].max`) is at most this; its window (`limits[].window_s`) at most 30 days
MAX_LIMIT = 10**12
MAX_LIMIT_WINDOW_S = 30 * 86_400

MEMBERS: dict[str, tuple[str, ...]] = {
    "table": ("format", "api", "title", "version", "base_url", "spec", "tools", "toolsets"),
    "row": (
        "tool",
        "mode",
        "effect",
        "intent",
        "pair",
        "operation",
        "permission",
        "approval",
        "approval_when",
        "idempotency",
        "limits",
        "retry",
        "timeout_ms",
        "pagination",
        "output",
        "auth",
        "request",
        "success_status",
        "dialect_rewrites",
        "record",
        "narrowed",
        "toolset",
        "loading",
        "keywords",
        "examples",
        "not_for",
        "composite",
    ),
    "operation": ("id", "method", "path"),
    "idempotency": ("arg", "in", "name", "honoured_by_api"),
    "retry": ("max_attempts", "backoff_ms", "deadline_ms", "on"),
    "pagination": (
        "style",
        "cursor_arg",
        "page_size_arg",
        "items",
        "cursor_param",
        "limit_param",
        "next_field",
        "has_more_field",
        "cursor_from_item",
        "default_page_size",
        "max_page_size",
        "min_page_size",
        "first_position",
        "first_required",
    ),
    "output": ("fields", "max_bytes", "redact", "schema_mode", "shape", "body", "accept", "redirect"),
    "auth": ("scheme", "kind", "in", "name", "secret", "scopes", "per_caller"),
    "per_caller": ("via", "audience", "resource", "scope", "service_secret"),
    "request": ("encoding", "content_type", "bindings", "fixed", "max_body_bytes"),
    "binding": ("arg", "in", "name", "required", "null", "style", "explode", "content_type", "reserved"),
    "fixed": ("in", "name", "value", "source"),
    "record": ("arguments", "preview_ttl_s"),
    "narrowed": ("arg", "schema", "description", "hidden"),
    "composite": ("pattern", "switch", "steps", "output"),
    "step": ("id", "when", "needs", "args", "row", "input_schema", "output_schema"),
    "input_ref": ("$ref", "pointer"),
    "step_ref": ("$ref", "step", "pointer"),
    "literal": ("$literal",),
    "toolset": ("name", "description", "loading", "origin", "examples"),
    "limit": ("per", "kind", "max", "sum", "window_s"),
}
