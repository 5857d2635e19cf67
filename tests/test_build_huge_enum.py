"""A spec with a huge ``enum`` builds in seconds, and the runtime still holds the enum.

An enum's values are not schema nodes, so ``budgets.max_schema_nodes`` does not bound them: a
parameter of 100,000 allowed values (a 1.3 MB spec) passed the budgets, and the Python package's
argument models turned it into a 100,000-member enum class that the model generator and the
formatter took minutes over (300,000 values: more than five minutes, 0.9 GB), while every other
artifact took 3 s. The models leave an enum that long to the runtime's input schema, which refuses
a value outside it as before.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.support.build import build

from toolgen.emit.python import MAX_MODEL_ENUM
from toolgen.runtime import Actor, Registry

VALUES = 100_000


def _spec(folder: Path, count: int) -> Path:
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "codes", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/codes": {
                "get": {
                    "operationId": "getCode",
                    "parameters": [
                        {
                            "name": "code",
                            "in": "query",
                            "required": True,
                            "schema": {"type": "string", "enum": [f"c{i}" for i in range(count)]},
                        },
                        {"name": "small", "in": "query", "schema": {"type": "string", "enum": ["a", "b"]}},
                    ],
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {
                                "application/json": {
                                    "schema": {"type": "object", "properties": {"name": {"type": "string"}}}
                                }
                            },
                        }
                    },
                }
            }
        },
    }
    path = folder / "openapi.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


def test_a_huge_enum_builds_quickly_and_is_still_enforced(tmp_path: Path) -> None:
    spec = _spec(tmp_path, VALUES)
    started = time.monotonic()
    built = build(
        tmp_path,
        spec,
        "tools:\n  get_code: {operation: getCode, effect: read, permission: [c:read], "
        "description: Look up a code.}\n",
        name="codes",
        emit="mcp,policy,python",
    )
    spent = time.monotonic() - started
    assert spent < 90, f"the build took {spent:.0f} s"
    models = (built.out / "models.py").read_text(encoding="utf-8")
    assert "c99999" not in models, "the models hold the huge enum"
    assert "Literal['a', 'b']" in models or "= 'a'" in models or '"a"' in models or "'a'" in models
    compiled = subprocess.run(
        [sys.executable, "-c", f"import ast,sys; ast.parse(open({str(built.out / 'models.py')!r}).read())"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert compiled.returncode == 0, compiled.stderr
    reg = Registry.from_dir(built.out, base_url="http://127.0.0.1:9")
    refused = reg.call("get_code", {"code": "nope"}, actor=Actor.of("c", ["c:read"]))
    assert refused.error is not None and refused.error.code == "invalid_arguments", refused.to_json()
    assert refused.error.details["pointer"] == "/code"
    reg.close()


@pytest.mark.parametrize("count", [MAX_MODEL_ENUM])
def test_an_enum_within_the_bound_stays_in_the_models(tmp_path: Path, count: int) -> None:
    spec = _spec(tmp_path, count)
    built = build(
        tmp_path,
        spec,
        "tools:\n  get_code: {operation: getCode, effect: read, permission: [c:read], "
        "description: Look up a code.}\n",
        name="codes",
        emit="mcp,policy,python",
    )
    assert f"c{count - 1}" in (built.out / "models.py").read_text(encoding="utf-8")
