"""Fixtures for the review-workflow tests (lint, init, diff, CI files): a temporary copy of the
widgets fixture project (tests/fixtures/review), an in-process CLI runner and golden files."""

from __future__ import annotations

import difflib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.support.build import REVIEW_FIXTURE as FIXTURE

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_ENV = "TOOLGEN_UPDATE_GOLDEN"
UPDATE_COMMAND = f"{UPDATE_ENV}=1 python -m pytest tests/review"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the widgets fixture project; the working directory while the test runs."""
    dest = tmp_path / "project"
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("generated"))
    monkeypatch.chdir(dest)
    yield dest


Invoke = Callable[..., Result]


@pytest.fixture
def cli() -> Invoke:
    """Run `toolgen ARGS...` in-process; returns click's Result (stdout, stderr, exit_code)."""
    from toolgen.cli import main

    def invoke(*args: str, **kwargs: Any) -> Result:
        return CliRunner().invoke(main, list(args), catch_exceptions=False, **kwargs)

    return invoke


def check_golden(name: str, actual: str) -> None:
    """Compare with tests/review/golden/NAME; on a difference print the diff and the refresh command
    (or rewrite the file when TOOLGEN_UPDATE_GOLDEN=1)."""
    path = GOLDEN / name
    if os.environ.get(UPDATE_ENV) == "1":
        path.write_text(actual, encoding="utf-8")
        return
    expected = path.read_text(encoding="utf-8") if path.exists() else ""
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                            f"golden/{name}", "actual"))
        pytest.fail(f"golden file tests/review/golden/{name} differs:\n{diff}\n"
                    f"If the change is intended, refresh the golden files with:\n    {UPDATE_COMMAND}",
                    pytrace=False)


@pytest.fixture
def golden() -> Callable[[str, str], None]:
    """`golden(name, actual)`: compare with a golden file (see `check_golden`)."""
    return check_golden
