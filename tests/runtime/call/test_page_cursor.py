"""A cursor always moves, or the listing ends and says why (runtime/call/page_cursor.py); Link headers are
parsed by httpx; retry backoff is jittered, deterministically under a seed.

Against the fault-injecting loopback server, with the tickets package's ``list_tickets`` row
re-configured for each pagination style: an API that ignores the cursor parameter (a cursor
taken from a body field, or from the last item) and a ``Link`` header that points at the page it
came with. Following ``next_cursor`` must never give back the cursor passed in, must end, and the
last page carries ``_stalled.code == "cursor_did_not_move"``.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.fault_server import Fault, FaultServer
from tests.support.profiles import examples
from tests.support.runtime_env import READER, tickets_dir

from toolgen.runtime import MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.call.backoff import retry_delay

ITEMS = [{"id": f"T-{n}", "subject": f"ticket {n}", "status": "open"} for n in range(1, 4)]


def _registry(
    base_url: str, pagination: dict[str, Any], max_bytes: int | None = None, **options: Any
) -> Registry:
    folder = tickets_dir()
    policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    catalog = json.loads((folder / "mcp.json").read_text(encoding="utf-8"))
    for row in policy["tools"]:
        if row["tool"] == "list_tickets":
            row["pagination"] = {**row["pagination"], **pagination}
            if max_bytes is not None:
                row.setdefault("output", {})["max_bytes"] = max_bytes
    return Registry(
        policy,
        catalog,
        base_url=base_url,
        credentials=StaticCredentials({"TICKETS_TOKEN": "tok"}),
        receipts=MemoryReceiptStore(),
        audit=MemoryAuditSink(),
        cursor_key=b"k" * 32,
        **options,
    )


@pytest.fixture
def api() -> Iterator[FaultServer]:
    with FaultServer() as srv:
        yield srv


def _walk(reg: Registry, limit: int = 25) -> list[dict[str, Any]]:
    """Follow next_cursor from the first page; fail on a repeated cursor or an endless walk."""
    pages: list[dict[str, Any]] = []
    seen: set[str] = set()
    cursor: str | None = None
    for _ in range(limit):
        args: dict[str, Any] = {"page_size": 3} if cursor is None else {"page_size": 3, "cursor": cursor}
        result = reg.call("list_tickets", args, actor=READER)
        assert result.ok and result.result is not None, result.to_json()
        pages.append(result.result)
        nxt = result.result.get("next_cursor")
        if nxt is None:
            return pages
        assert nxt != cursor, "next_cursor is the cursor passed in"
        assert nxt not in seen, "a cursor came back"
        seen.add(nxt)
        cursor = nxt
    raise AssertionError(f"the listing did not end after {limit} pages")


def test_an_api_that_ignores_the_cursor_parameter_ends_the_listing(api: FaultServer) -> None:
    api.route("GET", r"^/tickets$", body={"data": ITEMS, "next": "page-two"})
    reg = _registry(
        api.base_url,
        {"style": "cursor", "next_field": "next", "cursor_from_item": None, "has_more_field": None},
    )
    pages = _walk(reg)
    assert len(pages) == 2, pages
    assert pages[-1]["_stalled"]["code"] == "cursor_did_not_move"
    assert pages[-1]["items"] == [], "the page answered again was shown twice"
    assert "_stalled" not in pages[0]


@pytest.mark.parametrize("style", ["offset", "page"])
def test_an_api_that_ignores_its_offset_or_page_parameter_ends_the_listing(
    api: FaultServer, style: str
) -> None:
    """The cursors move (offset 3, 6, ...) but the pages do not: the same items come back."""
    api.route("GET", r"^/tickets$", body={"data": ITEMS, "has_more": True})
    reg = _registry(api.base_url, {"style": style, "cursor_param": style, "cursor_from_item": None})
    pages = _walk(reg)
    assert len(pages) == 2 and pages[-1]["_stalled"]["code"] == "cursor_did_not_move", pages
    assert [i["id"] for p in pages for i in p["items"]] == ["T-1", "T-2", "T-3"]


def test_an_api_that_moves_is_walked_to_its_end(api: FaultServer) -> None:
    many = [{"id": f"T-{n}", "subject": "s", "status": "open"} for n in range(1, 9)]
    api.pages(r"^/tickets$", many)
    pages = _walk(_registry(api.base_url, {}))
    assert [i["id"] for p in pages for i in p["items"]] == [i["id"] for i in many]
    assert not any("_stalled" in p for p in pages)


def test_a_last_item_cursor_the_api_ignores_ends_the_listing(api: FaultServer) -> None:
    api.route("GET", r"^/tickets$", body={"data": ITEMS, "has_more": True})  # starting_after is ignored
    pages = _walk(_registry(api.base_url, {}))
    assert len(pages) == 2 and pages[-1]["_stalled"]["code"] == "cursor_did_not_move", pages


def test_a_cut_page_of_an_api_that_does_not_move_ends_after_its_items(api: FaultServer) -> None:
    big = [dict(item, subject="x" * 400) for item in ITEMS]
    api.route("GET", r"^/tickets$", body={"data": big, "next": "same"})
    reg = _registry(
        api.base_url,
        {"style": "cursor", "next_field": "next", "cursor_from_item": None, "has_more_field": None},
        max_bytes=1100,
    )
    pages = _walk(reg)
    shown = [i["id"] for p in pages for i in p["items"]]
    # the first API page, cut to the budget, then the page it names: the same items again, not
    # shown twice, and the end
    assert pages[0].get("_truncated") and shown == ["T-1", "T-2", "T-3"], shown
    assert pages[-1]["_stalled"]["code"] == "cursor_did_not_move"
    assert len(json.dumps(pages[-1], separators=(",", ":"), ensure_ascii=False).encode()) <= 1100


def test_a_link_header_pointing_at_its_own_page_ends_the_listing(api: FaultServer) -> None:
    api.route("GET", r"^/tickets$", body=ITEMS, headers={"Link": f'<{api.base_url}/tickets?p=2>; rel="next"'})
    reg = _registry(
        api.base_url,
        {
            "style": "link",
            "items": "",
            "cursor_from_item": None,
            "has_more_field": None,
            "cursor_param": None,
        },
    )
    pages = _walk(reg)
    assert len(pages) == 2 and pages[-1]["_stalled"]["code"] == "cursor_did_not_move", pages


def test_a_link_header_with_quoted_commas_is_followed(api: FaultServer) -> None:
    def body(req: Any, n: int) -> Any:
        return ITEMS if "p=2" not in req.raw_query else ITEMS[:1]

    link = f'<{api.base_url}/tickets?p=2>; title="page, two"; rel="next"'
    api.route("GET", r"^/tickets$", body=body, headers={"Link": link})
    reg = _registry(
        api.base_url,
        {
            "style": "link",
            "items": "",
            "cursor_from_item": None,
            "has_more_field": None,
            "cursor_param": None,
        },
    )
    first = reg.call("list_tickets", {"page_size": 3}, actor=READER)
    assert first.ok and first.result is not None and first.result["next_cursor"], first.to_json()
    second = reg.call("list_tickets", {"page_size": 3, "cursor": first.result["next_cursor"]}, actor=READER)
    assert second.ok and second.result is not None and [i["id"] for i in second.result["items"]] == ["T-1"]
    assert api.requests[-1].raw_query == "p=2"


# -- retry backoff: jittered, deterministic under a seed ------------------------------------------


@settings(max_examples=examples(200), deadline=None)
@given(
    base_ms=st.integers(1, 5000),
    attempt=st.integers(1, 8),
    seed=st.integers(0, 2**32),
    retry_after=st.one_of(st.none(), st.floats(0, 60)),
)
def test_backoff_is_jittered_within_its_bounds(
    base_ms: int, attempt: int, seed: int, retry_after: float | None
) -> None:
    nominal = base_ms / 1000.0 * 2 ** (attempt - 1)
    delay = retry_delay(base_ms, attempt, retry_after, random.Random(seed))
    assert delay == retry_delay(base_ms, attempt, retry_after, random.Random(seed))  # a seed replays it
    floor = max(nominal / 2, retry_after or 0.0)
    assert floor <= delay <= floor + nominal / 2 + 1e-9


def test_agents_retrying_a_429_do_not_move_in_lockstep(api: FaultServer) -> None:
    api.route("GET", r"^/tickets/T-1$", body=ITEMS[0])
    delays: list[float] = []
    for seed in range(6):
        api.script("GET", r"^/tickets/T-1$", Fault.rate_limited("0"))
        reg = _registry(api.base_url, {}, retry_random=random.Random(seed))
        assert reg.call("get_ticket", {"ticket_id": "T-1"}, actor=READER).ok
        retries = [e for e in reg.audit.events if e.step == "http" and e.decision == "retry"]  # type: ignore[attr-defined]
        delays.append(retries[0].detail["delay_ms"])
    assert len(set(delays)) > 1, f"every agent waited the same: {delays}"
    again = _registry(api.base_url, {}, retry_random=random.Random(0))
    api.script("GET", r"^/tickets/T-1$", Fault.rate_limited("0"))
    assert again.call("get_ticket", {"ticket_id": "T-1"}, actor=READER).ok
    replay = [e for e in again.audit.events if e.step == "http" and e.decision == "retry"]  # type: ignore[attr-defined]
    assert replay[0].detail["delay_ms"] == delays[0]


def test_the_policy_row_is_not_changed(api: FaultServer) -> None:
    reg = _registry(api.base_url, {})
    before = copy.deepcopy(reg.specs["list_tickets"].row)
    api.route("GET", r"^/tickets$", body={"data": ITEMS, "has_more": True})
    _walk(reg)
    assert reg.specs["list_tickets"].row == before


def test_an_api_whose_positions_go_round_in_a_cycle_ends_the_listing(api: FaultServer) -> None:
    """Page A names B, B names C, C names A again: the cursors all differ, the listing must end."""
    pages = {"A": ("B", ITEMS[:1]), "B": ("C", ITEMS[1:2]), "C": ("A", ITEMS[2:])}

    def body(req: Any, n: int) -> Any:
        at = dict(req.query).get("starting_after", "A")
        nxt, items = pages[at]
        return {"data": items, "next": nxt}

    api.route("GET", r"^/tickets$", body=body)
    reg = _registry(
        api.base_url,
        {"style": "cursor", "next_field": "next", "cursor_from_item": None, "has_more_field": None},
    )
    walked = _walk(reg)
    assert [i["id"] for p in walked for i in p["items"]] == ["T-1", "T-2", "T-3"], walked
    assert walked[-1]["_stalled"]["code"] == "cursor_did_not_move"
