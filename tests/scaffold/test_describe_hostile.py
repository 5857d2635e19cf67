"""`toolgen describe` attacked as a hostile user and a hostile model would: maps in every layout a
person saves (CRLF, a byte order mark, a symlink, a read-only file), recordings aimed at the map, and
answers or servers that echo the API key. Each test tries to make a run corrupt, lose or leak
something; a run that cannot draft must write nothing and say why."""

from __future__ import annotations

import pytest

from toolgen.scaffold.describe_edit import Expansion, splice
from toolgen.yaml_text import plain_yaml, read_yaml


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_line_separator_inside_a_value_does_not_shift_the_lines(separator: str) -> None:
    """YAML 1.2 breaks lines at LF, CRLF and CR only; U+2028, U+2029, U+0085 are not line breaks of the
    map's lines (`str.splitlines` breaks at them), so a value holding one leaves every intent writable."""
    text = ("toolgen: 1\nspec: s.yaml\ntools:\n  a:\n    operation: getA\n"
            f"    description: \"one{separator}two\"\n  b:\n    operation: getB\n")
    new, skipped = splice(text, {k: Expansion(("find the thing for me",)) for k in "ab"}, "review")
    assert skipped == {}
    data = plain_yaml(read_yaml(new))
    assert data["tools"]["a"]["description"] == plain_yaml(read_yaml(text))["tools"]["a"]["description"]
    assert data["tools"]["a"]["examples"] == data["tools"]["b"]["examples"] == ["find the thing for me"]
