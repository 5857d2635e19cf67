"""The request body: an operation's ``requestBody`` -> arguments (one per top-level property) and an encoding.

Input: the operation's request body (``$ref``s followed) and the media types it offers. Output: the
encoding (json, form, multipart, text, binary or none), the content type, and the arguments: one
per top-level property of an object body (bindings keep the wire name; required only when the body
is), or a single `body` argument for free-form, composed, text and binary bodies.
"""

from __future__ import annotations

import re
from typing import Any

from ...naming import arg_name
from ...pointer import join_pointer
from ..intent import ToolIntent
from ..ir import ArgBinding, BodyEncoding
from ..operations import Operation
from ..schema import copy_tree, object_view
from .context import Arg, Ctx
from .text import cap_text

_JSON_MEDIA = re.compile(r"^application/([a-z0-9.+-]*\+)?json(;.*)?$", re.IGNORECASE)


def pick_media(content: dict[str, Any]) -> tuple[str, BodyEncoding]:
    keys = list(content)
    for m in keys:
        if m.lower().split(";")[0].strip() == "application/json":
            return m, "json"
    for m in keys:
        if _JSON_MEDIA.match(m.strip()):
            return m, "json"
    for m in keys:
        if m.lower().startswith("application/x-www-form-urlencoded"):
            return m, "form"
    for m in keys:
        if m.lower().startswith("multipart/"):
            return m, "multipart"
    for m in keys:
        if m.lower().startswith("text/"):
            return m, "text"
    return keys[0], "binary"


def body_arguments(ctx: Ctx, op: Operation, intent: ToolIntent, desc_limit: int
          ) -> tuple[BodyEncoding, str | None, list[Arg]]:
    raw = op.node.get("requestBody")
    if raw is None:
        return "none", None, []
    ptr = join_pointer(op.pointer, "requestBody")
    body, body_ptr = ctx.converter.resolve(raw, ptr)
    if not isinstance(body, dict):
        return "none", None, []
    content = body.get("content")
    if not isinstance(content, dict) or not content:
        return "none", None, []
    media, encoding = pick_media(content)
    media_node = content[media] if isinstance(content[media], dict) else {}
    body_required = bool(body.get("required"))
    schema_ptr = join_pointer(body_ptr, "content", media, "schema")
    if encoding in ("binary", "text") or "schema" not in media_node:
        description = "Request body (" + media + ")" + (
            ", base64-encoded" if encoding == "binary" else "") + "."
        schema: dict[str, Any] = {"type": "string", "description": description}
        if encoding == "binary":
            schema["contentEncoding"] = "base64"
        return encoding, media, [Arg("body", schema, ArgBinding("body", "body", "", body_required, "omit",
                                                                content_type=media), body_required)]
    # read-only result (shares the converter's memo): every path below copies what it keeps
    schema = ctx.converter.convert(media_node["schema"], schema_ptr, "input", copy=False)
    schema = _unwrap_single_branch(schema)
    view = object_view(schema)
    if view is not None and not view[0] and schema.get("additionalProperties") in (None, False) \
            and "$ref" not in schema:
        return "none", None, []  # an empty object body (Stripe's GETs declare one): send no body
    free_form = view is None or (not view[0] and schema.get("additionalProperties") not in (None, False))
    if view is None or free_form or "$ref" in schema:
        if encoding == "form":
            encoding = "form"
        schema = copy_tree(schema)
        schema.setdefault("description", "Request body.")
        return encoding, media, [Arg("body", schema, ArgBinding("body", "body", "", body_required), body_required)]
    props, required = view
    encodings = media_node.get("encoding") if isinstance(media_node.get("encoding"), dict) else {}
    defs = schema.get("$defs")
    args: list[Arg] = []
    for prop, prop_schema in props.items():
        prop_schema = _attach_defs(prop_schema, defs) if defs else copy_tree(prop_schema)
        if isinstance(prop_schema.get("description"), str):
            prop_schema["description"] = cap_text(prop_schema["description"], desc_limit)
        is_required = body_required and prop in required
        null_means = "send" if is_required and _admits_null(prop_schema) else "omit"
        enc = encodings.get(prop) if isinstance(encodings, dict) else None
        style = enc.get("style") if isinstance(enc, dict) and isinstance(enc.get("style"), str) else None
        explode = enc.get("explode") if isinstance(enc, dict) and isinstance(enc.get("explode"), bool) else None
        part_type = enc.get("contentType") if isinstance(enc, dict) and isinstance(enc.get("contentType"), str) else None
        binding = ArgBinding("", "body", prop, is_required, null_means, style, explode, part_type)  # type: ignore[arg-type]
        args.append(Arg(arg_name(prop), prop_schema, binding, is_required))
    return encoding, media, args


def _unwrap_single_branch(schema: dict[str, Any]) -> dict[str, Any]:
    """`{"oneOf": [X]}` (or anyOf) with nothing else that constrains -> X with the annotations kept."""
    for key in ("oneOf", "anyOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and len(branches) == 1 and isinstance(branches[0], dict) \
                and "$ref" not in branches[0]:
            rest = {k: v for k, v in schema.items() if k != key}
            if set(rest) <= {"description", "title", "$defs"}:
                merged = dict(branches[0])
                for k, v in rest.items():
                    merged.setdefault(k, v)
                return merged
    return schema


def _admits_null(schema: dict[str, Any]) -> bool:
    t = schema.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    return any(isinstance(b, dict) and b.get("type") == "null" for b in schema.get("anyOf", []) or [])


def _attach_defs(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Copy of `node` with the `$defs` entries it (transitively) references."""
    node = copy_tree(node)
    needed: list[str] = []
    stack: list[Any] = [node]
    seen: set[str] = set()
    while stack:
        cur = stack.pop()
        if isinstance(cur, dict):
            ref = cur.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref[len("#/$defs/"):]
                if name not in seen and name in defs:
                    seen.add(name)
                    needed.append(name)
                    stack.append(defs[name])
            stack.extend(v for k, v in cur.items() if k != "$defs")
        elif isinstance(cur, list):
            stack.extend(cur)
    if needed:
        existing = node.setdefault("$defs", {})
        for name in sorted(needed):
            existing.setdefault(name, copy_tree(defs[name]))
    return node
