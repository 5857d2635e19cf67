"""The runtime fails closed on a malformed JSON pointer (RFC 6901 sections 3-4: ``~`` only as ``~0``
or ``~1``): a policy table whose composite reference holds one, or a catalog schema whose local
``$ref`` holds one, is refused when the package loads, naming the file and the JSON pointer, never
resolved as literal text. Each tampered package holds the member the lenient reading would name."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from tests.support.runtime_env import load_package

from toolgen.policy.nodes import PolicyFormatError
from toolgen.runtime import Registry
from toolgen.runtime.call.toolspec import SchemaRefError

BAD = ["/ticket_id~2", "/ticket~", "/~x", "ticket_id"]


def _composite_input_ref(policy: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    for index, row in enumerate(policy["tools"]):
        composite = row.get("composite")
        if composite:
            ref = composite["steps"][0]["args"]["ticket_id"]
            assert ref["$ref"] == "input"
            return index, ref
    pytest.skip("the tickets package has no composite tool")


@pytest.mark.parametrize("pointer", BAD)
def test_a_policy_reference_with_a_malformed_pointer_is_refused_at_load(pointer: str) -> None:
    policy, catalog = load_package("tickets")
    tampered = copy.deepcopy(policy)
    index, ref = _composite_input_ref(tampered)
    ref["pointer"] = pointer
    Registry(policy, list(catalog))  # the untampered package loads
    with pytest.raises(PolicyFormatError) as caught:
        Registry(tampered, list(catalog))
    error = caught.value
    assert error.file == "policy.json"
    assert error.pointer == f"/tools/{index}/composite/steps/0/args/ticket_id/pointer"
    assert pointer in error.message
    assert "~0" in error.hint and "toolgen build" in error.hint


@pytest.mark.parametrize("ref", ["#/$defs/Id~2", "#/$defs/Id%7E2", "#/$defs/Id~", "#/$defs/Nope"])
def test_a_catalog_ref_with_a_malformed_or_dangling_pointer_is_refused_at_load(ref: str) -> None:
    policy, catalog = load_package("tickets")
    tampered = copy.deepcopy(list(catalog))
    entry = next(dict(t) for t in tampered if t["name"] == "get_ticket")
    schema = copy.deepcopy(entry["inputSchema"])
    # the members a lenient reader would resolve the malformed pointers to
    schema["$defs"] = {"Id~2": {"type": "string"}, "Id~": {"type": "string"}}
    schema["properties"]["ticket_id"] = {"$ref": ref}
    entry["inputSchema"] = schema
    tampered = [entry if t["name"] == "get_ticket" else t for t in tampered]
    with pytest.raises(SchemaRefError) as caught:
        Registry(policy, list(tampered))
    message = str(caught.value)
    assert "mcp.json" in message and "'get_ticket'" in message
    assert "inputSchema#/properties/ticket_id/$ref" in message
    assert "toolgen build" in message


def test_a_catalog_ref_inside_data_or_under_a_property_named_like_data_is_judged_right() -> None:
    policy, catalog = load_package("tickets")
    tampered = copy.deepcopy(list(catalog))
    entry = next(dict(t) for t in tampered if t["name"] == "get_ticket")
    schema = copy.deepcopy(entry["inputSchema"])
    schema["properties"]["ticket_id"] = {**schema["properties"]["ticket_id"], "examples": [{"$ref": "#/~9"}]}
    entry["inputSchema"] = schema
    Registry(policy, [entry if t["name"] == "get_ticket" else t for t in tampered])  # data: not a $ref
    schema["properties"]["default"] = {"$ref": "#/$defs/x~9"}  # a property named `default` is a schema
    with pytest.raises(SchemaRefError):
        Registry(policy, [entry if t["name"] == "get_ticket" else t for t in tampered])
