"""The docs tables of the diagnostic codes are the registry's, byte for byte, and every docs anchor
a code names resolves (`toolgen.codes.docs`, `python -m toolgen.codes [--check]`)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolgen.codes import CODES
from toolgen.codes.docs import TABLES, main, replace_between_markers, rules_table, sync_docs
from toolgen.review.lint import RULES

REPO = Path(__file__).resolve().parents[2]
FILES = sorted({file for _, file, _ in TABLES})


def test_the_docs_tables_are_the_registrys() -> None:
    assert sync_docs(REPO, check=True) == [], "run `python -m toolgen.codes` and commit the docs"


def test_the_command_checks_then_rewrites_a_stale_table(tmp_path: Path) -> None:
    for file in FILES:
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_bytes((REPO / file).read_bytes())
    assert main(["--check", "--root", str(tmp_path)]) == 0
    review = tmp_path / "docs" / "review.md"
    fresh = review.read_bytes()
    review.write_bytes(fresh.replace(b"| `scope-unknown` | error |", b"| `scope-unknown` | warning |"))
    stale = review.read_bytes()
    assert stale != fresh
    assert main(["--check", "--root", str(tmp_path)]) == 1
    assert review.read_bytes() == stale  # --check writes nothing
    assert main(["--root", str(tmp_path)]) == 0
    assert review.read_bytes() == fresh
    assert main(["--check", "--root", str(tmp_path)]) == 0
    # a table's markers removed: refused, nothing written
    review.write_text(fresh.decode("utf-8").replace("<!-- toolgen.codes: rules -->\n", ""), encoding="utf-8")
    assert main(["--root", str(tmp_path)]) == 2


def test_the_module_runs_as_a_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolgen.codes", "--check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_markers_must_be_there_once() -> None:
    text = "a\n<!-- toolgen.codes: rules -->\nold\n<!-- toolgen.codes: end -->\nb\n"
    assert replace_between_markers(text, "rules", "new\n", "x.md") == (
        "a\n<!-- toolgen.codes: rules -->\n\nnew\n\n<!-- toolgen.codes: end -->\nb\n"
    )
    with pytest.raises(ValueError, match=r"x\.md"):
        replace_between_markers(text + text, "rules", "new\n", "x.md")
    with pytest.raises(ValueError, match=r"x\.md"):
        replace_between_markers("a\n", "rules", "new\n", "x.md")


def _anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file as GitHub renders it: each heading's slug (outside code
    fences; a repeated slug gets -1, -2, ...) and each explicit ``id``."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        heading = re.match(r"#{1,6} (.+)", line)
        if heading and not fenced:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
        found.update(re.findall(r'<a id="([^"]+)"></a>', line))
    return found


def test_every_code_names_a_docs_section_that_exists() -> None:
    anchors = {file: _anchors(REPO / file) for file in {row.doc.split("#")[0] for row in CODES.values()}}
    missing = [
        (code, row.doc)
        for code, row in CODES.items()
        if row.doc.split("#")[1] not in anchors[row.doc.split("#")[0]]
    ]
    assert not missing, missing
    # the lint rules point at the rules table's section, which lists them
    assert {CODES[rule].doc for rule in RULES} == {"docs/review.md#lint-findings"}
    assert rules_table() in (REPO / "docs" / "review.md").read_text(encoding="utf-8")


def test_the_reference_gives_every_code_an_anchor_and_working_links() -> None:
    reference = REPO / "docs" / "diagnostics.md"
    assert _anchors(reference) >= set(CODES)
    text = reference.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)#([^)]+)\)", text)
    assert len(links) == len(CODES)
    broken = [
        (file, anchor) for file, anchor in set(links) if anchor not in _anchors(reference.parent / file)
    ]
    assert not broken, broken


def test_ci_checks_the_tables() -> None:
    steps = [
        line.split("#")[0].strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    ]
    assert "python -m toolgen.codes --check" in steps
    assert steps.index("python -m toolgen.codes --check") < steps.index(
        'python -m pytest -n 4 -q -m "not slow"'
    )
