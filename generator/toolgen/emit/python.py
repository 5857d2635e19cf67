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

import ast
import json
import unicodedata
import warnings
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from ..compile.ir import ApiIR
from .exact_numbers import exact_bounds, mark_inexact_numbers
from .pyliteral import pascal_case, template_env

_ANNOTATIONS = {"description", "title", "examples", "example", "$comment", "deprecated", "default"}
#: The longest ``enum`` an argument model spells out (OpenAI's strict limit for a whole schema). A
#: longer one (budgets count schema nodes, not enum values) would be an enum class the model generator
#: and the formatter take minutes over (300,000 values: over five minutes and 0.9 GB); the model takes
#: the enum's type and the runtime's input schema holds the values.
MAX_MODEL_ENUM = 1000


@dataclass(frozen=True)
class ModelsPlan:
    """What `models.py` is made from, decided in the main stage (cheap, pure).

    `document`: the JSON Schema document (text) given to datamodel-code-generator, one definition
    per distinct argument schema. `names`: tool name -> the class name `ARGUMENT_MODELS` gives it.
    `aliases`: (alias, class) pairs, one per tool whose arguments equal an earlier tool's: the class
    is emitted once and the alias is an assignment after it, so every tool keeps its own name."""

    document: str
    names: dict[str, str]
    aliases: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class PackagePlan:
    """What the package's Python is made from: `init_source`, `__init__.py` rendered from its
    template (before black), and `models`, the plan of `models.py`."""

    api: str
    init_source: str
    models: ModelsPlan


def package_plan(ir: ApiIR) -> PackagePlan:
    """The package's plan (cheap, pure): the rendered `__init__.py` and `models_plan(ir)`."""
    models = models_plan(ir)
    text = template_env().get_template("package_init.py.j2").render(api=ir.name, argument_models=models.names)
    return PackagePlan(ir.name, text, models)


def package_pieces(plan: PackagePlan) -> list[str]:
    """What black formats, piece by piece: `__init__.py` whole, then `models_pieces`."""
    return [plan.init_source, *models_pieces(plan.models)]


def join_package(formatted: list[str], plan: PackagePlan) -> dict[str, str]:
    """The formatted pieces of `package_pieces` as the package's two files, each compiled (and
    models.py checked against its plan). RuntimeError for a toolgen bug."""
    init = formatted[0]
    compile(init, f"generated/{plan.api}/__init__.py", "exec")
    return {"__init__.py": init, "models.py": join_models(formatted[1:], plan.models)}


def package_files(ir: ApiIR, sources: dict[str, str] | None = None) -> dict[str, bytes]:
    """`__init__.py` and `models.py` of the generated package, formatted by black.

    `sources` is ``join_package`` of the formatted ``package_pieces(package_plan(ir))`` when the
    caller computed it already (the build runs it in a worker process beside the other stages);
    otherwise it is computed here."""
    if sources is None:
        plan = package_plan(ir)
        sources = join_package([format_piece(piece) for piece in package_pieces(plan)], plan)
    return {name: text.encode("utf-8") for name, text in sources.items()}


def models_pieces(plan: ModelsPlan) -> list[str]:
    """`models.py` before black, cut into the pieces black formats one at a time (`class_pieces`):
    datamodel-code-generator's module followed by the aliases."""
    if plan.document:
        document = mark_inexact_numbers(plan.document)  # bounds past 2**53 on a number: exact
        source = exact_bounds(exact_patterns(_generate(document), document), document)
    else:
        source = '"""Argument models: this API has no tools."""\n'
    if plan.aliases:
        tail = template_env().get_template("models_aliases.py.j2").render(aliases=plan.aliases)
        source = source.rstrip("\n") + "\n\n\n" + tail
    # black writes this block with double quotes; written so already, a class without other strings
    # is black-stable and black formats it in one pass instead of two (its second pass runs only on
    # what the first changed). Three whole lines: no string literal of datamodel-code-generator's
    # spans a line, so only its own `model_config` block matches.
    source = source.replace(_FORBID_SINGLE, _FORBID_DOUBLE)
    return class_pieces(source)


