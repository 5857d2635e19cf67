"""The project file (`toolgen.yaml`): which APIs to build, from which intent maps, into which folders.

Input: the path of toolgen.yaml and the command line's spec overrides. Output: a `Project`: one
`ApiTarget` per API (intent map, output folder, spec, artifacts, all paths resolved, and its dialect
choices: `dialects:` of the API, else of the project; its `search:` option likewise), the
intent-map schema's path and the `lint:`
settings. A bad file (an unknown key, a value outside its set) raises a located `DiagnosticError`.

```yaml
toolgen: 1
apis:
  - name: tickets
    intent_map: intent_maps/tickets.yaml
    out: generated/tickets
    # spec: ...   optional; default: the intent map's `spec:` key
    # registry: {name: io.github.acme/tickets, url: https://tickets.example.com/mcp}   # writes server.json
emit: [openai, anthropic, mcp, gemini, policy, report, python, registry]   # registry: server.json (with `registry:`)
dialects:                  # optional; also per API (an API's value wins)
  gemini: {parameters: schema}   # or json_schema: parametersJsonSchema, no reshaped arguments
  anthropic: {input_examples: true}   # false: no input_examples in anthropic.json
search:                    # optional; also per API (an API's value wins)
  semantic: lsa            # default: none (lexical only); lsa: search.json also holds LSA vectors
  # semantic: onnx, model: models/m.onnx, model_sha256: HEX, tokenizer: models/tokenizer.json,
  # tokenizer_sha256: HEX   (a local model, pinned; its vectors in search.vectors)
```

The spec of an API can be overridden without editing any file: `--spec NAME=PATH` on the command
line, or the environment variable `TOOLGEN_SPEC_<NAME>` (upper case), in that order of precedence.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..compile.load import checked_tree, yaml_too_deep
from ..compile.sourcemap import locate_ruamel
from ..diagnostics import Diagnostic, DiagnosticError, SourceLocation, display_path
from ..dialects import GeminiParameters, RegistryListing, names
from ..durable import new_file_mode, replace_file
from ..naming import API_NAME_PATTERN, path_text_problem
from ..yaml_text import plain_yaml, read_yaml

PROJECT_FILE = "toolgen.yaml"
#: an artifact `emit` / ``--emit`` names: a dialect's catalog (`toolgen.dialects.names`) or one of these
OTHER_ARTIFACTS = ("policy", "report", "python", "registry")
Artifact = str
ALL_ARTIFACTS: tuple[Artifact, ...] = (*names(), *OTHER_ARTIFACTS)


def _known_artifact(value: str) -> str:
    if value not in ALL_ARTIFACTS:
        raise ValueError(f"Input should be one of {', '.join(repr(a) for a in ALL_ARTIFACTS)}")
    return value


KnownArtifact = Annotated[str, AfterValidator(_known_artifact)]


def _path_text(value: str) -> str:
    """A path of toolgen.yaml: text without control characters (a NUL cannot name a file on any
    system, and a line break in a path is never meant)."""
    problem = path_text_problem(value)
    if problem is not None:
        raise ValueError(problem)
    if not value:
        raise ValueError("a path may not be empty")
    return value


#: a path toolgen.yaml gives (an intent map, a spec, an output folder or file)
PathText = Annotated[str, AfterValidator(_path_text)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GeminiConfig(_Strict):
    parameters: GeminiParameters | None = Field(
        None,
        description=(
            "`schema` (default): `parameters` in the conservative OpenAPI-3.0 subset, arguments reshaped where it "
            "cannot say them; `json_schema`: `parametersJsonSchema` (JSON Schema, canonical arguments)."
        ),
    )


class AnthropicConfig(_Strict):
    input_examples: bool | None = Field(
        None,
        description=(
            "`true` (default): each read and preview tool carries up to 3 `input_examples` (the intent map's, else "
            "the spec's that fit its input schema); `false`: none."
        ),
    )


class DialectsConfig(_Strict):
    gemini: GeminiConfig = GeminiConfig()
    anthropic: AnthropicConfig = AnthropicConfig()


_SHA256 = r"^[0-9a-f]{64}$"
#: the keys of `search:` that name the dense option's files and pins (all four, only with `semantic: onnx`)
DENSE_KEYS = ("model", "model_sha256", "tokenizer", "tokenizer_sha256")


class SearchConfig(_Strict):
    semantic: Literal["none", "lsa", "onnx"] | None = Field(
        None,
        description=(
            "`none` (default): tool search is the lexical index alone; `lsa`: search.json also holds vectors "
            "learned from the API's own text (latent semantic analysis), fused with the lexical ranking "
            "(needs numpy: pip install -e '.[semantic]' in a clone of toolgen); `onnx`: the documents are "
            "embedded by a local sentence-embedding model (`model`, `tokenizer`, each pinned by its SHA-256) "
            "into search.vectors, fused by reciprocal rank (needs pip install -e '.[dense]')."
        ),
    )
    model: str | None = Field(
        None,
        min_length=1,
        description=("`semantic: onnx`: the ONNX model file (relative to toolgen.yaml); never downloaded."),
    )
    model_sha256: str | None = Field(
        None, pattern=_SHA256, description="The model file's SHA-256, lower-case hex."
    )
    tokenizer: str | None = Field(
        None,
        min_length=1,
        description=("`semantic: onnx`: the model's tokenizer.json (relative to toolgen.yaml)."),
    )
    tokenizer_sha256: str | None = Field(
        None, pattern=_SHA256, description=("The tokenizer file's SHA-256, lower-case hex.")
    )

    @model_validator(mode="after")
    def _dense_keys(self) -> SearchConfig:
        given = [k for k in DENSE_KEYS if getattr(self, k) is not None]
        if self.semantic == "onnx" and len(given) != len(DENSE_KEYS):
            missing = ", ".join(k for k in DENSE_KEYS if k not in given)
            raise ValueError(
                f"semantic: onnx needs {missing}: the model and tokenizer files and their SHA-256 "
                "(sha256sum FILE)"
            )
        if self.semantic != "onnx" and given:
            raise ValueError(f"{', '.join(given)} only go with semantic: onnx")
        return self


class RegistryConfig(_Strict):
    """What the API's ``server.json`` for the MCP registry says (format 2025-12-11); without it none is written."""

    name: str = Field(
        min_length=3,
        max_length=200,
        pattern=r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$",
        description=(
            "Server name in reverse-DNS form, one slash: `io.github.<owner>/<name>` or `<your.domain>/<name>` "
            "(the registry checks that you own the namespace)."
        ),
    )
    version: str | None = Field(
        None,
        min_length=1,
        max_length=255,
        pattern=r"^[^\s^~<>=*]+$",
        description="Default: the spec's info.version. A version, never a range.",
    )
    description: str | None = Field(
        None, min_length=1, max_length=100, description="Default: the API's title and how many tools it has."
    )
    url: str | None = Field(
        None,
        pattern=r"^https?://[^\s]+$",
        description="Where `toolgen serve --http` answers (its /mcp endpoint): a remote.",
    )
    repository: str | None = Field(
        None, pattern=r"^https?://[^\s]+$", description="URL of the source repository."
    )
    website: str | None = Field(None, pattern=r"^https?://[^\s]+$", description="URL of the documentation.")


