"""The Hypothesis profiles of tests/support/profiles.py: the one named by TOOLGEN_HYPOTHESIS_PROFILE is
loaded before the tests, and each scales the example counts the tests state."""

from __future__ import annotations

import re

import pytest
from hypothesis import settings
from tests.support import profiles
from tests.support.build import REPO


def test_the_loaded_profile_has_no_deadline() -> None:
    loaded = settings()  # a test's settings start from the loaded profile
    assert loaded.deadline is None
    assert loaded.max_examples == round(100 * profiles.SCALE[profiles.current()])


@pytest.mark.parametrize(
    ("profile", "stated", "runs"),
    [
        ("dev", 400, 100),
        ("dev", 30, 10),
        ("dev", 8, 8),
        ("ci", 400, 100),
        ("ci", 15, 10),
        ("ci", 8, 8),
        ("thorough", 400, 4000),
        ("thorough", 8, 80),
    ],
)
def test_each_profile_scales_the_stated_count(
    monkeypatch: pytest.MonkeyPatch, profile: str, stated: int, runs: int
) -> None:
    monkeypatch.setenv(profiles.ENV, profile)
    assert profiles.examples(stated) == runs


def test_no_variable_means_dev_and_an_unknown_name_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(profiles.ENV, raising=False)
    assert profiles.current() == "dev"
    monkeypatch.setenv(profiles.ENV, "fast")
    with pytest.raises(
        ValueError, match="TOOLGEN_HYPOTHESIS_PROFILE='fast': expected one of ci, dev, thorough"
    ):
        profiles.current()


def test_ci_runs_the_tests_under_the_ci_profile() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "export TOOLGEN_HYPOTHESIS_PROFILE=ci" in script


def test_every_stated_count_goes_through_the_profile() -> None:
    """A bare ``max_examples=N`` would escape the profiles: the fast suite would run all N, thorough no more."""
    bare = re.compile(r"max_examples=\d")
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted((REPO / "tests").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if bare.search(line)
    ]
    assert found == [], f"state the count as max_examples=examples(N): {found}"
