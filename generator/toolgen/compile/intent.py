"""Stage `intent`: an intent-map YAML file -> a validated `IntentMap` with source positions.

Input: the path of an intent map. Output: `LoadedIntentMap`: the pydantic `IntentMap`, the path to
show in messages and the ruamel.yaml tree that locates any key at file:line:col.

The intent map says, per operation, what it means: effect, permission scope, approval, idempotency
key, pagination, output projection and budget. Its format is defined once, by the pydantic models
below and the members of a tool intent they compose (`toolgen.compile.intent_members`, importable
from here; unknown keys are errors); the same models produce the published JSON Schema
(`intent_map_json_schema`) that editors use.

Errors are located `Diagnostic`s (file:line:col from the YAML) raised as `DiagnosticError`; a
validation error's message and hint are `toolgen.compile.intent_errors`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from ..diagnostics import Diagnostic, DiagnosticError, SourceLocation, display_path
from ..naming import ARG_NAME_RE, path_text_problem
from ..policy.members import MAX_PAGE_SIZE, MAX_PREVIEW_TTL_S, MAX_TIMEOUT_MS
from ..remember import Remember, computed
from ..yaml_text import plain_yaml, read_yaml
from .intent_blocks import load_blocks
from .intent_errors import invalid_diagnostics
from .intent_members import (
    ApprovalCondition,
    ArgSpec,
    IdempotencySpec,
    LimitSpec,
    OutputSpec,
    PaginationSpec,
    RecordSpec,
    RetrySpec,
    StrictModel,
    duration_s,
)
from .load import checked_tree, yaml_too_deep
from .sourcemap import locate_ruamel

Effect = Literal["read", "write", "destructive"]
Loading = Literal["eager", "deferred"]
#: the value of an include group's `toolset` that names each operation's toolset after its first tag
TOOLSET_FROM_TAG = "from_tag"
#: the value of an include group's `toolset` that names each operation's toolset after its path's first
#: resource segment (``/v1/customers/{id}`` -> customers), for specs without tags
TOOLSET_FROM_PATH = "from_path"

#: bounds of the search expansions (`examples`, `use_when`, `not_for`): a few short requests, one line each
MAX_EXAMPLES = 10
MAX_EXAMPLE_CHARS = 200
MAX_GUIDANCE_CHARS = 300

#: one request in users' words (`examples`), and the one-line guidance of `use_when` / `not_for`
ExampleText = Annotated[str, Field(min_length=3, max_length=MAX_EXAMPLE_CHARS, pattern=r"\S")]
GuidanceText = Annotated[str, Field(min_length=3, max_length=MAX_GUIDANCE_CHARS, pattern=r"\S")]
EXAMPLES_DOC = (
    'Requests in users\' own words that this tool serves ("refund the last order"), a few each; tool '
    "search indexes them in their own field. Not sent to any model."
)
USE_WHEN_DOC = (
    'One line: when to use this tool. Appended to its description in every catalog ("Use when: ...").'
)
NOT_FOR_DOC = (
    "One line: what this tool is not for, and what to use instead. Appended to its description "
    '("Not for: ..."); tool search never indexes it.'
)


class ToolIntent(StrictModel):
    """One intent: an operation and what it means. Reads become one tool named by the key; write and
    destructive intents become `preview_<key>` and `record_<key>`."""

    operation: str = Field(description="operationId, or `METHOD /path` as in the spec.")
    effect: Effect
    permission: str | list[str] | None = Field(None, description="Scope(s) the actor needs.")
    approval: Literal["never", "required"] | ApprovalCondition | None = Field(
        None, description="`required`, `never`, or `{when: EXPR}`: required when the CEL condition holds."
    )
    limits: list[LimitSpec] | None = Field(
        None, description="What the tool may send per window; default `defaults.limits`, `[]` for none."
    )
    idempotency: IdempotencySpec | None = None
    pagination: PaginationSpec | None = None
    output: OutputSpec | None = None
    description: str | None = None
    title: str | None = None
    timeout_ms: int | None = Field(None, ge=1, le=MAX_TIMEOUT_MS)
    retry: RetrySpec | None = None
    max_body_bytes: int | None = Field(
        None,
        ge=1,
        description="The most bytes the encoded request body may have (the API's own limit, or what a model may "
        "send). The runtime refuses a larger body with `invalid_arguments` before it previews, stores "
        "or sends anything. Default: `defaults.max_body_bytes`, else no limit.",
    )
    fixed: dict[str, Any] = Field(
        default_factory=dict,
        description="Parameters the runtime always sends and the model never sees, by wire name "
        "(`in:name` to disambiguate, e.g. `header:Notion-Version`).",
    )
    hide: list[str] = Field(
        default_factory=list,
        description="Optional parameters or body properties (wire names) the model never sees and the runtime "
        "never sends.",
    )
    null: dict[str, Literal["omit", "send"]] = Field(
        default_factory=dict, description="Per argument: what a null value means (default omit)."
    )
    preview: bool | None = Field(
        None,
        description="`false` drops the `preview_<key>` tool of a write without approval (`approval: never`); "
        "`record_<key>` then takes the full arguments. Refused with `approval: required` or "
        "`record.arguments: preview`. Default: a write has a preview tool.",
    )
    record: RecordSpec | None = Field(
        None,
        description="What the record tool takes: the stored preview or the full arguments, and the "
        "preview's lifetime.",
    )
    args: dict[str, ArgSpec] = Field(
        default_factory=dict,
        description="Per argument (by the name the model sees): a narrower `schema`, a `description`, `hide`.",
    )
    toolset: str | None = Field(
        None, description="The toolset (namespace) this intent's tools belong to: a key of `toolsets`."
    )
    loading: Loading | None = Field(
        None,
        description="`eager` (always in the catalog) or `deferred` (found by tool search); default: "
        "the toolset's `loading`, else eager.",
    )
    keywords: list[str] = Field(
        default_factory=list,
        description="Words users say for this tool that its name and description lack; "
        "tool search indexes them.",
    )
    input_examples: list[dict[str, Any]] | None = Field(
        None,
        max_length=3,
        description="Argument objects (by the names the model sees) shown to models beside the read or preview "
        "tool's input schema (Anthropic `input_examples`); each must be valid under that schema and "
        "name no secret. They replace the spec's own examples; `[]` shows none. At most 3.",
    )
    programmatic: list[Literal["read", "preview", "record"]] | None = Field(
        None,
        description="Which of this intent's tools model-written code may call (Anthropic `allowed_callers` with "
        "code execution, OpenAI Responses `allowed_callers: programmatic`): `read` (a read intent's "
        "tool) and `preview` (a write's preview tool). `record` is refused: a loop in code must never "
        "write. Default: `defaults.programmatic` (none: direct calls only).",
    )
    examples: list[ExampleText] = Field(
        default_factory=list, max_length=MAX_EXAMPLES, description=EXAMPLES_DOC
    )
    use_when: GuidanceText | None = Field(None, description=USE_WHEN_DOC)
    not_for: GuidanceText | None = Field(None, description=NOT_FOR_DOC)
    strict: bool = Field(
        True,
        strict=True,
        description="`false` asks for this intent's tools (read, preview and record) to be sent non-strict: OpenAI "
        "gets `strict: false` and the natural argument schema (no reshaped arguments), Anthropic never "
        "marks them strict. The runtime still validates every call against the canonical schema. "
        "Default: true (every tool strict where the provider allows).",
    )


#: a composite step's id, and the name a composite's `$<id>` references use
STEP_ID_RE = r"^[a-z][a-z0-9_]{0,63}$"


class CompositeStepSpec(StrictModel):
    """One step of a composite: an operation, its arguments mapped from the composite's input, earlier
    steps' answers and literals (docs/composites.md, "The mapping language")."""

    id: str = Field(
        pattern=STEP_ID_RE,
        description="The step's id, unique in the composite; `$<id>/...` "
        "references read its answer. `input` is reserved.",
    )
    operation: str = Field(description="operationId, or `METHOD /path` as in the spec.")
    args: dict[str, Any] = Field(
        default_factory=dict,
        description="Step argument (by the name its tool would take) -> a reference (`$input/<name>`, "
        "`$<step id>/<JSON pointer>`) or a literal (objects and arrays may hold references; `$$` "
        "starts a literal `$`).",
    )
    when: str | None = Field(
        None, description="Branch steps: the value of the switch argument that takes this step."
    )


