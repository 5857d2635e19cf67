"""Tool results: how a decoded response body becomes the object a tool returns.

One rule, shared by the build (which writes the output schema) and the runtime (which shapes the
answer), so the two cannot disagree:

- `media_kind`: what a media type says about the body (``json``: ``application/json``,
  ``text/json``, any ``+json`` suffix such as ``application/hal+json`` or
  ``application/vnd.foo.v1+json``, with or without parameters such as ``charset``; ``any``: a
  wildcard (``*/*``, ``application/*``) or no media type, which may carry JSON; ``text``: other
  ``text/*`` and XML; ``binary``: everything else).
- `result_shape`: the shape of a tool's result, decided by the build from the output schema and
  written into ``policy.json`` (``output.shape``): ``object`` (the body itself: the schema admits
  objects only and no empty body), ``result`` (``{"result": <body>}``: every other body, ``null``
  for an empty one) or ``status`` (``{"status": <HTTP status>}``: no response body is declared).
- `shape_body`: the runtime side of the same rule.
- `BINARY_SCHEMA`: what a binary body becomes (``{"content_type", "bytes"}``), and its schema.
- `TRUNCATED_SCHEMA`: the ``_truncated`` marker the output budget adds, which every object output
  schema admits.
"""

from __future__ import annotations

import re
from typing import Any, Literal

MediaKind = Literal["json", "any", "text", "binary"]
Shape = Literal["object", "result", "status"]
#: How the runtime reads a success body (``output.body`` in ``policy.json``): ``json`` (tried
#: whatever the answer's Content-Type, except an HTML page), ``text``, ``binary`` or ``none``.
ResponseBody = Literal["json", "text", "binary", "none"]
#: What the runtime does with a redirect an operation declares as its only success (``output.redirect``
#: in ``policy.json``): ``follow`` a same-origin one (a read), or return its ``location``.
Redirect = Literal["follow", "location"]
#: The member a declared text answer (``text/html``, ``text/plain``, ...) is returned in.
TEXT_KEY = "text"
#: The result of a redirect: the status, where it points (or where the followed redirects landed) and,
#: when followed, the body found there.
REDIRECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["status"],
    "properties": {
        "status": {"type": "integer", "description": "The HTTP status of the last answer."},
        "location": {"type": "string", "description": "The redirect's target (absolute URL)."},
        "body": {"description": "The answer found by following the redirect."},
    },
}

#: The member that carries a body that is not itself the tool's result object.
RESULT_KEY = "result"
#: The member the output budget adds to a cut result (`toolgen.runtime.call.shaping`).
TRUNCATED_KEY = "_truncated"

_JSON_TYPE = re.compile(r"^(application|text)/(([a-z0-9!#$&^_.+-]*\+)?json|x-json|jsonl?)$")


def media_kind(media_type: str | None) -> MediaKind:
    """The kind of body a media type (a Content-Type value or a response ``content`` key) carries.

    Parameters (``; charset=utf-8``) and case are ignored. ``None``/empty, ``*/*`` and
    ``<type>/*`` wildcards are ``any``: the body may be JSON (springdoc-generated specs declare
    ``*/*`` for JSON answers)."""
    if not media_type:
        return "any"
    base = media_type.split(";", 1)[0].strip().lower()
    if not base or base == "*" or base.endswith("/*"):
        return "any"
    if _JSON_TYPE.match(base):
        return "json"
    if base.startswith("text/") or base.endswith(("/xml", "+xml")):
        return "text"
    return "binary"


def result_shape(output_body_schema: Any) -> Shape:
    """The result shape for the schema of a response body as the tool returns it (None: no body
    is declared). ``object`` exactly when the schema's root is ``type: "object"`` (MCP D.1: an
    ``outputSchema`` root is an object), ``result`` otherwise (arrays, scalars, unions, a schema
    with ``properties`` but no ``type``, a type list that admits ``null``)."""
    if output_body_schema is None:
        return "status"
    if isinstance(output_body_schema, dict) and output_body_schema.get("type") == "object":
        return "object"
    return "result"


def shape_body(body: Any, shape: Shape | str | None, status: int) -> dict[str, Any]:
    """The tool result for a decoded body (``None``: an empty body) under a result `shape`.

    ``object``: an object body as is; any other body (an API that drifted from its spec) as
    ``{"result": body}``, which the output schema then rejects visibly. ``result``:
    ``{"result": body}``, ``{"result": null}`` for an empty body. ``status``:
    ``{"status": status}``, plus ``"result"`` when the API sent a body after all. ``None`` (a
    ``policy.json`` from before the shape was recorded): objects as is, empty bodies as
    ``{"status": status}``, anything else wrapped."""
    if shape == "result":
        return {RESULT_KEY: body}
    if shape == "status":
        return {"status": status} if body is None else {"status": status, RESULT_KEY: body}
    if isinstance(body, dict):
        return body
    if shape is None and body is None:
        return {"status": status}
    return {RESULT_KEY: body}


#: A binary body, as the runtime returns it: its media type and size, never its bytes.
BINARY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A binary response body: its media type and size (the bytes are not returned).",
    "properties": {"content_type": {"type": "string"}, "bytes": {"type": "integer", "minimum": 0}},
    "required": ["content_type", "bytes"],
}


def binary_summary(content_type: str, size: int) -> dict[str, Any]:
    """The value `BINARY_SCHEMA` describes: ``{"content_type": <media type without parameters>,
    "bytes": <size>}``."""
    return {"content_type": content_type.split(";", 1)[0].strip(), "bytes": size}


#: The marker of a result the output budget cut (`toolgen.runtime.call.shaping.enforce_budget`).
TRUNCATED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Present when the result was cut to the output size budget; says what was left out.",
    "properties": {
        "original_bytes": {"type": "integer"},
        "omitted_items": {"type": "integer"},
        "shortened_items": {"type": "integer"},
        "omitted_members": {"type": "array", "items": {"type": "string"}},
        "shortened_members": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["original_bytes"],
}
