"""Kernel `codes.lowering_codes`: the registry's codes (`toolgen.codes.table`) for lowering intents to
tools and checking composite tools that are not lint rules (what stops lowering an intent).

Input: nothing (the rows are data). Output: `LOWERING_CODES` (the rows; the composite checks in the
order of the table of docs/composites.md).
"""

from __future__ import annotations

from .rows import Rows

LOWERING_CODES: Rows = Rows()
_code = LOWERING_CODES.add

# lowering intents to tools
_code(
    "auth-scheme-unknown",
    "error",
    "lower",
    summary="`auth` names a security scheme the spec does not declare.",
    fix="Use a key of components.securitySchemes, or declare the credential with `kind:`.",
)
_code(
    "include-matches-nothing",
    "warning",
    "lower",
    summary="An `include` pattern matches no operation of the spec.",
    fix="Patterns match an operationId, `METHOD /path` or `tag:NAME` (globs allowed).",
)
_code(
    "permission-invalid",
    "error",
    "lower",
    summary="A `permission` entry is not one scope.",
    fix="Write one scope, or a list of scopes: `permission: [a:read, b:read]`.",
)
_code(
    "idempotency-honoured-unsent",
    "error",
    "lower",
    summary="`idempotency.honoured_by_api: true` on an intent that does not send its key to the API.",
    fix=(
        'Set `send_as` to where the API reads the key (e.g. "header:Idempotency-Key"), or drop '
        "`honoured_by_api`."
    ),
)
_code(
    "approval-condition-invalid",
    "error",
    "lower",
    doc="docs/runtime.md#conditional-approval",
    summary=(
        "An approval condition (`approval: {when: ...}`) does not check: not CEL, an unknown "
        "argument, or not a bool. The condition is dropped and the approval stays required."
    ),
    fix="Write a CEL expression over args.<argument> and caller.id / caller.scopes that is a bool.",
)
_code(
    "limit-sum-invalid",
    "error",
    "lower",
    doc="docs/runtime.md#limits",
    summary=(
        "A `limits` sum names no required integer or number argument of the tool; the limit is dropped."
    ),
    fix="Name a required numeric argument of the tool, or use a calls limit.",
)
_code(
    "fixed-invalid",
    "error",
    "lower",
    doc="docs/generated-format.md#policyjson",
    summary="A `fixed` header value cannot be sent as a header.",
    fix="Set a valid `fixed:` value for it.",
)
_code(
    "output-redact-unknown",
    "error",
    "lower",
    summary="`output.redact` names a field the response does not have, so nothing would be redacted.",
    fix="Use a dotted path of the response (the same form as `output.fields`).",
)
_code(
    "pagination-field-missing",
    "error",
    "lower",
    doc="docs/review.md#pagination-styles",
    summary="A `pagination` path (`next`, `has_more`, ...) is not a field of the success response.",
    fix="Give the dotted path of that field in the response body.",
)
_code(
    "pagination-next-missing",
    "error",
    "lower",
    doc="docs/review.md#pagination-styles",
    summary="A cursor pagination has neither `next` nor `cursor_from_item`: no next page can be reached.",
    fix="Say where the next cursor is: `next: next_cursor`, or `cursor_from_item: id` with `has_more`.",
)
_code(
    "pagination-not-detected",
    "info",
    "lower",
    doc="docs/review.md#pagination-styles",
    summary=(
        "An operation of an `include` group looks paginated, but its pagination cannot be drafted: "
        "the tool returns one page as the API sends it."
    ),
    fix="Declare `pagination` in an explicit intent to page it.",
)

