"""Shared paths and actors for the runtime tests."""

from __future__ import annotations

import os
from pathlib import Path

from toolgen.runtime import Actor

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / ".." / "shared"
GENERATED = REPO / "generated"
GENERATED_TICKETS = GENERATED / "tickets"
FIXTURE_TICKETS = REPO / "tests" / "fixtures" / "tickets"


def tickets_dir() -> Path:
    """The generated tickets package (falls back to the hand-written fixture until it exists)."""
    override = os.environ.get("TOOLGEN_TEST_TICKETS_DIR")
    if override:
        return Path(override)
    if (GENERATED_TICKETS / "policy.json").exists():
        return GENERATED_TICKETS
    return FIXTURE_TICKETS


READER = Actor.of("reader", ["ticket:read"])
WRITER = Actor.of("writer", ["ticket:read", "ticket:write"])
ADMIN = Actor.of("admin", ["ticket:read", "ticket:write", "ticket:delete"])
