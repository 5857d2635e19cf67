"""Pagination where one side is missing or unclear: drafted for a human to confirm, never silent.

Each case is a small spec of our own shaped like one met in real APIs: a next token in a declared
response header (Visma's ``NextPageToken``) or in one only the parameter's description names
(Files.com's ``X-Files-Cursor-Next``), a token answered under the parameter's own name (HERE's
``pageToken``), several arrays in the answer (Google's ``unreachable`` beside the items),
``starting_after`` without a has-more flag (Clever), an ``offset`` that the spec declares as text
(a number, or a token as in Asana), a ``nextUri`` (DocuSign), and a token parameter with nothing
that says where its next value comes from. A guess carries a doubt (the draft's
``# decide [pagination-undecided]`` mark), and an ``include`` group never takes one on its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolgen.compile.pagination import NEXT_HEADER, detect
from toolgen.runtime.call.shaping import NEXT_HEADER as RUNTIME_NEXT_HEADER
from toolgen.runtime.call.shaping import next_position

Invoke = Callable[..., Any]


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


ITEMS = {"type": "array", "items": _obj(id={"type": "string"}, name={"type": "string"})}
TEXT = {"type": "string"}


def _param(name: str, kind: str = "string", **more: Any) -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": kind}, **more}


def test_a_next_token_in_a_declared_response_header_is_the_cursor_style() -> None:
    found = detect(
        ["pageToken", "rowCount"],
        ITEMS,
        False,
        {"pageToken": "string", "rowCount": "integer"},
        headers=["X-RateLimit-Remaining", "NextPageToken"],
    )
    assert found is not None
    assert (found.style, found.items, found.cursor, found.limit, found.next) == (
        "cursor",
        "",
        "pageToken",
        "rowCount",
        "header:NextPageToken",
    )
    assert found.doubt is None and not found.guess
    # a previous page's header, or a header without a position parameter to take it, is no next page
    previous = detect(["pageToken"], ITEMS, False, headers=["X-Cursor-Prev"])
    assert previous is not None and previous.next is None and previous.guess
    assert detect(["q"], ITEMS, False, headers=["NextPageToken"]) is None
    assert NEXT_HEADER == RUNTIME_NEXT_HEADER


def test_a_header_only_the_parameter_description_names_is_drafted_with_a_doubt() -> None:
    cursor = _param(
        "cursor",
        description="Used for pagination. When a list request has more records, cursors are "
        "provided in the response headers `X-Files-Cursor-Next` and "
        "`X-Files-Cursor-Prev`. Send one of those values here.",
    )
    found = detect(
        ["cursor", "per_page"],
        ITEMS,
        False,
        {"cursor": "string", "per_page": "integer"},
        params=[cursor, _param("per_page", "integer")],
    )
    assert found is not None and (found.style, found.cursor, found.next) == (
        "cursor",
        "cursor",
        "header:X-Files-Cursor-Next",
    )
    assert (
        found.doubt is not None
        and "does not declare" in found.doubt
        and "`X-Files-Cursor-Next`" in found.doubt
    )
    # the word "header" must be there: a header-like word alone is no header
    plain = _param("cursor", description="Pass the X-Files-Cursor-Next value.")
    other = detect(["cursor"], ITEMS, False, params=[plain])
    assert other is not None and other.next is None and other.style == "link"


def test_a_token_answered_under_the_parameters_own_name_is_the_next_one() -> None:
    """HERE answers ``{count, pageToken, data}`` and takes ``pageToken``."""
    answer = _obj(count={"type": "integer"}, pageToken=TEXT, data=ITEMS)
    found = detect(["pageToken", "limit"], answer, False, {"pageToken": "string", "limit": "integer"})
    assert found is not None and (found.style, found.items, found.cursor, found.next, found.doubt) == (
        "cursor",
        "data",
        "pageToken",
        "pageToken",
        None,
    )
    # a numeric offset echoed in the answer is the current position, never the next one
    echoed = detect(
        ["offset", "limit"],
        _obj(items=ITEMS, offset={"type": "integer"}),
        False,
        {"offset": "integer", "limit": "integer"},
    )
    assert echoed is not None and (echoed.style, echoed.next) == ("offset", None)


def test_of_several_arrays_the_likeliest_is_drafted_with_a_doubt() -> None:
    google = _obj(instances=ITEMS, nextPageToken=TEXT, unreachable={"type": "array", "items": TEXT})
    found = detect(
        ["pageToken", "pageSize"],
        google,
        False,
        {"pageToken": "string", "pageSize": "integer"},
        resource="instances",
    )
    assert found is not None and (found.style, found.items, found.next) == (
        "cursor",
        "instances",
        "nextPageToken",
    )
    assert found.guess and found.doubt is not None and "`unreachable`" in found.doubt
    # two arrays of objects: the one named as the path's resource
    two = _obj(envelopeTransactionStatuses=ITEMS, envelopes=ITEMS, nextUri=TEXT)
    named = detect([], two, False, resource="envelopes")
    assert named is not None and (named.style, named.items, named.next) == ("link", "envelopes", "nextUri")
    unnamed = detect([], two, False)
    assert unnamed is not None and unnamed.items == "envelopeTransactionStatuses" and unnamed.guess
    # without any paging signal several arrays are still no list
    assert detect(["q"], google | {"properties": {"a": ITEMS, "b": ITEMS}}, False) is None


def test_starting_after_without_a_has_more_flag_walks_from_the_last_items_id() -> None:
    found = detect(["starting_after", "limit"], _obj(data=ITEMS), False, {"limit": "integer"})
    assert found is not None and (found.style, found.cursor, found.cursor_from_item, found.has_more) == (
        "cursor",
        "starting_after",
        "id",
        None,
    )
    assert found.guess and found.doubt is not None and "no has-more flag" in found.doubt
    clever = _obj(data={"type": "array", "items": _obj(data=_obj(id=TEXT), uri=TEXT)})
    wrapped = detect(["starting_after", "ending_before", "limit"], clever, False, {"limit": "integer"})
    assert wrapped is not None and wrapped.cursor_from_item == "data.id"


@pytest.mark.parametrize(
    ("params", "style"),
    [
        ([_param("offset"), _param("limit")], "offset"),  # every query parameter typed as text
        ([_param("offset", example="20"), _param("limit", "integer")], "offset"),  # a number by its example
        ([_param("offset"), _param("limit", "integer")], "link"),  # Asana: a token beside a numeric limit
        ([_param("offset", example="eyJ0eXAiOiJKV1Qi"), _param("limit")], "link"),  # a token by its example
        ([_param("start"), _param("top", "integer")], "link"),  # Azure Face: a person id to start after
    ],
)
def test_an_offset_declared_as_text_is_a_number_or_a_token(params: list[dict[str, Any]], style: str) -> None:
    names = [str(p["name"]) for p in params]
    types = {str(p["name"]): str(p["schema"]["type"]) for p in params}
    found = detect(names, _obj(result=ITEMS), False, types, params=params)
    assert found is not None and found.style == style and found.guess and found.doubt is not None
    if style == "offset":
        assert found.cursor == names[0] and "declares as text" in found.doubt
    else:
        assert found.cursor is None and "neither the answer nor a response header" in found.doubt


def test_a_date_or_a_time_bound_is_never_guessed_as_a_position() -> None:
    when = [_param("from", format="date-time"), _param("to", format="date-time")]
    assert detect(["from", "to"], ITEMS, False, {"from": "string", "to": "string"}, params=when) is None
    assert detect(["_since", "_before"], _obj(data=ITEMS), False) is None


def test_a_next_uri_is_a_next_url() -> None:
    found = detect(
        ["count"], _obj(users=ITEMS, nextUri=TEXT, resultSetSize=TEXT), False, {"count": "integer"}
    )
    assert found is not None and (found.style, found.next, found.doubt) == ("link", "nextUri", None)


def test_the_runtime_reads_a_next_token_from_a_response_header_of_any_case() -> None:
    pagination = {"style": "cursor", "next_field": "header:NextPageToken"}
    assert next_position(pagination, [{"id": 1}], {"nextpagetoken": "tok-2"}, [{"id": 1}], 1, None) == "tok-2"
    assert next_position(pagination, [{"id": 1}], {"NextPageToken": ""}, [{"id": 1}], 1, None) is None
    assert next_position(pagination, {"NextPageToken": "in-body"}, {}, [{"id": 1}], 1, None) is None
    link = {"style": "link", "next_field": "header:X-Next-Url"}
    assert (
        next_position(link, [], {"x-next-url": "https://a.example/p2"}, [], 1, None) == "https://a.example/p2"
    )


def _spec(
    params: list[dict[str, Any]], answer: dict[str, Any], headers: dict[str, Any] | None = None
) -> dict[str, Any]:
    response: dict[str, Any] = {"description": "ok", "content": {"application/json": {"schema": answer}}}
    if headers:
        response["headers"] = headers
    return {
        "openapi": "3.0.3",
        "info": {"title": "Shop", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/things": {
                "get": {
                    "operationId": "ListThings",
                    "summary": "List things",
                    "parameters": params,
                    "responses": {"200": response},
                }
            }
        },
    }


def test_init_drafts_a_header_token_and_the_build_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Invoke
) -> None:
    monkeypatch.chdir(tmp_path)
    doc = _spec(
        [_param("pageToken"), _param("limit", "integer")],
        ITEMS,
        headers={"NextPageToken": {"schema": {"type": "string"}}},
    )
    (tmp_path / "shop.json").write_text(json.dumps(doc), encoding="utf-8")
    assert cli("init", "shop.json", "--out", "draft.yaml", "--no-project", "--force").exit_code == 0
    intent = yaml.safe_load((tmp_path / "draft.yaml").read_text(encoding="utf-8"))["tools"]["list_things"]
    assert intent["pagination"] == {
        "style": "cursor",
        "items": "",
        "cursor": "pageToken",
        "limit": "limit",
        "next": "header:NextPageToken",
    }
    assert cli("build", "draft.yaml", "--out", "out", "-q", "--emit", "policy").exit_code == 0
    row = json.loads((tmp_path / "out" / "policy.json").read_text(encoding="utf-8"))["tools"][0]
    assert row["pagination"]["next_field"] == "header:NextPageToken"


def test_the_build_refuses_a_next_header_that_is_no_header_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Invoke
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shop.json").write_text(json.dumps(_spec([_param("pageToken")], ITEMS)), encoding="utf-8")
    (tmp_path / "map.yaml").write_text(
        "toolgen: 1\nspec: shop.json\ntools:\n  list_things:\n    operation: ListThings\n    effect: read\n"
        "    pagination: {style: cursor, items: '', cursor: pageToken, next: 'header:Next Page'}\n",
        encoding="utf-8",
    )
    built = cli("build", "map.yaml", "--out", "out", "-q", "--emit", "policy")
    assert built.exit_code != 0 and "pagination-field-missing" in built.output + built.stderr


def test_an_include_group_never_takes_a_guess(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Invoke
) -> None:
    """A token parameter with nothing to feed it: `init` drafts a marked guess, an `include` group
    builds the tool without paging (as before) rather than take a guess no human saw."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shop.json").write_text(
        json.dumps(_spec([_param("cursor"), _param("limit", "integer")], _obj(data=ITEMS))), encoding="utf-8"
    )
    (tmp_path / "map.yaml").write_text(
        "toolgen: 1\nspec: shop.json\ninclude:\n  - match: 'GET *'\n", encoding="utf-8"
    )
    built = cli("build", "map.yaml", "--out", "out", "-q", "--emit", "policy")
    assert built.exit_code == 0, built.output
    rows = json.loads((tmp_path / "out" / "policy.json").read_text(encoding="utf-8"))["tools"]
    assert [r["pagination"] for r in rows] == [None]
    assert cli("init", "shop.json", "--out", "draft.yaml", "--no-project", "--force").exit_code == 0
    text = (tmp_path / "draft.yaml").read_text(encoding="utf-8")
    assert "# decide [pagination-undecided]" in text and "neither the answer nor a response header" in text


