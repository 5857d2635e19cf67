"""A policy row to compare against, for the tests of `toolgen diff`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from toolgen.policy.format import OutputPolicy, PolicyRow, Retry


def record_row(**changes: Any) -> PolicyRow:
    """A record row of ``POST /x`` behind an approval; `changes` replace its fields."""
    row = PolicyRow(
        tool="record_x",
        mode="record",
        effect="write",
        operation_id="x",
        method="POST",
        path="/x",
        permission=(),
        approval="required",
        idempotency=None,
        retry=Retry(1, 200, 5000, ()),
        timeout_ms=5000,
        pagination=None,
        output=OutputPolicy(),
        auth=(),
        body_encoding="json",
        body_content_type="application/json",
        bindings=(),
        record_arguments="full",
    )
    return replace(row, **changes)
