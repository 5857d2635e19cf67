"""Stage `lower`, pagination detection: how a list operation pages, from common parameter and
response-field names.

Input: the operation's query parameter names (and their JSON types), the canonical schema of its
success response and whether that response declares a `Link` header. Output: a
`DetectedPagination` (style, item array, cursor and limit parameters, next cursor, has-more flag)
or None.

Used by `include` groups (so a whole spec gets paginated list tools) and by `toolgen init` (which
writes the detected pagination into a draft intent map for a human to confirm). Detection is
conservative: it returns None unless both the request side (a cursor/offset/page parameter, or a
`Link` response header) and the response side (an item array) are found.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CURSOR_PARAMS = ("cursor", "starting_after", "page_token", "pageToken", "PageToken", "next_token", "nextToken",
                 "start_cursor", "after", "continuation_token", "continuationToken", "marker", "page_cursor")
OFFSET_PARAMS = ("offset", "skip", "start", "Offset")
PAGE_PARAMS = ("page", "Page", "page_number", "pageNumber")
LIMIT_PARAMS = ("limit", "per_page", "page_size", "pageSize", "PageSize", "max_results", "maxResults", "count",
                "size", "Limit", "perPage")
ITEM_FIELDS = ("data", "items", "results", "entries", "records", "values", "list", "elements", "objects")
NEXT_FIELDS = ("next_cursor", "nextCursor", "next_page_token", "nextPageToken", "next_token", "nextToken",
               "cursor", "next", "response_metadata.next_cursor", "meta.next_cursor", "paging.next_cursor",
               "next_page", "continuation_token")
HAS_MORE_FIELDS = ("has_more", "hasMore", "has_next", "more")


@dataclass(frozen=True)
class DetectedPagination:
    style: str
    items: str
    cursor: str | None
    limit: str | None
    next: str | None = None
    has_more: str | None = None
    cursor_from_item: str | None = None


def _field(schema: Any, dotted: str) -> Any:
    node = schema
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return None
        props = node.get("properties")
        if not isinstance(props, dict) or part not in props:
            return None
        node = props[part]
    return node


def _is_array(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    t = schema.get("type")
    return t == "array" or (isinstance(t, list) and "array" in t)


def find_items_field(response_schema: Any) -> str | None:
    """Dotted path of the item array: ``""`` for an array body, a well-known name, or the single
    array property of the response object."""
    if _is_array(response_schema):
        return ""
    if not isinstance(response_schema, dict):
        return None
    props = response_schema.get("properties")
    if not isinstance(props, dict):
        return None
    for name in ITEM_FIELDS:
        if _is_array(props.get(name)):
            return name
    arrays = [str(k) for k, v in props.items() if _is_array(v)]
    if len(arrays) == 1:
        return arrays[0]
    return None


def detect(query_params: list[str], response_schema: Any, link_header: bool,
           param_types: dict[str, str] | None = None) -> DetectedPagination | None:
    """Pagination of an operation from its query-parameter names (and, when known, their JSON types:
    an `offset` or `page` parameter that takes a string is a cursor token, as in Asana), its
    (canonical) 2xx response schema and whether the response declares a `Link` header (RFC 8288)."""
    items = find_items_field(response_schema)
    if items is None:
        return None
    types = param_types or {}
    names = set(query_params)
    for name in list(names):
        if name in OFFSET_PARAMS + PAGE_PARAMS and types.get(name) == "string":
            names.discard(name)
            if name in OFFSET_PARAMS:
                names.add(f"\0token:{name}")  # an opaque offset token: a cursor under another name
    token = next((n[len("\0token:"):] for n in names if n.startswith("\0token:")), None)
    if token is not None:
        next_field = next((f for f in NEXT_FIELDS + ("next_page.offset",) if _field(response_schema, f) is not None),
                          None)
        if next_field is not None:
            limit = next((p for p in LIMIT_PARAMS if p in names), None)
            return DetectedPagination("cursor", items, token, limit, next=next_field)
    limit = next((p for p in LIMIT_PARAMS if p in names), None)
    cursor = next((p for p in CURSOR_PARAMS if p in names), None)
    if cursor is not None:
        next_field = next((f for f in NEXT_FIELDS if _field(response_schema, f) is not None), None)
        has_more = next((f for f in HAS_MORE_FIELDS if _field(response_schema, f) is not None), None)
        if next_field is not None:
            return DetectedPagination("cursor", items, cursor, limit, next=next_field)
        if cursor == "starting_after" and has_more is not None:
            return DetectedPagination("cursor", items, cursor, limit, has_more=has_more, cursor_from_item="id")
        return None
    if link_header:
        return DetectedPagination("link", items, None, limit)
    page = next((p for p in PAGE_PARAMS if p in names), None)
    if page is not None:
        return DetectedPagination("page", items, page, limit)
    offset = next((p for p in OFFSET_PARAMS if p in names), None)
    if offset is not None and limit is not None:
        return DetectedPagination("offset", items, offset, limit)
    return None