def test_a_token_that_is_no_position_a_range_and_another_members_next_are_never_guessed() -> None:
    """What a guess must not take: a name that merely holds "token" (edrv's ``include_tokens``,
    YouTube's ``linkingToken``), a ``start`` that an ``end`` bounds (DigitalOcean's metrics: a time
    range), and a next field of another member's list in a single object (Spotify's album
    ``tracks.next`` beside its ``copyrights``)."""
    assert detect(["include_tokens", "active"], _obj(result=ITEMS), False) is None
    assert detect(["linkingToken", "part"], _obj(items=ITEMS), False) is None
    metrics = _obj(status=TEXT, data=_obj(result=ITEMS))
    assert detect(["host_id", "start", "end"], metrics, False, {"start": "string", "end": "string"}) is None
    assert (
        detect(
            ["from", "to"],
            ITEMS,
            False,
            {"from": "string", "to": "string"},
            params=[_param("from", example="0"), _param("to", example="10")],
        )
        is None
    )
    album = _obj(
        available_markets={"type": "array", "items": TEXT},
        copyrights=ITEMS,
        genres={"type": "array"},
        tracks=_obj(items=ITEMS, next=TEXT),
    )
    assert detect(["market"], album, False, {"market": "string"}) is None
    # the names that do take a token still do
    for name in ("pagination_token", "_page_token", "continuationToken", "NextToken", "marker"):
        found = detect([name], _obj(data=ITEMS), False, {name: "string"})
        assert found is not None and found.guess, name
