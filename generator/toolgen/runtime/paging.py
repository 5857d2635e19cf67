"""Pagination progress: a cursor always moves, or the listing ends and says why.

An API that ignores the cursor parameter answers every page with the same next position; a
``Link`` header may point at the page it came with. Followed blindly, either gives a
``next_cursor`` byte-identical to the one passed in, and an agent loops forever. `repeats` tells
when the API's next position is the position of the page just fetched; the registry then ends
the listing (``next_cursor: null``) and marks the page with `STALLED` under the key `STALLED_KEY`,
so the caller can tell "the API said this was the last page" from "the API stopped moving".

Only a position equal to the current one is caught (a cycle through several pages is not: the
cursor carries no history).
"""

from __future__ import annotations

from typing import Any

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
