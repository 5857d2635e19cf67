"""Attacks through parameter names a caller chooses: an object parameter serialised ``form`` with
``explode`` (OpenAPI's default for query and cookie parameters) sends each member as a parameter
of its own (``{"R": 100}`` → ``R=100``), so a free-form object (files.com's ``filter: {type:
object}``) lets the caller name any query parameter or cookie.

- A member named like another parameter of the operation must not reach the wire: it would send a
  parameter the intent map hides (``hide``: "never sent"), a second value next to a `fixed` one (a
  server reading the last value takes the caller's), a page size past the bound, a second
  idempotency key or credential.
- A cookie member's name is a cookie name: ``a=b; session`` would add a cookie of the caller's
  choosing, CR/LF or non-ASCII text cannot be sent at all. Such names are refused as the values
  are, ``invalid_arguments`` at the member's pointer, before any byte is sent — never an
  ``upstream_unavailable`` retried three times, nor an ``internal_error``.
"""

from __future__ import annotations

from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import build
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer

from toolgen.runtime import Actor, Registry, StaticCredentials

SPEC = """openapi: 3.0.3
info: {title: files, version: '1'}
servers: [{url: 'https://api.example.com'}]
components:
  securitySchemes:
    key: {type: apiKey, in: query, name: api_key}
    session: {type: apiKey, in: cookie, name: sid}
security: [{key: [], session: []}]
paths:
  /items:
    get:
      operationId: listItems
      parameters:
        - {name: user_id, in: query, schema: {type: integer}}
        - {name: include_deleted, in: query, schema: {type: boolean}}
        - {name: cursor, in: query, schema: {type: string}}
        - {name: per_page, in: query, schema: {type: integer, maximum: 1000}}
        - {name: filter, in: query, schema: {type: object}}
        - {name: theme, in: cookie, schema: {type: string}}
        - {name: prefs, in: cookie, schema: {type: object, additionalProperties: {type: string}}}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  data: {type: array, items: {type: object}}
                  next: {type: string}
"""

INTENTS = """auth:
  key: {secret: FILES_KEY}
  session: {secret: FILES_SID}
tools:
  list_items:
    operation: listItems
    description: List the items of user 5.
    effect: read
    permission: [files:read]
    fixed: {user_id: 5}
    hide: [include_deleted]
    pagination: {style: cursor, cursor: cursor, limit: per_page, items: data, next: next, max_page_size: 50}
"""

READER = Actor.of("reader", ["files:read"])
#: every query parameter name of the operation other than `filter`, and the credential's
TAKEN_QUERY = ("user_id", "include_deleted", "cursor", "per_page", "api_key")
TAKEN_COOKIES = ("theme", "sid")


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("exploded")
    spec = tmp / "openapi.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    return build(tmp, spec, INTENTS, name="files", emit="mcp,policy").out


@pytest.fixture(scope="module")
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        srv.reply("GET", r"/items", 200, {"data": [], "next": None})
        yield srv


@pytest.fixture(scope="module")
def registry(package: Path, server: RecordingServer) -> Iterator[Registry]:
    reg = Registry.from_dir(
        package,
        base_url=server.base_url,
        credentials=StaticCredentials({"FILES_KEY": "k3y", "FILES_SID": "s3ssion"}),
    )
    yield reg
    reg.close()


def _call(registry: Registry, server: RecordingServer, args: dict[str, Any]) -> tuple[Any, list[Any]]:
    server.clear()
    result = registry.call("list_items", args, actor=READER)
    return result, list(server.requests)


@pytest.mark.parametrize(
    "name",
    [
        *TAKEN_QUERY,
        "USER_ID",
        "Include_Deleted",
        "PER_PAGE",
        # what PHP, Rails and qs read as user_id or a member of it
        "user.id",
        "user id",
        " user_id",
        "user_id[]",
        "user_id[x]",
        "API.KEY",
        # a method override Laravel, Symfony and Rack honour on a POST
        "_method",
        "_METHOD",
    ],
)
def test_an_exploded_member_never_names_another_query_parameter(
    registry: Registry, server: RecordingServer, name: str
) -> None:
    result, sent = _call(registry, server, {"filter": {"status": "open", name: "7"}})
    assert not sent, f"filter member {name!r} reached the API: {sent[0].raw_query}"
    assert result.error is not None and result.error.code == "invalid_arguments", result.to_json()
    assert result.error.details["pointer"] == f"/filter/{name}"


