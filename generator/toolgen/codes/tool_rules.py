"""Kernel `codes.tool_rules`: the first lint rules of the registry (`toolgen.codes.table`), those on
one tool and on the catalog: tool names, effect, approval, idempotency, permission, pagination,
descriptions, the catalog's size and coverage, lint's own settings.

Input: nothing (the rows are data). Output: `TOOL_RULES` (the rows in `toolgen lint --list-rules`
order) and the lint settings' defaults the summaries quote (`toolgen.review.lint.rules` reads them).
"""

from __future__ import annotations

from .rows import Rows

# the lint settings' defaults, which the rules' summaries quote (`toolgen.review.lint.rules`)
DEFAULT_MAX_TOOLS = 128  # OpenAI's limit on tools per request
DEFAULT_MAX_CATALOG_TOKENS = 32_000
DEFAULT_LARGE_OUTPUT_TOKENS = 1_500
DEFAULT_MAX_TOOL_TOKENS = 16_000  # one tool's o200k tokens in any dialect (an eighth of a 128k context)
DEFAULT_MAX_CATALOG_BYTES = 100_000_000  # the tools' schemas, which every catalog file repeats
DESCRIPTION_LIMIT = 1024

TOOL_RULES: Rows = Rows()
_code = TOOL_RULES.add

