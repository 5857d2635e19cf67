"""Answers and bodies a spec declares are never a failure: a form body declared as a plain string, a
``text/html`` or ``text/plain`` success answer, the items of a paged list, a redirect-only
operation. Each against a real loopback server.

- a form-urlencoded body whose schema is a string is sent as that string and shown in the preview;
- a declared text or HTML answer is the result's ``text`` (bounded by ``output.max_bytes``, the
  call's secrets scrubbed), never ``output_invalid``; the build says so (info ``response-text``);
- a paged and a non-paged tool over the same item schema keep the same members of an item;
- a read whose only success is a 3xx follows a same-origin redirect (never a cross-origin one, at
  most `MAX_REDIRECTS`), a download link returns its ``Location``; a write never follows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from tests.support.build import Built, build
from tests.support.recording_server import RecordingServer

from toolgen.review.lint import LintSettings, LintTarget, lint_target
from toolgen.runtime.call.credentials import StaticCredentials
from toolgen.runtime.pipeline.redirect import MAX_REDIRECTS
from toolgen.runtime.serving.registry import Actor, Registry

ITEM = {"type": "object", "required": ["id", "name"], "properties": {"id": {"type": "string"}}}


def _get(op_id: str, responses: dict[str, Any], params: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"get": {"operationId": op_id, "parameters": params or [], "responses": responses}}


SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Declared", "version": "1"},
    "servers": [{"url": "https://declared.example.com"}],
    "components": {"securitySchemes": {"key": {"type": "apiKey", "in": "query", "name": "api_key"}}},
    "security": [{"key": []}],
    "paths": {
        "/form": {
            "post": {
                "operationId": "postForm",
                "requestBody": {
                    "required": True,
                    "content": {"application/x-www-form-urlencoded": {"schema": {"type": "string"}}},
                },
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
                            }
                        },
                    }
                },
            }
        },
        "/page": _get(
            "getPage",
            {
                "200": {
                    "description": "an HTML page",
                    "content": {"text/html": {"schema": {"type": "string"}}},
                }
            },
        ),
        "/plain": _get("getPlain", {"200": {"description": "plain text", "content": {"text/plain": {}}}}),
        "/things": _get(
            "listThings",
            {
                "200": {
                    "description": "ok",
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "properties": {
                                    "data": {"type": "array", "items": ITEM},
                                    "next": {"type": "string", "nullable": True},
                                },
                            }
                        }
                    },
                }
            },
            [{"name": "cursor", "in": "query", "schema": {"type": "string"}}],
        ),
        "/things/{id}": _get(
            "getThing",
            {"200": {"description": "ok", "content": {"application/json": {"schema": ITEM}}}},
            [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
        ),
        "/raw-things": _get(
            "listRawThings",
            {
                "200": {
                    "description": "ok",
                    "content": {"application/json": {"schema": {"type": "array", "items": ITEM}}},
                }
            },
        ),
        "/moved": _get(
            "getMoved",
            {"302": {"description": "moved", "headers": {"Location": {"schema": {"type": "string"}}}}},
        ),
        "/files/{id}/download": _get(
            "downloadFile",
            {"302": {"description": "to the file", "headers": {"Location": {"schema": {"type": "string"}}}}},
            [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
        ),
        "/write-moved": {
            "post": {"operationId": "postMoved", "responses": {"303": {"description": "see other"}}}
        },
    },
}

MAP = """\
include: [{match: "GET *"}]
tools:
  submit_form:
    operation: postForm
    effect: write
    permission: forms:write
    approval: never
  write_moved:
    operation: postMoved
    effect: write
    permission: forms:write
    approval: never
  list_things:
    operation: listThings
    effect: read
    permission: things:read
    pagination: {style: cursor, cursor: cursor, items: data, next: next}
  get_page_small:
    operation: getPage
    effect: read
    permission: things:read
    output: {max_bytes: 300}
