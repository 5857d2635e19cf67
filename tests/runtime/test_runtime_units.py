"""Request serialisation, null normalisation, shaping, pagination styles, size budget, output-schema
modes, retries and error mapping — with hand-written policy rows against a recording loopback server."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.policy_rows import complete_policy, typed_row
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer

from toolgen.runtime import Actor, MemoryReceiptStore, Registry, StaticCredentials
from toolgen.runtime.call.credentials import Injected
from toolgen.runtime.call.nulls import normalise_nulls
from toolgen.runtime.call.parameter_styles import deep_object_pairs, serialise_path, serialise_query
from toolgen.runtime.call.request import build_request
from toolgen.runtime.call.shaping import (
    CursorCodec,
    enforce_budget,
    field_tree,
    parse_link_next,
    project,
    redact,
)
from toolgen.runtime.errors import from_http_response, parse_retry_after

# --- serialisation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "style,explode,value,expected",
    [
        (None, None, "a b/c", "a%20b%2Fc"),
        ("simple", False, [3, 4, 5], "3,4,5"),
        ("simple", False, {"role": "admin", "first": "Alex"}, "role,admin,first,Alex"),
        ("simple", True, {"role": "admin", "first": "Alex"}, "role=admin,first=Alex"),
        ("label", False, [3, 4], ".3,4"),
        ("label", True, [3, 4], ".3.4"),
        ("matrix", False, 5, ";id=5"),
        ("matrix", True, [3, 4], ";id=3;id=4"),
        ("matrix", False, [3, 4], ";id=3,4"),
        (None, None, True, "true"),
    ],
)
def test_path_styles(style: str | None, explode: bool | None, value: Any, expected: str) -> None:
    assert serialise_path("id", value, style, explode) == expected


@pytest.mark.parametrize(
    "style,explode,value,expected",
    [
        (None, None, [3, 4], [("id", "3"), ("id", "4")]),
        ("form", False, [3, 4], [("id", "3,4")]),
        ("form", True, {"role": "admin", "first": "Alex"}, [("role", "admin"), ("first", "Alex")]),
        ("form", False, {"role": "admin", "first": "Alex"}, [("id", "role,admin,first,Alex")]),
        ("spaceDelimited", False, [3, 4], [("id", "3 4")]),
        ("pipeDelimited", False, [3, 4], [("id", "3|4")]),
        (
            "deepObject",
            True,
            {"gte": 1, "nested": {"a": [1, 2]}},
            [("id[gte]", "1"), ("id[nested][a][0]", "1"), ("id[nested][a][1]", "2")],
        ),
        (None, None, None, []),
        (None, None, False, [("id", "false")]),
    ],
)
def test_query_styles(
    style: str | None, explode: bool | None, value: Any, expected: list[tuple[str, str]]
) -> None:
    assert serialise_query("id", value, style, explode) == expected


def test_stripe_style_nested_form_body() -> None:
    row = {
        "operation": {"method": "POST", "path": "/v1/checkout/sessions"},
        "request": {
            "encoding": "form",
            "content_type": "application/x-www-form-urlencoded",
            "bindings": [
                {
                    "arg": "line_items",
                    "in": "body",
                    "name": "line_items",
                    "required": True,
                    "null": "omit",
                    "style": "deepObject",
                    "explode": True,
                },
                {"arg": "mode", "in": "body", "name": "mode", "required": True, "null": "omit"},
                {
                    "arg": "expand",
                    "in": "body",
                    "name": "expand",
                    "required": False,
                    "null": "omit",
                    "style": "deepObject",
                    "explode": True,
                },
            ],
        },
    }
    args = {
        "line_items": [{"price": "price_1", "quantity": 2, "adjustable_quantity": {"enabled": True}}],
        "mode": "payment",
        "expand": ["customer"],
    }
    req = build_request(typed_row(row), args, base_url="https://api.test")
    assert parse_qsl(req.content.decode()) == [  # type: ignore[union-attr]
        ("line_items[0][adjustable_quantity][enabled]", "true"),  # an object's members in key order
        ("line_items[0][price]", "price_1"),
        ("line_items[0][quantity]", "2"),
        ("mode", "payment"),
        ("expand[0]", "customer"),
    ]


def test_headers_cookies_fixed_and_credentials() -> None:
    row = {
        "operation": {"method": "GET", "path": "/things/{id}"},
        "request": {
            "encoding": "none",
            "bindings": [
                {"arg": "id", "in": "path", "name": "id", "required": True, "null": "omit"},
                {"arg": "trace", "in": "header", "name": "X-Trace", "required": False, "null": "omit"},
                {"arg": "session", "in": "cookie", "name": "session", "required": False, "null": "omit"},
            ],
            "fixed": [
                {"in": "header", "name": "Notion-Version", "value": "2025-09-03"},
                {"in": "query", "name": "format", "value": "json"},
            ],
        },
    }
    creds = Injected(headers={"X-Api-Key": "k1"}, query={"api_key": "k2"}, secret_values=["k1", "k2"])
    req = build_request(
        typed_row(row),
        {"id": "a/b", "trace": ["x", "y"], "session": "s1"},
        base_url="https://api.test/v2/",
        credentials=creds,
    )
    assert req.url == "https://api.test/v2/things/a%2Fb?format=json&api_key=k2"
    headers = dict(req.headers)
    assert headers["X-Trace"] == "x,y" and headers["Notion-Version"] == "2025-09-03"
    assert headers["Cookie"] == "session=s1" and headers["X-Api-Key"] == "k1"
    shown = req.display()
    # an argument cookie is shown (the approver approves it); one holding a credential is not
    assert shown["headers"]["X-Api-Key"] == "[redacted]" and shown["headers"]["Cookie"] == "session=s1"
    with_secret = req.with_credentials(Injected(cookies={"sid": "k3"}, secret_values=["k3"]))
    assert with_secret.display()["headers"]["Cookie"] == "[redacted]"
    assert "k2" not in shown["url"] and "api_key=[redacted]" in shown["url"]


def test_multipart_binary_and_text_bodies() -> None:
    row = {
        "operation": {"method": "POST", "path": "/upload"},
        "request": {
            "encoding": "multipart",
            "bindings": [
                {
                    "arg": "file",
                    "in": "body",
                    "name": "file",
                    "required": True,
                    "null": "omit",
                    "content_type": "image/png",
                },
                {"arg": "meta", "in": "body", "name": "meta", "required": False, "null": "omit"},
                {"arg": "title", "in": "body", "name": "title", "required": False, "null": "omit"},
            ],
        },
    }
    req = build_request(
        typed_row(row), {"file": "PNGDATA", "meta": {"a": 1}, "title": "hello"}, base_url="http://h"
    )
    ctype = dict(req.headers)["Content-Type"]
    assert ctype.startswith("multipart/form-data; boundary=")
    parsed = httpx.Request("POST", "http://h", content=req.content, headers={"Content-Type": ctype})
    body = parsed.read().decode()
    assert 'name="file"; filename="file"' in body and "Content-Type: image/png" in body and "PNGDATA" in body
    assert '{"a":1}' in body and 'name="title"' in body
    binary = {
        "operation": {"method": "PUT", "path": "/blob"},
        "request": {
            "encoding": "binary",
            "content_type": "application/octet-stream",
            "bindings": [{"arg": "data", "in": "body", "name": "", "required": True, "null": "omit"}],
        },
    }
    req2 = build_request(typed_row(binary), {"data": "raw bytes"}, base_url="http://h")
    assert req2.content == b"raw bytes" and dict(req2.headers)["Content-Type"] == "application/octet-stream"
    whole = {
        "operation": {"method": "POST", "path": "/batch"},
        "request": {
            "encoding": "json",
            "bindings": [{"arg": "items", "in": "body", "name": "", "required": True, "null": "omit"}],
        },
    }
    assert build_request(typed_row(whole), {"items": [1, 2]}, base_url="http://h").content == b"[1,2]"


def test_null_normalisation_is_recursive_and_respects_required_and_send() -> None:
    schema = {
        "type": "object",
        "required": ["a", "n"],
        "additionalProperties": False,
        "$defs": {
            "Inner": {
                "type": "object",
                "required": ["keep"],
                "properties": {"keep": {"type": ["string", "null"]}, "drop": {"type": "string"}},
            }
        },
        "properties": {
            "a": {"$ref": "#/$defs/Inner"},
            "n": {"type": ["string", "null"]},
            "opt": {"type": "string"},
            "s": {"type": ["string", "null"]},
            "arr": {"type": "array", "items": {"$ref": "#/$defs/Inner"}},
        },
    }
    args = {
        "a": {"keep": None, "drop": None},
        "n": None,
        "opt": None,
        "s": None,
        "arr": [{"keep": "x", "drop": None}, None],
    }
    assert normalise_nulls(args, schema, send_null=["s"]) == {
        "a": {"keep": None},
        "n": None,
        "s": None,
        "arr": [{"keep": "x"}, None],
    }


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=5).filter(
            lambda s: "[" not in s and "]" not in s and not (s.isascii() and s.isdigit())
        ),  # refused: an array index
        st.one_of(st.integers(), st.text(max_size=5), st.booleans()),
        max_size=5,
    )
)
@settings(max_examples=examples(60), deadline=None)
def test_deep_object_round_trips_flat_maps(value: dict[str, Any]) -> None:
    pairs = deep_object_pairs("m", value)
    assert [k for k, _ in pairs] == [f"m[{k}]" for k in value]


# --- shaping -------------------------------------------------------------------------------------


def test_projection_redaction_through_arrays() -> None:
    body: dict[str, Any] = {
        "id": 1,
        "secret": "s",
        "entries": [{"at": "t1", "who": {"email": "e", "phone": "p"}, "x": 1}],
    }
    tree = field_tree(["id", "entries.at", "entries.who.phone"])
    assert project(redact(body, field_tree(["entries.who.phone"])), tree) == {
        "id": 1,
        "entries": [{"at": "t1", "who": {"phone": "[redacted]"}}],
    }
    assert body["entries"][0]["who"]["phone"] == "p"  # not mutated


def test_budget_cuts_items_then_strings_with_marker() -> None:
    result = {"items": [{"id": i, "text": "x" * 100} for i in range(50)], "next_cursor": None}
    cut, omitted = enforce_budget(result, 1000, list_key="items")
    assert len(json.dumps(cut, separators=(",", ":")).encode()) <= 1000
    assert cut["_truncated"]["omitted_items"] == omitted == 50 - len(cut["items"]) > 0
    assert cut["_truncated"]["original_bytes"] > 1000
    big = {"text": "y" * 5000, "id": 7}
    cut2, _ = enforce_budget(big, 500)
    assert cut2["id"] == 7 and cut2["text"].endswith("…") and "_truncated" in cut2
    assert len(json.dumps(cut2, separators=(",", ":"), ensure_ascii=False).encode()) <= 500
    same, n = enforce_budget({"a": 1}, 100)
    assert same == {"a": 1} and n == 0


def test_link_header_parsing() -> None:
    header = '<https://api.test/items?page=2>; rel="next", <https://api.test/items?page=9>; rel="last"'
    assert parse_link_next(header) == "https://api.test/items?page=2"
    assert parse_link_next('<https://a/x>; rel="prev"') is None and parse_link_next(None) is None


def test_cursor_codec_binds_scope() -> None:
    codec = CursorCodec(b"k" * 32)
    token = codec.encode("api/tool", {"c": 5})
    assert codec.decode("api/tool", token) == {"c": 5}
    with pytest.raises(Exception) as info:
        codec.decode("api/other", token)
    assert getattr(info.value, "code", None) == "invalid_cursor"


# --- pagination styles and output modes against a recording server ---------------------------------


def _row(name: str, pagination: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "tool": name,
        "mode": "read",
        "effect": "read",
        "intent": name,
        "pair": None,
        "operation": {"id": name, "method": "GET", "path": "/items"},
        "permission": [],
        "approval": "never",
        "idempotency": None,
        "retry": {
            "max_attempts": 3,
            "backoff_ms": 10,
            "deadline_ms": 5000,
            "on": ["timeout", "429", "502", "503", "504"],
        },
        "timeout_ms": 2000,
        "pagination": pagination,
        "output": {"fields": ["id"], "max_bytes": 16000, "redact": [], "schema_mode": "warn"},
        "auth": [],
        "request": {"encoding": "none", "content_type": None, "bindings": [], "fixed": []},
        "success_status": [200],
    }
    row.update(extra)
    return row


def _pag(style: str, **over: Any) -> dict[str, Any]:
    p = {
        "style": style,
        "cursor_arg": "cursor",
        "page_size_arg": "page_size",
        "items": "items",
        "cursor_param": {"offset": "offset", "page": "page", "cursor": "after", "link": None}[style],
        "limit_param": "limit",
        "next_field": None,
        "has_more_field": None,
        "cursor_from_item": None,
        "default_page_size": 2,
        "max_page_size": 10,
    }
    p.update(over)
    return p


def _tool(name: str, output_schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "name": name,
        "inputSchema": {
            "type": "object",
            "properties": {
                "cursor": {"type": ["string", "null"]},
                "page_size": {"type": "integer", "minimum": 1, "maximum": 10},
            },
            "additionalProperties": False,
        },
        "outputSchema": output_schema or {"type": "object"},
    }


def _reg(rows: list[dict[str, Any]], tools: list[dict[str, Any]], base: str) -> Registry:
    return Registry(
        complete_policy({"api": "units", "base_url": base, "tools": rows}),
        list(tools),
        credentials=StaticCredentials({}),
        receipts=MemoryReceiptStore(),
        cursor_key=b"u" * 32,
    )


ANY = Actor.of("a")


def test_offset_and_next_field_and_link_styles(recorder: RecordingServer) -> None:
    rows = [
        _row("by_offset", _pag("offset")),
        _row("by_token", _pag("cursor", next_field="meta.next")),
        _row("by_link", _pag("link", items="")),
    ]
    reg = _reg(rows, [_tool(r["tool"]) for r in rows], recorder.base_url)
    recorder.reply("GET", "/items", body={"items": [{"id": 1, "x": 0}, {"id": 2}]})
    page = reg.call("by_offset", {}, actor=ANY)
    assert page.result == {"items": [{"id": 1}, {"id": 2}], "next_cursor": page.result["next_cursor"]}  # type: ignore[index]
    reg.call("by_offset", {"cursor": page.result["next_cursor"]}, actor=ANY)
    assert dict(recorder.last.query) == {"limit": "2", "offset": "2"}

    recorder.reply("GET", "/items", body={"items": [{"id": 3}], "meta": {"next": "tok-abc"}})
    tok = reg.call("by_token", {"page_size": 1}, actor=ANY)
    reg.call("by_token", {"cursor": tok.result["next_cursor"]}, actor=ANY)  # type: ignore[index]
    assert dict(recorder.last.query) == {"limit": "1", "after": "tok-abc"}

    recorder.reply(
        "GET", "/items", body=[{"id": 9}], headers={"Link": '<{base}/items?page=2&limit=2>; rel="next"'}
    )
    first = reg.call("by_link", {}, actor=ANY)
    assert first.ok and first.result["items"] == [{"id": 9}]  # type: ignore[index]
    reg.call("by_link", {"cursor": first.result["next_cursor"]}, actor=ANY)  # type: ignore[index]
    assert recorder.last.raw_query == "page=2&limit=2"
    recorder.reply(
        "GET", "/items", body=[{"id": 9}], headers={"Link": '<https://evil.test/items?page=2>; rel="next"'}
    )
    evil = reg.call("by_link", {}, actor=ANY)
    assert evil.ok and evil.result["next_cursor"] is None  # type: ignore[index]  # no cursor to another origin
    # a cursor holding another origin (issued by a runtime with the same key) is refused too
    for target in (
        "https://evil.test/items?page=2",
        recorder.base_url + ".evil.test/items",
        recorder.base_url.replace("http://", "http://user@") + "/items",
    ):
        forged = reg.cursors.encode(f"{reg.api}/by_link", {"c": target, "n": 2, "h": []})
        follow = reg.call("by_link", {"cursor": forged}, actor=ANY)
        assert follow.error is not None and follow.error.code == "invalid_cursor", target


def test_truncated_page_continues_where_it_was_cut(recorder: RecordingServer) -> None:
    row = _row(
        "big",
        _pag("page", default_page_size=10),
        output={"fields": ["id", "text"], "max_bytes": 700, "redact": [], "schema_mode": "warn"},
    )
    reg = _reg([row], [_tool("big")], recorder.base_url)
    recorder.reply("GET", "/items", body={"items": [{"id": i, "text": "t" * 120} for i in range(10)]})
    first = reg.call("big", {}, actor=ANY)
    assert first.ok and first.result is not None
    kept = [i["id"] for i in first.result["items"]]
    assert 0 < len(kept) < 10 and first.result["_truncated"]["omitted_items"] == 10 - len(kept)
    second = reg.call("big", {"cursor": first.result["next_cursor"]}, actor=ANY)
    assert dict(recorder.last.query).get("page") is None  # same page again, skipping what was shown
    assert second.result is not None and second.result["items"][0]["id"] == len(kept)


def test_output_schema_modes(recorder: RecordingServer) -> None:
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    rows = []
    for mode in ("strict", "warn", "off"):
        r = _row(
            f"get_{mode}", None, output={"fields": [], "max_bytes": 1000, "redact": [], "schema_mode": mode}
        )
        rows.append(r)
    reg = _reg(rows, [_tool(r["tool"], schema) for r in rows], recorder.base_url)
    recorder.reply("GET", "/items", body={"id": 5})
    strict = reg.call("get_strict", {}, actor=ANY)
    assert strict.error is not None and strict.error.code == "output_invalid"
    warn = reg.call("get_warn", {}, actor=ANY)
    assert warn.ok and warn.warnings and "/id" in warn.warnings[0]
    off = reg.call("get_off", {}, actor=ANY)
    assert off.ok and not off.warnings


def test_retries_on_503_bounded_and_connect_errors(recorder: RecordingServer) -> None:
    reg = _reg([_row("flaky", None)], [_tool("flaky")], recorder.base_url)
    recorder.reply("GET", "/items", status=503, body={"title": "down"})
    res = reg.call("flaky", {}, actor=ANY)
    assert res.error is not None and res.error.code == "upstream_unavailable" and res.error.retryable
    assert len(recorder.requests) == 3 and res.attempts == 3
    dead = _reg([_row("dead", None)], [_tool("dead")], "http://127.0.0.1:9")
    gone = dead.call("dead", {}, actor=ANY)
    assert gone.error is not None and gone.error.code == "upstream_unavailable" and gone.error.result_known


def test_unknown_tool_and_non_object_arguments() -> None:
    reg = _reg([_row("x", None)], [_tool("x")], "http://127.0.0.1:9")
    unknown = reg.call("nope", {}, actor=ANY)
    assert unknown.error is not None and unknown.error.code == "unknown_tool"
    bad = reg.call("x", ["not", "an", "object"], actor=ANY)
    assert bad.error is not None and bad.error.code == "invalid_arguments"


# --- error mapping --------------------------------------------------------------------------------


def test_problem_json_mapping_and_retry_after() -> None:
    err = from_http_response(
        422,
        httpx.Headers({}),
        {
            "type": "about:blank",
            "title": "Invalid",
            "status": 422,
            "detail": "note too long",
            "errors": [{"pointer": "/note"}],
        },
        operation="addFollowup",
        mutating=True,
    )
    assert err.code == "upstream_rejected" and err.category == "validation" and err.result_known
    assert err.details["problem"]["errors"] == [{"pointer": "/note"}] and "note too long" in err.message
    gw = from_http_response(504, httpx.Headers({}), None, operation="op", mutating=True)
    assert gw.code == "result_unknown" and gw.result_known is False
    assert from_http_response(504, httpx.Headers({}), None, operation="op", mutating=False).retryable
    rl = from_http_response(
        429, httpx.Headers({"Retry-After": "7"}), "slow down", operation="op", mutating=False
    )
    assert rl.code == "rate_limited" and rl.details["retry_after"] == 7.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("soon") is None
    html = from_http_response(500, httpx.Headers({}), "<html>" + "x" * 1000, operation="op", mutating=False)
    assert len(html.details["body_excerpt"]) <= 200 and "Traceback" not in html.message