_code(
    "operation-not-found",
    "error",
    "lower",
    rule="build",
    summary="An intent names an operation that is not in the spec.",
    fix="Use an operationId or `METHOD /path` exactly as the spec writes it.",
)
_code(
    "operation-mapped-twice",
    "warning",
    "lint",
    rule="lint",
    summary="Two intents map the same operation without a difference that justifies it.",
    fix=(
        "Remove one intent, or make the second a real specialisation (different `fixed` values, "
        "`hide`, `args` narrowing or `output` projection)."
    ),
)
_code(
    "tool-name-duplicate",
    "error",
    "lint",
    rule="lint",
    summary="Two intents produce the same tool name.",
    fix="Rename one intent; a write intent X also produces preview_X and record_X.",
)
_code(
    "tool-name-invalid",
    "error",
    "lower",
    rule="build",
    summary="A tool name breaks the dialect name rules (^[a-zA-Z0-9_-]{1,64}$, prefix included).",
    fix=("Choose a name of letters, digits, '_' and '-' that stays within 64 characters with 'preview_'."),
)
_code(
    "effect-contradicts-method",
    "error",
    "lint",
    rule="lint",
    summary="The effect contradicts the HTTP method (a DELETE, PUT or PATCH marked read).",
    fix=("Mark it `write` or `destructive`: a read tool is never previewed, approved or made idempotent."),
)
_code(
    "effect-write-on-safe-method",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "A GET/HEAD/OPTIONS operation whose Action, operationId, path and summary name no change "
        "is marked write or destructive."
    ),
    fix="Allowed (some APIs mutate on GET), but confirm it; set this rule to `off` for APIs that do.",
)
_code(
    "effect-read-names-change",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "An intent marked `effect: read` maps an operation whose Action, `x-` hints "
        "(`x-kubernetes-action`, `x-ms-docs-operation-type`, `x-openai-isConsequential`, "
        "`x-linode-grant`, an SDK method name), operationId, path (a side-effecting sub-resource "
        "such as `/exec`, `/invalidate`, `/resendWelcomeSms`, `/logout`), summary or description "
        "says it changes something (delete, create, update, terminate, ...), whatever its HTTP "
        "method."
    ),
    fix=(
        "If it changes something, mark it `effect: write` (or `destructive`) with `approval: "
        "required`: a read is never previewed, approved or made idempotent, and its MCP tool says "
        "readOnlyHint. If it only reads (the word misleads), set this rule to `off` for the map in "
        "toolgen.yaml `lint.severity`."
    ),
)
_code(
    "effect-delete-not-destructive",
    "warning",
    "lint",
    rule="lint",
    summary="A DELETE operation is marked `write`, not `destructive`.",
    fix="Mark it `destructive` unless the deletion is trivially undone.",
)
_code(
    "destructive-without-approval",
    "error",
    "lint",
    rule="lint",
    summary="A destructive tool runs without human approval.",
    fix=("Set `approval: required`; approval is bound to the preview_id, so a human sees the exact request."),
)
_code(
    "idempotency-header-unused",
    "error",
    "lint",
    rule="lint",
    summary=(
        "The operation declares an Idempotency-Key header but the tool does not send its "
        "idempotency key there."
    ),
    fix=(
        'Set `idempotency: {key: action_id, send_as: "header:Idempotency-Key"}` so retries are safe at '
        "the API."
    ),
)
_code(
    "idempotency-key-unsent",
    "error",
    "lint",
    rule="lint",
    summary=(
        "The operation takes an idempotency key as a query parameter or a request-body member (its "
        "name says idempotency, or its description says it deduplicates) but the tool does not "
        "send its idempotency key there."
    ),
    fix=(
        'Set `idempotency: {key: action_id, send_as: "body:idempotency_key", honoured_by_api: true}` '
        "(the place the finding names): the runtime fills the member from the record's key, the model "
        "never does, and an unknown outcome is re-sent with the same key."
    ),
)
_code(
    "idempotency-key-missing",
    "warning",
    "lint",
    rule="lint",
    summary="A write or destructive tool has no idempotency key.",
    fix=(
        "Add `idempotency: {key: action_id, send_as: none}`: the runtime then stores receipts and "
        "replays a repeated call instead of writing twice."
    ),
)
_code(
    "idempotency-honour-undeclared",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "A write sends its idempotency key to the API but does not say whether the API deduplicates by it."
    ),
    fix=(
        "Set `idempotency.honoured_by_api: true` only if the API returns the first result for a "
        "repeated key (the runtime then re-sends a write whose outcome is unknown), else `false` "
        "(never re-sent)."
    ),
)
_code(
    "preview-adds-nothing",
    "info",
    "lint",
    rule="lint",
    summary=(
        "A write without approval (effect `write`, `approval: never`) has a preview tool that "
        "gates nothing: no human approves it and the record tool takes the full arguments."
    ),
    fix=(
        "Set `preview: false` to drop the `preview_` tool (it costs catalog tokens and a model turn), "
        "or `approval: required` if a human should see the request first."
    ),
)
_code(
    "shared-write-credential",
    "info",
    "lint",
    rule="lint",
    summary=(
        "A write reaches the API with one credential shared by every caller: served to several "
        "callers (`toolgen serve --http`), each acts as the service (a confused deputy)."
    ),
    fix=(
        "Declare `per_caller:` for the scheme in the intent map's `auth:` (`via: exchange` for RFC "
        "8693 token exchange, `via: lookup` for each caller's own API key); raise this rule to `error` "
        "in `lint:` for a multi-user deployment."
    ),
)
_code(
    "permission-missing",
    "warning",
    "lint",
    rule="lint",
    summary="A tool requires no permission, so every actor may call it.",
    fix="Set `permission:` to the scope(s) an actor needs.",
)
_code(
    "scope-unknown",
    "error",
    "lint",
    rule="lint",
    summary=(
        "A permission names a scope the spec's OAuth security schemes do not declare, on an "
        "operation the spec asks OAuth scopes for (where it asks for none, the permission is the "
        "map's own name)."
    ),
    fix=(
        "Use one of the scopes of the operation's OAuth security scheme (a typo grants nothing at the API)."
    ),
)
_code(
    "pagination-missing",
    "warning",
    "lint",
    rule="lint",
    summary="A list operation (array response or paging parameters) has no pagination intent.",
    fix="Add `pagination:` so the model gets `items` + `next_cursor` pages of a bounded size.",
)
_code(
    "output-unprojected-large",
    "warning",
    "lint",
    rule="lint",
    summary="A tool returns a large response schema without an output projection.",
    fix=(
        "Add `output: {fields: [...]}` with what the model needs (large outputs cost context and get "
        "truncated)."
    ),
)
_code(
    "description-missing",
    "warning",
    "lint",
    rule="lint",
    summary="A tool has no description: neither the intent nor the operation has one.",
    fix="Write `description:` saying what the tool does, when to use it and when not to.",
)
_code(
    "description-too-long",
    "warning",
    "lint",
    rule="lint",
    summary=f"A tool description is longer than {DESCRIPTION_LIMIT} characters.",
    fix=(
        f"Shorten it to at most {DESCRIPTION_LIMIT} characters; clients truncate or reject longer "
        "descriptions."
    ),
)
_code(
    "description-no-when-not-to-use",
    "warning",
    "lint",
    rule="lint",
    summary="A tool with a near-synonym in the same map does not say when not to use it.",
    fix=(
        'Name the other tool in the description ("use search_x for free-text queries") or say what it '
        "is not for."
    ),
)
_code(
    "tool-name-near-synonym",
    "info",
    "lint",
    rule="lint",
    summary=(
        "Two tool names differ only by a synonym verb (search_/find_/query_/lookup_/get_ of the same noun)."
    ),
    fix="Prefer one verb per noun, or make the names say how the tools differ.",
)
_code(
    "catalog-too-many-tools",
    "warning",
    "lint",
    rule="lint",
    summary=(
        f"The catalog has more tools than `lint.max_tools` (default {DEFAULT_MAX_TOOLS}, OpenAI's "
        "per-request limit)."
    ),
    fix="Split the API into several intent maps (namespaces) or leave rarely used operations out.",
)
_code(
    "catalog-request-limits",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "No single request can carry the catalog in some dialect: it exceeds a per-request limit "
        "of that provider (tools per request, name length with `lint.client_prefix`)."
    ),
    fix=(
        "Use toolsets (split the API into several intent maps, or the provider's tool search with "
        "deferred loading) or shrink the catalog (leave operations out, shorten names)."
    ),
)
_code(
    "catalog-too-many-tokens",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "The catalog is larger than `lint.max_catalog_tokens` "
        f"(default {DEFAULT_MAX_CATALOG_TOKENS:,} o200k tokens)."
    ),
    fix="Project outputs, shorten descriptions, or split the API into several intent maps.",
)
_code(
    "catalog-provider-limit",
    "error",
    "lint",
    rule="lint",
    summary=(
        "An emitted catalog would exceed a hard provider limit that no split can meet: Anthropic "
        "tool search carries 10,000 tools, the tool-search tool included, and a larger deferred "
        "catalog is written as parts of whole toolsets, so one toolset (with the eager tools) over "
        "it cannot be sent. Checked on the IR, before any catalog is built: the build stops in "
        "seconds, nothing written."
    ),
    fix=(
        "Split the toolset named (give part of its intents another toolset), defer more tools when the "
        "eager ones alone are over, `exclude` operations agents do not need, or build without that "
        "catalog (`--emit`, or `emit:` in toolgen.yaml)."
    ),
)
_code(
    "catalog-too-many-bytes",
    "warning",
    "lint",
    rule="lint",
    summary=(
        f"The tools' schemas alone are more than `lint.max_catalog_bytes` (default "
        f"{DEFAULT_MAX_CATALOG_BYTES // 1_000_000} MB) of compact JSON; every catalog file repeats "
        "them (policy.json, each dialect's file, mcp.json in the package). Estimated on the IR, "
        "before any catalog is built."
    ),
    fix=(
        "Hide optional members of large request bodies (`hide`), project outputs (`output.fields`), "
        "leave operations out, or split the API into several intent maps."
    ),
)
_code(
    "tool-too-large",
    "warning",
    "lint",
    rule="lint",
    summary=(
        f"One tool is more than `lint.max_tool_tokens` (default {DEFAULT_MAX_TOOL_TOKENS:,} o200k "
        "tokens) in some dialect: a model pays for it on every request that carries it."
    ),
    fix=(
        "Hide optional members of its request body the model does not need (`hide:` with the wire "
        "names the hint drafts, or `args: {name: {hide: true}}`), or project its output "
        "(`output.fields`)."
    ),
)
_code(
    "operations-uncovered",
    "info",
    "lint",
    rule="lint",
    summary="Operations of the spec that no tool covers (one finding with the count).",
    fix="Nothing to do if that is intended; REPORT.md lists them.",
)
_code(
    "lint-config-unknown-rule",
    "warning",
    "lint",
    rule="lint",
    summary="toolgen.yaml configures the severity of a rule that does not exist.",
    fix="Use a rule id from `toolgen lint --list-rules`.",
)
