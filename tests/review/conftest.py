"""Fixtures for the review-workflow tests (lint, diff, CI files): the widgets fixture project and
the CLI runner (tests/support/review_project.py, shared with tests/scaffold) and golden files."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.support.review_project import Invoke, cli, project

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_ENV = "TOOLGEN_UPDATE_GOLDEN"
UPDATE_COMMAND = f"{UPDATE_ENV}=1 python -m pytest tests/review"

__all__ = ["Invoke", "check_golden", "cli", "golden", "project"]


def check_golden(name: str, actual: str) -> None:
    """Compare with tests/review/golden/NAME; on a difference print the diff and the refresh command
    (or rewrite the file when TOOLGEN_UPDATE_GOLDEN=1)."""
    path = GOLDEN / name
    if os.environ.get(UPDATE_ENV) == "1":
        path.write_text(actual, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8") if path.exists() else ""
    if actual != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                f"golden/{name}",
                "actual",
            )
        )
        pytest.fail(
            f"golden file tests/review/golden/{name} differs:\n{diff}\n"
            f"If the change is intended, refresh the golden files with:\n    {UPDATE_COMMAND}",
            pytrace=False,
        )


@pytest.fixture
def golden() -> Callable[[str, str], None]:
    """`golden(name, actual)`: compare with a golden file (see `check_golden`)."""
    return check_golden