"""

SECRET = "s3cr3t-key-value"


@pytest.fixture(scope="module")
def declared(tmp_path_factory: pytest.TempPathFactory) -> Built:
    tmp = tmp_path_factory.mktemp("declared")
    spec = tmp / "declared.json"
    spec.write_text(json.dumps(SPEC), encoding="utf-8")
    return build(tmp, spec, MAP, name="declared", emit="mcp,policy,report")


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


def _registry(built: Built, srv: RecordingServer) -> Registry:
    return Registry.from_dir(
        built.out, base_url=srv.base_url, credentials=StaticCredentials({"DECLARED_TOKEN": SECRET})
    )


def _actor(reg: Registry) -> Actor:
    return Actor.of("tester", {s for row in reg.policy["tools"] for s in row.get("permission") or []})


def _findings(built: Built, code: str) -> dict[str, str]:
    """The build's findings of `code` (as `toolgen lint` reports them), by the operation they name."""
    found = lint_target(LintTarget(built.out.parent / "declared.yaml"), LintSettings()).findings
    return {" ".join(d.message.split()[:2]): d.message for d in found if d.code == code}


def _read_tool(built: Built, op_id: str) -> str:
    return next(str(r["tool"]) for r in built.rows_for(op_id) if r["mode"] == "read")


def test_a_string_form_body_is_sent_and_previewed(declared: Built, server: RecordingServer) -> None:
    reg = _registry(declared, server)
    try:
        actor, body = _actor(reg), "a=1&b=two+words&c=%C3%A9"
        shown = reg.call("preview_submit_form", {"body": body}, actor=actor)
        assert shown.ok, shown.error
        assert shown.result is not None and shown.result["request"]["body"] == body
        done = reg.call("record_submit_form", {"body": body}, actor=actor)
        assert done.ok, done.error
        sent = server.last
        assert (sent.method, sent.body) == ("POST", body.encode("ascii"))
        assert sent.header("Content-Type") == "application/x-www-form-urlencoded"
    finally:
        reg.close()


def test_html_and_plain_text_answers_are_text(declared: Built, server: RecordingServer) -> None:
    row = declared.row(_read_tool(declared, "getPage"))
    assert row["output"]["body"] == "text"
    found = _findings(declared, "response-text")
    assert "GET /page answers text/html: the tool returns the answer in `text`" in found["GET /page"]
    html = f"<html><body><h1>Status</h1><p>key {SECRET}</p></body></html>"
    server.reply("GET", "^/page$", 200, html.encode(), content_type="text/html; charset=utf-8")
    server.reply("GET", "^/plain$", 200, b"plain words", content_type="text/plain")
    reg = _registry(declared, server)
    try:
        actor = _actor(reg)
        page = reg.call(_read_tool(declared, "getPage"), {}, actor=actor)
        assert page.ok, page.error
        assert page.result == {"text": html.replace(SECRET, "[redacted]")}
        assert not page.warnings
        plain = reg.call(_read_tool(declared, "getPlain"), {}, actor=actor)
        assert plain.ok and plain.result == {"text": "plain words"}, plain.error
        server.reply("GET", "^/page$", 200, b"<p>" + b"x" * 5000 + b"</p>", content_type="text/html")
        small = reg.call("get_page_small", {}, actor=actor)
        assert small.ok and small.result is not None, small.error
        assert len(json.dumps(small.result, separators=(",", ":"))) <= 300 and "_truncated" in small.result
    finally:
        reg.close()


def test_paged_and_single_items_keep_the_same_members(declared: Built, server: RecordingServer) -> None:
    """One rule for an item's members: what the item schema declares (its properties and the names it
    requires) is kept, an undeclared member is dropped, whether the tool pages, returns an array or
    one object; no warning says a required member is missing."""
    item = {"id": "t1", "name": "first", "colour": "red"}
    server.reply("GET", "^/things$", 200, {"data": [item], "next": None})
    server.reply("GET", "^/raw-things$", 200, [item])
    server.reply("GET", "^/things/t1$", 200, item)
    reg = _registry(declared, server)
    try:
        actor = _actor(reg)
        page = reg.call("list_things", {}, actor=actor)
        raw = reg.call(_read_tool(declared, "listRawThings"), {}, actor=actor)
        one = reg.call(_read_tool(declared, "getThing"), {"id": "t1"}, actor=actor)
        assert page.ok and raw.ok and one.ok, (page.error, raw.error, one.error)
        assert page.result is not None and raw.result is not None and one.result is not None
        assert one.result == {"id": "t1", "name": "first"}
        assert page.result["items"] == raw.result["result"] == [one.result]
        assert not page.warnings and not raw.warnings and not one.warnings
    finally:
        reg.close()


