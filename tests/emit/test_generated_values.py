"""Hostile values in a spec reach the generated package intact: the package imports, and what its
argument models hold equals what the spec says.

Each test builds a spec in-process with every artifact, writes the package and imports it in a separate
Python (`_model_schemas`), then compares the JSON Schema pydantic reads back from each argument model
with the tool's canonical input schema: bounds past a float's range or 2**53, and hostile enum values,
property names and patterns (quotes, backslashes, control and separator characters, NUL, bidi
overrides, coding cookies). The last test builds a hostile spec twice, under two hash seeds, and
compares the bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

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
        ({"type": "number", "maximum": HUGE}, "maximum", HUGE),
        ({"type": "number", "exclusiveMinimum": -(2**53) - 1}, "exclusiveMinimum", -(2**53) - 1),
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


# --- hostile text: enum values, property names and patterns read back from the argument models -----

#: text a Python literal can go wrong on, each alone and in runs
_NASTY = [
    '"',
    "'",
    '"""',
    "'''",
    "\\",
    "\\'",
    "a\\",
    "\n",
    "\r",
    "\t",
    "\x0b",
    "\x0c",
    "\x08",
    "\x00",
    "\x7f",
    "\x85",
    "\u2028",
    "\u2029",
    "\u202e",
    "\u200b",
    "\ufeff",
    "\\N{BULLET}",
    "\\x00",
    "\\u0041",
    "# -*- coding: latin-1 -*-",
    "{x}",
    "%s",
    "é",
    "\U0001f600",
]
_TEXT = st.lists(st.sampled_from(_NASTY) | st.text(max_size=4), min_size=1, max_size=5).map("".join)
_PATTERN = st.lists(
    st.sampled_from([*_NASTY, "a", "[a']", "(?=a)", "\\d", "\\n", "x+", "^", "$"]), max_size=5
).map("".join)


def _leaves(node: Any, key: str) -> list[Any]:
    """Every value of `key` in `node` (enum lists as lists of JSON texts, sorted: order may change)."""
    out: list[Any] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                if k == "properties" and isinstance(v, dict):
                    if key == "properties":
                        out.extend(v)
                    stack.extend(v.values())
                elif k == key:
                    out.append(sorted(json.dumps(x) for x in v) if key == "enum" else v)
                else:
                    stack.append(v)
        elif isinstance(item, list):
            stack.extend(item)
    return sorted(out, key=json.dumps)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    enum=st.lists(_TEXT, min_size=1, max_size=4, unique=True),
    names=st.lists(_TEXT, min_size=1, max_size=3, unique=True),
    patterns=st.lists(_PATTERN, min_size=1, max_size=3),
)
def test_hostile_text_reads_back_from_the_argument_models_exactly(
    tmp_path_factory: pytest.TempPathFactory, enum: list[str], names: list[str], patterns: list[str]
) -> None:
    """The enum values, property names and patterns the canonical input schema holds (what survived
    the spec checks: a pattern that does not compile is dropped with a warning) are exactly what the
    imported argument models give back."""
    props: dict[str, Any] = {"e": {"type": "string", "enum": enum}}
    props.update({f"n{i}{name}": {"type": "string"} for i, name in enumerate(names)})
    props.update({f"p{i}": {"type": "string", "pattern": p} for i, p in enumerate(patterns)})
    spec = _spec({"type": "object", "properties": props})
    built, root = _build(tmp_path_factory.mktemp("text"), spec)
    models = _model_schemas(root)
    for tool in built.ir.tools:
        for key in ("enum", "pattern", "properties"):
            want, got = _leaves(tool.input_schema, key), _leaves(models[tool.name], key)
            if key == "properties":  # pydantic names a property by its alias: the spec's name
                got = [g for g in got if g in want or not g]
            if key == "pattern":  # two patterns one module cannot tell apart (`exact_patterns`)
                want, got = _told_apart(want), _told_apart(got, like=want)
            assert got == want, (tool.name, key)


def _told_apart(patterns: list[str], like: list[str] | None = None) -> list[str]:
    """`patterns`, each replaced by its escaped text when `like` (default: `patterns`) holds another
    pattern of the same escaped text (a tab and ``\\t``): the one case `exact_patterns` leaves."""
    from datamodel_code_generator._python_syntax import RAW_SINGLE_QUOTED_ESCAPES

    def escaped(p: str) -> str:
        return p.translate(RAW_SINGLE_QUOTED_ESCAPES)

    shared = Counter(escaped(p) for p in set(like if like is not None else patterns))
    return sorted(escaped(p) if shared[escaped(p)] > 1 else p for p in patterns)


def test_a_hostile_spec_builds_byte_identically_under_any_hash_seed(tmp_path: Path) -> None:
    """The same hostile spec, built by two processes with different hash seeds (set and dict orders
    that depend on string hashing differ between them), gives the same bytes in every file."""
    props: dict[str, Any] = {
        f"p{i}{text}": {"type": "string", "enum": _NASTY[i:]} for i, text in enumerate(_NASTY)
    }
    props.update(
        {f"q{i}": {"type": "string", "pattern": p} for i, p in enumerate(["'", "a\tb", "\\'", "(?=a)'"])}
    )
    spec = _spec({"type": "object", "properties": props, "title": "\"\"\"'''\\", "description": "\u2028\x00"})
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    (tmp_path / "x.yaml").write_text(
        'toolgen: 1\nspec: spec.json\napi: {name: pkg}\ninclude: [{match: "*"}]\n', "utf-8"
    )
    trees = []
    for seed in ("1", "2"):
        out = f"out{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "TOOLGEN_CACHE": "0"}
        done = subprocess.run(
            [sys.executable, "-m", "toolgen", "build", "x.yaml", "--out", out, "-q"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        trees.append({p.name: p.read_bytes() for p in sorted((tmp_path / out).iterdir())})
    assert trees[0].keys() == trees[1].keys() and "models.py" in trees[0]
    assert [name for name in trees[0] if trees[0][name] != trees[1][name]] == []
