"""README.md's intent-map example builds, as written, against the spec it names, without a finding
above info: a newcomer who copies it next to `specs/tickets.yaml` gets what the README says.

Attacks: an example whose `include` pattern matches nothing in the spec (`include-matches-nothing`),
or whose keys, operations or settings the intent-map format no longer accepts.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.support.build import REPO, run

README = REPO / "README.md"


def _intent_map_example() -> str:
    """The README's first YAML block that is an intent map (it starts `toolgen: 1` then `spec:`)."""
    blocks: list[str] = re.findall(r"```yaml\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    return next(block for block in blocks if block.startswith("toolgen: 1\nspec: "))


def test_intent_map_example_builds_without_warnings(tmp_path: Path) -> None:
    example = _intent_map_example()
    assert "spec: ../specs/tickets.yaml" in example
    (tmp_path / "specs").mkdir()
    shutil.copy(REPO / "specs" / "tickets.yaml", tmp_path / "specs" / "tickets.yaml")
    (tmp_path / "intent_maps").mkdir()
    intent = tmp_path / "intent_maps" / "example.yaml"
    intent.write_text(example, encoding="utf-8")
    result = run("build", str(intent), "--out", str(tmp_path / "out"), "--emit", "mcp,policy", "--no-cache")
    assert result.exit_code == 0, result.output
    findings = re.findall(r"\b(error|warning)\[([a-z0-9-]+)\]", result.output)
    assert findings == [], result.output
    policy = json.loads((tmp_path / "out" / "policy.json").read_text(encoding="utf-8"))
    tools = {row["tool"] for row in policy["tools"]}
    # the named intents, and what the include group adds (every /tickets/* operation but the DELETE)
    assert {"list_tickets", "preview_ticket_followup", "record_ticket_followup"} <= tools
    assert "get_ticket" in tools and not any("delete" in name for name in tools)