class ApiEntry(_Strict):
    name: str = Field(pattern=API_NAME_PATTERN, description="API name; also the Python package name.")
    intent_map: PathText
    out: PathText
    spec: PathText | None = None
    emit: list[KnownArtifact] | None = None
    dialects: DialectsConfig | None = Field(
        None, description="This API's dialect choices (override the project's)."
    )
    search: SearchConfig | None = Field(
        None, description="This API's tool-search options (override the project's)."
    )
    registry: RegistryConfig | None = Field(None, description="Write server.json for the MCP registry.")


class LintConfig(_Strict):
    severity: dict[str, Literal["error", "warning", "info", "off"]] = Field(default_factory=dict)
    max_tools: int | None = Field(None, ge=1)
    max_catalog_tokens: int | None = Field(None, ge=1)
    large_output_tokens: int | None = Field(None, ge=1)
    client_prefix: str | None = Field(
        None,
        max_length=63,
        description=(
            "The prefix a client puts before every tool name (e.g. mcp__github__); it counts toward the "
            "providers' name-length limits."
        ),
    )
    max_tool_tokens: int | None = Field(
        None, ge=1, description="One tool's o200k tokens in any dialect (`tool-too-large`)."
    )
    max_catalog_bytes: int | None = Field(
        None,
        ge=1,
        description="Compact-JSON bytes of the tools' schemas, "
        "which every catalog file repeats (`catalog-too-many-bytes`).",
    )


