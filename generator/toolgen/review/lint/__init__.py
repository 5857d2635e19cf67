"""`toolgen lint`: rules, the linter and its output formats."""

from .linter import (
    RULES,
    LintInput,
    LintResult,
    LintSettings,
    LintTarget,
    Rule,
    apply_severity,
    config_findings,
    lint_api,
    lint_target,
    rules_markdown,
)

__all__ = [
    "RULES",
    "LintInput",
    "LintResult",
    "LintSettings",
    "LintTarget",
    "Rule",
    "apply_severity",
    "config_findings",
    "lint_api",
    "lint_target",
    "rules_markdown",
]