def test_a_same_origin_redirect_is_followed_for_a_read(declared: Built, server: RecordingServer) -> None:
    assert declared.row(_read_tool(declared, "getMoved"))["output"].get("redirect") == "follow"
    assert "follows a same-origin redirect" in _findings(declared, "response-redirect")["GET /moved"]
    server.reply("GET", "^/moved$", 302, None, headers={"Location": "/landed"})
    server.reply("GET", "^/landed$", 200, {"here": True})
    reg = _registry(declared, server)
    try:
        moved = reg.call(_read_tool(declared, "getMoved"), {}, actor=_actor(reg))
        assert moved.ok, moved.error
        assert moved.result == {
            "status": 200,
            "location": f"{server.base_url}/landed",
            "body": {"here": True},
        }
        assert [r.path for r in server.requests] == ["/moved", "/landed"]
        assert all(SECRET in r.raw_query for r in server.requests)  # the same origin keeps the credentials
    finally:
        reg.close()


def test_a_cross_origin_or_endless_redirect_is_not_followed(declared: Built, server: RecordingServer) -> None:
    reg = _registry(declared, server)
    try:
        actor, tool = _actor(reg), _read_tool(declared, "getMoved")
        with RecordingServer() as other:
            server.reply("GET", "^/moved$", 302, None, headers={"Location": f"{other.base_url}/elsewhere"})
            moved = reg.call(tool, {}, actor=actor)
            assert other.requests == []
        assert moved.ok, moved.error  # the declared answer: its Location, not followed
        assert moved.result is not None and moved.result.get("location") == f"{other.base_url}/elsewhere"
        server.clear()  # a target that fails: the declared redirect is the answer, never a failure
        server.reply("GET", "^/moved$", 302, None, headers={"Location": "/gone"})
        server.reply("GET", "^/gone$", 404, {"error": "no such page"})
        gone = reg.call(tool, {}, actor=actor)
        assert gone.ok and gone.result == {"status": 302, "location": f"{server.base_url}/gone"}, gone.error
        assert [r.path for r in server.requests] == ["/moved", "/gone"]
        server.clear()
        server.reply("GET", "^/moved$", 302, None, headers={"Location": "/moved"})
        loop = reg.call(tool, {}, actor=actor)
        assert len(server.requests) <= MAX_REDIRECTS + 1
        assert loop.ok and loop.result is not None and loop.result.get("location", "").endswith("/moved")
    finally:
        reg.close()


def test_a_download_link_returns_its_location(declared: Built, server: RecordingServer) -> None:
    tool = _read_tool(declared, "downloadFile")
    assert declared.row(tool)["output"].get("redirect") == "location"
    assert (
        "returns the redirect's Location"
        in _findings(declared, "response-redirect")["GET /files/{id}/download"]
    )
    server.reply(
        "GET", "^/files/f1/download$", 302, None, headers={"Location": "https://cdn.example.net/f1?sig=x"}
    )
    reg = _registry(declared, server)
    try:
        got = reg.call(tool, {"id": "f1"}, actor=_actor(reg))
        assert got.ok, got.error
        assert got.result == {"status": 302, "location": "https://cdn.example.net/f1?sig=x"}
        assert len(server.requests) == 1
    finally:
        reg.close()


def test_a_write_never_follows_a_redirect(declared: Built, server: RecordingServer) -> None:
    server.reply("POST", "^/write-moved$", 303, None, headers={"Location": "/landed"})
    reg = _registry(declared, server)
    try:
        done = reg.call("record_write_moved", {}, actor=_actor(reg))
        assert done.ok, done.error
        assert done.result == {"status": 303, "location": f"{server.base_url}/landed"}
        assert [r.method for r in server.requests] == ["POST"]
    finally:
        reg.close()
