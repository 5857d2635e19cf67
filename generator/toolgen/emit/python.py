"""Stage `emit`, the generated Python package: `__init__.py` (jinja2 template + black), a small
module that reads the policy table and the MCP catalog from the package's own `policy.json` and
`mcp.json` (data stays data: no formatter runs over it), and `models.py` (datamodel-code-generator,
formatted once by black) with one pydantic model per tool's arguments.

Input: the `ApiIR`. Output: the two files as bytes (the build writes `policy.json` and `mcp.json`
beside them whenever it writes the package). The only spec-derived text in `__init__.py` is the API
name and the tool -> model class table, and it reaches the file only through `toolgen.emit.pyliteral`
(the template environment refuses anything else). `models.py` is produced by datamodel-code-generator from the canonical input
schemas with their text annotations (descriptions, titles, examples) removed, so only names, enum
values and constraints reach it; it is then compiled here as a check before anything is written.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from ..compile.ir import ApiIR
from .pyliteral import pascal_case, template_env

_ANNOTATIONS = {"description", "title", "examples", "example", "$comment", "deprecated", "default"}


def package_files(ir: ApiIR) -> dict[str, bytes]:
    """`__init__.py` and `models.py` of the generated package, each formatted by black once."""
    model_names = _model_names(ir)
    env = template_env()
    text = env.get_template("package_init.py.j2").render(api=ir.name, argument_models=model_names)
    init = _black(text)
    models = _black(_models_source(ir, model_names))
    for name, source in (("__init__.py", init), ("models.py", models)):
        compile(source, f"generated/{ir.name}/{name}", "exec")
    _check_model_names(models, model_names)
    return {"__init__.py": init.encode("utf-8"), "models.py": models.encode("utf-8")}


def _model_names(ir: ApiIR) -> dict[str, str]:
    names: dict[str, str] = {}
    used: set[str] = set()
    for tool in ir.tools:
        # letters and digits only: datamodel-code-generator rewrites other class names (`False_Args`
        # would become `FalseArgs`), and ARGUMENT_MODELS must name the classes it really wrote
        base = "".join(ch for ch in pascal_case(tool.name) if ch.isalnum()) + "Args"
        name, n = base, 2
        while name in used:
            name, n = f"{base}{n}", n + 1
        used.add(name)
        names[tool.name] = name
    return names


def _check_model_names(source: str, names: dict[str, str]) -> None:
    """Every class `ARGUMENT_MODELS` names is defined at the top level of models.py."""
    import ast

    defined = {node.name for node in ast.parse(source).body if isinstance(node, ast.ClassDef)}
    missing = sorted(set(names.values()) - defined)
    if missing:
        raise RuntimeError(f"models.py lacks the argument models {missing[:5]} (a toolgen bug)")


def _strip(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key in _ANNOTATIONS and not isinstance(value, dict):
                continue
            if key in ("properties", "$defs", "patternProperties"):
                out[key] = {k: _strip(v) for k, v in value.items()} if isinstance(value, dict) else value
            elif key in ("enum", "const", "required"):
                out[key] = value
            else:
                out[key] = _strip(value)
        return out
    if isinstance(schema, list):
        return [_strip(v) for v in schema]
    return schema


def _rewrite_refs(node: Any, prefix: str) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                out[key] = "#/$defs/" + prefix + value[len("#/$defs/"):]
            elif key in ("enum", "const"):
                out[key] = value
            else:
                out[key] = _rewrite_refs(value, prefix)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v, prefix) for v in node]
    return node


_SHARED = "Shared_"


def _models_source(ir: ApiIR, names: dict[str, str]) -> str:
    """One JSON Schema document for datamodel-code-generator: a definition per tool's arguments,
    plus the definitions the tools reach. A definition several tools reach with the same content
    (a spec's component schema) is emitted once, as `Shared_<name>`; a tool whose definitions
    differ from the shared ones by the same name keeps all of its own, as `<Model>_<name>`."""
    defs: dict[str, Any] = {}
    shared: dict[str, Any] = {}
    for tool in ir.tools:
        model = names[tool.name]
        schema = _strip(tool.input_schema)  # `_strip` builds new containers; the IR is not touched
        inner = schema.pop("$defs", {}) or {}
        # all or nothing per tool: a shared definition's refs must mean the same for every tool
        if all(key not in shared or shared[key] == value for key, value in inner.items()):
            prefix = _SHARED
            for key, value in inner.items():
                shared.setdefault(key, value)
        else:
            prefix = model + "_"
            for key, value in inner.items():
                defs[prefix + key] = _rewrite_refs(value, prefix)
        schema = _rewrite_refs(schema, prefix)
        schema["title"] = model
        defs[model] = schema
    for key, value in shared.items():
        defs[_SHARED + key] = _rewrite_refs(value, _SHARED)
    return _generate(_hoist_objects(defs))


class _Hoister:
    """Moves every nested object schema (one with `properties`) into a definition of its own, one
    per distinct content: Stripe's 691 tools nest 2,755 objects of which 315 differ, and
    datamodel-code-generator's time and models.py's length grow with what it is given. A definition
    is named after the property that first holds it (`<Property>Object`, numbered when taken: no
    argument model's name ends so); its content is canonical JSON, so the result is deterministic."""

    def __init__(self, taken: set[str]):
        self.defs: dict[str, Any] = {}
        self.by_content: dict[str, str] = {}
        self.taken = set(taken)

    def visit(self, node: Any, name: str, nested: bool) -> Any:
        if isinstance(node, list):
            return [self.visit(v, name, True) for v in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("enum", "const", "required"):
                out[key] = value
            elif key in ("properties", "patternProperties") and isinstance(value, dict):
                out[key] = {prop: self.visit(v, prop, True) for prop, v in value.items()}
            else:
                out[key] = self.visit(value, name, True)
        if not (nested and out.get("type") == "object" and isinstance(out.get("properties"), dict)):
            return out
        content = json.dumps(out, sort_keys=True)
        ref = self.by_content.get(content)
        if ref is None:
            base = "".join(ch for ch in pascal_case(name) if ch.isalnum()) or "Item"
            ref, n = f"{base}Object", 2
            while ref in self.taken:
                ref, n = f"{base}{n}Object", n + 1
            self.taken.add(ref)
            self.by_content[content] = ref
            self.defs[ref] = out
        return {"$ref": "#/$defs/" + ref}


def _hoist_objects(defs: dict[str, Any]) -> dict[str, Any]:
    hoister = _Hoister(set(defs))
    top = {key: hoister.visit(value, key, False) for key, value in defs.items()}
    return {**top, **hoister.defs}


def _generate(defs: dict[str, Any]) -> str:
    if not defs:
        return '"""Argument models: this API has no tools."""\n'
    from datamodel_code_generator import DataModelType, InputFileType, generate

    document = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": defs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = generate(
            json.dumps(document, sort_keys=True),
            input_file_type=InputFileType.JsonSchema,
            output_model_type=DataModelType.PydanticV2BaseModel,
            disable_timestamp=True,
            class_name="ToolArgumentsIndex",
            custom_file_header='"""Typed argument models of the generated tools (datamodel-code-generator). '
                               'Do not edit."""',
            # no formatter here: black runs once, in `package_files`, with toolgen's own settings
            # (datamodel-code-generator's black would read a pyproject.toml found from the working
            # directory, so the output would depend on where toolgen runs)
            formatters=[],
            use_field_description=False,
            enable_version_header=False,
        )
    if not isinstance(out, str):
        raise RuntimeError("datamodel-code-generator returned several modules; expected one")  # noqa: TRY004 - a toolgen bug, not bad input
    return out


def _black(source: str) -> str:
    import black

    mode = black.Mode(target_versions={black.mode.TargetVersion.PY311}, line_length=100)
    return black.format_str(source, mode=mode)
