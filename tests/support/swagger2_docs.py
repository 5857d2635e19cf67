"""Small Swagger 2.0 documents and the check every conversion test makes: a document built from the
parts a test names (`doc`, `op_doc`), converted by `toolgen.compile.swagger2` and proved a valid
OpenAPI 3.0 document whose every JSON pointer maps back into the 2.0 input (`convert`).

The converted documents are judged by openapi-pydantic (what `toolgen.compile.load` validates with)
and, when it is installed, by openapi-spec-validator's OpenAPI 3.0 schema.
"""

from __future__ import annotations

import copy
from typing import Any

from openapi_pydantic.v3.v3_0 import OpenAPI

from toolgen.compile.swagger2 import Converted, convert_swagger2
from toolgen.pointer import join_pointer, resolve_pointer


def doc(**top: Any) -> dict[str, Any]:
    """A 2.0 document: `top` over a minimal valid one (no paths)."""
    base: dict[str, Any] = {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}}
    base.update(top)
    return base


def op_doc(
    operation: dict[str, Any], path: str = "/things", method: str = "post", **top: Any
) -> dict[str, Any]:
    operation = {"responses": {"200": {"description": "ok"}}, **operation}
    return doc(paths={path: {method: operation}}, **top)


def convert(data: dict[str, Any]) -> Converted:
    """Convert, and prove the result is a valid OpenAPI 3.0 document whose every pointer maps back."""
    before = copy.deepcopy(data)
    converted = convert_swagger2(data, "spec.json")
    assert data == before  # pure: the input is not changed
    assert_valid_30(converted.data)
    assert_maps_back(converted, data)
    return converted


def assert_valid_30(data: dict[str, Any]) -> None:
    OpenAPI.model_validate(data)
    try:
        from openapi_spec_validator import validate
    except ImportError:  # the dev extra installs it; the check is a second opinion
        return
    validate(data)


def pointers(node: Any, at: str = "") -> list[str]:
    out = [at]
    if isinstance(node, dict):
        for key, value in node.items():
            out += pointers(value, join_pointer(at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += pointers(value, join_pointer(at, i))
    return out


def assert_maps_back(converted: Converted, source: dict[str, Any]) -> None:
    for pointer in pointers(converted.data):
        back = converted.pointers.source(pointer)
        try:
            resolve_pointer(source, back)
        except LookupError:
            raise AssertionError(f"{pointer} maps to {back}, which is not in the 2.0 document") from None


# --- consumes / produces and bodies -------------------------------------------------------------


BODY = {
    "name": "thing",
    "in": "body",
    "required": True,
    "description": "the thing",
    "schema": {"$ref": "#/definitions/Thing"},
}
THING = {"Thing": {"type": "object", "properties": {"name": {"type": "string"}}}}
