"""models.py: one class per distinct argument schema (aliases for the rest), and black applied a
class at a time, byte-identical to black over the whole module.

`black_by_class` is only an optimisation: its promise is equality with `black.format_str` on the
whole module, tried here on the committed packages' datamodel-code-generator output and on hostile
generated modules (odd strings, decorators, stub bodies, statements and comments between classes).
"""

from __future__ import annotations

import ast
import json
import keyword
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import REAL, REPO
from tests.support.profiles import examples

from toolgen.builder.build import build_api
from toolgen.emit.python import (
    ModelsPlan,
    _black,
    _check_model_names,
    _generate,
    black_by_class,
    models_plan,
    package_files,
)

APIS = ["tickets", "github", "stripe"]


def _ir(api: str, tmp: Path):  # type: ignore[no-untyped-def]
    return build_api(
        REPO / "intent_maps" / f"{api}.yaml", tmp / "out", emit=("policy",), base=REPO, run_lint=False
    ).ir


@pytest.mark.parametrize("api", APIS)
def test_by_class_equals_black_on_the_whole_generated_module(api: str, tmp_path: Path) -> None:
    plan = models_plan(_ir(api, tmp_path))
    source = _generate(plan.document)
    assert black_by_class(source) == _black(source)


@pytest.mark.parametrize("api", APIS)
def test_committed_models_are_what_the_package_makes(api: str, tmp_path: Path) -> None:
    models = package_files(_ir(api, tmp_path))["models.py"]
    assert models == (REPO / "generated" / api / "models.py").read_bytes()


def test_equal_argument_schemas_share_one_class_and_every_tool_keeps_its_name(tmp_path: Path) -> None:
    spec = tmp_path / "spec.json"
    ops = {}
    for i in range(4):
        ops[f"/things{i}"] = {
            "get": {
                "operationId": f"getThing{i}",
                "responses": {"200": {"description": "ok"}},
                "parameters": [{"name": "id", "in": "query", "required": True, "schema": {"type": "string"}}],
            },
            "post": {
                "operationId": f"makeThing{i}",
                "responses": {"200": {"description": "ok"}},
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {"name": {"type": "string", "description": f"text {i}"}},
                            }
                        }
                    },
                },
            },
        }
    spec.write_text(json.dumps({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": ops}))
    intent = tmp_path / "api.yaml"
    intent.write_text(
        f'toolgen: 1\nspec: {json.dumps(str(spec))}\napi: {{name: api}}\ninclude: [{{match: "*"}}]\n',
        encoding="utf-8",
    )
    built = build_api(intent, tmp_path / "out", emit=("python",), run_lint=False)
    models = built.files["models.py"].decode()
    tree = ast.parse(models)
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Args")]
    aliases = {
        n.targets[0].id: n.value.id  # type: ignore[attr-defined]
        for n in tree.body
        if isinstance(n, ast.Assign)
    }
    # descriptions differ, schemas do not (models.py holds no descriptions): one class per shape
    assert sorted(classes) == ["GetThing0Args", "PreviewMakeThing0Args", "RecordMakeThing0Args"]
    assert aliases["GetThing3Args"] == "GetThing0Args"
    assert aliases["RecordMakeThing2Args"] == "RecordMakeThing0Args"
    namespace: dict[str, object] = {}
    exec(compile(models, "models.py", "exec"), namespace)  # noqa: S102 - our own generated module
    for tool in built.ir.tools:
        name = "".join(part[:1].upper() + part[1:] for part in tool.name.split("_")) + "Args"
        assert name in namespace, name
    assert namespace["PreviewMakeThing3Args"] is namespace["PreviewMakeThing0Args"]


@pytest.mark.slow
@pytest.mark.skipif(
    not (REAL / "github-api.github.com.json").exists(), reason="../shared/specs/real is not available"
)
def test_by_class_equals_black_on_githubs_include_everything_module(tmp_path: Path) -> None:
    intent = tmp_path / "api.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(REAL / 'github-api.github.com.json'))}\n"
        'api: {name: api}\ninclude: [{match: "*"}]\n',
        encoding="utf-8",
    )
    plan = models_plan(build_api(intent, tmp_path / "out", emit=("policy",), run_lint=False).ir)
    assert len(plan.aliases) > 1000  # 1,807 tools, 812 distinct argument schemas
    source = _generate(plan.document)
    assert black_by_class(source) == _black(source)


# --- hostile modules -------------------------------------------------------------------------------

_text = st.text(
    alphabet=st.sampled_from([*string.printable, "\u2028", "\x0c", "é", "\u00a0", "'", '"', "\\"]),
    max_size=30,
)
_name = st.from_regex(r"[A-Z][A-Za-z0-9]{0,12}", fullmatch=True)
_field = st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n))


