"""What the tests of `toolgen init` do with a spec and a draft: a spec written as JSON into a test's
folder (`write_spec`), and a draft intent map read back and validated against the intent map's JSON
Schema (`check_draft`, raising ``jsonschema.ValidationError``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from toolgen.compile.intent import intent_map_json_schema


def check_draft(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(intent_map_json_schema()).validate(data)
    return data  # type: ignore[no-any-return]


def write_spec(tmp_path: Path, name: str, spec: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return path
