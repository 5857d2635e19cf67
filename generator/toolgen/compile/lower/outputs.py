"""Outputs: an operation's success response -> the tool's output schema, as the runtime shapes it.

Input: the canonical schema of the success response (`success_response`: the first 2xx with a body,
JSON preferred), the intent's `output` (fields, depth, redact) and the tool's pagination. Output: an
object-root output schema: the response projected to `output.fields` (each kept field only
`output.depth` levels deep), a list wrapped as ``{"items", "next_cursor"}`` when paged, any other
root wrapped as ``{"result": ...}``, redacted paths replaced by the value the runtime writes there,
and wide schemas cut to the deepest level that fits the node budget.
"""

from __future__ import annotations

from typing import Any

from ...pointer import join_pointer
from ..intent import ToolIntent
from ..ir import Pagination
from ..load import SpecDocument
from ..operations import Operation
from ..schema import SchemaConverter, limit_depth, object_view, project_schema
from .body import pick_media
from .context import Ctx, Skip


def success_response(ctx: Ctx, op: Operation, *, copy: bool = True) -> tuple[Any, tuple[int, ...], str, bool]:
    """(canonical schema of the success response or None, declared 2xx statuses, pointer, Link header?).

    ``copy=False``: the schema is read-only (it shares the converter's memo; see `SchemaConverter.convert`)."""
    responses = op.node.get("responses")
    if not isinstance(responses, dict):
        return None, (), op.pointer, False
    codes = sorted(str(c) for c in responses if str(c).startswith("2") or str(c).upper() == "2XX")
    success = tuple(int(c) for c in codes if c.isdigit())
    order = [c for c in codes if c.isdigit()] + [c for c in codes if not c.isdigit()]
    if not order and "default" in responses:
        order = ["default"]
    for code in order:
        ptr = join_pointer(op.pointer, "responses", code)
        node, node_ptr = ctx.converter.resolve(responses[code], ptr)
        if not isinstance(node, dict):
            continue
        raw_headers = node.get("headers")
        headers: dict[str, Any] = raw_headers if isinstance(raw_headers, dict) else {}
        link = any(str(h).lower() == "link" for h in headers)
        content = node.get("content")
        if not isinstance(content, dict) or not content:
            if code in ("204", "205") or len(order) == 1:
                return None, success, node_ptr, link
            continue
        media, encoding = pick_media(content)
        media_node = content[media] if isinstance(content[media], dict) else {}
        if encoding != "json" or "schema" not in media_node:
            return {"type": "string", "description": f"Response body ({media})."}, success, node_ptr, link
        schema_ptr = join_pointer(node_ptr, "content", media, "schema")
        return (ctx.converter.convert(media_node["schema"], schema_ptr, "output", copy=copy), success, schema_ptr,
                link)
    return None, success, op.pointer, False


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


REDACTED_SCHEMA: dict[str, Any] = {"description": "Redacted by the runtime policy.", "enum": ["[redacted]", None]}


def tool_output_schema(ctx: Ctx, op: Operation, intent: ToolIntent, pagination: Pagination | None, response: Any,
                       response_ptr: str, iloc: Any) -> dict[str, Any]:
    """The output schema with `output.redact` paths checked against the response and replaced by the
    value the runtime puts there, so a redacted `format: email` field still validates."""
    out = _shaped_output_schema(ctx, op, intent, pagination, response, response_ptr, iloc)
    redact = list(intent.output.redact) if intent.output else []
    if not redact:
        return out
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
            project_schema(base, [path])
        except KeyError:
            raise Skip("output-redact-unknown", f"output.redact {path!r} is not a field of the response of "
                       f"{op.key}, so nothing would be redacted", iloc("output", "redact", index),
                       "use a dotted path of the response (the same form as output.fields)")
        target = out["properties"]["items"]["items"] if pagination is not None else out
        if pagination is None and "result" in out.get("properties", {}) and "items" in out["properties"]["result"]:
            target = out["properties"]["result"]["items"]
        _redact_in(target, path.split("."))
    return out


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
            props[parts[0]] = {"description": REDACTED_SCHEMA["description"], "enum": list(REDACTED_SCHEMA["enum"])}
        else:
            _redact_in(props[parts[0]], parts[1:])


