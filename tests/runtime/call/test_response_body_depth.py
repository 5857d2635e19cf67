"""A JSON answer nested too deep to parse is unreadable whatever its Content-Type says
(`toolgen.runtime.call.response_body.decode_body`): never a binary summary or text a tool would return as its
result. Over a real loopback API in tests/runtime/test_runtime_trust_robustness.py (``nested-1000``)."""

from __future__ import annotations

import httpx
import pytest

from toolgen.runtime.call.response_body import MAX_RESPONSE_DEPTH, decode_body

DEEP = ("[" * 5000 + "]" * 5000).encode()


@pytest.mark.parametrize("ctype", ["application/json", "application/octet-stream", "", "text/plain"])
def test_json_too_deep_to_parse_is_a_problem_under_any_label(ctype: str) -> None:
    headers = httpx.Headers({"content-type": ctype} if ctype else {})
    value, problem = decode_body(headers, DEEP, expect="json")
    assert value is None and problem == f"JSON nested deeper than {MAX_RESPONSE_DEPTH} levels"


def test_json_just_within_the_depth_is_read() -> None:
    body = ("[" * MAX_RESPONSE_DEPTH + "]" * MAX_RESPONSE_DEPTH).encode()
    value, problem = decode_body(
        httpx.Headers({"content-type": "application/octet-stream"}), body, expect="json"
    )
    assert problem is None and isinstance(value, list)
