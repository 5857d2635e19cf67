"""A spec pattern that backtracks exponentially in Python's `re` (``^(a+)+$`` against ``aaa…a!``)
costs the build no more than any other: the values the build checks against spec schemas (a required
parameter's one allowed value, an intent's `fixed:` value) are matched by jsonschema-rs, as the runtime
matches them. Each build runs as a real process under a timeout that `re` would overrun by hours
(2**40 steps), and the answers are the ones `re` gives when it finishes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolgen.compile.schema.bounded import bounded_validator, pattern_matches

EVIL = "^(a+)+$"
SLOW = "a" * 40 + "!"  # `re.search(EVIL, SLOW)` takes about 2**40 steps


def _spec(param_schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {
            "/x": {
                "get": {
                    "operationId": "getX",
                    "parameters": [{"name": "q", "in": "query", "required": True, "schema": param_schema}],
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }


def _build(tmp: Path, spec: dict[str, Any], body: str) -> dict[str, Any]:
    """Build in a child process (60 s at most); the policy row of `get_x`, or the build's output."""
    (tmp / "spec.json").write_text(json.dumps(spec), "utf-8")
    (tmp / "x.yaml").write_text(f"toolgen: 1\nspec: spec.json\napi: {{name: x}}\n{body}", "utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "toolgen", "build", "x.yaml", "--out", "out", "-q", "--emit", "policy"],
        cwd=tmp,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode != 0:
        return {"build_error": done.stderr}
    policy = json.loads((tmp / "out" / "policy.json").read_text("utf-8"))
    return next(row for row in policy["tools"] if row["tool"] == "get_x")


@pytest.mark.parametrize(("value", "constant"), [(SLOW, False), ("aaaa", True)])
def test_a_one_value_enum_under_a_catastrophic_pattern_is_decided_quickly(
    tmp_path: Path, value: str, constant: bool
) -> None:
    """A required parameter whose schema admits one value is a constant of the operation; one whose
    only value fails its pattern admits none and stays an argument."""
    row = _build(
        tmp_path, _spec({"type": "string", "enum": [value], "pattern": EVIL}), 'include: [{match: "*"}]\n'
    )
    assert "build_error" not in row, row
    fixed = [f for f in row["request"]["fixed"] if f["name"] == "q"]
    assert (fixed[0]["value"] if fixed else None) == (value if constant else None)


def test_a_fixed_value_under_a_catastrophic_pattern_is_refused_quickly(tmp_path: Path) -> None:
    body = f"tools:\n  get_x:\n    operation: getX\n    effect: read\n    fixed: {{q: {json.dumps(SLOW)}}}\n"
    result = _build(tmp_path, _spec({"type": "string", "pattern": EVIL}), body)
    assert "fixed-invalid" in result.get("build_error", ""), result


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        (EVIL, SLOW, False),
        (EVIL, "aaa", True),
        ("b", "abc", True),  # unanchored, as JSON Schema reads a pattern
        ("^b", "abc", False),
        ("^(?=a)a", "ab", True),  # a lookaround: jsonschema-rs's backtracking engine, bounded
        ("[", "[", False),  # does not compile: matches nothing
    ],
)
def test_pattern_matches(pattern: str, text: str, matches: bool) -> None:
    assert pattern_matches(pattern, text) is matches
    validator = bounded_validator()({"type": "object", "patternProperties": {pattern: {"type": "integer"}}})
    assert validator.is_valid({text: "not an integer"}) is not matches
