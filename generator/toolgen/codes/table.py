"""Kernel `codes.table`: the one registry of diagnostic codes, each with its severity, stage, summary,
fix and the docs section that explains it.

Input: the rows of the package's modules, in this order: the lint rules (`toolgen.codes.tool_rules`,
`toolgen.codes.lowering_rules`), then the other codes by stage (`toolgen.codes.reading_codes`,
`toolgen.codes.lowering_codes`, `toolgen.codes.command_codes`); a row is a `toolgen.codes.rows.Code`.
Output: `CODES` (code -> `Code`, read-only, in registration order), `code_info` and `is_registered`;
`ValueError` at import when two modules register one code. A `toolgen.diagnostics.Diagnostic` can
only be made with a code registered here (`UnregisteredCode` otherwise), so every diagnostic the
build, lint, diff, init, vendor or eval report has one row here; `toolgen.codes.docs` writes the
docs tables from it (docs/diagnostics.md, the lint rules of docs/review.md, the composite checks of
docs/composites.md).

A code is kebab-case and stable: a tool or a CI job may match on it. Its `severity` is the one the
stage reports it at (lint's `lint.severity` may change a rule's; an operation of an `include` group
that cannot be lowered is skipped with a warning whatever its code's severity). `rule` says whether
`toolgen lint` lists the code as a rule (`--list-rules`, configurable in `lint.severity`): ``lint``
for a check of lint's own, ``build`` for a build diagnostic lint passes through, None for the rest
(what stops a stage, or concerns a command other than lint and build).

To add a code: one `_code(...)` call in its module, in its stage's group (a lint rule in
`tool_rules` or `lowering_rules`, in `toolgen lint --list-rules` order); then
`python -m toolgen.codes` to rewrite the docs tables (`--check` in CI fails when they are stale).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from .command_codes import COMMAND_CODES
from .lowering_codes import LOWERING_CODES
from .lowering_rules import LOWERING_RULES
from .reading_codes import READING_CODES
from .rows import STAGES, Code, Rows, RuleSource, Severity, Stage
from .tool_rules import (
    DEFAULT_LARGE_OUTPUT_TOKENS,
    DEFAULT_MAX_CATALOG_BYTES,
    DEFAULT_MAX_CATALOG_TOKENS,
    DEFAULT_MAX_TOOL_TOKENS,
    DEFAULT_MAX_TOOLS,
    DESCRIPTION_LIMIT,
    TOOL_RULES,
)


class UnregisteredCode(ValueError):
    """A diagnostic was made with a code `toolgen.codes.table` does not register."""

    def __init__(self, code: str):
        super().__init__(
            f"diagnostic code {code!r} is not registered: add it to its stage's module of "
            "toolgen/codes (see toolgen/codes/table.py), then run `python -m toolgen.codes` "
            "to update the docs"
        )
        self.code = code


def _registry(*groups: Rows) -> dict[str, Code]:
    """The rows of `groups`, in order, by code; `ValueError` on a code two groups register."""
    table: dict[str, Code] = {}
    for rows in groups:
        for row in rows:
            if row.code in table:
                raise ValueError(f"code {row.code!r} is registered twice")
            table[row.code] = row
    return table


_TABLE = _registry(TOOL_RULES, LOWERING_RULES, READING_CODES, LOWERING_CODES, COMMAND_CODES)

#: every diagnostic code, read-only, in registration order
CODES: Mapping[str, Code] = MappingProxyType(_TABLE)


def is_registered(code: str) -> bool:
    """Whether `code` is a registered diagnostic code."""
    return code in _TABLE


def code_info(code: str) -> Code:
    """The registry's row of `code`; `UnregisteredCode` when there is none."""
    try:
        return _TABLE[code]
    except KeyError:
        raise UnregisteredCode(code) from None


__all__ = [
    "CODES",
    "DEFAULT_LARGE_OUTPUT_TOKENS",
    "DEFAULT_MAX_CATALOG_BYTES",
    "DEFAULT_MAX_CATALOG_TOKENS",
    "DEFAULT_MAX_TOOLS",
    "DEFAULT_MAX_TOOL_TOKENS",
    "DESCRIPTION_LIMIT",
    "STAGES",
    "Code",
    "RuleSource",
    "Severity",
    "Stage",
    "UnregisteredCode",
    "code_info",
    "is_registered",
]
