"""`toolgen init`'s checks of a draft intent map, each by lowering it in memory as the build would.

Input: the `SpecDocument`, the draft as plain data (the intent map's keys: ``toolgen``, ``spec``,
``api``, ``tools``, ``toolsets``) and where it will be written. Output, per check:

- `lower_errors`: intent key -> (the first error of the build on it: ``code: message``, its hint),
  for the intents the build rejects (an error located in the spec is found by lowering that intent
  alone);
- `fit_descriptions`: a ``description:`` cut from the spec's own text for each intent whose read or
  record tool's description would be longer than lint's limit, and the note saying so;
- `decisions`: what `toolgen lint --strict` reports on the draft at error level, each owned by an
  intent or by the whole map.

One `DraftLowering` lowers every version of one draft: between versions only intents change (an
idempotency key renamed, an intent left out, a description added), never the document or the map's
settings, so each operation's lowering is remembered in memory (`toolgen.compile.lower.reuse`, the
mechanism of the build cache) under a key naming the operation by its pointer in this document, the
intent and where it sits. An operation is lowered once however many checks lower the draft; the IR
of each lowering is the one a fresh `lower` gives.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..codes.table import DESCRIPTION_LIMIT
from ..compile.intent import IntentMap, LoadedIntentMap
from ..compile.ir import ApiIR
from ..compile.load import SpecDocument
from ..compile.lower import lower
from ..compile.lower.reuse import OperationKeys
from ..compile.lower.text import cap_text, describe_tool
from ..compile.operations import Operation
from ..diagnostics import Diagnostic, DiagnosticSink
from ..remember import Memo
from ..review.lint import LintInput, LintSettings, apply_severity, lint_api


class _SameDocumentKeys(OperationKeys):
    """`OperationKeys` for lowerings of one document held in memory: an operation's part of the
    document is named by its pointer rather than digested, since it cannot change in between."""

    def reads(self, op: Operation) -> str | None:
        return f"{op.method}\0{op.path}\0{op.pointer}" if self.usable else None


class DraftLowering:
    """Lowers versions of one draft of `api` for `doc`, to be written at `out` (module docstring)."""

    def __init__(self, doc: SpecDocument, api: str, out: Path) -> None:
        self.doc, self.api, self.out = doc, api, out
        self._remember = Memo()

    def lower(self, data: dict[str, Any], sink: DiagnosticSink) -> tuple[LoadedIntentMap, ApiIR]:
        """The draft `data` validated (`IntentMap`) and lowered; its diagnostics go to `sink`."""
        loaded = LoadedIntentMap(IntentMap.model_validate(data), self.out, self.out.name, None)
        keys = _SameDocumentKeys(self.doc, loaded, self.api)
        return loaded, lower(self.doc, loaded, sink, self.api, remember=self._remember, keys=keys)


def lower_errors(lowering: DraftLowering, data: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Lower the draft: intent key -> (the first error's ``code: message``, its hint), for intents
    the build rejects."""
    sink = DiagnosticSink()
    _, ir = lowering.lower(data, sink)
    produced = {t.policy.intent for t in ir.tools}
    errors: dict[str, tuple[str, str]] = {}
    for d in sink.errors:
        pointer = d.location.pointer if d.location else None
        if pointer and pointer.startswith("/tools/"):
            key = pointer.split("/")[2].replace("~1", "/").replace("~0", "~")
            errors.setdefault(key, (f"{d.code}: {d.message}", d.hint or "see `toolgen lint --list-rules`"))
    for key in data["tools"]:
        if key not in produced and key not in errors:  # an error located in the spec: lower the intent alone
            errors[key] = _error_alone(lowering, data, key)
    return errors


def _error_alone(lowering: DraftLowering, data: dict[str, Any], key: str) -> tuple[str, str]:
    """The first error of lowering the intent `key` alone (code: message, hint)."""
    sink = DiagnosticSink()
    lowering.lower({**data, "tools": {key: data["tools"][key]}}, sink)
    for d in sink.errors:
        where = f" (at {d.location.pointer})" if d.location and d.location.pointer else ""
        return f"{d.code}: {d.message}{where}", d.hint or "see `toolgen lint --list-rules`"
    return (
        "the build cannot turn this operation into a tool",
        "uncomment the intent and run `toolgen lint` to see why",
    )