class ProjectFile(_Strict):
    toolgen: Literal[1]
    apis: list[ApiEntry] = Field(default_factory=list)
    emit: list[KnownArtifact] = Field(default_factory=lambda: list(ALL_ARTIFACTS))
    schema_out: PathText | None = Field(
        "generated/intent-map.schema.json",
        description="Where to write the intent-map JSON Schema (null: don't).",
    )
    lint: LintConfig = LintConfig()
    dialects: DialectsConfig = Field(DialectsConfig(), description="How catalogs are shaped, per dialect.")
    search: SearchConfig = Field(SearchConfig(), description="What search.json holds for tool search.")


@dataclass(frozen=True)
class ApiTarget:
    """One API to build, with every path resolved."""

    name: str
    intent_map: Path
    out: Path
    spec: Path | None  # None: the intent map's `spec:` key
    emit: tuple[Artifact, ...]
    gemini_parameters: GeminiParameters = "schema"  # toolgen.yaml `dialects.gemini.parameters`
    semantic_search: str | None = None  # toolgen.yaml `search.semantic` (None: off)
    semantic_at: SourceLocation | None = None  # where that option is set
    anthropic_input_examples: bool = True  # toolgen.yaml `dialects.anthropic.input_examples`
    registry: RegistryListing | None = None  # toolgen.yaml `registry:` of the API (server.json)
    dense: DenseConfig | None = None  # toolgen.yaml `search:` with `semantic: onnx`
    out_at: SourceLocation | None = None  # where toolgen.yaml sets `out` (`outputs_outside`)


@dataclass(frozen=True)
class DenseConfig:
    """The dense option's files and pins, as toolgen.yaml states them: `model` and `tokenizer`
    resolved against its folder, and where each key is (`at`: key -> location), for the build's
    located errors (`toolgen.builder.build.target_options`)."""

    model: Path
    model_sha256: str
    tokenizer: Path
    tokenizer_sha256: str
    at: dict[str, SourceLocation]


@dataclass
class Project:
    root: Path
    file: Path | None
    targets: list[ApiTarget]
    schema_out: Path | None
    lint: LintConfig = field(default_factory=LintConfig)
    schema_out_at: SourceLocation | None = None  # where toolgen.yaml sets `schema_out`, if it does


def spec_override(name: str, cli: dict[str, str]) -> Path | None:
    if name in cli:
        return Path(cli[name])
    env = os.environ.get(f"TOOLGEN_SPEC_{name.upper()}")
    return Path(env) if env else None


def find_project_file(start: Path) -> Path | None:
    """The nearest `toolgen.yaml` in the folder of `start` (a file) or above it, else None: a single
    intent map is built relative to the project that holds it."""
    here = start.resolve().parent
    for folder in (here, *here.parents):
        candidate = folder / PROJECT_FILE
        if candidate.is_file():
            return candidate
    return None


