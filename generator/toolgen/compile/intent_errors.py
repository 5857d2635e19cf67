"""Stage `intent`, validation errors: pydantic's errors of an intent map -> located diagnostics.

Input: the `ValidationError` of the intent map's model, the model, the ruamel.yaml tree the map was
read into (it locates a key at file:line:col) and the path to show.
Output: one ``intent-invalid`` `Diagnostic` an error, with the file:line:col and JSON pointer of
the key and a hint (the key meant, by difflib, for an unknown one; what the member takes for a
wrong or missing one); an error of an `approval` branch the value was not written for is dropped.
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import BaseModel, ValidationError

from ..diagnostics import Diagnostic, SourceLocation
from ..pointer import escape_token
from .sourcemap import locate_ruamel


def invalid_diagnostics(
    exc: ValidationError, model: type[BaseModel], root: Any, display: str
) -> list[Diagnostic]:
    """The ``intent-invalid`` diagnostics of `exc`, raised validating against `model` the data read
    into the ruamel.yaml tree `root` from the file shown as `display`."""
    diagnostics = []
    for err in exc.errors():
        if _other_branch(err):
            continue
        loc = [
            p
            for p in err["loc"]  # pydantic's own steps, and "[key]" for a key (the key is located)
            if not (isinstance(p, str) and (p.startswith(("function-", "literal[")) or p in _STEPS))
        ]
        tokens = [str(p) for p in loc]
        line, col = locate_ruamel(root, tokens)
        pointer = "".join("/" + escape_token(t) for t in tokens)
        message, hint = _explain(err, loc, model)
        diagnostics.append(
            Diagnostic("intent-invalid", "error", message, SourceLocation(display, line, col, pointer), hint)
        )
    return diagnostics


#: pydantic's steps in an error's location that are no key of the intent map
_STEPS = frozenset({"[key]", "ApprovalCondition"})


def _other_branch(err: Any) -> bool:
    """An error of the `approval` union's branch the value was not written for: the word branch of a
    mapping (``{when: ...}``), the mapping branch of a word."""
    loc = [str(p) for p in err["loc"]]
    if "approval" not in loc or loc.index("approval") + 1 >= len(loc):
        return False
    branch = loc[loc.index("approval") + 1]
    return (branch.startswith("literal[") and isinstance(err.get("input"), dict)) or (
        branch == "ApprovalCondition" and err["type"] == "model_type"
    )


_FIELD_DOCS = {
    "effect": "one of read, write, destructive",
    "approval": "one of never, required, or {when: EXPR} (a CEL condition)",
    "toolgen": "the format version; write `toolgen: 1`",
    "send_as": "write `header:NAME`, `query:NAME`, `body:FIELD` or `none`, e.g. header:Idempotency-Key",
    "key": "the name of the record tool's argument: letters, digits and '_', e.g. action_id",
    "name": "lower-case letters, digits and '_', starting with a letter or '_' (it is also a Python package name)",
    "secret": "an environment-variable name: letters, digits and '_'",
    "style": "one of cursor, offset, page, link",
    "schema_mode": "one of strict, warn, off",
    "loading": "one of eager, deferred",
    "description": "one short sentence (at most 200 characters) saying what the toolset's tools are for",
}


def _explain(err: Any, loc: list[Any], root: type[BaseModel]) -> tuple[str, str | None]:
    """A readable message + hint for one pydantic error."""
    where = ".".join(str(p) for p in loc) or "(top level)"
    kind = err["type"]
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else ""
        parent_model = _model_at(loc[:-1], root)
        known = sorted(f.alias or n for n, f in parent_model.model_fields.items()) if parent_model else []
        close = difflib.get_close_matches(key, known, n=1)
        hint = (
            f"did you mean `{close[0]}`?" if close else (f"known keys: {', '.join(known)}" if known else None)
        )
        return f"unknown key `{key}` in {'.'.join(str(p) for p in loc[:-1]) or 'the intent map'}", hint
    if kind == "missing":
        field = str(loc[-1]) if loc else ""
        return (
            f"missing required key `{field}` in {'.'.join(str(p) for p in loc[:-1]) or 'the intent map'}",
            _FIELD_DOCS.get(field),
        )
    field = str(loc[-1]) if loc else ""
    value = err.get("input")
    shown = repr(value) if not isinstance(value, (dict, list)) else type(value).__name__
    return f"{where}: {err['msg']} (got {shown})", _FIELD_DOCS.get(field)


def _model_at(loc: list[Any], root: type[BaseModel]) -> type[BaseModel] | None:
    """The pydantic model class that validates the object at `loc` under the model `root` (for
    did-you-mean hints)."""
    model: type[BaseModel] | None = root
    i = 0
    while model is not None and i < len(loc):
        key = loc[i]
        field = model.model_fields.get(str(key))
        if field is None:
            return None
        annotation = field.annotation
        nested = _models_in(annotation)
        if str(key) in ("tools", "auth", "args", "toolsets", "composites"):
            i += 2  # dict key then the value
        elif str(key) in ("include", "steps"):
            i += 2  # list index then the value
        else:
            i += 1
        model = nested
    return model


def _models_in(annotation: Any) -> type[BaseModel] | None:
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _models_in(arg)
        if found is not None:
            return found
    return None
