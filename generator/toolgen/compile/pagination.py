"""Stage `lower`, pagination detection: how a list operation pages, from its parameters and its
answer together.

Input: the operation's query parameter names (and their JSON types), the canonical schema of its
success response and whether that response declares a `Link` header. Output: a
`DetectedPagination` (style, item array, cursor and limit parameters, next cursor or next URL,
has-more flag, and a `doubt` when a human should check it) or None. The answer's side (its item
array and paging fields) is read by `toolgen.compile.paging_answer`; this module pairs it with the
query parameters that take its values back.

The styles recognised, in this order (the first that both sides bear out wins):

- **cursor**: a token in the answer (``cursor``, ``next_cursor``, ``nextPageToken``,
  ``response_metadata.next_cursor``, ``pagination.next``, ``paging.cursors.after``, ... at any depth
  up to 3) and the query parameter that takes it back (the same name without ``next``:
  ``nextPageToken`` -> ``pageToken``, ``next_marker`` -> ``marker``; else a usual cursor name;
  else a time-window bound, ``until``/``before`` for a numeric token, as Vercel's ``limit``/``until``
  with ``pagination.next``); or ``starting_after`` with ``has_more`` (the last item's ``id``); or a
  token parameter and a next-token response header (``next: header:NextPageToken``);
- **link**: a declared ``Link`` response header (RFC 8288), or a next-page URL in the answer
  (``next_url``, ``links.next``, ``_links.next.href``, ``@odata.nextLink``, a ``next`` of
  ``format: uri``);
- **page**: a ``page``-like integer parameter; **offset**: an ``offset``-like one (``skip``,
  ``start``), with a page-size parameter (without one the draft carries a doubt).

Where one side is missing (several arrays and no usual item list, ``starting_after`` without a
has-more flag, an offset declared as text, a token parameter with nothing that says where its next
value is), `without_answer` and `paging_answer.likeliest_items` give the likeliest reading as a `guess` with a
doubt: `toolgen init` drafts it marked, an ``include`` group never takes it.

Used by `include` groups (so a whole spec gets paginated list tools) and by `toolgen init` (which
writes the detected pagination into a draft intent map for a human to confirm, with a
``# decide [pagination-undecided]`` mark when `doubt` is set). `paging_signals` lists what an
operation carries that looks like paging, for lint's ``pagination-missing`` message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .paging_answer import (
    PagingFields,
    find_items_field,
    item_id_field,
    json_types,
    likeliest_items,
    norm_name,
)

CURSOR_PARAMS = (
    "cursor",
    "starting_after",
    "page_token",
    "pageToken",
    "PageToken",
    "next_token",
    "nextToken",
    "NextToken",
    "start_cursor",
    "startCursor",
    "after",
    "continuation_token",
    "continuationToken",
    "continuation",
    "marker",
    "Marker",
    "page_cursor",
    "pageCursor",
    "next_page_token",
    "nextPageToken",
    "token",
    "from_cursor",
    "cursor_id",
    "scroll_id",
    "next",
    "nextCursor",
    "next_cursor",
    "startingAfter",
    "ExclusiveStartKey",
    "exclusive_start_key",
    "last_key",
    "lastKey",
)
OFFSET_PARAMS = (
    "offset",
    "skip",
    "start",
    "Offset",
    "Skip",
    "Start",
    "$skip",
    "startIndex",
    "start_index",
    "from",
)
PAGE_PARAMS = (
    "page",
    "Page",
    "page_number",
    "pageNumber",
    "PageNumber",
    "page_num",
    "pageNum",
    "pageNo",
    "page_no",
    "p",
    "pg",
)
LIMIT_PARAMS = (
    "limit",
    "per_page",
    "page_size",
    "pageSize",
    "PageSize",
    "max_results",
    "maxResults",
    "MaxResults",
    "count",
    "size",
    "Limit",
    "perPage",
    "Count",
    "Size",
    "$top",
    "top",
    "pagesize",
    "max",
    "maxItems",
    "max_items",
    "MaxItems",
    "rows",
    "num",
    "results_per_page",
    "resultsPerPage",
    "take",
    "page_limit",
    "pageLimit",
    "limitPerPage",
    "items_per_page",
    "itemsPerPage",
    "first",
    "rowCount",
    "row_count",
)
#: time-window bounds: a numeric next token goes back as the bound the listing walks towards
WINDOW_PARAMS = (
    "until",
    "before",
    "since",
    "after",
    "ending_before",
    "endingBefore",
    "before_id",
    "max_id",
    "older_than",
    "to",
    "from",
    "start_time",
    "end_time",
    "startTime",
    "endTime",
)
#: the bounds a newest-first listing walks towards: a numeric next value goes back as one of them
DESCENDING_WINDOW = ("until", "before", "max_id", "ending_before")
#: how `pagination.next` names a response header instead of an answer member (``header:NextPageToken``;
#: the runtime's `toolgen.runtime.call.shaping.NEXT_HEADER`)
NEXT_HEADER = "header:"


@dataclass(frozen=True)
class DetectedPagination:
    """What detection found: the intent map's `pagination` members (``style``, ``items``, ``cursor``,
    ``limit``, ``next``, ``has_more``, ``cursor_from_item``) and `doubt`, why a human should check
    it (None when both sides agree on a usual convention). `guess`: one side is missing (a position
    parameter with nothing that says where its next value comes from, or several arrays and no
    telling which is the list): drafted only for a human to confirm, never taken by an `include`
    group on its own."""

    style: str
    items: str
    cursor: str | None
    limit: str | None
    next: str | None = None
    has_more: str | None = None
    cursor_from_item: str | None = None
    doubt: str | None = None
    guess: bool = False


def _takes_back(leaf: str, names: list[str]) -> str | None:
    """The query parameter that takes the answer's token `leaf` back: the same name, or the name
    without ``next`` (``nextPageToken`` -> ``pageToken``, ``next_marker`` -> ``marker``)."""
    wanted = {norm_name(leaf)}
    bare = norm_name(leaf).removeprefix("next")
    if bare:
        wanted |= {bare, bare.removeprefix("page") or bare}
    wanted.discard("")
    return next((n for n in names if norm_name(n) in wanted), None)


def _query_names(query_params: list[str], types: dict[str, str]) -> tuple[list[str], list[str]]:
    """(names, numeric names): a ``page`` or ``offset`` that takes a string is a cursor token (Asana's
    ``offset``), never a number."""
    numeric = [n for n in query_params if types.get(n) in (None, "integer", "number")]
    return list(query_params), numeric


def _cursor_style(
    items: str, names: list[str], answer: PagingFields, limit: str | None, types: dict[str, str]
) -> DetectedPagination | None:
    """A token in the answer and the parameter that takes it back: by name, else (a text token) a
    usual cursor parameter or a ``page``/``offset`` that takes text, else (a numeric ``next``) a
    time-window bound."""
    takers = [p for p in CURSOR_PARAMS if p in names] + [
        p for p in names if p in OFFSET_PARAMS + PAGE_PARAMS and types.get(p) == "string"
    ]
    for path, schema in answer.tokens:
        leaf = path.split(".")[-1]
        param = _takes_back(leaf, names)
        textual = "string" in json_types(schema)
        if param is None and textual and takers:
            param = takers[0]
        if param is None and not textual and leaf in ("next", "nextPage", "next_page"):
            towards: str | None = next((p for p in DESCENDING_WINDOW if p in names), None)
            if towards is not None:  # a numeric next bound: the time window walks towards it (Vercel)
                return DetectedPagination(
                    "cursor", items, towards, limit, next=path, has_more=answer.has_more
                )
            window: str | None = next((p for p in WINDOW_PARAMS if p in names), None)
            if window is not None:
                return DetectedPagination(
                    "cursor",
                    items,
                    window,
                    limit,
                    next=path,
                    has_more=answer.has_more,
                    doubt=f"the answer's `{path}` is drafted as the next value of the time-window parameter "
                    f"`{window}`; check that the API walks towards it (newest first or oldest first)",
                )
        if param is not None:
            return DetectedPagination("cursor", items, param, limit, next=path, has_more=answer.has_more)
    return None


def detect(
    query_params: list[str],
    response_schema: Any,
    link_header: bool,
    param_types: dict[str, str] | None = None,
    *,
    headers: Sequence[str] = (),
    params: Sequence[Mapping[str, Any]] = (),
    resource: str | None = None,
) -> DetectedPagination | None:
    """Pagination of an operation from its query-parameter names (and, when known, their JSON types:
    an `offset` or `page` parameter that takes a string is a cursor token, as in Asana), its
    (canonical) 2xx response schema and whether the response declares a `Link` header (RFC 8288).
    `headers`: the names of the response headers the success response declares (a next token in one,
    as Visma's ``NextPageToken``); `params`: the operation's (canonical) query parameters, whose
    descriptions may name such a header and whose examples tell a number declared as text from a
    token; `resource`: the last literal segment of the operation's path, which picks the likeliest of
    several arrays. None when the answer has no item array or nothing says how to reach a next page."""
    items = find_items_field(response_schema)
    several = None
    if items is None:
        several = likeliest_items(response_schema, resource)
        if several is None:
            return None
        items = several[0]
    found = _detect_in(
        items,
        query_params,
        response_schema,
        link_header,
        param_types or {},
        list(headers),
        {str(p.get("name")): p for p in params if isinstance(p, Mapping)},
    )
    if found is None or several is None:
        return found
    chosen, arrays = several
    if not _beside(found.next, chosen):
        return None  # the next field of another member's list (Spotify's album `tracks.next`)
    listed = ", ".join(f"`{a}`" for a in arrays)
    why = (
        f"the answer holds {len(arrays)} arrays ({listed}) and none is a usual item list: `{chosen}` is "
        "drafted as the items; check that it is the list the API pages"
    )
    return replace(found, guess=True, doubt=f"{why}; and {found.doubt}" if found.doubt else why)


#: members that hold an answer's paging fields whatever else they hold
_PAGING_HOLDERS = frozenset(
    {
        "links",
        "link",
        "pagination",
        "paging",
        "meta",
        "metadata",
        "page",
        "navigation",
        "responsemetadata",
        "cursors",
    }
)


def _beside(next_field: str | None, items: str) -> bool:
    """Whether the answer's next field `next_field` may page the list at `items`: none, a header, a
    top-level field, one in a paging member, or one in a member that holds `items`."""
    if not next_field or next_field.startswith(NEXT_HEADER) or "." not in next_field:
        return True
    parent = next_field.rpartition(".")[0]
    return items.startswith(parent + ".") or norm_name(parent.split(".")[-1]) in _PAGING_HOLDERS


def _detect_in(
    items: str,
    query_params: list[str],
    response_schema: Any,
    link_header: bool,
    types: dict[str, str],
    headers: list[str],
    params: dict[str, Mapping[str, Any]],
) -> DetectedPagination | None:
    """`detect` once the item array is known."""
    names, numeric = _query_names(query_params, types)
    limit = next((p for p in LIMIT_PARAMS if p in names and p in numeric), None)
    answer = PagingFields.of(
        response_schema, items, [n for n in cursor_like(names, types, params) if _tokenish(n)]
    )
    found = _cursor_style(items, names, answer, limit, types)
    if found is not None:
        return found
    if "starting_after" in names and answer.has_more is not None:
        return DetectedPagination(
            "cursor", items, "starting_after", limit, has_more=answer.has_more, cursor_from_item="id"
        )
    found = _header_token(items, names, limit, types, headers, params)
    if found is not None:
        return found
    if link_header:
        return DetectedPagination("link", items, None, limit)
    if answer.urls:
        return DetectedPagination("link", items, None, limit, next=answer.urls[0])
    bare = next(
        (
            p
            for p, sch in answer.tokens
            if p.split(".")[-1] in ("next", "next_page", "nextPage") and "string" in json_types(sch)
        ),
        None,
    )
    if bare is not None:  # a text `next` that no parameter takes: a next-page URL without `format: uri`
        return DetectedPagination(
            "link",
            items,
            None,
            limit,
            next=bare,
            doubt=(
                f"the answer's `{bare}` is text that no query parameter takes back, so it is drafted as the next "
                "page's URL; check that the API answers a URL there (the runtime follows it only on the API's origin)"
            ),
        )
    page = next((p for p in PAGE_PARAMS if p in numeric), None)
    if page is None and offset_like(names, numeric) is None:
        return _position_only(items, names, numeric, limit, answer, types) or without_answer(
            items, names, types, answer, response_schema, params
        )
    if page is not None:
        return DetectedPagination(
            "page",
            items,
            page,
            limit,
            has_more=answer.has_more,
            doubt=None
            if limit or answer.has_more
            else (
                f"`{page}` pages, but the operation takes no page-size parameter: the runtime asks for no size, so a "
                "page shorter than the tool's page size ends the listing; check the API's page size"
            ),
        )
    offset = next((p for p in OFFSET_PARAMS if p in numeric), None)
    if offset is not None:
        return DetectedPagination(
            "offset",
            items,
            offset,
            limit,
            has_more=answer.has_more,
            doubt=None
            if limit or answer.has_more
            else (
                f"`{offset}` pages by offset, but the operation takes no page-size parameter: the runtime asks for no "
                "size, so a page shorter than the tool's page size ends the listing; check the API's page size"
            ),
        )
    return None


#: position parameters outside the usual spellings, compared without case or separators
_PAGE_NORM = frozenset({"page", "pagenumber", "pagenum", "pageno", "pageindex", "pg", "p"})
_OFFSET_NORM = frozenset(
    {
        "offset",
        "skip",
        "start",
        "startindex",
        "startat",
        "startposition",
        "firstresult",
        "firstrecord",
        "from",
    }
)


def offset_like(names: list[str], numeric: list[str]) -> str | None:
    """The usual offset parameter among the numeric ones (`OFFSET_PARAMS`), or None."""
    return next((p for p in OFFSET_PARAMS if p in numeric), None)


def _position_only(
    items: str,
    names: list[str],
    numeric: list[str],
    limit: str | None,
    answer: PagingFields,
    types: dict[str, str],
) -> DetectedPagination | None:
    """A position parameter spelled outside the usual lists (``pagenumber``, ``pageno``,
    ``page_index``, ``StartIndex``), or a ``page`` declared as text, with nothing in the answer
    that says where the next page is: drafted as the page or offset style with a doubt (the
    runtime ends the listing on a short or empty page), never a text ``offset`` (Asana's is a
    token) nor a time bound."""
    limit = limit or next((n for n in numeric if norm_name(n) in {norm_name(x) for x in LIMIT_PARAMS}), None)
    for style, wanted in (("page", _PAGE_NORM), ("offset", _OFFSET_NORM)):
        param = next((n for n in numeric if norm_name(n) in wanted), None)
        textual = None
        if param is None and style == "page":
            textual = next((n for n in names if norm_name(n) in wanted and types.get(n) == "string"), None)
            param = textual
        if param is None:
            continue
        found = f"`{param}` looks like a {'page number' if style == 'page' else 'position (offset)'}"
        if textual:
            found += " but the spec declares it as text"
        size = (
            f"`{limit}` as the page size" if limit else "no page-size parameter (the runtime asks for none)"
        )
        said = (
            f"the answer's `{answer.has_more}` says whether more follow"
            if answer.has_more
            else "nothing in the answer says where the next page is (no next token, next URL or has-more flag)"
        )
        return DetectedPagination(
            style,
            items,
            param,
            limit,
            has_more=answer.has_more,
            doubt=(
                f"{found}, with {size}, and {said}: drafted as the {style} style, which ends the listing on a short "
                f"or empty page; check that the API {'numbers pages' if style == 'page' else 'counts items'} "
                f"this way and what its page size is"
            ),
        )
    return None


#: parts of a query parameter's name that make it take a token (compared without case or separators;
#: a bare "token" is as often a credential or a filter: ``include_tokens``, ``linkingToken``)
_TOKEN_PARTS = (
    "cursor",
    "marker",
    "continuation",
    "scrollid",
    "pagetoken",
    "nexttoken",
    "pagingtoken",
    "paginationtoken",
    "skiptoken",
    "starttoken",
    "resumetoken",
)
#: the other end of a range: a `start` or `from` beside one of these bounds a range, never a position
_RANGE_ENDS = frozenset({"end", "to", "until", "stop", "endtime", "enddate", "endat", "before"})
#: parts of a name that make a "token" anything but a position (an access token, an API key)
_NOT_POSITION = ("access", "auth", "api", "session", "csrf", "id_token", "idtoken", "refresh")
_LIMIT_NORM = frozenset(norm_name(n) for n in LIMIT_PARAMS)
#: the formats of a text parameter that is a moment, never a position
_TIME_FORMATS = frozenset({"date", "date-time", "time"})


def _tokenish(name: str) -> bool:
    """Whether a parameter's name says it takes a token (``cursor``, ``pageToken``, ``marker``)."""
    return name in CURSOR_PARAMS or any(part in norm_name(name) for part in _TOKEN_PARTS)


def cursor_like(
    names: list[str], types: dict[str, str], params: Mapping[str, Mapping[str, Any]] | None = None
) -> list[str]:
    """The query parameters that take a token, in `names` order: a usual cursor name
    (`CURSOR_PARAMS`), a name holding ``cursor``, ``marker``, ``continuation`` or a page token
    (``_page_token``, ``nextToken``; never a bare ``token``, ``include_tokens``, an access or an API
    token), or an ``offset``/``skip``/``start``/``page`` declared as text that is no number declared
    as text (`numbers_as_text`) nor a date, nor a ``start`` or ``from`` an ``end`` or ``to`` bounds."""
    out = []
    ranged = any(norm_name(n) in _RANGE_ENDS for n in names)
    for name in names:
        n = norm_name(name)
        # a bare `token` is as often a credential; a `start` an `end` bounds is a range
        if n == "token" or any(w in n for w in _NOT_POSITION) or (ranged and n in ("start", "from")):
            continue
        if _tokenish(name) or (
            n in {"offset", "skip", "start", "page"}
            and types.get(name) == "string"
            and not numbers_as_text(name, names, types, params or {})
        ):
            out.append(name)
    return out


def _schema_of(param: Mapping[str, Any] | None) -> Mapping[str, Any]:
    schema = param.get("schema") if isinstance(param, Mapping) else None
    return schema if isinstance(schema, Mapping) else {}


def numbers_as_text(
    name: str, names: list[str], types: dict[str, str], params: Mapping[str, Mapping[str, Any]]
) -> bool:
    """Whether the text position parameter `name` holds a number the spec declares as text: its
    example or default is digits, or (with neither, and no date format) a page-size parameter beside
    it is text too (a spec that types every query parameter as text, as converted Swagger often
    does). A text position beside a numeric page size is a token (Asana's ``offset``, Azure Face's
    ``start``)."""
    param = params.get(name)
    schema = _schema_of(param)
    if schema.get("format") in _TIME_FORMATS:
        return False
    for key in ("example", "default"):
        for where in (param or {}, schema):
            value = where.get(key) if isinstance(where, Mapping) else None
            if value is not None:
                return str(value).strip().isdigit()
    sizes = [n for n in names if norm_name(n) in _LIMIT_NORM]
    return bool(sizes) and all(types.get(n) in (None, "string") for n in sizes)


#: a header-like word in a parameter's description (``X-Files-Cursor-Next``, ``NextPageToken``)
_HEADER_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+|[A-Z][a-z]+(?:[A-Z][a-z]+)+")


def _next_header(name: str) -> bool:
    """Whether a response header name says it holds the next page's token (``NextPageToken``,
    ``X-Next-Cursor``, ``X-Files-Cursor-Next``, ``x-ms-continuation``; never ``Link`` nor a previous
    page's)."""
    n = norm_name(name)
    if n == "link" or "prev" in n or "before" in n:
        return False
    return (
        "cursor" in n
        or "continuation" in n
        or ("next" in n and any(w in n for w in ("token", "page", "marker", "key", "start", "offset")))
    )


def _header_token(
    items: str,
    names: list[str],
    limit: str | None,
    types: dict[str, str],
    headers: list[str],
    params: Mapping[str, Mapping[str, Any]],
) -> DetectedPagination | None:
    """A token parameter (`cursor_like`) fed from a response header: one the response declares
    (Visma's ``NextPageToken``), else one the parameter's description names with the word "header"
    (Files.com's ``X-Files-Cursor-Next``, drafted with a doubt, as the spec does not declare it)."""
    takers = cursor_like(names, types, params)
    if not takers:
        return None
    declared = next((h for h in headers if _next_header(h)), None)
    if declared is not None:
        return DetectedPagination("cursor", items, takers[0], limit, next=f"{NEXT_HEADER}{declared}")
    for name in takers:
        text = str(params.get(name, {}).get("description") or "")
        said = next(
            (w for w in _HEADER_WORD.findall(text) if _next_header(w) and "next" in norm_name(w)), None
        )
        if said is not None and "header" in text.lower():
            return DetectedPagination(
                "cursor",
                items,
                name,
                limit,
                next=f"{NEXT_HEADER}{said}",
                doubt=(
                    f"the description of `{name}` says the next value comes in the response header `{said}`, "
                    "which the spec does not declare: check the header's name (the runtime ends the listing when "
                    "the header is absent)"
                ),
            )
    return None


def without_answer(
    items: str,
    names: list[str],
    types: dict[str, str],
    answer: PagingFields,
    schema: Any,
    params: Mapping[str, Mapping[str, Any]],
) -> DetectedPagination | None:
    """A position parameter with nothing in the answer or the declared headers that says where the
    next page is, drafted for a human to confirm (`DetectedPagination.guess`, with a doubt saying
    what is missing): ``starting_after`` walks from the last item's id while pages come back full;
    an ``offset``/``skip``/``start`` that is a number declared as text (`numbers_as_text`) is the
    offset style, which ends on a short or empty page; any other token parameter (`cursor_like`) is
    the link style, which follows a ``Link: rel="next"`` header and else shows the first page only.
    None for a time bound alone, which is a filter as often as a position."""
    limit = next((n for n in names if norm_name(n) in _LIMIT_NORM), None)
    after = next((n for n in names if norm_name(n) == "startingafter"), None)
    item_id = item_id_field(schema, items)
    if after is not None and item_id is not None:
        return DetectedPagination(
            "cursor",
            items,
            after,
            limit,
            cursor_from_item=item_id,
            guess=True,
            doubt=(
                f"`{after}` takes the last item's `{item_id}`, but the answer has no has-more flag: the runtime "
                "asks for the next page while pages come back full, so a short page ends the listing; check the "
                "API's page size and that it walks this way"
            ),
        )
    ranged = any(norm_name(n) in _RANGE_ENDS for n in names)  # DigitalOcean's start/end: a time range
    text = next(
        (
            n
            for n in names
            if norm_name(n) in ("offset", "skip", "start", "startindex", "from")
            and not (ranged and norm_name(n) in ("start", "from"))
            and types.get(n) == "string"
            and numbers_as_text(n, names, types, params)
        ),
        None,
    )
    if text is not None:
        size = (
            f"`{limit}` as the page size" if limit else "no page-size parameter (the runtime asks for none)"
        )
        return DetectedPagination(
            "offset",
            items,
            text,
            limit,
            guess=True,
            doubt=(
                f"`{text}` looks like a position (offset) the spec declares as text, with {size}, and nothing "
                "in the answer says where the next page is: drafted as the offset style, which ends the listing "
                "on a short or empty page; check that the API counts items this way"
            ),
        )
    token = next(iter(cursor_like(names, types, params)), None)
    if token is None:
        return None
    return DetectedPagination(
        "link",
        items,
        None,
        limit if limit != token else None,
        guess=True,
        doubt=(
            f"`{token}` takes a position, but neither the answer nor a response header the spec declares says "
            'where its next value is: drafted as the link style, so the runtime follows a `Link: rel="next"` '
            "header and else shows the first page only; if the API answers the next value, set `style: cursor`, "
            f"`cursor: {token}` and `next:` naming the answer member (or `header:NAME` for a response header)"
        ),
    )


def paging_signals(query_params: list[str], response_schema: Any, link_header: bool) -> list[str]:
    """What an operation carries that looks like paging, as phrases for a message: the query
    parameters of the usual paging, page-size and time-window names it takes (``takes limit, since,
    until``), the next tokens, next URLs and has-more flags of its answer (``answers
    pagination.next``), and a declared ``Link`` header. Empty when it carries none."""
    known = (
        set(CURSOR_PARAMS) | set(OFFSET_PARAMS) | set(PAGE_PARAMS) | set(LIMIT_PARAMS) | set(WINDOW_PARAMS)
    )
    taken = [n for n in query_params if n in known]
    out = [f"takes {', '.join(taken)}"] if taken else []
    items = find_items_field(response_schema)
    if items is not None:
        answer = PagingFields.of(response_schema, items)
        fields = [p for p, _ in answer.tokens] + answer.urls + ([answer.has_more] if answer.has_more else [])
        if fields:
            out.append(f"answers {', '.join(dict.fromkeys(fields))}")
    if link_header:
        out.append("declares a Link header")
    return out


#: the public names, `find_items_field` among them (lint reads it here, with `paging_signals`)
__all__ = [
    "CURSOR_PARAMS",
    "DESCENDING_WINDOW",
    "LIMIT_PARAMS",
    "NEXT_HEADER",
    "OFFSET_PARAMS",
    "PAGE_PARAMS",
    "WINDOW_PARAMS",
    "DetectedPagination",
    "cursor_like",
    "detect",
    "find_items_field",
    "numbers_as_text",
    "offset_like",
    "paging_signals",
    "without_answer",
]
