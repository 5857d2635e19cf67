"""The lint rules: stable ids, default severities, what each checks and how to fix it; the settings
that change them.

Input: nothing (the table is data) and, for the settings, the `lint:` section of toolgen.yaml
(`toolgen.builder.project.LintConfig`). Output: `RULES` (id -> `Rule`), `LintSettings` and `apply_severity`,
which turns the linter's findings into the configured severities (`off` drops them; `--strict`
makes warnings errors). Every finding's `code` is the id of a rule: kebab-case, stable, the same
scheme the build uses for its own diagnostics, which lint passes through (``source="build"``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ...diagnostics import Diagnostic, Severity

Level = Literal["error", "warning", "info", "off"]

DEFAULT_MAX_TOOLS = 128  # OpenAI's limit on tools per request
DEFAULT_MAX_CATALOG_TOKENS = 32_000
DEFAULT_LARGE_OUTPUT_TOKENS = 1_500
DEFAULT_MAX_TOOL_TOKENS = 16_000  # one tool's o200k tokens in any dialect (an eighth of a 128k context)
DEFAULT_MAX_CATALOG_BYTES = 100_000_000  # the tools' schemas, which every catalog file repeats
DESCRIPTION_LIMIT = 1024
SYNONYM_VERBS = ("search", "find", "query", "lookup", "get", "fetch", "retrieve")


@dataclass(frozen=True)
class Rule:
    """A lint rule: stable id, default severity, one-line summary, help text (what to do).

    `source` is ``lint`` for checks made here and ``build`` for diagnostics the build pipeline
    reports (lint passes them through; their severity is the build's unless configured).
    """

    id: str
    severity: Severity
    summary: str
    help: str
    source: Literal["lint", "build"] = "lint"


RULES: dict[str, Rule] = {}


def _rule(id: str, severity: Severity, summary: str, help: str, source: Literal["lint", "build"] = "lint") -> Rule:
    rule = Rule(id, severity, summary, help, source)
    RULES[id] = rule
    return rule


# mapping: the intent map against the spec
OPERATION_NOT_FOUND = _rule(
    "operation-not-found", "error", "An intent names an operation that is not in the spec.",
    "Use an operationId or `METHOD /path` exactly as the spec writes it.", "build")
OPERATION_MAPPED_TWICE = _rule(
    "operation-mapped-twice", "warning", "Two intents map the same operation without a difference that "
    "justifies it.",
    "Remove one intent, or make the second a real specialisation (different `fixed` values, `hide`, "
    "`args` narrowing or `output` projection).")
TOOL_NAME_DUPLICATE = _rule(
    "tool-name-duplicate", "error", "Two intents produce the same tool name.",
    "Rename one intent; a write intent X also produces preview_X and record_X.")
TOOL_NAME_INVALID = _rule(
    "tool-name-invalid", "error", "A tool name breaks the dialect name rules (^[a-zA-Z0-9_-]{1,64}$, prefix included).",
    "Choose a name of letters, digits, '_' and '-' that stays within 64 characters with 'preview_'.", "build")
# effects and the runtime policy
EFFECT_CONTRADICTS_METHOD = _rule(
    "effect-contradicts-method", "error", "The effect contradicts the HTTP method (a DELETE, PUT or PATCH "
    "marked read).",
    "Mark it `write` or `destructive`: a read tool is never previewed, approved or made idempotent.")
EFFECT_WRITE_ON_SAFE_METHOD = _rule(
    "effect-write-on-safe-method", "warning", "A GET/HEAD/OPTIONS operation whose Action, operationId, path "
    "and summary name no change is marked write or destructive.",
    "Allowed (some APIs mutate on GET), but confirm it; set this rule to `off` for APIs that do.")
EFFECT_READ_NAMES_CHANGE = _rule(
    "effect-read-names-change", "warning", "An intent marked `effect: read` maps an operation whose Action, "
    "`x-` hints (`x-kubernetes-action`, `x-ms-docs-operation-type`, `x-openai-isConsequential`, `x-linode-grant`, "
    "an SDK method name), operationId, path (a side-effecting sub-resource such as `/exec`, `/invalidate`, "
    "`/resendWelcomeSms`, `/logout`), summary or description says it changes something (delete, create, update, "
    "terminate, ...), whatever its HTTP method.",
    "If it changes something, mark it `effect: write` (or `destructive`) with `approval: required`: a read is "
    "never previewed, approved or made idempotent, and its MCP tool says readOnlyHint. If it only reads (the "
    "word misleads), set this rule to `off` for the map in toolgen.yaml `lint.severity`.")
EFFECT_DELETE_NOT_DESTRUCTIVE = _rule(
    "effect-delete-not-destructive", "warning", "A DELETE operation is marked `write`, not `destructive`.",
    "Mark it `destructive` unless the deletion is trivially undone.")
DESTRUCTIVE_WITHOUT_APPROVAL = _rule(
    "destructive-without-approval", "error", "A destructive tool runs without human approval.",
    "Set `approval: required`; approval is bound to the preview_id, so a human sees the exact request.")
IDEMPOTENCY_HEADER_UNUSED = _rule(
    "idempotency-header-unused", "error", "The operation declares an Idempotency-Key header but the tool "
    "does not send its idempotency key there.",
    "Set `idempotency: {key: action_id, send_as: \"header:Idempotency-Key\"}` so retries are safe at the API.")
IDEMPOTENCY_KEY_UNSENT = _rule(
    "idempotency-key-unsent", "error", "The operation takes an idempotency key as a query parameter or a "
    "request-body member (its name says idempotency, or its description says it deduplicates) but the tool "
    "does not send its idempotency key there.",
    "Set `idempotency: {key: action_id, send_as: \"body:idempotency_key\", honoured_by_api: true}` (the "
    "place the finding names): the runtime fills the member from the record's key, the model never does, "
    "and an unknown outcome is re-sent with the same key.")
IDEMPOTENCY_KEY_MISSING = _rule(
    "idempotency-key-missing", "warning", "A write or destructive tool has no idempotency key.",
    "Add `idempotency: {key: action_id, send_as: none}`: the runtime then stores receipts and replays a "
    "repeated call instead of writing twice.")
IDEMPOTENCY_HONOUR_UNDECLARED = _rule(
    "idempotency-honour-undeclared", "warning", "A write sends its idempotency key to the API but does not say "
    "whether the API deduplicates by it.",
    "Set `idempotency.honoured_by_api: true` only if the API returns the first result for a repeated key (the "
    "runtime then re-sends a write whose outcome is unknown), else `false` (never re-sent).")
PREVIEW_ADDS_NOTHING = _rule(
    "preview-adds-nothing", "info", "A write without approval (effect `write`, `approval: never`) has a preview "
    "tool that gates nothing: no human approves it and the record tool takes the full arguments.",
    "Set `preview: false` to drop the `preview_` tool (it costs catalog tokens and a model turn), or "
    "`approval: required` if a human should see the request first.")
SHARED_WRITE_CREDENTIAL = _rule(
    "shared-write-credential", "info", "A write reaches the API with one credential shared by every caller: "
    "served to several callers (`toolgen serve --http`), each acts as the service (a confused deputy).",
    "Declare `per_caller:` for the scheme in the intent map's `auth:` (`via: exchange` for RFC 8693 token "
    "exchange, `via: lookup` for each caller's own API key); raise this rule to `error` in `lint:` for a "
    "multi-user deployment.")
PERMISSION_MISSING = _rule(
    "permission-missing", "warning", "A tool requires no permission, so every actor may call it.",
    "Set `permission:` to the scope(s) an actor needs.")
SCOPE_UNKNOWN = _rule(
    "scope-unknown", "error", "A permission names a scope the spec's OAuth security schemes do not declare, on an "
    "operation the spec asks OAuth scopes for (where it asks for none, the permission is the map's own name).",
    "Use one of the scopes of the operation's OAuth security scheme (a typo grants nothing at the API).")
# outputs and pagination
PAGINATION_MISSING = _rule(
    "pagination-missing", "warning", "A list operation (array response or paging parameters) has no "
    "pagination intent.",
    "Add `pagination:` so the model gets `items` + `next_cursor` pages of a bounded size.")
OUTPUT_UNPROJECTED_LARGE = _rule(
    "output-unprojected-large", "warning", "A tool returns a large response schema without an output "
    "projection.",
    "Add `output: {fields: [...]}` with what the model needs (large outputs cost context and get truncated).")
# descriptions and names
DESCRIPTION_MISSING = _rule(
    "description-missing", "warning", "A tool has no description: neither the intent nor the operation has one.",
    "Write `description:` saying what the tool does, when to use it and when not to.")
DESCRIPTION_TOO_LONG = _rule(
    "description-too-long", "warning", f"A tool description is longer than {DESCRIPTION_LIMIT} characters.",
    f"Shorten it to at most {DESCRIPTION_LIMIT} characters; clients truncate or reject longer descriptions.")
DESCRIPTION_NO_WHEN_NOT = _rule(
    "description-no-when-not-to-use", "warning", "A tool with a near-synonym in the same map does not say when "
    "not to use it.",
    "Name the other tool in the description (\"use search_x for free-text queries\") or say what it is not for.")
TOOL_NAME_NEAR_SYNONYM = _rule(
    "tool-name-near-synonym", "info", "Two tool names differ only by a synonym verb (search_/find_/query_/"
    "lookup_/get_ of the same noun).",
    "Prefer one verb per noun, or make the names say how the tools differ.")
# the catalog as a whole
CATALOG_TOO_MANY_TOOLS = _rule(
    "catalog-too-many-tools", "warning", f"The catalog has more tools than `lint.max_tools` (default "
    f"{DEFAULT_MAX_TOOLS}, OpenAI's per-request limit).",
    "Split the API into several intent maps (namespaces) or leave rarely used operations out.")
CATALOG_REQUEST_LIMITS = _rule(
    "catalog-request-limits", "warning", "No single request can carry the catalog in some dialect: it exceeds "
    "a per-request limit of that provider (tools per request, name length with `lint.client_prefix`).",
    "Use toolsets (split the API into several intent maps, or the provider's tool search with deferred "
    "loading) or shrink the catalog (leave operations out, shorten names).")
CATALOG_TOO_MANY_TOKENS = _rule(
    "catalog-too-many-tokens", "warning", f"The catalog is larger than `lint.max_catalog_tokens` (default "
    f"{DEFAULT_MAX_CATALOG_TOKENS:,} o200k tokens).",
    "Project outputs, shorten descriptions, or split the API into several intent maps.")
CATALOG_PROVIDER_LIMIT = _rule(
    "catalog-provider-limit", "error", "An emitted catalog would exceed a hard provider limit that no split can "
    "meet: Anthropic tool search carries 10,000 tools, the tool-search tool included, and a larger deferred "
    "catalog is written as parts of whole toolsets, so one toolset (with the eager tools) over it cannot be sent. "
    "Checked on the IR, before any catalog is built: the build stops in seconds, nothing written.",
    "Split the toolset named (give part of its intents another toolset), defer more tools when the eager ones "
    "alone are over, `exclude` operations agents do not need, or build without that catalog (`--emit`, or "
    "`emit:` in toolgen.yaml).")
CATALOG_TOO_MANY_BYTES = _rule(
    "catalog-too-many-bytes", "warning", f"The tools' schemas alone are more than `lint.max_catalog_bytes` "
    f"(default {DEFAULT_MAX_CATALOG_BYTES // 1_000_000} MB) of compact JSON; every catalog file repeats them "
    "(policy.json, each dialect's file, mcp.json in the package). Estimated on the IR, before any catalog is "
    "built.",
    "Hide optional members of large request bodies (`hide`), project outputs (`output.fields`), leave "
    "operations out, or split the API into several intent maps.")
TOOL_TOO_LARGE = _rule(
    "tool-too-large", "warning", f"One tool is more than `lint.max_tool_tokens` (default "
    f"{DEFAULT_MAX_TOOL_TOKENS:,} o200k tokens) in some dialect: a model pays for it on every request that "
    "carries it.",
    "Hide optional members of its request body the model does not need (`hide:` with the wire names the hint "
    "drafts, or `args: {name: {hide: true}}`), or project its output (`output.fields`).")
OPERATIONS_UNCOVERED = _rule(
    "operations-uncovered", "info", "Operations of the spec that no tool covers (one finding with the count).",
    "Nothing to do if that is intended; REPORT.md lists them.")
LINT_CONFIG_UNKNOWN_RULE = _rule(
    "lint-config-unknown-rule", "warning", "toolgen.yaml configures the severity of a rule that does not exist.",
    "Use a rule id from `toolgen lint --list-rules`.")

# diagnostics of the build pipeline that lint passes through (severity as the build reports it:
# an explicit intent that cannot be lowered is an error; an include-group operation is skipped
# with a warning)
for _id, _sev, _summary, _help in (
    ("name-collision", "warning", "An include group's tool name was taken; a suffix was added.",
     "Give the operation an explicit intent with a name of your choice."),
    ("name-shortened", "warning", "A generated tool name was longer than 64 characters and was shortened.",
     "Give the operation an explicit intent with a shorter name."),
    ("approval-defaulted", "info", "A write intent has no `approval`; the map's default applies.",
     "State `approval: required` or `approval: never`."),
    ("approval-on-read", "warning", "A read intent sets `approval`, which applies to record tools only.",
     "Remove `approval`, or mark the intent write."),
    ("preview-required", "error", ("`preview: false` on a write whose record tool needs its preview "
     "(`approval: required`, or `record.arguments: preview`)."),
     "Drop `preview: false`, or set `approval: never` and `record.arguments: full`."),
    ("preview-ttl-unused", "warning", "`record.preview_ttl_s` on a record tool that takes the full arguments.",
     "Drop `preview_ttl_s`, or set `record.arguments: preview`."),
    ("retry-unsafe-write", "warning", "A write retries although its idempotency key is not sent to the API.",
     "Send the key (`idempotency.send_as`) or drop `retry`."),
    ("idempotency-key-collision", "error", "The idempotency key argument clashes with an operation argument.",
     "Choose another `idempotency.key`."),
    ("idempotency-body-unplaceable", "error", ("`send_as: body:NAME` on an operation whose request body is not "
     "an object of named members (none, text, binary, or one free-form or composed argument)."),
     "Send the key where the API reads it (`header:NAME` or `query:NAME`), or `send_as: none`."),
    ("pagination-param-missing", "error", "`pagination` names a query parameter the operation lacks.",
     "Use the operation's own cursor/limit parameter names."),
    ("pagination-items-missing", "error", "`pagination.items` is not an array in the response.",
     "Give the dotted path of the item array ('' when the body is the array)."),
    ("pagination-cursor-missing", "error", "A cursor/offset/page pagination has no `cursor` parameter.",
     "Name the API parameter that takes the cursor, offset or page."),
    ("pagination-page-size-empty", "error", "The limit parameter's bounds allow no page size up to `max_page_size`.",
     "Raise `max_page_size`, or page without `limit`."),
    ("output-field-unknown", "error", "`output.fields` names a field the response does not have.",
     "Use dotted paths of the response (or of each item for paginated tools)."),
    ("output-not-object", "error", "`output.fields` on a response that is not an object.",
     "Remove `output.fields`."),
    ("hide-required", "error", "`hide` names a required parameter.", "Use `fixed` to set a value instead."),
    ("hide-unknown", "error", "`hide` names something the operation does not have.",
     "Use wire names as the spec writes them."),
    ("fixed-unknown", "error", "`fixed` names something the operation does not have.",
     "Use a parameter's wire name, or `in:name`."),
    ("null-unknown-argument", "error", "`null` names an argument the tool does not have.",
     "Use an argument name of the tool."),
    ("arg-unknown", "error", "`args` names an argument the tool does not have.",
     "Use an argument name as the model sees it (the hint suggests the closest)."),
    ("arg-narrowing-unproved", "error",
     "An `args` schema is not provably a subset of the spec's schema for that argument.",
     "Tighten the narrowed schema as the hint says, or narrow with an enum (checked value by value)."),
    ("arg-hidden-narrowed", "error", "An `args` entry both hides and narrows an argument.",
     "Keep `hide: true` alone, or drop it."),
    ("input-example-invalid", "error", ("An intent's `input_examples` entry is not a whole call the tool's input "
     "schema accepts, names an argument the model does not see, or has a secret-like member."),
     "Give the arguments as the model sees them (`toolgen catalog`), valid under the input schema, without secrets."),
    ("spec-example-invalid", "warning", ("A request-body or parameter example of the spec breaks the tool's input "
     "schema (or names a secret-like member); it is not shown to models as an input example."),
     "Fix the example in the spec, or give the intent its own `input_examples`."),
    ("programmatic-record", "error", ("`programmatic` lists `record`: model-written code must never call a record "
     "tool (it writes, and approval gates it)."),
     "List only `read` or `preview`; the record tool is always called directly."),
    ("param-credential", "info", "A parameter looks like a credential; the runtime sends it from a secret.",
     "Nothing to do if that is right."),
    ("param-signed-visible", "warning",
     ("A parameter that a security scheme's request signature computes (AWS SigV4's X-Amz-Date, "
      "X-Amz-Signature, ...) is a tool argument: a model would be asked to sign."),
     "Add it to the intent's `hide:` (`toolgen init` drafts it); signing belongs to the transport."),
    ("request-body-xml", "warning",
     ("An XML request body is one string argument the model writes; the runtime does not serialise "
      "arguments to XML."),
     "Describe the expected document in `args: {body: {description: ...}}`, or offer JSON in the spec."),
    ("header-reserved", "warning",
     "A hop-by-hop, framing or Cookie header parameter is not a tool argument and is not sent.",
     "Nothing to do; declare cookies as `in: cookie` parameters."),
    ("parameter-invalid", "error", "A parameter of the operation is malformed.", "Fix the spec."),
    ("operation-too-many-parameters", "error", "An operation has more parameters than `budgets.max_parameters`.",
     "Raise the budget or leave the operation out."),
    ("operation-method-unsupported", "warning", "TRACE operations are not turned into tools.", "Nothing to do."),
    ("schema-too-large", "error", ("A schema expands beyond the schema budget (counted as the model sees it: "
     "a request body after `hide` and `args`, an output after `output.fields`)."),
     ("Hide optional request-body members (`hide`; the hint names the largest), project the output, or raise "
      "`budgets.max_schema_nodes`.")),
    ("schema-allof-conflict", "error", "An allOf merges contradictory schemas.", "Fix the spec."),
    ("body-required-absent", "warning", "An optional request body's schema requires members.",
     "If the API always needs the body, set `required: true` on the requestBody; else nothing to do."),
    ("schema-unsatisfiable", "warning", "An input schema in the spec admits no value.",
     "Fix the schema in the spec as the hint says; the tool takes the repaired schema the message names."),
    ("schema-invalid", "warning", "A schema object in the spec is malformed.", "Fix the spec."),
    ("spec-schema-invalid", "warning", "A part of the spec does not follow the OpenAPI schema.", "Fix the spec."),
    ("spec-duplicate-key", "warning",
     ("A key is written twice in one object of the spec (JSON or YAML); every reader keeps the last occurrence "
      "and drops the others, so the warning sits at the one read and names the dropped ones' lines."),
     "Keep one: merge what the others say into it and delete them."),
    ("response-media-assumed-json", "warning",
     ("A success response's media type (`*/*`, `application/*` or an unknown type) does not say JSON, but its "
     "schema is an object or array: the tool reads the answer as JSON."),
     "Declare the success response as application/json in the spec."),
    ("response-media-unknown", "warning",
     ("A success response's media type is a wildcard without an object or array schema: the tool returns the "
     "answer as JSON when it parses, else as text, unchecked."),
     "Declare the media type and schema of the success response in the spec."),
):
    _rule(_id, _sev, _summary, _help, "build")  # type: ignore[arg-type]
# a property of the spec that the build handles (recursive schemas become $defs): nothing to fix
_rule("schema-cycle", "info", "A recursive schema is kept as `$defs` references.",
      "Nothing to do unless a target without recursive-schema support matters.", "build")
# what the tool returns for an answer that is not JSON: said, nothing to fix
_rule("response-text", "info",
      ("The success response offers only text (`text/html`, `text/plain`, `text/csv`, XML): the tool returns the "
       "answer as `{\"text\": ...}`, the call's secrets scrubbed, cut to `output.max_bytes`."),
      "Nothing to do; declare a JSON response in the spec if the API has one.", "build")
_rule("response-redirect", "info",
      ("The only declared success is a redirect (3xx): a read follows a same-origin redirect (at most 5 hops, "
       "within its deadline) and returns where it landed; a download link or a write returns the redirect's "
       "`Location`."),
      "Nothing to do; declare the 2xx answer in the spec if the API has one.", "build")


# toolsets
TOOLSET_NEAR_SYNONYM = _rule(
    "toolset-near-synonym", "warning", "Two tools of one toolset have near-synonym names or descriptions a model "
    "could confuse.",
    "Merge them, rename one so the names say how they differ, or name the other tool in each description "
    "(\"use X for ...\").")
EXAMPLES_DUPLICATE = _rule(
    "examples-duplicate", "warning", "Two intents (or toolsets) give the same request in `examples`: tool search "
    "cannot tell from it which tool the user means.",
    "Keep the request on the tool it asks for, and give the other one the words that are its own.")
EXAMPLES_LENGTH = _rule(
    "examples-length", "warning", "An `examples` request is a single word or two (a keyword, not a request) or "
    "longer than 30 words.",
    "Write it as a user would ask (\"refund the last order\"); put single words under `keywords`.")
EXAMPLES_OPERATION_UNKNOWN = _rule(
    "examples-operation-unknown", "error", "The intent map's top-level `examples` names an operation that is not "
    "in the spec, or that no tool covers.",
    "Use an operationId or `METHOD /path` exactly as the spec writes it, of an operation the map includes.")
EXAMPLE_RANKS_OTHER = _rule(
    "example-ranks-other", "warning", "Tool search ranks another tool above the one an `examples` request belongs "
    "to (the API's own index, as `toolgen search` ranks).",
    "Reword the request with the words that are this tool's alone, or tell the two tools apart in their "
    "descriptions (`use_when` / `not_for`); `toolgen search \"<request>\"` shows the ranking.")
TOOLSET_UNKNOWN = _rule(
    "toolset-unknown", "error", "An intent or include group names a toolset that `toolsets:` does not declare.",
    "Declare it under `toolsets:` with a description and loading, or use a declared name.", "build")
TOOLSET_NAME_INVALID = _rule(
    "toolset-name-invalid", "error", "A toolset name breaks the namespace rules of some dialect "
    "(^[A-Za-z][A-Za-z0-9_-]{0,63}$).",
    "Use a letter, then letters, digits, '_' or '-', at most 64 characters.", "build")
TOOL_NAME_RESERVED = _rule(
    "tool-name-reserved", "error", "A tool is named `search_tools`, the search meta-tool's name, while tools are "
    "deferred.",
    "Rename the intent, or give the operation an explicit intent with another name.", "build")

# strictness
STRICT_DISABLED = _rule(
    "strict-disabled", "info", "An intent sets `strict: false`: its tools are sent non-strict (OpenAI "
    "`strict: false` with the natural schema, never strict in Anthropic), so a model may send arguments the "
    "schema rejects (the runtime still refuses them).",
    "Remove `strict: false` where the tool could be strict (the hint says when); keep it only where strict "
    "mode's reshaped arguments (entries, JSON strings) confuse the models you use.")


# decisions `toolgen init` leaves to a human as `# decide [RULE]` marks (`toolgen.review.lint.marks`)
EFFECT_UNDECIDED = _rule(
    "effect-undecided", "warning", "A `# decide [effect-undecided]` mark is left in the intent map: `toolgen init` "
    "could not tell from the operation's words whether it changes something (they disagree, or a POST says "
    "search or query), and drafted the effect the mark names.",
    "Decide the effect: a change is `effect: write` (or `destructive`) with `approval: required`; a pure read "
    "is `effect: read` with no `approval` or `idempotency`. Then delete the mark.")
PERMISSION_UNDECIDED = _rule(
    "permission-undecided", "warning", "A `# decide [permission-undecided]` mark is left in the intent map: the "
    "operation is protected by an OAuth scheme but the spec asks for no scope, so `toolgen init` drafted the "
    "map's own permission name.",
    "Set `permission:` to what an actor must hold to call it (a scope of the API, or your own name), then "
    "delete the mark.")

PAGINATION_UNDECIDED = _rule(
    "pagination-undecided", "warning", "A `# decide [pagination-undecided]` mark is left in the intent map: "
    "`toolgen init` drafted a `pagination:` from the operation's parameters and answer that it could not confirm "
    "(no page-size parameter for a page or offset walk, a time window whose direction the spec does not say, "
    "several arrays in the answer, or a position parameter with nothing that says where its next value is).",
    "Check the drafted `pagination:` against the API's documentation (or remove it and bound the list with "
    "`output.max_bytes`), then delete the mark.")


def rule_for(code: str) -> Rule:
    """The registered rule, or an ad-hoc descriptor for a build diagnostic not (yet) registered."""
    return RULES.get(code) or Rule(code, "warning", f"Build diagnostic `{code}`.", "See the message.", "build")


def rules_markdown() -> str:
    """The rules table for docs/review.md (`toolgen lint --list-rules`)."""
    lines = ["| rule | default | checks | fix |", "|---|---|---|---|"]
    for source in ("lint", "build"):
        for rule in RULES.values():
            if rule.source != source:
                continue
            sev = rule.severity + ("¹" if source == "build" else "")
            summary, help_ = (t.replace("|", "\\|") for t in (rule.summary, rule.help))
            lines.append(f"| `{rule.id}` | {sev} | {summary} | {help_} |")
    lines += ["", ("¹ Reported by the build pipeline and passed through by lint; its severity is the build's "
              "(an explicit intent that cannot be lowered is an error, an operation of an `include` group is "
              "skipped with a warning) unless `lint.severity` sets one.")]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# settings


@dataclass(frozen=True)
class LintSettings:
    """Per-rule severity overrides and the budgets of the catalog rules (toolgen.yaml `lint:`)."""

    severity: dict[str, Level] = field(default_factory=dict)
    max_tools: int = DEFAULT_MAX_TOOLS
    max_catalog_tokens: int = DEFAULT_MAX_CATALOG_TOKENS
    large_output_tokens: int = DEFAULT_LARGE_OUTPUT_TOKENS
    client_prefix: str = ""
    max_tool_tokens: int = DEFAULT_MAX_TOOL_TOKENS
    max_catalog_bytes: int = DEFAULT_MAX_CATALOG_BYTES

    @classmethod
    def from_config(cls, config: Any) -> LintSettings:
        """From a `toolgen.builder.project.LintConfig` (or None)."""
        if config is None:
            return cls()
        return cls(dict(config.severity), config.max_tools or DEFAULT_MAX_TOOLS,
                   config.max_catalog_tokens or DEFAULT_MAX_CATALOG_TOKENS,
                   config.large_output_tokens or DEFAULT_LARGE_OUTPUT_TOKENS, config.client_prefix or "",
                   config.max_tool_tokens or DEFAULT_MAX_TOOL_TOKENS,
                   config.max_catalog_bytes or DEFAULT_MAX_CATALOG_BYTES)


def apply_severity(findings: Iterable[Diagnostic], settings: LintSettings, strict: bool) -> list[Diagnostic]:
    """Configured severities (dropping `off` rules), then `--strict` (warnings become errors)."""
    out = []
    for d in findings:
        level = settings.severity.get(d.code)
        if level == "off":
            continue
        sev: Severity = level if level is not None else d.severity
        if strict and sev == "warning":
            sev = "error"
        out.append(d if sev == d.severity else replace(d, severity=sev))
    return out
