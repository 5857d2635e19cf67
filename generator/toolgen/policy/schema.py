"""Kernel `policy_schema`: the JSON Schema (draft 2020-12) of ``policy.json``, from the reader's own
member lists and value sets.

Input: nothing. Output: `policy_schema()`, the schema committed as ``docs/policy.schema.json``
(`python -m toolgen.policy.schema` prints it; a test compares the two). Every object's
``properties`` and ``required`` are its members in `toolgen.policy.members.MEMBERS` (the very lists
`toolgen.policy.format.from_json` requires and refuses others by), with ``additionalProperties:
false``; every closed string is an ``enum`` of the `toolgen.policy.format` Literal it is read as,
and every bound the reader checks is a ``minimum``. A member without a schema here, or a schema of
a member the reader does not know, fails `policy_schema` (`KeyError`/`ValueError`), so the two
cannot drift apart.

What the schema cannot say and the reader checks besides: a composite row has ``operation: null``
and a ``composite`` plan (every other row the reverse); only record rows have a ``record`` object;
a step's ``needs`` name earlier steps; tool names and step ids are unique; a mapping value is a
reference or a literal. A file the schema accepts may still be refused by the reader, never the
other way round.
"""

from __future__ import annotations

import json
from typing import Any, get_args

from ..results import Redirect, ResponseBody, Shape
from .format import (
    FORMAT_VERSION,
    Approval,
    ArgLocation,
    AuthLocation,
    BodyEncoding,
    CompositePattern,
    Effect,
    IdempotencyIn,
    Loading,
    Mode,
    NullMeans,
    PaginationStyle,
    PerCallerVia,
    RecordArguments,
    SchemaMode,
    ServiceSecretUse,
    ToolsetOrigin,
)
from .limits import MAX_CONDITION_CHARS, LimitKind, LimitPer
from .members import (
    MAX_ATTEMPTS,
    MAX_BACKOFF_MS,
    MAX_DEADLINE_MS,
    MAX_LIMIT,
    MAX_LIMIT_WINDOW_S,
    MAX_PAGE_SIZE,
    MAX_PREVIEW_TTL_S,
    MAX_TIMEOUT_MS,
    MEMBERS,
)

__all__ = ["SCHEMA_ID", "policy_schema", "schema_text"]

#: the ``$id`` of the schema
SCHEMA_ID = f"https://toolgen.invalid/policy.schema.v{FORMAT_VERSION}.json"

JSON = Any

_STR: JSON = {"type": "string"}
_OPT_STR: JSON = {"type": ["string", "null"]}
_BOOL: JSON = {"type": "boolean"}
_INT: JSON = {"type": "integer"}
_OPT_INT: JSON = {"type": ["integer", "null"]}
_STRS: JSON = {"type": "array", "items": _STR}
_ANY: JSON = {}
_OBJ: JSON = {"type": "object"}


def _enum(kind: Any) -> JSON:
    return {"enum": list(get_args(kind))}


def _ref(kind: str, nullable: bool = False) -> JSON:
    ref = {"$ref": f"#/$defs/{kind}"}
    return {"anyOf": [ref, {"type": "null"}]} if nullable else ref


def _at_least(minimum: int, nullable: bool = False) -> JSON:
    return {"type": ["integer", "null"] if nullable else "integer", "minimum": minimum}


def _between(minimum: int, maximum: int, nullable: bool = False) -> JSON:
    return {**_at_least(minimum, nullable), "maximum": maximum}


def _array(kind: str) -> JSON:
    return {"type": "array", "items": _ref(kind)}


_MAPPING: JSON = {"anyOf": [_ref("input_ref"), _ref("step_ref"), _ref("literal")]}
_MAPPINGS: JSON = {"type": "object", "additionalProperties": _MAPPING}

