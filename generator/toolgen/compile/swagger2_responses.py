"""Stage `swagger2`, its responses: a Swagger 2.0 Responses Object, Response Object (or a ``$ref`` to
one) and Header Object -> the OpenAPI 3.0.3 ones (sections 4.7.16, 4.7.17, 4.7.21).

A response's ``schema`` goes under ``content``, one media type per ``produces`` entry
(``application/json`` when none is declared, ``application/octet-stream`` for a ``type: file``
schema); its ``examples`` (per media type) become ``content[media type].example``, a media type
``produces`` does not list included; its headers get a ``schema`` of their validation keywords;
``x-*`` extensions are kept where they stand. Each converted node's 2.0 pointer is recorded through
the `Trail`. Pure: the input is not changed.
"""

from __future__ import annotations

import copy
from typing import Any

from ..pointer import join_pointer
from .swagger2_schemas import SCHEMA_KEYWORDS, Trail, convert_schema, rewrite_ref, value_schema


def convert_responses(
    trail: Trail, responses: dict[str, Any], src: str, produces: list[tuple[str, str]]
) -> dict[str, Any]:
    """An operation's 2.0 Responses Object at `src` -> the 3.0 one (at the same pointer); `produces`:
    the operation's media types, each with its pointer."""
    out: dict[str, Any] = {}
    for code, resp in responses.items():
        where = join_pointer(src, code)
        if code.startswith("x-"):
            out[code] = copy.deepcopy(resp)
            trail.at(where, where)
        else:
            out[code] = convert_response(trail, resp, where, where, produces)
    return out


def convert_response(trail: Trail, resp: Any, src: str, dst: str, produces: list[tuple[str, str]]) -> Any:
    """A 2.0 Response Object (or a `$ref` to one) at `src` -> the 3.0 one at `dst`."""
    trail.at(dst, src)
    if not isinstance(resp, dict):
        return copy.deepcopy(resp)
    if isinstance(resp.get("$ref"), str):
        return {"$ref": rewrite_ref(resp["$ref"])}
    out: dict[str, Any] = {}
    content: dict[str, Any] = {}
    schema = resp.get("schema")
    if "schema" in resp:
        is_file = isinstance(schema, dict) and schema.get("type") == "file"
        types = produces or [("application/octet-stream" if is_file else "application/json", src + "/schema")]
        for mt, mt_src in types:
            mt_dst = join_pointer(dst + "/content", mt)
            trail.at(mt_dst, mt_src)
            content[mt] = {"schema": convert_schema(trail, schema, src + "/schema", mt_dst + "/schema")}
        trail.at(dst + "/content", src + "/schema")
    examples = resp.get("examples")
    if isinstance(examples, dict):
        if not content:
            trail.at(dst + "/content", src + "/examples")
        for mt, example in examples.items():
            ex_src = join_pointer(src + "/examples", mt)
            mt_dst = join_pointer(dst + "/content", mt)
            if mt not in content:  # an example of a media type `produces` does not list
                trail.at(mt_dst, ex_src)
                content[mt] = (
                    {"schema": convert_schema(trail, schema, src + "/schema", mt_dst + "/schema")}
                    if "schema" in resp
                    else {}
                )
            content[mt]["example"] = copy.deepcopy(example)
            trail.at(mt_dst + "/example", ex_src)
    for key, value in resp.items():
        where = join_pointer(src, key)
        if key == "schema" or (key == "examples" and isinstance(value, dict)):
            continue
        if key == "headers" and isinstance(value, dict):
            out["headers"] = {
                name: _header(trail, h, join_pointer(where, name), join_pointer(dst + "/headers", name))
                for name, h in value.items()
            }
            trail.at(dst + "/headers", where)
        else:
            out[key] = copy.deepcopy(value)
            trail.at(join_pointer(dst, key), where)
    if content:
        out["content"] = content
    return out


def _header(trail: Trail, header: Any, src: str, dst: str) -> Any:
    trail.at(dst, src)
    if not isinstance(header, dict):
        return copy.deepcopy(header)
    out: dict[str, Any] = {}
    for key, value in header.items():
        if key in SCHEMA_KEYWORDS or key in ("collectionFormat", "x-nullable"):
            continue
        out[key] = copy.deepcopy(value)
        trail.at(join_pointer(dst, key), join_pointer(src, key))
    out["schema"] = value_schema(trail, header, src, dst + "/schema", allow_file=False)
    return out


__all__ = ["convert_response", "convert_responses"]
