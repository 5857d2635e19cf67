"""`load`: which openapi-pydantic validation errors stop a build and which are schema-internal warnings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolgen.compile.load import load_spec
from toolgen.diagnostics import DiagnosticError, DiagnosticSink


def _spec(tmp: Path, version: str, body_schema: Any, **extra: Any) -> Path:
    doc = {
        "openapi": version,
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/r/{id}": {
                "patch": {
                    "operationId": "patchR",
                    "parameters": [
                        {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
                    ],
                    "requestBody": {"content": {"application/json": {"schema": body_schema}}},
                    "responses": {"204": {"description": "ok"}},
                }
            }
        },
        **extra,
    }
    path = tmp / "spec.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_property_named_additional_properties_is_not_a_structural_error(tmp_path: Path) -> None:
    """Vercel: `properties: {additionalProperties: false, ...}` (a property literally named so, whose
    schema is the boolean `false`) is a valid 3.1 schema; pydantic's union errors are not spec errors."""
    schema = {"type": "object", "properties": {"additionalProperties": False, "name": {"type": "string"}}}
    sink = DiagnosticSink()
    load_spec(_spec(tmp_path, "3.1.0", schema), sink=sink)
    assert [d for d in sink.items if d.severity != "info"] == []


def test_boolean_schema_in_30_is_a_located_warning_not_an_error(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"flag": False}}
    sink = DiagnosticSink()
    load_spec(_spec(tmp_path, "3.0.3", schema), sink=sink)
    codes = {d.code for d in sink.items}
    assert codes == {"spec-schema-invalid"}
    assert all(
        d.location and d.location.pointer and d.location.pointer.endswith("/properties/flag")
        for d in sink.items
    )


def test_schema_internal_problem_reports_only_the_meant_branch(tmp_path: Path) -> None:
    """A bad keyword deep in an inline schema: one warning at the schema, no `Reference` noise, and
    no spec-invalid error for the request body that holds it."""
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}}
    sink = DiagnosticSink()
    load_spec(_spec(tmp_path, "3.0.3", schema), sink=sink)
    messages = [d.message for d in sink.items]
    assert messages and all("Reference" not in m for m in messages)
    assert all(d.code == "spec-schema-invalid" for d in sink.items)


def test_structural_error_outside_schemas_still_fails(tmp_path: Path) -> None:
    path = _spec(tmp_path, "3.0.3", {"type": "object"})
    doc = json.loads(path.read_text())
    doc["paths"]["/r/{id}"]["patch"]["responses"] = "nope"
    path.write_text(json.dumps(doc))
    with pytest.raises(DiagnosticError) as exc:
        load_spec(path, sink=DiagnosticSink())
    assert {d.code for d in exc.value.diagnostics} == {"spec-invalid"}
    assert all(d.location and d.location.line for d in exc.value.diagnostics)


@pytest.mark.parametrize("version", ["3.0.3", "3.1.0"])
@pytest.mark.parametrize("value", ["/apis/registry/v2", {"a": 1}, ["x"], 7])
def test_a_specification_extension_of_the_paths_object_is_not_an_error(
    tmp_path: Path, version: str, value: Any
) -> None:
    """OpenAPI's Paths Object may be extended with `x-` members (Apicurio's
    `x-codegen-contextRoot: /apis/registry/v2`), whatever their value; they are not path items."""
    path = _spec(tmp_path, version, {"type": "object"})
    doc = json.loads(path.read_text())
    doc["paths"]["x-codegen-contextRoot"] = value
    path.write_text(json.dumps(doc))
    sink = DiagnosticSink()
    load_spec(path, sink=sink)
    assert [d for d in sink.items if d.severity != "info"] == []


def test_a_paths_member_that_is_neither_a_path_nor_an_extension_still_fails(tmp_path: Path) -> None:
    path = _spec(tmp_path, "3.0.3", {"type": "object"})
    doc = json.loads(path.read_text())
    doc["paths"]["codegen-contextRoot"] = "/apis/registry/v2"  # no `x-`: read as a path item, and not one
    path.write_text(json.dumps(doc))
    with pytest.raises(DiagnosticError) as exc:
        load_spec(path, sink=DiagnosticSink())
    assert [d.location.pointer for d in exc.value.diagnostics if d.location] == ["/paths/codegen-contextRoot"]


def test_a_callback_given_as_a_reference_is_not_an_error(tmp_path: Path) -> None:
    """`callbacks: {name: {$ref: ...}}` (PeerTube): a Callback Object may be a Reference Object."""
    callback = {"{$request.body#/url}": {"post": {"responses": {"200": {"description": "ok"}}}}}
    path = _spec(tmp_path, "3.0.3", {"type": "object"}, components={"callbacks": {"hook": callback}})
    doc = json.loads(path.read_text())
    doc["paths"]["/r/{id}"]["patch"]["callbacks"] = {
        "searchTarget === search-index": {"$ref": "#/components/callbacks/hook"}
    }
    path.write_text(json.dumps(doc))
    sink = DiagnosticSink()
    load_spec(path, sink=sink)
    assert [d for d in sink.items if d.severity != "info"] == []


@pytest.mark.parametrize("suffix", ["json", "yaml"])
def test_the_content_key_follows_every_byte_of_the_file(tmp_path: Path, suffix: str) -> None:
    """`SpecDocument.content_key` (what the validation, the locations and each operation's reads are
    remembered by) is keyed by the SHA-256 of the file's bytes: the same bytes give the same key, any
    edit another, even one of the same length that leaves the parsed data as it was (a key's order)."""
    spec = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}}
    path = tmp_path / f"spec.{suffix}"

    def key(text: str) -> str:
        path.write_text(text, encoding="utf-8")
        doc = load_spec(path)
        assert doc.source_sha256 is not None
        return doc.content_key

    text = json.dumps(spec)
    first = key(text)
    assert key(text) == first
    assert key(text.replace('"t"', '"u"')) != first
    assert key(text.replace('"title": "t", "version": "1"', '"version": "1", "title": "t"')) != first
    assert key(text + " ") != first
    assert key("\ufeff" + text) != first  # the same text once decoded, other bytes
