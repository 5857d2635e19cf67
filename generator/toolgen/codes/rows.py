"""Kernel `codes.rows`: what one row of the registry of diagnostic codes (`toolgen.codes.table`) is.

Input: nothing. Output: the `Code` type and its closed sets (`Severity`, `Stage`, `RuleSource`), the
`STAGES` with their docs titles and sections, and `Rows`, an ordered group of codes that a module of
this package fills with one `add(...)` call per code (`ValueError` on a code registered twice in the
group, not kebab-case, or with an unknown severity or stage).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, get_args

Severity = Literal["error", "warning", "info"]
Stage = Literal[
    "project",
    "input",
    "spec",
    "swagger2",
    "schema",
    "intent",
    "lower",
    "composite",
    "lint",
    "build",
    "init",
    "vendor",
    "diff",
    "eval",
    "policy",
    "serve",
]
RuleSource = Literal["lint", "build"]

#: the stages in the order a build meets them, each with its title in docs/diagnostics.md and the
#: docs section that explains its codes (a code may name another)
STAGES: Mapping[Stage, tuple[str, str]] = MappingProxyType(
    {
        "project": ("The project file (toolgen.yaml)", "README.md#the-project-file"),
        "input": ("Reading a file", "README.md#commands"),
        "spec": ("The spec", "README.md#specs"),
        "swagger2": ("Swagger 2.0 conversion", "README.md#swagger-20"),
        "schema": ("Schemas", "docs/generated-format.md#the-canonical-schemas"),
        "intent": ("The intent map", "README.md#the-intent-map"),
        "lower": ("Lowering intents to tools", "README.md#the-intent-map"),
        "composite": ("Composite tools", "docs/composites.md#what-the-build-checks"),
        "lint": ("Lint rules", "docs/review.md#lint-findings"),
        "build": ("The build", "README.md#commands"),
        "init": ("toolgen init", "docs/adopting.md#2-draft-an-intent-map"),
        "vendor": ("toolgen vendor", "docs/adopting.md#3-large-specs-commit-a-slice"),
        "diff": ("toolgen diff", "docs/review.md#reading-toolgen-diff"),
        "eval": ("toolgen eval task files", "docs/eval.md#task-file"),
        "policy": ("Reading policy.json", "docs/generated-format.md#policyjson"),
        "serve": ("Serving: callers' access tokens", "docs/runtime.md#the-authorization-server"),
    }
)

_KEBAB = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")
_RULES_DOC = "docs/review.md#lint-findings"


@dataclass(frozen=True)
class Code:
    """One diagnostic code: `code` (kebab-case), the `severity` its stage reports, the `stage`, a
    one-sentence `summary` of what it finds, the `fix` (what to do), `doc` (``file#anchor`` of the
    docs section that explains it, relative to the repository root) and `rule` (see
    `toolgen.codes.table`)."""

    code: str
    severity: Severity
    stage: Stage
    summary: str
    fix: str
    doc: str
    rule: RuleSource | None = None


class Rows:
    """An ordered group of codes, filled once at import by the module that holds them; iterating
    yields the `Code` rows in the order they were added."""

    def __init__(self) -> None:
        self._rows: dict[str, Code] = {}

    def add(
        self,
        code: str,
        severity: Severity,
        stage: Stage,
        *,
        summary: str,
        fix: str,
        doc: str | None = None,
        rule: RuleSource | None = None,
    ) -> None:
        """Add one row; `doc` defaults to the lint rules' section for a rule, else the stage's."""
        if code in self._rows or not _KEBAB.fullmatch(code):
            raise ValueError(f"code {code!r} is registered twice, or is not kebab-case")
        if severity not in get_args(Severity) or stage not in STAGES:
            raise ValueError(f"code {code!r}: unknown severity {severity!r} or stage {stage!r}")
        where = doc or (_RULES_DOC if rule is not None else STAGES[stage][1])
        self._rows[code] = Code(code, severity, stage, summary, fix, where, rule)

    def __iter__(self) -> Iterator[Code]:
        return iter(self._rows.values())
