"""Lint, shared credentials: the writes that reach the API with one credential shared by every caller.

Input: the policy rows of an intent map's tools. Output: `shared_writes` -> security scheme ->
the record tools whose binding of that scheme has no ``per_caller`` or lets the service's secret
stand in for writes (``service_secret: always``), in row order; `shared_credentials`, the
`shared-write-credential` findings, one per scheme. Served to several callers (`toolgen serve
--http`), such a write acts for each of them as the service (a confused deputy). Pure and
deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...compile.intent import LoadedIntentMap
from ...compile.load import SpecDocument
from ...diagnostics import Diagnostic
from ...pointer import join_pointer
from ...policy.format import PolicyRow
from .rules import SHARED_WRITE_CREDENTIAL

__all__ = ["shared_credentials", "shared_writes"]


def shared_writes(rows: Iterable[PolicyRow]) -> dict[str, list[str]]:
    """Scheme -> the record tools of `rows` that write with its shared credential (module docstring)."""
    writes: dict[str, list[str]] = {}
    for row in rows:
        if row.mode != "record":
            continue
        for entry in row.auth:
            if entry.per_caller is None or entry.per_caller.service_secret == "always":
                writes.setdefault(entry.scheme, []).append(row.tool)
    return writes


def shared_credentials(
    rows: Iterable[PolicyRow], intents: LoadedIntentMap, doc: SpecDocument
) -> list[Diagnostic]:
    """`shared-write-credential` per scheme of `shared_writes`, located at the scheme's `auth:` entry
    of the intent map, else at the spec's security scheme."""
    declared = intents.root.get("auth", {}) if intents.root is not None else {}
    rule = SHARED_WRITE_CREDENTIAL
    out: list[Diagnostic] = []
    for scheme, names in sorted(shared_writes(rows).items()):
        where = (
            intents.locate("auth", scheme)
            if scheme in declared
            else doc.locate(join_pointer("", "components", "securitySchemes", scheme))
        )
        message = (
            f"{len(names)} write(s) reach the API with the one credential of scheme `{scheme}`, shared "
            f"by every caller: {', '.join(f'`{n}`' for n in names[:5])}{', ...' if len(names) > 5 else ''}"
        )
        out.append(Diagnostic(rule.id, rule.severity, message, where, rule.help, None))
    return out
