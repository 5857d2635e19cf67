"""`toolgen schema`: print the JSON Schema of the intent-map format (for editors).

Input: none. Output: `intent_map_json_schema()` as deterministic JSON on stdout (the same bytes as
``generated/intent-map.schema.json``).
"""

from __future__ import annotations

import sys

import click

from ..compile.intent import intent_map_json_schema
from ..emit import json_bytes
from .exits import guarded


@click.command("schema")
@guarded
def schema_command() -> None:
    """Print the JSON Schema of the intent-map format (for editors)."""
    sys.stdout.write(json_bytes(intent_map_json_schema()).decode("utf-8"))
