"""A `type: number` bound a double cannot hold is exact in the generated argument models
(`toolgen.emit.exact_numbers`): near 2**53, 2**63 and 2**64, for every bound keyword, with and without
null, the model accepts and refuses exactly the values the runtime's validator (jsonschema-rs over the
same JSON Schema) accepts and refuses, integers and floats alike. datamodel-code-generator alone
wrote ``confloat(ge=9007199254740992.0)`` for ``minimum: 9007199254740993``."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.emit.python import ModelsPlan, format_piece, join_pieces, models_pieces

jsonschema_rs = pytest.importorskip("jsonschema_rs")

KEYWORDS = ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")
CENTRES = (2**53, 2**63, 2**64, -(2**53), -(2**63))
BOUNDS = sorted({c + d for c in CENTRES for d in (-2, -1, 0, 1, 3)} | {float(2**63), float(2**53 + 2)})


def field_schemas() -> dict[str, dict[str, Any]]:
    """Field name -> its schema: every bound under every keyword, as a number and as a nullable one."""
    out: dict[str, dict[str, Any]] = {}
    for i, bound in enumerate(BOUNDS):
        for keyword in KEYWORDS:
            out[f"f{i}_{keyword}"] = {"type": "number", keyword: bound}
            out[f"n{i}_{keyword}"] = {"type": ["number", "null"], keyword: bound}
    return out


def import_source(path: Path, name: str, source: str) -> ModuleType:
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic resolves the postponed annotations in the module's namespace
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The argument model of all `field_schemas`, made by the path `models.py` is made by (the plan's
    document through datamodel-code-generator, the rewrites and black), imported from a file."""
    schema = {
        "type": "object",
        "title": "BoundsArgs",
        "properties": field_schemas(),
        "additionalProperties": False,
    }
    document = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {"BoundsArgs": schema}}
    plan = ModelsPlan(json.dumps(document, sort_keys=True), {}, ())
    source = join_pieces([format_piece(piece) for piece in models_pieces(plan)])
    module = import_source(
        tmp_path_factory.mktemp("models") / "exact_bounds_models.py", "exact_bounds_models", source
    )
    yield module.BoundsArgs
    sys.modules.pop("exact_bounds_models", None)


def accepts(model: Any, field: str, value: Any) -> bool:
    from pydantic import ValidationError

    try:
        model(**{field: value})
    except ValidationError:
        return False
    return True


def near(bound: float) -> st.SearchStrategy[Any]:
    """Integers within a few units of `bound`, the floats nearest them, and the floats just beside."""
    whole = st.integers(-5, 5).map(lambda d: int(bound) + d)
    return st.one_of(
        whole,
        whole.map(float),
        st.sampled_from([math.nextafter(float(bound), math.inf), math.nextafter(float(bound), -math.inf)]),
    )


@settings(max_examples=examples(400), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_the_model_decides_as_the_json_schema_does_near_the_bound(models: Any, data: st.DataObject) -> None:
    fields = field_schemas()
    field = data.draw(st.sampled_from(sorted(fields)))
    schema = fields[field]
    bound = next(v for k, v in schema.items() if k in KEYWORDS)
    value = data.draw(near(bound))
    expected = jsonschema_rs.validator_for(schema).is_valid(value)
    assert accepts(models, field, value) is expected, (field, schema, value, expected)


@pytest.mark.parametrize("field", ["n0_maximum", "n3_exclusiveMinimum", "n9_minimum"])
def test_a_nullable_number_takes_null(models: Any, field: str) -> None:
    schema = field_schemas()[field]
    assert jsonschema_rs.validator_for(schema).is_valid(None)
    assert accepts(models, field, None)


def test_a_built_package_states_the_exact_bound(tmp_path: Path) -> None:
    """End to end: a spec's ``minimum: 9007199254740993`` on a number property is written so in the
    built package's models.py, which imports and decides as the runtime's validator does over the
    MCP catalog's input schema."""
    from tests.support.build import build

    spec = tmp_path / "spec.json"
    body = {
        "type": "object",
        "properties": {"a": {"type": "number", "minimum": 2**53 + 1}},
        "required": ["a"],
    }
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.1.0",
                "info": {"title": "t", "version": "1"},
                "servers": [{"url": "https://api.example.com"}],
                "paths": {
                    "/x": {
                        "post": {
                            "operationId": "doThing",
                            "requestBody": {
                                "required": True,
                                "content": {"application/json": {"schema": body}},
                            },
                            "responses": {"200": {"description": "ok"}},
                        }
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    built = build(tmp_path, spec, name="exactpkg", emit="mcp,policy,python")
    text = (built.out / "models.py").read_text(encoding="utf-8")
    assert "ge=9007199254740993" in text and "9007199254740992.0" not in text
    module = import_source(tmp_path / "exactpkg_models.py", "exactpkg_models", text)
    try:
        model = next(getattr(module, c) for c in dir(module) if c.startswith("PreviewDoThing"))
        read = model.model_json_schema()["properties"]["a"]
        assert (read["type"], read["minimum"]) == ("number", 2**53 + 1)
        validator = jsonschema_rs.validator_for(built.tool("mcp", "preview_do_thing")["inputSchema"])
        for a in (2**53, 2**53 + 1, float(2**53), 2**53 + 2):
            assert accepts(model, "a", a) is validator.is_valid({"a": a}), a
    finally:
        sys.modules.pop("exactpkg_models", None)
