"""Dropping the nulls of a recursive union schema takes time polynomial in the arguments.

"Null means omit" is decided by the branch of an ``anyOf``/``oneOf`` the value belongs to, and the
choice strips the value under each branch to compare them. Done naively, every level of a value
tries every branch on the whole subtree below it, and the level below does the same for each try:
under a recursive two-branch union (a tree, a filter expression, Stripe's nested ``expand`` shapes)
a ~300-byte argument with a null at each of 12 levels took 33 s of CPU before the call's deadline
even started, 14 levels about five minutes, and arguments may nest 64 levels. The branch choice of
one subtree under one schema is made once per call.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import build
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer

from toolgen.runtime import Actor, Registry
from toolgen.runtime.call.nulls import normalise_nulls

SPEC = """openapi: 3.1.0
info: {title: tree, version: '1'}
servers: [{url: 'https://api.example.com'}]
components:
  schemas:
    Node:
      anyOf:
        - type: object
          properties:
            child: {$ref: '#/components/schemas/Node'}
            x: {type: [string, 'null']}
        - type: object
          required: [y]
          properties:
            child: {$ref: '#/components/schemas/Node'}
            y: {type: [string, 'null']}
paths:
  /trees:
    post:
      operationId: makeTree
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                root: {$ref: '#/components/schemas/Node'}
      responses:
        '204': {description: ok}
"""

SCHEMA: dict[str, Any] = {
    "$defs": {
        "Node": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {"child": {"$ref": "#/$defs/Node"}, "x": {"type": ["string", "null"]}},
                },
                {
                    "type": "object",
                    "required": ["y"],
                    "properties": {"child": {"$ref": "#/$defs/Node"}, "y": {"type": ["string", "null"]}},
                },
            ]
        }
    },
    "type": "object",
    "additionalProperties": False,
    "properties": {"root": {"$ref": "#/$defs/Node"}},
}
READER = Actor.of("t", ["t:read"])


def chain(depth: int, member: str = "x") -> dict[str, Any]:
    value: dict[str, Any] = {member: None}
    for _ in range(depth):
        value = {"child": value, member: None}
    return value


def without_nulls(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"child": value}
    return value


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("null-unions")
    spec = tmp / "openapi.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    return build(
        tmp,
        spec,
        "tools:\n  make_tree: {operation: makeTree, effect: read, permission: [t:read], "
        "description: Make a tree.}\n",
        name="tree",
        emit="mcp,policy",
    ).out


@pytest.fixture(scope="module")
def server() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        srv.reply("POST", r"/trees", 204, None)
        yield srv


def test_a_deep_null_chain_under_a_recursive_union_is_normalised_quickly() -> None:
    started = time.process_time()
    got = normalise_nulls({"root": chain(40)}, SCHEMA)
    spent = time.process_time() - started
    assert got == {"root": without_nulls(40)}
    assert spent < 10, f"normalising 40 levels took {spent:.1f} s of CPU"


def test_a_required_nullable_member_keeps_its_null_at_every_depth() -> None:
    assert normalise_nulls({"root": chain(30, "y")}, SCHEMA) == {"root": chain(30, "y")}


@settings(max_examples=examples(40), deadline=None)
@given(
    st.recursive(
        st.fixed_dictionaries(
            {}, optional={"x": st.none() | st.text(max_size=2), "y": st.none() | st.text(max_size=2)}
        ),
        lambda inner: st.fixed_dictionaries(
            {"child": inner},
            optional={"x": st.none() | st.text(max_size=2), "y": st.none() | st.text(max_size=2)},
        ),
        max_leaves=12,
    )
)
def test_only_nulls_are_dropped_and_an_optional_one_always(root: dict[str, Any]) -> None:
    """`x` is optional in both branches: its null always goes; a non-null member always stays; a
    null `y` goes only where the branch the level belongs to does not require it."""
    got = normalise_nulls({"root": root}, SCHEMA)["root"]
    node: Any = root
    sent: Any = got
    while isinstance(node, dict):
        assert isinstance(sent, dict) and set(sent) <= set(node), (root, got)
        for member, value in node.items():
            if member == "x" and value is None:
                assert "x" not in sent, (root, got)
            elif value is not None:
                assert member in sent, (root, got)
            elif member in sent:
                assert sent[member] is None
        node, sent = node.get("child"), sent.get("child")


def test_the_call_sends_the_normalised_tree_within_its_bound(package: Path, server: RecordingServer) -> None:
    reg = Registry.from_dir(package, base_url=server.base_url)
    started = time.monotonic()
    res = reg.call("make_tree", {"root": chain(24)}, actor=READER)
    spent = time.monotonic() - started
    assert res.ok, res.to_json()
    assert server.last.json() == {"root": without_nulls(24)}
    assert spent < 15, f"the call took {spent:.1f} s"
    reg.close()
