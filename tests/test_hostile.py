"""Hostile input: generated OpenAPI documents and intent maps with nasty text everywhere it can reach output.

Hypothesis builds small documents whose descriptions, summaries, titles, enum values, parameter and
property names, paths, operationIds and server URLs carry quotes of every kind, triple quotes,
backslashes, newlines and ``\\r``, U+2028, jinja delimiters, ``${}``, Python keywords and builtins,
names that collide only after sanitising (``a-b``/``a_b``/``a.b``), very long strings and non-ASCII
text, plus code that would create a canary file if it ever ran. Each document is built in-process with
every artifact (the Python package included) and:

* every generated ``.py`` compiles, and importing the package (and its models) in a separate process
  runs no injected statement (the canary file never appears);
* every JSON output parses and every catalog passes the dialect checker;
* tool names are unique and valid, argument names are valid;
* toolgen never fails with anything but a located `DiagnosticError` (and then the CLI exits 2 and
  writes nothing).

The default profile keeps the run short; ``@pytest.mark.slow`` variants run more examples.
"""

from __future__ import annotations

import json
import keyword
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.builder.build import build_api
from toolgen.builder.project import ALL_ARTIFACTS
from toolgen.diagnostics import DiagnosticError
from toolgen.dialects import check_catalog
from toolgen.naming import ARG_NAME_RE, TOOL_NAME_RE

CANARY_NAME = "CANARY_INJECTED"

# --- hostile text ---------------------------------------------------------------------------------

_FRAGMENTS = [
    '"',
    "'",
    '"""',
    "'''",
    "`",
    "\\",
    "\\n",
    "\n",
    "\r",
    "\r\n",
    "\t",
    "\u2028",
    "\u2029",
    "\x0b",
    "\x0c",
    "{{ 7*7 }}",
    "{% raw %}",
    "{%- endraw -%}",
    "{# c #}",
    "${HOME}",
    "$(id)",
    "%s",
    "%(x)s",
    "{0}",
    "{}",
    "#",
    "# -*- coding: latin-1 -*-",
    "\\x00",
    "\\u0041",
    "</script>",
    "<!--",
    "-->",
    "|",
    "*",
    "_",
    "[x](y)",
    "é",
    "日本語",
    "\U0001f600",
    "\u202e",
    "\u200b",
    "\ufeff",
    "ß",
    "İ",
    "None",
    "True",
    "class",
    "import",
    "lambda",
    "__import__",
    "__builtins__",
    "self",
    "print",
    "exec",
]


def _payload(canary: str) -> list[str]:
    """Strings that would run code (create the canary file) if they ever ended up as Python source."""
    touch = f"__import__('pathlib').Path({canary!r}).touch()"
    return [
        f'"); {touch} #',
        f"'); {touch} #",
        f'"""\n{touch}\n"""',
        f"'''\n{touch}\n'''",
        f"\\\n{touch}",
        f"\u2028{touch}",
        f"\r{touch}",
        f"{{{{ {touch} }}}}",
        f"{{% set x = {touch} %}}",
        f"${{{touch}}}",
        f"x = 1\n{touch}\n",
    ]


def hostile_text(canary: str, *, min_size: int = 0) -> st.SearchStrategy[str]:
    nasty = st.sampled_from(_FRAGMENTS + _payload(canary))
    joined = st.lists(nasty | st.text(min_size=1, max_size=8), min_size=1, max_size=6).map("".join)
    long = st.builds(lambda s, n: (s * n)[:5000], nasty, st.integers(200, 2000))
    return joined | long if min_size else st.just("") | joined | long


_KEYWORDISH = sorted(
    set(keyword.kwlist)
    | {
        "print",
        "id",
        "type",
        "list",
        "dict",
        "self",
        "cls",
        "None",
        "True",
        "__init__",
        "__class__",
        "model_config",
        "schema",
        "json",
        "copy",
    }
)
_COLLIDING = ["a-b", "a_b", "a.b", "a b", "A-B", "a+b", "a__b", "a--b", "_a_b_", "a[]b", "a<b", "a>b", "a=b"]


def hostile_name(canary: str) -> st.SearchStrategy[str]:
    return (
        st.sampled_from(_KEYWORDISH + _COLLIDING)
        | hostile_text(canary, min_size=1)
        | st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=1, max_size=70)
    )


# --- documents ------------------------------------------------------------------------------------


