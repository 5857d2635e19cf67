"""docs/provider-rules.md is the source every conformance finding cites: each rule id the checker can
report, and each section the code cites, is there."""

from __future__ import annotations

import re

from tests.support.build import REPO

DOC = (REPO / "docs" / "provider-rules.md").read_text(encoding="utf-8")
SOURCES = sorted((REPO / "generator" / "toolgen").rglob("*.py"))
RULE_ID = re.compile(r"[\"`]([A-F]\.[0-9]-[A-Za-z0-9$-]+)[\"`]")
# check_names and check_items_and_refs compose these from a section prefix
COMPOSED = {
    "A.1": ("name", "name-unique", "ref-resolves"),
    "B.1": ("name", "name-unique", "ref-resolves"),
    "D.2": ("name", "name-unique"),
    "D.1": ("ref-resolves",),
    "C.3": ("ref-resolves",),
}


def _emitted_rule_ids() -> set[str]:
    found = {m.group(1) for path in SOURCES for m in RULE_ID.finditer(path.read_text(encoding="utf-8"))}
    return found | {f"{section}-{rule}" for section, rules in COMPOSED.items() for rule in rules}


def test_every_rule_id_is_documented() -> None:
    ids = _emitted_rule_ids()
    assert len(ids) > 60
    missing = sorted(rule for rule in ids if f"`{rule}`" not in DOC and not _shared(rule))
    assert missing == [], f"rule ids without an entry in docs/provider-rules.md: {missing}"


def _shared(rule: str) -> bool:
    """`X-name`, `X-name-unique`, `X-ref-resolves` are documented once, for every section X."""
    section, _, name = rule.partition("-")
    return f"`X-{name}`" in DOC and f"### {section} " in DOC


def test_every_cited_section_exists() -> None:
    cited = set()
    for path in SOURCES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if "provider-rules.md" in line:
                cited |= set(re.findall(r"\b([A-F]\.[0-9])\b", line))
    headings = set(re.findall(r"^### ([A-F]\.[0-9]) ", DOC, flags=re.MULTILINE))
    assert cited and cited <= headings, sorted(cited - headings)


def test_nothing_cites_the_old_notes() -> None:
    for path in [*SOURCES, *(REPO / "docs").glob("*.md"), *(REPO / "tests").rglob("*.py")]:
        assert "provider-" + "dialects" not in path.read_text(encoding="utf-8"), path
