"""Schemas are shared, never copied, between tools and between the IR and its catalogs: lowering
interns the tools' schemas (`Interner`: equal subtrees of all tools are one object), and the dialect
views are copy on write (`toolgen.dialects._light`, `_simplify`, the MCP output wrap: a subtree a view
leaves as it is stays the IR's own object). That is only sound while nothing mutates a schema in
place: these tests lower real specs, build catalogs, lint and files from the IR and check that its
schemas are exactly what lowering produced, that the sharing does happen, and that shared trees
serialise to the bytes unshared copies serialise to."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import REAL, TICKETS_SPEC_PATH
from tests.support.profiles import examples

from toolgen.builder.build import emit_files
from toolgen.compile.intent import load_intent_map
from toolgen.compile.ir import ApiIR
from toolgen.compile.load import load_spec
from toolgen.compile.lower import lower
from toolgen.compile.schema import Interner
from toolgen.diagnostics import DiagnosticSink
from toolgen.dialects import DialectOptions
from toolgen.dialects.anthropic import anthropic_input_schema
from toolgen.dialects.mcp import mcp_input_schema, mcp_output_schema
from toolgen.emit import json_bytes
from toolgen.emit.dialect_catalogs import Catalogs, build_catalogs
from toolgen.emit.python import models_plan
from toolgen.review.lint import LintInput, lint_api

SPECS = [
    pytest.param(TICKETS_SPEC_PATH, id="tickets"),
    pytest.param(
        REAL / "stripe.json",
        id="stripe",
        marks=pytest.mark.skipif(not REAL.is_dir(), reason="../shared/specs/real is not available"),
    ),
]
OPTIONS = [DialectOptions(), DialectOptions(gemini_parameters="json_schema")]


def _lowered(tmp: Path, spec: Path, *, with_inputs: bool = False) -> Any:
    intent = tmp / "api.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(spec.resolve()))}\napi: {{name: api}}\n"
        'include: [{match: "*"}]\n',
        encoding="utf-8",
    )
    sink = DiagnosticSink()
    doc = load_spec(spec, spec.name, sink=sink)
    intents = load_intent_map(intent, "api.yaml")
    ir = lower(doc, intents, sink, "api")
    sink.raise_if_errors()
    return (ir, doc, intents) if with_inputs else ir


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
def test_catalogs_lint_and_files_leave_the_ir_schemas_untouched(tmp_path: Path, spec: Path) -> None:
    ir, doc, intents = _lowered(tmp_path, spec, with_inputs=True)
    before = copy.deepcopy(_schemas(ir))
    models_plan(ir)
    for options in OPTIONS:
        catalogs = build_catalogs(ir, None, options)
        lint_api(LintInput(doc, intents, ir, [], catalogs=catalogs))
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
    canonical = {
        "type": "object",
        "properties": {"tags": tags, "count": {"type": "integer", "format": "int32"}},
        "required": ["tags"],
    }
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


@pytest.mark.parametrize("spec", SPECS)
def test_lowered_tools_hold_one_object_per_distinct_subtree(tmp_path: Path, spec: Path) -> None:
    ir = _lowered(tmp_path, spec)
    by_content: dict[str, set[int]] = {}
    places = 0  # containers counted at every place they occur (as unshared trees would hold them)
    stack: list[Any] = [schema for pair in _schemas(ir) for schema in pair]
    while stack:
        node = stack.pop()
        if isinstance(node, (dict, list)):
            places += 1
            by_content.setdefault(json.dumps(node), set()).add(id(node))
            stack.extend(node.values() if isinstance(node, dict) else node)
    assert len(by_content) < places / 2  # most of it repeats: the test has something to check
    assert [text for text, ids in by_content.items() if len(ids) > 1] == []


def test_interner_shares_equal_trees_and_keeps_json_distinctions() -> None:
    values: list[Any] = [
        {"a": 1},
        {"a": True},
        {"a": 1.0},
        {"a": 0.0},
        {"a": -0.0},
        {"a": None},
        {"a": "1"},
        {"a": [1]},
        {"a": 1, "b": 2},
        {"b": 2, "a": 1},
        [{"a": 1}],
        {"a": 1},
    ]
    shown = [json.dumps(v) for v in values]
    intern = Interner()
    out = [intern(v) for v in values]
    assert [json.dumps(v) for v in out] == shown  # same values, same key order
    assert out[-1] is out[0] and out[-1] is not values[-1]
    assert out[10][0] is out[0]  # a subtree too
    assert len({id(v) for v in out}) == len(values) - 1  # nothing else merged
    assert out[0] is values[0]  # the first of its kind is kept as it is


#: scalars equal under ``==`` but not in JSON (``1``, ``1.0``, ``True``; ``0``, ``0.0``, ``-0.0``,
#: ``False``), so trees that differ only there are frequent
_SCALARS = st.sampled_from([None, True, False, 1, 1.0, 0, 0.0, -0.0, "1", ""])
_TREES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2)
    ),
    max_leaves=6,
)


def _typed(value: Any) -> Any:
    """`value` with every scalar tagged by its type and repr, so ``1``, ``1.0``, ``True`` and ``-0.0``
    compare apart; key order kept."""
    if isinstance(value, dict):
        return ["dict", [[k, _typed(v)] for k, v in value.items()]]
    if isinstance(value, list):
        return ["list", [_typed(v) for v in value]]
    return [type(value).__name__, repr(value)]


@settings(max_examples=examples(300))
@given(st.lists(_TREES, min_size=1, max_size=6))
def test_interning_keeps_every_value_and_merges_exactly_the_equal_containers(trees: list[Any]) -> None:
    intern = Interner()
    before = [_typed(t) for t in trees]
    out = [intern(t) for t in trees]
    assert [_typed(t) for t in out] == before  # the same values, types and key order; inputs untouched
    assert [_typed(t) for t in trees] == before
    again = [intern(copy.deepcopy(t)) for t in trees]
    for first, second in zip(out, again, strict=True):
        if isinstance(first, (dict, list)):
            assert second is first  # an equal container is the object seen before
    seen: dict[str, int] = {}

    def walk(node: Any) -> None:  # one object per distinct container, across every tree
        if isinstance(node, (dict, list)):
            shown = json.dumps(_typed(node))
            assert seen.setdefault(shown, id(node)) == id(node)
            for child in node.values() if isinstance(node, dict) else node:
                walk(child)

    for tree in out:
        walk(tree)
