"""Outputs: an operation's success response -> the tool's output schema, as the runtime shapes it.

Input: the canonical schema of the success response (`success_response`: the first 2xx with a body,
JSON preferred), the intent's `output` (fields, depth, redact) and the tool's pagination. Output: an
object-root output schema: the response projected to `output.fields` (each kept field only
`output.depth` levels deep), a list wrapped as ``{"items", "next_cursor"}`` when paged, any other
root wrapped as ``{"result": ...}``, redacted paths replaced by the value the runtime writes there,
and wide schemas cut to the deepest level that fits the node budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from ...diagnostics import DiagnosticError
from ...pointer import join_pointer
from ...results import (
    BINARY_SCHEMA,
    REDIRECT_SCHEMA,
    RESULT_KEY,
    TEXT_KEY,
    TRUNCATED_KEY,
    TRUNCATED_SCHEMA,
    Redirect,
    ResponseBody,
    Shape,
    media_kind,
    result_shape,
)
from ..ir import Pagination
from ..load import SpecDocument
from ..operations import Operation
from ..schema import SchemaConverter, copy_tree, limit_depth, object_view, project_schema
from ..schema.converter import TOO_LARGE_HINT
from .context import Ctx, Skip
from .resolve import OutputRule


@dataclass(frozen=True)
class SuccessBody:
    """The success response an operation's tool returns.

    `schema`: the canonical schema of the body as the runtime decodes it (None: no body is declared);
    `statuses`: the declared 2xx statuses; `pointer`: where `schema` is in the spec; `link`: the
    response declares a ``Link`` header; `headers`: the names of every header it declares; `body`:
    how the runtime reads it (``json``: JSON, tried
    whatever the answer's Content-Type says unless it is HTML; ``text``; ``binary``: a
    `toolgen.results.BINARY_SCHEMA` summary; ``none``); `empty`: an empty body is also a success
    (another 2xx without content, or a ``null`` body); `accept`: the ``Accept`` value to send
    when the response offers several media types (the JSON one; without JSON, every one the
    response offers, text before binary: `_opaque_body`), else None; `redirect`: when the only
    declared success is a redirect, what the runtime does with it (`redirect_body`)."""

    schema: Any
    statuses: tuple[int, ...]
    pointer: str
    link: bool
    body: ResponseBody = "none"
    empty: bool = False
    accept: str | None = None
    redirect: Redirect | None = None
    headers: tuple[str, ...] = ()


def _structured(schema: Any) -> bool:
    """Whether a declared schema describes an object or an array (or a composition / reference,
    which in a spec's response means a structured document), so its body can only be JSON."""
    if not isinstance(schema, dict):
        return False
    t = schema.get("type")
    types = t if isinstance(t, list) else [t]
    if "object" in types or "array" in types:
        return True
    if t is None:
        return any(
            k in schema
            for k in ("properties", "items", "additionalProperties", "allOf", "anyOf", "oneOf", "$ref")
        )
    return False


def _pick_response_media(
    content: dict[str, Any],
) -> tuple[str, Literal["json", "any", "text", "binary"], bool]:
    """(media type, how to read it, whether JSON is assumed rather than declared): a JSON media type
    first (``application/json`` before vendor and ``+json`` types), then a wildcard or unknown type
    whose schema is an object or array, then a wildcard, text, and binary."""
    keys = [str(k) for k in content]
    kinds = {k: media_kind(k) for k in keys}

    def schema_of(key: str) -> Any:
        node = content[key]
        return node.get("schema") if isinstance(node, dict) else None

    jsons = [k for k in keys if kinds[k] == "json"]
    if jsons:
        exact = [k for k in jsons if k.split(";")[0].strip().lower() == "application/json"]
        return (exact or jsons)[0], "json", False
    for k in keys:
        if kinds[k] in ("any", "binary") and _structured(schema_of(k)):
            return k, "json", True
    for k in keys:
        if kinds[k] == "any":
            return k, "any", True
    for k in keys:
        if kinds[k] == "text":
            return k, "text", False
    return keys[0], "binary", False


def success_response(ctx: Ctx, op: Operation, *, copy: bool = True, check_nodes: bool = True) -> SuccessBody:
    """The success response of `op` (`SuccessBody`): the first 2xx with a body (by status).

    Media types are read by `toolgen.results.media_kind`. A wildcard (``*/*``, springdoc's default)
    or unknown media type whose schema is an object or array is read as JSON; a wildcard without
    such a schema may carry anything (the output schema is ``{}``, the runtime tries JSON, then
    text). Both are guesses the spec does not confirm: the build warns (`response-media-assumed-json`,
    `response-media-unknown`) at the media type's pointer.

    ``copy=False``: the schema is read-only (it shares the converter's memo; see `SchemaConverter.convert`).
    ``check_nodes=False`` (only with ``copy=False``): the node budget is left to the caller, which counts
    the output schema as the model sees it (`tool_output_schema`: after ``output.fields`` projection
    and the depth cut); the depth budget still applies."""
    responses = op.node.get("responses")
    if not isinstance(responses, dict):
        return SuccessBody(None, (), op.pointer, False)
    codes = sorted(str(c) for c in responses if str(c).startswith("2") or str(c).upper() == "2XX")
    if not codes:
        redirect = redirect_body(ctx, op, responses)
        if redirect is not None:
            return redirect
    success = tuple(int(c) for c in codes if c.isdigit())
    order = [c for c in codes if c.isdigit()] + [c for c in codes if not c.isdigit()]
    if not order and "default" in responses:
        order = ["default"]
    empty = False
    chosen: SuccessBody | None = None
    for code in order:
        ptr = join_pointer(op.pointer, "responses", code)
        node, node_ptr = ctx.converter.resolve(responses[code], ptr)
        if not isinstance(node, dict):
            continue
        content = node.get("content")
        if not isinstance(content, dict) or not content:
            if code[0] == "2":
                empty = True
            if chosen is None and (code in ("204", "205") or len(order) == 1):
                chosen = SuccessBody(None, success, node_ptr, _has_link(node))
            continue
        if chosen is not None and chosen.schema is not None:
            continue
        chosen = replace(
            _media_body(
                ctx, op, node, node_ptr, content, success, copy=copy, check_nodes=check_nodes or copy
            ),
            headers=_header_names(node),
        )
    if chosen is None:
        return SuccessBody(None, success, op.pointer, False)
    if chosen.schema is None:
        return chosen
    if empty or _admits_null(chosen.schema):
        return replace(chosen, empty=True)
    return chosen


def _header_names(node: dict[str, Any]) -> tuple[str, ...]:
    raw_headers = node.get("headers")
    return tuple(str(h) for h in raw_headers) if isinstance(raw_headers, dict) else ()


def _has_link(node: dict[str, Any]) -> bool:
    raw_headers = node.get("headers")
    return any(str(h).lower() == "link" for h in (raw_headers if isinstance(raw_headers, dict) else {}))


def _admits_null(schema: Any) -> bool:
    """Whether a canonical schema's root admits ``null`` (a type list with null, or a null branch)."""
    if not isinstance(schema, dict):
        return False
    t = schema.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    return any(isinstance(b, dict) and b.get("type") == "null" for b in schema.get("anyOf") or [])


def _media_body(
    ctx: Ctx,
    op: Operation,
    node: dict[str, Any],
    node_ptr: str,
    content: dict[str, Any],
    success: tuple[int, ...],
    *,
    copy: bool,
    check_nodes: bool,
) -> SuccessBody:
    media, kind, assumed = _pick_response_media(content)
    media_node = content[media] if isinstance(content[media], dict) else {}
    media_ptr = join_pointer(node_ptr, "content", media)
    link = _has_link(node)
    if assumed and ctx.intents is not None:
        if kind == "json":
            ctx.sink.warning(
                "response-media-assumed-json",
                f"{op.key} answers {media!r}, which does not say JSON; its schema is an object or "
                "array, so the tool reads the answer as JSON",
                ctx.doc.locate(media_ptr),
                "declare the success response as application/json in the spec",
            )
        else:
            ctx.sink.warning(
                "response-media-unknown",
                f"{op.key} answers {media!r} without an object or array schema; the tool returns "
                "the answer as JSON when it parses, else as text, unchecked",
                ctx.doc.locate(media_ptr),
                "declare the media type and schema of the success response in the spec",
            )
    accept = media if kind == "json" and len(content) > 1 else None
    if kind in ("text", "binary"):
        opaque = _opaque_body(content, success, node_ptr, link)
        if opaque.body == "text" and ctx.intents is not None:
            shown = ", ".join(str(k) for k in content if media_kind(str(k)) == "text")
            into = f"in `{TEXT_KEY}`" if opaque.schema.get("type") == "object" else "as text"
            ctx.sink.info(
                "response-text",
                f"{op.key} answers {shown}: the tool returns the answer {into}, "
                "the call's secrets scrubbed, cut to output.max_bytes",
                ctx.doc.locate(media_ptr),
                "declare a JSON response in the spec if the API has one",
            )
        return opaque
    if kind == "any" or "schema" not in media_node:
        return SuccessBody({}, success, media_ptr, link, "json", accept=accept)
    schema_ptr = join_pointer(media_ptr, "schema")
    schema = ctx.converter.convert(
        media_node["schema"], schema_ptr, "output", copy=copy, check_nodes=check_nodes
    )
    return SuccessBody(schema, success, schema_ptr, link, "json", accept=accept)


#: a media type fit to go into an ``Accept`` list as is (RFC 9110 §12.5.1: type/subtype, parameters)
_MEDIA_RANGE = re.compile(
    r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+/[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*;\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+"
    r"=[!#$%&'*+.^_`|~0-9A-Za-z-]+)*$"
)


def _opaque_body(content: dict[str, Any], success: tuple[int, ...], node_ptr: str, link: bool) -> SuccessBody:
    """The success body of a response that offers no JSON: each media type as the runtime reads it,
    whichever one the API answers with (`toolgen.runtime.serving.registry` reads an answer by its own
    Content-Type): text (``text/*``, XML) as a string, anything else as the `BINARY_SCHEMA` summary.
    Offered both (a certificate as ``application/pdf`` or ``application/xml``, chosen by a body
    field), the output is either (``anyOf``, so the ``result`` shape) and `accept` lists the text
    types first, the binary ones at ``q=0.5`` (RFC 9110 §12.5.1): what the tool can show the model
    is what it asks for, and a server that answers the other still fits the output schema."""
    keys = [str(k) for k in content]
    texts = [k for k in keys if media_kind(k) == "text"]
    binaries = [k for k in keys if media_kind(k) != "text"]
    text_schema = {"type": "string", "description": f"Response body ({', '.join(texts)})."}
    if texts and binaries:
        ranges = [*texts, *(f"{k};q=0.5" for k in binaries)]
        accept = ", ".join(ranges) if all(_MEDIA_RANGE.match(k) for k in keys) else None
        either: dict[str, Any] = {"anyOf": [text_schema, copy_tree(BINARY_SCHEMA)]}
        return SuccessBody(either, success, node_ptr, link, "text", accept=accept)
    if texts:  # the text is the result's one member (a page of HTML, a CSV file, a plain message)
        only: dict[str, Any] = {
            "type": "object",
            "properties": {TEXT_KEY: text_schema},
            "required": [TEXT_KEY],
        }
        return SuccessBody(only, success, node_ptr, link, "text")
    return SuccessBody(copy_tree(BINARY_SCHEMA), success, node_ptr, link, "binary")


#: words of an operation that make its redirect a download link: its result is where the redirect points
_LINK_WORDS = frozenset(
    {
        "download",
        "downloads",
        "link",
        "url",
        "uri",
        "file",
        "files",
        "attachment",
        "blob",
        "avatar",
        "image",
        "thumbnail",
        "photo",
        "logo",
        "media",
        "tarball",
        "zipball",
        "export",
        "archive",
        "redirect",
        "signed",
        "presigned",
    }
)
_REDIRECTS = ("301", "302", "303", "307", "308", "3XX")


def redirect_body(ctx: Ctx, op: Operation, responses: dict[str, Any]) -> SuccessBody | None:
    """The `SuccessBody` of an operation whose only declared successes are redirects (301, 302, 303,
    307, 308 or ``3XX``; RFC 9110 §15.4), else None. A read follows a same-origin redirect
    (``follow``) unless its words (operationId, path, summary) name a download link (`_LINK_WORDS`:
    ``download``, ``file``, ``url``, ...), whose result is the ``Location`` (``location``); a write
    never follows. The build says which (info ``response-redirect``)."""
    codes = [str(c) for c in responses if str(c).upper() in _REDIRECTS]
    if not codes:
        return None
    text = " ".join(str(x) for x in (op.operation_id, op.path, op.node.get("summary")) if isinstance(x, str))
    link = bool(_LINK_WORDS & {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", text)})
    redirect: Redirect = "follow" if op.method in ("GET", "HEAD") and not link else "location"
    statuses = tuple(sorted(int(c) for c in codes if c.isdigit())) or (301, 302, 303, 307, 308)
    ptr = join_pointer(op.pointer, "responses", min(codes))
    if ctx.intents is not None:
        what = (
            "follows a same-origin redirect (never another origin, at most 5 hops, within the call's deadline) "
            "and returns where it landed"
            if redirect == "follow"
            else "returns the redirect's Location (a download link"
            + (")" if link else "; a write never follows)")
        )
        ctx.sink.info(
            "response-redirect",
            f"{op.key} declares only a redirect ({', '.join(sorted(codes))}): the tool {what}",
            ctx.doc.locate(ptr),
            "declare the 2xx answer in the spec if the API has one",
        )
    return SuccessBody(copy_tree(REDIRECT_SCHEMA), statuses, ptr, False, "none", redirect=redirect)


def field_schema(schema: Any, dotted: str, *, array: bool = False, defs: dict[str, Any] | None = None) -> Any:
    """The sub-schema at a dotted path of object properties (following `#/$defs/...` references of
    the root, or of `defs`), or None. With `array`, only an array schema counts."""
    if defs is None and isinstance(schema, dict) and isinstance(schema.get("$defs"), dict):
        defs = schema["$defs"]

    def deref(node: Any) -> Any:
        seen = 0
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and defs and seen < 50:
            node = defs.get(node["$ref"].removeprefix("#/$defs/"), node)
            seen += 1
        return node

    node = deref(schema)
    if dotted:
        for part in dotted.split("."):
            node = deref(node)
            view = object_view(node) if isinstance(node, dict) else None
            if view is None or part not in view[0]:
                return None
            node = view[0][part]
    node = deref(node)
    if array:
        if not isinstance(node, dict):
            return None
        t = node.get("type")
        if not (t == "array" or (isinstance(t, list) and "array" in t)):
            return None
    return node


REDACTED_SCHEMA: dict[str, Any] = {
    "description": "Redacted by the runtime policy.",
    "enum": ["[redacted]", None],
}


def tool_output_schema(
    ctx: Ctx, op: Operation, rule: OutputRule, pagination: Pagination | None, body: SuccessBody, iloc: Any
) -> tuple[dict[str, Any], Shape]:
    """(output schema, result shape) under the intent's output `rule`: the schema with `rule.redact`
    paths checked against the response and replaced by the value the runtime puts there (so a
    redacted `format: email` field still validates), and the shape (`toolgen.results.result_shape`)
    the runtime gives the body. With a size budget (`rule.max_bytes` > 0) an object root that closes
    its members admits the budget's ``_truncated`` marker.

    The node budget (``budgets.max_schema_nodes``) applies to this schema, the output as the model
    sees it: a response too large whole fits once ``output.fields`` projects it (or the depth cut of
    an unprojected output trims it). Raises `DiagnosticError` ``schema-too-large`` at the response
    schema's pointer when even that is over."""
    response = body.schema
    out, shape = _shaped_output_schema(ctx, op, rule, pagination, body, iloc)
    _check_output_budget(ctx, op, rule, body, out)
    if rule.max_bytes > 0:
        _admit_truncation(out)
    redact = list(rule.redact)
    if not redact:
        return out, shape
    base = response
    if pagination is not None and isinstance(response, dict):
        items = field_schema(response, pagination.items_field, array=True) or {}
        base = {**items.get("items", {}), "$defs": response.get("$defs", {})}
    elif isinstance(response, dict) and field_schema(response, "", array=True) is not None:
        base = {**response.get("items", {}), "$defs": response.get("$defs", {})}
    for index, path in enumerate(redact):
        try:
            if not isinstance(base, dict):
                raise KeyError(path)
            # only whether the path exists (KeyError): nothing is kept, so nothing is expanded
            project_schema(base, [path], depth=0, max_nodes=0)
        except KeyError:
            raise Skip(
                "output-redact-unknown",
                f"output.redact {path!r} is not a field of the response of "
                f"{op.key}, so nothing would be redacted",
                iloc("output", "redact", index),
                "use a dotted path of the response (the same form as output.fields)",
            ) from None
        target = out["properties"]["items"]["items"] if pagination is not None else out
        if shape == "result":
            target = out["properties"][RESULT_KEY]  # through its items and null branch
        _redact_in(target, path.split("."))
    return out, shape


def _check_output_budget(
    ctx: Ctx, op: Operation, rule: OutputRule, body: SuccessBody, out: dict[str, Any]
) -> None:
    """Raise ``schema-too-large`` when the output schema `out` (counted without expanding what it
    shares with the converter's result) exceeds ``budgets.max_schema_nodes``."""
    nodes = ctx.converter.measure(out, {})
    if nodes > ctx.converter.budget.max_nodes:
        raise _too_large(ctx, op, body, f"{nodes:,}", fields=bool(rule.fields))


def _too_large(ctx: Ctx, op: Operation, body: SuccessBody, nodes: str, *, fields: bool) -> DiagnosticError:
    hint = (
        (
            "keep fewer fields (output.fields) or fewer levels below them (output.depth), or raise "
            "budgets.max_schema_nodes"
        )
        if fields
        else TOO_LARGE_HINT
    )
    return DiagnosticError.one(
        "schema-too-large",
        f"the output schema of {op.key} as the model sees it expands to {nodes} nodes after inlining $refs "
        f"(budget {ctx.converter.budget.max_nodes:,} nodes)",
        ctx.doc.locate(body.pointer),
        hint,
    )


def _admit_truncation(out: dict[str, Any]) -> None:
    """Declare the budget's ``_truncated`` member on an output root that would otherwise reject it
    (``additionalProperties``/``unevaluatedProperties`` other than true, or ``patternProperties``)."""
    closed = any(
        key in out and out[key] is not True
        for key in ("additionalProperties", "unevaluatedProperties", "patternProperties")
    )
    if closed and TRUNCATED_KEY not in out.get("properties", {}):
        out["properties"] = {**out.get("properties", {}), TRUNCATED_KEY: copy_tree(TRUNCATED_SCHEMA)}


def _redact_in(node: Any, parts: list[str]) -> None:
    """Replace the schema at `parts` (through arrays and union branches) by `REDACTED_SCHEMA`."""
    if not isinstance(node, dict) or not parts:
        return
    for key in ("anyOf", "oneOf"):
        for branch in node.get(key) or []:
            _redact_in(branch, parts)
    if isinstance(node.get("items"), dict):
        _redact_in(node["items"], parts)
    props = node.get("properties")
    if isinstance(props, dict) and parts[0] in props:
        if len(parts) == 1:
            props[parts[0]] = {
                "description": REDACTED_SCHEMA["description"],
                "enum": list(REDACTED_SCHEMA["enum"]),
            }
        else:
            _redact_in(props[parts[0]], parts[1:])


def _shaped_output_schema(
    ctx: Ctx, op: Operation, rule: OutputRule, pagination: Pagination | None, body: SuccessBody, iloc: Any
) -> tuple[dict[str, Any], Shape]:
    response = body.schema
    fields = list(rule.fields)
    depth = rule.depth
    if response is None:
        return {
            "type": "object",
            "properties": {
                "status": {"type": "integer", "description": "HTTP status of the (empty) response."}
            },
            "required": ["status"],
        }, "status"
    node_budget = ctx.intents.model.defaults.output_schema_nodes
    schema = dict(response)  # shallow: the helpers below build new trees and never mutate their input
    defs = schema.pop("$defs", None)

    def project(node: dict[str, Any], what: str) -> dict[str, Any]:
        if defs:
            node = {**node, "$defs": defs}  # project_schema/limit_depth copy only the $defs still used
        if fields:
            try:
                # a kept field is kept whole, but only `depth` levels below it (Stripe's expandable
                # fields would otherwise pull in a 65-schema recursive group)
                below = rule.depth_below_fields
                levels = max(f.count(".") for f in fields) + below
                # cut while copying (a kept field may expand to millions of nodes), within the budget
                projected = project_schema(
                    node, fields, depth=levels, max_nodes=ctx.converter.budget.max_nodes
                )
            except KeyError as exc:
                view = object_view(node)
                known = ", ".join(sorted(view[0])) if view else "(not an object)"
                raise Skip(
                    "output-field-unknown",
                    f"output field {exc.args[0]!r} is not in the {what} of {op.key}",
                    iloc("output", "fields"),
                    f"available fields: {known}",
                ) from None
            if projected is None:
                raise _too_large(ctx, op, body, f"more than {ctx.converter.budget.max_nodes:,}", fields=True)
            return limit_depth(projected, levels)
        bounded = _bounded(node, depth, node_budget, ctx.converter.budget.max_nodes)
        if bounded is None:
            raise _too_large(ctx, op, body, f"more than {ctx.converter.budget.max_nodes:,}", fields=False)
        return bounded

    if pagination is not None:
        items_schema = field_schema(schema, pagination.items_field, array=True) or {
            "type": "array",
            "items": {},
        }
        item = project(dict(items_schema.get("items", {})), "items")
        item_defs = item.pop("$defs", None)
        out: dict[str, Any] = {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": item},
                "next_cursor": {"type": ["string", "null"]},
            },
            "required": ["items", "next_cursor"],
        }
        if item_defs:
            out["$defs"] = item_defs
        return out, "object"
    # the body schema as the tool returns it; `result_shape` decides whether it is wrapped
    node: dict[str, Any]
    if (
        object_view(schema) is not None
        and "$ref" not in schema
        and not schema.get("anyOf")
        and not schema.get("oneOf")
        and not body.empty
    ):
        node = project(schema, "response")
        node.setdefault("properties", {})
        node["type"] = "object"  # `properties` without `type` (or `type: [object]`): the body is an object
    elif fields and (schema.get("anyOf") or schema.get("oneOf") or "$ref" in schema) and not body.empty:
        # a union (Stripe: customer | deleted_customer): each object branch keeps the fields it has
        node = project(schema, "response")
        node = {"type": "object", **{k: v for k, v in node.items() if k != "type"}}
    elif fields and field_schema(schema, "", array=True) is not None:
        # an array body (GitHub's label lists): the fields apply to each item
        item = project(dict(schema.get("items", {})), "items")
        item_defs = item.pop("$defs", None)
        node = {"type": "array", "items": item}
        if item_defs:
            node["$defs"] = item_defs
    elif fields and not body.empty:
        raise Skip(
            "output-not-object",
            f"output.fields needs an object response; {op.key} returns {_describe_type(schema)}",
            iloc("output", "fields"),
            "remove output.fields",
        )
    else:
        bounded = _bounded(
            {**schema, "$defs": defs} if defs else schema, depth, node_budget, ctx.converter.budget.max_nodes
        )
        if bounded is None:
            raise _too_large(ctx, op, body, f"more than {ctx.converter.budget.max_nodes:,}", fields=False)
        node = bounded
    if body.empty and not _admits_null(node):
        node_defs = node.pop("$defs", None)
        node = {"anyOf": [node, {"type": "null"}]} if node else node
        if node_defs:
            node["$defs"] = node_defs
    shape = result_shape(node)
    if shape == "object":
        return node, shape
    node_defs = node.pop("$defs", None)
    out = {"type": "object", "properties": {RESULT_KEY: node}, "required": [RESULT_KEY]}
    if node_defs:
        out["$defs"] = node_defs
    return out, shape


def _bounded(schema: dict[str, Any], depth: int, budget: int, hard: int) -> dict[str, Any] | None:
    """`limit_depth` at the deepest level ≤ `depth` whose result stays within `budget` schema nodes
    (at least one level when that is within `hard`, the build's node budget, else the root's members
    with their types only). Wide APIs (Stripe objects with ~100 expandable properties) get fewer
    levels. None when even the root's members are over `hard`: built no further than that."""
    first = limit_depth(schema, 1, max_nodes=budget)  # None when over the budget
    if first is None:
        return limit_depth(schema, 1, max_nodes=hard) or limit_depth(schema, 0, max_nodes=hard)
    best = first
    for level in range(2, depth + 1):
        candidate = limit_depth(schema, level, max_nodes=budget)  # None (early) when over the budget
        if candidate is None:
            break
        best = candidate
    return best


def strip_descriptions(node: Any) -> Any:
    """Drop `description`/`title` annotations (not property names called so) from a schema tree."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in ("description", "title") and isinstance(value, str):
                continue
            if key in ("properties", "$defs", "patternProperties") and isinstance(value, dict):
                out[key] = {k: strip_descriptions(v) for k, v in value.items()}
            elif key in ("enum", "const", "default", "required", "examples"):
                out[key] = value
            else:
                out[key] = strip_descriptions(value)
        return out
    if isinstance(node, list):
        return [strip_descriptions(v) for v in node]
    return node


def _describe_type(schema: Any) -> str:
    if isinstance(schema, dict) and "type" in schema:
        return f"type {schema['type']!r}"
    return "a composed schema"


def operation_success(doc: SpecDocument, converter: SchemaConverter, op: Operation) -> SuccessBody:
    """The success response the build uses for `op` (`success_response`), read only: its schema
    shares the converter's memo, and a response over the node budget is returned too (as
    `operation_response` with ``copy=False``). Raises `DiagnosticError` for a schema it cannot convert."""
    return success_response(
        Ctx(doc, None, converter.sink, "", converter),  # type: ignore[arg-type]
        op,
        copy=False,
        check_nodes=False,
    )


def operation_response(
    doc: SpecDocument, converter: SchemaConverter, op: Operation, *, copy: bool = True
) -> tuple[Any, bool]:
    """(canonical schema of the success response the build uses, or None for an empty body; whether
    that response declares a `Link` header). Raises `DiagnosticError` for a schema it cannot convert.
    ``copy=False``: the schema is read-only, sharing the converter's memo (a reader that looks at many
    operations then holds each distinct schema once, not one copy per operation), and a response over
    the node budget is returned too (the build counts the budget after ``output.fields``; a reader
    measures it with `SchemaConverter.measure`)."""
    body = success_response(
        Ctx(doc, None, converter.sink, "", converter),  # type: ignore[arg-type]
        op,
        copy=copy,
        check_nodes=copy,
    )
    return body.schema, body.link