def fit_descriptions(lowering: DraftLowering, data: dict[str, Any], keys: Collection[str]) -> dict[str, str]:
    """An intent of `keys` whose read or record tool would have a description longer than lint's
    limit (`DESCRIPTION_LIMIT`, the spec's text plus what the build adds: read-only, approval,
    paging) gets ``description:`` (set in `data`) drafted from the spec's own text, cut at a sentence
    end (`cap_text`) so that the tool's whole description fits. Returns intent key -> the note saying
    so. Decided here because nothing is chosen: the words are the spec's, fewer of them."""
    _, ir = lowering.lower(data, DiagnosticSink())
    notes: dict[str, str] = {}
    for tool in ir.tools:
        row, key = tool.policy, tool.policy.intent
        if (
            row.mode not in ("read", "record")
            or len(tool.description) <= DESCRIPTION_LIMIT
            or key not in keys
        ):
            continue
        intent = data["tools"][key]
        if intent.get("description"):
            continue
        added = len(describe_tool("", row.mode, row, row))  # what the build adds after the spec's text
        text = tool.description[: len(tool.description) - added]
        cut = cap_text(text, DESCRIPTION_LIMIT - added)
        intent["description"] = cut
        notes[key] = (
            f"description: the spec's text would make a {len(tool.description):,}-character tool "
            f"description (limit {DESCRIPTION_LIMIT:,}): drafted as its first "
            f"{len(cut):,} characters; rewrite it as you like"
        )
    return notes


def decisions(
    lowering: DraftLowering,
    data: dict[str, Any],
    spec_diagnostics: list[Diagnostic],
    by_pointer: dict[str, str],
) -> list[tuple[str, str, str, str]]:
    """What `toolgen lint --strict` (default severities, no project file) reports on the draft: (intent
    key or "", rule id, message, hint) per finding at error level; decisions only a human can make
    (project an output, write a description, choose the intents of a large catalog, accept or fix
    what the spec says). A finding located in the intent map belongs to the intent of its pointer; one
    located in the spec to the intent of the operation its pointer is under (`by_pointer`: operation
    pointer -> intent key; the message then names the spec's ``file:line``, where lint reports it);
    the rest to the whole map."""
    sink = DiagnosticSink()
    sink.extend(spec_diagnostics)
    loaded, ir = lowering.lower(data, sink)
    # an operation lowered first in this lowering emits its diagnostics twice, as located now and as
    # remembered (without line and column, `toolgen.compile.lower.reuse`): located alike, they are one
    found = DiagnosticSink()
    found.extend(lowering.doc.fill_locations(sink.items))
    settings = LintSettings()
    findings = apply_severity(
        lint_api(LintInput(lowering.doc, loaded, ir, found.items, settings)), settings, strict=True
    )
    out: list[tuple[str, str, str, str]] = []
    for d in findings:
        if d.severity != "error":
            continue
        pointer = d.location.pointer if d.location and d.location.pointer else ""
        message = d.message
        if d.location is not None and d.location.file != lowering.out.name:
            message = f"{d.location.render()}: {message}"
            key = _owner(pointer, by_pointer)
        elif pointer.startswith("/tools/"):
            key = pointer.split("/")[2].replace("~1", "/").replace("~0", "~")
        else:
            key = ""
        out.append((key, d.code, message, d.hint or ""))
    return out


def _owner(pointer: str, by_pointer: dict[str, str]) -> str:
    """The intent key whose operation's pointer `pointer` is (or is under), else ""."""
    parts = pointer.split("/")
    for n in (4, 3):  # /paths/<path>/<method>[/...]; webhooks have the same depth
        key = by_pointer.get("/".join(parts[:n]))
        if key is not None:
            return key
    return ""


__all__ = ["DraftLowering", "decisions", "fit_descriptions", "lower_errors"]
