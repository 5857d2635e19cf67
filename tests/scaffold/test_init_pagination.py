"""`toolgen init` drafts `pagination:` from an operation's parameters and its answer together.

Small specs per convention: a cursor in the answer beside an ``errors`` array (Square), a Vercel
time window (``limit``/``until`` with ``pagination.next``), tokens nested or renamed, next URLs,
pages and offsets. Where detection doubts, the draft carries a ``# decide [pagination-undecided]``
mark that ``lint --strict`` reports until deleted; where nothing is drafted, lint's
``pagination-missing`` names what the operation does carry instead of claiming it has no paging
parameters.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.compile.pagination import detect, paging_signals

Invoke = Callable[..., Any]


def _q(name: str, kind: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "query", "schema": {"type": kind}}


def _spec(
    params: list[dict[str, Any]],
    answer: dict[str, Any],
    headers: dict[str, Any] | None = None,
    components: dict[str, Any] | None = None,
) -> dict[str, Any]:
    response: dict[str, Any] = {"description": "ok", "content": {"application/json": {"schema": answer}}}
    if headers:
        response["headers"] = headers
    doc: dict[str, Any] = {
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
    if components:
        doc["components"] = {"schemas": components}
    return doc


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


ITEMS = {"type": "array", "items": _obj(id={"type": "string"}, created={"type": "integer"})}


def _draft(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Invoke, doc: dict[str, Any]
) -> tuple[Any, str]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "shop.json").write_text(json.dumps(doc), encoding="utf-8")
    result = cli("init", "shop.json", "--out", "draft.yaml", "--no-project", "--force")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "draft.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)["tools"]["list_things"], result.stderr


def test_a_cursor_beside_an_errors_array_is_drafted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Invoke
) -> None:
    """Square answers ``errors`` beside its items: two arrays hid the items, so nothing was drafted
    and lint said nothing either."""
    doc = _spec(
        [_q("cursor"), _q("limit", "integer")],
        {"$ref": "#/components/schemas/ListPaymentsResponse"},
        components={
            "ListPaymentsResponse": _obj(
                errors={"type": "array", "items": {"$ref": "#/components/schemas/Error"}},
                payments=ITEMS,
                cursor={"type": "string"},
            ),
            "Error": _obj(code={"type": "string"}),
        },
    )
    intent, _ = _draft(tmp_path, monkeypatch, cli, doc)
    assert intent["pagination"] == {
        "style": "cursor",
        "items": "payments",
        "cursor": "cursor",
        "limit": "limit",
        "next": "cursor",
    }
    assert cli("build", "draft.yaml", "--out", "out", "-q", "--emit", "policy").exit_code == 0
    row = json.loads((tmp_path / "out" / "policy.json").read_text(encoding="utf-8"))["tools"][0]
    assert row["pagination"]["next_field"] == "cursor" and row["pagination"]["cursor_param"] == "cursor"


def test_a_vercel_time_window_is_drafted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Invoke
) -> None:
    doc = _spec(
        [_q("limit", "number"), _q("since", "number"), _q("until", "number")],
        _obj(
            deployments=ITEMS,
            pagination=_obj(count={"type": "number"}, next={"type": "number", "nullable": True}),
        ),
    )
    intent, _ = _draft(tmp_path, monkeypatch, cli, doc)
    assert intent["pagination"] == {
        "style": "cursor",
        "items": "deployments",
        "cursor": "until",
        "limit": "limit",
        "next": "pagination.next",
    }


def test_lint_names_the_paging_parameters_an_undrafted_list_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Invoke
) -> None:
    """A window with no next value in the answer is not drafted; lint says what the operation takes,
    never that it declares no paging parameters."""
    intent, _ = _draft(
        tmp_path,
        monkeypatch,
        cli,
        _spec([_q("limit", "number"), _q("since", "number"), _q("until", "number")], ITEMS),
    )
    assert "pagination" not in intent
    lint = cli("lint", "--format", "json", "draft.yaml")
    found = [f for f in json.loads(lint.stdout)["findings"] if f["code"] == "pagination-missing"]
    assert len(found) == 1, lint.stdout
    assert "takes limit, since, until" in found[0]["message"], found[0]
    assert "no paging parameter" not in json.dumps(found[0])


def test_a_doubtful_pagination_is_drafted_with_a_decide_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Invoke
) -> None:
    """A page parameter without a page size and without a has-more flag: drafted, marked, and
    reported by `lint --strict` at the mark until the mark is deleted."""
    _, stderr = _draft(tmp_path, monkeypatch, cli, _spec([_q("page", "integer")], _obj(items=ITEMS)))
    assert "1 pagination-undecided" in stderr
    lines = (tmp_path / "draft.yaml").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if "# decide [pagination-undecided]" in line)
    assert "takes no page-size parameter" in lines[at]
    strict = cli("lint", "--strict", "--format", "json", "draft.yaml")
    codes = [
        (f["code"], f["location"]["line"])
        for f in json.loads(strict.stdout)["findings"]
        if f["severity"] == "error"
    ]
    assert ("pagination-undecided", at + 1) in codes
    del lines[at]
    (tmp_path / "draft.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    strict = cli("lint", "--strict", "--format", "json", "draft.yaml")
    assert "pagination-undecided" not in [f["code"] for f in json.loads(strict.stdout)["findings"]]


DETECTED = [
    # (query parameters, answer, Link header, what is drafted)
    (
        ["cursor", "limit"],
        _obj(ok={"type": "boolean"}, channels=ITEMS, response_metadata=_obj(next_cursor={"type": "string"})),
        False,
        ("cursor", "channels", "cursor", "limit", "response_metadata.next_cursor"),
    ),
    (
        ["pageToken", "pageSize"],
        _obj(files=ITEMS, nextPageToken={"type": "string"}),
        False,
        ("cursor", "files", "pageToken", "pageSize", "nextPageToken"),
    ),
    (
        ["after", "first"],
        _obj(data=ITEMS, paging=_obj(cursors=_obj(after={"type": "string"}))),
        False,
        ("cursor", "data", "after", "first", "paging.cursors.after"),
    ),
    (
        ["marker", "limit"],
        _obj(entries=ITEMS, next_marker={"type": "string"}),
        False,
        ("cursor", "entries", "marker", "limit", "next_marker"),
    ),
    (
        ["offset", "limit"],
        _obj(data=ITEMS, next_page=_obj(offset={"type": "string"})),
        False,
        ("cursor", "data", "offset", "limit", "next_page.offset"),
    ),  # Asana: a string offset token
    (
        ["limit", "offset"],
        _obj(
            count={"type": "integer"},
            results=ITEMS,
            next={"type": "string", "format": "uri", "nullable": True},
        ),
        False,
        ("link", "results", None, "limit", "next"),
    ),
    (
        ["per_page"],
        _obj(data=ITEMS, links=_obj(next={"type": "string"})),
        False,
        ("link", "data", None, "per_page", "links.next"),
    ),
    (["page", "per_page"], ITEMS, True, ("link", "", None, "per_page", None)),
    (
        ["page", "per_page"],
        _obj(result=_obj(items=ITEMS, total={"type": "integer"})),
        False,
        ("page", "result.items", "page", "per_page", None),
    ),
    (["skip", "top"], _obj(value=ITEMS), False, ("offset", "value", "skip", "top", None)),
]


@pytest.mark.parametrize(("query", "answer", "link", "drafted"), DETECTED)
def test_detection_reads_parameters_and_answer_together(
    query: list[str], answer: dict[str, Any], link: bool, drafted: tuple[Any, ...]
) -> None:
    found = detect(
        query, answer, link, {"offset": "string"} if "next_page" in answer.get("properties", {}) else {}
    )
    assert found is not None
    assert (found.style, found.items, found.cursor, found.limit, found.next) == drafted
    assert found.doubt is None


def test_a_bare_next_text_is_drafted_as_a_next_url_with_a_doubt() -> None:
    """A text `next` without `format: uri` that no parameter takes back (Adyen's themes): most
    likely a URL, drafted as one and marked for a human to check."""
    found = detect([], _obj(data=ITEMS, next={"type": "string"}), False)
    assert found is not None and (found.style, found.next) == ("link", "next")
    assert found.doubt is not None and "check that the API answers a URL" in found.doubt
    taken = detect(["cursor"], _obj(data=ITEMS, next={"type": "string"}), False)
    assert taken is not None and (taken.style, taken.cursor, taken.doubt) == ("cursor", "cursor", None)


def test_no_position_no_pagination() -> None:
    """Without a position parameter, a next field, a has-more flag or a Link header nothing is
    drafted; a cursor parameter with nothing in the answer to feed it is only a guess
    (`test_init_pagination_guesses`)."""
    guess = detect(["cursor", "limit"], _obj(data=ITEMS), False)
    assert guess is not None and guess.guess and guess.doubt is not None
    assert detect(["q"], _obj(data=ITEMS), False) is None
    assert detect(["cursor"], _obj(errors=ITEMS, warnings=ITEMS), False) is None
    assert paging_signals(["cursor", "limit", "q"], _obj(data=ITEMS), False) == ["takes cursor, limit"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "properties",
                    "items",
                    "$ref",
                    "$defs",
                    "anyOf",
                    "next",
                    "data",
                    "cursor",
                    "format",
                    "array",
                    "object",
                    "string",
                    "uri",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=examples(200), deadline=None)
@given(
    answer=_json,
    query=st.lists(st.sampled_from(["cursor", "page", "offset", "limit", "until", "x"]), max_size=4),
    link=st.booleans(),
)
def test_detection_never_raises_on_a_hostile_answer(answer: Any, query: list[str], link: bool) -> None:
    found = detect(query, answer, link)
    assert found is None or found.style in ("cursor", "link", "page", "offset")
    assert isinstance(paging_signals(query, answer, link), list)


def test_a_position_spelled_outside_the_usual_names_is_drafted_with_a_decide_mark() -> None:
    """A numeric position parameter spelled outside the usual lists (Paylocity's ``pagenumber``,
    EPA's ``pageno``, ``StartIndex``), or a ``page`` declared as text, and nothing in the answer
    that says where the next page is: drafted as the page or offset style (the runtime ends on a
    short or empty page), with a doubt that says what was found, what is missing and what to check."""
    found = detect(
        ["pagenumber", "pagesize"],
        _obj(Entities=ITEMS, Metadata=_obj(total={"type": "integer"})),
        False,
        {"pagenumber": "integer", "pagesize": "integer"},
    )
    assert found is not None and (found.style, found.items, found.cursor, found.limit) == (
        "page",
        "Entities",
        "pagenumber",
        "pagesize",
    )
    assert found.doubt is not None
    assert "`pagenumber`" in found.doubt and "nothing in the answer" in found.doubt and "short" in found.doubt
    started = detect(["StartIndex"], ITEMS, False, {"StartIndex": "integer"})
    assert started is not None and (started.style, started.cursor, started.limit) == (
        "offset",
        "StartIndex",
        None,
    )
    assert started.doubt is not None and "no page-size parameter" in started.doubt
    text = detect(["page"], _obj(data=ITEMS), False, {"page": "string"})
    assert text is not None and (text.style, text.cursor) == ("page", "page")
    assert text.doubt is not None and "declares it as text" in text.doubt
    # a text offset beside a numeric limit is a token (Asana): never drafted as an offset walk
    token = detect(["offset", "limit"], _obj(data=ITEMS), False, {"offset": "string", "limit": "integer"})
    assert token is not None and token.style == "link" and token.guess
    # a time bound alone is a filter as often as a position: not guessed
    assert detect(["since"], _obj(data=ITEMS), False, {"since": "string"}) is None


def test_a_next_url_no_parameter_takes_is_the_link_style() -> None:
    """A full next URL (``nextLink``, ``@odata.nextLink``) with no parameter taking anything back is
    the link style; without ``format: uri`` only a name that says URL is trusted without a doubt."""
    azure = detect(["api-version"], _obj(value=ITEMS, nextLink={"type": "string"}), False)
    assert azure is not None and (azure.style, azure.next, azure.doubt) == ("link", "nextLink", None)
    odata = detect([], _obj(value=ITEMS, **{"@odata.nextLink": {"type": "string"}}), False)
    assert odata is not None and (odata.style, odata.next) == ("link", "@odata.nextLink")
    uri = detect([], _obj(results=ITEMS, next={"type": "string", "format": "uri"}), False)
    assert uri is not None and (uri.style, uri.next, uri.doubt) == ("link", "next", None)


def test_a_position_without_an_answer_side_is_marked_in_the_draft(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Invoke
) -> None:
    intent, _ = _draft(
        tmp_path,
        monkeypatch,
        cli,
        _spec([_q("pageno", "number"), _q("limit", "integer")], _obj(Entities=ITEMS)),
    )
    assert intent["pagination"] == {
        "style": "page",
        "items": "Entities",
        "cursor": "pageno",
        "limit": "limit",
    }
    text = (tmp_path / "draft.yaml").read_text(encoding="utf-8")
    assert "# decide [pagination-undecided]" in text and "nothing in the answer" in text


def test_an_api_named_like_a_python_keyword_gets_a_name_that_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Invoke
) -> None:
    """EPA's ``case.json``: ``case`` is a Python keyword, so init names the API ``case_api`` and says so."""
    from toolgen.scaffold.init import api_name_from

    assert api_name_from("case") == "case_api" and api_name_from("match") == "match_api"
    assert api_name_from("cases") == "cases"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "case.json").write_text(
        json.dumps(_spec([_q("page", "integer")], _obj(data=ITEMS))), encoding="utf-8"
    )
    result = cli("init", "case.json", "--no-project")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "intent_maps" / "case_api.yaml").exists()
    assert "case_api" in result.stderr and "Python keyword" in result.stderr


def test_a_capitalised_wrapper_holds_the_items() -> None:
    """EPA's ``{"Results": {"Facilities": [...], "Message": ...}}`` with ``pageno``: a wrapper member
    is recognised whatever its case, so the list one level down is the answer's items."""
    epa = _obj(Results=_obj(Message={"type": "string"}, Facilities=ITEMS, QueryRows={"type": "string"}))
    found = detect(["pageno", "qid"], epa, False, {"pageno": "number", "qid": "string"})
    assert found is not None and (found.style, found.items, found.cursor) == (
        "page",
        "Results.Facilities",
        "pageno",
    )
    assert found.doubt is not None
    assert detect(["page"], _obj(Charge=_obj(refunds=ITEMS)), False, {"page": "integer"}) is None
