"""The IR: the frozen, typed intermediate representation between the compile stages and the rest.

Input: built by `toolgen.compile.lower` from the spec and the intent map. Output: read by the
dialects (catalogs), `emit` (policy table, report, Python package) and the linter; nobody changes it.

An `ApiIR` holds the `Tool`s of one API. A tool is what a model sees (name, description, input and
output schema as canonical JSON Schema 2020-12) plus what the runtime enforces (`PolicyRow`), plus
how each argument reaches the wire (`ArgBinding`). The policy types are the policy table's own
(`toolgen.policy.format`, re-exported here): lowering builds the very rows `policy.json` is written
from. Schemas here are the *canonical* form: full constraints, original optionality; each dialect
derives its own view.

All containers are tuples (or JSON values that are never mutated after lowering), so the IR can be
shared between emitters without copies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..policy.format import (
    JSON,
    Approval,
    ArgBinding,
    ArgLocation,
    AuthBinding,
    BodyEncoding,
    Effect,
    FixedValue,
    Idempotency,
    Loading,
    Mode,
    NarrowedArg,
    NullMeans,
    OutputPolicy,
    Pagination,
    PaginationStyle,
    PolicyRow,
    Retry,
    Toolset,
)


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
    #: argument objects shown to models beside the input schema (Anthropic ``input_examples``), each valid
    #: under `input_schema` (`toolgen.compile.lower.input_examples`); only read and preview tools have any
    input_examples: tuple[JSON, ...] = ()
    #: whether model-written code may call the tool (``allowed_callers``): only ever a read or preview
    #: tool without approval whose intent (or the map's defaults) asks for it
    programmatic: bool = False


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


__all__ = [
    "JSON",
    "ApiIR",
    "Approval",
    "ArgBinding",
    "ArgLocation",
    "AuthBinding",
    "BodyEncoding",
    "Effect",
    "FixedValue",
    "Idempotency",
    "Loading",
    "Mode",
    "NarrowedArg",
    "NullMeans",
    "OperationRef",
    "OutputPolicy",
    "Pagination",
    "PaginationStyle",
    "PolicyRow",
    "Retry",
    "SkippedOperation",
    "Tool",
    "Toolset",
]
