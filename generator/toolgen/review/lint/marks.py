"""The `# decide [RULE]: ...` marks of an intent map: the decisions `toolgen init` and `toolgen describe`
left to a human.

Input: the intent map's text and the findings of `lint_api` on it. Output: the findings with those
the marks carry located at their mark (`apply_marks`), plus one finding per open mark of a rule that
only a mark can raise (`MARK_RULES`: whether an operation changes something when its words disagree,
which permission an operation needs when the spec asks for no scope, whether a drafted pagination
walks the way the API pages, whether search expansions `toolgen describe` drafted say what users say). Pure: the caller reads the file.

A mark is a comment line ``# decide [RULE]: text`` above an intent's key (the intent it belongs to),
above an entry of the top-level ``examples:`` (the operation it names: `toolgen describe`'s marks of
an include group's tool), above a toolset's key under ``toolsets:`` (`toolgen describe`'s marks of
a toolset's drafted `examples`) or above ``tools:`` (the whole map). A finding of RULE that lint locates at that intent (or, for the
whole map, at ``tools:``, ``toolsets:`` or the map itself; for a finding in the spec, one whose mark
names its ``file:line:col``) is reported at the mark's line, its JSON pointer kept. A mark of a
`MARK_RULES` rule is open until deleted: it is the human's answer that closes it (edit the intent,
then delete the mark). A mark whose finding is gone (made, or the rule turned off) reports nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from ...diagnostics import Diagnostic, SourceLocation
from .rules import EFFECT_UNDECIDED, EXAMPLES_UNREVIEWED, PAGINATION_UNDECIDED, PERMISSION_UNDECIDED, Rule

#: the rules whose findings come from marks alone (nothing else in the map says the decision is open)
MARK_RULES: dict[str, Rule] = {
    r.id: r for r in (EFFECT_UNDECIDED, PERMISSION_UNDECIDED, PAGINATION_UNDECIDED, EXAMPLES_UNREVIEWED)
}

_MARK = re.compile(r"^(?P<indent>\s*)# decide \[(?P<rule>[a-z0-9-]+)\]:?\s*(?P<text>.*)$")
_KEY = re.compile(
    r"^(?P<tools>tools):|^  (?:(?P<intent>[^\s#'\"][^:#]*)|(?P<quoted>\"(?:[^\"\\]|\\.)*\")):\s*(#.*)?$"
)
#: a toolset's key whose value is a flow mapping on the same line (as `toolgen init` drafts them)
_FLOW_KEY = re.compile(r"^  (?P<intent>[^\s#'\"{][^:#{]*):\s*\{")
_TOP = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_-]*):")
_MAP_POINTERS = ("", "/tools", "/toolsets")


@dataclass(frozen=True)
class Mark:
    """One `# decide [RULE]` mark: its rule, 1-based line and column, the intent key it sits above
    ("" for the whole map) and its text."""

    rule: str
    line: int
    col: int
    owner: str
    text: str
    #: ``examples`` for a mark above an entry of the top-level `examples:` (its owner is the entry's
    #: operation reference), ``toolsets`` for one above a toolset's key, else ``tools``
    section: str = "tools"


def _key_name(found: dict[str, str | None]) -> str:
    if found.get("intent"):
        return str(found["intent"]).strip()
    quoted = str(found.get("quoted"))
    try:
        return str(json.loads(quoted))
    except ValueError:
        return quoted


def parse_marks(text: str) -> list[Mark]:
    """Every mark of an intent map's text, with the key it sits above (the next key line after a run
    of comment and blank lines: an intent key indented by two spaces, or ``tools:``; under the
    top-level ``examples:`` or ``toolsets:``, an entry's key, plain or double-quoted). A mark above anything else
    belongs to no key and is kept with owner ``"?"`` (it carries no finding)."""
    out: list[Mark] = []
    pending: list[tuple[str, int, int, str]] = []
    section = "tools"
    for n, line in enumerate(text.splitlines(), 1):
        found = _MARK.match(line)
        if found:
            pending.append((found["rule"], n, len(found["indent"]) + 1, found["text"].strip()))
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key = _KEY.match(line) or (_FLOW_KEY.match(line) if section == "toolsets" else None)
        groups: dict[str, str | None] = key.groupdict() if key else {}
        owner = (
            ""
            if groups.get("tools")
            else (_key_name(groups) if groups.get("intent") or groups.get("quoted") else "?")
        )
        where = section if owner not in ("", "?") else "tools"
        out += [Mark(rule, ln, col, owner, body, where) for rule, ln, col, body in pending]
        pending = []
        top = _TOP.match(line)
        if top:
            section = top["key"] if top["key"] in ("examples", "toolsets") else "tools"
    out += [Mark(rule, ln, col, "?", body) for rule, ln, col, body in pending]
    return out


def _owner(finding: Diagnostic, display: str) -> str | None:
    """The intent key a finding located in the map belongs to, "" for the whole map, None otherwise."""
    loc = finding.location
    if loc is None or loc.file != display:
        return None
    pointer = loc.pointer or ""
    if pointer in _MAP_POINTERS:
        return ""
    parts = pointer.split("/")
    if len(parts) > 2 and parts[1] == "tools":
        return parts[2].replace("~1", "/").replace("~0", "~")
    return None


def apply_marks(findings: list[Diagnostic], marks: list[Mark], display: str) -> list[Diagnostic]:
    """`findings` with each one a mark carries located at that mark (same rule and intent, or for a
    finding in the spec a mark naming its ``file:line:col``), then a finding per mark of a
    `MARK_RULES` rule, located at the mark with the intent's pointer. `display` is the map's
    display path as the findings name it."""
    by_key: dict[tuple[str, str], Mark] = {}
    for m in marks:
        if m.section == "tools":
            by_key.setdefault((m.rule, m.owner), m)
    out: list[Diagnostic] = []
    for d in findings:
        owner = _owner(d, display)
        mark = by_key.get((d.code, owner)) if owner is not None else None
        if (
            mark is None
            and d.location is not None
            and d.location.file != display
            and d.location.line is not None
        ):
            at = d.location.render().split(" (#", 1)[0]
            mark = next(
                (
                    m
                    for m in marks
                    if m.rule == d.code
                    and m.text.startswith(at)
                    and m.text[len(at) : len(at) + 1] in (" ", ":")
                ),
                None,
            )
        if mark is None:
            out.append(d)
            continue
        if d.location is not None and d.location.file == display:
            out.append(replace(d, location=SourceLocation(display, mark.line, mark.col, d.location.pointer)))
        else:  # a finding in the spec: the message keeps where the spec says it
            spec = d.location.render() if d.location is not None else ""
            out.append(
                replace(
                    d,
                    message=f"{d.message} (in the spec at {spec})",
                    location=SourceLocation(display, mark.line, mark.col, None),
                )
            )
    for m in marks:
        rule = MARK_RULES.get(m.rule)
        if rule is None:
            continue
        pointer = (
            f"/{m.section}/" + m.owner.replace("~", "~0").replace("/", "~1")
            if m.owner not in ("", "?")
            else None
        )
        out.append(
            Diagnostic(
                rule.id,
                rule.severity,
                m.text or rule.summary,
                SourceLocation(display, m.line, m.col, pointer),
                rule.help,
                m.owner if pointer and m.section == "tools" else None,
            )
        )
    return out


__all__ = ["MARK_RULES", "Mark", "apply_marks", "parse_marks"]
