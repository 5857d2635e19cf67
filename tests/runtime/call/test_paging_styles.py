"""Every pagination style `toolgen init` drafts is walked by the runtime, end to end.

The paging API of `tests.support.paging_api` (one operation per style: a cursor in the body, a
nested next cursor, a page token, ``has_more`` + ``starting_after``, a next URL in the body, a
relative HAL ``_links.next.href``, a ``Link`` header, offset, page number, a Vercel time window) is
drafted by `toolgen init`, built by `toolgen build` unchanged, and served by a real loopback server.
Following ``next_cursor`` from the first page must visit every item once, in order, with the
paging parameter moving between requests; a tampered cursor, or one issued for another tool, is
refused with ``invalid_cursor``; a next URL off the API's origin is never followed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import run
from tests.support.paging_api import STYLES, TOOLS, PagingServer, spec
from tests.support.profiles import examples

from toolgen.runtime import Actor, MemoryAuditSink, MemoryReceiptStore, Registry, StaticCredentials

READER = Actor.of("walker", {"styles:read"})
#: the arguments a tool needs besides its paging ones
ARGS = {"list_vaults": {"api_version": "2024-01-01"}}


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """The paging API drafted by `toolgen init` and built as drafted: (policy, MCP catalog)."""
    folder = tmp_path_factory.mktemp("styles")
    (folder / "styles.json").write_text(json.dumps(spec()), encoding="utf-8")
    drafted = run("init", str(folder / "styles.json"), "--out", str(folder / "styles.yaml"), "--no-project")
    assert drafted.exit_code == 0, drafted.output
    built = run(
        "build", str(folder / "styles.yaml"), "--out", str(folder / "out"), "-q", "--emit", "mcp,policy"
    )
    assert built.exit_code == 0, built.output
    out = Path(folder / "out")
    return (
        json.loads((out / "policy.json").read_text(encoding="utf-8")),
        json.loads((out / "mcp.json").read_text(encoding="utf-8")),
    )


@pytest.fixture(scope="module")
def api() -> Iterator[PagingServer]:
    with PagingServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def registry(
    package: tuple[dict[str, Any], list[Mapping[str, Any]]], api: PagingServer
) -> Iterator[Registry]:
    policy, catalog = package
    reg = Registry(
        policy,
        catalog,
        base_url=api.base_url,
        credentials=StaticCredentials({}),
        receipts=MemoryReceiptStore(),
        audit=MemoryAuditSink(),
        cursor_key=b"k" * 32,
    )
    yield reg
    reg.close()


def walk(reg: Registry, tool: str, sizes: list[int], limit: int = 60) -> list[dict[str, Any]]:
    """Follow next_cursor from the first page (page sizes taken in turn from `sizes`); fail on a
    refused call, a repeated cursor or an endless walk."""
    pages: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    for n in range(limit):
        args: dict[str, Any] = {"page_size": sizes[n % len(sizes)], **(ARGS.get(tool) or {})}
        if cursor is not None:
            args["cursor"] = cursor
        result = reg.call(tool, args, actor=READER)
        assert result.ok and result.result is not None, result.to_json()
        pages.append(result.result)
        cursor = result.result.get("next_cursor")
        if cursor is None:
            return pages
        assert cursor not in seen, "a cursor came back"
        seen.add(cursor)
    raise AssertionError(f"{tool}: the listing did not end after {limit} pages")


def _ids(pages: list[dict[str, Any]]) -> list[str]:
    return [item["id"] for page in pages for item in page["items"]]


def test_init_drafts_a_pagination_for_every_style(
    package: tuple[dict[str, Any], list[Mapping[str, Any]]],
) -> None:
    rows = {r["tool"]: r for r in package[0]["tools"]}
    styles = {style: (rows[tool]["pagination"] or {}).get("style") for style, tool in TOOLS.items()}
    assert styles == {
        "square": "cursor",
        "slack": "cursor",
        "google": "cursor",
        "stripe": "cursor",
        "drf": "link",
        "hal": "link",
        "github": "link",
        "offset": "offset",
        "page": "page",
        "vercel": "cursor",
        "odata": "link",
        "azure": "link",
        "pageno": "page",
        "visma": "cursor",
        "clever": "cursor",
        "text": "offset",
    }
    assert rows[TOOLS["visma"]]["pagination"]["next_field"] == "header:NextPageToken"
    assert rows[TOOLS["clever"]]["pagination"]["cursor_from_item"] == "id"


def test_a_page_number_without_an_answer_side_ends_on_a_short_or_empty_page(
    registry: Registry, api: PagingServer
) -> None:
    """`pageno` with nothing in the answer that says more follow (drafted with a decide mark): the
    walk ends on the first page shorter than the page size, or on an empty page when the listing's
    length is a multiple of it, and never asks past it."""
    for count, size, asked in ((10, 3, 4), (9, 3, 4), (0, 3, 1), (2, 5, 1)):
        api.count = count
        before = len(api.requests)
        pages = walk(registry, TOOLS["pageno"], [size])
        assert _ids(pages) == [f"pageno-{n}" for n in range(count)]
        sent = api.requests[before:]
        assert len(sent) == asked, sent
        assert [dict(parse_qsl(q)).get("pageno", "1") for _, q in sent] == [
            str(n) for n in range(1, asked + 1)
        ]


@pytest.mark.parametrize("style", STYLES)
def test_each_style_is_walked_to_its_end(registry: Registry, api: PagingServer, style: str) -> None:
    api.count = 10
    before = len(api.requests)
    pages = walk(registry, TOOLS[style], [3])
    assert _ids(pages) == [f"{style}-{n}" for n in range(10)]
    assert not any("_stalled" in p for p in pages), pages
    sent = api.requests[before:]
    assert len(sent) >= 3, sent  # 10 items: 4 pages of 3, or 3 of the 4 an API without a size answers
    assert sent[0][1] != sent[1][1], f"the second page's request did not move: {sent[:2]}"


@pytest.mark.parametrize("style", ["square", "drf", "github", "offset", "vercel"])
def test_a_tampered_cursor_is_refused(registry: Registry, api: PagingServer, style: str) -> None:
    api.count = 10
    first = registry.call(TOOLS[style], {"page_size": 3}, actor=READER)
    assert first.ok and first.result is not None
    cursor = str(first.result["next_cursor"])
    before = len(api.requests)
    for bad in (cursor[:-2] + ("AA" if cursor[-2:] != "AA" else "BB"), cursor[:10], cursor + "x", "", "{}"):
        refused = registry.call(TOOLS[style], {"page_size": 3, "cursor": bad}, actor=READER)
        assert not refused.ok and refused.error is not None and refused.error.code == "invalid_cursor", bad
    other = next(t for s, t in TOOLS.items() if s != style)
    refused = registry.call(other, {"page_size": 3, "cursor": cursor}, actor=READER)
    assert refused.error is not None and refused.error.code == "invalid_cursor", "a cursor crossed tools"
    assert len(api.requests) == before, "a refused cursor reached the API"


def test_a_next_url_off_the_apis_origin_is_not_followed(
    registry: Registry, api: PagingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    api.count = 10
    answer = api.answer

    def elsewhere(
        style: str, path: str, q: dict[str, str], items: list[dict[str, Any]]
    ) -> tuple[Any, dict[str, str]]:
        body, headers = answer(style, path, q, items)
        if style == "drf" and body.get("next"):
            body["next"] = body["next"].replace("127.0.0.1", "127.0.0.1.evil.example")
        return body, headers

    monkeypatch.setattr(api, "answer", elsewhere)
    page = registry.call(TOOLS["drf"], {"page_size": 3}, actor=READER)
    assert page.ok and page.result is not None
    assert [i["id"] for i in page.result["items"]] == ["drf-0", "drf-1", "drf-2"]
    assert page.result["next_cursor"] is None


@settings(
    max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    style=st.sampled_from(STYLES),
    count=st.integers(0, 23),
    sizes=st.lists(st.integers(1, 7), min_size=1, max_size=4),
)
def test_walking_visits_every_item_once(
    registry: Registry, api: PagingServer, style: str, count: int, sizes: list[int]
) -> None:
    """Whatever the listing's length and the page sizes asked for (changed from page to page), the
    walk ends and shows each item exactly once, in the API's order."""
    api.count = count
    assert _ids(walk(registry, TOOLS[style], sizes)) == [f"{style}-{n}" for n in range(count)]