# composite tools (the table of docs/composites.md)
_code(
    "composite-step-operation-unknown",
    "error",
    "composite",
    summary="A step's `operation` is not in the spec (with the closest operationIds).",
    fix="Use an operationId or `METHOD /path` exactly as the spec writes it.",
)
_code(
    "composite-step-id",
    "error",
    "composite",
    summary="A step id is used twice, or is `input`.",
    fix="Give every step its own id.",
)
_code(
    "composite-reference-invalid",
    "error",
    "composite",
    summary=(
        "A `$...` value that is not `$input/<arg>...` or `$<step>[/pointer]`: a pointer with a `~` "
        "other than `~0`/`~1`, or an `<arg>` that is no argument name "
        "(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)."
    ),
    fix="Write a reference as the hint shows.",
)
_code(
    "composite-reference-unknown",
    "error",
    "composite",
    summary="A reference to a step the composite does not have.",
    fix="Name a step of the composite (the hint names the closest).",
)
_code(
    "composite-reference-later",
    "error",
    "composite",
    summary="A pipeline step reads a later step.",
    fix="Move that step before it: pipeline steps run in the order written.",
)
_code(
    "composite-cycle",
    "error",
    "composite",
    summary="A step reads its own answer, directly or through other steps.",
    fix="A step can read only the answers of steps that run before it.",
)
_code(
    "composite-reference-branch",
    "error",
    "composite",
    summary="A branch step reads another step (exactly one branch step runs).",
    fix="Use a pipeline, or map the value from the composite's input.",
)
_code(
    "composite-reference-aggregate",
    "error",
    "composite",
    summary="An aggregate step reads another step (aggregate steps run at once, independently).",
    fix="Use a pipeline when a step needs another's answer.",
)
_code(
    "composite-argument-unmapped",
    "error",
    "composite",
    summary=(
        "A required step argument that `args` does not map (the idempotency key excepted: the runtime "
        "fills it)."
    ),
    fix="Map it: `args: {name: $input/name}` (or a step's answer, or a literal).",
)
_code(
    "composite-argument-unknown",
    "error",
    "composite",
    summary="`args` maps a name that is not an argument of the step's operation.",
    fix="Map an argument of the operation (the hint names the closest).",
)
_code(
    "composite-mapping-type",
    "error",
    "composite",
    summary=(
        "A mapping whose types cannot match, as far as the schemas tell (an integer argument fed "
        "from a string member; a literal outside the argument's `enum`)."
    ),
    fix="Map a member of the right type, or a literal the argument accepts.",
)
_code(
    "composite-argument-incompatible",
    "error",
    "composite",
    summary="One composite argument mapped into two step arguments whose schemas no value satisfies both.",
    fix=(
        "Map two different arguments, or declare one schema under `inputs` that both step arguments accept."
    ),
)
_code(
    "composite-input-undeclared",
    "error",
    "composite",
    summary="A reference nested in a literal or into a member of an argument, without an `inputs` schema.",
    fix="Declare the argument's JSON Schema under `inputs`.",
)
_code(
    "composite-aggregate-write",
    "error",
    "composite",
    summary="A write step in an aggregate.",
    fix="An aggregate runs reads only; use a pipeline for steps that write.",
)
_code(
    "composite-override-looser",
    "error",
    "composite",
    summary="`effect` below the strictest step's, or `approval: never` with a write step.",
    fix="Drop the override: the composite's effect and approval are derived from its steps.",
)
_code(
    "composite-switch-missing",
    "error",
    "composite",
    summary="A branch without `switch: $input/<arg>`.",
    fix="Add `switch: $input/<argument>`, the argument whose value chooses the step.",
)
_code(
    "composite-switch-invalid",
    "error",
    "composite",
    summary="A branch's `switch` is not an argument of the composite.",
    fix="Write `switch: $input/<argument>`.",
)
_code(
    "composite-switch-unused",
    "error",
    "composite",
    summary="A `switch` on a composite that is not a branch.",
    fix="Drop `switch`, or set `pattern: branch`.",
)
_code(
    "composite-when-missing",
    "error",
    "composite",
    summary="A branch step without `when`.",
    fix="Add `when: <value of the switch argument that takes this step>`.",
)
_code(
    "composite-when-duplicate",
    "error",
    "composite",
    summary="Two branch steps with the same `when`.",
    fix="Give every branch step its own `when` value.",
)
_code(
    "composite-when-unused",
    "error",
    "composite",
    summary="A step's `when` outside a branch.",
    fix="Drop `when`, or set `pattern: branch`.",
)
_code(
    "composite-output-field-unknown",
    "error",
    "composite",
    summary="An `output_fields` path that names no member of the combined result.",
    fix="Name members of `output` and their members, e.g. customer.id.",
)
_code(
    "composite-output-reserved",
    "error",
    "composite",
    summary=(
        "An `output` member named `errors` (aggregate) or `steps` (writing composite), which the "
        "runtime adds."
    ),
    fix="Give the member another name.",
)
_code(
    "composite-idempotency-sent",
    "error",
    "composite",
    summary="`idempotency.send_as` other than `none` (a composite has no request of its own).",
    fix="Drop `send_as`: each write step sends its own key as its operation's intent says.",
)
_code(
    "tool-name-taken",
    "error",
    "composite",
    summary="The composite's tool name is another intent's.",
    fix="Rename the composite.",
)
