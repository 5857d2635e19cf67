"""Stage 5, `emit`: IR -> files in memory (`dict[str, bytes]`, relative path -> content).

Nothing here touches the disk; `write` does. Every JSON file is serialised by `json_bytes`
(sorted keys, two-space indent, UTF-8, final newline), so output is byte-identical across runs.
"""

from __future__ import annotations

import json
from typing import Any


def json_bytes(value: Any) -> bytes:
    """Deterministic JSON: sorted keys, 2-space indent, non-ASCII kept, final newline."""
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def compact_json(value: Any) -> str:
    """The compact form used to measure catalog bytes and tokens (what an SDK would send)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
