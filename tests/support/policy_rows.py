"""Policy rows written by hand for unit tests, completed to the format the runtime reads.

The runtime refuses a ``policy.json`` row that lacks a member (`toolgen.policy.format.from_json`).
A unit test states only the members it is about; `complete_row` fills every other member with the
value a generated row of a plain read holds (no idempotency, no pagination, no fixed values, no
redaction, 5 s timeout, one attempt), `complete_policy` does so for a whole table, and `typed_row`
reads the completed row with the runtime's own reader; `record_row` is a typed record row to compare
against, for the tests of `toolgen diff`. Nothing here relaxes the reader: a member a
test sets to a bad value is still refused.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from toolgen.policy.format import FORMAT_VERSION, OutputPolicy, PolicyRow, Retry, from_json

_ROW: dict[str, Any] = {
    "tool": "t",
    "mode": "read",
    "effect": "read",
    "intent": "",
    "pair": None,
    "permission": [],
    "approval": "never",
    "approval_when": None,
    "idempotency": None,
    "limits": [],
    "retry": {"max_attempts": 1, "backoff_ms": 200, "deadline_ms": 15000, "on": []},
    "timeout_ms": 5000,
    "pagination": None,
    "auth": [],
    "success_status": [],
    "dialect_rewrites": {},
    "record": None,
    "narrowed": [],
    "toolset": None,
    "loading": "eager",
    "keywords": [],
    "examples": [],
    "not_for": None,
    "composite": None,
}
_OUTPUT: dict[str, Any] = {
    "fields": [],
    "max_bytes": 16000,
    "redact": [],
    "schema_mode": "warn",
    "shape": "object",
    "body": "json",
    "accept": None,
    "redirect": None,
}
_REQUEST: dict[str, Any] = {
    "encoding": "none",
    "content_type": None,
    "bindings": [],
    "fixed": [],
    "max_body_bytes": None,
}
_BINDING: dict[str, Any] = {
    "required": False,
    "null": "omit",
    "style": None,
    "explode": None,
    "content_type": None,
    "reserved": [],
}
_PAGINATION: dict[str, Any] = {
    "cursor_arg": "cursor",
    "page_size_arg": "page_size",
    "cursor_param": None,
    "limit_param": None,
    "next_field": None,
    "has_more_field": None,
    "cursor_from_item": None,
    "default_page_size": 20,
    "max_page_size": 100,
    "min_page_size": 1,
    "first_position": None,
    "first_required": False,
}
_AUTH: dict[str, Any] = {"scopes": [], "per_caller": None}
_IDEMPOTENCY: dict[str, Any] = {"name": None, "honoured_by_api": False}


def _filled(value: Mapping[str, Any] | None, defaults: Mapping[str, Any]) -> dict[str, Any]:
    return {**copy.deepcopy(dict(defaults)), **dict(value or {})}


def complete_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """`row` with every member it lacks filled in (module docstring); a record row without
    ``record`` takes ``{"arguments": "full", "preview_ttl_s": None}``."""
    out = _filled(row, _ROW)
    if row.get("operation", {}) is not None:  # a composite's row has none
        out["operation"] = _filled(row.get("operation"), {"id": "", "method": "GET", "path": "/"})
    out["output"] = _filled(row.get("output"), _OUTPUT)
    out["retry"] = _filled(row.get("retry"), _ROW["retry"])
    request = _filled(row.get("request"), _REQUEST)
    request["bindings"] = [_filled(b, _BINDING) for b in request["bindings"]]
    request["fixed"] = [_filled(f, {"source": ""}) for f in request["fixed"]]
    out["request"] = request
    out["auth"] = [_filled(a, _AUTH) for a in out["auth"]]
    if out["idempotency"] is not None:
        out["idempotency"] = _filled(out["idempotency"], _IDEMPOTENCY)
    if out["pagination"] is not None:
        out["pagination"] = _filled(out["pagination"], _PAGINATION)
    if out["mode"] == "record" and out["record"] is None:
        out["record"] = {"arguments": "full", "preview_ttl_s": None}
    return out


def complete_policy(policy: Mapping[str, Any]) -> dict[str, Any]:
    """A whole ``policy.json`` value from `policy` (``api``, ``base_url``, ``tools``...): the table's
    members it lacks filled in, each row completed (`complete_row`)."""
    out = _filled(
        policy,
        {
            "format": FORMAT_VERSION,
            "api": "units",
            "title": "",
            "version": "",
            "base_url": "",
            "spec": "",
            "tools": [],
            "toolsets": [],
        },
    )
    out["tools"] = [complete_row(r) for r in out["tools"]]
    return out


def typed_row(row: Mapping[str, Any]) -> PolicyRow:
    """`complete_row(row)` read with the runtime's reader (raises `PolicyFormatError` for a bad member)."""
    return from_json(complete_policy({"tools": [row]})).tools[0]


def record_row(**changes: Any) -> PolicyRow:
    """A record row of ``POST /x`` behind an approval; `changes` replace its fields."""
    row = PolicyRow(
        tool="record_x",
        mode="record",
        effect="write",
        operation_id="x",
        method="POST",
        path="/x",
        permission=(),
        approval="required",
        idempotency=None,
        retry=Retry(1, 200, 5000, ()),
        timeout_ms=5000,
        pagination=None,
        output=OutputPolicy(),
        auth=(),
        body_encoding="json",
        body_content_type="application/json",
        bindings=(),
        record_arguments="full",
    )
    return replace(row, **changes)
