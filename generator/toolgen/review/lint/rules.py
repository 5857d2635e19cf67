"""The lint rules: stable ids, default severities, what each checks and how to fix it; the settings
that change them.

Input: the registry of codes (`toolgen.codes.table`: every rule is a registered code, its texts there)
and, for the settings, the `lint:` section of toolgen.yaml
(`toolgen.builder.project.LintConfig`). Output: `RULES` (id -> `Rule`), `LintSettings` and `apply_severity`,
which turns the linter's findings into the configured severities (`off` drops them; `--strict`
makes warnings errors). Every finding's `code` is the id of a rule: kebab-case, stable, the same
scheme the build uses for its own diagnostics, which lint passes through (``source="build"``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ...codes.docs import rules_table
from ...codes.table import (
    CODES,
    DEFAULT_LARGE_OUTPUT_TOKENS,
    DEFAULT_MAX_CATALOG_BYTES,
    DEFAULT_MAX_CATALOG_TOKENS,
    DEFAULT_MAX_TOOL_TOKENS,
    DEFAULT_MAX_TOOLS,
    Code,
    RuleSource,
    Severity,
    code_info,
)
from ...diagnostics import Diagnostic

Level = Literal["error", "warning", "info", "off"]

SYNONYM_VERBS = ("search", "find", "query", "lookup", "get", "fetch", "retrieve")


@dataclass(frozen=True)
class Rule:
    """A lint rule: stable id, default severity, one-line summary, help text (what to do).

    `source` is ``lint`` for checks made here and ``build`` for diagnostics the build pipeline
    reports (lint passes them through; their severity is the build's unless configured). A view of
    the code's row in `toolgen.codes.table`, where every rule is registered.
    """

    id: str
    severity: Severity
    summary: str
    help: str
    source: RuleSource = "lint"


def _rule(code: Code) -> Rule:
    return Rule(code.code, code.severity, code.summary, code.fix, code.rule or "build")


#: the codes `toolgen lint` lists as rules (`--list-rules`, configurable in `lint.severity`), in the
#: registry's order: lint's own checks, then the build's diagnostics lint passes through
RULES: dict[str, Rule] = {code: _rule(row) for code, row in CODES.items() if row.rule is not None}

OPERATION_NOT_FOUND = RULES["operation-not-found"]
OPERATION_MAPPED_TWICE = RULES["operation-mapped-twice"]
TOOL_NAME_DUPLICATE = RULES["tool-name-duplicate"]
TOOL_NAME_INVALID = RULES["tool-name-invalid"]
EFFECT_CONTRADICTS_METHOD = RULES["effect-contradicts-method"]
EFFECT_WRITE_ON_SAFE_METHOD = RULES["effect-write-on-safe-method"]
EFFECT_READ_NAMES_CHANGE = RULES["effect-read-names-change"]
EFFECT_DELETE_NOT_DESTRUCTIVE = RULES["effect-delete-not-destructive"]
DESTRUCTIVE_WITHOUT_APPROVAL = RULES["destructive-without-approval"]
IDEMPOTENCY_HEADER_UNUSED = RULES["idempotency-header-unused"]
IDEMPOTENCY_KEY_UNSENT = RULES["idempotency-key-unsent"]
IDEMPOTENCY_KEY_MISSING = RULES["idempotency-key-missing"]
IDEMPOTENCY_HONOUR_UNDECLARED = RULES["idempotency-honour-undeclared"]
PREVIEW_ADDS_NOTHING = RULES["preview-adds-nothing"]
SHARED_WRITE_CREDENTIAL = RULES["shared-write-credential"]
PERMISSION_MISSING = RULES["permission-missing"]
SCOPE_UNKNOWN = RULES["scope-unknown"]
PAGINATION_MISSING = RULES["pagination-missing"]
OUTPUT_UNPROJECTED_LARGE = RULES["output-unprojected-large"]
DESCRIPTION_MISSING = RULES["description-missing"]
DESCRIPTION_TOO_LONG = RULES["description-too-long"]
DESCRIPTION_NO_WHEN_NOT = RULES["description-no-when-not-to-use"]
TOOL_NAME_NEAR_SYNONYM = RULES["tool-name-near-synonym"]
CATALOG_TOO_MANY_TOOLS = RULES["catalog-too-many-tools"]
CATALOG_REQUEST_LIMITS = RULES["catalog-request-limits"]
CATALOG_TOO_MANY_TOKENS = RULES["catalog-too-many-tokens"]
CATALOG_PROVIDER_LIMIT = RULES["catalog-provider-limit"]
CATALOG_TOO_MANY_BYTES = RULES["catalog-too-many-bytes"]
TOOL_TOO_LARGE = RULES["tool-too-large"]
OPERATIONS_UNCOVERED = RULES["operations-uncovered"]
LINT_CONFIG_UNKNOWN_RULE = RULES["lint-config-unknown-rule"]
TOOLSET_NEAR_SYNONYM = RULES["toolset-near-synonym"]
EXAMPLES_DUPLICATE = RULES["examples-duplicate"]
EXAMPLES_LENGTH = RULES["examples-length"]
EXAMPLES_OPERATION_UNKNOWN = RULES["examples-operation-unknown"]
EXAMPLE_RANKS_OTHER = RULES["example-ranks-other"]
TOOLSET_UNKNOWN = RULES["toolset-unknown"]
TOOLSET_NAME_INVALID = RULES["toolset-name-invalid"]
TOOL_NAME_RESERVED = RULES["tool-name-reserved"]
STRICT_DISABLED = RULES["strict-disabled"]
EFFECT_UNDECIDED = RULES["effect-undecided"]
PERMISSION_UNDECIDED = RULES["permission-undecided"]
PAGINATION_UNDECIDED = RULES["pagination-undecided"]
EXAMPLES_UNREVIEWED = RULES["examples-unreviewed"]


def rule_for(code: str) -> Rule:
    """The rule of a code; a code that is no rule (a build diagnostic lint does not list, such as
    `spec-invalid`) is described by its registry row. `UnregisteredCode` for an unknown code."""
    return RULES.get(code) or _rule(code_info(code))


def rules_markdown() -> str:
    """The rules table for docs/review.md (`toolgen lint --list-rules`; `toolgen.codes.docs`)."""
    return rules_table()


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
        return cls(
            dict(config.severity),
            config.max_tools or DEFAULT_MAX_TOOLS,
            config.max_catalog_tokens or DEFAULT_MAX_CATALOG_TOKENS,
            config.large_output_tokens or DEFAULT_LARGE_OUTPUT_TOKENS,
            config.client_prefix or "",
            config.max_tool_tokens or DEFAULT_MAX_TOOL_TOKENS,
            config.max_catalog_bytes or DEFAULT_MAX_CATALOG_BYTES,
        )


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