@st.composite
def _class(draw: st.DrawFn, name: str) -> str:
    decorator = draw(st.sampled_from(["", "@dataclass\n", "@some.decorator(x=1)\n"]))
    kind = draw(st.sampled_from(["pass", "dots", "fields", "enum", "long", "method"]))
    if kind == "pass":
        body = "    pass\n"
    elif kind == "method":
        body = draw(
            st.sampled_from(
                [
                    "    def f(self): ...\n",
                    "    def f(self):\n        ...\n",
                    "    async def f(self): ...\n",
                    "    def f(self): pass\n",
                    "    x = 1\n    def f(self): ...\n    y = 2\n",
                    "    class Inner:\n        def f(self): ...\n",
                ]
            )
        )
    elif kind == "dots":
        return f"{decorator}class {name}: ...\n"
    elif kind == "enum":
        values = draw(st.lists(_text, min_size=1, max_size=4))
        body = "".join(f"    v{i} = {value!r}\n" for i, value in enumerate(values))
    elif kind == "long":
        body = f"    field: constr(pattern=r'{'a' * draw(st.integers(60, 140))}') | None = None\n"
    else:
        fields = draw(st.lists(_field, min_size=1, max_size=4, unique=True))
        body = "    model_config = ConfigDict(extra='forbid',)\n" + "".join(
            f"    {f}: {draw(st.sampled_from(['int', 'str | None = None', 'list[int] = Field(..., min_length=1)']))}\n"
            for f in fields
        )
    return f"{decorator}class {name}(Base):\n{body}"


@st.composite
def _module(draw: st.DrawFn) -> str:
    names = draw(st.lists(_name, min_size=0, max_size=8, unique=True))
    parts = [draw(st.sampled_from(['"""Doc."""\n\nfrom x import y\n', "import os\n", "", "# header\n"]))]
    for name in names:
        gap = draw(
            st.sampled_from(
                [
                    "",
                    "\n",
                    "\n\n\n\n",
                    "X = 1\n",
                    "Y.model_rebuild()\n\n",
                    "# a comment\n",
                    "\n# a comment\n\n",
                    "if T:\n    import z\n",
                ]
            )
        )
        parts.append(gap + draw(_class(name)))
    parts.append(draw(st.sampled_from(["", "A = B\nC = D\n", "\n\nZ.model_rebuild()\n"])))
    return "".join(parts)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_module())
def test_by_class_equals_black_on_hostile_modules(source: str) -> None:
    assert black_by_class(source) == _black(source)


@pytest.mark.parametrize(
    "source",
    [
        # black adds no blank line between a stub (`...` body) function and a class or decorator right after it
        "class A:\n    def f(self): ...\nclass B:\n    pass\n",
        "class A:\n    def f(self):\n        ...\n@dec\nclass B:\n    pass\n",
        "class A:\n    class Inner:\n        async def f(self): ...\nclass B: pass\n",
        "def f(): ...\nclass B: pass\n",
        # black keeps a form feed between statements, and the module's first line ending
        "class A:\n    pass\n\x0c\nclass B:\n    pass\n",
        "class A:\r\n    pass\r\nclass B:\r\n    pass\r\n",
        # syntax newer than the running Python's `ast` (black parses it)
        "class A[T]:\n    x: T\nclass B: pass\n",
    ],
)
def test_by_class_equals_black_where_black_looks_across_classes(source: str) -> None:
    assert black_by_class(source) == _black(source)


# --- class names a spec's property names could take -------------------------------------------------


def _load_models(source: str) -> dict[str, object]:
    """models.py run as a module (pydantic's generic RootModel needs it in sys.modules)."""
    import sys
    import types

    module = types.ModuleType("toolgen_test_models")
    sys.modules[module.__name__] = module
    try:
        exec(compile(source, "models.py", "exec"), module.__dict__)  # noqa: S102 - our own generated module
    finally:
        del sys.modules[module.__name__]
    return module.__dict__


def _query_op(operation_id: str, params: dict[str, object]) -> dict[str, object]:
    return {
        "get": {
            "operationId": operation_id,
            "responses": {"200": {"description": "ok"}},
            "parameters": [{"name": n, "in": "query", "schema": s} for n, s in params.items()],
        }
    }


