"""Canonical tool schemas for the tests of the dialect transforms (`toolgen.dialects`), and the checks
they make. The inputs mirror the fault cases in the shared cases folder (05, 08, 13, 14, 15, 21, 24)
plus a free-form object and a constrained one (`ALL_INPUTS`, by name); `valid` is a JSON Schema
2020-12 check, `with_nulls` the OpenAI-strict form of a canonical instance, `all_catalogs_conform`
runs each provider's conformance checker over the tools built from some canonical schemas.
"""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

from toolgen.dialects import iter_schemas, resolve_local_ref
from toolgen.dialects.anthropic import anthropic_tool, check_anthropic_catalog
from toolgen.dialects.mcp import check_mcp_catalog, mcp_tool
from toolgen.dialects.openai import check_openai_catalog, openai_tool

# --- canonical inputs ------------------------------------------------------------------------------

CASE15: dict[
    str, Any
] = {  # optional fields under strict mode (query `depth` flattened next to the body members)
    "type": "object",
    "properties": {
        "depth": {"type": "string", "enum": ["basic", "advanced"], "description": "Query: extraction depth"},
        "urls": {
            "description": "One URL or a list of URLs",
            "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
        },
        "includeImages": {"type": "boolean"},
        "options": {
            "type": "object",
            "properties": {"timeoutMs": {"type": "integer"}, "userAgent": {"type": "string"}},
        },
    },
    "required": ["urls"],
    "additionalProperties": False,
}

CASE13 = {  # $ref with sibling keywords (non-recursive targets)
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/Address", "description": "Postal address used for invoices"},
        "role": {"$ref": "#/$defs/Role", "description": "Role granted on creation", "default": "viewer"},
    },
    "required": ["name", "address", "role"],
    "additionalProperties": False,
    "$defs": {
        "Address": {
            "type": "object",
            "required": ["street", "city"],
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        },
        "Role": {"type": "string", "enum": ["viewer", "editor", "admin"]},
    },
}

CASE13_RECURSIVE = {  # a recursive $ref with siblings must keep its description too
    "type": "object",
    "properties": {"node": {"$ref": "#/$defs/Node", "description": "Parent node", "default": None}},
    "required": ["node"],
    "$defs": {
        "Node": {
            "type": "object",
            "required": ["id"],
            "properties": {"id": {"type": "string"}, "parent": {"$ref": "#/$defs/Node"}},
        }
    },
}

CASE14: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "format": "uri"},
        "callback": {"type": "string", "format": "uri-reference"},
        "startedAt": {"type": "string", "format": "date-time"},
        "contact": {"type": "string", "format": "email"},
        "retries": {"type": "integer", "format": "int32"},
        "ratio": {"type": "number", "format": "double"},
        "pageId": {"type": "string", "format": "uuid"},
        "token": {"type": "string", "format": "password"},
        "host": {"type": "string", "format": "hostname"},
    },
    "required": ["url", "callback", "startedAt", "contact", "retries", "ratio", "pageId", "token"],
    "additionalProperties": False,
}

CASE05_FOLDER = {
    "type": "object",
    "properties": {"body": {"$ref": "#/$defs/Folder", "description": "The folder tree to create"}},
    "required": ["body"],
    "additionalProperties": False,
    "$defs": {
        "Folder": {
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Folder"}},
            },
        }
    },
}

CASE05_SEARCH = {
    "type": "object",
    "properties": {"filter": {"$ref": "#/$defs/Filter"}},
    "required": ["filter"],
    "additionalProperties": False,
    "$defs": {
        "Filter": {"oneOf": [{"$ref": "#/$defs/Comparison"}, {"$ref": "#/$defs/Compound"}]},
        "Comparison": {
            "type": "object",
            "required": ["field", "op", "value"],
            "properties": {
                "field": {"type": "string"},
                "op": {"type": "string", "enum": ["eq", "ne", "lt", "gt"]},
                "value": {"type": "string"},
            },
        },
        "Compound": {
            "type": "object",
            "required": ["mode", "filters"],
            "properties": {
                "mode": {"type": "string", "enum": ["and", "or"]},
                "filters": {"type": "array", "items": {"$ref": "#/$defs/Filter"}},
            },
        },
    },
}

CASE24_BARE = {"type": "object"}
CASE24_CLOSED = {"type": "object", "properties": {}, "additionalProperties": False}

