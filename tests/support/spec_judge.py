"""The judge of a request against the operation it claims to call, as a validating mock server
(e.g. Stoplight Prism) judges it: every required parameter is sent, each parameter's value is valid
against its schema, and a required body is sent, as a media type the operation offers, valid against
that media type's schema.

Scope: what the tests' hand-made specs use: path/query/header parameters in the default ``form`` and
``simple`` styles (arrays exploded), JSON and form bodies, schemas `jsonschema` reads as written
(no OpenAPI 3.0 ``nullable``). Used as the independent side of request-building tests: it reads the
spec, never toolgen's output.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import jsonschema


def _format_checker() -> jsonschema.FormatChecker:
    checker = jsonschema.FormatChecker()

    @checker.checks("byte", raises=(binascii.Error, ValueError))  # type: ignore[untyped-decorator]  # jsonschema ships no types
    def _is_base64(value: object) -> bool:
        if not isinstance(value, str):
            return True
        base64.b64decode(value, validate=True)
        return True

    return checker


FORMATS = _format_checker()


def _coerce(text: str, schema: Mapping[str, Any]) -> Any:
    """A query/header string as the JSON value the parameter schema describes."""
    kind = schema.get("type")
    try:
        if kind == "integer":
            return int(text)
        if kind == "number":
            return float(text)
    except ValueError:
        return text
    if kind == "boolean":
        return {"true": True, "false": False}.get(text, text)
    return text


def _media_schema(content: Mapping[str, Any], content_type: str | None) -> tuple[str, Any] | None:
    """(media type key, schema) of the media type `content_type` matches (exact, then wildcard)."""
    if content_type is None:
        return None
    sent = content_type.split(";")[0].strip().lower()
    for key in content:
        if key.split(";")[0].strip().lower() == sent:
            return key, (content[key] or {}).get("schema", {})
    major = sent.split("/")[0]
    for key in content:
        if key.strip().lower() in (f"{major}/*", "*/*"):
            return key, (content[key] or {}).get("schema", {})
    return None


def violations(
    spec: Mapping[str, Any],
    method: str,
    template: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes | None,
) -> list[str]:
    """What is wrong with the request `method url` (+ `headers`, `body`) for the operation
    `method template` of `spec`; [] when a validating server would accept it."""
    path_item = spec["paths"][template]
    op = path_item[method.lower()]
    params = {(p["name"], p["in"]): p for p in path_item.get("parameters", []) + op.get("parameters", [])}
    parts = urlsplit(url)
    query: dict[str, list[str]] = {}
    for k, v in parse_qsl(parts.query, keep_blank_values=True):
        query.setdefault(k, []).append(v)
    lower_headers = {k.lower(): v for k, v in headers.items()}
    problems: list[str] = []
    for (name, where), param in params.items():
        schema = param.get("schema", {})
        if where == "query":
            values = query.get(name)
        elif where == "header":
            values = [lower_headers[name.lower()]] if name.lower() in lower_headers else None
        else:
            continue
        if values is None:
            if param.get("required"):
                problems.append(f"{where} parameter {name!r} is required but missing")
            continue
        value: Any = (
            [_coerce(v, schema.get("items", {})) for v in values]
            if schema.get("type") == "array"
            else _coerce(values[-1], schema)
        )
        for error in jsonschema.Draft202012Validator(schema, format_checker=FORMATS).iter_errors(value):
            problems.append(f"{where} parameter {name!r}: {error.message}")
    request_body = op.get("requestBody")
    if request_body is None:
        return problems
    if not body:
        if request_body.get("required"):
            problems.append("the request body is required but missing")
        return problems
    content_type = lower_headers.get("content-type")
    found = _media_schema(request_body.get("content", {}), content_type)
    if found is None:
        problems.append(
            f"Content-Type {content_type!r} is not one the operation accepts: "
            f"{sorted(request_body.get('content', {}))}"
        )
        return problems
    key, schema = found
    if content_type is not None and content_type.startswith("application/x-www-form-urlencoded"):
        props = schema.get("properties", {})
        value = {k: _coerce(v, props.get(k, {})) for k, v in parse_qsl(body.decode("ascii"))}
    elif content_type is not None and "json" in content_type:
        value = json.loads(body)
    else:
        problems.append(f"the judge cannot read a {content_type!r} body (media type {key})")
        return problems
    for error in jsonschema.Draft202012Validator(schema, format_checker=FORMATS).iter_errors(value):
        where = "/".join(str(p) for p in error.absolute_path)
        problems.append(f"body{'/' + where if where else ''}: {error.message}")
    return problems