_FORBID_SINGLE = "\n    model_config = ConfigDict(\n        extra='forbid',\n    )\n"
_FORBID_DOUBLE = '\n    model_config = ConfigDict(\n        extra="forbid",\n    )\n'


def exact_patterns(source: str, document: str) -> str:
    """`source` (datamodel-code-generator's module for `document`) with every pattern written as a
    literal that evaluates to the spec's pattern exactly.

    datamodel-code-generator writes a pattern as a raw literal when one can hold it, with its quote
    and control characters escaped (`RAW_SINGLE_QUOTED_ESCAPES`): ``'`` becomes ``r'\\''``, whose value
    is ``\\'``, the same regex but not the same text (the value pydantic reports, and a schema built
    from the model, would differ from the spec's). Each raw literal whose value is the escaped text of
    exactly one pattern of `document`, and not that pattern itself, is replaced by ``repr`` of that
    pattern. Two patterns whose escaped texts are equal (a tab and ``\\t``: the same regex, as
    datamodel-code-generator checks before it escapes) cannot be told apart in the module; their
    literal keeps the escaped text, which is one of them."""
    import io
    import tokenize

    from datamodel_code_generator._python_syntax import RAW_SINGLE_QUOTED_ESCAPES

    by_escaped: dict[str, set[str]] = {}
    for pattern in _patterns(json.loads(document)):
        by_escaped.setdefault(pattern.translate(RAW_SINGLE_QUOTED_ESCAPES), set()).add(pattern)
    lines = source.split("\n")
    edits: list[tuple[int, int, int, str]] = []  # (row, start col, end col, new text), one line each
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.STRING or token.start[0] != token.end[0]:
            continue
        prefix = token.string[: len(token.string) - len(token.string.lstrip("rRbBuUfF"))]
        if "r" not in prefix.lower() or "f" in prefix.lower() or "b" in prefix.lower():
            continue
        value = ast.literal_eval(token.string)
        found = by_escaped.get(value, set())
        if len(found) == 1 and value not in found:
            edits.append((token.start[0], token.start[1], token.end[1], repr(next(iter(found)))))
    for row, start, end, text in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + text + line[end:]
    return "\n".join(lines)


def _patterns(node: Any) -> set[str]:
    """Every ``pattern`` string of a JSON Schema document (not a property called so)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key == "pattern" and isinstance(value, str):
                    out.add(value)
                elif key in ("properties", "patternProperties", "$defs") and isinstance(value, dict):
                    stack.extend(value.values())
                elif key not in ("enum", "const"):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return out


def warm_up() -> str:
    """A tiny `models.py` made end to end: datamodel-code-generator's first call costs 0.5 s of
    imports and set-up, black's 0.2 s; a worker pays them while it waits for its job."""
    document = json.dumps(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {"WarmArgs": {"type": "object", "properties": {"x": {"type": "string"}}}},
        }
    )
    return black_by_class(_generate(document))


def format_piece(piece: str) -> str:
    """One piece formatted by black (line length 100, Python 3.11)."""
    return _black(piece)


def join_models(formatted: list[str], plan: ModelsPlan) -> str:
    """The formatted pieces as one module (`join_pieces`), compiled and checked against `plan`."""
    models = join_pieces(formatted)
    compile(models, "generated/models.py", "exec")
    _check_model_names(models, plan)
    return models


def _model_names(ir: ApiIR) -> dict[str, str]:
    """Tool name -> argument model class name: `<Tool>Args` (letters and digits only: datamodel-code-
    generator rewrites other class names, `False_Args` would become `FalseArgs`, and ARGUMENT_MODELS
    must name the classes it really wrote), numbered `<Tool>Args2`, ... when two tools' names give the
    same one.

    datamodel-code-generator names the classes it makes for inline enums, items and unions after the
    property holding them (`get_user_args` -> `GetUserArgs`, `GetUserArgs1`), first come first served:
    a model whose name a property took earlier in the document would be renamed `GetUserArgs1` and
    ARGUMENT_MODELS would name the enum (or an alias would replace it). So a name that any property
    name or definition name of the API could give (`_class_name_key`) is not used: `<Tool>ToolArgs`
    is tried instead (`<Tool>ToolToolArgs`, ... while taken)."""
    taken = _spec_class_name_keys(ir)
    names: dict[str, str] = {}
    used: set[str] = set()
    for tool in ir.tools:
        stem = "".join(ch for ch in pascal_case(tool.name) if ch.isalnum())
        base = stem + "Args"
        while _class_name_key(base) in taken:
            stem += "Tool"
            base = stem + "Args"
        name, n = base, 2
        while name in used:
            name, n = f"{base}{n}", n + 1
        used.add(name)
        names[tool.name] = name
    return names


