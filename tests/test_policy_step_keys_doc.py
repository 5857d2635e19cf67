"""POLICY.md says what key a composite's write step sends: the form the runtime derives
(`toolgen.runtime.pipeline.idempotency.step_key`), not an earlier one (``record key + .step``)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.runtime.pipeline.idempotency import step_key

ROOT = Path(__file__).resolve().parents[1]
#: the idempotency cell of a step row: `arg` = `tgs-` + hex SHA-256 of `["record tool", <record key>, "step"]`
CELL = re.compile(r"`(?P<arg>[^`]+)` = `tgs-` \+ the hex SHA-256 of `(?P<array>\[[^`]*\])`")


def _step_cells() -> list[re.Match[str]]:
    text = (ROOT / "generated" / "tickets" / "POLICY.md").read_text(encoding="utf-8")
    assert "record key + `." not in text, "POLICY.md still describes the old step key"
    return list(CELL.finditer(text))


def _described(array: str, record_key: str) -> str:
    """The key a reader computes from the cell: `tgs-` + the SHA-256 hex digest of the JSON array
    with the record key in its place."""
    tool, _, step = json.loads(array.replace("<record key>", '"__KEY__"'))
    digest = hashlib.sha256(
        json.dumps([tool, record_key, step], ensure_ascii=False).encode("utf-8")
    ).hexdigest()
    return "tgs-" + digest


def test_policy_md_describes_the_step_key_the_runtime_sends() -> None:
    cells = _step_cells()
    assert cells, "no composite write step in the tickets POLICY.md"
    for cell in cells:
        tool, _, step = json.loads(cell["array"].replace("<record key>", '""'))
        assert tool == "record_escalate_ticket"
        sent = step_key(tool, "a-1", step)
        assert _described(cell["array"], "a-1").startswith(sent), (cell.group(0), sent)


@settings(max_examples=examples(50), deadline=None)
@given(record_key=st.text(st.characters(codec="utf-8"), min_size=1, max_size=64))
def test_the_described_key_is_the_runtimes_for_any_record_key(record_key: str) -> None:
    for cell in _step_cells():
        tool, _, step = json.loads(cell["array"].replace("<record key>", '""'))
        assert _described(cell["array"], record_key).startswith(step_key(tool, record_key, step))