class CompositeIntent(StrictModel):
    """A composite tool: one intent over several operations of the API (docs/composites.md). A read
    composite is one tool (`get_<key>` unless the key starts with a read verb); a composite with a
    write step is `preview_<key>` + `record_<key>`."""

    pattern: Literal["pipeline", "branch", "aggregate"] = Field(
        description="`pipeline`: steps in order, later ones may read earlier answers; `branch`: the step "
        "whose `when` equals the `switch` argument runs; `aggregate`: reads at once, merged, "
        "partial errors reported."
    )
    description: str = Field(min_length=1, description="What the tool is for and when to use it.")
    title: str | None = None
    steps: list[CompositeStepSpec] = Field(min_length=1)
    switch: str | None = Field(
        None, description="Branch only: `$input/<argument>`, the argument that chooses."
    )
    output: dict[str, Any] | None = Field(
        None,
        description="The combined result: member -> reference or literal. Default: one member per "
        "step, its whole answer.",
    )
    output_fields: list[str] = Field(
        default_factory=list, description="Dotted paths of the combined result to keep; empty = all."
    )
    redact: list[str] = Field(
        default_factory=list,
        description="Dotted paths of the combined result replaced by '[redacted]' (added "
        "to those the steps' own intents redact).",
    )
    max_bytes: int | None = Field(None, ge=256, description="Size budget of the serialised result.")
    inputs: dict[Annotated[str, Field(pattern=ARG_NAME_RE.pattern)], dict[str, Any]] = Field(
        default_factory=dict,
        description="Argument name -> its JSON Schema, for arguments whose schema cannot be taken from a step "
        "argument (a reference nested in a literal or into a member of an argument).",
    )
    effect: Effect | None = Field(None, description="Only stricter than the strictest step (derived).")
    permission: str | list[str] | None = Field(
        None, description="Scopes added to the union of the steps' scopes (never fewer)."
    )
    approval: Literal["never", "required"] | None = Field(
        None,
        description="`required` is derived for a composite with a write; a read composite may ask for it.",
    )
    idempotency: IdempotencySpec | None = Field(
        None,
        description="The record tool's idempotency key argument (default `action_id`); each write step's "
        "key is `<key>.<step id>`. `send_as` must stay `none`.",
    )
    timeout_ms: int | None = Field(
        None, ge=1, le=MAX_TIMEOUT_MS, description="One deadline for the whole composite."
    )
    toolset: str | None = None
    loading: Loading | None = None
    keywords: list[str] = Field(default_factory=list)
    examples: list[ExampleText] = Field(
        default_factory=list, max_length=MAX_EXAMPLES, description=EXAMPLES_DOC
    )
    use_when: GuidanceText | None = Field(None, description=USE_WHEN_DOC)
    not_for: GuidanceText | None = Field(None, description=NOT_FOR_DOC)
    strict: bool = Field(True, strict=True)


