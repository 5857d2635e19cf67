"""Step 3a, validate the arguments: plain JSON, canonical, valid against the tool's input schema.

Input: `Call`, `ToolSpec`, the caller's raw arguments and the `dialect` whose catalog the caller's
model saw (None: canonical, MCP). Output: the canonical arguments (a dict): plain JSON
(`toolgen.runtime.call.arguments.plain_arguments`), a dialect's rewrites undone
(`toolgen.runtime.call.dialect_args`), nulls on optional properties dropped (`nulls.normalise_nulls`),
valid against ``inputSchema`` (JSON Schema 2020-12 with formats, jsonschema_rs) and without a
member a closed nested object does not declare. Errors (`Halt` at step ``validate``):
``invalid_arguments`` with ``details.pointer`` (and ``keyword``, up to five ``errors``, for a
schema violation), before anything is stored or sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...pointer import join_pointer
from ..call.arguments import invalid_argument, plain_arguments
from ..call.dialect_args import decode_arguments
from ..call.nulls import normalise_nulls, undeclared_member
from ..call.toolspec import ToolSpec
from ..calls import KNOWN_DIALECTS
from ..errors import ToolError, make_error
from .state import Call, Halt

__all__ = ["describe_error", "pointer", "validate_arguments"]


def pointer(path: Iterable[str | int]) -> str:
    """The JSON pointer of a path of keys and indexes."""
    return join_pointer("", *path)


def describe_error(error: Any) -> dict[str, str]:
    """A jsonschema_rs validation error as ``{"pointer", "keyword", "message"}``. For ``required``
    the pointer names the missing property; for ``additionalProperties`` the first unexpected one."""
    path = list(error.instance_path)
    keyword = str(error.schema_path[-1]) if error.schema_path else ""
    try:
        info = error.kind.as_dict()
    except (AttributeError, TypeError):  # pragma: no cover - defensive: older jsonschema_rs
        info = {}
    if keyword == "required" and isinstance(info.get("property"), str):
        path.append(info["property"])
    elif keyword == "additionalProperties" and info.get("unexpected"):
        path.append(str(info["unexpected"][0]))
    return {"pointer": pointer(path), "keyword": keyword, "message": str(error.message)[:300]}


def _canonical(spec: ToolSpec, raw_args: Any, dialect: str | None) -> dict[str, Any]:
    """Plain JSON, the dialect's rewrites undone, optional nulls dropped. Raises `ToolError`."""
    args = plain_arguments(raw_args)
    if dialect is not None:
        if dialect not in KNOWN_DIALECTS:
            raise make_error(
                "invalid_arguments",
                f"Unknown dialect {str(dialect)[:40]!r}; known: {', '.join(KNOWN_DIALECTS)}.",
                details={"pointer": "", "dialect": str(dialect)[:40]},
            )
        if dialect in spec.rewrites:
            args = decode_arguments(args, spec.rewrites[dialect])
    return normalise_nulls(args, spec.input_schema, spec.send_null)


def validate_arguments(call: Call, spec: ToolSpec, raw_args: Any, dialect: str | None) -> dict[str, Any]:
    """The canonical arguments of `raw_args`; raises `Halt` ``invalid_arguments``."""
    try:
        args = _canonical(spec, raw_args, dialect)
    except ToolError as exc:
        raise Halt("validate", exc) from None
    if not spec.input_validator.is_valid(args):
        errors = [describe_error(e) for e in spec.input_validator.iter_errors(args)]
        errors.sort(key=lambda e: (e["pointer"].count("/"), e["pointer"]))
        first = errors[0]
        where = f"argument {first['pointer']}" if first["pointer"] else "arguments"
        raise Halt(
            "validate",
            make_error(
                "invalid_arguments",
                f"Invalid {where}: {first['message']}"[:500],
                details={"pointer": first["pointer"], "keyword": first["keyword"], "errors": errors[:5]},
            ),
        )
    undeclared = undeclared_member(args, spec.input_schema)
    if undeclared is not None:
        raise Halt(
            "validate", invalid_argument(undeclared, "the schema declares no such property; remove it")
        )
    return args
