"""Hypothesis profiles: how hard the property tests try, chosen by `TOOLGEN_HYPOTHESIS_PROFILE`.

| profile | examples | randomness | used by |
|---|---|---|---|
| `dev` (the default) | a quarter of what each test states (at least 10) | new examples every run, the failing ones remembered in `.hypothesis/` | the README's test command |
| `ci` | a quarter of what each test states (at least 10) | derandomized: the same examples every run, so a red CI reproduces locally | `.ci/run` |
| `thorough` | ten times what each test states | new examples every run | before a release, or after changing what a property covers |

A test states the count it needs to be trusted (what `thorough` multiplies); `dev` and `ci` run a
quarter of it so that the fast suite keeps to its time on 2 cores, and `dev` draws new examples on
every run, so the examples run over many runs still add up.

No profile has a deadline: the suite runs on loaded 2-core machines, where a slow example is not a
bug. A test states its count as ``@settings(max_examples=examples(N))``; a test that states none gets
`examples(100)` (Hypothesis's own default).
"""

from __future__ import annotations

import os

from hypothesis import settings

ENV = "TOOLGEN_HYPOTHESIS_PROFILE"
SCALE = {"dev": 0.25, "ci": 0.25, "thorough": 10.0}
DEFAULT = "dev"


def current() -> str:
    """The profile named by `TOOLGEN_HYPOTHESIS_PROFILE`, ``dev`` when unset; ValueError on an unknown name."""
    name = os.environ.get(ENV, "") or DEFAULT
    if name not in SCALE:
        raise ValueError(f"{ENV}={name!r}: expected one of {', '.join(sorted(SCALE))}")
    return name


def examples(stated: int) -> int:
    """The number of examples a test that states `stated` runs under the current profile (at least 10,
    never more than stated under ``dev`` and ``ci``)."""
    scaled = round(stated * SCALE[current()])
    return max(scaled, min(stated, 10))


def register() -> str:
    """Register the three profiles with Hypothesis and load the current one; returns its name."""
    settings.register_profile("dev", deadline=None, max_examples=round(100 * SCALE["dev"]))
    settings.register_profile(
        "ci",
        deadline=None,
        derandomize=True,
        database=None,
        print_blob=True,
        max_examples=round(100 * SCALE["ci"]),
    )
    settings.register_profile("thorough", deadline=None, max_examples=round(100 * SCALE["thorough"]))
    name = current()
    settings.load_profile(name)
    return name