class IncludeSpec(StrictModel):
    """A group of operations taken whole, effects inferred from what each operation says it does (the verb of its
    Action, operationId, path or summary; the method when they name none; never a read on POST) unless given."""

    match: str = Field("*", description="Glob on operationId, `METHOD /path`, or `tag:NAME`.")
    exclude: list[str] = Field(default_factory=list, description="Globs of the same kinds to leave out.")
    effect: Effect | Literal["inferred"] = "inferred"
    permission: str | list[str] | None = Field(
        None, description="Default: the operation's OAuth scopes, else `<api>:<effect>`."
    )
    approval: Literal["never", "required"] | None = None
    prefix: str = Field("", pattern=r"^[A-Za-z0-9_-]*$", description="Prefix for generated tool names.")
    paginate: bool = Field(True, description="Detect pagination from common parameter names.")
    toolset: str | None = Field(
        None,
        description="The toolset of the group's tools: a key of `toolsets`, `from_tag` (each operation's "
        "first tag, written as a toolset name; declare it under `toolsets` to give its "
        "description and loading) or `from_path` (the path's first segment that is not a "
        "version, e.g. customers in /v1/customers/{id}; for specs without tags).",
    )
    loading: Loading | None = Field(
        None, description="`eager` or `deferred` for the group's tools; default: the toolset's `loading`."
    )


class ToolsetSpec(StrictModel):
    """A toolset: a named group of tools (a namespace in OpenAI's Responses API) and how it loads."""

    description: str = Field(
        min_length=1,
        max_length=200,
        description="What the toolset's tools are for, in one short sentence (models "
        "read it before they search).",
    )
    loading: Loading = Field(
        "eager",
        description="`eager`: its tools are always in the catalog; `deferred`: "
        "found by tool search. A tool's own `loading` wins.",
    )
    examples: list[ExampleText] = Field(
        default_factory=list,
        max_length=MAX_EXAMPLES,
        description="Requests in users' own words that the toolset's tools serve; tool search indexes them with "
        "each of its tools.",
    )


