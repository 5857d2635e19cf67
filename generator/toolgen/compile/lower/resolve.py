"""Stage `lower`, first step: one intent -> `ResolvedIntent`, every default of the map applied once.

Input: an intent as the map states it (the pydantic `ToolIntent` of `tools:`, or the one an include
group infers, `toolgen.compile.lower.infer`), its key, where it sits in the map, its include group and
the map's `defaults`. Output: `ResolvedIntent`, frozen: the effect, the approval (``defaults.approval_*``
for a write that states none), the idempotency key with its ``send_as`` parsed (`Idempotency`), the
retry policy of each tool, the output rule, the timeout, the body limit, what the record tool takes and
whether the write has a preview. Every lowering module (`operation`, `parameters`, `body`, `narrow`,
`paging`, `outputs`, `text`, `toolsets`, `tools`) reads this object, never the pydantic model: a
default, or how the key is sent, is decided here alone (CONTRIBUTING.md, "Where a default is decided").

`resolve_intent` is pure: it reports nothing and raises nothing. What it decided that the map should
hear of (an approval defaulted, a retry dropped, a preview kept, ...) is in `ResolvedIntent.findings`,
located, for `toolgen.compile.lower.tools.lower_intent` to report once the operation is lowered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ...diagnostics import Diagnostic, SourceLocation
from ...policy.format import IdempotencyIn
from ..intent import (
    ApprovalCondition,
    ArgSpec,
    Defaults,
    IncludeSpec,
    LimitSpec,
    LoadedIntentMap,
    Loading,
    PaginationSpec,
    RetrySpec,
    ToolIntent,
)
from ..ir import Effect, Idempotency, Retry

Approval = Literal["never", "required"]
SchemaMode = Literal["strict", "warn", "off"]
RecordArguments = Literal["preview", "full"]

#: the conditions a retry is allowed on when neither the intent nor the defaults name them
DEFAULT_RETRY_ON = ("timeout", "429", "502", "503", "504")


@dataclass(frozen=True)
class OutputRule:
    """What of the response the model sees: `fields` kept (empty: no projection), `max_bytes` the size
    budget of the serialised result (``defaults.output_max_bytes`` when the intent sets none), `redact`
    paths, `schema_mode` (``defaults.output_schema_mode``), `depth` the levels kept in an unprojected
    output schema (``defaults.output_depth``) and `depth_below_fields` the levels kept below each kept
    field (the intent's `depth`, else 1)."""

    fields: tuple[str, ...]
    max_bytes: int
    redact: tuple[str, ...]
    schema_mode: SchemaMode
    depth: int
    depth_below_fields: int


@dataclass(frozen=True)
class PageSizes:
    """The page sizes of a paged tool before the limit parameter's own bounds narrow them
    (`paging.lower_pagination`): `page_size` the default the model gets (the intent's
    ``pagination.page_size``, else ``defaults.page_size``) and `max_page_size` the most it may ask
    for (``pagination.max_page_size``, else ``defaults.max_page_size``)."""

    page_size: int
    max_page_size: int


@dataclass(frozen=True)
class ResolvedIntent:
    """One intent with the map's defaults applied; see the module docstring.

    `key`: the intent's key (the read tool's name, the `preview_`/`record_` suffix of a write's);
    `where`: its key path in the map (``("tools", key)`` or ``("include", index)``); `explicit`: it is
    in `tools:` (else an include group's, `group`). `approval` is ``never`` for a read; `idempotency`
    is None for an intent without a key (``send_in: none`` when the key only keys receipts);
    `record_arguments` and `preview_ttl_s` are None for a read. `retry` is the policy of the read or
    record tool (one attempt for a write whose key is not sent to the API), `preview_retry` the
    preview tool's (the defaults', never the intent's). Millisecond values are integers.
    """

    key: str
    where: tuple[str | int, ...]
    explicit: bool
    group: IncludeSpec | None
    operation: str
    effect: Effect
    #: the scope(s) the intent or its group states; None: the operation's OAuth scopes decide (`tools`)
    permission: tuple[str, ...] | None
    approval: Approval
    #: the condition of a conditional approval (``approval: {when: EXPR}``), as written; None: none
    approval_when: str | None
    idempotency: Idempotency | None
    #: the pagination the intent states; `detect_paging`: an include group's read asks to detect one
    pagination: PaginationSpec | None
    detect_paging: bool
    page_sizes: PageSizes
    output: OutputRule
    description: str | None
    title: str | None
    timeout_ms: int
    retry: Retry
    preview_retry: Retry
    max_body_bytes: int | None
    #: the intent's `limits`, else ``defaults.limits``; `limits_own`: the intent states them
    limits: tuple[LimitSpec, ...]
    limits_own: bool
    #: the arguments the intent gives as input examples (as stated; None: none given)
    input_examples: tuple[dict[str, Any], ...] | None
    #: the modes model-written code may call: the intent's `programmatic`, else ``defaults.programmatic``
    programmatic: tuple[str, ...]
    programmatic_own: bool
    fixed: Mapping[str, Any]
    hide: tuple[str, ...]
    null: Mapping[str, Literal["omit", "send"]]
    args: Mapping[str, ArgSpec]
    record_arguments: RecordArguments | None
    preview_ttl_s: int | None
    has_preview: bool
    toolset: str | None
    loading: Loading | None
    keywords: tuple[str, ...]
    #: the search expansions as the intent states them (`examples`, `use_when`, `not_for`)
    examples: tuple[str, ...]
    use_when: str | None
    not_for: str | None
    strict: bool
    #: what resolving decided that the map should hear of, located (reported by `tools.lower_intent`)
    findings: tuple[Diagnostic, ...] = ()
    #: the intent as stated: the build cache's key for the lowered operation (`reuse.OperationKeys.key`)
    #: alone; lowering reads the fields above
    source: ToolIntent | None = field(default=None, repr=False, compare=False)

    @property
    def key_sent(self) -> bool:
        """Whether the idempotency key reaches the API (``send_as`` other than ``none``)."""
        return self.idempotency is not None and self.idempotency.send_in != "none"

    def body_key_member(self) -> str | None:
        """The request-body member the key is sent in (``send_as: body:NAME``), or None."""
        idem = self.idempotency
        return idem.wire_name if idem is not None and idem.send_in == "body" else None


def resolve_intent(
    intents: LoadedIntentMap,
    key: str,
    intent: ToolIntent,
    where: tuple[str | int, ...],
    *,
    explicit: bool,
    group: IncludeSpec | None = None,
) -> ResolvedIntent:
    """`intent` (at `where` in the map `intents`) with `intents.model.defaults` applied: see the module
    docstring. Pure; raises nothing."""
    defaults = intents.model.defaults
    findings: list[Diagnostic] = []

    def at(*keys: str | int) -> SourceLocation | None:
        return intents.locate(*where, *keys) if explicit else None

    def note(
        code: str,
        severity: Literal["error", "warning", "info"],
        message: str,
        location: SourceLocation | None,
        hint: str | None = None,
    ) -> None:
        findings.append(Diagnostic(code, severity, message, location, hint))

    effect = intent.effect
    timeout = intent.timeout_ms or defaults.timeout_ms
    idem = _idempotency(intent)
    if effect == "read":
        approval: Approval = "never"
        if approval_parts(intent.approval)[0] == "required":
            note(
                "approval-on-read",
                "warning",
                f"intent `{key}` is a read; approval applies to record tools only",
                at("approval"),
            )
        retry = _retry(intent.retry, defaults.retry, timeout, safe=True)
        arguments: RecordArguments | None = None
        ttl: int | None = None
        has_preview = True
    else:
        approval = approval_parts(intent.approval)[0] or (
            defaults.approval_destructive if effect == "destructive" else defaults.approval_write
        )
        if intent.approval is None and explicit:
            note(
                "approval-defaulted",
                "info",
                f"intent `{key}` ({effect}) has no `approval`; using {approval!r}",
                intents.locate(*where),
                "state `approval: required` or `approval: never` explicitly",
            )
        if (
            intent.idempotency is not None
            and idem is not None
            and idem.send_in == "none"
            and intent.idempotency.honoured_by_api
        ):
            note(
                "idempotency-honoured-unsent",
                "error",
                f"intent `{key}` says the API honours its idempotency key, "
                "but the key is not sent to the API",
                intents.locate(*where, "idempotency", "honoured_by_api"),
                'set `send_as` to where the API reads the key (e.g. "header:Idempotency-Key"), '
                "or drop `honoured_by_api`",
            )
        sent = idem is not None and idem.send_in != "none"
        retry = _retry(intent.retry, defaults.retry, timeout, safe=sent)
        if intent.retry and intent.retry.max_attempts and intent.retry.max_attempts > 1 and not sent:
            note(
                "retry-unsafe-write",
                "warning",
                f"intent `{key}` retries a {effect} whose idempotency key is not "
                "sent to the API; retries are disabled",
                intents.locate(*where, "retry"),
                "send the key to the API (idempotency.send_as) to allow retries",
            )
        arguments, ttl, has_preview = _record_shape(intent, approval, defaults, key, at, note)
    return ResolvedIntent(
        key=key,
        where=where,
        explicit=explicit,
        group=group,
        operation=intent.operation,
        effect=effect,
        permission=_stated_permission(intent, group),
        approval=approval,
        approval_when=approval_parts(intent.approval)[1],
        idempotency=idem,
        pagination=intent.pagination,
        detect_paging=intent.pagination is None and group is not None and group.paginate and effect == "read",
        page_sizes=_page_sizes(intent.pagination, defaults),
        output=_output(intent, defaults),
        description=intent.description,
        title=intent.title,
        timeout_ms=timeout,
        retry=retry,
        preview_retry=_retry(None, defaults.retry, timeout, safe=True),
        max_body_bytes=intent.max_body_bytes or defaults.max_body_bytes,
        limits=tuple(intent.limits if intent.limits is not None else defaults.limits),
        limits_own=intent.limits is not None,
        input_examples=tuple(intent.input_examples) if intent.input_examples is not None else None,
        programmatic=tuple(intent.programmatic if intent.programmatic is not None else defaults.programmatic),
        programmatic_own=intent.programmatic is not None,
        fixed=intent.fixed,
        hide=tuple(intent.hide),
        null=intent.null,
        args=intent.args,
        record_arguments=arguments,
        preview_ttl_s=ttl,
        has_preview=has_preview,
        toolset=intent.toolset,
        loading=intent.loading,
        keywords=tuple(intent.keywords),
        examples=tuple(intent.examples),
        use_when=intent.use_when,
        not_for=intent.not_for,
        strict=intent.strict,
        findings=tuple(findings),
        source=intent,
    )


def approval_parts(value: Any) -> tuple[Literal["never", "required"] | None, str | None]:
    """``(approval, condition)`` of an intent's `approval`: a word as written (None when unset), or
    ``("required", EXPR)`` for ``{when: EXPR}``."""
    if isinstance(value, ApprovalCondition):
        return "required", value.when
    return value, None


def _idempotency(intent: ToolIntent) -> Idempotency | None:
    """The key as the policy row states it: ``send_as`` (``header:NAME``, ``query:NAME``,
    ``body:FIELD`` or ``none``; the pattern of `IdempotencySpec.send_as`) parsed into where and
    under which name. A key that is not sent never claims the API honours it."""
    spec = intent.idempotency
    if spec is None:
        return None
    if spec.send_as == "none":
        return Idempotency(spec.key, "none", None)
    where, wire = spec.send_as.split(":", 1)
    send_in: IdempotencyIn = "header" if where == "header" else "query" if where == "query" else "body"
    return Idempotency(spec.key, send_in, wire, spec.honoured_by_api)


def _stated_permission(intent: ToolIntent, group: IncludeSpec | None) -> tuple[str, ...] | None:
    value = intent.permission if intent.permission is not None else (group.permission if group else None)
    if value is None:
        return None
    return (value,) if isinstance(value, str) else tuple(value)


def _page_sizes(spec: PaginationSpec | None, defaults: Defaults) -> PageSizes:
    return PageSizes(
        page_size=spec.page_size if spec is not None and spec.page_size else defaults.page_size,
        max_page_size=spec.max_page_size
        if spec is not None and spec.max_page_size
        else defaults.max_page_size,
    )


def _output(intent: ToolIntent, defaults: Defaults) -> OutputRule:
    spec = intent.output
    return OutputRule(
        fields=tuple(spec.fields) if spec else (),
        max_bytes=spec.max_bytes if spec and spec.max_bytes else defaults.output_max_bytes,
        redact=tuple(spec.redact) if spec else (),
        schema_mode=spec.schema_mode if spec and spec.schema_mode else defaults.output_schema_mode,
        depth=spec.depth if spec and spec.depth else defaults.output_depth,
        depth_below_fields=spec.depth if spec and spec.depth else 1,
    )


def _record_shape(
    intent: ToolIntent, approval: Approval, defaults: Defaults, key: str, at: Any, note: Any
) -> tuple[RecordArguments, int | None, bool]:
    """(what the record tool takes, the stored preview's lifetime in seconds or ``None``, whether the
    write has a preview tool). Default: ``preview`` for an approval-gated write, else ``full``.
    `preview: false` is refused (a located error; the preview is kept) with ``approval: required``
    or ``record.arguments: preview``: a human approves a preview, and only a preview can be executed."""
    spec = intent.record
    arguments: RecordArguments = (
        spec.arguments
        if spec is not None and spec.arguments is not None
        else ("preview" if approval == "required" else "full")
    )
    has_preview = intent.preview is not False
    if not has_preview:
        reason = (
            "its approval is bound to a preview_id"
            if approval == "required"
            else "`record.arguments: preview` executes the stored preview"
            if arguments == "preview"
            else None
        )
        if reason is not None:
            note(
                "preview-required",
                "error",
                f"intent `{key}` sets `preview: false`, but {reason}",
                at("preview"),
                "drop `preview: false`, or set `approval: never` and `record.arguments: full`",
            )
            has_preview = True
    ttl = None
    if arguments == "preview":
        ttl = (
            spec.preview_ttl_s
            if spec is not None and spec.preview_ttl_s is not None
            else defaults.preview_ttl_s
        )
    elif spec is not None and spec.preview_ttl_s is not None:
        note(
            "preview-ttl-unused",
            "warning",
            f"intent `{key}` sets `record.preview_ttl_s`, but its record tool "
            "takes the full arguments and executes no stored preview",
            at("record", "preview_ttl_s"),
            "drop `preview_ttl_s`, or set `record.arguments: preview`",
        )
    return arguments, ttl, has_preview


def _retry(spec: RetrySpec | None, default: RetrySpec, timeout_ms: int, *, safe: bool) -> Retry:
    """The retry policy: each member from the intent's `retry`, else ``defaults.retry``, else 3
    attempts, 200 ms backoff, a deadline of three timeouts (at least 10 s) and `DEFAULT_RETRY_ON`;
    one attempt when a retry is not `safe` (a write whose key the API never sees)."""

    def pick(name: str, fallback: Any) -> Any:
        for source in (spec, default):
            if source is not None and getattr(source, name) is not None:
                return getattr(source, name)
        return fallback

    attempts = pick("max_attempts", 3) if safe else 1
    return Retry(
        max_attempts=int(attempts),
        backoff_ms=int(pick("backoff_ms", 200)),
        deadline_ms=int(pick("deadline_ms", max(timeout_ms * 3, 10_000))),
        on=tuple(pick("on", DEFAULT_RETRY_ON)),
    )
