"""Helpers to build a spec with an intent map in a temporary folder and read what was generated."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from toolgen.cli import main

REPO = Path(__file__).resolve().parents[2]
TICKETS_SPEC_PATH = REPO / "specs" / "tickets.yaml"
SHARED = (REPO / ".." / "shared").resolve()
CASES = SHARED / "cases"
REAL = SHARED / "specs" / "real"
REVIEW_FIXTURE = REPO / "tests" / "fixtures" / "review"  # the widgets project of tests/review


@dataclass
class Built:
    out: Path
    result: Result

    def json(self, name: str) -> Any:
        return json.loads((self.out / name).read_text(encoding="utf-8"))

    def tool(self, dialect: str, name: str) -> dict[str, Any]:
        for tool in self.json(f"{dialect}.json"):
            tool_name = tool["function"]["name"] if dialect == "openai" else tool["name"]
            if tool_name == name:
                return tool  # type: ignore[no-any-return]
        raise KeyError(f"no {dialect} tool {name!r}")

    def names(self, dialect: str = "mcp") -> list[str]:
        return [
            t["function"]["name"] if dialect == "openai" else t["name"] for t in self.json(f"{dialect}.json")
        ]

    def row(self, name: str) -> dict[str, Any]:
        return next(r for r in self.json("policy.json")["tools"] if r["tool"] == name)

    def rows_for(self, operation_id: str) -> list[dict[str, Any]]:
        return [
            r for r in self.json("policy.json")["tools"] if (r["operation"] or {}).get("id") == operation_id
        ]


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def build(
    tmp: Path,
    spec: Path,
    body: str = 'include: [{match: "*"}]\n',
    *,
    name: str = "api",
    emit: str = "openai,anthropic,mcp,policy,report",
    expect: int = 0,
) -> Built:
    """Write an intent map for `spec` (body = YAML after the header) and build it into tmp/out."""
    intent = tmp / f"{name}.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(spec.resolve()))}\napi: {{name: {name}}}\n{body}",
        encoding="utf-8",
    )
    out = tmp / "out"
    result = run("build", str(intent), "--out", str(out), "-q", "--emit", emit)
    assert result.exit_code == expect, result.output
    return Built(out, result)


def copy_example(folder: Path, name: str, spec: str) -> Path:
    """This repository's example API ``name`` (``intent_maps/<name>.yaml`` and ``specs/<spec>``) copied
    into `folder` in the same layout; returns the copied intent map."""
    for sub, file in (("specs", spec), ("intent_maps", f"{name}.yaml")):
        (folder / sub).mkdir(exist_ok=True)
        shutil.copy(REPO / sub / file, folder / sub / file)
    return folder / "intent_maps" / f"{name}.yaml"


def case_spec(number: str) -> Path:
    return next(CASES.glob(f"{number}-*")) / "spec.yaml"


def spec_with_body_ref(folder: Path, ref: str, name: str = "openapi.yaml") -> Path:
    """`folder/name`: a one-operation spec (createA, POST /a) whose JSON request body is the `$ref`
    `ref` (on line 10), for the tests of external references and their bundling."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / name
    spec.write_text(
        f"""openapi: 3.0.3
info: {{title: t, version: '1'}}
paths:
  /a:
    post:
      operationId: createA
      requestBody:
        content:
          application/json:
            schema: {{$ref: '{ref}'}}
      responses: {{'200': {{description: ok}}}}
""",
        encoding="utf-8",
    )
    return spec