class Defaults(StrictModel):
    timeout_ms: int = Field(5000, ge=1, le=MAX_TIMEOUT_MS)
    page_size: int = Field(20, ge=1)
    max_page_size: int = Field(100, ge=1, le=MAX_PAGE_SIZE)
    output_max_bytes: int = Field(16_000, ge=256)
    output_depth: int = Field(3, ge=1, le=32, description="Most levels kept in an unprojected output schema.")
    output_schema_nodes: int = Field(
        400,
        ge=10,
        description="Node budget of an unprojected output schema: fewer levels are kept when the "
        "deepest allowed level would exceed it.",
    )
    output_schema_mode: Literal["strict", "warn", "off"] = "warn"
    preview_ttl_s: int = Field(
        900,
        ge=10,
        le=MAX_PREVIEW_TTL_S,
        description="Seconds a stored preview stays executable by its record tool (see `tools.*.record`).",
    )
    approval_write: Literal["never", "required"] = "required"
    approval_destructive: Literal["never", "required"] = "required"
    description_max_chars: int = Field(1000, ge=80)
    argument_description_max_chars: int = Field(200, ge=40)
    output_descriptions: bool = Field(
        False, description="Keep property descriptions in output schemas (they cost catalog tokens)."
    )
    member_descriptions: bool = Field(
        False,
        description="Keep the descriptions of members nested in arguments, each cut to its first "
        "sentence (they cost catalog tokens and make large tools match every request in a "
        "provider's tool search). An argument's own description is always kept.",
    )
    retry: RetrySpec = RetrySpec()
    max_body_bytes: int | None = Field(
        None,
        ge=1,
        description="Request body limit of every tool whose intent sets none (`tools.*.max_body_bytes`).",
    )
    programmatic: list[Literal["read", "preview", "record"]] = Field(
        default_factory=list,
        description="The tools of every intent that sets no `programmatic` which model-written code may call: "
        "`read`, `preview` (`record` is refused). Default: none, direct calls only.",
    )
    limits: list[LimitSpec] = Field(
        default_factory=list,
        description="The limits of every tool whose intent sets no `limits` "
        "(a `per: api` limit here is one budget over the API's tools).",
    )


class PerCallerSpec(StrictModel):
    """Each caller reaches the API with its own credential for this scheme (`toolgen serve --http`
    with several callers): `via: exchange` trades the caller's access token for one for this API at
    the authorization server (RFC 8693 token exchange; `audience`, `resource`, `scope` are what it
    asks for), `via: lookup` takes the caller's own secret by its principal (`--caller-secrets` or a
    resolver). `service_secret` says when the scheme's shared `secret` may stand in for a caller
    without one: never (default), reads, or always (writes too)."""

    via: Literal["exchange", "lookup"] = Field(description="exchange (RFC 8693) or lookup (by principal).")
    audience: str | None = Field(None, min_length=1, description="Token exchange: the `audience` asked for.")
    resource: str | None = Field(
        None, min_length=1, description="Token exchange: the `resource` URI asked for."
    )
    scope: str | None = Field(None, min_length=1, description="Token exchange: the `scope` asked for.")
    service_secret: Literal["never", "reads", "always"] = Field(
        "never", description="When the shared `secret` may stand in for a caller without its own credential."
    )

    @model_validator(mode="after")
    def _exchange_only(self) -> PerCallerSpec:
        if self.via == "lookup" and (self.audience or self.resource or self.scope):
            raise ValueError("audience, resource and scope apply to `via: exchange` only")
        return self


class AuthSpec(StrictModel):
    """The runtime secret of a security scheme. For a spec that declares no security (GitHub's), give
    `kind` (and for apiKey `in`/`name`): the credential then applies to every operation."""

    secret: str = Field(
        description="Name of the runtime secret (environment variable) holding the credential.",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
    )
    kind: Literal["bearer", "basic", "apiKey"] | None = Field(
        None, description="Declare a scheme the spec lacks: bearer, basic or apiKey."
    )
    in_: Literal["header", "query", "cookie"] = Field("header", alias="in")
    name: str | None = Field(None, description="apiKey parameter name (default: Authorization).")
    per_caller: PerCallerSpec | None = Field(
        None, description="Each caller's own credential for this scheme (token exchange or lookup)."
    )