def load_project(path: Path, spec_overrides: dict[str, str] | None = None) -> Project:
    """Read `toolgen.yaml` (YAML 1.2, `toolgen.yaml_text.read_yaml`, the reader the runtime finds an
    API by). Raises `DiagnosticError` (located) for a bad file."""
    display = display_path(path)
    overrides = spec_overrides or {}
    try:
        text = path.read_text(encoding="utf-8")
        root_node = read_yaml(text)
    except FileNotFoundError:
        raise DiagnosticError.one(
            "project-not-found",
            f"no project file {display}",
            SourceLocation(display),
            "run toolgen in the folder that holds toolgen.yaml, pass "
            "--project, or build one intent map: "
            "toolgen build INTENT_MAP --out DIR",
        ) from None
    except RecursionError:
        raise yaml_too_deep(text, display) from None
    except Exception as exc:  # noqa: BLE001 - ruamel raises several unrelated error types for bad input
        raise DiagnosticError(
            [Diagnostic("yaml-syntax", "error", f"invalid YAML: {exc}", SourceLocation(display))]
        ) from None
    checked_tree(root_node, text, display)  # aliases bounded before plain_yaml expands them
    data = plain_yaml(root_node)
    try:
        model = ProjectFile.model_validate(data)
    except ValidationError as exc:
        diags = []
        for err in exc.errors():
            tokens = [str(p) for p in err["loc"]]
            line, col = locate_ruamel(root_node, tokens)
            msg = err["msg"] if err["type"] != "extra_forbidden" else f"unknown key `{tokens[-1]}`"
            if err["type"] == "value_error":  # a validator's own message, without pydantic's prefix
                msg = str(err.get("ctx", {}).get("error", msg))
            diags.append(
                Diagnostic(
                    "project-invalid",
                    "error",
                    f"{'.'.join(tokens) or 'toolgen.yaml'}: {msg}",
                    SourceLocation(display, line, col, "/" + "/".join(tokens)),
                    "see README.md, 'The project file'",
                )
            )
        raise DiagnosticError(diags) from None
    base = path.parent
    names = [a.name for a in model.apis]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DiagnosticError.one(
            "project-invalid",
            f"API name {dup[0]!r} is listed twice",
            SourceLocation(display),
            "give every API a distinct name",
        )
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise DiagnosticError.one(
            "spec-override-unknown",
            f"--spec names API {unknown[0]!r}, which {display} does not list",
            SourceLocation(display),
            f"known APIs: {', '.join(names)}",
        )
    targets = []
    for i, api in enumerate(model.apis):
        override = spec_override(api.name, overrides)
        spec = override if override is not None else (base / api.spec if api.spec else None)
        gemini = (
            (api.dialects.gemini.parameters if api.dialects is not None else None)
            or model.dialects.gemini.parameters
            or "schema"
        )
        examples = next(
            (
                v
                for v in (
                    (api.dialects.anthropic.input_examples if api.dialects is not None else None),
                    model.dialects.anthropic.input_examples,
                )
                if v is not None
            ),
            True,
        )
        own = api.search is not None and api.search.semantic is not None
        search = api.search if own and api.search is not None else model.search
        prefix = ["apis", str(i), "search"] if own else ["search"]
        semantic_key = [*prefix, "semantic"]
        semantic = search.semantic
        line, col = locate_ruamel(root_node, semantic_key)
        dense = _dense_config(search, prefix, base, root_node, display) if semantic == "onnx" else None
        targets.append(
            ApiTarget(
                api.name,
                base / api.intent_map,
                base / api.out,
                spec,
                tuple(api.emit or model.emit),
                gemini,
                None if semantic in (None, "none") else semantic,
                SourceLocation(display, line, col, "/" + "/".join(semantic_key)),
                examples,
                RegistryListing(**api.registry.model_dump()) if api.registry is not None else None,
                dense,
                _located(root_node, display, ["apis", str(i), "out"]),
            )
        )
    return Project(
        base,
        path,
        targets,
        base / model.schema_out if model.schema_out else None,
        model.lint,
        _located(root_node, display, ["schema_out"]) if "schema_out" in model.model_fields_set else None,
    )


def _located(root_node: object, display: str, tokens: list[str]) -> SourceLocation:
    line, col = locate_ruamel(root_node, tokens)
    return SourceLocation(display, line, col, "/" + "/".join(tokens))


