"""The dialect views are copy on write (`toolgen.dialects._light`, `_simplify`, the MCP output wrap):
a subtree a view leaves as it is stays the IR's own object, so the catalogs of a large spec do not
hold a second copy of every schema. That is only sound while nothing mutates a schema in place: these
tests build catalogs and files from a real IR and check that its schemas are exactly what lowering
produced, that the views do share subtrees with it, and that they serialise to the bytes views of an
unshared copy serialise to."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from tests.support.build import REAL, TICKETS_SPEC_PATH

from toolgen.build import emit_files
from toolgen.compile.intent import load_intent_map
from toolgen.compile.ir import ApiIR
from toolgen.compile.load import load_spec
from toolgen.compile.lower import lower
from toolgen.diagnostics import DiagnosticSink
from toolgen.dialects import DialectOptions
from toolgen.dialects.anthropic import anthropic_input_schema
from toolgen.dialects.mcp import mcp_input_schema, mcp_output_schema
from toolgen.emit import json_bytes
from toolgen.emit.catalogs import Catalogs, build_catalogs

SPECS = [pytest.param(TICKETS_SPEC_PATH, id="tickets"),
         pytest.param(REAL / "stripe.json", id="stripe",
                      marks=pytest.mark.skipif(not REAL.is_dir(), reason="../shared/specs/real is not available"))]
OPTIONS = [DialectOptions(), DialectOptions(gemini_parameters="json_schema")]


def _lowered(tmp: Path, spec: Path) -> ApiIR:
    intent = tmp / "api.yaml"
    intent.write_text(f"toolgen: 1\nspec: {json.dumps(str(spec.resolve()))}\napi: {{name: api}}\n"
                      'include: [{match: "*"}]\n', encoding="utf-8")
    sink = DiagnosticSink()
    doc = load_spec(spec, spec.name, sink=sink)
    ir = lower(doc, load_intent_map(intent, "api.yaml"), sink, "api")
    sink.raise_if_errors()
    return ir


def _schemas(ir: ApiIR) -> list[tuple[Any, Any]]:
    return [(tool.input_schema, tool.output_schema) for tool in ir.tools]


def _containers(value: Any) -> set[int]:
    """The ids of every dict and list inside `value` (itself included)."""
    seen: set[int] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, (dict, list)) and id(node) not in seen:
            seen.add(id(node))
            stack.extend(node.values() if isinstance(node, dict) else node)
    return seen


def _catalog_bytes(catalogs: Catalogs) -> dict[str, bytes]:
    out = {f"{name}.json": json_bytes(tools) for name, tools in catalogs.by_dialect().items()}
    out.update({f"deferred/{name}": json_bytes(view) for name, view in catalogs.deferred.files.items()})
    return out


@pytest.mark.parametrize("spec", SPECS)
def test_catalogs_and_files_leave_the_ir_schemas_untouched(tmp_path: Path, spec: Path) -> None:
    ir = _lowered(tmp_path, spec)
    before = copy.deepcopy(_schemas(ir))
    for options in OPTIONS:
        catalogs = build_catalogs(ir, None, options)
        emit_files(ir, ("openai", "anthropic", "mcp", "gemini", "policy", "report"), [], catalogs=catalogs)
        # json.dumps, not ==: key order is part of the output too
        assert json.dumps(_schemas(ir)) == json.dumps(before)
        assert _schemas(ir) == before


@pytest.mark.parametrize("spec", SPECS)
def test_views_share_subtrees_with_the_ir_and_serialise_the_same(tmp_path: Path, spec: Path) -> None:
    ir = _lowered(tmp_path, spec)
    unshared = copy.deepcopy(ir)
    for options in OPTIONS:
        catalogs = build_catalogs(ir, None, options)
        ir_nodes = _containers([schema for pair in _schemas(ir) for schema in pair])
        # MCP keeps most of the canonical schema: its view must reuse the IR's objects, not copy them
        assert _containers(catalogs["mcp"]) & ir_nodes
        assert _catalog_bytes(catalogs) == _catalog_bytes(build_catalogs(unshared, None, options))


def test_an_unchanged_schema_is_the_input_itself_and_a_changed_one_is_new() -> None:
    tags = {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 5}
    canonical = {"type": "object", "properties": {"tags": tags, "count": {"type": "integer", "format": "int32"}},
                 "required": ["tags"]}
    before = copy.deepcopy(canonical)
    mcp = mcp_input_schema(canonical).schema
    assert mcp is not canonical  # int32 moved into the description: the root and `properties` are new
    assert mcp["properties"]["count"] == {"type": "integer", "description": "(format: int32)"}
    assert mcp["properties"]["tags"] is tags  # untouched by every MCP rule: the very same object
    bare = {"type": "object", "properties": {"tags": tags}, "required": ["tags"]}
    assert mcp_input_schema(bare).schema is bare
    # Anthropic closes objects and gives a root without properties an empty one: new containers
    anthropic = anthropic_input_schema({"type": "object", "required": []}).schema
    assert anthropic["properties"] == {}
    closed = anthropic_input_schema(canonical).schema
    assert closed["additionalProperties"] is False and "additionalProperties" not in canonical
    assert closed["properties"]["tags"] is tags
    # an array output root is wrapped as {"result": ...}; the unchanged inner schema is shared
    listing = {"type": "array", "items": tags}
    wrapped = mcp_output_schema(listing).schema
    assert wrapped["properties"]["result"]["items"] is tags
    assert canonical == before and listing == {"type": "array", "items": tags}