class Budgets(StrictModel):
    max_schema_nodes: int = Field(20_000, ge=10)
    max_schema_depth: int = Field(64, ge=2)
    max_parameters: int = Field(500, ge=1)


class ApiSpec(StrictModel):
    name: str | None = Field(
        None,
        pattern=r"^[a-z_][a-z0-9_]*$",
        description="API name: lower-case letters, digits, '_' (also the Python package name).",
    )

    @field_validator("name")
    @classmethod
    def _importable(cls, value: str | None) -> str | None:
        import keyword

        if value is not None and (keyword.iskeyword(value) or keyword.issoftkeyword(value)):
            raise ValueError(f"{value!r} is a Python keyword, so the generated package could not be imported")
        return value

    title: str | None = None
    base_url: str | None = None
    headers: dict[str, str] = Field(
        default_factory=dict, description="Headers the runtime sends on every call (e.g. an API version)."
    )


class IntentMap(StrictModel):
    """The whole intent map file."""

    toolgen: Literal[1] = Field(description="Format version of the intent map.")
    spec: str | None = Field(None, description="Path of the OpenAPI document, relative to this file.")

    @field_validator("spec")
    @classmethod
    def _spec_path(cls, value: str | None) -> str | None:
        problem = path_text_problem(value or "")
        if problem is not None:
            raise ValueError(problem)
        return value

    allow_external_refs: bool = Field(
        False, description="Bundle `$ref`s to other files (never URLs) into the spec before building."
    )
    api: ApiSpec = ApiSpec()
    auth: dict[str, AuthSpec] = Field(
        default_factory=dict, description="securitySchemes key -> runtime secret."
    )
    defaults: Defaults = Defaults()
    budgets: Budgets = Budgets()
    tools: dict[str, ToolIntent] = Field(default_factory=dict)
    include: list[IncludeSpec] = Field(default_factory=list)
    toolsets: dict[str, ToolsetSpec] = Field(
        default_factory=dict,
        description="Toolset name -> its description and loading. Names: a letter, then "
        "letters, digits, '_' or '-', at most 64 characters.",
    )
    composites: dict[str, CompositeIntent] = Field(
        default_factory=dict,
        description="Composite tools: one intent over several operations (pipeline, "
        "branch, aggregate), every step enforced like a tool of its own.",
    )
    examples: dict[str, Annotated[list[ExampleText], Field(max_length=MAX_EXAMPLES)]] = Field(
        default_factory=dict,
        description="operationId or `METHOD /path` -> requests in users' own words that its tool serves, for "
        "operations an `include` group takes (an intent under `tools` says its own `examples`); "
        "added to that tool's `examples`.",
    )


@dataclass
class LoadedIntentMap:
    """A validated intent map plus what is needed to locate its keys in diagnostics."""

    model: IntentMap
    path: Path
    display: str
    root: Any  # ruamel round-trip tree
    text: str = ""  # the map's text, to place a position inside a value (an approval condition's)

    def locate(self, *keys: str | int) -> SourceLocation:
        """file:line:col of the key path (e.g. ``("tools", "get_ticket", "operation")``)."""
        tokens = [str(k) for k in keys]
        line, col = locate_ruamel(self.root, tokens) if self.root is not None else (None, None)
        pointer = "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)
        return SourceLocation(self.display, line, col, pointer)

    def spec_path(self) -> Path | None:
        if self.model.spec is None:
            return None
        return self.path.parent / self.model.spec