def test_other_exploded_members_are_sent_as_parameters(registry: Registry, server: RecordingServer) -> None:
    result, sent = _call(registry, server, {"filter": {"status": "open", "kind": "doc"}, "page_size": 10})
    assert result.ok, result.to_json()
    assert [(k, v) for k, v in sent[0].query if k not in ("api_key",)] == [
        ("user_id", "5"),
        ("kind", "doc"),
        ("status", "open"),
        ("per_page", "10"),
    ]


@pytest.mark.parametrize("name", [*TAKEN_COOKIES, "SID"])
def test_an_exploded_cookie_never_names_another_cookie(
    registry: Registry, server: RecordingServer, name: str
) -> None:
    result, sent = _call(registry, server, {"prefs": {name: "mine"}})
    assert not sent, f"cookie member {name!r} reached the API: {sent[0].header('cookie')}"
    assert result.error is not None and result.error.code == "invalid_arguments", result.to_json()
    assert result.error.details["pointer"] == f"/prefs/{name}"


@pytest.mark.parametrize("name", ["a=b; session", "lang; sid", "x\r\nX-Evil", "é", "", "a b", "a,b", 'q"'])
def test_a_cookie_name_outside_the_token_grammar_is_refused(
    registry: Registry, server: RecordingServer, name: str
) -> None:
    result, sent = _call(registry, server, {"prefs": {name: "v"}})
    assert not sent, f"cookie member {name!r} reached the API: {sent[0].header('cookie')}"
    assert result.error is not None and result.error.code == "invalid_arguments", result.to_json()
    assert result.error.details["pointer"] == "/prefs/" + name.replace("~", "~0").replace("/", "~1")


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.dictionaries(
        st.text(max_size=12),
        st.text(
            alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters='",;\\'),
            max_size=8,
        ),
        max_size=3,
    )
)
def test_cookie_members_arrive_as_exactly_those_cookies_or_are_refused(
    registry: Registry, server: RecordingServer, prefs: dict[str, str]
) -> None:
    result, sent = _call(registry, server, {"prefs": prefs})
    if not result.ok:
        assert result.error is not None and result.error.code == "invalid_arguments", result.to_json()
        assert not sent
        return
    jar = SimpleCookie()
    jar.load(sent[0].header("cookie") or "")
    assert sorted(jar) == sorted([*prefs, "sid"]), sent[0].header("cookie")
    assert {k: jar[k].value for k in prefs} == prefs


CONTENT_SPEC = """openapi: 3.0.3
info: {title: nodes, version: '1'}
servers: [{url: 'https://api.example.com'}]
paths:
  /nodes:
    get:
      operationId: listNodes
      parameters:
        - name: query
          in: query
          content:
            application/json:
              schema: {type: object, properties: {composition: {type: string}, where: {type: array, items: {type: string}}}}
        - name: x-metadata
          in: header
          content:
            application/json:
              schema: {type: object, properties: {tag: {type: string}}}
      responses:
        '200':
          description: ok
          content: {application/json: {schema: {type: object, properties: {name: {type: string}}}}}
"""


def test_a_content_parameter_is_sent_as_one_json_value(tmp_path: Path) -> None:
    """OpenAPI 3 parameters with `content` (Rudder's `query`, Apideck's `x-apideck-metadata`) carry
    one value in that media type: the object as JSON text, never spread into `composition=and`."""
    spec = tmp_path / "openapi.yaml"
    spec.write_text(CONTENT_SPEC, encoding="utf-8")
    out = build(
        tmp_path,
        spec,
        "tools:\n  list_nodes: {operation: listNodes, effect: read, permission: [n:read], "
        "description: List nodes.}\n",
        name="nodes",
        emit="mcp,policy",
    ).out
    with RecordingServer() as srv:
        reg = Registry.from_dir(out, base_url=srv.base_url)
        res = reg.call(
            "list_nodes",
            {"query": {"where": ["a", "b"], "composition": "and"}, "x_metadata": {"tag": "t1"}},
            actor=Actor.of("n", ["n:read"]),
        )
        assert res.ok, res.to_json()
        assert srv.last.query == [("query", '{"composition":"and","where":["a","b"]}')], srv.last.raw_query
        assert srv.last.header("x-metadata") == '{"tag":"t1"}'
        reg.close()