@pytest.mark.parametrize(
    "prop", ["get_zzz_args", "GetZzzArgs", "get-zzz-args2", "ＧｅｔＺｚｚＡｒｇｓ", "list_things_args"]
)
def test_a_property_named_like_a_tools_model_does_not_take_its_class(prop: str, tmp_path: Path) -> None:
    # datamodel-code-generator names an inline enum after its property, first come first served: an
    # earlier tool's property `get_zzz_args` took `GetZzzArgs` and ARGUMENT_MODELS named the enum;
    # `list_things_args` would be a class where `ListThingsArgs = ListOtherArgs` is an alias; a
    # fullwidth name is the same identifier once Python normalises it (NFKC)
    spec = tmp_path / "spec.json"
    enum = {"type": "string", "enum": ["x", "y"]}
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.1.0",
                "info": {"title": "t", "version": "1"},
                "paths": {
                    "/a": _query_op("getAaa", {prop: enum}),
                    "/o": _query_op("listOther", {"page": {"type": "integer"}}),
                    "/t": _query_op("listThings", {"page": {"type": "integer"}}),
                    "/z": _query_op("getZzz", {"id": {"type": "integer"}}),
                },
            }
        )
    )
    intent = tmp_path / "api.yaml"
    intent.write_text(
        f'toolgen: 1\nspec: {json.dumps(str(spec))}\napi: {{name: api}}\ninclude: [{{match: "*"}}]\n',
        encoding="utf-8",
    )
    _assert_each_tool_has_its_model(build_api(intent, tmp_path / "out", emit=("python",), run_lint=False))


def test_a_property_given_a_prefix_does_not_take_a_tools_model_name(tmp_path: Path) -> None:
    # datamodel-code-generator names the enum of a property `_x_args` (no leading letter) `FieldXArgs`
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.1.0",
                "info": {"title": "t", "version": "1"},
                "paths": {
                    "/a": _query_op("getAaa", {"_x_args": {"type": "string", "enum": ["x", "y"]}}),
                    "/z": _query_op("getZzz", {"id": {"type": "integer"}}),
                },
            }
        )
    )
    intent = tmp_path / "api.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(spec))}\napi: {{name: api}}\ntools:\n"
        "  a_get: {operation: getAaa, effect: read, permission: 'x:read'}\n"
        "  field_x: {operation: getZzz, effect: read, permission: 'x:read'}\n",
        encoding="utf-8",
    )
    _assert_each_tool_has_its_model(build_api(intent, tmp_path / "out", emit=("python",), run_lint=False))


def _assert_each_tool_has_its_model(built: Any) -> None:
    """ARGUMENT_MODELS names, for every tool, a pydantic model whose fields are its arguments."""
    init = _load_models(built.files["__init__.py"].decode().split("POLICY:")[0])
    argument_models: dict[str, str] = init["ARGUMENT_MODELS"]  # type: ignore[assignment]
    models = _load_models(built.files["models.py"].decode())
    from pydantic import BaseModel

    assert set(argument_models) == {tool.name for tool in built.ir.tools}
    for tool in built.ir.tools:
        model = models[argument_models[tool.name]]
        assert isinstance(model, type) and issubclass(model, BaseModel), (tool.name, model)
        fields = {field.alias or name for name, field in model.model_fields.items()}
        assert fields == set(tool.input_schema.get("properties", {})), tool.name


def test_the_name_check_refuses_an_enum_under_a_tools_model_name() -> None:
    # the safety net behind `_model_names`: had datamodel-code-generator given a tool's name to an
    # enum (and numbered the model), the build fails instead of writing a package that lies
    source = (
        "class GetZzzArgs(Enum):\n    x = 'x'\n\n\nclass GetZzzArgs1(BaseModel):\n    pass\n\n\n"
        "class Page(RootModel[int]):\n    root: int\n\n\nListZzzArgs = GetZzzArgs\n"
    )
    with pytest.raises(RuntimeError, match=r"other classes \['GetZzzArgs'\]"):
        _check_model_names(source, ModelsPlan("", {"get_zzz": "GetZzzArgs"}, ()))
    with pytest.raises(RuntimeError, match=r"other classes \['GetZzzArgs'\]"):
        _check_model_names(
            source,
            ModelsPlan(
                "", {"get_a": "GetZzzArgs1", "list_zzz": "ListZzzArgs"}, (("ListZzzArgs", "GetZzzArgs"),)
            ),
        )
    _check_model_names(source, ModelsPlan("", {"get_a": "GetZzzArgs1", "page": "Page"}, ()))