@st.composite
def hostile_document(draw: Any, canary: str) -> dict[str, Any]:
    text = hostile_text(canary)
    name = hostile_name(canary)
    enum = st.lists(text | st.integers() | st.none() | st.booleans(), min_size=1, max_size=6)

    def schema(depth: int = 0) -> Any:
        kind = draw(
            st.sampled_from(
                ["string", "integer", "boolean", "enum", "object", "array"]
                if depth < 2
                else ["string", "integer", "enum"]
            )
        )
        out: dict[str, Any]
        if kind == "enum":
            out = {"enum": draw(enum)}
        elif kind == "object":
            props = {draw(name): schema(depth + 1) for _ in range(draw(st.integers(0, 4)))}
            out = {"type": "object", "properties": props}
            if props and draw(st.booleans()):
                out["required"] = [draw(st.sampled_from(sorted(props)))]
        elif kind == "array":
            out = {"type": "array", "items": schema(depth + 1)}
        else:
            out = {"type": kind}
        for key in ("description", "title"):
            if draw(st.booleans()):
                out[key] = draw(text)
        if draw(st.booleans()):
            out["nullable"] = True
        return out

    paths: dict[str, Any] = {}
    for i in range(draw(st.integers(1, 4))):
        segment = draw(hostile_text(canary, min_size=1)).replace("/", "_").replace("{", "(").replace("}", ")")
        param = draw(name).replace("{", "(").replace("}", ")").replace("/", "_") or "p"
        path = f"/r{i}/{segment}/{{{param}}}"
        item: dict[str, Any] = {}
        for method in draw(
            st.lists(
                st.sampled_from(["get", "post", "put", "patch", "delete", "head"]),
                min_size=1,
                max_size=3,
                unique=True,
            )
        ):
            op: dict[str, Any] = {
                "parameters": [
                    {
                        "name": param,
                        "in": "path",
                        "required": True,
                        "schema": schema(2),
                        "description": draw(text),
                    }
                ],
                "responses": {
                    "200": {"description": draw(text), "content": {"application/json": {"schema": schema()}}}
                },
            }
            for _ in range(draw(st.integers(0, 3))):
                op["parameters"].append(
                    {
                        "name": draw(name),
                        "in": draw(st.sampled_from(["query", "header"])),
                        "schema": schema(1),
                        "description": draw(text),
                    }
                )
            if draw(st.booleans()):
                op["operationId"] = draw(name | st.sampled_from(["get-x", "get_x", "get.x", "getX"]))
            for key in ("summary", "description"):
                if draw(st.booleans()):
                    op[key] = draw(text)
            if method in ("post", "put", "patch") and draw(st.booleans()):
                media = draw(
                    st.sampled_from(
                        ["application/json", "application/x-www-form-urlencoded", "multipart/form-data"]
                    )
                )
                op["requestBody"] = {
                    "required": draw(st.booleans()),
                    "content": {media: {"schema": schema()}},
                }
            if draw(st.booleans()):
                op["tags"] = [draw(text)]
            item[method] = op
        paths[path] = item
    doc: dict[str, Any] = {
        "openapi": draw(st.sampled_from(["3.0.3", "3.1.0"])),
        "info": {"title": draw(text), "version": draw(text), "description": draw(text)},
        "servers": [{"url": "https://api.example.com/" + draw(text)}],
        "paths": paths,
    }
    return doc


@st.composite
def hostile_intent_body(draw: Any, canary: str, doc: dict[str, Any]) -> str:
    """The intent map after its header: include everything; now and then hostile `api` text and an
    explicit write tool with hostile description/title (keyed by a valid name, or by a hostile one that
    must be refused with a located error)."""
    text = hostile_text(canary)
    body = 'include: [{match: "*"}]\n'
    if draw(st.booleans()):
        body += (
            f"api: {{name: x, title: {_yaml_str(json.dumps(draw(text), ensure_ascii=False))}, "
            f"base_url: {_yaml_str(json.dumps('https://h/' + draw(text), ensure_ascii=False))}}}\n"
        )
    if draw(st.booleans()):
        path, item = next(iter(doc["paths"].items()))
        method = next(iter(item))
        key = draw(st.sampled_from(["hostile_tool", "class", "None"]) | hostile_name(canary))
        tool = {
            "operation": f"{method.upper()} {path}",
            "effect": draw(st.sampled_from(["read", "write", "destructive"])),
            "description": draw(text),
            "title": draw(text),
            "permission": draw(st.sampled_from(["x:write", "x:read"]) | text),
        }
        if tool["effect"] != "read":
            tool["approval"] = "required"
        body += (
            "tools:\n  "
            + _yaml_str(json.dumps(key, ensure_ascii=False))
            + ": "
            + _yaml_str(json.dumps(tool, ensure_ascii=False))
            + "\n"
        )
    return body