def _class_name_key(text: str) -> str:
    """What two class names equal as Python identifiers share, and what numbering or casing by
    datamodel-code-generator keeps: NFKC (Python normalises identifiers so), letters and digits only,
    case folded, trailing digits dropped (`get-User_args2` and `ＧｅｔＵｓｅｒＡｒｇｓ` -> `getuserargs`)."""
    folded = "".join(ch for ch in unicodedata.normalize("NFKC", text) if ch.isalnum()).casefold()
    return folded.rstrip("0123456789")


def _spec_class_name_keys(ir: ApiIR) -> set[str]:
    """`_class_name_key` of every property name and definition name in the tools' argument schemas,
    each also as `Field<name>` (datamodel-code-generator's class name for a name that does not start
    with a letter), and a definition also as `Shared<name>` (the class `models_plan` emits for a
    shared one)."""
    keys: set[str] = set()
    stack: list[Any] = [tool.input_schema for tool in ir.tools]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            for key, value in node.items():
                if key in ("properties", "patternProperties", "$defs") and isinstance(value, dict):
                    for name in value:
                        if isinstance(name, str):
                            keys.add(_class_name_key(name))
                            # a name that does not start with a letter gets a prefix: `_x` -> `FieldX`
                            keys.add(_class_name_key("Field" + name))
                            if key == "$defs":
                                keys.add(_class_name_key(_SHARED + name))
                                keys.add(_class_name_key(_SHARED + _def_stem(name)))
                    stack.extend(value.values())
                elif key not in ("enum", "const"):
                    stack.append(value)
    keys.discard("")
    return keys


def _check_model_names(source: str, plan: ModelsPlan) -> None:
    """Every name `ARGUMENT_MODELS` gives is defined at the top level of models.py: a pydantic model
    class (based on `BaseModel` or `RootModel[...]`, so not an enum that took the name), or an alias
    assigned once, after the class it names, and not also a class. RuntimeError otherwise."""
    import ast

    tree = ast.parse(source)
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    aliases = dict(plan.aliases)
    clash = sorted(set(classes) & set(aliases))
    missing = sorted(set(plan.names.values()) - set(classes) - set(aliases))
    wrong = sorted(
        name
        for name in {aliases.get(n, n) for n in plan.names.values()}
        if name in classes and not _is_model_class(classes[name])
    )
    if clash or missing or wrong:
        raise RuntimeError(
            f"models.py lacks the argument models {missing[:5]}, defines aliases {clash[:5]} "
            f"as classes or gives their names to other classes {wrong[:5]} (a toolgen bug)"
        )


def _is_model_class(node: Any) -> bool:
    import ast

    def base_name(base: ast.expr) -> str:
        return base_name(base.value) if isinstance(base, ast.Subscript) else getattr(base, "id", "")

    return [base_name(base) for base in node.bases] in (["BaseModel"], ["RootModel"])


def _strip(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key in _ANNOTATIONS and not isinstance(value, dict):
                continue
            if key in ("properties", "$defs", "patternProperties"):
                out[key] = {k: _strip(v) for k, v in value.items()} if isinstance(value, dict) else value
            elif key == "enum" and isinstance(value, list) and len(value) > MAX_MODEL_ENUM:
                continue  # left to the runtime's input schema (MAX_MODEL_ENUM)
            elif key in ("enum", "const", "required"):
                out[key] = value
            else:
                out[key] = _strip(value)
        return out
    if isinstance(schema, list):
        return [_strip(v) for v in schema]
    return schema


def _rewrite_refs(node: Any, prefix: str, suffix: str = "", rename: dict[str, str] | None = None) -> Any:
    """`node` with every ``#/$defs/<name>`` reference made ``#/$defs/<prefix><rename[name]><suffix>``."""
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                name = value[len("#/$defs/") :]
                out[key] = "#/$defs/" + prefix + (rename.get(name, name) if rename else name) + suffix
            elif key in ("enum", "const"):
                out[key] = value
            elif key in ("properties", "patternProperties", "$defs") and isinstance(value, dict):
                out[key] = {k: _rewrite_refs(v, prefix, suffix, rename) for k, v in value.items()}
            else:
                out[key] = _rewrite_refs(value, prefix, suffix, rename)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(v, prefix, suffix, rename) for v in node]
    return node


