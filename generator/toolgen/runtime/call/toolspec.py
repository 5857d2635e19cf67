"""Loading a tool: a policy row and its MCP catalog entry become a `ToolSpec` with compiled validators.

Input: one typed row of the policy table (`toolgen.policy.format.PolicyRow`, read by
`toolgen.policy.format.from_json`, which refuses a malformed table) and the ``mcp.json`` entry of the
same name (docs/generated-format.md). Output: `ToolSpec` (`load_spec`; a composite tool's steps are
loaded with it, `ToolSpec.steps`), with the facts the call path reads derived once (whether the tool
writes, where its idempotency key goes); `read_tools_for` then names, for a write, the read tools
that show the state it changes (the next step of a ``result_unknown``).
Also the reading of a row the call path and the issued approvals share: how a preview shows a request
(`display`, with the place of the record's idempotency key, `key_place_shown`); whether a record row
executes a stored preview is the row's own `PolicyRow.executes_preview`.
Raises nothing on a well-formed package; jsonschema_rs raises `ValueError` for a schema it cannot
compile, and `SchemaRefError` (a `ValueError`) refuses a schema whose local ``$ref`` is not an RFC 6901
JSON pointer or names nothing: the runtime never resolves a malformed pointer leniently.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import jsonschema_rs

from ...pointer import PointerError, join_pointer, ref_to_pointer, resolve_pointer
from ...policy.format import PolicyRow
from .dialect_args import Rewrites, compile_rewrites
from .request import BuiltRequest
from .shaping import field_tree

__all__ = ["SchemaRefError", "ToolSpec", "display", "key_place_shown", "load_spec", "read_tools_for"]

#: members whose values are data, not schemas: a ``$ref`` inside them is not a reference
_DATA_MEMBERS = frozenset({"const", "enum", "default", "examples", "example"})
#: members whose values map names (any name, ``default`` included) to schemas
_NAME_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})


class SchemaRefError(ValueError):
    """A catalog schema's local ``$ref`` is not a JSON pointer (RFC 6901 sections 3-4: a ``~`` that is
    not ``~0``/``~1``) or names nothing in the schema. The message names ``mcp.json``, the tool, the
    schema and the ``$ref``'s JSON pointer inside it, and says to rebuild."""


@dataclass
class ToolSpec:
    """A loaded tool: its typed policy row, its MCP catalog entry and compiled validators.

    `key_arg`: the argument holding a record row's idempotency key (policy ``idempotency.arg``;
    None: no key, or not a record row). `key_forwarded`: the key goes to the API (``idempotency.in``
    ``header``, ``query`` or ``body``); `key_honoured`: forwarded and declared deduplicated by the
    API (``honoured_by_api``)."""

    name: str
    row: PolicyRow
    catalog: dict[str, Any]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    input_validator: Any
    output_validator: Any | None
    send_null: frozenset[str]
    intent: str
    mutating: bool
    field_tree: dict[str, Any]
    redact_tree: dict[str, Any]
    check_tools: tuple[str, ...] = ()
    rewrites: dict[str, Rewrites] = field(default_factory=dict)
    #: the members the output schema's root requires: the output budget drops them last
    required_members: frozenset[str] = frozenset()
    #: a composite tool's steps (policy ``composite.steps``), each loaded from its ``row`` and its
    #: ``input_schema``/``output_schema`` under the name ``<tool>.<step id>``, in plan order; never
    #: in the registry's tools, so no caller can find or call one by name
    steps: tuple[ToolSpec, ...] = ()
    key_arg: str | None = None
    key_forwarded: bool = False
    key_honoured: bool = False
    #: the compiled ``approval_when`` (`toolgen.policy.conditions.Condition`), by its text, once the approval
    #: step first needs it (None: it does not compile, and the approval is asked always)
    conditions: dict[str, Any] = field(default_factory=dict)


