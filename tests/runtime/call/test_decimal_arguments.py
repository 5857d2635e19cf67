"""`decimal.Decimal` arguments (what a host gets from ``json.loads(text, parse_float=Decimal)``, the
usual way to keep a model's numbers exact) take the JSON form of the double they round to, as a
float argument does: a Decimal beyond a double (``1e400``) was turned into ``inf`` and sent as
``Infinity`` (no JSON number: a form body read ``amount=Infinity``), and one whose double is an
integer (``5.00000000000000000000001``) stayed the float ``5.0``, which an integer parameter's
paging or a strict API does not take as ``5``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import build
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.runtime_env import ADMIN, GENERATED

from toolgen.runtime import Actor, Registry, StaticCredentials
from toolgen.runtime.call.arguments import plain_arguments
from toolgen.runtime.errors import ToolError

EXACT = 2**53


@settings(max_examples=examples(300), deadline=None)
@given(
    st.decimals(allow_nan=False, allow_infinity=False)
    | st.builds(
        lambda digits, exponent: Decimal(digits).scaleb(exponent),
        st.integers(-(10**30), 10**30),
        st.integers(-500, 500),
    )
)
def test_a_decimal_is_refused_or_becomes_the_json_number_of_its_double(value: Decimal) -> None:
    try:
        got = plain_arguments({"n": value})["n"]
    except ToolError as exc:
        assert exc.code == "invalid_arguments" and exc.details["pointer"] == "/n"
        assert not math.isfinite(float(value)), f"{value} has a finite double, yet was refused"
        return
    assert isinstance(got, (int, float)) and not isinstance(got, bool)
    assert math.isfinite(got), f"{value} became {got!r}, which JSON cannot carry"
    near = float(value)
    assert got == near or (isinstance(got, int) and got == int(value))
    if near.is_integer() and abs(near) <= EXACT:
        assert isinstance(got, int), f"{value} became {got!r}, not the integer its double is"


@pytest.fixture
def tickets(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Registry, RecordingServer]]:
    folder = GENERATED / "tickets"
    if not (folder / "policy.json").is_file():
        pytest.skip("generated/tickets is not built")
    with RecordingServer() as srv:
        srv.reply("GET", r"/tickets$", 200, {"tickets": [], "next_cursor": None})
        reg = Registry.from_dir(
            folder,
            base_url=srv.base_url,
            credentials=StaticCredentials({"TICKETS_TOKEN": "t"}),
            cursor_key=b"k" * 32,
        )
        yield reg, srv
        reg.close()


def test_a_page_size_given_as_a_decimal_is_the_page_size_sent(
    tickets: tuple[Registry, RecordingServer],
) -> None:
    reg, srv = tickets
    res = reg.call("list_tickets", {"page_size": Decimal("5.00000000000000000000001")}, actor=ADMIN)
    assert res.ok, res.to_json()
    assert dict(srv.last.query)["limit"] == "5", srv.last.raw_query


SPEC = """openapi: 3.0.3
info: {title: prices, version: '1'}
servers: [{url: 'https://api.example.com'}]
paths:
  /prices:
    post:
      operationId: setPrice
      requestBody:
        required: true
        content:
          application/json:
            schema: {type: object, required: [amount], properties: {amount: {type: number}}}
      responses:
        '204': {description: set}
"""


def test_a_decimal_beyond_a_double_is_never_sent_as_infinity(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    out = build(
        tmp_path,
        spec,
        "tools:\n  set_price: {operation: setPrice, effect: write, permission: [p:write]}\n",
        name="prices",
        emit="mcp,policy",
    ).out
    with RecordingServer() as srv:
        reg = Registry.from_dir(out, base_url=srv.base_url)
        for value in (Decimal("1e400"), Decimal("-1e400")):
            res = reg.call("record_set_price", {"amount": value}, actor=Actor.of("p", ["p:write"]))
            assert not res.ok and res.error is not None, f"{value} was sent as {srv.requests[-1].body!r}"
            assert res.error.code == "invalid_arguments" and res.error.details["pointer"] == "/amount"
        assert srv.requests == []
        reg.close()