def test_a_tools_own_definition_does_not_take_another_tools_model_name() -> None:
    # `get_x` keeps its own `YArgs` (it differs from the shared one): named `<Model>_<name>`, its class
    # was `GetXArgsYArgs`, which datamodel-code-generator reached (through `GetXArgs`) before the
    # argument model of the tool `get_x_args_y`, numbered `GetXArgsYArgs1`
    from types import SimpleNamespace

    def obj(props: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "properties": props, "additionalProperties": False}

    node = {"next": {"$ref": "#/$defs/YArgs"}}
    ir: Any = SimpleNamespace(
        name="api",
        tools=[
            SimpleNamespace(
                name="a",
                input_schema={
                    **obj({"y": {"$ref": "#/$defs/YArgs"}}),
                    "$defs": {"YArgs": obj({**node, "n": {"type": "integer"}})},
                },
            ),
            SimpleNamespace(
                name="get_x",
                input_schema={
                    **obj({"y": {"$ref": "#/$defs/YArgs"}}),
                    "$defs": {"YArgs": obj({**node, "s": {"type": "string"}})},
                },
            ),
            SimpleNamespace(name="get_x_args_y", input_schema=obj({"q": {"type": "boolean"}})),
        ],
    )
    plan = models_plan(ir)
    models = _load_models(package_files(ir)["models.py"].decode("utf-8"))
    from pydantic import BaseModel

    for tool in ir.tools:
        model = models[plan.names[tool.name]]
        assert isinstance(model, type) and issubclass(model, BaseModel)
        assert set(model.model_fields) == set(tool.input_schema["properties"]), tool.name


# --- component names of any form --------------------------------------------------------------------

_HOSTILE = st.builds(
    lambda prefix, rest: prefix + rest,
    st.sampled_from(["", "microsoft.graph.", "1", "a/"]),
    st.text(alphabet=st.sampled_from(list("aZ09._-/ éжＡ")), min_size=1, max_size=6),
)


@settings(max_examples=examples(20), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(names=st.lists(_HOSTILE, min_size=1, max_size=4, unique=True))
def test_recursive_components_of_any_name_make_one_models_module(
    names: list[str], tmp_path_factory: Any
) -> None:
    """Recursive component schemas (kept as `$defs`) named with dots (`microsoft.graph.node`: a dotted
    name made datamodel-code-generator write a package of modules), slashes, non-ASCII letters,
    leading digits, or names equal once made safe (`a.b`, `a_b`, `a-b`): every tool still gets its
    model, and the model accepts a nested value."""
    tmp = tmp_path_factory.mktemp("names")
    schemas: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    for i, name in enumerate(names):
        nxt = names[(i + 1) % len(names)]
        schemas[name] = {
            "type": "object",
            "properties": {
                "label": {"type": "string"},
                "children": {
                    "type": "array",
                    "items": {"$ref": "#/components/schemas/" + name.replace("/", "~1")},
                },
                "next": {"$ref": "#/components/schemas/" + nxt.replace("/", "~1")},
            },
        }
        paths[f"/n{i}"] = {
            "post": {
                "operationId": f"put{i}",
                "responses": {"204": {"description": "ok"}},
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"$ref": "#/components/schemas/" + name.replace("/", "~1")}
                        }
                    }
                },
            }
        }
    spec = tmp / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.1.0",
                "info": {"title": "t", "version": "1"},
                "paths": paths,
                "components": {"schemas": schemas},
            }
        ),
        encoding="utf-8",
    )
    intent = tmp / "api.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(spec))}\napi: {{name: api}}\n"
        'include: [{match: "*", approval: never}]\n',
        encoding="utf-8",
    )
    built = build_api(intent, tmp / "out", emit=("python",), run_lint=False)
    _assert_each_tool_has_its_model(built)
    init = _load_models(built.files["__init__.py"].decode().split("POLICY:")[0])
    models = _load_models(built.files["models.py"].decode())
    model: Any = models[init["ARGUMENT_MODELS"]["record_put0"]]  # type: ignore[index]
    value = {
        "action_id": "x",
        "label": "a",
        "children": [{"label": "b", "children": [], "next": {"label": "c"}}],
    }
    assert model.model_validate(value).model_dump(exclude_none=True, by_alias=True)["children"][0][
        "next"
    ] == {"label": "c"}


@given(names=st.sets(st.text(min_size=0, max_size=8), max_size=12))
def test_definition_names_made_safe_stay_distinct(names: set[str]) -> None:
    from toolgen.emit.python import _def_renames

    renamed = _def_renames(names)
    assert set(renamed) == names
    assert len({v.casefold() for v in renamed.values()}) == len(names)
    assert all(v and all(c.isascii() and (c.isalnum() or c == "_") for c in v) for v in renamed.values())
    # numbered in sorted order, whatever order the tools reach them in
    assert _def_renames({"a_b", "a.b", "a-b"}) == {"a-b": "a_b", "a.b": "a_b_2", "a_b": "a_b_3"}
