"""Small OpenAPI documents for the tests of `toolgen.compile.schema`, and the checks they make: a
document of named component schemas written to a file and loaded (`make_doc`), one schema converted
to JSON Schema 2020-12 by `SchemaConverter` (`conv`), the schema nodes of a result (`schema_dicts`),
a result proved valid 2020-12 with every ``$ref`` resolving inside it (`assert_self_contained`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from toolgen.compile.load import SpecDocument, load_spec
from toolgen.compile.schema import SchemaConverter
from toolgen.diagnostics import DiagnosticError, DiagnosticSink
from toolgen.pointer import resolve_pointer


def make_doc(
    tmp_path: Path,
    schemas: dict[str, Any],
    version: str = "3.0.3",
    paths: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> SpecDocument:
    data: dict[str, Any] = {
        "openapi": version,
        "info": {"title": "t", "version": "1"},
        "paths": paths or {},
        "components": {"schemas": schemas},
    }
    if extra:
        data.update(extra)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return load_spec(path, sink=DiagnosticSink())


def conv(
    doc: SpecDocument, name: str, context: str = "input", **kw: Any
) -> tuple[dict[str, Any], DiagnosticSink]:
    sink = DiagnosticSink()
    converter = SchemaConverter(doc, sink, **kw)
    return converter.convert({"$ref": f"#/components/schemas/{name}"}, "/x", context), sink  # type: ignore[arg-type]


def walk(node: Any) -> Iterator[Any]:
    yield node
    if isinstance(node, dict):
        for v in node.values():
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


def schema_dicts(node: Any) -> Iterator[dict[str, Any]]:
    """Schema nodes only (not enum/default/const values)."""
    if not isinstance(node, dict):
        return
    yield node
    for key, value in node.items():
        if key in ("properties", "patternProperties", "$defs", "dependentSchemas") and isinstance(
            value, dict
        ):
            for v in value.values():
                yield from schema_dicts(v)
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            for v in value:
                yield from schema_dicts(v)
        elif key in (
            "items",
            "additionalProperties",
            "not",
            "contains",
            "propertyNames",
            "if",
            "then",
            "else",
        ):
            yield from schema_dicts(value)


def assert_self_contained(schema: dict[str, Any]) -> None:
    """Valid 2020-12 and every $ref resolves inside the schema itself."""
    Draft202012Validator.check_schema(schema)
    for node in walk(schema):
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            assert ref.startswith("#"), ref
            resolve_pointer(schema, ref[1:])


def validates(schema: dict[str, Any], instance: Any) -> bool:
    return bool(Draft202012Validator(schema).is_valid(instance))


def codes(exc: pytest.ExceptionInfo[DiagnosticError]) -> list[str]:
    return [d.code for d in exc.value.diagnostics]