def _shaped_output_schema(ctx: Ctx, op: Operation, intent: ToolIntent, pagination: Pagination | None,
                          response: Any, response_ptr: str, iloc: Any) -> dict[str, Any]:
    fields = list(intent.output.fields) if intent.output else []
    depth = (intent.output.depth if intent.output and intent.output.depth else ctx.intents.model.defaults.output_depth)
    if response is None:
        return {"type": "object", "properties": {
            "status": {"type": "integer", "description": "HTTP status of the (empty) response."}},
                "required": ["status"]}
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
                below = intent.output.depth if intent.output and intent.output.depth else 1
                levels = max(f.count(".") for f in fields) + below
                return limit_depth(project_schema(node, fields), levels)
            except KeyError as exc:
                view = object_view(node)
                known = ", ".join(sorted(view[0])) if view else "(not an object)"
                raise Skip("output-field-unknown", f"output field {exc.args[0]!r} is not in the {what} of {op.key}",
                           iloc("output", "fields"), f"available fields: {known}")
        return _bounded(node, depth, node_budget)

    if pagination is not None:
        items_schema = field_schema(schema, pagination.items_field, array=True) or {"type": "array", "items": {}}
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
        return out
    view = object_view(schema)
    if view is not None and "$ref" not in schema and not schema.get("anyOf") and not schema.get("oneOf"):
        node = project(schema, "response")
        node_defs = node.pop("$defs", None)
        node.setdefault("properties", {})
        t = node.get("type")
        if isinstance(t, list):  # a nullable object root: the runtime wraps null as {"result": null}
            node["type"] = "object"
        if node_defs:
            node["$defs"] = node_defs
        return node
    if fields and (schema.get("anyOf") or schema.get("oneOf") or "$ref" in schema):
        # a union (Stripe: customer | deleted_customer): each object branch keeps the fields it has
        node = project(schema, "response")
        node_defs = node.pop("$defs", None)
        out = {"type": "object", **{k: v for k, v in node.items() if k != "type"}}
        if node_defs:
            out["$defs"] = node_defs
        return out
    if fields and field_schema(schema, "", array=True) is not None:
        # an array body (GitHub's label lists): the fields apply to each item, wrapped as {"result": [...]}
        item = project(dict(schema.get("items", {})), "items")
        item_defs = item.pop("$defs", None)
        out = {"type": "object", "properties": {"result": {"type": "array", "items": item}}, "required": ["result"]}
        if item_defs:
            out["$defs"] = item_defs
        return out
    if fields:
        raise Skip("output-not-object", f"output.fields needs an object response; {op.key} returns "
                   f"{_describe_type(schema)}", iloc("output", "fields"), "remove output.fields")
    inner = _bounded({**schema, "$defs": defs} if defs else schema, depth, node_budget)
    inner_defs = inner.pop("$defs", None)
    out = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    if inner_defs:
        out["$defs"] = inner_defs
    return out


def _bounded(schema: dict[str, Any], depth: int, budget: int) -> dict[str, Any]:
    """`limit_depth` at the deepest level ≤ `depth` whose result stays within `budget` schema nodes
    (at least one level). Wide APIs (Stripe objects with ~100 expandable properties) get fewer levels."""
    first = limit_depth(schema, 1, max_nodes=budget)  # None when over the budget
    if first is None:
        return limit_depth(schema, 1)
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


def operation_response(doc: SpecDocument, converter: SchemaConverter, op: Operation, *,
                       copy: bool = True) -> tuple[Any, bool]:
    """(canonical schema of the success response the build uses, or None for an empty body; whether
    that response declares a `Link` header). Raises `DiagnosticError` for a schema it cannot convert.
    ``copy=False``: the schema is read-only, sharing the converter's memo (a reader that looks at many
    operations then holds each distinct schema once, not one copy per operation)."""
    schema, _, _, link = success_response(Ctx(doc, None, converter.sink, "", converter), op,  # type: ignore[arg-type]
                                          copy=copy)
    return schema, link
