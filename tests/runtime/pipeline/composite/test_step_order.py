"""The order POLICY.md states for a composite's steps is the order `run_step` documents and runs."""

from __future__ import annotations

from pathlib import Path

from toolgen.runtime.pipeline.composite import step

REPO = Path(__file__).resolve().parents[4]

#: the words naming each stage, as the step's docstring and POLICY.md's paragraph write them
STAGES = {
    "permission": ("permission",),
    "validate": ("validate",),
    "timeout": ("timeout",),
    "limits": ("limits",),
    "output": ("output validation", "validates its answer"),
}


def stated_order(text: str) -> list[str]:
    """The stages of `STAGES` in the order ``text`` first names them."""
    found = {
        name: min((i for w in words if (i := text.find(w)) >= 0), default=-1)
        for name, words in STAGES.items()
    }
    return sorted((n for n, i in found.items() if i >= 0), key=found.__getitem__)


def test_policy_states_the_steps_order() -> None:
    doc = step.__doc__ or ""
    code_order = stated_order(doc[doc.index("resolve its arguments") : doc.index("and returns")])
    assert code_order == ["permission", "validate", "timeout", "limits", "output"]
    policy = (REPO / "generated" / "github" / "POLICY.md").read_text(encoding="utf-8")
    paragraph = policy[policy.index("Each step runs under its own row") :]
    paragraph = paragraph[: paragraph.index("\n")]
    assert stated_order(paragraph.replace("validates its arguments", "validate")) == code_order


def test_the_reader_catches_a_swapped_order() -> None:
    assert stated_order("validate then permission, timeout, limits, output validation") == [
        "validate",
        "permission",
        "timeout",
        "limits",
        "output",
    ]
