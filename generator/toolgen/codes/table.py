"""Kernel `codes.table`: the one registry of diagnostic codes, each with its severity, stage, summary,
fix and the docs section that explains it.

Input: nothing (the table is data). Output: `CODES` (code -> `Code`, read-only, in registration
order), `code_info` and `is_registered`. A `toolgen.diagnostics.Diagnostic` can only be made with a
code registered here (`UnregisteredCode` otherwise), so every diagnostic the build, lint, diff,
init, vendor or eval report has one row here; `toolgen.codes.docs` writes the docs tables from it
(docs/diagnostics.md, the lint rules of docs/review.md, the composite checks of docs/composites.md).

A code is kebab-case and stable: a tool or a CI job may match on it. Its `severity` is the one the
stage reports it at (lint's `lint.severity` may change a rule's; an operation of an `include` group
that cannot be lowered is skipped with a warning whatever its code's severity). `rule` says whether
`toolgen lint` lists the code as a rule (`--list-rules`, configurable in `lint.severity`): ``lint``
for a check of lint's own, ``build`` for a build diagnostic lint passes through, None for the rest
(what stops a stage, or concerns a command other than lint and build).

To add a code: one `_code(...)` call below, in its stage's group; then
`python -m toolgen.codes` to rewrite the docs tables (`--check` in CI fails when they are stale).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, get_args

Severity = Literal["error", "warning", "info"]
Stage = Literal["project", "input", "spec", "swagger2", "schema", "intent", "lower", "composite", "lint",
                "build", "init", "vendor", "diff", "eval", "policy"]
RuleSource = Literal["lint", "build"]

#: the stages in the order a build meets them, each with its title in docs/diagnostics.md and the
#: docs section that explains its codes (a code may name another)
STAGES: Mapping[Stage, tuple[str, str]] = MappingProxyType({
    "project": ("The project file (toolgen.yaml)", "README.md#the-project-file"),
    "input": ("Reading a file", "README.md#commands"),
    "spec": ("The spec", "README.md#specs"),
    "swagger2": ("Swagger 2.0 conversion", "README.md#swagger-20"),
    "schema": ("Schemas", "docs/generated-format.md#the-canonical-schemas"),
    "intent": ("The intent map", "README.md#the-intent-map"),
    "lower": ("Lowering intents to tools", "README.md#the-intent-map"),
    "composite": ("Composite tools", "docs/composites.md#what-the-build-checks"),
    "lint": ("Lint rules", "docs/review.md#lint-findings"),
    "build": ("The build", "README.md#commands"),
    "init": ("toolgen init", "docs/adopting.md#2-draft-an-intent-map"),
    "vendor": ("toolgen vendor", "docs/adopting.md#3-large-specs-commit-a-slice"),
    "diff": ("toolgen diff", "docs/review.md#reading-toolgen-diff"),
    "eval": ("toolgen eval task files", "docs/eval.md#task-file"),
    "policy": ("Reading policy.json", "docs/generated-format.md#policyjson"),
})

# the lint settings' defaults, which the rules' summaries quote (`toolgen.review.lint.rules`)
DEFAULT_MAX_TOOLS = 128  # OpenAI's limit on tools per request
DEFAULT_MAX_CATALOG_TOKENS = 32_000
DEFAULT_LARGE_OUTPUT_TOKENS = 1_500
DEFAULT_MAX_TOOL_TOKENS = 16_000  # one tool's o200k tokens in any dialect (an eighth of a 128k context)
DEFAULT_MAX_CATALOG_BYTES = 100_000_000  # the tools' schemas, which every catalog file repeats
DESCRIPTION_LIMIT = 1024

_KEBAB = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")
_RULES_DOC = "docs/review.md#lint-findings"


@dataclass(frozen=True)
class Code:
    """One diagnostic code: `code` (kebab-case), the `severity` its stage reports, the `stage`, a
    one-sentence `summary` of what it finds, the `fix` (what to do), `doc` (``file#anchor`` of the
    docs section that explains it, relative to the repository root) and `rule` (see the module)."""

    code: str
    severity: Severity
    stage: Stage
    summary: str
    fix: str
    doc: str
    rule: RuleSource | None = None


class UnregisteredCode(ValueError):
    """A diagnostic was made with a code `toolgen.codes.table` does not register."""

    def __init__(self, code: str):
        super().__init__(f"diagnostic code {code!r} is not registered: add it to toolgen/codes/table.py, "
                         "then run `python -m toolgen.codes` to update the docs")
        self.code = code


_TABLE: dict[str, Code] = {}


def _code(code: str, severity: Severity, stage: Stage, *, summary: str, fix: str, doc: str | None = None,
          rule: RuleSource | None = None) -> None:
    if code in _TABLE or not _KEBAB.fullmatch(code):
        raise ValueError(f"code {code!r} is registered twice, or is not kebab-case")
    if severity not in get_args(Severity) or stage not in STAGES:
        raise ValueError(f"code {code!r}: unknown severity {severity!r} or stage {stage!r}")
    where = doc or (_RULES_DOC if rule is not None else STAGES[stage][1])
    _TABLE[code] = Code(code, severity, stage, summary, fix, where, rule)


# ---------------------------------------------------------------------------------------------
# the rules `toolgen lint --list-rules` lists, in its order: lint's own checks, then the build's
# diagnostics lint passes through (their severity is the build's)

_code("operation-not-found", "error", "lower", rule="build",
      summary="An intent names an operation that is not in the spec.",
      fix="Use an operationId or `METHOD /path` exactly as the spec writes it.")
_code("operation-mapped-twice", "warning", "lint", rule="lint",
      summary="Two intents map the same operation without a difference that justifies it.",
      fix=("Remove one intent, or make the second a real specialisation (different `fixed` values, "
           "`hide`, `args` narrowing or `output` projection)."))
_code("tool-name-duplicate", "error", "lint", rule="lint", summary="Two intents produce the same tool name.",
      fix="Rename one intent; a write intent X also produces preview_X and record_X.")
_code("tool-name-invalid", "error", "lower", rule="build",
      summary="A tool name breaks the dialect name rules (^[a-zA-Z0-9_-]{1,64}$, prefix included).",
      fix=("Choose a name of letters, digits, '_' and '-' that stays within 64 characters with "
           "'preview_'."))
_code("effect-contradicts-method", "error", "lint", rule="lint",
      summary="The effect contradicts the HTTP method (a DELETE, PUT or PATCH marked read).",
      fix=("Mark it `write` or `destructive`: a read tool is never previewed, approved or made "
           "idempotent."))
_code("effect-write-on-safe-method", "warning", "lint", rule="lint",
      summary=("A GET/HEAD/OPTIONS operation whose Action, operationId, path and summary name no change "
               "is marked write or destructive."),
      fix="Allowed (some APIs mutate on GET), but confirm it; set this rule to `off` for APIs that do.")
_code("effect-read-names-change", "warning", "lint", rule="lint",
      summary=("An intent marked `effect: read` maps an operation whose Action, `x-` hints "
               "(`x-kubernetes-action`, `x-ms-docs-operation-type`, `x-openai-isConsequential`, "
               "`x-linode-grant`, an SDK method name), operationId, path (a side-effecting sub-resource "
               "such as `/exec`, `/invalidate`, `/resendWelcomeSms`, `/logout`), summary or description "
               "says it changes something (delete, create, update, terminate, ...), whatever its HTTP "
               "method."),
      fix=("If it changes something, mark it `effect: write` (or `destructive`) with `approval: "
           "required`: a read is never previewed, approved or made idempotent, and its MCP tool says "
           "readOnlyHint. If it only reads (the word misleads), set this rule to `off` for the map in "
           "toolgen.yaml `lint.severity`."))
_code("effect-delete-not-destructive", "warning", "lint", rule="lint",
      summary="A DELETE operation is marked `write`, not `destructive`.",
      fix="Mark it `destructive` unless the deletion is trivially undone.")
_code("destructive-without-approval", "error", "lint", rule="lint",
      summary="A destructive tool runs without human approval.",
      fix=("Set `approval: required`; approval is bound to the preview_id, so a human sees the exact "
           "request."))
_code("idempotency-header-unused", "error", "lint", rule="lint",
      summary=("The operation declares an Idempotency-Key header but the tool does not send its "
               "idempotency key there."),
      fix=('Set `idempotency: {key: action_id, send_as: "header:Idempotency-Key"}` so retries are safe at '
           "the API."))
_code("idempotency-key-unsent", "error", "lint", rule="lint",
      summary=("The operation takes an idempotency key as a query parameter or a request-body member (its "
               "name says idempotency, or its description says it deduplicates) but the tool does not "
               "send its idempotency key there."),
      fix=('Set `idempotency: {key: action_id, send_as: "body:idempotency_key", honoured_by_api: true}` '
           "(the place the finding names): the runtime fills the member from the record's key, the model "
           "never does, and an unknown outcome is re-sent with the same key."))
_code("idempotency-key-missing", "warning", "lint", rule="lint",
      summary="A write or destructive tool has no idempotency key.",
      fix=("Add `idempotency: {key: action_id, send_as: none}`: the runtime then stores receipts and "
           "replays a repeated call instead of writing twice."))
_code("idempotency-honour-undeclared", "warning", "lint", rule="lint",
      summary=("A write sends its idempotency key to the API but does not say whether the API "
               "deduplicates by it."),
      fix=("Set `idempotency.honoured_by_api: true` only if the API returns the first result for a "
           "repeated key (the runtime then re-sends a write whose outcome is unknown), else `false` "
           "(never re-sent)."))
_code("preview-adds-nothing", "info", "lint", rule="lint",
      summary=("A write without approval (effect `write`, `approval: never`) has a preview tool that "
               "gates nothing: no human approves it and the record tool takes the full arguments."),
      fix=("Set `preview: false` to drop the `preview_` tool (it costs catalog tokens and a model turn), "
           "or `approval: required` if a human should see the request first."))
_code("shared-write-credential", "info", "lint", rule="lint",
      summary=("A write reaches the API with one credential shared by every caller: served to several "
               "callers (`toolgen serve --http`), each acts as the service (a confused deputy)."),
      fix=("Declare `per_caller:` for the scheme in the intent map's `auth:` (`via: exchange` for RFC "
           "8693 token exchange, `via: lookup` for each caller's own API key); raise this rule to `error` "
           "in `lint:` for a multi-user deployment."))
_code("permission-missing", "warning", "lint", rule="lint",
      summary="A tool requires no permission, so every actor may call it.",
      fix="Set `permission:` to the scope(s) an actor needs.")
_code("scope-unknown", "error", "lint", rule="lint",
      summary=("A permission names a scope the spec's OAuth security schemes do not declare, on an "
               "operation the spec asks OAuth scopes for (where it asks for none, the permission is the "
               "map's own name)."),
      fix=("Use one of the scopes of the operation's OAuth security scheme (a typo grants nothing at the "
           "API)."))
_code("pagination-missing", "warning", "lint", rule="lint",
      summary="A list operation (array response or paging parameters) has no pagination intent.",
      fix="Add `pagination:` so the model gets `items` + `next_cursor` pages of a bounded size.")
_code("output-unprojected-large", "warning", "lint", rule="lint",
      summary="A tool returns a large response schema without an output projection.",
      fix=("Add `output: {fields: [...]}` with what the model needs (large outputs cost context and get "
           "truncated)."))
_code("description-missing", "warning", "lint", rule="lint",
      summary="A tool has no description: neither the intent nor the operation has one.",
      fix="Write `description:` saying what the tool does, when to use it and when not to.")
_code("description-too-long", "warning", "lint", rule="lint",
      summary=f"A tool description is longer than {DESCRIPTION_LIMIT} characters.",
      fix=(f"Shorten it to at most {DESCRIPTION_LIMIT} characters; clients truncate or reject longer "
           "descriptions."))
_code("description-no-when-not-to-use", "warning", "lint", rule="lint",
      summary="A tool with a near-synonym in the same map does not say when not to use it.",
      fix=('Name the other tool in the description ("use search_x for free-text queries") or say what it '
           "is not for."))
_code("tool-name-near-synonym", "info", "lint", rule="lint",
      summary=("Two tool names differ only by a synonym verb (search_/find_/query_/lookup_/get_ of the "
               "same noun)."),
      fix="Prefer one verb per noun, or make the names say how the tools differ.")
_code("catalog-too-many-tools", "warning", "lint", rule="lint",
      summary=(f"The catalog has more tools than `lint.max_tools` (default {DEFAULT_MAX_TOOLS}, OpenAI's "
               "per-request limit)."),
      fix="Split the API into several intent maps (namespaces) or leave rarely used operations out.")
_code("catalog-request-limits", "warning", "lint", rule="lint",
      summary=("No single request can carry the catalog in some dialect: it exceeds a per-request limit "
               "of that provider (tools per request, name length with `lint.client_prefix`)."),
      fix=("Use toolsets (split the API into several intent maps, or the provider's tool search with "
           "deferred loading) or shrink the catalog (leave operations out, shorten names)."))
_code("catalog-too-many-tokens", "warning", "lint", rule="lint",
      summary=("The catalog is larger than `lint.max_catalog_tokens` "
               f"(default {DEFAULT_MAX_CATALOG_TOKENS:,} o200k tokens)."),
      fix="Project outputs, shorten descriptions, or split the API into several intent maps.")
_code("catalog-provider-limit", "error", "lint", rule="lint",
      summary=("An emitted catalog would exceed a hard provider limit that no split can meet: Anthropic "
               "tool search carries 10,000 tools, the tool-search tool included, and a larger deferred "
               "catalog is written as parts of whole toolsets, so one toolset (with the eager tools) over "
               "it cannot be sent. Checked on the IR, before any catalog is built: the build stops in "
               "seconds, nothing written."),
      fix=("Split the toolset named (give part of its intents another toolset), defer more tools when the "
           "eager ones alone are over, `exclude` operations agents do not need, or build without that "
           "catalog (`--emit`, or `emit:` in toolgen.yaml)."))
_code("catalog-too-many-bytes", "warning", "lint", rule="lint",
      summary=(f"The tools' schemas alone are more than `lint.max_catalog_bytes` (default "
               f"{DEFAULT_MAX_CATALOG_BYTES // 1_000_000} MB) of compact JSON; every catalog file repeats "
               "them (policy.json, each dialect's file, mcp.json in the package). Estimated on the IR, "
               "before any catalog is built."),
      fix=("Hide optional members of large request bodies (`hide`), project outputs (`output.fields`), "
           "leave operations out, or split the API into several intent maps."))
_code("tool-too-large", "warning", "lint", rule="lint",
      summary=(f"One tool is more than `lint.max_tool_tokens` (default {DEFAULT_MAX_TOOL_TOKENS:,} o200k "
               "tokens) in some dialect: a model pays for it on every request that carries it."),
      fix=("Hide optional members of its request body the model does not need (`hide:` with the wire "
           "names the hint drafts, or `args: {name: {hide: true}}`), or project its output "
           "(`output.fields`)."))
_code("operations-uncovered", "info", "lint", rule="lint",
      summary="Operations of the spec that no tool covers (one finding with the count).",
      fix="Nothing to do if that is intended; REPORT.md lists them.")
_code("lint-config-unknown-rule", "warning", "lint", rule="lint",
      summary="toolgen.yaml configures the severity of a rule that does not exist.",
      fix="Use a rule id from `toolgen lint --list-rules`.")
_code("name-collision", "warning", "lower", rule="build",
      summary="An include group's tool name was taken; a suffix was added.",
      fix="Give the operation an explicit intent with a name of your choice.")
_code("name-shortened", "warning", "lower", rule="build",
      summary="A generated tool name was longer than 64 characters and was shortened.",
      fix="Give the operation an explicit intent with a shorter name.")
_code("approval-defaulted", "info", "lower", rule="build",
      summary="A write intent has no `approval`; the map's default applies.",
      fix="State `approval: required` or `approval: never`.")
_code("approval-on-read", "warning", "lower", rule="build",
      summary="A read intent sets `approval`, which applies to record tools only.",
      fix="Remove `approval`, or mark the intent write.")
_code("input-example-invalid", "error", "lower", rule="build",
      summary=("An intent's `input_examples` entry is not a whole call the tool's input schema accepts, "
               "names an argument the model does not see, or has a secret-like member."),
      fix=("Give the arguments as the model sees them (`toolgen catalog`), valid under the input schema, "
           "without secrets."))
_code("spec-example-invalid", "warning", "lower", rule="build",
      summary=("A request-body or parameter example of the spec breaks the tool's input schema (or names a "
               "secret-like member); it is not shown to models as an input example."),
      fix="Fix the example in the spec, or give the intent its own `input_examples`.")
_code("programmatic-record", "error", "lower", rule="build",
      summary=("`programmatic` lists `record`: model-written code must never call a record tool (it writes, "
               "and approval gates it)."),
      fix="List only `read` or `preview`; the record tool is always called directly.")
_code("preview-required", "error", "lower", rule="build",
      summary=("`preview: false` on a write whose record tool needs its preview (`approval: required`, or "
               "`record.arguments: preview`)."),
      fix="Drop `preview: false`, or set `approval: never` and `record.arguments: full`.")
_code("preview-ttl-unused", "warning", "lower", rule="build",
      summary="`record.preview_ttl_s` on a record tool that takes the full arguments.",
      fix="Drop `preview_ttl_s`, or set `record.arguments: preview`.")
_code("retry-unsafe-write", "warning", "lower", rule="build",
      summary="A write retries although its idempotency key is not sent to the API.",
      fix="Send the key (`idempotency.send_as`) or drop `retry`.")
_code("idempotency-key-collision", "error", "lower", rule="build",
      summary="The idempotency key argument clashes with an operation argument.",
      fix="Choose another `idempotency.key`.")
_code("idempotency-body-unplaceable", "error", "lower", rule="build",
      summary=("`send_as: body:NAME` on an operation whose request body is not an object of named members "
               "(none, text, binary, or one free-form or composed argument)."),
      fix="Send the key where the API reads it (`header:NAME` or `query:NAME`), or `send_as: none`.")
_code("pagination-param-missing", "error", "lower", rule="build",
      summary="`pagination` names a query parameter the operation lacks.",
      fix="Use the operation's own cursor/limit parameter names.")
_code("pagination-items-missing", "error", "lower", rule="build",
      summary="`pagination.items` is not an array in the response.",
      fix="Give the dotted path of the item array ('' when the body is the array).")
_code("pagination-cursor-missing", "error", "lower", rule="build",
      summary="A cursor/offset/page pagination has no `cursor` parameter.",
      fix="Name the API parameter that takes the cursor, offset or page.")
_code("pagination-page-size-empty", "error", "lower", rule="build",
      summary="The limit parameter's bounds allow no page size up to `max_page_size`.",
      fix="Raise `max_page_size`, or page without `limit`.")
_code("output-field-unknown", "error", "lower", rule="build",
      summary="`output.fields` names a field the response does not have.",
      fix="Use dotted paths of the response (or of each item for paginated tools).")
_code("output-not-object", "error", "lower", rule="build",
      summary="`output.fields` on a response that is not an object.",
      fix="Remove `output.fields`.")
_code("hide-required", "error", "lower", rule="build", summary="`hide` names a required parameter.",
      fix="Use `fixed` to set a value instead.")
_code("hide-unknown", "error", "lower", rule="build",
      summary="`hide` names something the operation does not have.",
      fix="Use wire names as the spec writes them.")
_code("fixed-unknown", "error", "lower", rule="build",
      summary="`fixed` names something the operation does not have.",
      fix="Use a parameter's wire name, or `in:name`.")
_code("null-unknown-argument", "error", "lower", rule="build",
      summary="`null` names an argument the tool does not have.",
      fix="Use an argument name of the tool.")
_code("arg-unknown", "error", "lower", rule="build",
      summary="`args` names an argument the tool does not have.",
      fix="Use an argument name as the model sees it (the hint suggests the closest).")
_code("arg-narrowing-unproved", "error", "lower", rule="build",
      summary="An `args` schema is not provably a subset of the spec's schema for that argument.",
      fix=("Tighten the narrowed schema as the hint says, or narrow with an enum (checked value by "
           "value)."))
_code("arg-hidden-narrowed", "error", "lower", rule="build",
      summary="An `args` entry both hides and narrows an argument.",
      fix="Keep `hide: true` alone, or drop it.")
_code("param-credential", "info", "lower", rule="build",
      summary="A parameter looks like a credential; the runtime sends it from a secret.",
      fix="Nothing to do if that is right.")
_code("param-signed-visible", "warning", "lower", rule="build",
      summary=("A parameter that a security scheme's request signature computes (AWS SigV4's X-Amz-Date, "
               "X-Amz-Signature, ...) is a tool argument: a model would be asked to sign."),
      fix="Add it to the intent's `hide:` (`toolgen init` drafts it); signing belongs to the transport.")
_code("request-body-xml", "warning", "lower", rule="build",
      summary=("An XML request body is one string argument the model writes; the runtime does not "
               "serialise arguments to XML."),
      fix=("Describe the expected document in `args: {body: {description: ...}}`, or offer JSON in the "
           "spec."))
_code("header-reserved", "warning", "lower", rule="build",
      summary="A hop-by-hop, framing or Cookie header parameter is not a tool argument and is not sent.",
      fix="Nothing to do; declare cookies as `in: cookie` parameters.")
_code("parameter-invalid", "error", "lower", rule="build",
      summary="A parameter of the operation is malformed.",
      fix="Fix the spec.")
_code("operation-too-many-parameters", "error", "lower", rule="build",
      summary="An operation has more parameters than `budgets.max_parameters`.",
      fix="Raise the budget or leave the operation out.")
_code("operation-method-unsupported", "warning", "lower", rule="build",
      summary="TRACE operations are not turned into tools.",
      fix="Nothing to do.")
_code("schema-too-large", "error", "schema", rule="build",
      summary=("A schema expands beyond the schema budget (counted as the model sees it: a request body "
               "after `hide` and `args`, an output after `output.fields`)."),
      fix=("Hide optional request-body members (`hide`; the hint names the largest), project the output, "
           "or raise `budgets.max_schema_nodes`."))
_code("schema-allof-conflict", "error", "schema", rule="build",
      summary="An allOf merges contradictory schemas.",
      fix="Fix the spec.")
_code("body-required-absent", "warning", "lower", rule="build",
      summary="An optional request body's schema requires members.",
      fix=("If the API always needs the body, set `required: true` on the requestBody; else nothing to "
           "do."))
_code("schema-unsatisfiable", "warning", "schema", rule="build",
      summary="An input schema in the spec admits no value.",
      fix=("Fix the schema in the spec as the hint says; the tool takes the repaired schema the message "
           "names."))
_code("schema-invalid", "warning", "schema", rule="build",
      summary="A schema object in the spec is malformed.",
      fix="Fix the spec.")
_code("spec-schema-invalid", "warning", "spec", rule="build",
      summary="A part of the spec does not follow the OpenAPI schema.",
      fix="Fix the spec.")
_code("spec-duplicate-key", "warning", "spec", rule="build",
      summary=("A key is written twice in one object of the spec (JSON or YAML); every reader keeps the "
               "last occurrence and drops the others, so the warning sits at the one read and names the "
               "dropped ones' lines."),
      fix="Keep one: merge what the others say into it and delete them.")
_code("response-media-assumed-json", "warning", "lower", rule="build",
      summary=("A success response's media type (`*/*`, `application/*` or an unknown type) does not say "
               "JSON, but its schema is an object or array: the tool reads the answer as JSON."),
      fix="Declare the success response as application/json in the spec.")
_code("response-media-unknown", "warning", "lower", rule="build",
      summary=("A success response's media type is a wildcard without an object or array schema: the tool "
               "returns the answer as JSON when it parses, else as text, unchecked."),
      fix="Declare the media type and schema of the success response in the spec.")
_code("schema-cycle", "info", "schema", rule="build",
      summary="A recursive schema is kept as `$defs` references.",
      fix="Nothing to do unless a target without recursive-schema support matters.")
_code("response-text", "info", "lower", rule="build",
      summary=("The success response offers only text (`text/html`, `text/plain`, `text/csv`, XML): the "
               "tool returns the answer as `{\"text\": ...}`, the call's secrets scrubbed, cut to "
               "`output.max_bytes`."),
      fix="Nothing to do; declare a JSON response in the spec if the API has one.")
_code("response-redirect", "info", "lower", rule="build",
      summary=("The only declared success is a redirect (3xx): a read follows a same-origin redirect (at "
               "most 5 hops, within its deadline) and returns where it landed; a download link or a write "
               "returns the redirect's `Location`."),
      fix="Nothing to do; declare the 2xx answer in the spec if the API has one.")
_code("toolset-near-synonym", "warning", "lint", rule="lint",
      summary="Two tools of one toolset have near-synonym names or descriptions a model could confuse.",
      fix=("Merge them, rename one so the names say how they differ, or name the other tool in each "
           'description ("use X for ...").'))
_code("examples-duplicate", "warning", "lint", rule="lint",
      summary=("Two intents (or toolsets) give the same request in `examples`: tool search cannot tell from "
               "it which tool the user means."),
      fix="Keep the request on the tool it asks for, and give the other one the words that are its own.")
_code("examples-length", "warning", "lint", rule="lint",
      summary=("An `examples` request is a single word or two (a keyword, not a request) or longer than 30 "
               "words."),
      fix="Write it as a user would ask (\"refund the last order\"); put single words under `keywords`.")
_code("examples-operation-unknown", "error", "lint", rule="lint",
      summary=("The intent map's top-level `examples` names an operation that is not in the spec, or that no "
               "tool covers."),
      fix=("Use an operationId or `METHOD /path` exactly as the spec writes it, of an operation the map "
           "includes."))
_code("example-ranks-other", "warning", "lint", rule="lint",
      summary=("Tool search ranks another tool above the one an `examples` request belongs to (the API's own "
               "index, as `toolgen search` ranks)."),
      fix=("Reword the request with the words that are this tool's alone, or tell the two tools apart in "
           "their descriptions (`use_when` / `not_for`); `toolgen search \"<request>\"` shows the ranking."))
_code("toolset-unknown", "error", "lower", rule="build",
      summary="An intent or include group names a toolset that `toolsets:` does not declare.",
      fix="Declare it under `toolsets:` with a description and loading, or use a declared name.")
_code("toolset-name-invalid", "error", "lower", rule="build",
      summary=("A toolset name breaks the namespace rules of some dialect "
               "(^[A-Za-z][A-Za-z0-9_-]{0,63}$)."),
      fix="Use a letter, then letters, digits, '_' or '-', at most 64 characters.")
_code("tool-name-reserved", "error", "lower", rule="build",
      summary="A tool is named `search_tools`, the search meta-tool's name, while tools are deferred.",
      fix="Rename the intent, or give the operation an explicit intent with another name.")
_code("strict-disabled", "info", "lint", rule="lint",
      summary=("An intent sets `strict: false`: its tools are sent non-strict (OpenAI `strict: false` "
               "with the natural schema, never strict in Anthropic), so a model may send arguments the "
               "schema rejects (the runtime still refuses them)."),
      fix=("Remove `strict: false` where the tool could be strict (the hint says when); keep it only "
           "where strict mode's reshaped arguments (entries, JSON strings) confuse the models you use."))
_code("effect-undecided", "warning", "lint", rule="lint",
      summary=("A `# decide [effect-undecided]` mark is left in the intent map: `toolgen init` could not "
               "tell from the operation's words whether it changes something (they disagree, or a POST "
               "says search or query), and drafted the effect the mark names."),
      fix=("Decide the effect: a change is `effect: write` (or `destructive`) with `approval: required`; "
           "a pure read is `effect: read` with no `approval` or `idempotency`. Then delete the mark."))
_code("permission-undecided", "warning", "lint", rule="lint",
      summary=("A `# decide [permission-undecided]` mark is left in the intent map: the operation is "
               "protected by an OAuth scheme but the spec asks for no scope, so `toolgen init` drafted "
               "the map's own permission name."),
      fix=("Set `permission:` to what an actor must hold to call it (a scope of the API, or your own "
           "name), then delete the mark."))
_code("pagination-undecided", "warning", "lint", rule="lint",
      summary=("A `# decide [pagination-undecided]` mark is left in the intent map: `toolgen init` "
               "drafted a `pagination:` from the operation's parameters and answer that it could not "
               "confirm (no page-size parameter for a page or offset walk, a time window whose direction "
               "the spec does not say, several arrays in the answer, or a position parameter with nothing "
               "that says where its next value is)."),
      fix=("Check the drafted `pagination:` against the API's documentation (or remove it and bound the "
           "list with `output.max_bytes`), then delete the mark."))

# ---------------------------------------------------------------------------------------------
# the other codes, by stage: what stops a stage, or concerns a command other than lint and build

# the project file
_code("project-not-found", "error", "project",
      summary="There is no project file (toolgen.yaml) where the command looks for one.",
      fix=("Run toolgen in the folder that holds toolgen.yaml, pass --project, or build one intent map: "
           "`toolgen build INTENT_MAP --out DIR`."))
_code("project-invalid", "error", "project",
      summary="toolgen.yaml breaks its schema (an unknown key, a wrong type, an API listed twice).",
      fix="Fix the member the message names.")
_code("spec-override-unknown", "error", "project",
      summary="`--spec NAME=PATH` names an API the project does not list.",
      fix="Use a name of the project's APIs (the hint lists them).")
_code("api-unknown", "error", "project",
      summary="`toolgen build NAME` names an API the project does not list.",
      fix=("Use a name of the project's APIs, or build an intent map of its own: `toolgen build "
           "INTENT_MAP --out DIR`."))

# reading a file (an intent map, a spec, a project file)
_code("file-not-found", "error", "input", summary="A file the command reads does not exist.",
      fix="Check the path.")
_code("file-unreadable", "error", "input", summary="A file the command reads is a folder, or cannot be read.",
      fix="Name the file itself, and check its permissions.")
_code("file-encoding", "error", "input", summary="A file is not UTF-8 text.", fix="Save it as UTF-8.")
_code("yaml-syntax", "error", "input", summary="A YAML file does not parse.",
      fix="Fix the YAML syntax at the position named.")
_code("json-syntax", "error", "input", summary="A JSON file does not parse.",
      fix="Fix the JSON syntax at the position named.")

# the spec
_code("spec-missing", "error", "spec", summary="The intent map names no spec.",
      fix="Add `spec: path/to/openapi.yaml` (relative to the intent map), or pass --spec.")
_code("spec-not-found", "error", "spec", summary="The spec file does not exist.",
      fix="Check the path (the intent map's `spec:`, `--spec`, or `TOOLGEN_SPEC_<NAME>`).")
_code("spec-not-object", "error", "spec", summary="The spec's document is not an object.",
      fix="Point at an OpenAPI document.")
_code("spec-encoding", "error", "spec",
      summary=("Text in the spec holds an unpaired UTF-16 surrogate escape (e.g. \\ud800), which is not a "
               "Unicode character and cannot be written as UTF-8."),
      fix="Write the character itself, or a complete surrogate pair in JSON.")
_code("spec-too-deep", "error", "spec", doc="README.md#swagger-20",
      summary="Objects and arrays of the spec nest more than 200 levels deep.",
      fix="Flatten it with named definitions and `$ref`.")
_code("spec-alias-expansion", "error", "spec", doc="README.md#swagger-20",
      summary="The spec's YAML aliases expand it past a million values.",
      fix="Use `$ref` for shared parts instead of nesting aliases of aliases.")
_code("spec-alias-cycle", "error", "spec", doc="README.md#swagger-20",
      summary="A YAML alias of the spec refers to a value that contains it.",
      fix="Use a `$ref` instead of a recursive alias.")
_code("spec-number-too-long", "error", "spec", doc="README.md#swagger-20",
      summary="The spec holds a number longer than Python reads.",
      fix="Shorten it, or quote it as a string.")
_code("spec-version-missing", "error", "spec",
      summary="The document has no `openapi` (or `swagger`) version field.",
      fix="Add `openapi: 3.1.0` (or 3.0.x) at the top level.")
_code("spec-version-unsupported", "error", "spec",
      summary="The document's OpenAPI or Swagger version is not one toolgen reads.",
      fix="toolgen reads OpenAPI 3.0.x and 3.1.x and Swagger 2.0.")
_code("spec-invalid", "error", "spec",
      summary="A part of the document outside its schema objects breaks the OpenAPI (or Swagger) schema.",
      fix="Fix the document at the pointer named.")
_code("ref-external", "error", "spec", doc="README.md#the-intent-map",
      summary="A `$ref` points at a URL; toolgen does not fetch URLs.",
      fix="Bundle the spec into one file first (e.g. `redocly bundle`), then point toolgen at it.")
_code("ref-outside", "error", "spec", doc="README.md#the-intent-map",
      summary="A `$ref` reaches a file outside the spec's folder.",
      fix="Move the referenced file into the spec's folder (a spec may not read other files of the machine).")
_code("ref-missing", "error", "spec", doc="README.md#the-intent-map",
      summary="A `$ref` names a file or a JSON pointer that does not exist.",
      fix="Fix the reference (a file path is relative to the file that holds the `$ref`).")
_code("ref-invalid", "error", "spec", summary="A `$ref` is not a string, or not a JSON pointer.",
      fix="Write the reference as '#/components/schemas/Name'.")
_code("ref-cycle", "error", "spec", summary="A `$ref` cycle could not be broken into `$defs`.",
      fix="Report it as a toolgen bug, with the spec.")

# Swagger 2.0
_code("swagger2-invalid", "error", "swagger2",
      summary="Part of a Swagger 2.0 document leaves no conversion to OpenAPI 3.0 (two bodies, an unknown "
              "security type, a top-level key that is not 2.0, ...).",
      fix="Fix the document as the message says.")
_code("swagger2-unsupported", "error", "swagger2",
      summary=("Part of a Swagger 2.0 document OpenAPI 3.0 cannot say (`collectionFormat: tsv`, `schemes` "
               "without http or https, ...)."),
      fix="Change the document to what OpenAPI 3.0 can say.")
_code("swagger2-dropped", "warning", "swagger2",
      summary="Part of a Swagger 2.0 document has no OpenAPI 3.0 equivalent and is dropped.",
      fix="Remove it from the document.")

# schemas
_code("schema-keyword-invalid", "warning", "schema",
      summary="A keyword of a spec schema has a value JSON Schema does not allow; it is dropped.",
      fix="Fix the schema in the spec.")

# the intent map
_code("intent-not-mapping", "error", "intent", summary="The intent map's document is not a mapping.",
      fix="Start from `toolgen init SPEC`.")
_code("intent-invalid", "error", "intent",
      summary="A key of the intent map is unknown, or its value breaks the intent map's schema.",
      fix="Fix the key as the hint says (generated/intent-map.schema.json describes every key).")
_code("intent-encoding", "error", "intent",
      summary=("Text in the intent map holds a UTF-16 surrogate escape (e.g. \\ud800), which is not a "
               "character."),
      fix="Write the character itself.")

# lowering intents to tools
_code("auth-scheme-unknown", "error", "lower",
      summary="`auth` names a security scheme the spec does not declare.",
      fix="Use a key of components.securitySchemes, or declare the credential with `kind:`.")
_code("include-matches-nothing", "warning", "lower",
      summary="An `include` pattern matches no operation of the spec.",
      fix="Patterns match an operationId, `METHOD /path` or `tag:NAME` (globs allowed).")
_code("permission-invalid", "error", "lower", summary="A `permission` entry is not one scope.",
      fix="Write one scope, or a list of scopes: `permission: [a:read, b:read]`.")
_code("idempotency-honoured-unsent", "error", "lower",
      summary="`idempotency.honoured_by_api: true` on an intent that does not send its key to the API.",
      fix=('Set `send_as` to where the API reads the key (e.g. "header:Idempotency-Key"), or drop '
           "`honoured_by_api`."))
_code("approval-condition-invalid", "error", "lower", doc="docs/runtime.md#conditional-approval",
      summary=("An approval condition (`approval: {when: ...}`) does not check: not CEL, an unknown "
               "argument, or not a bool. The condition is dropped and the approval stays required."),
      fix="Write a CEL expression over args.<argument> and caller.id / caller.scopes that is a bool.")
_code("limit-sum-invalid", "error", "lower", doc="docs/runtime.md#limits",
      summary=("A `limits` sum names no required integer or number argument of the tool; the limit is "
               "dropped."),
      fix="Name a required numeric argument of the tool, or use a calls limit.")
_code("fixed-invalid", "error", "lower", doc="docs/generated-format.md#policyjson",
      summary="A `fixed` header value cannot be sent as a header.",
      fix="Set a valid `fixed:` value for it.")
_code("output-redact-unknown", "error", "lower",
      summary="`output.redact` names a field the response does not have, so nothing would be redacted.",
      fix="Use a dotted path of the response (the same form as `output.fields`).")
_code("pagination-field-missing", "error", "lower", doc="docs/review.md#pagination-styles",
      summary="A `pagination` path (`next`, `has_more`, ...) is not a field of the success response.",
      fix="Give the dotted path of that field in the response body.")
_code("pagination-next-missing", "error", "lower", doc="docs/review.md#pagination-styles",
      summary="A cursor pagination has neither `next` nor `cursor_from_item`: no next page can be reached.",
      fix="Say where the next cursor is: `next: next_cursor`, or `cursor_from_item: id` with `has_more`.")
_code("pagination-not-detected", "info", "lower", doc="docs/review.md#pagination-styles",
      summary=("An operation of an `include` group looks paginated, but its pagination cannot be drafted: "
               "the tool returns one page as the API sends it."),
      fix="Declare `pagination` in an explicit intent to page it.")

# composite tools (the table of docs/composites.md)
_code("composite-step-operation-unknown", "error", "composite",
      summary="A step's `operation` is not in the spec (with the closest operationIds).",
      fix="Use an operationId or `METHOD /path` exactly as the spec writes it.")
_code("composite-step-id", "error", "composite", summary="A step id is used twice, or is `input`.",
      fix="Give every step its own id.")
_code("composite-reference-invalid", "error", "composite",
      summary=("A `$...` value that is not `$input/<arg>...` or `$<step>[/pointer]`: a pointer with a `~` "
               "other than `~0`/`~1`, or an `<arg>` that is no argument name "
               "(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)."),
      fix="Write a reference as the hint shows.")
_code("composite-reference-unknown", "error", "composite",
      summary="A reference to a step the composite does not have.",
      fix="Name a step of the composite (the hint names the closest).")
_code("composite-reference-later", "error", "composite", summary="A pipeline step reads a later step.",
      fix="Move that step before it: pipeline steps run in the order written.")
_code("composite-cycle", "error", "composite",
      summary="A step reads its own answer, directly or through other steps.",
      fix="A step can read only the answers of steps that run before it.")
_code("composite-reference-branch", "error", "composite",
      summary="A branch step reads another step (exactly one branch step runs).",
      fix="Use a pipeline, or map the value from the composite's input.")
_code("composite-reference-aggregate", "error", "composite",
      summary="An aggregate step reads another step (aggregate steps run at once, independently).",
      fix="Use a pipeline when a step needs another's answer.")
_code("composite-argument-unmapped", "error", "composite",
      summary=("A required step argument that `args` does not map (the idempotency key excepted: the runtime "
               "fills it)."),
      fix="Map it: `args: {name: $input/name}` (or a step's answer, or a literal).")
_code("composite-argument-unknown", "error", "composite",
      summary="`args` maps a name that is not an argument of the step's operation.",
      fix="Map an argument of the operation (the hint names the closest).")
_code("composite-mapping-type", "error", "composite",
      summary=("A mapping whose types cannot match, as far as the schemas tell (an integer argument fed "
               "from a string member; a literal outside the argument's `enum`)."),
      fix="Map a member of the right type, or a literal the argument accepts.")
_code("composite-argument-incompatible", "error", "composite",
      summary="One composite argument mapped into two step arguments whose schemas no value satisfies both.",
      fix=("Map two different arguments, or declare one schema under `inputs` that both step arguments "
           "accept."))
_code("composite-input-undeclared", "error", "composite",
      summary="A reference nested in a literal or into a member of an argument, without an `inputs` schema.",
      fix="Declare the argument's JSON Schema under `inputs`.")
_code("composite-aggregate-write", "error", "composite", summary="A write step in an aggregate.",
      fix="An aggregate runs reads only; use a pipeline for steps that write.")
_code("composite-override-looser", "error", "composite",
      summary="`effect` below the strictest step's, or `approval: never` with a write step.",
      fix="Drop the override: the composite's effect and approval are derived from its steps.")
_code("composite-switch-missing", "error", "composite", summary="A branch without `switch: $input/<arg>`.",
      fix="Add `switch: $input/<argument>`, the argument whose value chooses the step.")
_code("composite-switch-invalid", "error", "composite",
      summary="A branch's `switch` is not an argument of the composite.",
      fix="Write `switch: $input/<argument>`.")
_code("composite-switch-unused", "error", "composite",
      summary="A `switch` on a composite that is not a branch.",
      fix="Drop `switch`, or set `pattern: branch`.")
_code("composite-when-missing", "error", "composite", summary="A branch step without `when`.",
      fix="Add `when: <value of the switch argument that takes this step>`.")
_code("composite-when-duplicate", "error", "composite", summary="Two branch steps with the same `when`.",
      fix="Give every branch step its own `when` value.")
_code("composite-when-unused", "error", "composite", summary="A step's `when` outside a branch.",
      fix="Drop `when`, or set `pattern: branch`.")
_code("composite-output-field-unknown", "error", "composite",
      summary="An `output_fields` path that names no member of the combined result.",
      fix="Name members of `output` and their members, e.g. customer.id.")
_code("composite-output-reserved", "error", "composite",
      summary=("An `output` member named `errors` (aggregate) or `steps` (writing composite), which the "
               "runtime adds."),
      fix="Give the member another name.")
_code("composite-idempotency-sent", "error", "composite",
      summary="`idempotency.send_as` other than `none` (a composite has no request of its own).",
      fix="Drop `send_as`: each write step sends its own key as its operation's intent says.")
_code("tool-name-taken", "error", "composite", summary="The composite's tool name is another intent's.",
      fix="Rename the composite.")

# the build
_code("out-unsafe", "error", "build",
      summary=("An output folder would lose data: it is a file, holds (or is) an input or the working "
               "directory, overlaps another output, or holds files toolgen does not write."),
      fix="Choose another `out:` as the hint says (toolgen replaces its output folders whole).")
_code("search-semantic-unavailable", "error", "build",
      summary="`search.semantic` is set, but numpy, which it needs, is not installed.",
      fix="Install the `semantic` extra, or remove `search.semantic` (lexical search).")
_code("search-dense-unavailable", "error", "build",
      summary="`search.semantic: onnx` is set, but onnxruntime or tokenizers, which it needs, is not installed.",
      fix="Install the `dense` extra, or remove `search.semantic` (lexical search).")
_code("search-dense-model", "error", "build",
      summary=("The dense option's model or tokenizer file is missing, unreadable, not parseable, or not a "
               "sentence-embedding graph (inputs `input_ids`, `attention_mask`; a per-token or pooled output)."),
      fix="Point `search.model` / `search.tokenizer` at a sentence-transformers ONNX export and its tokenizer.json.")
_code("search-dense-pin-mismatch", "error", "build",
      summary="The SHA-256 of the dense option's model or tokenizer file is not the one toolgen.yaml pins.",
      fix="Use the pinned file; or, having checked where the new file came from, pin its hash (sha256sum FILE).")

# toolgen init
_code("init-name-invalid", "error", "init", summary="The API name is not valid.",
      fix="Use lower-case letters, digits and '_', e.g. --name my_api.")
_code("init-file-exists", "error", "init",
      summary="The intent map to write already exists; nothing was written.",
      fix="Pass --force to overwrite it, or --out another file.")

# toolgen vendor
_code("slice-ref", "error", "vendor",
      summary="A `$ref` the slice needs cannot be followed (another file, or a pointer that names nothing).",
      fix="Bundle the document first, or fix the reference.")
_code("vendor-overwrites-source", "error", "vendor",
      summary="The slice would overwrite the document it is cut from.",
      fix="Point the intent map's `spec:` (or --out) at a new file, e.g. specs/<api>.slice.json.")

# toolgen diff
_code("diff-input-missing", "error", "diff", summary="A folder to compare does not exist.",
      fix="Pass two folders written by `toolgen build`.")
_code("diff-input-invalid", "error", "diff",
      summary="A `policy.json` or `mcp.json` to compare is malformed, or of another policy format version.",
      fix="Compare folders written by this toolgen's `toolgen build` (rebuild an older base into a folder).")
_code("diff-git-error", "error", "diff", summary="git failed while reading the base.",
      fix="Check the ref (e.g. `git fetch origin main` in CI) and the --dir path.")
_code("diff-not-a-repository", "error", "diff",
      summary="Not in a git repository: there is no base to compare against.",
      fix="Run toolgen diff inside the repository, or compare two folders: `toolgen diff OLD_DIR NEW_DIR`.")
_code("diff-no-commits", "error", "diff",
      summary="The repository has no commits yet, so the ref names nothing to compare against.",
      fix="Commit the generated folder first, or compare two folders.")
_code("diff-unknown-ref", "error", "diff", summary="git knows no commit of that name.",
      fix="Check the ref (in CI, fetch it first: `git fetch origin main`), or compare two folders.")

# toolgen eval task files
_code("eval-audit", "error", "eval",
      summary="A line of the audit log `toolgen eval from-audit` reads is not a JSON audit event.",
      fix="Pass the JSON-lines file `--audit-log` wrote (one event per line).",
      doc="docs/eval.md#tasks-from-production-failures-toolgen-eval-from-audit")
_code("eval-yaml", "error", "eval", summary="The task file cannot be read, or is not valid YAML.",
      fix="Check the path and the YAML syntax.")
_code("eval-format", "error", "eval",
      summary="The task file is not a mapping, or names a format this toolgen does not read.",
      fix="Start from `toolgen eval init API`.")
_code("eval-field", "error", "eval",
      summary="A member of the task file is missing, unknown, or of the wrong type.",
      fix="Fix the member the pointer names (docs/eval.md describes the file).")
_code("eval-duplicate", "error", "eval", summary="Two tasks have the same id.",
      fix="Give every task its own id.")
_code("eval-split", "error", "eval",
      summary="A task's `split` disagrees with the split rule (SHA-256 of '<api>:<id>').",
      fix="Write the split the message names, or remove it.")
_code("eval-tool", "error", "eval", summary="A task expects a tool the package does not have.",
      fix="Name one of the package's tools, or null.")
_code("eval-pointer", "error", "eval",
      summary="An expected argument's `pointer` is not a JSON pointer to an argument.",
      fix="Write a pointer such as /ticket_id.")
_code("eval-package", "error", "eval",
      summary="There is no generated package where the task file's `package` points.",
      fix="Run `toolgen build`, or fix `package` (relative to the task file).")

# reading policy.json
_code("policy-format-invalid", "error", "policy",
      summary="A `policy.json` breaks the policy format (a member missing, unknown or of the wrong type).",
      fix="Rebuild it with this toolgen (`toolgen build`).")


#: every diagnostic code, read-only, in registration order
CODES: Mapping[str, Code] = MappingProxyType(_TABLE)


def is_registered(code: str) -> bool:
    """Whether `code` is a registered diagnostic code."""
    return code in _TABLE


def code_info(code: str) -> Code:
    """The registry's row of `code`; `UnregisteredCode` when there is none."""
    try:
        return _TABLE[code]
    except KeyError:
        raise UnregisteredCode(code) from None


__all__ = ["CODES", "STAGES", "Code", "RuleSource", "Severity", "Stage", "UnregisteredCode", "code_info",
           "is_registered"]
