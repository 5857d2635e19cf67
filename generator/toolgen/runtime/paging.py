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
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

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
    """The page digests a decoded cursor remembers (none for a first page, or a cursor of an
    earlier version)."""
    seen = cursor.get("h") if cursor else None
    return [str(d) for d in seen][-HISTORY:] if isinstance(seen, list) else []


def remember(history: list[str], digest: str) -> list[str]:
    """`history` once the page `digest` was left: at most the last `HISTORY` digests."""
    return [*history, digest][-HISTORY:]
