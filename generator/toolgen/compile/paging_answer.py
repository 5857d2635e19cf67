"""Stage `lower`, pagination detection: the answer's side, what a list operation's success response
says about paging.

Input: the canonical schema of the success response (an object schema whose ``$defs`` references
are looked through). Output: the dotted path of its item array (`find_items_field`, or
`likeliest_items` among several arrays), the field of one item that names it (`item_id`), and its
paging fields (`PagingFields`: next tokens, next URLs and a has-more flag, searched down to
`MAX_DEPTH`). `toolgen.compile.pagination` pairs them with the query parameters that take them back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .schema import object_view

ITEM_FIELDS = (
    "data",
    "items",
    "results",
    "entries",
    "records",
    "values",
    "list",
    "elements",
    "objects",
    "value",
    "content",
    "rows",
    "hits",
    "nodes",
    "edges",
    "resources",
    "Items",
)
#: the members that wrap a list one level down (``data.items``, HAL's ``_embedded.orders``, EPA's
#: ``Results.Facilities``; compared in lower case); a list inside any other member (Stripe's
#: ``refunds.data`` of one charge) is not the answer's list
WRAPPERS = frozenset(
    {
        "data",
        "result",
        "results",
        "response",
        "_embedded",
        "embedded",
        "page",
        "payload",
        "content",
        "body",
        "list",
        "items",
        "value",
        "Data",
        "Result",
        "Response",
    }
)
#: arrays of an answer that are never its items
NOT_ITEMS = frozenset(
    {
        "errors",
        "warnings",
        "messages",
        "notices",
        "links",
        "_links",
        "errors_list",
        "error",
        "includes",
        "included",
        "facets",
        "aggregations",
        "sort",
        "sorts",
        "fields",
        "columns",
        "debug",
        "meta",
    }
)
#: the names of an answer's next token (the leaf of a dotted path), in preference order
NEXT_FIELDS = (
    "next_cursor",
    "nextCursor",
    "next_page_token",
    "nextPageToken",
    "NextPageToken",
    "next_token",
    "nextToken",
    "NextToken",
    "cursor",
    "next",
    "next_page",
    "nextPage",
    "continuation_token",
    "continuationToken",
    "continuation",
    "next_marker",
    "nextMarker",
    "NextMarker",
    "end_cursor",
    "endCursor",
    "after",
    "next_offset",
    "nextOffset",
    "next_page_cursor",
    "nextPageCursor",
    "next_start",
    "nextStart",
    "scroll_id",
    "LastEvaluatedKey",
    "last_key",
    "lastKey",
    "marker",
    "Marker",
)
#: the names of a next-page URL in an answer
NEXT_URL_FIELDS = (
    "next_url",
    "nextUrl",
    "next_page_url",
    "nextPageUrl",
    "nextLink",
    "next_link",
    "nextlink",
    "@odata.nextLink",
    "odata.nextLink",
    "next_href",
    "nextHref",
    "NextLink",
    "nextPageLink",
    "next_page_link",
    "nextUri",
    "next_uri",
    "nextPageUri",
    "next_page_uri",
    "NextUri",
)
HAS_MORE_FIELDS = (
    "has_more",
    "hasMore",
    "has_next",
    "hasNext",
    "more",
    "has_next_page",
    "hasNextPage",
    "HasMore",
    "more_results",
    "moreResults",
    "has_more_items",
)
#: containers of next links: ``links.next``, ``_links.next.href``
_LINK_CONTAINERS = frozenset(
    {"links", "_links", "link", "pagination", "paging", "meta", "page", "navigation"}
)
#: how deep an answer is searched for its paging fields (``paging.cursors.after`` is 3)
MAX_DEPTH = 3
MAX_TYPE_NODES = 2_000  # schema nodes `json_types` visits for one answer member, at most


def _props(schema: Any, root: Any) -> dict[str, Any] | None:
    """The properties of an object schema (a root ``$defs`` reference and a nullable object looked
    through), or None."""
    node = schema
    for _ in range(8):
        ref = node.get("$ref") if isinstance(node, dict) else None
        if not (isinstance(ref, str) and ref.startswith("#/$defs/") and isinstance(root, dict)):
            break
        node = (root.get("$defs") or {}).get(ref[len("#/$defs/") :])
    if not isinstance(node, dict):
        return None
    view = object_view(
        {**node, "$defs": root.get("$defs")}
        if isinstance(root, dict) and "$defs" in root and "$defs" not in node
        else node
    )
    return view[0] if view else None


def _field(schema: Any, dotted: str) -> Any:
    node = schema
    for part in dotted.split("."):
        props = _props(node, schema)
        if props is None or part not in props:
            return None
        node = props[part]
    return node


def json_types(schema: Any) -> set[str]:
    """The JSON types `schema` admits: its `type`, or those of its `anyOf`/`oneOf` branches. Each
    node is visited once and at most `MAX_TYPE_NODES` in all: a spec's nested unions (a `$ref` to
    a union of `$ref`s, levels deep) inline to millions of paths, which a walk of every path would
    take minutes to cover."""
    out: set[str] = set()
    stack, seen, visits = [schema], set(), 0
    while stack and visits < MAX_TYPE_NODES:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        visits += 1
        t = node.get("type")
        if isinstance(t, str):
            out.add(t)
        elif isinstance(t, list):
            out |= {str(x) for x in t}
        else:
            for key in ("oneOf", "anyOf"):
                branches = node.get(key)
                stack.extend(reversed(branches) if isinstance(branches, list) else ())
    return out


def _is_array(schema: Any) -> bool:
    return "array" in json_types(schema)


def find_items_field(response_schema: Any) -> str | None:
    """Dotted path of the item array: ``""`` for an array body, a well-known name, the single array
    property of the response object that is not an error or link list (Square answers ``errors``
    beside ``payments``), or the same one level down in a wrapper member (``data.items``,
    ``_embedded.orders``; `WRAPPERS`)."""
    if _is_array(response_schema):
        return ""
    top = _direct_items(response_schema, response_schema)
    if top is not None:
        return top
    props = _props(response_schema, response_schema) or {}
    nested = [
        f"{name}.{inner}"
        for name, value in props.items()
        if str(name).lower() in WRAPPERS
        for inner in [_direct_items(value, response_schema)]
        if inner is not None
    ]
    return nested[0] if len(nested) == 1 else None


def _direct_items(schema: Any, root: Any) -> str | None:
    props = _props(schema, root)
    if not props:
        return None
    for name in ITEM_FIELDS:
        if _is_array(props.get(name)):
            return name
    arrays = [str(k) for k, v in props.items() if _is_array(v) and str(k) not in NOT_ITEMS]
    return arrays[0] if len(arrays) == 1 else None


def _leaves(schema: Any, skip: str, depth: int = MAX_DEPTH) -> list[tuple[str, Any]]:
    """(dotted path, schema) of every property of the answer down to `depth`, breadth first, not
    entering the item array `skip`."""
    out: list[tuple[str, Any]] = []
    level: list[tuple[str, Any]] = [("", schema)]
    for _ in range(depth):
        following: list[tuple[str, Any]] = []
        for prefix, node in level:
            for name, sub in (_props(node, schema) or {}).items():
                path = f"{prefix}.{name}" if prefix else str(name)
                if path == skip or ("." in str(name) and prefix):  # only a top-level name may hold a
                    continue  # dot (``@odata.nextLink``): a deeper one has no dotted path
                out.append((path, sub))
                following.append((path, sub))
        level = following
    return out


def _scalar(schema: Any) -> bool:
    types = json_types(schema) - {"null"}
    return bool(types) and types <= {"string", "integer", "number"}


def _is_url(path: str, schema: Any) -> bool:
    parts = path.split(".")
    leaf = parts[-1]
    if "string" not in json_types(schema):
        return False
    fmt = schema.get("format") if isinstance(schema, dict) else None
    if leaf in NEXT_URL_FIELDS or path in NEXT_URL_FIELDS or fmt in ("uri", "url", "uri-reference", "iri"):
        return (
            leaf.lower().startswith("next")
            or leaf in NEXT_URL_FIELDS
            or (leaf == "href" and len(parts) > 1 and parts[-2] == "next")
        )
    if leaf == "href" and len(parts) > 2 and parts[-2] == "next" and parts[-3] in _LINK_CONTAINERS:
        return True
    return leaf == "next" and len(parts) > 1 and parts[-2] in ("links", "_links", "link")


def norm_name(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass(frozen=True)
class PagingFields:
    """The paging fields of an answer: next tokens, next URLs and has-more flags (dotted paths)."""

    tokens: list[tuple[str, Any]]
    urls: list[str]
    has_more: str | None

    @classmethod
    def of(cls, schema: Any, items: str, token_params: list[str] | None = None) -> PagingFields:
        """The paging fields of `schema` outside its item array `items`; `token_params` are the query
        parameters named as tokens (`cursor_like`, never a ``page`` or ``offset``, whose echo in
        the answer is the current position): an answer member of the same name is the next one
        (HERE's ``pageToken`` in and out)."""
        leaves = _leaves(schema, items)
        urls = [p for p, s in leaves if _is_url(p, s)]
        rank = {n: i for i, n in enumerate(NEXT_FIELDS)}
        echoed = {norm_name(t) for t in token_params or ()}

        def order(path: str) -> int | None:
            """A next token's rank: a usual name, or any member of a ``next...`` object (Asana's
            ``next_page.offset``), or a member named as a token parameter; None for what is not one."""
            parts = path.split(".")
            if parts[-1] == "after" and "cursor" not in path:
                return None
            if parts[-1] in rank:
                return rank[parts[-1]]
            if len(parts) > 1 and parts[-2].lower().startswith("next"):
                return len(rank)
            return len(rank) + 1 if norm_name(parts[-1]) in echoed else None

        tokens = sorted(
            ((p, s) for p, s in leaves if order(p) is not None and _scalar(s) and p not in urls),
            key=lambda ps: (order(ps[0]) or 0, ps[0].count(".")),
        )
        has_more = next(
            (
                p
                for name in HAS_MORE_FIELDS
                for p, s in leaves
                if p.split(".")[-1] == name and "boolean" in json_types(s)
            ),
            None,
        )
        return cls(tokens, urls, has_more)


def likeliest_items(response_schema: Any, resource: str | None = None) -> tuple[str, list[str]] | None:
    """(the likeliest item array, every candidate) of an answer with several arrays and no usual
    item list (`find_items_field` finds none), or None. The candidates are the arrays of the
    answer's top level that are no error or link lists (`NOT_ITEMS`), else those one level down in
    wrapper members (`WRAPPERS`); the likeliest is the one of objects named as the operation's
    `resource` (the last literal path segment: ``/instances`` -> ``instances``), else the first of
    objects (Google's ``{instances: [...], unreachable: [text]}``), else the first."""
    root = response_schema
    props = _props(root, root) or {}
    arrays = [str(k) for k, v in props.items() if _is_array(v) and str(k) not in NOT_ITEMS]
    if not arrays:
        arrays = [
            f"{name}.{inner}"
            for name, value in props.items()
            if str(name).lower() in WRAPPERS
            for inner, sub in (_props(value, root) or {}).items()
            if _is_array(sub) and str(inner) not in NOT_ITEMS
        ]
    if len(arrays) < 2:
        return None

    def of_objects(path: str) -> bool:
        node = _field(root, path)
        return isinstance(node, dict) and _props(node.get("items"), root) is not None

    objects = [a for a in arrays if of_objects(a)]
    wanted = norm_name(resource or "")
    named = [a for a in objects if wanted and norm_name(a.split(".")[-1]) in (wanted, wanted.rstrip("s"))]
    return (named or objects or arrays)[0], arrays


def item_id_field(schema: Any, items: str) -> str | None:
    """The field of one item that names it: ``id``, or ``<member>.id`` when a single member of the
    item holds one (Clever's ``{data: {id}, uri}``); None without one."""
    array = _field(schema, items) if items else schema
    props = _props(array.get("items"), schema) if isinstance(array, dict) else None
    if not props:
        return None
    if "id" in props:
        return "id"
    inner = [f"{k}.id" for k, v in props.items() if "id" in (_props(v, schema) or {})]
    return inner[0] if len(inner) == 1 else None