def _def_stem(name: str) -> str:
    """A definition name as datamodel-code-generator reads it safely: ASCII letters, digits and '_'
    (a '.' makes it a module path: ``microsoft.graph.node`` would become a package of modules; other
    characters become '_', a non-ASCII one its code point, ``u00e9``)."""
    out = []
    for ch in name:
        if ch.isascii() and (ch.isalnum() or ch == "_"):
            out.append(ch)
        elif ch.isascii():
            out.append("_")
        else:
            out.append(f"u{ord(ch):04x}")
    return "".join(out) or "_"


def _def_renames(names: set[str]) -> dict[str, str]:
    """Definition name -> a distinct `_def_stem` of it: names equal once made safe (``a.b`` and
    ``a_b``, ``a-b``) are numbered in sorted order (``a_b``, ``a_b_2``, ...), so the result does not
    depend on the order the tools reach them."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(names):
        stem = _def_stem(name)
        safe, n = stem, 2
        while safe.casefold() in taken:
            safe, n = f"{stem}_{n}", n + 1
        taken.add(safe.casefold())
        out[name] = safe
    return out


_SHARED = "Shared_"
_OWN = "_Def"  # ends a tool's own definition: `<Model>_<name>_Def` is never an argument model's name


def models_plan(ir: ApiIR) -> ModelsPlan:
    """One JSON Schema document for datamodel-code-generator: a definition per distinct tool
    argument schema, plus the definitions the tools reach. A definition several tools reach with the
    same content (a spec's component schema) is emitted once, as `Shared_<name>`; a tool whose
    definitions differ from the shared ones by the same name keeps all of its own, as
    `<Model>_<name>_Def` (as `<Model>_<name>`, a definition `YArgs` of the tool `get_x` would be the
    class `GetXArgsYArgs`, the model of a tool `get_x_args_y`). Tools whose argument schemas are equal share one class (the first tool's, in
    catalog order) and the others become aliases of it: GitHub's 1,807 tools have 812 distinct
    argument schemas (every `record_*` that takes only `preview_id` is one)."""
    names = _model_names(ir)
    rename = _def_renames({key for tool in ir.tools for key in _defs_of(tool.input_schema)})
    defs: dict[str, Any] = {}
    shared: dict[str, Any] = {}
    by_content: dict[str, str] = {}
    aliases: list[tuple[str, str]] = []
    for tool in ir.tools:
        model = names[tool.name]
        schema = _strip(tool.input_schema)  # `_strip` builds new containers; the IR is not touched
        inner = schema.pop("$defs", {}) or {}
        # all or nothing per tool: a shared definition's refs must mean the same for every tool
        if all(key not in shared or shared[key] == value for key, value in inner.items()):
            prefix, suffix = _SHARED, ""
            for key, value in inner.items():
                shared.setdefault(key, value)
        else:
            prefix, suffix = model + "_", _OWN
            for key, value in inner.items():
                defs[prefix + rename[key] + suffix] = _rewrite_refs(value, prefix, suffix, rename)
        schema = _rewrite_refs(schema, prefix, suffix, rename)
        content = json.dumps(schema, sort_keys=True)
        first = by_content.setdefault(content, model)
        if first != model:
            aliases.append((model, first))
            continue
        schema["title"] = model
        defs[model] = schema
    for key, value in shared.items():
        defs[_SHARED + rename[key]] = _rewrite_refs(value, _SHARED, "", rename)
    if not defs:
        return ModelsPlan("", names, ())
    hoisted = _hoist_objects(defs, taken=set(names.values()))
    document = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": hoisted}
    return ModelsPlan(json.dumps(document, sort_keys=True), names, tuple(aliases))


def _defs_of(schema: Any) -> dict[str, Any]:
    defs = schema.get("$defs") if isinstance(schema, dict) else None
    return defs if isinstance(defs, dict) else {}


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


def _hoist_objects(defs: dict[str, Any], taken: set[str]) -> dict[str, Any]:
    hoister = _Hoister(set(defs) | taken)
    top = {key: hoister.visit(value, key, False) for key, value in defs.items()}
    return {**top, **hoister.defs}


def _generate(document: str) -> str:
    from datamodel_code_generator import DataModelType, InputFileType, generate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = generate(
            document,
            input_file_type=InputFileType.JsonSchema,
            output_model_type=DataModelType.PydanticV2BaseModel,
            disable_timestamp=True,
            class_name="ToolArgumentsIndex",
            custom_file_header='"""Typed argument models of the generated tools (datamodel-code-generator). '
            'Do not edit."""',
            # no formatter here: black runs once, in `format_piece`, with toolgen's own settings
            # (datamodel-code-generator's black would read a pyproject.toml found from the working
            # directory, so the output would depend on where toolgen runs)
            formatters=[],
            use_field_description=False,
            enable_version_header=False,
        )
    if not isinstance(out, str):
        raise RuntimeError("datamodel-code-generator returned several modules; expected one")  # noqa: TRY004 - a toolgen bug, not bad input
    return out


