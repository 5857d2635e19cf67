"""Stage `lint`: IR + intent map + spec -> findings (`Diagnostic`s with a rule code of `rules`).

Input: `LintInput`: the `SpecDocument`, the `LoadedIntentMap`, the `ApiIR` that `lower` built from
them, the diagnostics the build itself reported and the `LintSettings`. Output: a list of
`Diagnostic`s, one per finding, located in the intent map (``file:line:col``) or, for what only the
spec knows, at the spec's JSON pointer; severities are the rules' defaults.

The build's diagnostics are lint findings too (`operation-not-found`, `tool-name-invalid`, ...):
lint reuses them rather than checking the same thing twice. `lint_api` is pure (no IO): the build
runs it for REPORT.md, `toolgen lint` through `toolgen.review.lint.targets`.
"""

from __future__ import annotations

from ...diagnostics import Diagnostic, DiagnosticSink
from .catalog_checks import CatalogChecks
from .lint_context import LintInput
from .operation_checks import OperationChecks
from .preflight import preflight_findings
from .shared_credentials import shared_credentials


class _Linter(OperationChecks, CatalogChecks):
    """Every rule, run in a fixed order (the findings are sorted by location afterwards)."""

    def run(self) -> list[Diagnostic]:
        # known before any catalog is built; a hard provider limit means no catalog is worth building
        preflight = self.data.preflight
        if preflight is None:
            preflight = preflight_findings(
                self.ir, self.intents, self.settings, self.data.dialects, self.data.options
            )
        self.sink.extend(preflight)
        blocked = any(d.severity == "error" for d in preflight)
        for check in (
            self.check_mapping,
            self.check_effects,
            self.check_policy,
            self.check_scopes,
            self.check_pagination,
            self.check_outputs,
            self.check_descriptions,
        ):
            check()
        self.sink.extend(shared_credentials([v.main.policy for v in self.views], self.intents, self.doc))
        if not blocked:
            self.check_catalog()
            self.check_tool_sizes()
        self.check_coverage()
        if not blocked:
            self.check_toolsets()
            self.check_strict()
            self.check_examples()
        return self.sink.items


def lint_api(data: LintInput) -> list[Diagnostic]:
    """All findings for one API, build diagnostics included, sorted by location; severities are the
    rules' defaults (apply `apply_severity` for the configured ones). Pure: reads no files."""
    linter = _Linter(data)
    sink = DiagnosticSink()
    sink.extend(data.build_diagnostics)  # at the build's severity: one finding, one severity everywhere
    sink.extend(linter.run())
    return sorted(data.doc.fill_locations(sink.items), key=Diagnostic.sort_key)


__all__ = ["LintInput", "lint_api"]
