"""The build's front end: which API an intent map describes and where its spec is.

Input: a `LoadedIntentMap` (and, for the spec, an override from the command line, the project file
or the environment). Output: the API name, the spec's path, or a located `DiagnosticError`
(``spec-missing``, ``spec-not-found``, ``intent-encoding``). `toolgen build` and `toolgen lint` read
their inputs through these, so both name a missing spec the same way.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..diagnostics import Diagnostic, DiagnosticError, SourceLocation, display_path
from ..pointer import SURROGATE_ESCAPE, surrogate_paths
from .intent import LoadedIntentMap


def api_name_for(intents: LoadedIntentMap, fallback: str) -> str:
    """The map's `api.name`, else `fallback` (a file stem) made a valid name: ``^[a-z_][a-z0-9_]*$``."""
    return api_name_for_facts(intents.model.api.name, fallback)


def api_name_for_facts(declared: str | None, fallback: str) -> str:
    """`declared` (an intent map's `api.name`), else `fallback` (a file stem) made a valid name:
    ``^[a-z_][a-z0-9_]*$``."""
    if declared:
        return declared
    name = re.sub(r"[^a-z0-9_]+", "_", fallback.lower()).strip("_") or "api"
    return "_" + name if name[0].isdigit() else name


def resolve_spec_path(intents: LoadedIntentMap, override: Path | None) -> Path:
    """`override`, else the map's `spec:` (relative to the map). Raises `DiagnosticError` (``spec-missing``)."""
    if override is not None:
        return override
    path = intents.spec_path()
    if path is None:
        raise DiagnosticError.one(
            "spec-missing",
            "the intent map names no spec",
            intents.locate(),
            "add `spec: path/to/openapi.yaml` (relative to the intent map), or pass --spec",
        )
    return path


def require_spec(
    intents: LoadedIntentMap, spec_path: Path, *, overridden: bool, base: Path | None = None
) -> None:
    """Raise `DiagnosticError` (``spec-not-found``) when `spec_path` does not exist: located at the
    map's `spec:` key, or at the path itself when it came from an override."""
    if spec_path.exists():
        return
    where = SourceLocation(display_path(spec_path, base)) if overridden else intents.locate("spec")
    raise DiagnosticError.one(
        "spec-not-found",
        f"spec file not found: {display_path(spec_path, base)}",
        where,
        "fix the intent map's `spec:` path, or point at your copy with --spec / TOOLGEN_SPEC_<API>",
    )


def refuse_surrogates(intents: LoadedIntentMap) -> None:
    """An intent map whose text holds a surrogate escape (``"\\ud800"``): YAML reads it as a lone
    surrogate, which no UTF-8 output can hold. A located error instead of a crash while writing."""
    try:
        text = intents.path.read_text(encoding="utf-8-sig")
    except OSError:
        return
    if not SURROGATE_ESCAPE.search(text):
        return
    bad = surrogate_paths(intents.root)
    if bad:
        raise DiagnosticError(
            [
                Diagnostic(
                    "intent-encoding",
                    "error",
                    "text holds a UTF-16 surrogate escape (e.g. \\ud800), which is not a Unicode character",
                    intents.locate(*p),
                    "write the character itself",
                )
                for p in bad
            ]
        )
