"""Hostile values in a spec reach the generated package intact: the package imports, and what its
argument models hold equals what the spec says.

Each test builds a spec in-process with every artifact, writes the package and imports it in a separate
Python (`_model_schemas`), then compares the JSON Schema pydantic reads back from each argument model
with the tool's canonical input schema in `mcp.json`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolgen.builder.build import build_api
from toolgen.builder.project import ALL_ARTIFACTS
from toolgen.compile.schema.formats import MAX_COUNT

_READ_MODELS = r"""
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
pkg = importlib.import_module(sys.argv[2])
models = importlib.import_module(sys.argv[2] + ".models")
print(json.dumps({t: getattr(models, c).model_json_schema() for t, c in pkg.ARGUMENT_MODELS.items()}))
"""


def _spec(schema: dict[str, Any]) -> dict[str, Any]:
    """One JSON write operation whose request body is an object with the property `a` of `schema`."""
    body = {"type": "object", "properties": {"a": schema}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/x": {
                "post": {
                    "operationId": "doThing",
                    "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }


def _build(tmp: Path, spec: dict[str, Any]) -> tuple[Any, Path]:
    """Build `spec` (every artifact) and write the package `pkg` under `tmp`; (the build, tmp)."""
    (tmp / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    intent = tmp / "x.yaml"
    intent.write_text('toolgen: 1\nspec: spec.json\napi: {name: pkg}\ninclude: [{match: "*"}]\n', "utf-8")
    built = build_api(intent, tmp / "pkg", emit=ALL_ARTIFACTS)
    (tmp / "pkg").mkdir()
    for name, data in built.files.items():
        (tmp / "pkg" / name).write_bytes(data)
    return built, tmp


def _model_schemas(root: Path) -> dict[str, Any]:
    """Tool name -> the JSON Schema of its argument model, read by importing the package elsewhere."""
    done = subprocess.run(
        [sys.executable, "-c", _READ_MODELS, str(root), "pkg"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _property(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema of the property `a`, through an `anyOf` with null and a `$ref` to a definition."""
    prop = schema["properties"]["a"]
    for member in prop.get("anyOf", [prop]):
        if member.get("type") != "null":
            prop = member
    if "$ref" in prop:
        prop = schema["$defs"][prop["$ref"].rsplit("/", 1)[1]]
    return prop  # type: ignore[no-any-return]


HUGE = 10**400


@pytest.mark.parametrize(
    ("schema", "key", "read"),
    [
        ({"type": "string", "maxLength": HUGE}, "maxLength", MAX_COUNT),
        ({"type": "string", "minLength": 1e300}, "minLength", MAX_COUNT),
        ({"type": "array", "items": {"type": "string"}, "maxItems": HUGE}, "maxItems", MAX_COUNT),
        ({"type": "integer", "maximum": HUGE}, "maximum", HUGE),
        ({"type": "integer", "minimum": -HUGE}, "minimum", -HUGE),
        ({"type": "integer", "multipleOf": HUGE}, "multipleOf", HUGE),
    ],
)
def test_a_bound_beyond_any_float_builds_a_package_that_imports(
    tmp_path: Path, schema: dict[str, Any], key: str, read: int
) -> None:
    built, root = _build(tmp_path, _spec(schema))
    preview = next(t for t in built.ir.tools if t.name == "preview_do_thing")
    assert preview.input_schema["properties"]["a"][key] == read
    if read == MAX_COUNT:  # lowered, never dropped (a dropped minimum would accept more), and said
        assert any(d.code == "schema-bound-too-large" for d in built.diagnostics)
    assert _property(_model_schemas(root)["preview_do_thing"])[key] == read