def _yaml_str(json_text: str) -> str:
    """JSON text as YAML flow text: characters YAML treats as line breaks or does not allow raw (JSON
    allows them raw) are escaped; other non-ASCII stays raw, since YAML does not pair escaped surrogates."""
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json_text)


_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


# --- the importer: one child process imports every generated package -------------------------------


class _Importer:
    """A Python child process that imports generated packages on request (one line per request), so
    each Hypothesis example gets a real, separate-process import without paying interpreter start-up."""

    SCRIPT = r"""
import importlib, sys, traceback
for line in sys.stdin:
    root, name = line.rstrip("\n").split("\t")
    sys.path.insert(0, root)
    try:
        pkg = importlib.import_module(name)
        importlib.import_module(name + ".models")
        assert isinstance(pkg.MCP_TOOLS, list) and isinstance(pkg.POLICY, dict)
        for tool in pkg.TOOL_NAMES:
            pkg.argument_model(tool)
        print("ok", flush=True)
    except BaseException:
        print("error " + traceback.format_exc().replace("\n", "\\n"), flush=True)
    finally:
        sys.path.remove(root)
"""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", self.SCRIPT],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lock = threading.Lock()

    def load(self, root: Path, name: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with self.lock:
            self.proc.stdin.write(f"{root}\t{name}\n")
            self.proc.stdin.flush()
            return self.proc.stdout.readline().strip()

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def importer() -> Iterator[_Importer]:
    imp = _Importer()
    yield imp
    imp.close()


# --- the property ---------------------------------------------------------------------------------

_counter = iter(range(10**9))


def _check_one(tmp: Path, importer: _Importer, doc: dict[str, Any], intent_body: str, canary: Path) -> None:
    n = next(_counter)
    work = tmp / f"case{n}"
    work.mkdir()
    spec = work / "spec.json"
    spec.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    intent = work / "x.yaml"
    header = f"toolgen: 1\nspec: {json.dumps(str(spec))}\n"
    if "\napi:" not in "\n" + intent_body:
        header += "api: {name: x}\n"
    intent.write_text(header + intent_body, encoding="utf-8")
    pkg_name = f"hostile_pkg{n}"
    try:
        built = build_api(intent, work / pkg_name, emit=ALL_ARTIFACTS)
    except DiagnosticError as exc:  # a refused document: every error located in a file
        event("refused: " + ",".join(sorted({d.code for d in exc.diagnostics if d.severity == "error"})))
        assert exc.diagnostics
        for d in exc.diagnostics:
            assert d.location is not None and d.location.file, d.render()
        return
    event(f"built: {len(built.ir.tools) // 5 * 5}+ tools, {len(built.ir.skipped)} skipped")
    for s_ in built.ir.skipped:
        event("skipped: " + s_.code)
    # JSON parses, catalogs conform
    for name, data in built.files.items():
        if name.endswith(".json"):
            json.loads(data.decode("utf-8"))
    for dialect, tools in built.catalogs.by_dialect().items():
        problems = check_catalog(dialect, tools, max_tools=None)
        assert not problems, [p.render() for p in problems[:5]]
    # names unique and valid
    names = [t.name for t in built.ir.tools]
    assert len(names) == len(set(names))
    by_name = {t.name: t for t in built.ir.tools}
    for tool in built.ir.tools:
        assert TOOL_NAME_RE.match(tool.name), tool.name
        for arg in tool.input_schema.get("properties", {}):
            assert ARG_NAME_RE.match(arg), arg
        declared = set(tool.input_schema.get("properties", {}))
        if tool.policy.record_arguments == "preview":  # its arguments are its preview tool's, stored
            key = tool.policy.idempotency.arg if tool.policy.idempotency is not None else None
            assert tool.policy.pair is not None and declared == {"preview_id"} | ({key} if key else set())
            declared |= set(by_name[tool.policy.pair].input_schema.get("properties", {}))
        assert {b.arg for b in tool.policy.bindings} <= declared
    covered, skipped = set(built.ir.covered), {s.operation.pointer for s in built.ir.skipped}
    assert covered | skipped == {op.pointer for op in built.ir.operations}
    # Python compiles and imports (in another process) without running injected code
    package = work / pkg_name
    package.mkdir()
    for name, data in built.files.items():
        (package / name).write_bytes(data)
        if name.endswith(".py"):
            compile(data.decode("utf-8"), str(package / name), "exec")
    result = importer.load(work, pkg_name)
    assert result == "ok", result.replace("\\n", "\n")
    assert not canary.exists(), "generated code ran an injected statement"


def _run(tmp_path_factory: pytest.TempPathFactory, importer: _Importer, data: st.DataObject) -> None:
    tmp = tmp_path_factory.mktemp("hostile")
    canary = tmp / CANARY_NAME
    doc = data.draw(hostile_document(str(canary)), label="document")
    body = data.draw(hostile_intent_body(str(canary), doc), label="intent map")
    _check_one(tmp, importer, doc, body, canary)


_FAST = settings(
    max_examples=examples(30), deadline=None, suppress_health_check=list(HealthCheck), database=None
)
_SLOW = settings(
    max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck), database=None
)


