"""Pagination progress: a cursor always moves, or the listing ends and says why.

An API that ignores the cursor parameter answers every page with the same next position; a
``Link`` header may point at the page it came with. Followed blindly, either gives a
``next_cursor`` byte-identical to the one passed in, and an agent loops forever; an API that
ignores its offset or page parameter gives cursors that move while the pages do not. Two checks:

- `repeats`: the API's next position is the position of the page just fetched;
- `page_digest`: a cursor carries the digests of the last `HISTORY` API pages the walk has left
  (``"h"``); when a page's items have one of those digests, the API answered a page again (it
  ignores its offset or page parameter, or its positions go round in a cycle of up to `HISTORY`
  pages), and its items (already shown) are not shown twice.

Either way the registry ends the listing (``next_cursor: null``) and marks the page with `STALLED`
under the key `STALLED_KEY`, so the caller can tell "the API said this was the last page" from
"the API stopped moving". A longer cycle is not caught, and an API that legitimately answers a page
identical to one of the last `HISTORY` ends its listing there.

The call path's paging (policy row ``pagination``): `pagination_params` reads a page's position
from the caller's arguments and decoded cursor (`Page`, the query the API is sent); `shape_page`
turns the API's page into ``{"items", "next_cursor"}`` within the output budget; `link_position`
keeps a ``Link`` header's next page only on the API's own origin (`same_origin`) and without the
credentials. Pure; a bad cursor is a `ToolError` ``invalid_cursor``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, unquote_plus, urlencode

import httpx

from ..errors import make_error
from .request import BuiltRequest
from .shaping import CursorCodec, fit_page, get_path, next_position

#: How many API pages' digests a cursor remembers (17 bytes each in the cursor).
HISTORY = 8
#: The page key that carries `STALLED`.
STALLED_KEY = "_stalled"
#: What a page whose next position repeated its own carries under `STALLED_KEY`.
STALLED: dict[str, str] = {
    "code": "cursor_did_not_move",
    "message": "The API answered this page's own position as the next one (it ignores the cursor parameter, "
    "or its Link header points at this page), so the listing ends here instead of repeating.",
}


def repeats(next_position: Any, current: Any) -> bool:
    """Whether the API's `next_position` is the `current` page's position (compared as text, as
    both travel in a cursor): following it would fetch the same page again."""
    return next_position is not None and current is not None and str(next_position) == str(current)


def page_digest(items: list[Any]) -> str:
    """A short digest of an API page's raw items (SHA-256 of their canonical JSON, 16 hex digits)."""
    text = json.dumps(items, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def pages_seen(cursor: dict[str, Any] | None) -> list[str]:
    """The page digests a decoded cursor remembers (none for a first page). A cursor without its
    list ``h`` is refused when it is decoded (`toolgen.runtime.pipeline.canonical`)."""
    seen = cursor.get("h") if cursor else None
    return [str(d) for d in seen][-HISTORY:] if isinstance(seen, list) else []


def remember(history: list[str], digest: str) -> list[str]:
    """`history` once the page `digest` was left: at most the last `HISTORY` digests."""
    return [*history, digest][-HISTORY:]


@dataclass(frozen=True)
class Page:
    """Where a paginated call reads: `size` items, from the API's `position` (None: the API's first
    page), skipping `skip` items already shown; `cursor` the decoded cursor (None on a first page);
    `link_url` the next-page URL of a ``link`` style walk (sent instead of the built URL)."""

    size: int = 0
    position: Any = None
    skip: int = 0
    cursor: dict[str, Any] | None = None
    link_url: str | None = None


def pagination_params(
    pagination: Mapping[str, Any] | None,
    args: Mapping[str, Any],
    cursor: dict[str, Any] | None,
    base_url: str,
) -> tuple[list[tuple[str, str]], Page]:
    """(extra query pairs, `Page`) of a call with `args` and the decoded `cursor` under the row's
    ``pagination`` (None or empty: no paging). Raises `ToolError` ``invalid_cursor`` for a link
    cursor outside the API's origin."""
    if not pagination:
        return [], Page()
    max_size = int(pagination.get("max_page_size") or 100)
    min_size = int(pagination.get("min_page_size") or 1)
    page_size = args.get(pagination.get("page_size_arg") or "page_size")
    if not isinstance(page_size, int) or isinstance(page_size, bool):
        page_size = int(pagination.get("default_page_size") or 20)
    page_size = max(min_size, min(page_size, max_size))
    position = cursor.get("c") if cursor else None
    first = pagination.get("first_position")
    if position is None and isinstance(first, int) and pagination.get("style") in ("page", "offset"):
        # the first page of a page/offset walk starts at the API's first page number (or offset),
        # sent when the parameter is required (else the API's own default applies)
        position = first if pagination.get("first_required") else None
    skip = int(cursor.get("s") or 0) if cursor else 0
    if cursor is not None and int(cursor.get("n") or page_size) != page_size:
        # the page geometry is part of the position for offset/page styles
        page_size = int(cursor.get("n") or page_size)
    if pagination.get("style") == "link" and position:
        link_url = str(position)
        if not same_origin(link_url, base_url):
            raise make_error(
                "invalid_cursor",
                "The cursor points outside this API.",
                details={"pointer": "/" + (pagination.get("cursor_arg") or "cursor")},
            )
        return [], Page(page_size, position, skip, cursor, link_url)
    query: list[tuple[str, str]] = []
    limit_param = pagination.get("limit_param")
    cursor_param = pagination.get("cursor_param")
    if limit_param:
        query.append((str(limit_param), str(page_size)))
    if position is not None and cursor_param:
        query.append((str(cursor_param), str(position)))
    return query, Page(page_size, position, skip, cursor)


def same_origin(url: str, base_url: str) -> bool:
    """Whether `url` is an absolute URL of the API's own origin (RFC 6454: scheme, host and
    port equal to `base_url`'s), without userinfo. A text prefix is not enough:
    ``https://api.example.com.evil.net`` and ``https://api.example.com@evil.net`` start with
    the origin's text."""
    try:
        target, base = httpx.URL(url), httpx.URL(base_url)
    except Exception:  # noqa: BLE001 - an unparsable URL is simply not ours
        return False
    return (
        target.is_absolute_url
        and not target.userinfo
        and target.scheme == base.scheme
        and target.host == base.host
        and target.port == base.port
    )


def link_position(raw: str, request: BuiltRequest, secret_values: list[str], base_url: str) -> str | None:
    """The next-page URL of a ``Link`` header made safe to keep in a cursor: resolved against the
    request URL (RFC 8288 allows relative targets), on the API's own origin only, and stripped of
    the credential query parameters the runtime adds itself (an API that copies its query into
    the link would otherwise put the key into a readable cursor). ``None`` (the last page) for
    a target elsewhere, or one that still holds a secret, as is or once percent-decoded."""
    try:
        url = httpx.URL(request.url).join(raw)
    except Exception:  # noqa: BLE001 - an unparsable link ends the walk
        return None
    if not same_origin(str(url), base_url):
        return None
    if request.redact_query:
        kept = [(k, v) for k, v in url.params.multi_items() if k.lower() not in request.redact_query]
        url = url.copy_with(query=urlencode(kept, quote_via=quote).encode("ascii") or None)
    text = str(url)
    readings = (text, unquote(text), unquote_plus(text))  # %5F is _ to the API (RFC 3986 §2.3)
    if any(secret in reading for secret in secret_values for reading in readings):
        return None
    return text


@dataclass(frozen=True)
class PageShaper:
    """What `shape_page` needs besides the answer: the row's ``pagination``, the cursor codec and
    the cursor scope (``<api>/<tool>``), the API's base URL, the output budget (bytes) and the
    shaping of one item (redaction, then projection)."""

    pagination: Mapping[str, Any]
    cursors: CursorCodec
    scope: str
    base_url: str
    max_bytes: int
    shape_item: Callable[[Any], Any]


def shape_page(
    shaper: PageShaper,
    body: Any,
    headers: httpx.Headers,
    page: Page,
    request: BuiltRequest,
    secret_values: list[str],
) -> tuple[dict[str, Any], int]:
    """An API page as ``{"items", "next_cursor"}`` within the budget (`shaping.fit_page`), and the
    bytes omitted. A page that did not move (`repeats`, a digest the cursor remembers) ends the
    listing and is marked with `STALLED`. Raises `ToolError` from `fit_page`."""
    pagination = shaper.pagination
    raw_items = get_path(body, pagination.get("items") or "")
    items: list[Any] = list(raw_items) if isinstance(raw_items, list) else []
    position = page.position
    next_pos = next_position(pagination, body, headers, items, page.size, position)
    current = position
    if pagination.get("style") == "link":
        current = link_position(
            request.url, request, [], shaper.base_url
        )  # this page's URL, as a cursor keeps it
        if next_pos is not None:
            next_pos = link_position(str(next_pos), request, secret_values, shaper.base_url)
    digest = page_digest(items)
    history = pages_seen(page.cursor)  # digests of the API pages this walk has left
    again = bool(items) and not page.skip and digest in history
    stalled = again or repeats(next_pos, current)  # the API did not move: end here
    if stalled:
        next_pos = None
    visible = [] if again else items[page.skip :]  # a page answered again was shown already
    shaped = [shaper.shape_item(i) for i in visible]
    style = pagination.get("style")

    def encode(payload: dict[str, Any]) -> str:
        return shaper.cursors.encode(shaper.scope, {**payload, "n": page.size})

    def cursor_after(kept: int) -> str | None:
        """The cursor once the first `kept` visible items were shown."""
        if kept >= len(visible):
            return None if next_pos is None else encode({"c": next_pos, "h": remember(history, digest)})
        if style == "cursor" and pagination.get("cursor_from_item") and kept:
            last = get_path(visible[kept - 1], pagination["cursor_from_item"])
            if last not in (None, "") and last != position:
                return encode({"c": last, "h": history})
            # the last shown item names no position: stay on this page, skip what was shown
        if style == "offset":
            start = position if position is not None else pagination.get("first_position") or 0
            return encode({"c": int(start) + page.skip + kept, "h": history})
        return encode({"c": position, "s": page.skip + kept, "h": history})

    if not stalled:
        return fit_page(shaped, shaper.max_bytes, cursor_after)
    marker = {STALLED_KEY: STALLED}
    max_bytes = shaper.max_bytes
    marker_bytes = len(json.dumps(marker, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    room = max_bytes if max_bytes <= 0 else max(1, max_bytes - marker_bytes - 1)
    page_out, omitted = fit_page(shaped, room, cursor_after)
    if page_out.get("next_cursor") is None:  # the last of this page's items is shown: say why it ends
        page_out.update(marker)
    return page_out, omitted