#: the schema of each member of each object kind (keys: `MEMBERS`' kinds and names)
_MEMBER_SCHEMAS: dict[str, dict[str, JSON]] = {
    "table": {
        "format": {"const": FORMAT_VERSION},
        "api": _STR,
        "title": _STR,
        "version": _STR,
        "base_url": _STR,
        "spec": _STR,
        "tools": _array("row"),
        "toolsets": _array("toolset"),
    },
    "row": {
        "tool": _STR,
        "mode": _enum(Mode),
        "effect": _enum(Effect),
        "intent": _STR,
        "pair": _OPT_STR,
        "operation": _ref("operation", nullable=True),
        "permission": _STRS,
        "approval": _enum(Approval),
        "approval_when": {"type": ["string", "null"], "minLength": 1, "maxLength": MAX_CONDITION_CHARS},
        "limits": _array("limit"),
        "idempotency": _ref("idempotency", nullable=True),
        "retry": _ref("retry"),
        "timeout_ms": _between(1, MAX_TIMEOUT_MS),
        "pagination": _ref("pagination", nullable=True),
        "output": _ref("output"),
        "auth": _array("auth"),
        "request": _ref("request"),
        "success_status": {"type": "array", "items": _INT},
        "dialect_rewrites": {
            "type": "object",
            "additionalProperties": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["kind"],
                    "properties": {"kind": {"type": "string", "minLength": 1}},
                },
            },
        },
        "record": _ref("record", nullable=True),
        "narrowed": _array("narrowed"),
        "toolset": _OPT_STR,
        "loading": _enum(Loading),
        "keywords": _STRS,
        "examples": _STRS,
        "not_for": _OPT_STR,
        "composite": _ref("composite", nullable=True),
    },
    "operation": {"id": _STR, "method": _STR, "path": _STR},
    "idempotency": {"arg": _STR, "in": _enum(IdempotencyIn), "name": _OPT_STR, "honoured_by_api": _BOOL},
    "retry": {
        "max_attempts": _between(1, MAX_ATTEMPTS),
        "backoff_ms": _between(0, MAX_BACKOFF_MS),
        "deadline_ms": _between(1, MAX_DEADLINE_MS),
        "on": {"type": "array", "items": {"type": "string", "pattern": "^(timeout|[0-9]{3})$"}},
    },
    "pagination": {
        "style": _enum(PaginationStyle),
        "cursor_arg": _STR,
        "page_size_arg": _STR,
        "items": _STR,
        "cursor_param": _OPT_STR,
        "limit_param": _OPT_STR,
        "next_field": _OPT_STR,
        "has_more_field": _OPT_STR,
        "cursor_from_item": _OPT_STR,
        "default_page_size": _between(1, MAX_PAGE_SIZE),
        "max_page_size": _between(1, MAX_PAGE_SIZE),
        "min_page_size": _between(1, MAX_PAGE_SIZE),
        "first_position": _OPT_INT,
        "first_required": _BOOL,
    },
    "output": {
        "fields": _STRS,
        "max_bytes": _at_least(1),
        "redact": _STRS,
        "schema_mode": _enum(SchemaMode),
        "shape": _enum(Shape),
        "body": _enum(ResponseBody),
        "accept": _OPT_STR,
        "redirect": {"enum": [*get_args(Redirect), None]},
    },
    "auth": {
        "scheme": _STR,
        "kind": _STR,
        "in": _enum(AuthLocation),
        "name": _STR,
        "secret": _STR,
        "scopes": _STRS,
        "per_caller": _ref("per_caller", nullable=True),
    },
    "per_caller": {
        "via": _enum(PerCallerVia),
        "audience": _OPT_STR,
        "resource": _OPT_STR,
        "scope": _OPT_STR,
        "service_secret": _enum(ServiceSecretUse),
    },
    "request": {
        "encoding": _enum(BodyEncoding),
        "content_type": _OPT_STR,
        "bindings": _array("binding"),
        "fixed": _array("fixed"),
        "max_body_bytes": _at_least(1, nullable=True),
    },
    "binding": {
        "arg": _STR,
        "in": _enum(ArgLocation),
        "name": _STR,
        "required": _BOOL,
        "null": _enum(NullMeans),
        "style": _OPT_STR,
        "explode": {"type": ["boolean", "null"]},
        "content_type": _OPT_STR,
        "reserved": _STRS,
    },
    "fixed": {"in": _enum(ArgLocation), "name": _STR, "value": _ANY, "source": _STR},
    "record": {
        "arguments": _enum(RecordArguments),
        "preview_ttl_s": _between(1, MAX_PREVIEW_TTL_S, nullable=True),
    },
    "narrowed": {
        "arg": _STR,
        "schema": {"type": ["object", "null"]},
        "description": _OPT_STR,
        "hidden": _BOOL,
    },
    "composite": {
        "pattern": _enum(CompositePattern),
        "switch": _ref("input_ref", nullable=True),
        "steps": _array("step"),
        "output": _MAPPINGS,
    },
    "step": {
        "id": _STR,
        "when": _OPT_STR,
        "needs": _STRS,
        "args": _MAPPINGS,
        "row": _ref("row"),
        "input_schema": _OBJ,
        "output_schema": {"type": ["object", "null"]},
    },
    "input_ref": {"$ref": {"const": "input"}, "pointer": {"type": "string", "pattern": "^(/.*)?$"}},
    "step_ref": {
        "$ref": {"const": "step"},
        "step": _STR,
        "pointer": {"type": "string", "pattern": "^(/.*)?$"},
    },
    "literal": {"$literal": _ANY},
    "toolset": {
        "name": _STR,
        "description": _STR,
        "loading": _enum(Loading),
        "origin": _enum(ToolsetOrigin),
        "examples": _STRS,
    },
    "limit": {
        "per": _enum(LimitPer),
        "kind": _enum(LimitKind),
        "max": _between(1, MAX_LIMIT),
        "sum": _OPT_STR,
        "window_s": _between(1, MAX_LIMIT_WINDOW_S, nullable=True),
    },
}


def _object(kind: str) -> JSON:
    names = MEMBERS[kind]
    schemas = _MEMBER_SCHEMAS[kind]
    if set(schemas) != set(names):
        raise ValueError(
            f"policy_schema: the members of {kind} differ from the reader's: "
            f"{sorted(set(schemas) ^ set(names))}"
        )
    return {
        "type": "object",
        "additionalProperties": False,
        "required": list(names),
        "properties": {name: schemas[name] for name in names},
    }


def policy_schema() -> dict[str, JSON]:
    """The JSON Schema of ``policy.json`` (format `FORMAT_VERSION`): the ``table`` object at the root
    and every other object kind under ``$defs`` (module docstring). Raises `ValueError` when a kind's
    member schemas and the reader's members differ."""
    if set(_MEMBER_SCHEMAS) != set(MEMBERS):
        raise ValueError(
            f"policy_schema: object kinds differ from the reader's: "
            f"{sorted(set(_MEMBER_SCHEMAS) ^ set(MEMBERS))}"
        )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"toolgen policy.json, format {FORMAT_VERSION}",
        "description": "The runtime policy table toolgen writes per API (docs/generated-format.md). Every "
        "member of every object is required and no other is allowed: the runtime refuses "
        "such a file at load, naming the member's JSON pointer.",
        **_object("table"),
        "$defs": {kind: _object(kind) for kind in MEMBERS if kind != "table"},
    }


def schema_text() -> str:
    """The schema as the committed file holds it: JSON, two-space indent, a final newline."""
    return json.dumps(policy_schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # pragma: no cover - `python -m toolgen.policy.schema > docs/policy.schema.json`
    print(schema_text(), end="")
