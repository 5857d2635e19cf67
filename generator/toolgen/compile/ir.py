"""The IR: the frozen, typed intermediate representation between the compile stages and the rest.

Input: built by `toolgen.compile.lower` from the spec and the intent map. Output: read by the
dialects (catalogs), `emit` (policy table, report, Python package) and the linter; nobody changes it.

An `ApiIR` holds the `Tool`s of one API. A tool is what a model sees (name, description, input and
output schema as canonical JSON Schema 2020-12) plus what the runtime enforces (`PolicyRow`), plus
how each argument reaches the wire (`ArgBinding`). Schemas here are the *canonical* form: full
constraints, original optionality; each dialect (openai/anthropic/mcp) derives its own view.

All containers are tuples (or JSON values that are never mutated after lowering), so the IR can be
shared between emitters without copies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..results import ResponseBody, Shape

Effect = Literal["read", "write", "destructive"]
Mode = Literal["read", "preview", "record"]
ArgLocation = Literal["path", "query", "header", "cookie", "body"]
BodyEncoding = Literal["none", "json", "form", "multipart", "binary", "text"]
PaginationStyle = Literal["cursor", "offset", "page", "link"]
Approval = Literal["never", "required"]
NullMeans = Literal["omit", "send"]
Loading = Literal["eager", "deferred"]

JSON = Any  # a JSON value: dict/list/str/int/float/bool/None


@dataclass(frozen=True)
class ArgBinding:
    """How one tool argument reaches the HTTP request.

    `arg` is the top-level property name in the tool's input schema. `location` is where the value
    goes; `wire_name` is the parameter or body-property name on the wire (``""`` when the argument
    *is* the whole request body, e.g. an array or binary body). `style`/`explode` follow OpenAPI
    parameter serialisation (section "Style Values"); for form bodies they come from the encoding
    object. `null_means` says what a JSON null does: ``omit`` (leave the parameter/property out) or
    ``send`` (send JSON null; only for required nullable body properties).
    """

    arg: str
    location: ArgLocation
    wire_name: str
    required: bool
    null_means: NullMeans = "omit"
    style: str | None = None
    explode: bool | None = None
    content_type: str | None = None  # multipart part or parameter `content` media type
    read_only_dropped: bool = False  # unused by runtime; set when readOnly members were removed

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {
            "arg": self.arg,
            "in": self.location,
            "name": self.wire_name,
            "required": self.required,
            "null": self.null_means,
        }
        if self.style is not None:
            out["style"] = self.style
        if self.explode is not None:
            out["explode"] = self.explode
        if self.content_type is not None:
            out["content_type"] = self.content_type
        return out


@dataclass(frozen=True)
class FixedValue:
    """A value the runtime always sends that the model never sees (e.g. an API version header).

    `source` says where a value the spec itself fixes came from: the JSON pointer (``#/...``) of the
    schema that admits this value only (a required parameter or body member with an ``enum`` of one
    or a ``const``); empty for a value from the intent map (`fixed`, `api.headers`) or a default."""

    location: ArgLocation
    wire_name: str
    value: JSON
    source: str = ""


@dataclass(frozen=True)
class AuthBinding:
    """A credential the runtime injects (never a tool argument).

    `scheme` is the securitySchemes key; `kind` is ``bearer``/``basic``/``apiKey``/``oauth2``/
    ``openIdConnect``; `location`/`wire_name` say where it goes; `secret` is the name of the runtime
    secret (an environment variable by default) holding the value.
    """

    scheme: str
    kind: str
    location: Literal["header", "query", "cookie"]
    wire_name: str
    secret: str
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Idempotency:
    """Where the idempotency key comes from (`arg`, a record-tool argument) and how it is sent.

    `send_in` is ``header``/``query``/``body`` or ``none`` (the key is used for receipts only).
    `honoured_by_api` is ``True`` when the intent map declares that the API deduplicates by the key,
    ``False`` when it declares it does not, ``None`` when it does not say (treated as ``False``).
    """

    arg: str
    send_in: Literal["header", "query", "body", "none"]
    wire_name: str | None
    honoured_by_api: bool | None = None


@dataclass(frozen=True)
class Pagination:
    """How a list operation pages, normalised by the runtime to `items` + opaque `next_cursor`.

    style cursor: `cursor_param` carries the API's cursor; `next_field` (dotted path in the response
    body) is where the next cursor is read, or for ``starting_after`` APIs the id field of the last
    item (`cursor_from_item`) together with `has_more_field`.
    style offset: `cursor_param` is the offset parameter. style page: `cursor_param` is the page
    number parameter. style link: the next URL comes from the `Link` response header (RFC 8288).
    `limit_param` is the page-size parameter; the model's `page_size` is bounded by `min_page_size`
    and `max_page_size` (the intent's bound narrowed to the parameter's `minimum`/`maximum`).
    `first_position` is the first page number (page style) or offset (offset style): the cursor
    parameter's `default`, else its `minimum`, else 1 or 0; the runtime sends it on the first request
    when `first_required` (the parameter is required), and counts the next page from it.
    `items_field` is the dotted path of the item array in the response body (``""`` when the body
    itself is the array).
    """

    style: PaginationStyle
    items_field: str
    cursor_param: str | None
    limit_param: str | None
    next_field: str | None = None
    has_more_field: str | None = None
    cursor_from_item: str | None = None
    default_page_size: int = 20
    max_page_size: int = 100
    min_page_size: int = 1
    first_position: int | None = None
    first_required: bool = False
    cursor_arg: str = "cursor"
    page_size_arg: str = "page_size"

    def to_json(self) -> dict[str, JSON]:
        return {
            "style": self.style,
            "cursor_arg": self.cursor_arg,
            "page_size_arg": self.page_size_arg,
            "items": self.items_field,
            "cursor_param": self.cursor_param,
            "limit_param": self.limit_param,
            "next_field": self.next_field,
            "has_more_field": self.has_more_field,
            "cursor_from_item": self.cursor_from_item,
            "default_page_size": self.default_page_size,
            "max_page_size": self.max_page_size,
            "min_page_size": self.min_page_size,
            "first_position": self.first_position,
            "first_required": self.first_required,
        }


@dataclass(frozen=True)
class Retry:
    """Bounded retry: at most `max_attempts` tries in total within `deadline_ms`, exponential
    backoff starting at `backoff_ms`, only for the listed retryable conditions."""

    max_attempts: int
    backoff_ms: int
    deadline_ms: int
    on: tuple[str, ...]  # e.g. ("timeout", "429", "502", "503", "504")


@dataclass(frozen=True)
class OutputPolicy:
    """What of the response the model sees.

    `fields`: projection (dotted paths) applied to the object, or to each item of a paginated
    list; empty = no projection. `max_bytes`: size budget of the serialised result; beyond it the
    runtime truncates with an explicit marker. `redact`: dotted paths replaced by ``"[redacted]"``.
    `schema_mode`: output validation mode (strict/warn/off). `shape`: how the body becomes the
    result (`toolgen.results.shape_body`: ``object``, ``result`` or ``status``), decided with the
    output schema (`toolgen.results.result_shape`). `body`: how the runtime reads the answer
    (`toolgen.results.ResponseBody`). `accept`: the media type the runtime asks for (``Accept``)
    when the response offers JSON next to other media types, else None.
    """

    fields: tuple[str, ...] = ()
    max_bytes: int = 16_000
    redact: tuple[str, ...] = ()
    schema_mode: Literal["strict", "warn", "off"] = "warn"
    shape: Shape = "object"
    body: ResponseBody = "json"
    accept: str | None = None


@dataclass(frozen=True)
class NarrowedArg:
    """An argument the intent map narrowed (``tools.<key>.args.<name>``): `schema` is the narrowed
    schema the runtime validates against (None: the canonical one kept), `description` the override
    (None: kept), `hidden` whether the argument was removed (the runtime never sends it)."""

    arg: str
    schema: JSON | None = None
    description: str | None = None
    hidden: bool = False

    def to_json(self) -> dict[str, JSON]:
        return {"arg": self.arg, "schema": self.schema, "description": self.description, "hidden": self.hidden}


@dataclass(frozen=True)
class PolicyRow:
    """One row of the runtime policy table (one per tool)."""

    tool: str
    mode: Mode
    effect: Effect
    operation_id: str
    method: str
    path: str
    permission: tuple[str, ...]
    approval: Approval
    idempotency: Idempotency | None
    retry: Retry
    timeout_ms: int
    pagination: Pagination | None
    output: OutputPolicy
    auth: tuple[AuthBinding, ...]
    body_encoding: BodyEncoding
    body_content_type: str | None
    bindings: tuple[ArgBinding, ...]
    fixed: tuple[FixedValue, ...] = ()
    pair: str | None = None  # preview_X <-> record_X
    intent: str = ""  # the intent-map key this tool came from
    success_status: tuple[int, ...] = ()
    #: record rows: ``preview`` (the record executes the stored preview, its input is the preview_id)
    #: or ``full`` (it takes every argument again); ``None`` on read and preview rows
    record_arguments: Literal["preview", "full"] | None = None
    #: record rows executing a stored preview: seconds the preview stays executable
    preview_ttl_s: int | None = None
    narrowed: tuple[NarrowedArg, ...] = ()  # intent-map `args` entries, in argument order
    toolset: str | None = None  # the toolset (namespace) of the tool, if any
    loading: Loading = "eager"  # eager: always in the catalog; deferred: found by tool search
    keywords: tuple[str, ...] = ()  # intent-map `keywords`: extra words tool search indexes


@dataclass(frozen=True)
class Toolset:
    """A named group of tools (an OpenAI Responses namespace): `description` is what a model reads
    before it searches, `loading` the toolset's default loading, `origin` where it came from
    (``declared`` under `toolsets:`; ``tag`` or ``path``: named by an include group after an operation's
    OpenAPI tag or its path's first resource segment)."""

    name: str
    description: str
    loading: Loading
    origin: Literal["declared", "tag", "path"] = "declared"


@dataclass(frozen=True)
class Tool:
    """One model-facing tool: canonical schemas + its policy row."""

    name: str
    description: str
    input_schema: JSON  # canonical JSON Schema 2020-12, root type object
    output_schema: JSON  # canonical JSON Schema 2020-12, root type object
    policy: PolicyRow
    title: str | None = None
    source_pointer: str = ""  # JSON pointer of the operation in the spec
    notes: tuple[str, ...] = ()  # constraints/defaults summarised in descriptions, for reviewers
    #: False when the intent map asks for a non-strict tool (`strict: false`): OpenAI gets the natural schema
    #: with ``strict: false`` and no argument rewrites, Anthropic never selects it as strict
    strict: bool = True


@dataclass(frozen=True)
class OperationRef:
    """An operation of the spec (for coverage)."""

    method: str
    path: str
    operation_id: str | None
    pointer: str


@dataclass(frozen=True)
class SkippedOperation:
    """An operation not turned into a tool, and why (always backed by a diagnostic)."""

    operation: OperationRef
    reason: str
    code: str


@dataclass(frozen=True)
class ApiIR:
    """Everything `emit` needs for one API."""

    name: str
    title: str
    version: str
    base_url: str
    spec_display: str
    intent_display: str
    tools: tuple[Tool, ...]
    operations: tuple[OperationRef, ...]
    covered: tuple[str, ...]  # pointers of covered operations
    skipped: tuple[SkippedOperation, ...] = ()
    diagnostics: tuple[Any, ...] = field(default=())  # Diagnostic values, sorted
    toolsets: tuple[Toolset, ...] = ()  # the toolsets tools use, sorted by name
