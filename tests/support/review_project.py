"""The review workflow's shared fixtures (tests/review, tests/scaffold): a temporary copy of the
widgets fixture project (tests/fixtures/review) and an in-process CLI runner."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from tests.support.build import REVIEW_FIXTURE as FIXTURE


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
