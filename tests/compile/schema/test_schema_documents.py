"""Tests for `toolgen.compile.schema` over whole documents: the budgets (exponential inlining and
depth refused quickly), determinism (the output does not depend on the hash seed) and freshness (each
result is a new object, the document is left untouched), and the real specs of ``../shared`` (every
operation's schemas convert to valid, self-contained JSON Schema 2020-12; skipped without them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.support.schema_cases import codes, conv, make_doc, schema_dicts, walk

from toolgen.compile.load import SpecDocument, load_spec, read_structured
from toolgen.compile.schema import SchemaBudget, SchemaConverter, schema_nodes
from toolgen.diagnostics import DiagnosticError, DiagnosticSink
from toolgen.pointer import join_pointer

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
REAL = SHARED / "specs" / "real"

needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="shared/ real specs not present")


# --- 8. budgets ---------------------------------------------------------------------------------


def test_exponential_inlining_is_rejected_quickly(tmp_path: Path) -> None:
    schemas: dict[str, Any] = {
        f"L{i}": {
            "anyOf": [{"$ref": f"#/components/schemas/L{i + 1}"}, {"$ref": f"#/components/schemas/L{i + 1}"}]
        }
        for i in range(30)
    }
    schemas["L30"] = {"type": "string"}
    doc = make_doc(tmp_path, schemas)
    with pytest.raises(DiagnosticError) as exc:  # counted, not expanded: 2**31 nodes would never finish
        conv(doc, "L0")
    assert codes(exc) == ["schema-too-large"]
    diag = exc.value.diagnostics[0]
    assert "2,147,483,647" in diag.message and "20,000" in diag.message  # the count and the budget
    assert diag.hint == "project the output (output.fields) or raise budgets.max_schema_nodes"
    # within budget, the same converter still works and counts agree with schema_nodes()
    small = SchemaConverter(doc, DiagnosticSink(), SchemaBudget(max_nodes=100))
    result = small.convert({"$ref": "#/components/schemas/L25"}, "/x", "input")
    assert schema_nodes(result) == 63


def test_depth_budget(tmp_path: Path) -> None:
    schemas: dict[str, Any] = {
        f"D{i}": {"type": "object", "properties": {"next": {"$ref": f"#/components/schemas/D{i + 1}"}}}
        for i in range(80)
    }
    schemas["D80"] = {"type": "string"}
    doc = make_doc(tmp_path, schemas)
    with pytest.raises(DiagnosticError) as exc:
        conv(doc, "D0")
    assert codes(exc) == ["schema-too-large"] and "64" in exc.value.diagnostics[0].message
    deep = conv(doc, "D50")[0]  # 31 levels: fine
    assert schema_nodes(deep) == 31
    converter = SchemaConverter(doc, DiagnosticSink(), SchemaBudget(max_depth=10))
    converter.convert({"$ref": "#/components/schemas/D71"}, "/x", "input")  # 10 levels: fine
    with pytest.raises(DiagnosticError):
        converter.convert({"$ref": "#/components/schemas/D69"}, "/x", "input")  # 12 levels (cached parts)


# --- 9-10. determinism, freshness ---------------------------------------------------------------


_DETERMINISM_SCRIPT = """
import json, sys
from pathlib import Path
from toolgen.compile.load import load_spec
from toolgen.diagnostics import DiagnosticSink
from toolgen.compile.schema import SchemaConverter
doc = load_spec(Path(sys.argv[1]))
sink = DiagnosticSink()
c = SchemaConverter(doc, sink)
out = [c.convert({"$ref": "#/components/schemas/" + n}, "/x", ctx)
       for n in sorted(doc.data["components"]["schemas"]) for ctx in ("input", "output")]