def load_spec(row: PolicyRow, entry: dict[str, Any]) -> ToolSpec:
    """The `ToolSpec` of policy `row` and its MCP catalog `entry` (``check_tools`` empty: see
    `read_tools_for`). Raises `SchemaRefError` for a local ``$ref`` that is not a JSON pointer or names
    nothing, `ValueError` (jsonschema_rs) for a schema it cannot compile."""
    input_schema = entry.get("inputSchema") or {"type": "object"}
    output_schema = entry.get("outputSchema")
    check_schema_refs(input_schema, f"tool {row.tool!r}, inputSchema")
    check_schema_refs(output_schema, f"tool {row.tool!r}, outputSchema")
    out_policy = row.output
    send_null = frozenset(b.arg for b in row.bindings if b.null_means == "send")
    intent = row.intent or row.tool.removeprefix("preview_").removeprefix("record_")
    mutating = row.mode == "record" or (row.mode != "preview" and row.effect != "read")
    idem = row.idempotency if row.mode == "record" else None
    forwarded = idem is not None and idem.forwarded
    return ToolSpec(
        name=row.tool,
        row=row,
        catalog=entry,
        input_schema=input_schema,
        output_schema=output_schema,
        input_validator=jsonschema_rs.Draft202012Validator(input_schema, validate_formats=True),
        output_validator=(
            jsonschema_rs.Draft202012Validator(output_schema, validate_formats=True)
            if output_schema and out_policy.schema_mode != "off"
            else None
        ),
        send_null=send_null,
        intent=intent,
        mutating=mutating,
        field_tree=field_tree(list(out_policy.fields) or _declared_fields(row, output_schema)),
        redact_tree=field_tree(list(out_policy.redact)),
        rewrites={
            d: compile_rewrites([dict(r) for r in records]) for d, records in row.dialect_rewrites.items()
        },
        required_members=frozenset(
            r for r in (output_schema or {}).get("required") or [] if isinstance(r, str)
        ),
        steps=tuple(
            load_spec(
                step.row,
                {"name": step.row.tool, "inputSchema": step.input_schema, "outputSchema": step.output_schema},
            )
            for step in (row.composite.steps if row.composite is not None else ())
        ),
        key_arg=None if idem is None else idem.arg,
        key_forwarded=forwarded,
        key_honoured=forwarded and idem is not None and bool(idem.honoured_by_api),
    )