def outputs_outside(project: Project) -> list[Diagnostic]:
    """One located ``project-output-outside`` error for each output path toolgen.yaml sets for the
    project's targets (``apis[].out``; ``schema_out``) that resolves outside the folder holding
    toolgen.yaml: ``..`` and the symbolic links of the parts that exist are resolved first, so
    ``out: ../../etc``, ``out: /etc`` and a link inside the folder to a folder outside it are all
    outside. A toolgen.yaml changed in a pull request could otherwise make a CI build write (or, with
    ``--check``, read and print) files wherever the runner can. Empty for a project without a file
    (nothing of toolgen.yaml to distrust); ``toolgen build --allow-outside-project`` skips the check."""
    if project.file is None:
        return []
    root = project.root.resolve()
    named: list[tuple[str, Path, SourceLocation | None]] = [
        (f"apis[{i}].out (API {t.name!r})", t.out, t.out_at) for i, t in enumerate(project.targets)
    ]
    if project.schema_out is not None:
        named.append(("schema_out", project.schema_out, project.schema_out_at))
    found = []
    for key, path, at in named:
        resolved = path.resolve()
        if resolved != root and root not in resolved.parents:
            found.append(
                Diagnostic(
                    "project-output-outside",
                    "error",
                    f"{key}: {display_path(path)} resolves to {resolved}, outside the project folder "
                    f"{root} that holds {project.file.name}",
                    at or SourceLocation(display_path(project.file)),
                    "write a path inside the project folder (relative to toolgen.yaml, without leading "
                    "`..`), or pass `toolgen build --allow-outside-project` if you mean it",
                )
            )
    return found


def _dense_config(
    search: SearchConfig, prefix: list[str], base: Path, root_node: object, display: str
) -> DenseConfig:
    """The `DenseConfig` of a `search:` block with ``semantic: onnx`` (its four keys are there: the
    model's validator requires them), each key located at `prefix` + its name."""
    at = {}
    for key in DENSE_KEYS:
        line, col = locate_ruamel(root_node, [*prefix, key])
        at[key] = SourceLocation(display, line, col, "/" + "/".join([*prefix, key]))
    return DenseConfig(
        base / str(search.model),
        str(search.model_sha256),
        base / str(search.tokenizer),
        str(search.tokenizer_sha256),
        at,
    )


NEW_PROJECT_HEADER = """\
# The APIs this project builds. `toolgen build` builds them all; `toolgen build --check` fails when
# their generated files are stale (run it in CI).
"""


def add_api(path: Path, name: str, intent_map: str, out: str) -> str:
    """Add an API to the project file at `path` (created if missing), keeping the comments and layout
    of an existing one. Returns "created", "added", or "listed" (an API of that name is there
    already; the file is left as it is). Paths are relative to the project file's folder. Raises a
    located `DiagnosticError` for a project file that cannot be read."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    entry = CommentedMap([("name", name), ("intent_map", intent_map), ("out", out)])
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    if not path.exists():
        import io

        buf = io.StringIO()
        yaml.dump(CommentedMap([("toolgen", 1), ("apis", CommentedSeq([entry]))]), buf)
        _write_atomic(path, NEW_PROJECT_HEADER + buf.getvalue())
        return "created"
    project = load_project(path)  # a located error for a bad file, before anything changes
    if any(t.name == name for t in project.targets):
        return "listed"
    root = yaml.load(path.read_text(encoding="utf-8"))
    apis = root.get("apis")
    if apis is None:
        root["apis"] = CommentedSeq([entry])
    else:
        apis.append(entry)
    import io

    buf = io.StringIO()
    yaml.dump(root, buf)
    _write_atomic(path, buf.getvalue())
    return "added"


def _write_atomic(path: Path, text: str) -> None:
    """Replace toolgen.yaml at `path` with `text` (`toolgen.durable.replace_file`: flushed to disk,
    renamed over it, its folder flushed), keeping the permission bits of the file it replaces."""
    mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else new_file_mode()
    replace_file(path, text.encode("utf-8"), mode)
