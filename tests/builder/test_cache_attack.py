"""The build cache against edits that reach a tool through another one: a project copied twice, one
built with the cache and one with ``--no-cache`` after every edit, compared by exit code, printed
findings and every file written. Each test here is an input sequence that once gave the two builds
different bytes, or one that was tried and held."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.builder.test_cache import _tree
from tests.support.build import REPO, run


@pytest.fixture(autouse=True)
def cache_on(_no_build_cache: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache on (the suite runs without it), each project's own `.toolgen/cache`, and a secret of
    this test's own."""
    monkeypatch.setenv("TOOLGEN_CACHE", "1")
    monkeypatch.delenv("TOOLGEN_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))


class Twins:
    """One project in two folders: `cached` built with the cache, `cold` with ``--no-cache``."""

    def __init__(self, root: Path) -> None:
        self.cached, self.cold = root / "cached", root / "cold"

    def write(self, files: dict[str, str]) -> None:
        for project in (self.cached, self.cold):
            for rel, text in files.items():
                path = project / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")

    def _build(self, project: Path, *flags: str) -> tuple[int, str]:
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(project)
            result = run("build", "-q", *flags)
        return result.exit_code, result.output

    def compare(self) -> tuple[int, str]:
        """Build both; assert the same exit code, findings and files; the cached build's result."""
        cached, cold = self._build(self.cached), self._build(self.cold, "--no-cache")
        assert cached == cold
        assert _tree(self.cached / "out") == _tree(self.cold / "out")
        if cached[0] == 0:
            assert self._build(self.cached, "--check")[0] == 0
        return cached


def _project(name: str, intent_map: str) -> str:
    return f"toolgen: 1\napis:\n  - name: {name}\n    intent_map: {intent_map}\n    out: out/{name}\n"


# -- a schema nested past the depth budget, reached by two operations -------------------------------


def _deep_spec() -> dict[str, Any]:
    """Two operations whose request bodies reach component `S` (3 levels): `makeA` at its root, `makeB`
    two levels down, past a budget of 4 levels."""

    def body(schema: dict[str, Any]) -> dict[str, Any]:
        return {"required": True, "content": {"application/json": {"schema": schema}}}

    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
    nested = {"type": "object", "properties": {"y": {"$ref": "#/components/schemas/S"}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Deep", "version": "1"},
        "servers": [{"url": "https://deep.example.com"}],
        "paths": {
            "/a": {
                "post": {
                    "operationId": "makeA",
                    "requestBody": body({"$ref": "#/components/schemas/S"}),
                    "responses": ok,
                }
            },
            "/b": {
                "post": {
                    "operationId": "makeB",
                    "requestBody": body({"type": "object", "properties": {"x": nested}}),
                    "responses": ok,
                }
            },
        },
        "components": {
            "schemas": {
                "S": {
                    "type": "object",
                    "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}},
                }
            }
        },
    }


def _deep_map(b_intent: str) -> str:
    return (
        "toolgen: 1\nspec: deep.json\napi: {name: deep}\nbudgets: {max_schema_depth: 4}\ntools:\n"
        "  make_a: {operation: makeA, effect: write, permission: deep:write, approval: required,\n"
        "           idempotency: {key: action_id, send_as: none}, description: Make an A.}\n" + b_intent
    )


@pytest.mark.parametrize(
    "before, after",
    [
        (  # an explicit intent: its error is printed where the budget was passed
            "  make_b: {operation: makeB, effect: read, description: One.}\n",
            "  make_b: {operation: makeB, effect: read, description: Two.}\n",
        ),
        (  # an include group: the operation skipped with a warning, in the findings and REPORT.md
            "include: [{match: makeB, prefix: x_}]\n",
            "include: [{match: makeB, prefix: y_}]\n",
        ),
    ],
)
def test_a_schema_too_deep_is_located_alike_whichever_operation_was_lowered_first(
    tmp_path: Path, before: str, after: str
) -> None:
    """`makeA` converts `S` first in a build without the cache; after an edit of `makeB`'s intent alone,
    a cached build takes `makeA`'s tools whole and converts `S` first for `makeB`, two levels down. The
    converter once raised `schema-too-large` at the level inside `S` where the budget was passed when
    it walked `S` itself, and at `makeB`'s body when it found `S` converted already: the two builds
    printed the finding at different places (and wrote them into REPORT.md)."""
    twins = Twins(tmp_path)
    twins.write(
        {"toolgen.yaml": _project("deep", "deep.yaml"), "deep.json": json.dumps(_deep_spec(), indent=1)}
    )
    twins.write({"deep.yaml": _deep_map(before)})
    twins.compare()
    twins.write({"deep.yaml": _deep_map(after)})
    code, output = twins.compare()
    assert "#/paths/~1b/post/requestBody/content/application~1json/schema" in output
    assert code == (2 if "make_b" in after else 0)


# -- a library that turns a format check on ---------------------------------------------------------

_HOSTS_SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Hosts", "version": "1"},
    "servers": [{"url": "https://hosts.example.com"}],
    "paths": {
        "/hosts": {
            "get": {
                "operationId": "getHost",
                "parameters": [
                    {
                        "name": "host",
                        "in": "query",
                        "required": True,
                        "schema": {"type": "string", "format": "hostname"},
                    }
                ],
                "responses": {"200": {"description": "ok"}},
            }
        }
    },
}
_HOSTS_MAP = """toolgen: 1
spec: hosts.json
api: {name: hosts}
tools:
  get_host:
    operation: getHost
    effect: read
    permission: hosts:read
    description: Look up one host by its name.
    args:
      host: {schema: {type: string, enum: [example.com, "not a host!"]}}
"""
#: a stand-in for the fqdn library: with it importable, jsonschema's format checker checks `hostname`
_FQDN = (
    "class FQDN:\n"
    "    def __init__(self, name, min_labels=1):\n"
    "        self.is_valid = bool(name) and all(c.isalnum() or c in '.-' for c in name)\n"
)


def _process_build(project: Path, path: list[Path], *flags: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in [REPO / "generator", *path])}
    proc = subprocess.run(
        [sys.executable, "-m", "toolgen", "build", "-q", *flags],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_a_format_library_on_the_path_is_part_of_the_cache_key(tmp_path: Path) -> None:
    """Whether an `args:` narrowing is proved depends on the formats jsonschema's format checker
    checks, and it checks `hostname` only when the fqdn library imports. The cache's key of toolgen's
    code named the versions of its libraries but not these, so once fqdn appeared, a cached build (here
    answered by its manifest) still wrote the narrowing a build without the cache refuses."""
    project, library = tmp_path / "project", tmp_path / "library"
    project.mkdir()
    library.mkdir()
    (library / "fqdn.py").write_text(_FQDN, encoding="utf-8")
    (project / "toolgen.yaml").write_text(_project("hosts", "hosts.yaml"), encoding="utf-8")
    (project / "hosts.json").write_text(json.dumps(_HOSTS_SPEC, indent=1), encoding="utf-8")
    (project / "hosts.yaml").write_text(_HOSTS_MAP, encoding="utf-8")
    assert _process_build(project, [])[0] == 0  # without a hostname check the narrowing holds
    cached = _process_build(project, [library])
    cold = _process_build(project, [library], "--no-cache")
    assert cold[0] == 2 and "arg-narrowing-unproved" in cold[1]
    assert cached == cold


def _environment_key(path: list[Path]) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in [REPO / "generator", *path])}
    code = "from toolgen.builder.cache import environment_key; print(environment_key())"
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return proc.stdout.strip()


@pytest.mark.parametrize("name", ["cel-python", "lark", "fqdn", "inflect"])
def test_the_key_of_toolgens_code_names_the_libraries_that_decide_what_builds(
    tmp_path: Path, name: str
) -> None:
    """cel-python (and lark, its parser) decide which approval conditions check, and so whether an
    intent builds or is refused; fqdn whether a `hostname` narrowing is proved; inflect the singular
    class names datamodel-code-generator gives array items in models.py. Another version of one
    of them on the path (a distribution's metadata first on ``sys.path``) is another key: a cached
    build never answers for code that would decide otherwise."""
    info = tmp_path / f"{name.replace('-', '_')}-99.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 99.0\n", encoding="utf-8")
    assert _environment_key([]) != _environment_key([tmp_path])
