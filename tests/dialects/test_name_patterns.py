"""Name checks match the whole name: Python's ``$`` also matches before a final newline, so a check
``PATTERN.match(name)`` with ``^...$`` let ``"get_ticket\\n"`` through as a tool, toolset, argument or
Python identifier (into a catalog, or into the generated package's source)."""

from __future__ import annotations

import pytest

from toolgen.dialects.gemini import GEMINI_NAME_RE, GEMINI_PARAM_RE
from toolgen.emit.pyliteral import py_identifier
from toolgen.naming import ARG_NAME_RE, TOOL_NAME_RE, TOOLSET_NAME_RE, tool_name_problem, toolset_name_problem

ENDINGS = ["\n", "\r\n", " ", "\n\n"]


@pytest.mark.parametrize("ending", ENDINGS)
def test_a_name_with_a_trailing_newline_is_refused(ending: str) -> None:
    assert tool_name_problem("get_ticket" + ending) is not None
    assert toolset_name_problem("Tickets" + ending) is not None
    with pytest.raises(ValueError, match="identifier"):
        py_identifier("ticket_id" + ending)


@pytest.mark.parametrize("ending", ENDINGS)
def test_the_dialect_name_checks_refuse_a_trailing_newline(ending: str) -> None:
    from toolgen.dialects._check import Report, check_names

    report = Report("openai")
    check_names(report, [("t", "/0/name", "get_ticket" + ending)], "A.1")
    assert [v.rule for v in report.items] == ["A.1-name"], "a name with a newline passed"


def test_the_name_patterns_match_whole_names_when_used_with_fullmatch() -> None:
    for pattern, name in (
        (TOOL_NAME_RE, "get_ticket"),
        (ARG_NAME_RE, "ticket_id"),
        (TOOLSET_NAME_RE, "Tickets"),
        (GEMINI_NAME_RE, "get_ticket"),
        (GEMINI_PARAM_RE, "ticket_id"),
    ):
        assert pattern.fullmatch(name) and not pattern.fullmatch(name + "\n")
