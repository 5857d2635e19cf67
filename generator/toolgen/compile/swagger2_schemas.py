"""Stage `swagger2`, its schemas: a Swagger 2.0 Schema Object, or the validation keywords of a
parameter, header or items object -> the OpenAPI 3.0.3 Schema Object (section 4.7.24), and a 2.0
``$ref`` -> the same target in the converted document.

``x-nullable`` -> ``nullable`` (a nullable ``$ref`` becomes ``allOf: [$ref]`` + ``nullable``, since
3.0 ignores a reference's siblings), ``type: file`` -> string/binary (allowed only on form fields:
else ``swagger2-invalid``), a ``discriminator`` string -> ``{propertyName: ...}``; ``#/definitions/X``,
``#/parameters/X`` and ``#/responses/X`` -> ``#/components/schemas/X``, ``.../parameters/X`` and
``.../responses/X``. A nested array's ``collectionFormat`` is dropped with a ``swagger2-dropped``
warning. Each converted node's 2.0 pointer is recorded through the `Trail`. Pure: the input is not
changed.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol

from ..pointer import join_pointer, ref_to_pointer

#: keywords of a 2.0 non-body parameter, header or items object that belong in a 3.0 ``schema``
SCHEMA_KEYWORDS = (
    "type",
    "format",
    "items",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "enum",
    "multipleOf",
)
_REF_PREFIXES = (
    ("/definitions/", "/components/schemas/"),
    ("/parameters/", "/components/parameters/"),
    ("/responses/", "/components/responses/"),
)


class Trail(Protocol):
    """What a conversion step records: `at(dst, src)`, the 2.0 pointer a converted pointer came from;
    `error` and `warn(code, message, src, hint)`, a problem located at a 2.0 pointer."""

    def at(self, dst: str, src: str) -> None: ...

    def error(self, code: str, message: str, src: str, hint: str) -> None: ...

    def warn(self, code: str, message: str, src: str, hint: str) -> None: ...


def rewrite_ref(ref: str) -> str:
    """A 2.0 ``$ref`` -> the same target in the converted document. The prefix is matched on the
    decoded pointer (a fragment may percent-encode its ``/``), and a rewritten reference is written
    with RFC 6901 escapes only."""
    pointer = ref_to_pointer(ref)
    if pointer is None:
        return ref
    for old, new in _REF_PREFIXES:
        if ref.startswith("#" + old):  # the author's own encoding of the name is kept
            return "#" + new + ref[len(old) + 1 :]
        if pointer.startswith(old):
            return "#" + new + pointer[len(old) :].replace("%", "%25")
    return ref


def convert_schema(trail: Trail, node: Any, src: str, dst: str) -> Any:
    """A 2.0 Schema Object at `src` -> the 3.0 one at `dst` (recorded through `trail`)."""
    trail.at(dst, src)
    if not isinstance(node, dict):
        return copy.deepcopy(node)
    out: dict[str, Any] = {}
    nullable_ref = node.get("x-nullable") is True and isinstance(node.get("$ref"), str)
    for key, value in node.items():
        where, sub = join_pointer(src, key), join_pointer(dst, key)
        if key == "$ref" and isinstance(value, str):
            if nullable_ref:  # 3.0 ignores a reference's siblings: the reference moves into allOf
                out["allOf"] = [{"$ref": rewrite_ref(value)}]
                for tail in ("/allOf", "/allOf/0", "/allOf/0/$ref"):
                    trail.at(dst + tail, where)
            else:
                out[key] = rewrite_ref(value)
        elif key == "x-nullable":
            out["nullable"] = copy.deepcopy(value)
            trail.at(dst + "/nullable", where)
        elif key == "type" and value == "file":
            out["type"], out["format"] = "string", "binary"
            trail.at(dst + "/format", where)
        elif key == "format" and node.get("type") == "file":
            continue
        elif key == "discriminator" and isinstance(value, str):
            out[key] = {"propertyName": value}
            trail.at(sub + "/propertyName", where)
        elif key == "properties" and isinstance(value, dict):
            out[key] = {
                name: convert_schema(trail, s, join_pointer(where, name), join_pointer(sub, name))
                for name, s in value.items()
            }
        elif key in ("allOf", "anyOf", "oneOf", "items") and isinstance(value, list):
            out[key] = [
                convert_schema(trail, s, join_pointer(where, i), join_pointer(sub, i))
                for i, s in enumerate(value)
            ]
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = convert_schema(trail, value, where, sub)
        else:
            out[key] = copy.deepcopy(value)
    return out


def value_schema(
    trail: Trail, node: dict[str, Any], src: str, dst: str, *, allow_file: bool
) -> dict[str, Any]:
    """The schema at `dst` of the parameter, header or items object at `src`: its validation
    keywords, which keep their relative pointers."""
    trail.at(dst, src)
    out: dict[str, Any] = {}
    for key in SCHEMA_KEYWORDS:
        if key not in node:
            continue
        value = node[key]
        if key == "items" and isinstance(value, dict):
            if "collectionFormat" in value:
                trail.warn(
                    "swagger2-dropped",
                    "a nested array's `collectionFormat` has no OpenAPI 3 equivalent and is dropped",
                    src + "/items/collectionFormat",
                    "flatten the parameter, or describe the encoding in its description",
                )
            if "$ref" in value or "properties" in value or "allOf" in value:
                out[key] = convert_schema(trail, value, src + "/items", dst + "/items")
            else:
                out[key] = value_schema(trail, value, src + "/items", dst + "/items", allow_file=False)
        elif key == "type" and value == "file":
            if not allow_file:
                trail.error(
                    "swagger2-invalid",
                    "`type: file` is allowed only on `in: formData` parameters",
                    src + "/type",
                    "send the file as a form field (`in: formData`, consumes multipart/form-data)",
                )
            out["type"], out["format"] = "string", "binary"
            trail.at(dst + "/format", src + "/type")
        elif key == "format" and node.get("type") == "file":
            continue
        else:
            out[key] = copy.deepcopy(value)
    if "x-nullable" in node:
        out["nullable"] = copy.deepcopy(node["x-nullable"])
        trail.at(dst + "/nullable", src + "/x-nullable")
    return out


__all__ = ["SCHEMA_KEYWORDS", "Trail", "convert_schema", "rewrite_ref", "value_schema"]
