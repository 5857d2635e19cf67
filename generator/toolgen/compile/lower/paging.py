"""Pagination: the intent's `pagination` (or one detected for an include group) -> the tool's paging.

Input: a `PaginationSpec`, the operation's query parameters and its success response. Output: the
IR `Pagination` (style, where the items, the next cursor and `has_more` are, page sizes), the query
parameters the runtime fills while paging, and the `cursor` / `page_size` arguments the model passes
instead. Paths that name nothing in the response, or parameters the operation lacks, raise `Skip`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..intent import PaginationSpec
from ..ir import Pagination
from ..operations import Operation
from ..pagination import NEXT_HEADER, detect
from ..schema import object_view
from .context import Arg, Ctx, Locate, Skip
from .outputs import field_schema
from .parameters import param_schema
from .resolve import PageSizes, ResolvedIntent


def paging_spec(
    ctx: Ctx,
    op: Operation,
    intent: ResolvedIntent,
    params: list[tuple[dict[str, Any], str]],
    response: Any,
    link_header: bool,
) -> PaginationSpec | None:
    """The intent's `pagination`, or for a read of an include group with `paginate`
    (`ResolvedIntent.detect_paging`), what
    `toolgen.compile.pagination.detect` finds in the query parameters, the response and its Link
    header. A detected guess the response does not bear out is dropped with a
    ``pagination-not-detected`` note: the tool is built without paging, not skipped."""
    spec: PaginationSpec | None = intent.pagination
    if not intent.detect_paging:
        return spec
    doc = ctx.doc
    detected = detect(
        [str(p.get("name")) for p, _ in params if p.get("in") == "query"],
        response,
        link_header,
        param_types={
            str(p.get("name")): p["schema"]["type"]
            for p, _ in params
            if p.get("in") == "query"
            and isinstance(p.get("schema"), dict)
            and isinstance(p["schema"].get("type"), str)
        },
    )
    if detected is None or detected.guess:  # a guess waits for a human: `toolgen init` drafts it, marked
        return None
    spec = PaginationSpec(
        style=detected.style,
        items=detected.items,  # type: ignore[arg-type,unused-ignore]
        cursor=detected.cursor,
        limit=detected.limit,
        next=detected.next,
        has_more=detected.has_more,
        cursor_from_item=detected.cursor_from_item,
    )
    try:  # a guess the response does not bear out: build the tool without paging, not skip it
        lower_pagination(
            ctx, op, spec, intent.page_sizes, response, params, lambda *_: doc.locate(op.pointer)
        )
    except Skip as skip:
        ctx.sink.info(
            "pagination-not-detected",
            f"{op.key}: looks paginated, but {skip.message}; the tool returns one page as the API sends it",
            doc.locate(op.pointer),
            "declare `pagination` in an explicit intent to page it",
        )
        return None
    return spec


def paging_params(
    op: Operation, spec: PaginationSpec | None, params: list[tuple[dict[str, Any], str]], iloc: Locate
) -> set[str]:
    """The query parameters the runtime fills while paging (`cursor`, `limit`): never tool arguments.
    Raises `Skip` when one is not a query parameter of `op`, or when a cursor, offset or page style
    names no `cursor` parameter."""
    found: set[str] = set()
    if spec is None:
        return found
    for attr in ("cursor", "limit"):
        name = getattr(spec, attr)
        if name is None:
            continue
        if not any(p.get("in") == "query" and p.get("name") == name for p, _ in params):
            raise Skip(
                "pagination-param-missing",
                f"pagination.{attr} names query parameter {name!r}, which {op.key} does not have",
                iloc("pagination", attr),
                "available query parameters: "
                + ", ".join(sorted(str(p.get("name")) for p, _ in params if p.get("in") == "query"))
                or "none",
            )
        found.add(name)
    if spec.style in ("cursor", "offset", "page") and spec.cursor is None:
        raise Skip(
            "pagination-cursor-missing",
            f"pagination style {spec.style!r} needs `cursor` "
            "(the API parameter that takes the cursor/offset/page)",
            iloc("pagination"),
        )
    return found


def paging_args(pagination: Pagination) -> list[Arg]:
    """The two arguments a paged tool takes instead of the API's paging parameters."""
    return [
        Arg(
            pagination.cursor_arg,
            {
                "type": ["string", "null"],
                "description": "next_cursor of the previous page; omit for the first page.",
            },
            None,
            False,
        ),
        Arg(
            pagination.page_size_arg,
            {
                "type": "integer",
                "minimum": pagination.min_page_size,
                "maximum": pagination.max_page_size,
                "description": f"Default {pagination.default_page_size}.",
            },
            None,
            False,
        ),
    ]


