"""Stage `intent`, the members of a tool intent: the pydantic models of its `retry`, `idempotency`,
`pagination`, `output`, `record`, `args`, approval condition (`approval: {when: ...}`) and `limits`,
and `StrictModel`, the base of every model of the intent map.

Input: nothing (the models are the format; `toolgen.compile.intent` composes them into `IntentMap`
and validates a loaded file against it). Output: the models, `DURATION_RE` and `duration_s` (a
limit's window in seconds). Their bounds are the policy format's (`toolgen.policy.members`).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..naming import ARG_NAME_RE
from ..policy.limits import MAX_CONDITION_CHARS
from ..policy.members import (
    MAX_ATTEMPTS,
    MAX_BACKOFF_MS,
    MAX_DEADLINE_MS,
    MAX_LIMIT,
    MAX_LIMIT_WINDOW_S,
    MAX_PAGE_SIZE,
    MAX_PREVIEW_TTL_S,
)


class StrictModel(BaseModel):
    """A model of the intent map: an unknown key is an error, a loaded value is never changed."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RetrySpec(StrictModel):
    """Bounded retries. Writes without an idempotency key are never retried."""

    max_attempts: int | None = Field(
        None, ge=1, le=MAX_ATTEMPTS, description="Tries in total, including the first."
    )
    backoff_ms: int | None = Field(
        None, ge=0, le=MAX_BACKOFF_MS, description="First backoff; doubles each try."
    )
    deadline_ms: int | None = Field(None, ge=1, le=MAX_DEADLINE_MS, description="No retry starts after this.")
    on: list[str] | None = Field(
        None, description="Conditions that allow a retry: `timeout` or HTTP statuses."
    )


class IdempotencySpec(StrictModel):
    """Where the idempotency key comes from and how it is sent."""

    key: str = Field(
        description="Name of the record tool's argument that carries the key.",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$",
    )
    send_as: str = Field(
        "none",
        description="`header:NAME`, `query:NAME`, `body:FIELD`, or `none` (used for receipts only).",
        pattern=r"^(none|(header|query|body):.+)$",
    )
    honoured_by_api: bool | None = Field(
        None,
        description="Whether the API deduplicates requests by this key (as Stripe and the IETF Idempotency-Key "
        "draft do: a repeat with the same key returns the first result instead of writing again). Only then does "
        "the runtime re-send a write whose outcome is unknown; otherwise it returns `result_unknown` and never "
        "re-sends. Lint asks for it whenever the key is sent to the API. Needs `send_as` other than `none`.",
    )


class PaginationSpec(StrictModel):
    """How a list operation pages; the runtime normalises it to `items` + an opaque `next_cursor`."""

    style: Literal["cursor", "offset", "page", "link"]
    items: str = Field(
        "", description="Dotted path of the item array in the response; '' = the body is the array."
    )
    cursor: str | None = Field(None, description="API parameter for the cursor / offset / page number.")
    limit: str | None = Field(None, description="API parameter for the page size.")
    next: str | None = Field(
        None,
        description="Dotted path of the API's next cursor in the response body; for "
        "`link`, of the next page's URL (absent: the Link header's rel=next); "
        "`header:NAME`: the response header NAME holds it.",
    )
    has_more: str | None = Field(None, description="Dotted path of a has-more flag in the response body.")
    cursor_from_item: str | None = Field(
        None,
        description="For `starting_after` APIs: the item field whose value on the last item is the next cursor.",
    )
    page_size: int | None = Field(None, ge=1, description="Default page size.")
    max_page_size: int | None = Field(
        None, ge=1, le=MAX_PAGE_SIZE, description="Upper bound the model may ask for."
    )


class OutputSpec(StrictModel):
    """What of the response the model sees."""

    fields: list[str] = Field(
        default_factory=list, description="Dotted paths to keep; empty = no projection."
    )
    max_bytes: int | None = Field(None, ge=256, description="Size budget of the serialised result.")
    redact: list[str] = Field(default_factory=list, description="Dotted paths replaced by '[redacted]'.")
    schema_mode: Literal["strict", "warn", "off"] | None = None
    depth: int | None = Field(None, ge=1, le=32, description="Depth kept in an unprojected output schema.")


