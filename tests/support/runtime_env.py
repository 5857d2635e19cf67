"""Shared paths and actors for the runtime tests."""

from __future__ import annotations

from pathlib import Path

from toolgen.runtime import Actor

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / ".." / "shared"
GENERATED = REPO / "generated"
GENERATED_TICKETS = GENERATED / "tickets"


def tickets_dir() -> Path:
    """The generated tickets package (`toolgen build` output, committed under generated/tickets)."""
    return GENERATED_TICKETS


READER = Actor.of("reader", ["ticket:read"])
WRITER = Actor.of("writer", ["ticket:read", "ticket:write"])
ADMIN = Actor.of("admin", ["ticket:read", "ticket:write", "ticket:delete"])
