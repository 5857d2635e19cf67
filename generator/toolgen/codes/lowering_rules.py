"""Kernel `codes.lowering_rules`: the lint rules of the registry (`toolgen.codes.table`) after
`toolgen.codes.tool_rules`, mostly the build's diagnostics on lowering one operation that lint
passes through: names, approval, examples, previews, idempotency, pagination, outputs, arguments,
parameters, schemas, responses, toolsets; and lint's checks of toolsets, examples, strict schemas
and the decisions `toolgen init` left to a person.

Input: nothing (the rows are data). Output: `LOWERING_RULES` (the rows in `toolgen lint
--list-rules` order).
"""

from __future__ import annotations

from .rows import Rows

LOWERING_RULES: Rows = Rows()
_code = LOWERING_RULES.add

_code(
    "name-collision",
    "warning",
    "lower",
    rule="build",
    summary="An include group's tool name was taken; a suffix was added.",
    fix="Give the operation an explicit intent with a name of your choice.",
)
_code(
    "name-shortened",
    "warning",
    "lower",
    rule="build",
    summary="A generated tool name was longer than 64 characters and was shortened.",
    fix="Give the operation an explicit intent with a shorter name.",
)
_code(
    "approval-defaulted",
    "info",
    "lower",
    rule="build",
    summary="A write intent has no `approval`; the map's default applies.",
    fix="State `approval: required` or `approval: never`.",
)
_code(
    "approval-on-read",
    "warning",
    "lower",
    rule="build",
    summary="A read intent sets `approval`, which applies to record tools only.",
    fix="Remove `approval`, or mark the intent write.",
)
_code(
    "input-example-invalid",
    "error",
    "lower",
    rule="build",
    summary=(
        "An intent's `input_examples` entry is not a whole call the tool's input schema accepts, "
        "names an argument the model does not see, or has a secret-like member."
    ),
    fix=(
        "Give the arguments as the model sees them (`toolgen catalog`), valid under the input schema, "
        "without secrets."
    ),
)
_code(
    "spec-example-invalid",
    "warning",
    "lower",
    rule="build",
    summary=(
        "A request-body or parameter example of the spec breaks the tool's input schema (or names a "
        "secret-like member); it is not shown to models as an input example."
    ),
    fix="Fix the example in the spec, or give the intent its own `input_examples`.",
)
_code(
    "programmatic-record",
    "error",
    "lower",
    rule="build",
    summary=(
        "`programmatic` lists `record`: model-written code must never call a record tool (it writes, "
        "and approval gates it)."
    ),
    fix="List only `read` or `preview`; the record tool is always called directly.",
)
_code(
    "preview-required",
    "error",
    "lower",
    rule="build",
    summary=(
        "`preview: false` on a write whose record tool needs its preview (`approval: required`, or "
        "`record.arguments: preview`)."
    ),
    fix="Drop `preview: false`, or set `approval: never` and `record.arguments: full`.",
)
_code(
    "preview-ttl-unused",
    "warning",
    "lower",
    rule="build",
    summary="`record.preview_ttl_s` on a record tool that takes the full arguments.",
    fix="Drop `preview_ttl_s`, or set `record.arguments: preview`.",
)
_code(
    "retry-unsafe-write",
    "warning",
    "lower",
    rule="build",
    summary="A write retries although its idempotency key is not sent to the API.",
    fix="Send the key (`idempotency.send_as`) or drop `retry`.",
)
_code(
    "idempotency-key-collision",
    "error",
    "lower",
    rule="build",
    summary="The idempotency key argument clashes with an operation argument.",
    fix="Choose another `idempotency.key`.",
)
_code(
    "idempotency-body-unplaceable",
    "error",
    "lower",
    rule="build",
    summary=(
        "`send_as: body:NAME` on an operation whose request body is not an object of named members "
        "(none, text, binary, or one free-form or composed argument)."
    ),
    fix="Send the key where the API reads it (`header:NAME` or `query:NAME`), or `send_as: none`.",
)
_code(
    "pagination-param-missing",
    "error",
    "lower",
    rule="build",
    summary="`pagination` names a query parameter the operation lacks.",
    fix="Use the operation's own cursor/limit parameter names.",
)
_code(
    "pagination-items-missing",
    "error",
    "lower",
    rule="build",
    summary="`pagination.items` is not an array in the response.",
    fix="Give the dotted path of the item array ('' when the body is the array).",
)
_code(
    "pagination-cursor-missing",
    "error",
    "lower",
    rule="build",
    summary="A cursor/offset/page pagination has no `cursor` parameter.",
    fix="Name the API parameter that takes the cursor, offset or page.",
)
_code(
    "pagination-page-size-empty",
    "error",
    "lower",
    rule="build",
    summary="The limit parameter's bounds allow no page size up to `max_page_size`.",
    fix="Raise `max_page_size`, or page without `limit`.",
)
_code(
    "output-field-unknown",
    "error",
    "lower",
    rule="build",
    summary="`output.fields` names a field the response does not have.",
    fix="Use dotted paths of the response (or of each item for paginated tools).",
)
_code(
    "output-not-object",
    "error",
    "lower",
    rule="build",
    summary="`output.fields` on a response that is not an object.",
    fix="Remove `output.fields`.",
)
_code(
    "hide-required",
    "error",
    "lower",
    rule="build",
    summary="`hide` names a required parameter.",
    fix="Use `fixed` to set a value instead.",
)
_code(
    "hide-unknown",
    "error",
    "lower",
    rule="build",
    summary="`hide` names something the operation does not have.",
    fix="Use wire names as the spec writes them.",
)
_code(
    "fixed-unknown",
    "error",
    "lower",
    rule="build",
    summary="`fixed` names something the operation does not have.",
    fix="Use a parameter's wire name, or `in:name`.",
)
_code(
    "null-unknown-argument",
    "error",
    "lower",
    rule="build",
    summary="`null` names an argument the tool does not have.",
    fix="Use an argument name of the tool.",
)
_code(
    "arg-unknown",
    "error",
    "lower",
    rule="build",
    summary="`args` names an argument the tool does not have.",
    fix="Use an argument name as the model sees it (the hint suggests the closest).",
)
_code(
    "arg-narrowing-unproved",
    "error",
    "lower",
    rule="build",
    summary="An `args` schema is not provably a subset of the spec's schema for that argument.",
    fix=("Tighten the narrowed schema as the hint says, or narrow with an enum (checked value by value)."),
)
_code(
    "arg-hidden-narrowed",
    "error",
    "lower",
    rule="build",
    summary="An `args` entry both hides and narrows an argument.",
    fix="Keep `hide: true` alone, or drop it.",
)
_code(
    "param-credential",
    "info",
    "lower",
    rule="build",
    summary="A parameter looks like a credential; the runtime sends it from a secret.",
    fix="Nothing to do if that is right.",
)
_code(
    "param-signed-visible",
    "warning",
    "lower",
    rule="build",
    summary=(
        "A parameter that a security scheme's request signature computes (AWS SigV4's X-Amz-Date, "
        "X-Amz-Signature, ...) is a tool argument: a model would be asked to sign."
    ),
    fix="Add it to the intent's `hide:` (`toolgen init` drafts it); signing belongs to the transport.",
)
_code(
    "request-body-xml",
    "warning",
    "lower",
    rule="build",
    summary=(
        "An XML request body is one string argument the model writes; the runtime does not "
        "serialise arguments to XML."
    ),
    fix=("Describe the expected document in `args: {body: {description: ...}}`, or offer JSON in the spec."),
)
_code(
    "header-reserved",
    "warning",
    "lower",
    rule="build",
    summary="A hop-by-hop, framing or Cookie header parameter is not a tool argument and is not sent.",
    fix="Nothing to do; declare cookies as `in: cookie` parameters.",
)
_code(
    "parameter-invalid",
    "error",
    "lower",
    rule="build",
    summary="A parameter of the operation is malformed.",
    fix="Fix the spec.",
)
_code(
    "operation-too-many-parameters",
    "error",
    "lower",
    rule="build",
    summary="An operation has more parameters than `budgets.max_parameters`.",
    fix="Raise the budget or leave the operation out.",
)
_code(
    "operation-method-unsupported",
    "warning",
    "lower",
    rule="build",
    summary="TRACE operations are not turned into tools.",
    fix="Nothing to do.",
)
_code(
    "schema-too-large",
    "error",
    "schema",
    rule="build",
    summary=(
        "A schema expands beyond the schema budget (counted as the model sees it: a request body "
        "after `hide` and `args`, an output after `output.fields`)."
    ),
    fix=(
        "Hide optional request-body members (`hide`; the hint names the largest), project the output, "
        "or raise `budgets.max_schema_nodes`."
    ),
)
_code(
    "schema-allof-conflict",
    "error",
    "schema",
    rule="build",
    summary="An allOf merges contradictory schemas.",
    fix="Fix the spec.",
)
_code(
    "body-required-absent",
    "warning",
    "lower",
    rule="build",
    summary="An optional request body's schema requires members.",
    fix=("If the API always needs the body, set `required: true` on the requestBody; else nothing to do."),
)
_code(
    "schema-unsatisfiable",
    "warning",
    "schema",
    rule="build",
    summary="An input schema in the spec admits no value.",
    fix=(
        "Fix the schema in the spec as the hint says; the tool takes the repaired schema the message names."
    ),
)
_code(
    "schema-invalid",
    "warning",
    "schema",
    rule="build",
    summary="A schema object in the spec is malformed.",
    fix="Fix the spec.",
)
_code(
    "spec-schema-invalid",
    "warning",
    "spec",
    rule="build",
    summary="A part of the spec does not follow the OpenAPI schema.",
    fix="Fix the spec.",
)
_code(
    "spec-duplicate-key",
    "warning",
    "spec",
    rule="build",
    summary=(
        "A key is written twice in one object of the spec (JSON or YAML); every reader keeps the "
        "last occurrence and drops the others, so the warning sits at the one read and names the "
        "dropped ones' lines."
    ),
    fix="Keep one: merge what the others say into it and delete them.",
)
_code(
    "response-media-assumed-json",
    "warning",
    "lower",
    rule="build",
    summary=(
        "A success response's media type (`*/*`, `application/*` or an unknown type) does not say "
        "JSON, but its schema is an object or array: the tool reads the answer as JSON."
    ),
    fix="Declare the success response as application/json in the spec.",
)
_code(
    "response-media-unknown",
    "warning",
    "lower",
    rule="build",
    summary=(
        "A success response's media type is a wildcard without an object or array schema: the tool "
        "returns the answer as JSON when it parses, else as text, unchecked."
    ),
    fix="Declare the media type and schema of the success response in the spec.",
)
_code(
    "schema-cycle",
    "info",
    "schema",
    rule="build",
    summary="A recursive schema is kept as `$defs` references.",
    fix="Nothing to do unless a target without recursive-schema support matters.",
)
_code(
    "response-text",
    "info",
    "lower",
    rule="build",
    summary=(
        "The success response offers only text (`text/html`, `text/plain`, `text/csv`, XML): the "
        'tool returns the answer as `{"text": ...}`, the call\'s secrets scrubbed, cut to '
        "`output.max_bytes`."
    ),
    fix="Nothing to do; declare a JSON response in the spec if the API has one.",
)
_code(
    "response-redirect",
    "info",
    "lower",
    rule="build",
    summary=(
        "The only declared success is a redirect (3xx): a read follows a same-origin redirect (at "
        "most 5 hops, within its deadline) and returns where it landed; a download link or a write "
        "returns the redirect's `Location`."
    ),
    fix="Nothing to do; declare the 2xx answer in the spec if the API has one.",
)
_code(
    "toolset-near-synonym",
    "warning",
    "lint",
    rule="lint",
    summary="Two tools of one toolset have near-synonym names or descriptions a model could confuse.",
    fix=(
        "Merge them, rename one so the names say how they differ, or name the other tool in each "
        'description ("use X for ...").'
    ),
)
_code(
    "examples-duplicate",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "Two intents (or toolsets) give the same request in `examples`: tool search cannot tell from "
        "it which tool the user means."
    ),
    fix="Keep the request on the tool it asks for, and give the other one the words that are its own.",
)
_code(
    "examples-length",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "An `examples` request is a single word or two (a keyword, not a request) or longer than 30 words."
    ),
    fix='Write it as a user would ask ("refund the last order"); put single words under `keywords`.',
)
_code(
    "examples-operation-unknown",
    "error",
    "lint",
    rule="lint",
    summary=(
        "The intent map's top-level `examples` names an operation that is not in the spec, or that no "
        "tool covers."
    ),
    fix=(
        "Use an operationId or `METHOD /path` exactly as the spec writes it, of an operation the map "
        "includes."
    ),
)
_code(
    "example-ranks-other",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "Tool search ranks another tool above the one an `examples` request belongs to (the API's own "
        "index, as `toolgen search` ranks)."
    ),
    fix=(
        "Reword the request with the words that are this tool's alone, or tell the two tools apart in "
        'their descriptions (`use_when` / `not_for`); `toolgen search "<request>"` shows the ranking.'
    ),
)
_code(
    "toolset-unknown",
    "error",
    "lower",
    rule="build",
    summary="An intent or include group names a toolset that `toolsets:` does not declare.",
    fix="Declare it under `toolsets:` with a description and loading, or use a declared name.",
)
_code(
    "toolset-name-invalid",
    "error",
    "lower",
    rule="build",
    summary=("A toolset name breaks the namespace rules of some dialect (^[A-Za-z][A-Za-z0-9_-]{0,63}$)."),
    fix="Use a letter, then letters, digits, '_' or '-', at most 64 characters.",
)
_code(
    "tool-name-reserved",
    "error",
    "lower",
    rule="build",
    summary="A tool is named `search_tools`, the search meta-tool's name, while tools are deferred.",
    fix="Rename the intent, or give the operation an explicit intent with another name.",
)
_code(
    "strict-disabled",
    "info",
    "lint",
    rule="lint",
    summary=(
        "An intent sets `strict: false`: its tools are sent non-strict (OpenAI `strict: false` "
        "with the natural schema, never strict in Anthropic), so a model may send arguments the "
        "schema rejects (the runtime still refuses them)."
    ),
    fix=(
        "Remove `strict: false` where the tool could be strict (the hint says when); keep it only "
        "where strict mode's reshaped arguments (entries, JSON strings) confuse the models you use."
    ),
)
_code(
    "effect-undecided",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "A `# decide [effect-undecided]` mark is left in the intent map: `toolgen init` could not "
        "tell from the operation's words whether it changes something (they disagree, or a POST "
        "says search or query), and drafted the effect the mark names."
    ),
    fix=(
        "Decide the effect: a change is `effect: write` (or `destructive`) with `approval: required`; "
        "a pure read is `effect: read` with no `approval` or `idempotency`. Then delete the mark."
    ),
)
_code(
    "permission-undecided",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "A `# decide [permission-undecided]` mark is left in the intent map: the operation is "
        "protected by an OAuth scheme but the spec asks for no scope, so `toolgen init` drafted "
        "the map's own permission name."
    ),
    fix=(
        "Set `permission:` to what an actor must hold to call it (a scope of the API, or your own "
        "name), then delete the mark."
    ),
)
_code(
    "pagination-undecided",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "A `# decide [pagination-undecided]` mark is left in the intent map: `toolgen init` "
        "drafted a `pagination:` from the operation's parameters and answer that it could not "
        "confirm (no page-size parameter for a page or offset walk, a time window whose direction "
        "the spec does not say, several arrays in the answer, or a position parameter with nothing "
        "that says where its next value is)."
    ),
    fix=(
        "Check the drafted `pagination:` against the API's documentation (or remove it and bound the "
        "list with `output.max_bytes`), then delete the mark."
    ),
)
_code(
    "examples-unreviewed",
    "warning",
    "lint",
    rule="lint",
    summary=(
        "A `# decide [examples-unreviewed]` mark is left in the intent map: `toolgen describe` "
        "drafted the intent's search expansions (`examples`, `use_when`, `not_for`) through a "
        "model that read only the operation's text, and nobody has reviewed them yet."
    ),
    fix=(
        "Read the drafted requests: keep those a user of the tool would really type, correct or delete "
        "the rest and any `use_when` / `not_for` line that is not true; then delete the mark."
    ),
)
