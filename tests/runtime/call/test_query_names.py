"""Query names and values on the wire: every character a spec's parameter name or a model's value may
hold reaches a real server's query parser as it was, and the query string holds only what RFC 3986
§3.4 allows unencoded.

A name such as ``filter[patient]`` (JSON:API filters, Apple's App Store Connect API) is sent
percent-encoded, ``filter%5Bpatient%5D``: ``[`` and ``]`` are RFC 3986 gen-delims, allowed only in an
IP-literal host and never raw in a query; the OpenAPI 3.0.4 / 3.1.1 style-examples table shows
deepObject as ``color%5BR%5D=100``; the WHATWG ``application/x-www-form-urlencoded`` serializer
(``URLSearchParams``, HTML forms) encodes them too. Every common server (PHP, Rack, Express ``qs``,
Django, Spring) decodes a name before reading its brackets, while strict RFC 3986 servers (Tomcat's
default ``relaxedQueryChars``) refuse raw ones.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.policy_rows import typed_row
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer

from toolgen.runtime.call.request import build_request, transport_headers

#: what RFC 3986 §2.3 leaves unencoded, the percent-escapes, and the pair separators
_WIRE_QUERY = re.compile(r"^[A-Za-z0-9\-._~%=&]*$")

TEXT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)
RESERVED = st.text(st.sampled_from(list(":/?#[]@!$&'()*+,;=% ")), min_size=1, max_size=6)


def _row(names: list[str]) -> dict[str, Any]:
    return {
        "operation": {"method": "GET", "path": "/q"},
        "request": {
            "encoding": "none",
            "bindings": [
                {"arg": f"a{i}", "in": "query", "name": name, "required": True, "null": "omit"}
                for i, name in enumerate(names)
            ],
        },
    }


def _send(server: RecordingServer, names: list[str], values: list[str]) -> tuple[str, list[tuple[str, str]]]:
    req = build_request(
        typed_row(_row(names)), {f"a{i}": v for i, v in enumerate(values)}, base_url=server.base_url
    )
    server.clear()
    with httpx.Client() as client:
        client.request(req.method, req.url, headers=transport_headers(req.headers))
    seen = server.last
    return seen.raw_query, seen.query


@pytest.fixture(scope="module")
def server() -> Any:
    with RecordingServer() as srv:
        yield srv


def test_a_bracketed_name_is_sent_percent_encoded(server: RecordingServer) -> None:
    raw, parsed = _send(server, ["filter[patient]", "page[size]"], ["p1", "10"])
    assert raw == "filter%5Bpatient%5D=p1&page%5Bsize%5D=10"
    assert parsed == [("filter[patient]", "p1"), ("page[size]", "10")]


@settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pairs=st.lists(
        st.tuples(st.one_of(TEXT, RESERVED), st.one_of(TEXT, RESERVED)),
        min_size=1,
        max_size=3,
        unique_by=lambda p: p[0],
    )
)
def test_any_name_and_value_round_trip_through_a_real_query_parser(
    server: RecordingServer, pairs: list[tuple[str, str]]
) -> None:
    names, values = [n for n, _ in pairs], [v for _, v in pairs]
    raw, parsed = _send(server, names, values)
    assert _WIRE_QUERY.match(raw), raw
    assert parsed == pairs
