"""The YAML node tree of a file an operator writes for the runtime (the token file of `toolgen serve
--http --tokens`, the authorization-server file, the caller-secrets file), with a syntax error
located at its line and column: one reader for the three, so each names a bad file the same way.

Input: the file's path (for the message), its text and the error class to raise. Output: PyYAML's
node tree (`yaml.compose` with the safe loader; None for an empty file), whose marks the files'
readers use to locate every later refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


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


__all__ = ["compose_located"]
