"""Lint findings known from the IR alone, before any catalog is built (`toolgen.dialects.preflight_problems`).

Input: the `ApiIR` that `lower` built, its `LoadedIntentMap`, the dialects the build emits and the
`LintSettings`. Output: located `Diagnostic`s: ``catalog-provider-limit`` (error: a hard provider
limit no split can meet, e.g. one toolset with more deferred tools than Anthropic's 10,000 with tool
search, located at that toolset's declaration) and ``catalog-too-many-bytes`` (warning: the
tools' schemas alone are larger than ``lint.max_catalog_bytes``). The build runs this right after
lowering and stops on an error before emitting anything; `toolgen lint` reports the same findings
(`lint_api`), and skips building catalogs when one is an error.
"""

from __future__ import annotations

from collections.abc import Collection

from ...compile.intent import LoadedIntentMap
from ...compile.ir import ApiIR
from ...diagnostics import Diagnostic, SourceLocation
from ...dialects import DialectOptions, names, preflight_problems, schema_bytes
from .rules import CATALOG_PROVIDER_LIMIT, CATALOG_TOO_MANY_BYTES, LintSettings

#: every dialect a build can emit (`toolgen lint` checks them all unless told which)
ALL_DIALECTS = names()  # every dialect, from the registry


def preflight_findings(
    ir: ApiIR,
    intents: LoadedIntentMap,
    settings: LintSettings,
    dialects: Collection[str] = ALL_DIALECTS,
    options: DialectOptions | None = None,
) -> list[Diagnostic]:
    """The findings of the module docstring, located at the toolset concerned where `toolsets:`
    declares it, else where the intent map decides what the catalogs hold: its `toolsets` (deferred
    loading), else its `include` groups, else its `tools`. `options`: the project's dialect choices
    (the Anthropic tool-search limit)."""
    where = _where(intents)
    limit = (options or DialectOptions()).anthropic_search_limit
    out = [
        Diagnostic(
            CATALOG_PROVIDER_LIMIT.id,
            CATALOG_PROVIDER_LIMIT.severity,
            problem.message,
            _toolset_where(intents, problem.tools) or where,
            problem.fix,
        )
        for problem in preflight_problems(ir.tools, dialects, search_limit=limit)
    ]
    size = schema_bytes(ir.tools)
    if size > settings.max_catalog_bytes:
        files = len([d for d in dialects if d in ALL_DIALECTS]) + 1  # and policy.json
        out.append(
            Diagnostic(
                CATALOG_TOO_MANY_BYTES.id,
                CATALOG_TOO_MANY_BYTES.severity,
                f"the {len(ir.tools):,} tools' input and output schemas are {size / 1e6:,.0f} MB of compact JSON "
                f"(lint.max_catalog_bytes {settings.max_catalog_bytes / 1e6:,.0f} MB); each of the {files} catalog "
                f"files repeats them, so this build writes at least {files * size / 1e6:,.0f} MB",
                where,
                CATALOG_TOO_MANY_BYTES.help,
            )
        )
    return out


def _toolset_where(intents: LoadedIntentMap, toolsets: tuple[str, ...]) -> SourceLocation | None:
    declared = intents.model.toolsets or {}
    name = toolsets[0] if toolsets else None
    return intents.locate("toolsets", name) if name is not None and name in declared else None


def _where(intents: LoadedIntentMap) -> SourceLocation:
    model = intents.model
    for key, present in (("toolsets", model.toolsets), ("include", model.include), ("tools", model.tools)):
        if present:
            return intents.locate(key)
    return intents.locate()


__all__ = ["ALL_DIALECTS", "preflight_findings"]
