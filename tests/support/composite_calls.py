"""The registry and the calls the composite tests share, over the hand-made composites of
`tests.support.composites`: the arguments of the writing pipeline ``record_ticket_notes`` (`NOTES`),
the idempotency key one of its write steps sends for a record key (`step_key_of`), a registry over a
package with one caller secret (`composite_registry`) and a preview of the pipeline returning its
``preview_id`` (`preview_notes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.support.runtime_env import WRITER

from toolgen.runtime import Actor, Registry, StaticCredentials
from toolgen.runtime.pipeline.idempotency import step_key

NOTES = {"ticket_id": "T-101", "note": "Called the customer.", "second_note": "Sent the invoice."}


def step_key_of(key: str, step: str, tool: str = "record_ticket_notes") -> str:
    """The idempotency key write step `step` of composite `tool` sends for the record key `key`."""
    return step_key(tool, key, step)


def composite_registry(
    policy: dict[str, Any],
    catalog: list[Mapping[str, Any]],
    base_url: str,
    token: str = "fault-api-token-91c2",
    **options: Any,
) -> Registry:
    """A registry over the package (`policy`, `catalog`) at `base_url`, with `token` as its one
    secret (``TICKETS_TOKEN``); `options` are `Registry`'s own."""
    return Registry(
        policy, catalog, base_url=base_url, credentials=StaticCredentials({"TICKETS_TOKEN": token}), **options
    )


def preview_notes(registry: Registry, args: dict[str, Any] = NOTES, actor: Actor = WRITER) -> str:
    """The ``preview_id`` of ``preview_ticket_notes`` called with `args` as `actor`."""
    shown = registry.call("preview_ticket_notes", args, actor=actor)
    assert shown.ok and shown.result is not None, shown.to_json()
    return str(shown.result["preview_id"])
