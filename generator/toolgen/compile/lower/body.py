"""The request body: an operation's ``requestBody`` -> arguments (one per top-level property) and an encoding.

Input: the operation's request body (``$ref``s followed) and the media types it offers. Output: the
encoding (json, form, multipart, text, binary or none), the content type, and the arguments: one
per top-level property of an object body (bindings keep the wire name; required only when the body
is), or a single `body` argument for free-form, composed, text and binary bodies.

The node budget (``budgets.max_schema_nodes``) applies to the body as the model sees it: members the
intent hides (`hide`, or ``args: {x: {hide: true}}``) are neither counted nor copied, a member narrowed
by ``args`` counts as its narrowed schema, and the rest is counted on the converter's shared result
before anything is copied, so a body of 473,276 nodes of which the tool keeps 2.5 kB costs no more
than what it keeps.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from ...diagnostics import Diagnostic, DiagnosticError
from ...naming import arg_name
from ...pointer import join_pointer
from ..intent import ToolIntent
from ..ir import ArgBinding, BodyEncoding
from ..operations import Operation
from ..schema import SchemaConverter, copy_tree, json_size, object_view
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


def body_arguments(ctx: Ctx, op: Operation, intent: ToolIntent, desc_limit: int,
                   hidden: Collection[str] = ()) -> tuple[BodyEncoding, str | None, list[Arg]]:
    """(encoding, content type, arguments) of the operation's request body (see the module docstring).

    `hidden`: wire names the intent's `hide` lists; a hidden member (and one ``args`` hides) comes back
    with an empty placeholder schema, never copied, for the caller to drop (or to refuse, when it is
    required). Raises `DiagnosticError` ``schema-too-large`` when the members the model sees exceed
    the node budget; the hint names the largest optional ones to hide."""
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
    # read-only result (shares the converter's memo): every path below copies what it keeps; the node
    # budget is checked below, on what the model sees
    schema = ctx.converter.convert(media_node["schema"], schema_ptr, "input", copy=False, check_nodes=False)
    schema = _unwrap_single_branch(schema)
    view = object_view(schema)
    if view is not None and not view[0] and schema.get("additionalProperties") in (None, False) \
            and "$ref" not in schema:
        return "none", None, []  # an empty object body (Stripe's GETs declare one): send no body
    free_form = view is None or (not view[0] and schema.get("additionalProperties") not in (None, False))
    if view is None or free_form or "$ref" in schema:
        _check_budget(ctx, schema_ptr, [("body", schema)], schema.get("$defs"))
        schema = copy_tree(schema)
        schema.setdefault("description", "Request body.")
        return encoding, media, [Arg("body", schema, ArgBinding("body", "body", "", body_required), body_required)]
    props, required = view
    encodings = media_node.get("encoding") if isinstance(media_node.get("encoding"), dict) else {}
    defs = schema.get("$defs")
    hidden_args = {name for name, spec in intent.args.items() if spec.hide}
    narrowed = {name: spec.schema_ for name, spec in intent.args.items() if spec.schema_ is not None}
    seen = {prop: narrowed.get(arg_name(prop), prop_schema) for prop, prop_schema in props.items()
            if prop not in hidden and arg_name(prop) not in hidden_args}
    _check_budget(ctx, schema_ptr, list(seen.items()), defs, required if body_required else ())
    args: list[Arg] = []
    for prop, prop_schema in props.items():
        is_required = body_required and prop in required
        if prop not in seen:  # hidden: dropped (or refused, when required) by the caller
            args.append(Arg(arg_name(prop), {}, ArgBinding("", "body", prop, is_required), is_required))
            continue
        prop_schema = _attach_defs(prop_schema, defs) if defs else copy_tree(prop_schema)
        if isinstance(prop_schema.get("description"), str):
            prop_schema["description"] = cap_text(prop_schema["description"], desc_limit)
        null_means = "send" if is_required and _admits_null(prop_schema) else "omit"
        enc = encodings.get(prop) if isinstance(encodings, dict) else None
        style = enc.get("style") if isinstance(enc, dict) and isinstance(enc.get("style"), str) else None
        explode = enc.get("explode") if isinstance(enc, dict) and isinstance(enc.get("explode"), bool) else None
        part_type = enc.get("contentType") if isinstance(enc, dict) and isinstance(enc.get("contentType"), str) else None
        binding = ArgBinding("", "body", prop, is_required, null_means, style, explode, part_type)  # type: ignore[arg-type]
        args.append(Arg(arg_name(prop), prop_schema, binding, is_required))
    return encoding, media, args


def _check_budget(ctx: Ctx, pointer: str, members: list[tuple[str, Any]], defs: Any,
                  required: Collection[str] = ()) -> None:
    """Raise ``schema-too-large`` when `members` (name, schema on the converter's shared result),
    with the ``$defs`` they reach, exceed ``budgets.max_schema_nodes``; counted without expanding."""
    budget = ctx.converter.budget.max_nodes
    memo: dict[int, tuple[int, int]] = {}
    sizes = {name: ctx.converter.measure(node, memo) for name, node in members}
    total = 1 + sum(sizes.values())
    if isinstance(defs, dict) and defs:
        total += sum(ctx.converter.measure(defs[name], memo) for name in reachable_defs(
            [node for _, node in members], defs))
    if total <= budget:
        return
    if isinstance(defs, dict) and defs:  # over budget: what each member costs with the $defs it reaches
        for name, node in members:
            sizes[name] += sum(ctx.converter.measure(defs[d], memo) for d in reachable_defs([node], defs))
    optional = sorted((n for n in sizes if n not in required), key=lambda n: (-sizes[n], n))
    largest = ", ".join(f"{n} ({sizes[n]:,})" for n in optional[:5])
    hint = (f"hide optional members the model does not need (`hide:` wire names; largest: {largest}), "
            "or raise budgets.max_schema_nodes") if optional else "raise budgets.max_schema_nodes"
    raise DiagnosticError([Diagnostic(
        "schema-too-large", "error",
        f"the request body's {len(members)} members the model sees expand to {total:,} nodes after inlining "
        f"$refs (budget {budget:,} nodes)", ctx.doc.locate(pointer), hint)])


def body_member_costs(converter: SchemaConverter, op: Operation) -> tuple[dict[str, tuple[int, int]], set[str]]:
    """(member -> (schema nodes, compact-JSON bytes) as the model would see it, the required members)
    of `op`'s JSON object request body, each with the ``$defs`` it reaches; counted on the converter's
    shared result, never expanded. Empty when the body is not an object of named members (or is
    broken: the build reports that)."""
    raw = op.node.get("requestBody")
    try:
        body, body_ptr = converter.resolve(raw, join_pointer(op.pointer, "requestBody")) if raw else (None, "")
        content = body.get("content") if isinstance(body, dict) else None
        if not isinstance(content, dict) or not content:
            return {}, set()
        media, encoding = pick_media(content)
        media_node = content[media]
        if encoding not in ("json", "form", "multipart") or not isinstance(media_node, dict) \
                or "schema" not in media_node:
            return {}, set()
        schema = converter.convert(media_node["schema"], join_pointer(body_ptr, "content", media, "schema"),
                                   "input", copy=False, check_nodes=False)
    except DiagnosticError:
        return {}, set()
    view = object_view(_unwrap_single_branch(schema))
    if view is None:
        return {}, set()
    props, required = view
    defs = schema.get("$defs") if isinstance(schema.get("$defs"), dict) else {}
    nodes_memo: dict[int, tuple[int, int]] = {}
    bytes_memo: dict[int, int] = {}
    out: dict[str, tuple[int, int]] = {}
    for name, node in props.items():
        reached = [defs[d] for d in reachable_defs([node], defs)] if defs else []
        out[name] = (converter.measure(node, nodes_memo) + sum(converter.measure(d, nodes_memo) for d in reached),
                     json_size(node, bytes_memo) + sum(json_size(d, bytes_memo) for d in reached))
    return out, set(required) if isinstance(body, dict) and body.get("required") else set()


def reachable_defs(nodes: list[Any], defs: dict[str, Any]) -> list[str]:
    """Names of the `defs` entries that `nodes` reference, directly or through each other; each shared
    object is visited once (the result of ``convert(copy=False)`` is a DAG, not a tree)."""
    found: list[str] = []
    names: set[str] = set()
    visited: set[int] = set()
    stack = list(nodes)
    while stack:
        cur = stack.pop()
        if id(cur) in visited:
            continue
        visited.add(id(cur))
        if isinstance(cur, dict):
            ref = cur.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref[len("#/$defs/"):]
                if name not in names and name in defs:
                    names.add(name)
                    found.append(name)
                    stack.append(defs[name])
            stack.extend(v for k, v in cur.items() if k != "$defs" and isinstance(v, (dict, list)))
        elif isinstance(cur, list):
            stack.extend(v for v in cur if isinstance(v, (dict, list)))
    return found


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