class RecordSpec(StrictModel):
    """What the record tool of a write takes, and how long a stored preview stays executable."""

    arguments: Literal["preview", "full"] | None = Field(
        None,
        description="`preview`: `record_<key>` takes only the `preview_id` of `preview_<key>` (plus the idempotency "
        "key) and the runtime executes exactly the request it stored at preview time, the one the approval is "
        "bound to. `full`: `record_<key>` takes every argument again and must rebuild the same request. Default: "
        "`preview` for approval-gated writes, `full` for writes without approval.",
    )
    preview_ttl_s: int | None = Field(
        None,
        ge=10,
        le=MAX_PREVIEW_TTL_S,
        description="Seconds a stored preview can be executed by the record tool (default `defaults.preview_ttl_s`); "
        "after it the record call gets `preview_expired` and must preview again.",
    )


class ArgSpec(StrictModel):
    """One argument of a tool as the model sees it: a narrower schema, another description, or hidden.

    `schema` must accept only values the canonical schema (from the spec) accepts; toolgen proves it
    at build time (`toolgen.compile.narrowing`) and the runtime then validates against the narrowed
    schema. `hide: true` removes an optional argument (the runtime never sends it), like the tool-level
    `hide` list, which names wire names instead of argument names."""

    schema_: dict[str, Any] | None = Field(
        None,
        alias="schema",
        description="A JSON Schema 2020-12 (inline, no $ref) that accepts a subset of the canonical schema.",
    )
    description: str | None = Field(None, description="Replaces the argument's description in every catalog.")
    hide: bool = Field(
        False, description="Hide this optional argument: the model never sees it, the runtime never sends it."
    )


class ApprovalCondition(StrictModel):
    """An approval asked only when a condition holds (docs/runtime.md, "Conditional approval")."""

    when: str = Field(
        min_length=1,
        max_length=MAX_CONDITION_CHARS,
        description="A CEL expression over `args` (the validated, canonical arguments) and `caller` (`id`, "
        "`scopes`), e.g. `args.amount > 50000`: the record tool asks for approval when it is true, "
        "or when it cannot be evaluated. Checked against the tool's arguments at build.",
    )


#: a limit's window: a whole number of seconds, or digits and a unit (s, m, h, d)
DURATION_RE = r"[1-9][0-9]{0,8}[smhd]"
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def duration_s(value: int | str) -> int:
    """Seconds of a window written as seconds (``60``) or with a unit (``30s``, ``1m``, ``2h``, ``1d``)."""
    return value if isinstance(value, int) else int(value[:-1]) * _UNIT_S[value[-1]]


class LimitSpec(StrictModel):
    """What a tool may send (docs/runtime.md, "Limits"): one of `calls` with a `window`, `sum` with `max`
    and a `window`, or `concurrent`. Counted when a request is sent, across every worker sharing the
    receipt store."""

    per: Literal["actor", "tool", "api"] = Field(
        description="Who shares the count: `actor` (each caller its own), `tool` (every caller of the tool) "
        "or `api` (every tool of the API with the same limit)."
    )
    calls: int | None = Field(None, ge=1, le=MAX_LIMIT, description="Requests sent per window, at most.")
    sum: str | None = Field(
        None,
        pattern=ARG_NAME_RE.pattern,
        description="A numeric argument whose values sent per window add up to `max` at most.",
    )
    max: int | None = Field(None, ge=1, le=MAX_LIMIT, description="The most `sum` may add up to per window.")
    concurrent: int | None = Field(
        None, ge=1, le=MAX_LIMIT, description="Requests in flight at once, at most."
    )
    window: int | str | None = Field(
        None,
        description="The window of `calls` and `sum`: seconds, or `30s`, `1m`, `1h`, `1d` (at most 30 days).",
    )

    @field_validator("window")
    @classmethod
    def _duration(cls, value: int | str | None) -> int | str | None:
        if value is None:
            return None
        if (isinstance(value, str) and not re.fullmatch(DURATION_RE, value)) or (
            isinstance(value, int) and value < 1
        ):
            raise ValueError("a window is a positive number of seconds or digits and a unit: 30s, 1m, 1h, 1d")
        if duration_s(value) > MAX_LIMIT_WINDOW_S:
            raise ValueError(f"a window is at most {MAX_LIMIT_WINDOW_S} seconds (30d)")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> LimitSpec:
        kinds = [k for k in ("calls", "sum", "concurrent") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError("a limit is one of {calls, window}, {sum, max, window} or {concurrent}")
        if (self.sum is None) != (self.max is None):
            raise ValueError("a sum limit needs both `sum` (the argument) and `max`")
        if (self.window is None) != (self.concurrent is not None):
            raise ValueError("`calls` and `sum` need a `window`; `concurrent` takes none")
        return self
