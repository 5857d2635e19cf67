"""Kernel `diagnostics`: every stage reports problems as located `Diagnostic` values (data).

Input: what a stage found wrong, and where. Output: `Diagnostic`s, collected in a `DiagnosticSink`
or raised in a `DiagnosticError`; `display_path` gives the path a message shows.

A diagnostic has a stable `code` (kebab-case, e.g. ``ref-external``, registered in
`toolgen.codes.table`: an unregistered one raises `UnregisteredCode`), a `severity`, a one-line
`message`, a `location` (file, 1-based line/column and/or JSON pointer) and a `hint` that says what
to do. Stages collect them in a `DiagnosticSink`; a stage that cannot continue raises
`DiagnosticError` carrying the error diagnostics. The CLI is the only place that prints them (and
maps them to its exit codes, `toolgen.cli.exits`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .codes.table import Severity, UnregisteredCode, is_registered
from .shown_text import terminal_safe

SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}


def display_path(path: Path, base: Path | None = None) -> str:
    """A path for messages: relative to `base` (default: the working directory) when inside it."""
    base = base or Path.cwd()
    try:
        return str(path.resolve().relative_to(base.resolve()))
    except ValueError:
        try:
            return os.path.relpath(path.resolve(), base.resolve())
        except ValueError:
            return path.name


def _one_line(text: str) -> str:
    return terminal_safe(text, keep_newlines=False)


@dataclass(frozen=True, order=True)
class SourceLocation:
    """Where a diagnostic points: a display path, optional 1-based line/col, optional JSON pointer."""

    file: str
    line: int | None = None
    col: int | None = None
    pointer: str | None = None

    def render(self) -> str:
        """``file:line:col`` (or ``file#/json/pointer`` when no line is known), on one line: the file
        and pointer with every unsafe character escaped (`toolgen.shown_text.terminal_safe`, line
        breaks too), so a name taken from a spec cannot break the line or hold a lone surrogate."""
        text = _one_line(self.file)
        if self.line is not None:
            text += f":{self.line}"
            if self.col is not None:
                text += f":{self.col}"
        if self.pointer is not None and self.pointer != "":
            pointer = _one_line(self.pointer)
            text += f" (#{pointer})" if self.line is not None else f"#{pointer}"
        return text

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "col": self.col, "pointer": self.pointer}


@dataclass(frozen=True)
class Diagnostic:
    """One finding: stable code, severity, message, location and a fix hint.

    Raises `UnregisteredCode` (a `ValueError`) when `code` is not registered in
    `toolgen.codes.table`: every code a stage reports is documented there."""

    code: str
    severity: Severity
    message: str
    location: SourceLocation | None = None
    hint: str | None = None
    tool: str | None = None

    def __post_init__(self) -> None:
        if not is_registered(self.code):
            raise UnregisteredCode(self.code)

    def render(self) -> str:
        """``file:line:col: severity[code]: message`` followed by an indented hint line: two lines
        at most, whatever the fields hold (spec text in a message or hint has its line breaks,
        control, format and surrogate characters written as ``\\uXXXX``: it cannot forge a line
        of its own or stop the output from being written as UTF-8)."""
        where = self.location.render() + ": " if self.location else ""
        text = f"{where}{self.severity}[{self.code}]: {_one_line(self.message)}"
        if self.hint:
            text += f"\n    hint: {_one_line(self.hint)}"
        return text

    def sort_key(self) -> tuple[object, ...]:
        loc = self.location
        return (
            loc.file if loc else "",
            loc.line if loc and loc.line is not None else 0,
            loc.col if loc and loc.col is not None else 0,
            loc.pointer if loc and loc.pointer else "",
            SEVERITY_ORDER[self.severity],
            self.code,
            self.message,
        )

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "location": self.location.to_json() if self.location else None,
            "hint": self.hint,
            "tool": self.tool,
        }


class DiagnosticError(Exception):
    """A stage could not continue. Carries the diagnostics that explain why (at least one error)."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))

    @classmethod
    def one(
        cls, code: str, message: str, location: SourceLocation | None = None, hint: str | None = None
    ) -> DiagnosticError:
        """The error of a stage stopped by one ``error`` diagnostic (``code``, registered) at ``location``."""
        return cls([Diagnostic(code, "error", message, location, hint)])


@dataclass
class DiagnosticSink:
    """Collects diagnostics from the stages; identical diagnostics are kept once."""

    items: list[Diagnostic] = field(default_factory=list)
    _seen: set[Diagnostic] = field(default_factory=set)

    def add(self, diagnostic: Diagnostic) -> None:
        if diagnostic not in self._seen:  # a frozen value: equal exactly when its `to_json` is
            self._seen.add(diagnostic)
            self.items.append(diagnostic)

    def error(
        self,
        code: str,
        message: str,
        location: SourceLocation | None = None,
        hint: str | None = None,
        tool: str | None = None,
    ) -> None:
        self.add(Diagnostic(code, "error", message, location, hint, tool))

    def warning(
        self,
        code: str,
        message: str,
        location: SourceLocation | None = None,
        hint: str | None = None,
        tool: str | None = None,
    ) -> None:
        self.add(Diagnostic(code, "warning", message, location, hint, tool))

    def info(
        self,
        code: str,
        message: str,
        location: SourceLocation | None = None,
        hint: str | None = None,
        tool: str | None = None,
    ) -> None:
        self.add(Diagnostic(code, "info", message, location, hint, tool))

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        for d in diagnostics:
            self.add(d)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "error"]

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)

    def raise_if_errors(self) -> None:
        if self.has_errors:
            raise DiagnosticError(self.sorted())

    def sorted(self) -> list[Diagnostic]:
        return sorted(self.items, key=Diagnostic.sort_key)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)
