"""Output shaping: what of an API response the model gets to see.

Stage input: a decoded response body (and headers, for Link pagination) plus the row's ``output``
and ``pagination`` policy. Stage output: a JSON object — projected to ``output.fields`` (dotted
paths; a path through an array applies to each element), with ``output.redact`` paths replaced by
``"[redacted]"``, paginated lists normalised to ``{"items": [...], "next_cursor": str | null}``, and
cut to ``output.max_bytes`` (UTF-8 bytes of compact JSON) with an explicit
``"_truncated": {"original_bytes": n, "omitted_items": k}`` marker.

Cursors are issued by the runtime: ``base64url(json payload) "." base64url(HMAC-SHA256)`` over the
API, the tool and the payload, with a runtime key. A cursor from another tool, another runtime key,
or edited by hand fails with ``invalid_cursor``. The payload wraps the API's own position (cursor
value, offset, page number or next-page URL) plus a count of items to skip on that page (used when
the size budget cut a page short, so no item is silently lost).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

import httpx

from ...results import TRUNCATED_KEY
from ..errors import ToolError, make_error

REDACTED = "[redacted]"

Tree = dict[str, "Tree"]


def field_tree(paths: Iterable[str]) -> Tree:
    """Dotted paths → nested dict tree (``["a.b", "a.c", "d"]`` → ``{"a": {"b": {}, "c": {}}, "d": {}}``)."""
    tree: Tree = {}
    for path in paths:
        node = tree
        for part in path.split("."):
            if part == "":
                continue
            node = node.setdefault(part, {})
    return tree


def project(value: Any, tree: Tree) -> Any:
    """Keep only the paths of `tree` in `value` (through arrays; absent paths are skipped)."""
    if not tree:
        return value
    if isinstance(value, list):
        return [project(v, tree) for v in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, sub in tree.items():
            if key in value:
                out[key] = project(value[key], sub)
        return out
    return value


def redact(value: Any, tree: Tree) -> Any:
    """Replace the leaves named by `tree` with ``"[redacted]"`` (through arrays); a new value."""
    if not tree:
        return value
    if isinstance(value, list):
        return [redact(v, tree) for v in value]
    if isinstance(value, dict):
        out = dict(value)
        for key, sub in tree.items():
            if key in out:
                out[key] = REDACTED if not sub else redact(out[key], sub)
        return out
    return value


def redact_anywhere(value: Any, tree: Tree) -> Any:
    """`redact` applied at every object inside `value`, not only at its top: an error body may
    echo the resource at any depth (``{"errors": [{"requester": {"phone": …}}]}``). A new value;
    `value` is a decoded body, so its depth is bounded."""
    if not tree:
        return value
    if isinstance(value, dict):
        return {k: redact_anywhere(v, tree) for k, v in redact(value, tree).items()}
    if isinstance(value, list):
        return [redact_anywhere(v, tree) for v in value]
    return value


def get_path(value: Any, dotted: str | None) -> Any:
    """The value at a dotted path of nested objects (``""``/``None`` = the value itself); ``None``
    when absent."""
    if not dotted:
        return value
    for part in dotted.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return None
    return value


def answer_member(body: Any, dotted: str | None) -> Any:
    """A paging member of an answer (a next cursor, next URL or has-more flag): a top-level member
    named `dotted` as written (OData's ``@odata.nextLink``), else the value at the dotted path."""
    if dotted and isinstance(body, dict) and dotted in body:
        return body[dotted]
    return get_path(body, dotted)


#: how a pagination's ``next_field`` names a response header instead of an answer member
NEXT_HEADER = "header:"


def next_member(body: Any, headers: Mapping[str, str], field: str | None) -> Any:
    """The next page's token or URL where the row's `field` says: ``header:NAME``, the response
    header NAME (compared without case, RFC 9110 §5.1; Visma's ``NextPageToken``), None when the
    answer does not carry it; else the answer member `field` (`answer_member`)."""
    if field and field.startswith(NEXT_HEADER):
        wanted = field[len(NEXT_HEADER) :].lower()
        return next((v for k, v in headers.items() if k.lower() == wanted), None)
    return answer_member(body, field)


def compact_size(value: Any) -> int:
    """UTF-8 byte length of the compact JSON serialisation."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def _largest_list(value: dict[str, Any]) -> str | None:
    best: str | None = None
    best_size = -1
    for key, item in value.items():
        if isinstance(item, list) and item:
            size = compact_size(item)
            if size > best_size:
                best, best_size = key, size
    return best


def enforce_budget(
    result: dict[str, Any], max_bytes: int, *, list_key: str | None = None, keep: Iterable[str] = ()
) -> tuple[dict[str, Any], int]:
    """Cut `result` to at most `max_bytes` (compact JSON, UTF-8) and mark the cut.

    Items are dropped from the end of `list_key` (or the largest top-level array) first; if that is
    not enough, long strings are shortened (suffix ``"…"``), then the largest members are dropped
    (those not in `keep`, the members the output schema requires, first). An object is never
    emptied to the marker alone while a member fits. A cut result carries ``"_truncated":
    {"original_bytes": n, "omitted_items": k[, "shortened_members": [path, ...]][,
    "omitted_members": [name, ...]]}`` (paths dotted, at most 20 listed).
    Returns (result, omitted_items). `max_bytes` <= 0 disables the budget.
    """
    original = compact_size(result)
    if max_bytes <= 0 or original <= max_bytes:
        return result, 0
    out = dict(result)
    marker: dict[str, Any] = {"original_bytes": original, "omitted_items": 0}
    out[TRUNCATED_KEY] = marker
    key = list_key if list_key is not None and isinstance(out.get(list_key), list) else _largest_list(out)
    omitted = 0
    if key is not None:
        items = list(out[key])
        lo, hi = 0, len(items)
        # largest prefix that fits
        while lo < hi:
            mid = (lo + hi + 1) // 2
            out[key] = items[:mid]
            marker["omitted_items"] = len(items) - mid
            if compact_size(out) <= max_bytes:
                lo = mid
            else:
                hi = mid - 1
        out[key] = items[:lo]
        omitted = len(items) - lo
        marker["omitted_items"] = omitted
        if compact_size(out) <= max_bytes:
            return out, omitted
    # shorten strings, longest first
    shortened: list[str] = []
    for _ in range(64):
        size = compact_size(out)
        if size <= max_bytes:
            return out, omitted
        path, length = _longest_string(out, ())
        if path is None or length <= 16:
            break
        excess = size - max_bytes
        keep_chars = max(8, length - excess - 8)
        _set_in(out, path, _get_in(out, path)[:keep_chars] + "…")
        dotted = ".".join(str(p) for p in path)
        if dotted not in shortened and len(shortened) < 20:
            shortened.append(dotted)
            marker["shortened_members"] = shortened
    # drop the largest members: optional ones first, required ones only when nothing else is left
    required = set(keep)
    order = sorted(
        (k for k in out if k != TRUNCATED_KEY), key=lambda k: (k in required, -compact_size(out[k]), k)
    )
    dropped: list[str] = []
    for name in order:
        if compact_size(out) <= max_bytes:
            break
        del out[name]
        dropped.append(name)
        marker["omitted_members"] = dropped[:20]
    return out, omitted


#: Strings up to this many characters are never shortened by `shrink`.
_KEEP_CHARS = 64
#: A string without spaces (an id, URL, date, token) is shortened only beyond this length.
_ATOM_CHARS = 2048


def shrink(value: Any, max_bytes: int) -> tuple[Any, bool]:
    """`value` made to fit `max_bytes` (compact JSON, UTF-8) as far as it can without losing its
    identity or its type: long prose strings (with a space) are shortened first (suffix ``"…"``,
    longest first, never below 64 characters; identifiers, URLs, dates and other atomic values of up
    to 2,048 characters stay whole, so a shortened value still matches its schema's format), then the largest nested arrays and objects are emptied (``[]``, ``{}``);
    scalars outside them (ids, numbers, flags) are always kept. Returns (value, changed). The input
    is not modified. It may still exceed `max_bytes` when its kept scalars alone do.

    Linear in the size of `value`: sizes are measured once and updated arithmetically, so a hostile
    multi-megabyte item costs one pass, not one pass per cut."""
    total = compact_size(value)
    if total <= max_bytes:
        return value, False
    out = json.loads(json.dumps(value, ensure_ascii=False))  # a private copy to edit in place
    strings: list[tuple[int, tuple[Any, ...]]] = []
    containers: list[tuple[int, tuple[Any, ...]]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(out, ())]
    while stack:
        node, at = stack.pop()
        children = (
            node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        )
        for k, child in children:
            if (
                isinstance(child, str)
                and len(child) > _KEEP_CHARS
                and (" " in child or len(child) > _ATOM_CHARS)
            ):
                strings.append((len(child), (*at, k)))
            elif isinstance(child, (dict, list)):
                containers.append((compact_size(child), (*at, k)))
                stack.append((child, (*at, k)))
    # 1. shorten strings, longest first, each just enough (sizes in UTF-8 bytes of the JSON text)
    for _, path in sorted(strings, key=lambda e: (-e[0], e[1])):
        if total <= max_bytes:
            return out, True
        text = _get_in(out, path)
        size = len(json.dumps(text, ensure_ascii=False).encode("utf-8"))
        keep = max(_KEEP_CHARS, len(text) - max(0, total - max_bytes) - 8)
        if keep >= len(text):
            continue
        cut = text[:keep] + "…"
        _put(out, path, cut)
        total -= size - len(json.dumps(cut, ensure_ascii=False).encode("utf-8"))
    total = compact_size(out)
    # 2. empty the largest containers, skipping those inside one already emptied
    emptied: list[tuple[Any, ...]] = []
    for _, path in sorted(containers, key=lambda e: (-e[0], e[1])):
        if total <= max_bytes:
            break
        if any(path[: len(e)] == e for e in emptied):
            continue
        node = _get_in(out, path)
        before = compact_size(node)
        _put(out, path, {} if isinstance(node, dict) else [])
        total -= before - 2
        emptied.append(path)
    return out, True


def _put(value: Any, path: tuple[Any, ...], new: Any) -> None:
    """Set the value at `path` in place (`value` is a private copy)."""
    for part in path[:-1]:
        value = value[part]
    value[path[-1]] = new


def fit_page(items: list[Any], max_bytes: int, cursor_after: Any) -> tuple[dict[str, Any], int]:
    """A page ``{"items", "next_cursor"[, "_truncated"]}`` of at most `max_bytes` that always makes
    progress: the longest prefix of `items` that fits, and at least the first item (shortened by
    `shrink` when it alone is larger than the budget), so following ``next_cursor`` can never
    return the same position twice. `cursor_after(k)` is the ``next_cursor`` once the first `k` items
    were shown (``k == len(items)``: the API's own next page). Returns (page, omitted items); a cut
    page carries ``"_truncated": {"original_bytes", "omitted_items"[, "shortened_items"]}``."""
    page: dict[str, Any] = {"items": items, "next_cursor": cursor_after(len(items))}
    original = compact_size(page)
    if max_bytes <= 0 or original <= max_bytes or not items:
        return page, 0
    marker: dict[str, Any] = {"original_bytes": original, "omitted_items": 0}

    def candidate(k: int) -> dict[str, Any]:
        marker["omitted_items"] = len(items) - k
        return {"items": items[:k], "next_cursor": cursor_after(k), "_truncated": dict(marker)}

    lo, hi = 1, len(items)
    if compact_size(candidate(1)) > max_bytes:
        page = candidate(1)
        page["_truncated"]["shortened_items"] = 1  # part of the page: measured before the room is
        room = max_bytes - (compact_size(page) - compact_size(items[0]))
        first, changed = shrink(items[0], max(room, 0))
        for _ in range(4):  # `shrink` measures its cuts in characters: take back what it overshot
            over = compact_size(first) - room
            if not changed or over <= 0:
                break
            first, changed = shrink(items[0], max(room - over, 0))
        page["items"] = [first]
        if not changed:
            del page["_truncated"]["shortened_items"]
        return page, len(items) - 1
    while lo < hi:  # largest prefix that fits
        mid = (lo + hi + 1) // 2
        if compact_size(candidate(mid)) <= max_bytes:
            lo = mid
        else:
            hi = mid - 1
    return candidate(lo), len(items) - lo


def _longest_string(value: Any, path: tuple[Any, ...]) -> tuple[tuple[Any, ...] | None, int]:
    best: tuple[tuple[Any, ...] | None, int] = (None, 0)
    if isinstance(value, str):
        return path, len(value)
    children: Iterable[tuple[Any, Any]]
    if isinstance(value, dict):
        children = ((k, v) for k, v in value.items() if k != "_truncated")
    elif isinstance(value, list):
        children = enumerate(value)
    else:
        return best
    for k, v in children:
        p, n = _longest_string(v, (*path, k))
        if n > best[1]:
            best = (p, n)
    return best


def _get_in(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _set_in(value: Any, path: tuple[Any, ...], new: Any) -> None:
    # copy containers on the way down so the caller's original body is untouched
    for part in path[:-1]:
        child = value[part]
        child = dict(child) if isinstance(child, dict) else list(child)
        value[part] = child
        value = child
    value[path[-1]] = new


# --------------------------------------------------------------------------------------------------
# cursors


def cursor_key_from_env() -> bytes | None:
    """The cursor HMAC key derived from ``TOOLGEN_CURSOR_KEY`` (any text), or ``None`` if unset."""
    value = os.environ.get("TOOLGEN_CURSOR_KEY")
    return hashlib.sha256(value.encode("utf-8")).digest() if value else None


class CursorCodec:
    """Issues and checks the runtime's opaque pagination cursors.

    `key` is the HMAC key (bytes; keep it stable across processes that must accept each other's
    cursors). Tokens are bound to ``(api, tool)``.
    """

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("cursor key must be at least 16 bytes")
        self._key = key

    def _mac(self, scope: str, payload: bytes) -> bytes:
        return hmac.new(self._key, scope.encode("utf-8") + b"\x00" + payload, hashlib.sha256).digest()[:18]

    def derive(self, label: bytes) -> bytes:
        """A 32-byte secret for another purpose named by `label` (HMAC-SHA256 of it under this key):
        shared by every process that shares the cursor key, and telling nothing about the key."""
        return hmac.new(self._key, b"toolgen/derive\x00" + label, hashlib.sha256).digest()

    def encode(self, scope: str, payload: Mapping[str, Any]) -> str:
        """An opaque token for `payload` (a JSON object) bound to `scope` (``"<api>/<tool>"``)."""
        raw = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode("utf-8")
        body = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
        mac = base64.urlsafe_b64encode(self._mac(scope, raw)).rstrip(b"=").decode("ascii")
        return f"{body}.{mac}"

    def decode(self, scope: str, token: str) -> dict[str, Any]:
        """The payload of a token issued for `scope`; raises `ToolError` ``invalid_cursor`` for
        anything else (malformed, tampered, another tool's or another key's cursor)."""
        try:
            body, mac = token.split(".")
            raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
            given = base64.urlsafe_b64decode(mac + "=" * (-len(mac) % 4))
        except (ValueError, binascii.Error):
            raise _invalid_cursor() from None
        if not hmac.compare_digest(given, self._mac(scope, raw)):
            raise _invalid_cursor()
        try:
            payload = json.loads(raw)
        except ValueError:
            raise _invalid_cursor() from None
        if not isinstance(payload, dict):
            raise _invalid_cursor()
        return payload


def _invalid_cursor() -> ToolError:
    return make_error(
        "invalid_cursor",
        "The cursor was not issued by this tool (it is malformed, edited, expired or from another tool).",
        details={"pointer": "/cursor"},
    )


def parse_link_next(header: str | None) -> str | None:
    """The ``rel="next"`` target of an RFC 8288 ``Link`` header (several links, quoted parameters
    holding commas or semicolons, a ``rel`` of several relation types), or ``None``. Parsed by httpx
    (`httpx.Response.links`), not by hand."""
    if not header:
        return None
    links = httpx.Response(200, headers=[("link", header)]).links
    for link in links.values():
        if "next" in str(link.get("rel") or "").lower().split() and link.get("url"):
            return str(link["url"])
    return None


def next_position(
    pagination: Mapping[str, Any],
    body: Any,
    headers: Mapping[str, str],
    items: list[Any],
    page_size: int,
    position: Any,
) -> Any:
    """The API position of the page after this one, or ``None`` when this was the last page.

    cursor style: the value at ``next_field`` (``header:NAME``: of the response header NAME), or the
    ``cursor_from_item`` field of the last item while ``has_more_field`` is true (or, without a flag,
    while the page was full).
    offset style: ``position + len(items)`` while the page was full (or the flag says more).
    page style: ``position + 1`` under the same rule. A first page requested without a position
    counts from ``first_position`` (else page 1, offset 0). link style: the next URL, from the text
    at ``next_field`` when the row names one (a URL in the answer), else from the ``Link`` header's
    ``rel="next"`` (RFC 8288); anything but a non-empty string there ends the listing.
    """
    style = pagination.get("style")
    has_more_field = pagination.get("has_more_field")
    flag = answer_member(body, has_more_field) if has_more_field else None
    full = len(items) >= page_size
    more = bool(flag) if has_more_field and isinstance(flag, bool) else full
    if style == "cursor":
        next_field = pagination.get("next_field")
        if next_field:
            token = next_member(body, headers, next_field)
            if token in (None, ""):
                return None
            if has_more_field and flag is False:
                return None
            return token
        from_item = pagination.get("cursor_from_item")
        if from_item and items and more:
            last = get_path(items[-1], from_item)
            return last if last not in (None, "") else None
        return None
    first = pagination.get("first_position")
    if position is None:  # the first page, sent without its position: the API's own start
        position = first if isinstance(first, int) else (1 if style == "page" else 0)
    if style == "offset":
        return (int(position) + len(items)) if more and items else None
    if style == "page":
        return (int(position) + 1) if more and items else None
    if style == "link":
        next_field = pagination.get("next_field")
        if next_field:  # a next-page URL in the answer (``links.next``, ``@odata.nextLink``) or a header
            url = next_member(body, headers, next_field)
            return url if isinstance(url, str) and url else None
        return parse_link_next(headers.get("link"))
    return None