@_FAST
@given(data=st.data())
def test_hostile_documents_build_safely(
    tmp_path_factory: pytest.TempPathFactory, importer: _Importer, data: st.DataObject
) -> None:
    _run(tmp_path_factory, importer, data)


@pytest.mark.slow
@_SLOW
@given(data=st.data())
def test_hostile_documents_build_safely_many(
    tmp_path_factory: pytest.TempPathFactory, importer: _Importer, data: st.DataObject
) -> None:
    _run(tmp_path_factory, importer, data)


# --- broken documents: a located error (exit 2) and nothing written, or a build ---------------------

_GARBAGE: list[Any] = [
    None,
    42,
    -1.5,
    True,
    "x",
    "",
    [],
    {},
    [1, "a"],
    {"$ref": "#/nope"},
    {"$ref": "http://example.com/x.json#/a"},
    {"$ref": "#/paths"},
    {"$ref": 5},
    {"type": "object", "properties": []},
    {"type": ["string", 3]},
    {"allOf": [{"$ref": "#"}]},
]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


@st.composite
def broken_document(draw: Any, canary: str) -> dict[str, Any]:
    doc: dict[str, Any] = draw(hostile_document(canary))
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from([p for p in _paths(doc) if p]))
        parent: Any = doc
        for key in where[:-1]:
            parent = parent[key]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[where[-1]]
        else:
            parent[where[-1]] = json.loads(json.dumps(draw(st.sampled_from(_GARBAGE))))
    return doc


def _check_broken(tmp: Path, doc: dict[str, Any]) -> None:
    from click.testing import CliRunner

    from toolgen.cli import main

    n = next(_counter)
    work = tmp / f"broken{n}"
    work.mkdir()
    spec = work / "spec.json"
    spec.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    intent = work / "x.yaml"
    intent.write_text(
        f'toolgen: 1\nspec: {json.dumps(str(spec))}\napi: {{name: x}}\ninclude: [{{match: "*"}}]\n',
        encoding="utf-8",
    )
    out = work / "out"
    result = CliRunner().invoke(
        main,
        ["build", str(intent), "--out", str(out), "-q", "--emit", "openai,anthropic,mcp,policy,report"],
        catch_exceptions=False,
    )
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 1, 2), result.output  # 1: the build's lint findings include an error
    if result.exit_code in (1, 2):
        event("refused" if result.exit_code == 2 else "lint error")
        assert not out.exists()
        assert "nothing was written" in result.output
        errors = [line for line in result.output.splitlines() if "error[" in line]
        assert errors, result.output
        for line in errors:  # file:line:col (#pointer) or file (#pointer): every error names where
            assert line.startswith(("spec.json", str(spec), "x.yaml", str(intent), "../", "/")), line
            assert "(#" in line or ":" in line.split("error[")[0], line
    else:
        event("built")
        assert out.is_dir()


@settings(max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(data=st.data())
def test_broken_documents_are_refused_with_a_location(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    tmp = tmp_path_factory.mktemp("broken")
    _check_broken(tmp, data.draw(broken_document(str(tmp / CANARY_NAME)), label="document"))


@pytest.mark.slow
@settings(max_examples=examples(400), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(data=st.data())
def test_broken_documents_are_refused_with_a_location_many(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    tmp = tmp_path_factory.mktemp("broken")
    _check_broken(tmp, data.draw(broken_document(str(tmp / CANARY_NAME)), label="document"))
