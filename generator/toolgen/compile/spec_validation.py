"""Stage `load`, its model validation: a loaded document checked against the openapi-pydantic model
of its OpenAPI version.

Input: a `SpecDocument` (for a Swagger 2.0 file, the OpenAPI 3.0.3 document it converts to). Output:
what the model finds wrong (`model_findings`: JSON pointer of the data, whether it lies inside a
schema object, pydantic's message), and `validate_model` acting on them: a problem inside a schema
object is a ``spec-schema-invalid`` warning (real specs have them, and the schema stage normalises
both dialects anyway); any other is a ``spec-invalid`` error, raised as `DiagnosticError` (the first
20, located). Not findings: a pydantic complaint that a value does not fit the *other* branch of a
``Reference | X`` union, a ``true``/``false`` schema of OpenAPI 3.1, an ``x-`` member of the Paths
Object, a callback given as a Reference Object (OpenAPI 3.0.3 and 3.1, "Paths Object" and "Callback
Object").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import partial
from typing import Any, Protocol

from pydantic import ValidationError

from ..diagnostics import Diagnostic, DiagnosticError, DiagnosticSink, SourceLocation
from ..pointer import escape_token
from ..remember import Remember, computed


class SpecDocument(Protocol):
    """What the validation reads of a loaded document (`toolgen.compile.load.SpecDocument`, which
    imports this module)."""

    @property
    def data(self) -> dict[str, Any]: ...

    @property
    def version(self) -> str: ...

    @property
    def swagger(self) -> str | None: ...

    @property
    def content_key(self) -> str: ...

    def locate(self, pointer: str) -> SourceLocation: ...

    def fill_locations(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]: ...


_SCHEMA_KEYS = {
    "schema",
    "schemas",
    "items",
    "properties",
    "additionalProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "$defs",
    "prefixItems",
    "patternProperties",
}


def validate_model(doc: SpecDocument, sink: DiagnosticSink | None, remember: Remember = computed) -> None:
    """Validate with the openapi-pydantic model of the document's version (`model_findings`,
    through `remember`): a problem inside a schema object is a warning in `sink`, any other raises."""
    findings = remember(doc.content_key + " validation 1", partial(model_findings, doc))
    what = f"OpenAPI {doc.version}" if doc.swagger is None else f"Swagger {doc.swagger} (read as OpenAPI 3.0)"
    errors: list[Diagnostic] = []
    for pointer, in_schema, message in findings:
        location = doc.locate(pointer)
        if in_schema:
            if sink is not None:
                sink.warning(
                    "spec-schema-invalid",
                    f"schema object is not valid {what}: {message}",
                    location,
                    "toolgen reads it leniently; fix the spec to silence this",
                )
        else:
            errors.append(
                Diagnostic(
                    "spec-invalid",
                    "error",
                    f"not a valid {what} document: {message}",
                    location,
                    "fix the document at this pointer",
                )
            )
    if errors:
        raise DiagnosticError(doc.fill_locations(errors[:20]))


def model_findings(doc: SpecDocument) -> tuple[tuple[str, bool, str], ...]:
    """What the openapi-pydantic model of the document's version finds wrong with `doc.data`, as
    ``(JSON pointer of data, inside a schema object?, pydantic's message)``, in pydantic's order,
    each pointer and message once, without the noise of a ``Reference | X`` union's other branch
    (`_loc_to_pointer`). A pure function of `doc.data` and its version."""
    if doc.version == "3.1":
        from openapi_pydantic.v3.v3_1 import OpenAPI
    else:
        from openapi_pydantic.v3.v3_0 import OpenAPI  # type: ignore[assignment]
    try:
        OpenAPI.model_validate(doc.data)
    except ValidationError as exc:
        found: list[tuple[str, bool, str]] = []
        seen: set[str] = set()
        for err in exc.errors():
            mapped = _loc_to_pointer(doc.data, err["loc"], boolean_schemas=doc.version == "3.1")
            if mapped is None:  # the other branch of a Reference | Object union: noise
                continue
            pointer, in_schema = mapped
            if _extension_of_paths(pointer) or _referenced_callback(pointer):
                continue
            key = pointer + "|" + err["msg"]
            if key in seen:
                continue
            seen.add(key)
            found.append((pointer, in_schema, str(err["msg"])))
        return tuple(found)
    return ()


def _extension_of_paths(pointer: str) -> bool:
    """Whether `pointer` is at or under a specification extension of the Paths Object
    (``/paths/x-codegen-contextRoot``): OpenAPI 3.0.3 and 3.1 section "Paths Object" say it MAY be
    extended with ``x-`` members, which openapi-pydantic's model reads as path items and refuses."""
    parts = pointer.split("/")
    return len(parts) >= 3 and parts[1] == "paths" and parts[2].startswith("x-")


def _referenced_callback(pointer: str) -> bool:
    """Whether `pointer` is the ``$ref`` of a callback given as a Reference Object
    (``.../callbacks/<name>/$ref``): OpenAPI 3.0.3 and 3.1 type an operation's `callbacks` as
    ``Map[string, Callback Object | Reference Object]``, and openapi-pydantic's model reads the
    reference as a path expression named ``$ref`` (PeerTube's callbacks are references). The
    reference itself is resolved, and checked, wherever toolgen follows one."""
    parts = pointer.split("/")
    return len(parts) >= 4 and parts[-1] == "$ref" and parts[-3] == "callbacks"


def _loc_to_pointer(
    data: Any, loc: tuple[Any, ...], *, boolean_schemas: bool = False
) -> tuple[str, bool] | None:
    """Map a pydantic error location onto a JSON pointer that exists in `data`.

    Union branch tags (model names such as ``Reference``) are not in the data and are skipped.
    Returns (pointer, whether the location is inside a schema object), or None for an error that
    only says the value does not fit the *other* branch of a ``Reference | X`` union: a value
    without ``$ref`` failing the ``Reference`` branch, or a value with ``$ref`` failing the object
    branch (pydantic reports every branch; only the branch the value is meant for says what is wrong).
    A property literally named like a keyword (``properties: {additionalProperties: ...}``) is
    still inside its schema. With `boolean_schemas` (OpenAPI 3.1 = JSON Schema 2020-12), ``true`` and
    ``false`` in a schema position are valid schemas, which openapi-pydantic's model rejects: None.
    """
    node = data
    parts: list[str] = []
    in_schema = False
    for item in loc:
        if isinstance(node, dict) and isinstance(item, str) and item in node:
            parts.append(item)
            if item in _SCHEMA_KEYS:
                in_schema = True
            node = node[item]
        elif isinstance(node, list) and isinstance(item, int) and 0 <= item < len(node):
            parts.append(str(item))
            node = node[item]
        elif isinstance(item, str) and _BRANCH_TAG.match(item) and isinstance(node, dict):
            if (item == "Reference") != ("$ref" in node):
                return None
        elif isinstance(item, str) and _BRANCH_TAG.match(item) and isinstance(node, bool):
            if boolean_schemas and in_schema:
                return None
        else:
            continue
    return "".join("/" + escape_token(p) for p in parts), in_schema


#: pydantic's union branch tags are model class names (``Reference``, ``Schema``, ``RequestBody``)
_BRANCH_TAG = re.compile(r"^[A-Z][A-Za-z0-9]*$")


__all__ = ["model_findings", "validate_model"]