def _mode() -> Any:
    import black

    return black.Mode(target_versions={black.mode.TargetVersion.PY311}, line_length=100)


def _black(source: str) -> str:
    import black

    return black.format_str(source, mode=_mode())


def black_by_class(source: str) -> str:
    """black over a module of top-level classes, one class at a time; byte-identical to
    `black.format_str` over the whole module (`class_pieces`, black on each, `join_pieces`).

    black's cost grows faster than the module: GitHub's 12,700-line models.py takes 6 s whole and
    3.5 s a class at a time, and the pieces can be formatted in two processes."""
    return join_pieces([format_piece(piece) for piece in class_pieces(source)])


def class_pieces(source: str) -> list[str]:
    """`source` cut just before each top-level class (or its first decorator): black separates
    top-level classes by exactly two blank lines whatever stood between them, and formats a class
    without looking at its neighbours, so each piece formatted alone and the results joined by
    `join_pieces` equal black over the whole module. The first piece holds what precedes the first
    class (docstring, imports); a statement between classes stays with the class before it. A
    module is one piece (datamodel-code-generator writes none of these) when it has a top-level
    comment (black keeps a comment with the statement after it, and its blank lines depend on what
    precedes it), a `\r` or form feed (black keeps the module's line ending and a form feed between
    statements), a function whose body is `...` (black adds no blank line between such a stub and a
    class right after it), or syntax `ast` does not parse here (black may).
    `tests/emit/test_models_module.py` checks the equality on the committed packages, on GitHub's whole
    API and on generated hostile modules."""
    import ast

    lines = source.split("\n")  # ast counts lines by \n only (not by str.splitlines' U+2028 etc.)
    if any(line.startswith("#") for line in lines) or "\r" in source or "\x0c" in source:
        return [source]
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return [source]
    if any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_stub_body(node.body)
        for node in ast.walk(tree)
    ):
        return [source]
    starts = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            starts.append(min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1)
    offsets = [0]  # where each line starts in `source`, and its end
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    offsets[-1] = len(source)
    cuts = [*sorted({0, *starts}), len(lines)]
    # without the blank lines that end a piece (black drops them, so the result is the same), a
    # piece black leaves unchanged is formatted in one pass instead of two
    pieces = [source[offsets[a] : offsets[b]] for a, b in pairwise(cuts) if a < b]
    return [piece.rstrip("\n") + "\n" if piece.strip() else piece for piece in pieces]


def _is_stub_body(body: list[Any]) -> bool:
    import ast

    return (
        len(body) == 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and body[0].value.value is Ellipsis
    )


def join_pieces(formatted: list[str]) -> str:
    """Pieces black formatted alone, as black formats the whole module: two blank lines between."""
    if len(formatted) == 1:
        return formatted[0]
    return "\n\n".join(piece for piece in formatted if piece.strip())  # a blank header formats to "\n"
