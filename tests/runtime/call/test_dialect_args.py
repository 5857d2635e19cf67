"""Dialect-shaped arguments are turned back into canonical ones before validation.

Unit cases for each rewrite kind (and the errors, which point at what the model sent), a
round-trip property (canonical value → dialect encoding → runtime decode gives the same value, for
the OpenAI and Gemini views of schemas that need every kind of rewrite), and calls through the
runtime: dialect-shaped arguments send exactly the request the canonical ones do.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.dialect_encode import encode, values
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.records import call_record

from toolgen.dialects.gemini import gemini_parameters
from toolgen.dialects.openai import openai_parameters
from toolgen.runtime import Actor, Registry
from toolgen.runtime.call.credentials import StaticCredentials
from toolgen.runtime.call.dialect_args import compile_rewrites, decode_arguments
from toolgen.runtime.errors import ToolError
from toolgen.runtime.stores import MemoryReceiptStore

STRIPE = Path(__file__).resolve().parents[3] / "generated" / "stripe"

MAPS = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "metadata": {
            "anyOf": [
                {"type": "object", "additionalProperties": {"type": "string"}},
                {"type": "string", "enum": [""]},
            ]
        },
        "labels": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "properties": {"n": {"type": "integer"}, "extra": {"type": "object"}},
                "required": ["n"],
                "additionalProperties": False,
            },
        },
        "free": {"type": "object"},
        "anything": {},
        "rows": {"type": "array", "items": {}},
        "level": {"type": "integer", "enum": [1, 2, 3]},
        "x-weird name": {"type": "string"},
        "2fa": {"type": "boolean"},
    },
    "required": ["name"],
    "additionalProperties": False,
}

TREE = {
    "type": "object",
    "properties": {"root": {"$ref": "#/$defs/Node"}},
    "required": ["root"],
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {
                "label": {"type": "string"},
                "attrs": {"type": "object"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
            "required": ["label"],
            "additionalProperties": False,
        }
    },
}


def _nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {
        "type": "object",
        "properties": {"v": {"type": "integer"}},
        "required": ["v"],
        "additionalProperties": False,
    }
    for _ in range(depth):
        node = {"type": "object", "properties": {"x": node}, "required": ["x"], "additionalProperties": False}
    return node


DEEP = _nested(12)
SCHEMAS: dict[str, dict[str, Any]] = {"maps": MAPS, "tree": TREE, "deep": DEEP}
VIEWS: dict[str, Callable[[dict[str, Any]], Any]] = {"openai": openai_parameters, "gemini": gemini_parameters}


def _decode(args: Any, records: Any) -> Any:
    return decode_arguments(args, compile_rewrites(list(records)))


# --- each kind ----------------------------------------------------------------------------------------


def test_map_entries_json_strings_enums_and_renames_decode() -> None:
    view = gemini_parameters(MAPS)
    kinds = sorted({r["kind"] for r in view.rewrites})
    assert kinds == ["enum_strings", "json_string", "map_entries", "rename"]
    sent = {
        "name": "n",
        "labels": [{"key": "a", "value": {"n": 1, "extra": '{"k": [1]}'}}],
        "free": '{"x": 1}',
        "anything": "null",
        "rows": ["1", '"s"'],
        "level": "2",
        "x_weird_name": "w",
        "_2fa": True,
        "metadata": '{"order": "7"}',
    }
    assert _decode(sent, view.rewrites) == {
        "name": "n",
        "labels": {"a": {"n": 1, "extra": {"k": [1]}}},
        "free": {"x": 1},
        "anything": None,
        "rows": [1, "s"],
        "level": 2,
        "x-weird name": "w",
        "2fa": True,
        "metadata": {"order": "7"},
    }
    openai = openai_parameters(MAPS)
    assert _decode({"name": "n", "metadata": [{"key": "a", "value": "b"}]}, openai.rewrites) == {
        "name": "n",
        "metadata": {"a": "b"},
    }
    assert _decode({"name": "n", "metadata": ""}, openai.rewrites) == {"name": "n", "metadata": ""}


def test_canonical_arguments_pass_through_unchanged() -> None:
    canonical = {"name": "n", "labels": {"a": {"n": 1}}, "free": {"x": 1}, "level": 2}
    for fn in VIEWS.values():
        assert _decode(canonical, [r for r in fn(MAPS).rewrites if r["kind"] != "json_string"]) == canonical


@pytest.mark.parametrize(
    "sent,pointer",
    [
        ({"name": "n", "free": "{not json"}, "/free"),
        ({"name": "n", "free": "[1]"}, "/free"),
        ({"name": "n", "labels": [{"key": "a"}]}, "/labels/0"),
        (
            {"name": "n", "labels": [{"key": "a", "value": {"n": 1}}, {"key": "a", "value": {"n": 2}}]},
            "/labels/1/key",
        ),
        ({"name": "n", "labels": [{"key": "a", "value": {"n": 1, "extra": "{"}}]}, "/labels/0/value/extra"),
    ],
)
def test_malformed_dialect_values_are_invalid_arguments_at_the_sent_path(
    sent: dict[str, Any], pointer: str
) -> None:
    with pytest.raises(ToolError) as err:
        _decode(sent, openai_parameters(MAPS).rewrites)
    assert err.value.code == "invalid_arguments"
    assert err.value.details["pointer"] == pointer


def test_recursive_schemas_decode_at_every_level() -> None:
    view = openai_parameters(TREE)
    sent = {
        "root": {
            "label": "a",
            "attrs": '{"k": 1}',
            "children": [
                {"label": "b", "attrs": None, "children": [{"label": "c", "attrs": "{}", "children": None}]}
            ],
        }
    }
    assert _decode(sent, view.rewrites) == {
        "root": {
            "label": "a",
            "attrs": {"k": 1},
            "children": [
                {"label": "b", "attrs": None, "children": [{"label": "c", "attrs": {}, "children": None}]}
            ],
        }
    }


# --- the round trip -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", sorted(VIEWS))
@pytest.mark.parametrize("name", sorted(SCHEMAS))
@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_encode_then_decode_gives_the_canonical_value(name: str, dialect: str, data: st.DataObject) -> None:
    schema = SCHEMAS[name]
    value = data.draw(values(schema))
    jsonschema.validate(value, schema)
    view = VIEWS[dialect](schema)
    sent = encode(value, view.rewrites)
    if dialect == "openai":  # what the model sends fits the strict schema (absent optionals sent as null)
        jsonschema.validate(_with_nulls(sent, view.schema, view.schema), view.schema)
    assert _decode(sent, view.rewrites) == value


def _with_nulls(value: Any, schema: Any, root: dict[str, Any]) -> Any:
    """`value` as an OpenAI strict call carries it: every absent optional property sent as null."""
    if isinstance(schema, dict) and "$ref" in schema:
        schema = root if schema["$ref"] == "#" else root["$defs"][schema["$ref"].rsplit("/", 1)[1]]
    if not isinstance(schema, dict):
        return value
    for branch in schema.get("anyOf", []):
        target = branch
        if "$ref" in branch:
            target = root if branch["$ref"] == "#" else root["$defs"][branch["$ref"].rsplit("/", 1)[1]]
        if (isinstance(value, dict) and "properties" in target) or (
            isinstance(value, list) and "items" in target
        ):
            return _with_nulls(value, target, root)
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        return {k: (_with_nulls(value[k], props[k], root) if k in value else None) for k in props} | {
            k: v for k, v in value.items() if k not in props
        }
    if isinstance(value, list) and "items" in schema:
        return [_with_nulls(v, schema["items"], root) for v in value]
    return value


# --- through the runtime ------------------------------------------------------------------------------


@pytest.fixture
def stripe(recorder: RecordingServer) -> Any:
    if not (STRIPE / "policy.json").is_file():
        pytest.skip("generated/stripe not built")
    reg = Registry.from_dir(
        STRIPE,
        base_url=recorder.base_url,
        credentials=StaticCredentials({"STRIPE_SECRET_KEY": "sk_test_dummy"}),
        receipts=MemoryReceiptStore(),
        cursor_key=b"c" * 32,
    )
    yield reg
    reg.close()


def _actor(reg: Registry, tool: str) -> Actor:
    return Actor.of("t", reg.row_json(tool)["permission"])


_META = st.dictionaries(
    st.text("abcdefgh_", min_size=1, max_size=8), st.text("xyz 01", max_size=6), max_size=4
)


@settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(metadata=_META)
def test_dialect_arguments_preview_the_same_request(stripe: Registry, metadata: dict[str, str]) -> None:
    tool = "preview_update_customer"
    row = stripe.row_json(tool)
    canonical = {"customer": "cus_1", "metadata": metadata, "name": "Ada"}
    base = call_record(stripe, tool, canonical, actor=_actor(stripe, tool))
    assert base.ok, base.to_json()
    for dialect, records in row["dialect_rewrites"].items():
        sent = encode(canonical, records)
        res = call_record(stripe, tool, sent, actor=_actor(stripe, tool), dialect=dialect)
        assert res.ok, (dialect, sent, res.to_json())
        assert res.result == base.result, dialect


def test_a_record_call_in_a_dialect_sends_the_canonical_request(
    stripe: Registry, recorder: RecordingServer
) -> None:
    canonical = {"customer": "cus_1", "metadata": {"order": "7", "tier": "gold"}}
    sent = []
    for dialect, args in (
        (
            "openai",
            {**canonical, "metadata": [{"key": "order", "value": "7"}, {"key": "tier", "value": "gold"}]},
        ),
        ("gemini", {**canonical, "metadata": '{"order": "7", "tier": "gold"}'}),
        (None, canonical),
    ):
        reg = Registry.from_dir(
            STRIPE,
            base_url=recorder.base_url,
            credentials=StaticCredentials({"STRIPE_SECRET_KEY": "sk_test_dummy"}),
            receipts=MemoryReceiptStore(),
            cursor_key=b"c" * 32,
        )
        with reg:
            preview = reg.call(
                "preview_update_customer", args, actor=_actor(reg, "preview_update_customer"), dialect=dialect
            )
            assert preview.ok and preview.result is not None, preview.to_json()
            res = call_record(
                reg,
                "record_update_customer",
                {**args, "idempotency_key": "k-1"},
                actor=_actor(reg, "record_update_customer"),
                approval=preview.result["preview_id"],
                dialect=dialect,
            )
            assert res.ok, res.to_json()
        last = recorder.last
        sent.append((preview.result["preview_id"], last.method, last.path, last.form()))
    assert sent[0] == sent[1] == sent[2]
    assert ("metadata[order]", "7") in sent[0][3]


def test_a_malformed_dialect_value_is_refused_before_anything_is_sent(
    stripe: Registry, recorder: RecordingServer
) -> None:
    res = stripe.call(
        "preview_update_customer",
        {"customer": "cus_1", "metadata": [{"key": "a"}]},
        actor=_actor(stripe, "preview_update_customer"),
        dialect="openai",
    )
    assert not res.ok and res.error is not None
    assert res.error.code == "invalid_arguments"
    assert res.error.details["pointer"] == "/metadata"  # a union: the value fits no branch
    unknown = stripe.call("get_balance", {}, actor=_actor(stripe, "get_balance"), dialect="cohere")
    assert unknown.error is not None and unknown.error.code == "invalid_arguments"
    assert not recorder.requests