def lower_pagination(
    ctx: Ctx,
    op: Operation,
    spec: PaginationSpec,
    sizes: PageSizes,
    response: Any,
    params: list[tuple[dict[str, Any], str]],
    iloc: Any,
) -> Pagination:
    """The IR `Pagination` of `op` for `spec`. Page sizes: the intent's `sizes` (its own or the
    defaults', `resolve.PageSizes`) narrowed to the limit parameter's integer `minimum`/`maximum`, the default page size clamped
    into them. Page and offset styles start at the cursor parameter's `default`, else its `minimum`,
    else 1 (page) or 0 (offset), and send that start when the parameter is required (OpenAPI 3.1
    §4.8.12: a required parameter must be sent, the first page included). Raises `Skip` when a
    path names nothing in the response, or when the limit parameter's bounds leave no page size."""
    query = {str(p.get("name")): (p, ptr) for p, ptr in params if p.get("in") == "query"}
    max_size = sizes.max_page_size
    min_size = 1
    if spec.limit is not None and spec.limit in query:
        low, high = _int_bounds(param_schema(ctx, *query[spec.limit]))
        min_size = max(min_size, low if low is not None else 1)
        max_size = min(max_size, high) if high is not None else max_size
        if min_size > max_size:
            raise Skip(
                "pagination-page-size-empty",
                f"the limit parameter {spec.limit!r} of {op.key} allows page sizes {min_size}..{high}, "
                f"outside 1..{sizes.max_page_size}",
                iloc("pagination", "limit"),
                "raise `max_page_size`, or page without `limit`",
            )
    page_size = max(min_size, min(sizes.page_size, max_size))
    first: int | None = None
    first_required = False
    if spec.style in ("page", "offset") and spec.cursor is not None and spec.cursor in query:
        param, ptr = query[spec.cursor]
        schema = param_schema(ctx, param, ptr)
        low, _ = _int_bounds(schema)
        default = schema.get("default")
        if isinstance(default, int) and not isinstance(default, bool) and (low is None or default >= low):
            first = default
        else:
            first = low if low is not None else (1 if spec.style == "page" else 0)
        first_required = bool(param.get("required"))
    if field_schema(response, spec.items, array=True) is None:
        raise Skip(
            "pagination-items-missing",
            f"pagination.items {spec.items!r} is not an array in the success response of {op.key}",
            iloc("pagination", "items"),
            "give the dotted path of the item array ('' for an array body)",
        )
    if spec.next is not None and spec.next.startswith(NEXT_HEADER):
        name = spec.next[len(NEXT_HEADER) :]
        if not _HEADER_NAME.fullmatch(name):
            raise Skip(
                "pagination-field-missing",
                f"pagination.next {spec.next!r} of {op.key} names no valid header (RFC 9110 field name)",
                iloc("pagination", "next"),
                "write `header:NAME` with the response header's name, e.g. header:NextPageToken",
            )
    for attr in ("next", "has_more"):
        path = getattr(spec, attr)
        if attr == "next" and path is not None and path.startswith(NEXT_HEADER):
            continue
        if path is not None and field_schema(response, path) is None and not _top_member(response, path):
            raise Skip(
                "pagination-field-missing",
                f"pagination.{attr} {path!r} is not a field of the success response of {op.key}",
                iloc("pagination", attr),
                "give the dotted path of that field in the response body",
            )
    if spec.cursor_from_item is not None:
        items = field_schema(response, spec.items, array=True) or {}
        if field_schema(items.get("items"), spec.cursor_from_item, defs=response.get("$defs")) is None:
            raise Skip(
                "pagination-field-missing",
                f"pagination.cursor_from_item {spec.cursor_from_item!r} is not a field of the items of "
                f"{op.key}",
                iloc("pagination", "cursor_from_item"),
                "name a field of one item, e.g. id",
            )
    if spec.style == "cursor" and spec.next is None and spec.cursor_from_item is None:
        raise Skip(
            "pagination-next-missing",
            f"cursor pagination of {op.key} needs `next` (where the next cursor is in the response) or "
            "`cursor_from_item` (+ `has_more`): without them no next page can be reached",
            iloc("pagination"),
            "e.g. next: next_cursor, or cursor_from_item: id with has_more: has_more",
        )
    return Pagination(
        style=spec.style,
        items_field=spec.items,
        cursor_param=spec.cursor,
        limit_param=spec.limit,
        next_field=spec.next,
        has_more_field=spec.has_more,
        cursor_from_item=spec.cursor_from_item,
        default_page_size=page_size,
        max_page_size=max_size,
        min_page_size=min_size,
        first_position=first,
        first_required=first_required,
    )


#: a header field name (RFC 9110 §5.1: a token)
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


def _top_member(response: Any, name: str) -> bool:
    """Whether `name` is a property of the answer's top level as written, dots and all (OData's
    ``@odata.nextLink``): the runtime reads such a member before a dotted path."""
    view = object_view(response) if isinstance(response, dict) else None
    return view is not None and name in view[0]


def _int_bounds(schema: dict[str, Any]) -> tuple[int | None, int | None]:
    """The least and greatest integer a numeric schema allows (`minimum`, `exclusiveMinimum` and the
    maxima; JSON Schema 2020-12 numeric forms), None where it sets none."""
    low = high = None
    for key, step in (("minimum", 0), ("exclusiveMinimum", 1)):
        v = schema.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            bound = math.ceil(v) if step == 0 else math.floor(v) + 1
            low = bound if low is None else max(low, bound)
    for key, step in (("maximum", 0), ("exclusiveMaximum", 1)):
        v = schema.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            bound = math.floor(v) if step == 0 else math.ceil(v) - 1
            high = bound if high is None else min(high, bound)
    return low, high
