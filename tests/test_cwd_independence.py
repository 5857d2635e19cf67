"""The working directory `toolgen build` runs from changes nothing it writes: one intent map built
from its own folder, from its parent (by a relative path) and from an unrelated folder (by an
absolute path) gives byte-identical files, REPORT.md and its located findings included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "cwd", "version": "1"},
    "paths": {
        "/things": {
            "post": {
                "operationId": "createThing",
                "summary": "Create a thing.",
                "tags": ["things"],
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "properties": {"name": {"type": "string"}}}
                        }
                    }
                },
                "responses": {"201": {"description": "created"}},
            }
        },
        "/things/{id}": {
            "delete": {
                "operationId": "deleteThing",
                "tags": ["things"],
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"204": {"description": "gone"}},
            }
        },
        "/ping": {"get": {"operationId": "ping", "responses": {"200": {"description": "up"}}}},
    },
}
INTENTS = """toolgen: 1
spec: specs/cwd.json
api: {name: cwd}
toolsets:
  things: {description: The things., loading: deferred}
include:
  - {match: "*", toolset: things}
"""


def test_report_and_every_file_are_the_same_from_any_working_directory(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "specs").mkdir(parents=True)
    (project / "specs" / "cwd.json").write_text(json.dumps(SPEC), encoding="utf-8")
    (project / "cwd.yaml").write_text(INTENTS, encoding="utf-8")
    elsewhere = tmp_path / "elsewhere" / "deeper"
    elsewhere.mkdir(parents=True)
    runs = [(project, "cwd.yaml"), (tmp_path, "project/cwd.yaml"), (elsewhere, str(project / "cwd.yaml"))]
    trees = []
    for k, (cwd, intent) in enumerate(runs):
        out = tmp_path / f"out{k}"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "toolgen",
                "build",
                intent,
                "--out",
                str(out),
                "-q",
                "--emit",
                "openai,anthropic,mcp,gemini,policy,report",
            ],
            check=False,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        trees.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert trees[0] == trees[1] == trees[2]
    report = trees[0]["REPORT.md"].decode("utf-8")
    assert "`specs/cwd.json`" in report and "`cwd.yaml`" in report  # named relative to the intent map
    assert str(tmp_path) not in b"".join(trees[0].values()).decode("utf-8")