CASE21_OUTPUT = {
    "type": "object",
    "required": ["results"],
    "properties": {
        "results": {"type": "array", "items": {"$ref": "#/$defs/ResultItem"}},
        "otherData": {},
    },
    "$defs": {
        "ResultItem": {
            "type": "object",
            "required": ["metric"],
            "properties": {
                "metric": {"oneOf": [{"$ref": "#/$defs/NumericMetric"}, {"$ref": "#/$defs/StringMetric"}]}
            },
        },
        "NumericMetric": {
            "type": "object",
            "required": ["type", "minVal", "maxVal"],
            "properties": {
                "type": {"const": "numeric"},
                "minVal": {"type": "number"},
                "maxVal": {"type": "number"},
            },
        },
        "StringMetric": {
            "type": "object",
            "required": ["type", "minLength", "maxLength"],
            "properties": {
                "type": {"const": "string"},
                "minLength": {"type": "integer"},
                "maxLength": {"type": "integer"},
            },
        },
    },
}
CASE21_SAMPLE = {
    "results": [
        {"metric": {"type": "numeric", "minVal": 2, "maxVal": 555}},
        {"metric": {"type": "string", "minLength": 2, "maxLength": 5}},
    ],
    "otherData": "x",
}

CASE08 = {  # nullable already expressed as type arrays, plus one stray OpenAPI `nullable` to convert
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "note": {"type": ["string", "null"]},
        "price": {"type": ["number", "null"], "minimum": 0},
        "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        "region": {"type": "string", "enum": ["eu", "us"], "nullable": True},
    },
    "required": ["title", "note"],
    "additionalProperties": False,
}

FREE_FORM = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "meta": {"type": "object", "description": "Arbitrary metadata"},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 10}},
        "anything": {},
    },
    "required": ["name"],
    "additionalProperties": False,
}

CONSTRAINTS = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "Subject line.", "maxLength": 200, "pattern": r"^T-\d+$"},
        "count": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20, "format": "int32"},
        "tags": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "maxItems": 5,
            "uniqueItems": True,
            "examples": [["a"]],
        },
        "role": {"type": "string", "enum": ["viewer", "admin"], "default": "viewer", "deprecated": True},
        "id": {"type": "string", "readOnly": True, "x-internal": "yes", "$comment": "ignored"},
    },
    "required": ["title"],
    "additionalProperties": False,
}

ALL_INPUTS: dict[str, dict[str, Any]] = {
    "case15": CASE15,
    "case13": CASE13,
    "case13_recursive": CASE13_RECURSIVE,
    "case14": CASE14,
    "case05_folder": CASE05_FOLDER,
    "case05_search": CASE05_SEARCH,
    "case24_bare": CASE24_BARE,
    "case24_closed": CASE24_CLOSED,
    "case08": CASE08,
    "free_form": FREE_FORM,
    "constraints": CONSTRAINTS,
}


# --- helpers ---------------------------------------------------------------------------------------


def nodes(schema: Any) -> list[dict[str, Any]]:
    return [n for _, n in iter_schemas(schema) if isinstance(n, dict)]


def object_nodes(schema: Any) -> list[dict[str, Any]]:
    out = []
    for n in nodes(schema):
        t = n.get("type")
        if t == "object" or (isinstance(t, list) and "object" in t):
            out.append(n)
    return out


def valid(schema: dict[str, Any], instance: Any) -> bool:
    return bool(Draft202012Validator(schema).is_valid(instance))


def with_nulls(canonical: dict[str, Any], instance: Any, root: dict[str, Any] | None = None) -> Any:
    """The OpenAI-strict form of a canonical instance: absent optional members become null."""
    root = root if root is not None else canonical
    schema = canonical
    while isinstance(schema, dict) and "$ref" in schema:
        schema = resolve_local_ref(root, schema["$ref"])
    if isinstance(instance, dict) and isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        out = {}
        for name, sub in schema["properties"].items():
            out[name] = with_nulls(sub, instance[name], root) if name in instance else None
        return out
    if isinstance(instance, list) and isinstance(schema, dict) and isinstance(schema.get("items"), dict):
        return [with_nulls(schema["items"], x, root) for x in instance]
    if isinstance(schema, dict):
        for key in ("anyOf", "oneOf"):
            for branch in schema.get(key, []):
                if Draft202012Validator({**root, **branch} if "$ref" in branch else branch).is_valid(
                    instance
                ):
                    return with_nulls(branch, instance, root)
    return instance


def all_catalogs_conform(canonicals: dict[str, dict[str, Any]]) -> None:
    openai = [openai_tool(n, "d", c) for n, c in canonicals.items()]
    anthropic = [anthropic_tool(n, "d", c) for n, c in canonicals.items()]
    mcp = [
        mcp_tool(n, "d", c, None, title=None, read_only=False, destructive=False, idempotent=False)
        for n, c in canonicals.items()
    ]
    assert check_openai_catalog(openai) == []
    assert check_anthropic_catalog(anthropic) == []
    assert check_mcp_catalog(mcp) == []
