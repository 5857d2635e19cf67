"""`toolgen lint`: the rule table (`rules`), the linter (`linter`, a pure stage the build runs
too: its input and helpers in `context`, its rules in `operation_checks` and `catalog_checks`),
loading what to lint (`targets`), the output formats (`formats`: text, json, sarif, github) and the
findings known before any catalog is built (`preflight`: the build stops on them in seconds)."""

from .linter import LintInput, lint_api
from .output_formats import render
from .preflight import preflight_findings
from .rules import RULES, LintSettings, Rule, apply_severity, rule_for, rules_markdown
from .targets import LintResult, LintTarget, config_findings, lint_target

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
    "preflight_findings",
    "render",
    "rule_for",
    "rules_markdown",
]
