"""Fixtures for the scaffolding tests (`toolgen init`, the draft lowering): the review workflow's
fixture project and CLI runner (tests/support/review_project.py)."""

from __future__ import annotations

from tests.support.review_project import Invoke, cli, project

__all__ = ["Invoke", "cli", "project"]