def check_schema_refs(schema: Any, where: str) -> None:
    """Refuse (`SchemaRefError`) a local ``$ref`` in `schema` whose fragment is a JSON pointer (empty
    or starting with ``/``) that RFC 6901 refuses or that names nothing in `schema`; a plain-name
    fragment (``#anchor``, JSON Schema 2020-12 section 8.2.2) is left to the validator. `where` names
    the schema in the message (``tool 'x', inputSchema``)."""
    stack: list[tuple[Any, str, bool]] = [(schema, "", False)]  # (node, its pointer, a name map)
    while stack:
        node, at, names = stack.pop()
        if isinstance(node, list):
            stack.extend((v, join_pointer(at, i), False) for i, v in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        if names:
            stack.extend((v, join_pointer(at, k), False) for k, v in node.items())
            continue
        ref = node.get("$ref")
        pointer = ref_to_pointer(ref) if isinstance(ref, str) else None
        if pointer is not None and (pointer == "" or pointer.startswith("/")):
            try:
                resolve_pointer(schema, pointer)
            except PointerError as exc:
                raise SchemaRefError(
                    f"mcp.json, {where}#{join_pointer(at, '$ref')}: $ref {ref!r} is refused: {exc} "
                    "(hint: rebuild the API with `toolgen build`; mcp.json is generated, do not edit it)"
                ) from None
        stack.extend(
            (v, join_pointer(at, k), k in _NAME_MAPS) for k, v in node.items() if k not in _DATA_MEMBERS
        )


def read_tools_for(row: PolicyRow, specs: Mapping[str, ToolSpec]) -> tuple[str, ...]:
    """The read tools that show the state a write changes: those whose path shares the most
    leading segments with the write's path (``POST /v1/customers/{customer}`` →
    ``get_customer``, ``list_customers``), at most three, by name."""
    target = [p for p in row.path.split("/") if p]
    scored: list[tuple[int, str]] = []
    for name, spec in specs.items():
        if spec.mutating or spec.row.mode == "preview" or spec.row.composite is not None:
            continue  # a composite (no operation of its own) shows no one path's state
        path = [p for p in spec.row.path.split("/") if p]
        common = 0
        for a, b in zip(target, path, strict=False):  # the shared leading segments
            if a != b:
                break
            common += 1
        literal = [p for p in path[:common] if not p.startswith("{")]
        if literal and len(path) <= len(target) + 1:
            scored.append((common, name))
    if not scored:
        return ()
    best = max(score for score, _ in scored)
    return tuple(sorted(name for score, name in scored if score == best)[:3])


def display(row: PolicyRow, built: BuiltRequest) -> dict[str, Any]:
    """The request as a preview shows it: `BuiltRequest.display` with every credential header the
    row declares redacted."""
    view = built.display()
    for entry in row.auth:
        if entry.location == "header":
            view["headers"][entry.wire_name or "Authorization"] = "[redacted]"
    return view


def key_place_shown(view: dict[str, Any], record_row: PolicyRow, record_tool: str) -> dict[str, Any]:
    """`view` (a `display` of a request built without the idempotency key: a preview's, an
    approver's) with the key in the place the record sends it (policy ``idempotency.in`` header,
    query or body, ``name``), its value ``"<ARG of RECORD_TOOL>"``: the record fills it from its key
    argument ARG, so the request shown is the one it sends, member for member. A JSON or form body
    gets the member (a body of the key alone, where the preview sends none); a multipart body and
    a row that does not forward its key are shown as they are."""
    idem = record_row.idempotency if record_row.mode == "record" else None
    if idem is None or idem.send_in not in ("header", "query", "body") or not idem.wire_name:
        return view
    name, shown = idem.wire_name, f"<{idem.arg} of {record_tool}>"
    out = dict(view)
    if idem.send_in == "header":
        out["headers"] = {**(view.get("headers") or {}), name: shown}
    elif idem.send_in == "query":
        url = str(view.get("url", ""))
        out["url"] = url + ("&" if "?" in url else "?") + urlencode([(name, shown)], quote_via=quote)
    elif record_row.body_encoding in ("json", "form") and isinstance(view.get("body"), (dict, type(None))):
        out["body"] = {**(view.get("body") or {}), name: shown}
    return out


def _declared_fields(row: PolicyRow, output_schema: Any) -> list[str]:
    """Without `output.fields`, the result keeps the top-level members its output schema declares
    (its ``properties`` and the names it ``required``s) of the object, or of each item: of a page
    (a paginated tool) and of an array result alike, so that a tool keeps or drops a member the
    same way whether it pages or not. A field the API adds that the spec does not declare never
    reaches the model. Schemas that allow other properties, or declare none, keep everything."""
    if row.mode == "preview" or not isinstance(output_schema, dict):
        return []
    node: Any = output_schema
    root = node.get("properties") if isinstance(node.get("properties"), dict) else {}
    if row.pagination is not None:
        node = ((node.get("properties") or {}).get("items") or {}).get("items") or {}
    elif set(root) == {"result"}:  # a wrapped body: an array's items are projected like a page's
        wrapped = root["result"]
        types = wrapped.get("type") if isinstance(wrapped, dict) else None
        if not (types == "array" or (isinstance(types, list) and "array" in types)):
            return []
        node = wrapped.get("items") or {}
    elif set(root) == {"status"}:
        return []
    if not isinstance(node, dict) or "anyOf" in node or "oneOf" in node or "$ref" in node:
        return []
    props = node.get("properties")
    extra = node.get("additionalProperties")
    if not isinstance(props, dict) or not props or (extra is not None and extra is not False):
        return []
    required = node.get("required")
    named = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    return sorted(set(props) | named)