def load_intent_map(path: Path, display: str | None = None, remember: Remember = computed) -> LoadedIntentMap:
    """Read and validate an intent map. Raises `DiagnosticError` with located diagnostics. The last
    map loaded is kept while its text stays the same (read again each time): the caller must not
    change what it returns. `remember`: where each tool's block of the YAML is kept by its text
    (`toolgen.compile.intent_blocks`: a map of toolgen's own layout is read from them, the same tree)."""
    display = display or display_path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DiagnosticError.one(
            "file-not-found",
            f"intent map not found: {display}",
            SourceLocation(display),
            "check the path",
        ) from None
    except IsADirectoryError:
        raise DiagnosticError.one(
            "file-unreadable",
            f"{display} is a folder, not an intent map",
            SourceLocation(display),
            "name the intent map's .yaml file",
        ) from None
    except UnicodeDecodeError as exc:
        raise DiagnosticError.one(
            "file-encoding",
            f"{display} is not UTF-8 text (byte {exc.start})",
            SourceLocation(display),
            "save the intent map as UTF-8 YAML",
        ) from None
    except OSError as exc:
        raise DiagnosticError.one(
            "file-unreadable",
            f"cannot read {display}: {exc.strerror}",
            SourceLocation(display),
            "check that the file exists and is readable",
        ) from None
    last = _LAST_LOADED.get((str(path), display))
    if last is not None and last[0] == text:
        return last[1]  # `toolgen build` reads the map for its inputs' key, then builds from it
    loaded = _parse_intent_map(text, path, display, remember)
    _LAST_LOADED.clear()
    _LAST_LOADED[(str(path), display)] = (text, loaded)
    return loaded


#: the last intent map loaded in this process, by its path and display name: its text and what it gave
_LAST_LOADED: dict[tuple[str, str], tuple[str, LoadedIntentMap]] = {}


def _parse_intent_map(text: str, path: Path, display: str, remember: Remember = computed) -> LoadedIntentMap:
    """`load_intent_map` of `text`, read from `path`: parsed (ruamel.yaml's round trip, about a second
    for a drafted map of 1,800 tools, or its tools' blocks remembered through `remember`), checked
    and validated."""
    from ruamel.yaml.error import MarkedYAMLError

    def parse(part: str) -> Any:
        return read_yaml(part)

    try:
        root = load_blocks(text, parse, remember) if remember is not computed else None
        if root is None:
            root = parse(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise DiagnosticError.one(
            "yaml-syntax",
            f"invalid YAML: {exc.problem}",
            SourceLocation(display, mark.line + 1 if mark else None, mark.column + 1 if mark else None),
            "fix the YAML syntax at this position",
        ) from None
    except RecursionError:
        raise yaml_too_deep(text, display) from None
    except Exception as exc:  # noqa: BLE001 - ruamel raises several unrelated error types for bad input
        raise DiagnosticError(
            [Diagnostic("yaml-syntax", "error", f"invalid YAML: {exc}", SourceLocation(display))]
        ) from None
    if root is None:
        root = {}
    if not isinstance(root, dict):
        raise DiagnosticError.one(
            "intent-not-mapping",
            "an intent map must be a mapping",
            SourceLocation(display, 1, 1),
            "start from `toolgen init SPEC`",
        )
    # aliases shared in the tree, expanded by every later walk: bounded first (a "billion laughs" map)
    checked_tree(root, text, display)
    data = plain_yaml(root)
    try:
        model = IntentMap.model_validate(data)
    except ValidationError as exc:
        raise DiagnosticError(invalid_diagnostics(exc, IntentMap, root, display)) from None
    return LoadedIntentMap(model, path, display, root, text)


def intent_map_json_schema() -> dict[str, Any]:
    """The published JSON Schema (2020-12) of the intent-map format."""
    schema = IntentMap.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://toolgen.dev/schemas/intent-map-1.json"
    schema["title"] = "toolgen intent map"
    return schema


#: the public names, the members of a tool intent (`toolgen.compile.intent_members`) among them
__all__ = [
    "EXAMPLES_DOC",
    "MAX_EXAMPLES",
    "MAX_EXAMPLE_CHARS",
    "MAX_GUIDANCE_CHARS",
    "NOT_FOR_DOC",
    "STEP_ID_RE",
    "TOOLSET_FROM_PATH",
    "TOOLSET_FROM_TAG",
    "USE_WHEN_DOC",
    "ApiSpec",
    "ApprovalCondition",
    "ArgSpec",
    "AuthSpec",
    "Budgets",
    "CompositeIntent",
    "CompositeStepSpec",
    "Defaults",
    "Effect",
    "ExampleText",
    "GuidanceText",
    "IdempotencySpec",
    "IncludeSpec",
    "IntentMap",
    "LimitSpec",
    "LoadedIntentMap",
    "Loading",
    "OutputSpec",
    "PaginationSpec",
    "PerCallerSpec",
    "RecordSpec",
    "RetrySpec",
    "ToolIntent",
    "ToolsetSpec",
    "duration_s",
    "intent_map_json_schema",
    "load_intent_map",
]
