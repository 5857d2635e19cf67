"""A file an operator writes for the runtime (the token file of `toolgen serve --http --tokens`, the
authorization-server file, the caller-secrets file), read and checked one way for the three, so
each refuses a bad file for the same reasons and names it the same way.

`read_operator_file`: the file's text (strict UTF-8) and permission bits, or a typed refusal
(`UnreadableFile`, `UnsafeMode`) that each reader turns into its own error class and message; the
bits a reader refuses are its parameter (the token and authorization-server files: writable by every
user; the caller secrets: any access by group or others). A symbolic link is followed, and the mode
checked is its target's.

`compose_located`: the file's text as PyYAML's node tree (`yaml.compose` with the safe loader; None
for an empty file), with a syntax error located at its line and column; the readers use the nodes'
marks to locate every later refusal.
"""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any


class OperatorFileError(Exception):
    """An operator's file `read_operator_file` refuses; `file` is its path. Each reader turns it into
    its own error (`TokenFileError`, `AuthorizationServerError`, `CallerSecretsError`)."""

    def __init__(self, file: Path) -> None:
        super().__init__(str(file))
        self.file = file


class UnreadableFile(OperatorFileError):
    """The file cannot be opened, read or stat'ed, or is not UTF-8: `cause` is the `OSError` or the
    `UnicodeDecodeError`, `detail` what it says (the OS's `strerror`, else the exception's text)."""

    def __init__(self, file: Path, cause: OSError | UnicodeDecodeError) -> None:
        super().__init__(file)
        self.cause = cause
        self.detail = str(getattr(cause, "strerror", None) or cause)


class UnsafeMode(OperatorFileError):
    """The file's permission bits hold one the reader refuses: `mode` is ``stat.S_IMODE`` of them."""

    def __init__(self, file: Path, mode: int) -> None:
        super().__init__(file)
        self.mode = mode


def read_operator_file(file: Path, *, refused_bits: int) -> tuple[str, int]:
    """(the text of `file`, decoded as strict UTF-8 with universal newlines, its ``st_mode``).
    Raises `UnreadableFile` when it cannot be read, stat'ed or decoded, then `UnsafeMode` when its
    mode holds any of `refused_bits` (e.g. ``stat.S_IWOTH``: any local user could change what the
    runtime trusts; ``stat.S_IRWXG | stat.S_IRWXO``: others may read secrets)."""
    try:
        text = file.read_text(encoding="utf-8")
        mode = file.stat().st_mode
    except (OSError, UnicodeDecodeError) as exc:
        raise UnreadableFile(file, exc) from None
    if mode & refused_bits:
        raise UnsafeMode(file, stat.S_IMODE(mode))
    return text, mode


def compose_located(file: Path, text: str, error: Callable[[str], Exception]) -> Any:
    """The node tree of `text` (None when it is empty). Raises ``error("<file>:<line>:<column>: not
    valid YAML/JSON: <problem>")`` for a syntax error, at the parser's mark, or, for a character YAML
    does not allow (a reader error, which knows only its offset), at that offset's line and column."""
    import yaml  # type: ignore[import-untyped, unused-ignore]

    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            line, column = mark.line + 1, mark.column + 1
        else:
            offset = int(getattr(exc, "position", 0) or 0)
            line, column = text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1
        problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or "syntax error"
        raise error(f"{file}:{line}:{column}: not valid YAML/JSON: {problem}") from None


__all__ = [
    "OperatorFileError",
    "UnreadableFile",
    "UnsafeMode",
    "compose_located",
    "read_operator_file",
]