print(json.dumps([out, [d.render() for d in sink]]))
"""


def test_output_is_independent_of_hash_seed(tmp_path: Path) -> None:
    schemas: dict[str, Any] = {}
    for i in range(12):  # a web of cycles
        schemas[f"N{i}"] = {
            "type": "object",
            "properties": {f"p{j}": {"$ref": f"#/components/schemas/N{(i * 7 + j) % 12}"} for j in range(3)},
        }
    schemas["Leaf"] = {"type": "object", "properties": {"n": {"$ref": "#/components/schemas/N3"}}}
    make_doc(tmp_path, schemas)
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", _DETERMINISM_SCRIPT, str(tmp_path / "spec.yaml")],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.add(proc.stdout)
    assert len(outputs) == 1
    result = json.loads(outputs.pop())
    assert len(result[1]) == 1 and "schema-cycle" in result[1][0]  # one group, reported once


def test_results_are_fresh_and_the_document_is_untouched(tmp_path: Path) -> None:
    doc = make_doc(
        tmp_path,
        {
            "Tag": {"type": "object", "properties": {"name": {"type": "string", "enum": ["a"]}}},
            "Post": {
                "type": "object",
                "properties": {
                    "tags": {"type": "array", "items": {"$ref": "#/components/schemas/Tag"}},
                    "main": {"$ref": "#/components/schemas/Tag"},
                    "replies": {"type": "array", "items": {"$ref": "#/components/schemas/Post"}},
                },
            },
        },
    )
    before = json.dumps(doc.data, sort_keys=True)
    converter = SchemaConverter(doc, DiagnosticSink())
    first = converter.convert({"$ref": "#/components/schemas/Post"}, "/x", "input")
    expected = json.dumps(first, sort_keys=True)
    ids = [id(n) for n in walk(first) if isinstance(n, (dict, list))]
    assert len(ids) == len(set(ids))  # a tree: no shared sub-objects inside one result
    for node in walk(first):  # vandalise the result
        if isinstance(node, dict):
            node["vandal"] = True
        elif isinstance(node, list):
            node.append("vandal")
    second = converter.convert({"$ref": "#/components/schemas/Post"}, "/x", "input")
    assert json.dumps(second, sort_keys=True) == expected
    assert not {id(n) for n in walk(second)} & {id(n) for n in walk(first) if isinstance(n, (dict, list))}
    assert json.dumps(doc.data, sort_keys=True) == before


# --- real specs ---------------------------------------------------------------------------------


HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def load_real(name: str) -> SpecDocument:
    path = REAL / name
    if not path.is_file():
        pytest.skip(f"{name} not present")
    try:
        return load_spec(path, sink=DiagnosticSink())
    except DiagnosticError as exc:
        # vercel.json trips a load-stage validation error on a request body whose schema has a
        # boolean property schema; the schema stage only needs the raw data.
        assert all(d.code == "spec-invalid" for d in exc.diagnostics)
        text, data, fmt = read_structured(path, name)
        version = "3.1" if str(data["openapi"]).startswith("3.1") else "3.0"
        return SpecDocument(path, name, text, data, fmt, version, data["openapi"])  # type: ignore[arg-type]


def operation_schemas(doc: SpecDocument, converter: SchemaConverter) -> Iterator[tuple[Any, str, str]]:
    """(schema, pointer, context) of every request body, parameter and 2xx response."""
    for path, item in doc.data.get("paths", {}).items():
        if not isinstance(item, dict):
            continue
        for method, op in item.items():
            if method not in HTTP_METHODS or not isinstance(op, dict):
                continue
            op_ptr = join_pointer("/paths", path, method)
            if "requestBody" in op:
                body, body_ptr = converter.resolve(op["requestBody"], join_pointer(op_ptr, "requestBody"))
                for media, node in (body.get("content") or {}).items():
                    if isinstance(node, dict) and "schema" in node:
                        yield node["schema"], join_pointer(body_ptr, "content", media, "schema"), "input"
            for i, param in enumerate(op.get("parameters") or []):
                param, param_ptr = converter.resolve(param, join_pointer(op_ptr, "parameters", i))
                if "schema" in param:
                    yield param["schema"], join_pointer(param_ptr, "schema"), "input"
            for code, response in (op.get("responses") or {}).items():
                if not str(code).startswith("2"):
                    continue
                response, resp_ptr = converter.resolve(response, join_pointer(op_ptr, "responses", code))
                for media, node in (response.get("content") or {}).items():
                    if isinstance(node, dict) and "schema" in node:
                        yield node["schema"], join_pointer(resp_ptr, "content", media, "schema"), "output"


def assert_refs_local(schema: dict[str, Any]) -> None:
    defs = schema.get("$defs", {})
    for node in walk(schema):
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            assert ref.startswith("#/$defs/") and ref[len("#/$defs/") :] in defs, ref


@needs_real
@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["digitalocean.json", "vercel.json", "readme-api.json", "blockfrost.yaml", "stripe.json"]
)
def test_real_specs_convert_to_valid_self_contained_schemas(name: str) -> None:
    doc = load_real(name)
    sink = DiagnosticSink()
    converter = SchemaConverter(doc, sink)
    results: list[dict[str, Any]] = []
    failures: list[str] = []
    for node, pointer, context in operation_schemas(doc, converter):
        try:
            results.append(converter.convert(node, pointer, context))  # type: ignore[arg-type]
        except DiagnosticError as exc:
            failures.append(exc.diagnostics[0].code)
    assert results and len(failures) <= len(results) // 20, failures[:10]
    distinct = {json.dumps(r, sort_keys=True): r for r in results}
    for schema in distinct.values():
        assert_refs_local(schema)
        assert all("nullable" not in n for n in schema_dicts(schema))
    if name == "stripe.json":  # large schemas: the Rust meta-check for all, the Python one for a sample
        import jsonschema_rs

        for schema in distinct.values():
            assert jsonschema_rs.meta.is_valid(schema)
        sample = sorted(distinct.values(), key=schema_nodes)
        for schema in sample[:: max(1, len(sample) // 15)]:
            Draft202012Validator.check_schema(schema)
    else:
        for schema in distinct.values():
            Draft202012Validator.check_schema(schema)
    if name in ("vercel.json", "stripe.json"):
        assert any(d.code == "schema-cycle" for d in sink)


@needs_real
def test_readme_31_nullable_and_digitalocean_path_refs() -> None:
    readme = load_real("readme-api.json")
    converter = SchemaConverter(readme, DiagnosticSink())
    seen_null = False
    for node, pointer, context in operation_schemas(readme, converter):
        if "nullable" in json.dumps(node):
            schema = converter.convert(node, pointer, context)  # type: ignore[arg-type]
            assert "nullable" not in json.dumps(schema)
            seen_null = seen_null or '"null"' in json.dumps(schema)
    assert seen_null
    ocean = load_real("digitalocean.json")
    path_refs = 0
    converter = SchemaConverter(ocean, DiagnosticSink())
    for node, pointer, context in operation_schemas(ocean, converter):
        if "#/paths/" in json.dumps(node):
            path_refs += 1
            schema = converter.convert(node, pointer, context)  # type: ignore[arg-type]
            assert "$ref" not in json.dumps(schema)
    assert path_refs > 0


@needs_real
def test_stripe_cycle_groups_match_the_spec() -> None:
    doc = load_real("stripe.json")
    sink = DiagnosticSink()
    converter = SchemaConverter(doc, sink)
    names = sorted(doc.data["components"]["schemas"])
    groups = {converter._scc("/components/schemas/" + n) for n in names}
    recursive = [g for g in groups if g.recursive]
    assert sum(len(g.members) for g in recursive) == 86
    assert max(len(g.members) for g in recursive) == 65
    schema = converter.convert(
        {"$ref": "#/components/schemas/charge"}, "/components/schemas/charge", "output"
    )
    assert_refs_local(schema)
    big = [d for d in sink if d.code == "schema-cycle" and "group of 65" in d.message]
    assert len(big) == 1


@needs_real
@pytest.mark.slow
def test_every_operation_schema_of_github_and_stripe_converts() -> None:
    """Every request and response schema of the two largest real specs converts or fails with a located
    diagnostic, never another exception (speed is measured by benchmarks/sweep.py, not here)."""
    for name, expected in (("github-api.github.com.json", 1000), ("stripe.json", 400)):
        doc = load_real(name)
        converter = SchemaConverter(doc, DiagnosticSink())
        converted = 0
        for node, pointer, context in operation_schemas(doc, converter):
            try:
                converter.convert(node, pointer, context)  # type: ignore[arg-type]
                converted += 1
            except DiagnosticError as exc:
                assert all(d.location is not None for d in exc.diagnostics)
        assert converted > expected, (name, converted)
